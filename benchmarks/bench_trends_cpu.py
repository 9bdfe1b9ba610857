"""Monthly market trends: the process CPU of this tree against another version of the project.

``rf.market_trends(market, history, freq="M", by="City")`` on bench_trends' synthetic market
(1,000,000 listings), ``REALTYFRAMES_THREADS=1``. Each version runs in its own process (the
pickled frames loaded, then :data:`CALLS` calls, user and system time and minor page faults by
``getrusage``), :data:`ROUNDS` processes per version, the versions alternating. The other
version is a git revision exported with ``git archive`` (default :data:`AGAINST`, the version
before the competition columns of #27; ``TRENDS_CPU_AGAINST=<rev>`` for another) and run with
``PYTHONPATH`` to its ``src``. A last process of this tree times the kernels one by one (user
time, median of the later calls) and checks that the result equals the other version's where
that version has the same columns (``TRENDS_CPU_SAME=1``: the whole frame, attrs too).
Command: ``.venv/bin/python benchmarks/run_all.py trends_cpu``
"""

from __future__ import annotations

import functools
import json
import os
import pickle
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _util import table

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
#: The version before the competition columns (#27): the cost the monthly trends go back to.
AGAINST = "c173b9e"
ROUNDS = 3
CALLS = 3
#: The kernels timed one by one (functions of ``analysis._trends_local``'s namespace), with the
#: columns they compute; the competition columns' kernels marked.
KERNELS: dict[str, tuple[str, bool]] = {
    "_records": ("input: the history's records as arrays", False),
    "_listings": ("input: the listings as arrays", False),
    "History": ("input: the history matched to the listings by ListingId", False),
    "price_changes": ("the price changes in order (entry prices, cut share)", False),
    "status_intervals": ("the status intervals", False),
    "last_pending": ("each listing's last Pending (median_days_to_close)", True),
    "_pending_sales": ("pending_sales", False),
    "stocks_at": ("active_listings, pending_listings (and Active Under Contract)", False),
    "active_any": ("active_listings_any", True),
    "inventory_age": ("age_of_inventory", True),
    "_placed": ("the entries' and sales' periods", False),
    "_medians": ("the sale and list medians and ratios", False),
    "price_cut_share": ("price_cut_share, median_cut_pct", True),
    "cuts_in_periods": ("price_drops, pct_active_with_price_drop", False),
    "contract_stats": (
        "off_market_in_two_weeks, median_days_to_pending, median_days_to_close",
        True,
    ),
}


def _child(frames: str, save: str | None, kernels: bool) -> None:
    """One version's process: the frames loaded, :data:`CALLS` calls, a JSON line per call."""
    os.environ["REALTYFRAMES_THREADS"] = "1"
    import pandas as pd

    from realtyframes.analysis import trends as trends_module

    spent: dict[str, list[float]] = {}
    if kernels:  # this tree's modules (an older version may not have them)
        from realtyframes.analysis import _trends_local

        for name in KERNELS:
            if hasattr(_trends_local, name):
                setattr(_trends_local, name, _timed(getattr(_trends_local, name), spent, name))
    with open(frames, "rb") as f:
        market, history, end = pickle.load(f)
    out = None
    for _ in range(CALLS):
        before = resource.getrusage(resource.RUSAGE_SELF)
        out = trends_module.market_trends(market, history, freq="M", by="City", end=end)
        after = resource.getrusage(resource.RUSAGE_SELF)
        call = {
            "user": after.ru_utime - before.ru_utime,
            "system": after.ru_stime - before.ru_stime,
            "faults": after.ru_minflt - before.ru_minflt,
        }
        print(json.dumps(call), flush=True)
    if kernels:
        later = {k: statistics.median(v[1:]) for k, v in spent.items() if len(v) > 1}
        print(json.dumps({"kernels": later}), flush=True)
    if save and out is not None:
        pd.to_pickle(out, save)


def _timed(fn: Any, spent: dict[str, list[float]], name: str) -> Any:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_utime
        try:
            return fn(*args, **kwargs)
        finally:
            spent.setdefault(name, []).append(
                resource.getrusage(resource.RUSAGE_SELF).ru_utime - before
            )

    return wrapper


def _export(rev: str, into: Path) -> Path:
    """The ``src`` of git revision ``rev`` under ``into`` (``git archive``)."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "src"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"


def _process(
    src: Path, frames: Path, save: Path | None = None, kernels: bool = False
) -> dict[str, Any]:
    """One child process of the version whose ``src`` is given: its calls, the load average
    before it, and the kernels' times when asked."""
    command = [sys.executable, __file__, "--child", str(frames)]
    command += ["--save", str(save)] if save else []
    command += ["--kernels"] if kernels else []
    env = {**os.environ, "PYTHONPATH": str(src), "REALTYFRAMES_THREADS": "1"}
    load = os.getloadavg()[0]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{src}: the process failed:\n{done.stderr}")
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    calls = [line for line in lines if "user" in line]
    found = next((line["kernels"] for line in lines if "kernels" in line), {})
    return {"load": load, "calls": calls, "kernels": found}


