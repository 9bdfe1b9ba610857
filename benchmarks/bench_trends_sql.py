"""Weekly market trends against hand-written DuckDB SQL of the same counts and medians (#27).

``rf.market_trends(market, history, freq="W", by="City")`` over bench_trends' synthetic market
of 1,000,000 listings and its history, against one plain DuckDB query over the same pandas
frames (benchmarks/_trends_sql.py, shared with bench_tiers_sql), written as an analyst would
from docs/metrics.md: each listing's status intervals from the history with a window function,
weeks from ``generate_series``, each interval spread over the weeks it spans (``unnest(range(...))``
of week numbers: a first version with range joins of the intervals and the weeks took 38 s) for
the stocks and the Active-at-any-point count, the flows and medians by group-bys. The query
computes 12 of the trend columns (the stocks, flows, sale median and the competition columns that
need only the timelines); ``market_trends`` computes all 23 with their sample sizes and changes.

Before timing, the small mode (:func:`check`, 20,000 listings) asserts the SQL and
``market_trends`` give the same numbers in every cell. Median of 3 runs each, in the same run.
Command: ``.venv/bin/python benchmarks/run_all.py trends_sql`` (small mode alone:
``.venv/bin/python benchmarks/bench_trends_sql.py --small``).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import polars as pl
from _trends_sql import COLUMNS, median_seconds, sql, written
from bench_trends import END, N, synthetic

import realtyframes as rf

REPEAT = 3
SMALL = 20_000
GOAL = 1.0


def trends(market: pd.DataFrame, history: pd.DataFrame, min_sample: int = 5) -> pd.DataFrame:
    return rf.market_trends(market, history, freq="W", by="City", end=END, min_sample=min_sample)


def on_engine(engine: str, folder: Path, min_sample: int = 5) -> pd.DataFrame:
    """``market_trends`` on an engine reading the market and history from Parquet (DuckDB: one
    connection for both, so the work stays on DuckDB)."""
    market, history = folder / "market.parquet", folder / "history.parquet"
    if engine == "duckdb":
        con = duckdb.connect()
        frames: tuple[Any, Any] = (con.read_parquet(str(market)), con.read_parquet(str(history)))
    else:
        frames = (pl.scan_parquet(market), pl.scan_parquet(history))
    return rf.market_trends(*frames, freq="W", by="City", end=END, min_sample=min_sample)


def weekly_sql(market: pd.DataFrame, history: pd.DataFrame, weeks: pd.Series) -> pd.DataFrame:
    """The SQL (benchmarks/_trends_sql.py) by city, for the weeks starting on the Mondays
    ``weeks``."""
    return sql(market, history, weeks, "W", END)


def check(n: int = SMALL) -> int:
    """The SQL's numbers equal ``market_trends``' in every (city, week) cell of an ``n``-listing
    market; returns the number of cells compared."""
    market, history = synthetic(n)
    ours = trends(market, history, min_sample=1)
    theirs = weekly_sql(market, history, ours["period_begin"])
    ours = ours.sort_values(["City", "period_begin"], ignore_index=True)
    assert len(ours) == len(theirs), (len(ours), len(theirs))
    assert list(ours["City"]) == list(theirs["city"])
    assert (ours["period_begin"].to_numpy() == theirs["pbeg"].to_numpy()).all()
    for column in COLUMNS:
        np.testing.assert_allclose(
            ours[column].to_numpy(dtype=float), theirs[column].to_numpy(dtype=float),
            rtol=1e-9, err_msg=column,
        )  # fmt: skip
        assert np.nanmax(ours[column].to_numpy(dtype=float)) > 0, column  # numbers compared
    with tempfile.TemporaryDirectory() as tmp:
        folder = written(market, history, Path(tmp))
        want = trends(market, history, min_sample=1)
        for engine in ("duckdb", "polars"):
            got = on_engine(engine, folder, min_sample=1)
            pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=1e-9)
    return len(ours) * len(COLUMNS)


def run() -> str:
    checked = check()
    market, history = synthetic()
    weeks = trends(market, history)["period_begin"]  # warm-up, and the weeks for the SQL
    weekly_sql(market, history, weeks)  # warm-up
    ours = median_seconds(lambda: trends(market, history), REPEAT)
    theirs = median_seconds(lambda: weekly_sql(market, history, weeks), REPEAT)
    ratio = ours / theirs
    with tempfile.TemporaryDirectory() as tmp:
        folder = written(market, history, Path(tmp))
        engines = {
            e: median_seconds(lambda e=e: on_engine(e, folder), REPEAT)
            for e in ("duckdb", "polars")
        }
    ratios = {"pandas": ratio, **{e: t / theirs for e, t in engines.items()}}
    missed = {name: r for name, r in ratios.items() if r > GOAL}
    verdict = f"Goal (≤ {GOAL:g}× the SQL) met on " + ", ".join(
        f"{name} ({r:.2f}×)" for name, r in ratios.items() if r <= GOAL
    )
    if missed:
        verdict += "; **missed on " + ", ".join(f"{n} ({r:.2f}×)" for n, r in missed.items())
        verdict += "**"
    verdict += "."
    return "\n".join(
        [
            "## Weekly market trends against hand-written DuckDB SQL",
            "",
            "Command: `.venv/bin/python benchmarks/run_all.py trends_sql`. bench_trends' "
            f"synthetic market: {len(market):,} listings in 50 cities, {len(history):,} history "
            f"records; {weeks.nunique()} weeks × 50 cities. The SQL (benchmarks/"
            "_trends_sql.py) computes 12 of the trend columns — the stocks, the flows, "
            "the median sale price and the competition columns read from the status timelines "
            "(active at any point, age of inventory, days to pending and to close, off market in "
            "two weeks) — over the same pandas frames; `market_trends` computes all 23 with "
            "their sample sizes and changes. Before timing, the small mode asserted both give "
            f"the same numbers in all {checked:,} cells of a {SMALL:,}-listing market, and "
            "`market_trends` on DuckDB and Polars equal to pandas' in every column (1e-9). The "
            "engines read the frames written as Parquet (reading included); since #34 "
            "`market_trends` computes on the engine and brings back only periods × markets. "
            f"Median of {REPEAT}, all in the same run.",
            "",
            "| computation | median time | ratio |",
            "|---|---|---|",
            f"| DuckDB SQL of the 12 columns (baseline) | {theirs:.2f} s | 1.00× |",
            f"| `rf.market_trends(freq='W', by='City')`, 23 columns | {ours:.2f} s | "
            f"{ratio:.2f}× |",
            f"| the same on DuckDB (`read_parquet`, one connection), computed on DuckDB | "
            f"{engines['duckdb']:.2f} s | {engines['duckdb'] / theirs:.2f}× |",
            f"| the same on Polars (`scan_parquet`), computed on Polars | "
            f"{engines['polars']:.2f} s | {engines['polars'] / theirs:.2f}× |",
            "",
            verdict,
        ]
    )


if __name__ == "__main__":
    if "--small" in sys.argv:
        print(f"the SQL and market_trends agree in {check():,} cells")
    else:
        print(run(), N)
