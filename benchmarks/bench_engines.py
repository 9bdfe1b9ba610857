"""Analysis at 1,000,000 listings: the market metrics on pandas, and on Polars and DuckDB.

The market is bench_trends' synthetic one (every status, 30 months of entries, closings and price
cuts). Baseline measured in the same run on the same frame: a plain pandas
``groupby("City")["ListPrice"].median()``. Each call is timed 3 times (median shown); the engines
read the same frame written once to Parquet (Polars ``scan_parquet``, DuckDB ``read_parquet``),
so their time includes reading the columns they need. Goal (issue 12): each pandas call within 3x
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
GOAL = 3.0


def _time(call: Callable[[], Any]) -> float:
    runs = []
    for _ in range(REPEAT):
        start = time.perf_counter()
        call()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def run() -> str:
    market, history = synthetic()
    market["City"] = market["City"].astype("category")  # as the loaders type it
    baseline = _time(lambda: market.groupby("City", observed=True)["ListPrice"].median())
    calls: dict[str, Callable[[Any], Any]] = {
        "market_summary": lambda f: rf.market_summary(f, by="City"),
        "compare_markets": lambda f: rf.compare_markets(f, by="City"),
    }
    pandas_only: dict[str, Callable[[], Any]] = {
        "price_drops": lambda: rf.price_drops(market),
        "market_trends": lambda: rf.market_trends(market, history, freq="M", by="City"),
    }
    rows = []
    missed = []
    with tempfile.TemporaryDirectory(prefix="rf-bench-engines-") as tmp:
        path = Path(tmp) / "market.parquet"
        market.to_parquet(path)
        engines: dict[str, Callable[[], Any]] = {
            "pandas": lambda: market,
            "Polars (scan_parquet)": lambda: pl.scan_parquet(path),
            "DuckDB (read_parquet)": lambda: duckdb.connect().read_parquet(str(path)),
        }
        for name, call in calls.items():
            cells = []
            for engine, source in engines.items():
                seconds = _time(lambda call=call, source=source: call(source()))
                cells.append(f"{seconds:.3f} s ({seconds / baseline:.1f}x)")
                if engine == "pandas" and seconds > GOAL * baseline:
                    missed.append(name)
            rows.append([name, *cells])
        for name, only in pandas_only.items():
            seconds = _time(only)
            if seconds > GOAL * baseline:
                missed.append(name)
            rows.append([name, f"{seconds:.3f} s ({seconds / baseline:.1f}x)", "-", "-"])
    verdict = (
        f"Goal met: every pandas call within {GOAL:g}x the baseline."
        if not missed
        else f"**Goal missed** for {', '.join(missed)} (pandas within {GOAL:g}x the baseline)."
    )
    return (
        "## Analysis at 1,000,000 listings: pandas, Polars and DuckDB\n\n"
        "Command: `.venv/bin/python benchmarks/run_all.py engines`. "
        f"{N:,} synthetic listings ({len(history):,} history records; bench_trends' market, "
        "City categorical as the loaders type it). Baseline, same run, same frame: "
        f"`groupby('City')['ListPrice'].median()` = {baseline:.3f} s. Median of {REPEAT} runs; "
        "ratios against the baseline. The Polars and DuckDB columns read the same market from "
        "one Parquet file (reading included) and return the same pandas result "
        f"(tests/analysis/test_engines.py). {verdict}\n\n"
        + table(["call", "pandas", "Polars (scan_parquet)", "DuckDB (read_parquet)"], rows)
        + "\n\nprice_drops and market_trends take pandas frames only so far.\n"
    )


if __name__ == "__main__":
    print(run())