def _summary(processes: list[dict[str, Any]], first: bool) -> dict[str, float]:
    calls = [c for p in processes for c in (p["calls"][:1] if first else p["calls"][1:])]
    total = [c["user"] + c["system"] for c in calls]
    return {
        "cpu": statistics.median(total),
        "low": min(total),
        "high": max(total),
        "user": statistics.median(c["user"] for c in calls),
        "faults": statistics.median(c["faults"] for c in calls),
        "n": len(calls),
    }


def _same(ours: Path, theirs: Path, whole: bool) -> str:
    import pandas as pd

    a, b = pd.read_pickle(ours), pd.read_pickle(theirs)
    if whole:
        pd.testing.assert_frame_equal(a, b, check_exact=True)
        assert a.attrs.keys() == b.attrs.keys() and repr(a.attrs) == repr(b.attrs)
        return "identical to it (`assert_frame_equal`, exact; attrs equal)"
    return f"{len(set(a.columns) - set(b.columns))} columns more than it"


def run() -> str:
    sys.path.insert(0, str(HERE))
    from bench_trends import END, synthetic

    against = os.environ.get("TRENDS_CPU_AGAINST", AGAINST)
    whole = os.environ.get("TRENDS_CPU_SAME") == "1"
    with tempfile.TemporaryDirectory(prefix="bench-trends-cpu-") as tmp:
        work = Path(tmp)
        market, history = synthetic()
        frames = work / "frames.pkl"
        with open(frames, "wb") as f:
            pickle.dump((market, history, END), f)
        (work / "other").mkdir()
        sources = {"this tree": ROOT / "src", against: _export(against, work / "other")}
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in sources}
        for _ in range(ROUNDS):
            for name, src in sources.items():
                runs[name].append(_process(src, frames))
        ours, theirs = work / "ours.pkl", work / "theirs.pkl"
        _process(sources[against], frames, save=theirs)
        timed = _process(sources["this tree"], frames, save=ours, kernels=True)
        same = _same(ours, theirs, whole)
        loads = [p["load"] for ps in runs.values() for p in ps]
    rows, summaries = [], {}
    for first in (True, False):
        for name, processes in runs.items():
            s = _summary(processes, first)
            summaries[name, first] = s
            label = (
                f"first of a process (median of {s['n']})"
                if first
                else f"later (median of {s['n']})"
            )
            rows.append(
                [label, name, f"{s['cpu']:.2f} s ({s['low']:.2f}–{s['high']:.2f})", f"{s['user']:.2f} s", f"{s['faults']:,.0f}"]
            )  # fmt: skip
    later = summaries["this tree", False]["cpu"] / summaries[against, False]["cpu"]
    first_ratio = summaries["this tree", True]["cpu"] / summaries[against, True]["cpu"]
    user_ratio = summaries["this tree", False]["user"] / summaries[against, False]["user"]
    kernels = timed["kernels"]
    total = statistics.median(c["user"] for c in timed["calls"][1:])
    competition = sum(v for k, v in kernels.items() if KERNELS[k][1])
    kernel_rows = [
        [f"`{name}`", what + (" (competition)" if extra else ""), f"{kernels[name]:.3f} s"]
        for name, (what, extra) in KERNELS.items()
        if name in kernels
    ]
    kernel_rows.append(
        [
            "the rest",
            "periods, assembly, ratios, changes, blanking",
            f"{total - sum(kernels.values()):.3f} s",
        ]
    )
    return "\n".join(
        [
            "## Monthly market trends: process CPU against another version (#34)",
            "",
            f"Command: `TRENDS_CPU_AGAINST={against} .venv/bin/python benchmarks/run_all.py trends_cpu`. "
            f"`rf.market_trends(market, history, freq='M', by='City')` on bench_trends' synthetic "
            f"market ({len(market):,} listings, {len(history):,} history records), "
            "`REALTYFRAMES_THREADS=1`. Each version in its own process (the pickled frames loaded, "
            f"then {CALLS} calls, user and system time and minor page faults by `getrusage`), "
            f"{ROUNDS} processes per version, the versions alternating; {against} exported by "
            f"`git archive` and run with `PYTHONPATH` to it. Load average {min(loads):.1f}–"
            f"{max(loads):.1f} on the 2 shared cores. This tree's result: {same}.",
            "",
            table(["calls", "version", "user + system", "user", "minor page faults"], rows),
            "",
            f"This tree takes **{later:.2f}×** {against}'s process CPU in later calls "
            f"({user_ratio:.2f}× its user time) and {first_ratio:.2f}× in a process's first call.",
            "",
            f"Kernels of this tree, user time of each (median of the later calls of one more "
            f"process, {total:.2f} s user in all): the competition columns' kernels take "
            f"{competition:.3f} s, {competition / summaries[against, False]['user']:.0%} of "
            f"{against}'s whole user time ({summaries[against, False]['user']:.2f} s).",
            "",
            table(["kernel", "computes", "user time"], kernel_rows),
        ]
    )


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        save = sys.argv[sys.argv.index("--save") + 1] if "--save" in sys.argv else None
        _child(sys.argv[2], save, "--kernels" in sys.argv)
    else:
        print(run())
