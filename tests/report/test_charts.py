"""The report's charts drawn by worker processes and this one together: the same bytes as one
process alone, each warning raised here, and never a worker for a script that would run again
in it."""

from __future__ import annotations

import os
import sys
import types
import warnings

import pytest
from matplotlib.figure import Figure

from realtyframes.report import chart_workers
from realtyframes.report._charts import chart, draw_charts


def pid_chart(n: int) -> Figure:
    """A small chart that says (as a warning) which process drew it."""
    warnings.warn(f"drawn by {os.getpid()}", UserWarning, stacklevel=1)
    fig = Figure(figsize=(3, 2), layout="constrained")
    ax = fig.add_subplot()
    ax.plot(range(n + 2), [x * x for x in range(n + 2)])
    ax.set_title(f"chart {n}")
    return fig


def _drawn(workers: int | None) -> tuple[list[bytes], set[int]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pngs = draw_charts([chart(pid_chart, n) for n in range(8)], workers=workers)
    pids = {int(str(w.message).split()[-1]) for w in caught if "drawn by" in str(w.message)}
    assert len([w for w in caught if "drawn by" in str(w.message)]) == 8  # one per chart
    return pngs, pids


def test_workers_draw_the_same_bytes_and_their_warnings_are_raised_here() -> None:
    alone, pids = _drawn(workers=0)
    assert pids == {os.getpid()}
    together, pids = _drawn(workers=1)
    assert together == alone
    assert os.getpid() in pids and len(pids) == 2  # a worker drew some, this process the others
    with chart_workers(1) as started:
        assert started == 1
        early, pids = _drawn(workers=None)  # the workers started beforehand
    assert early == alone and len(pids) == 2


def test_a_script_without_a_main_guard_is_never_spawned_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Spawned workers run the caller's ``__main__`` file again: for a plain script (a file, not
    ``python -m``) every chart is drawn here, whatever ``workers`` says."""
    script = types.ModuleType("__main__")
    script.__file__ = "/tmp/report_job.py"
    monkeypatch.setitem(sys.modules, "__main__", script)
    pngs, pids = _drawn(workers=1)
    assert pids == {os.getpid()} and len(pngs) == 8
    with chart_workers(1) as started:
        assert started == 0


def test_a_chart_that_fails_in_a_worker_fails_here() -> None:
    with pytest.raises(TypeError):
        draw_charts([chart(pid_chart, "not a number") for _ in range(6)], workers=1)
