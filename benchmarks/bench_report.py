"""The speed claims that used to be timed assertions in tests (issue #13), measured here instead.

- The README's first command, ``realtyframes report market``, from a fresh cache on the embedded
  sandbox (goal: under a minute). Baseline: ``python -c "import realtyframes, pandas,
  matplotlib.pyplot"`` (the import cost every run pays) in the same run.
- A year of unfiltered analytics in the sandbox's store (the test said < 0.25 s, to catch a fall
  back to per-session Python loops). Baseline: a 7-day query on the same store.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from _util import ms, table, timed

REPEAT = 3
AS_OF = datetime(2026, 6, 30, tzinfo=UTC)
CLI = [sys.executable, "-m", "realtyframes.cli"]
IMPORTS = [sys.executable, "-c", "import realtyframes, pandas, matplotlib.pyplot"]


def _run(cmd: list[str], cwd: Path, env: dict[str, str]) -> None:
    subprocess.run(cmd, cwd=cwd, env=env, check=True, capture_output=True)


def _report_rows() -> list[list[str]]:
    reports, imports = [], []
    for _ in range(REPEAT):
        with tempfile.TemporaryDirectory() as tmp:
            env = {**os.environ, "XDG_CACHE_HOME": str(Path(tmp) / "cache"), "MPLBACKEND": "Agg"}
            env = {k: v for k, v in env.items() if not k.startswith("REALTYFRAMES_")}
            imports += timed(lambda: _run(IMPORTS, Path(tmp), env), 1)  # noqa: B023
            reports += timed(lambda: _run([*CLI, "report", "market"], Path(tmp), env), 1)  # noqa: B023
    base, report = statistics.median(imports), statistics.median(reports)
    return [
        ["imports (baseline)", f"{base:.2f} s", ", ".join(f"{t:.2f}" for t in imports), "1.0x"],
        [
            "`realtyframes report market`, fresh cache",
            f"{report:.2f} s",
            ", ".join(f"{t:.2f}" for t in reports),
            f"{report / base:.1f}x",
        ],
    ]


def _analytics_rows() -> list[list[str]]:
    from realtyframes.sandbox._analytics import AnalyticsStore

    store = AnalyticsStore(seed=7, as_of=AS_OF)
    store.query({"Period": "1y"})
    week = timed(lambda: store.query({"Period": "7d"}), 7)
    year = timed(lambda: store.query({"Period": "1y"}), 7)
    return [
        ["7 days (baseline)", ms(min(week)), ms(statistics.median(week)), "1.0x"],
        [
            "1 year, unfiltered",
            ms(min(year)),
            ms(statistics.median(year)),
            f"{min(year) / min(week):.1f}x",
        ],
    ]


def run() -> str:
    report = table(["run", "median", "runs (s)", "vs baseline"], _report_rows())
    analytics = table(["query", "best", "median", "vs baseline (best)"], _analytics_rows())
    return (
        "## Report command and sandbox analytics (speed claims moved out of the tests)\n\n"
        "Command: `.venv/bin/python benchmarks/run_all.py report`. The report runs in a subprocess "
        f"with an empty cache each time ({REPEAT} runs, median); baseline: importing realtyframes, "
        "pandas and matplotlib in a subprocess in the same run. Goal: the report under 60 s.\n\n"
        f"{report}\n\n"
        "A year of unfiltered website analytics in the sandbox's own store (7 runs); baseline: a "
        "7-day query on the same store. Goal: well under 0.25 s (no per-session Python loops).\n\n"
        f"{analytics}\n"
    )
