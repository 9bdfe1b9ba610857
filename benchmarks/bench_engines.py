"""Analysis at 1,000,000 listings: the analysis calls on pandas, and on Polars and DuckDB.

The market and its history are bench_trends' synthetic ones (every status, 30 months of entries,
closings and price cuts; about 2.3 million history records). Baseline measured in the same run
on the same frame: a plain pandas ``groupby("City")["ListPrice"].median()``, run just before
each timed run of a pandas call (``PAIRS`` of them per call; the median of all those runs is
the baseline, so a busy moment of the machine does not skew one ratio). Each pandas call and
the baseline run once untimed first. The engines read the same frames written once to Parquet
(Polars ``scan_parquet``, DuckDB ``read_parquet``; timed ``REPEAT`` times, median shown), so
their time includes reading the columns they need. Goal (issue 12): each pandas call within 3x
the baseline.
Command: ``.venv/bin/python benchmarks/run_all.py engines``
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
from _util import table
from bench_trends import N, synthetic

import realtyframes as rf

REPEAT = 3
PAIRS = 7
GOAL = 3.0

#: Each call, on a market and its history (given as the engine reads them).
CALLS: dict[str, Callable[[Any, Any], Any]] = {
    "market_summary": lambda m, h: rf.market_summary(m, by="City"),
    "compare_markets": lambda m, h: rf.compare_markets(m, by="City"),
    "price_drops": lambda m, h: rf.price_drops(m),
    "market_trends": lambda m, h: rf.market_trends(m, h, freq="M", by="City"),
}


def _runs(call: Callable[[], Any], repeat: int = REPEAT) -> list[float]:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        runs.append(time.perf_counter() - start)
    return runs


def run() -> str:
    market, history = synthetic()

    def baseline_call() -> Any:
        return market.groupby("City", observed=True)["ListPrice"].median()

    baseline_runs: list[float] = []
    timings: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="rf-bench-engines-") as tmp:
        paths = Path(tmp) / "market.parquet", Path(tmp) / "history.parquet"
        market.to_parquet(paths[0])
        history.to_parquet(paths[1])
        engines: dict[str, Callable[[Path], Any]] = {
            "Polars (scan_parquet)": pl.scan_parquet,
            "DuckDB (read_parquet)": lambda p: duckdb.connect().read_parquet(str(p)),
        }
        baseline_call()  # warm: the first run of a call pays for imports and first touches
        for name, call in CALLS.items():
            pandas = f"{name}/pandas"
            timings[pandas] = []
            call(market, history)  # warm-up run, not timed
            for _ in range(PAIRS):  # the pandas call and the baseline in turn: the same conditions
                baseline_runs += _runs(baseline_call, 1)
                timings[pandas] += _runs(lambda call=call: call(market, history), 1)
            for engine, read in engines.items():
                timings[f"{name}/{engine}"] = _runs(
                    lambda call=call, read=read: call(read(paths[0]), read(paths[1]))
                )
    baseline = statistics.median(baseline_runs)
    rows, missed = [], []
    for name in CALLS:
        cells = []
        for engine in ["pandas", *engines]:
            seconds = statistics.median(timings[f"{name}/{engine}"])
            cells.append(f"{seconds:.3f} s ({seconds / baseline:.1f}x)")
            if engine == "pandas" and seconds > GOAL * baseline:
                missed.append(f"{name} ({seconds / baseline:.1f}x)")
        rows.append([name, *cells])
    verdict = (
        f"Goal met: every pandas call within {GOAL:g}x the baseline."
        if not missed
        else f"**Goal missed** for {', '.join(missed)} (pandas within {GOAL:g}x the baseline)."
    )
    return (
        "## Analysis at 1,000,000 listings: pandas, Polars and DuckDB\n\n"
        "Command: `.venv/bin/python benchmarks/run_all.py engines`. "
        f"{N:,} synthetic listings ({len(history):,} history records; bench_trends' market, "
        "typed as `client.listings(...)` types them). Baseline, same run, same frame: "
        f"`groupby('City')['ListPrice'].median()` = {baseline:.3f} s (median of "
        f"{len(baseline_runs)} runs, each just before a run of a pandas call; fastest "
        f"{min(baseline_runs):.3f} s, slowest {max(baseline_runs):.3f} s). Calls: median of "
        f"{PAIRS} runs for pandas (each after a baseline run, after one untimed warm-up run), "
        f"{REPEAT} for the engines; ratios "
        "against the baseline. The Polars and DuckDB columns read the "
        "same market and history from Parquet files (reading included) and return the same "
        f"pandas result (tests/analysis/test_engines.py). {verdict}\n\n"
        + table(["call", "pandas", "Polars (scan_parquet)", "DuckDB (read_parquet)"], rows)
        + "\n\nCalls: `market_summary(by='City')`, `compare_markets(by='City')`, "
        "`price_drops(market)` (the listing-field rule: 40 % of the listings have a cut, so "
        "the result has about 390,000 rows), `market_trends(market, history, freq='M', "
        "by='City')`.\n"
    )


if __name__ == "__main__":
    print(run())
