"""``market_summary`` on the client-typed frame against hand-written DuckDB SQL and Polars (#34).

``rf.market_summary(market, by="City")`` over bench_trends' synthetic market of 1,000,000
listings, typed as ``client.listings(...)`` types them (StandardStatus and PropertyType
categorical, City text), against the same 13 metrics written by hand: one DuckDB query over the
same pandas frame (:data:`SQL`, as an analyst would write it from docs/metrics.md: the window's
end found in the data, the populations as ``FILTER`` clauses, ``median`` and ``avg``), one
Polars query over the same data as a Polars DataFrame (:func:`polars_query`), and
``rf.market_summary`` on that Polars DataFrame. Before timing, all four are asserted to give the
same numbers in every cell. The calls run in turn, ``ROUNDS`` times, so a busy moment of the
machine weighs on all of them; the median of each is shown.
Command: ``.venv/bin/python benchmarks/run_all.py summary_sql``
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import polars as pl
from _util import table
from bench_trends import N, synthetic

import realtyframes as rf

ROUNDS = 15
GOAL = 1.0
#: The sale segment's property types (docs/metrics.md).
SALE = ("Residential", "Residential Income", "Land", "Commercial Sale", "Business Opportunity",
        "Land/Boat Docks")  # fmt: skip
#: The counts, medians and means of market_summary, per City, over the 90 days to the newest
#: timestamp in the data.
SQL = """
WITH w AS (
  SELECT greatest(max(OriginalEntryTimestamp), max(MajorChangeTimestamp), max(CloseDate)) AS stop
  FROM market),
f AS (
  SELECT City,
    PropertyType::VARCHAR IN {SALE} AS seg,
    seg AND StandardStatus::VARCHAR = 'Active' AS active,
    seg AND coalesce(OriginalEntryTimestamp > stop - INTERVAL 90 DAY
                     AND OriginalEntryTimestamp <= stop, false) AS new,
    seg AND StandardStatus::VARCHAR = 'Pending' AND coalesce(MajorChangeTimestamp >
      stop - INTERVAL 90 DAY AND MajorChangeTimestamp <= stop, false) AS pending,
    seg AND StandardStatus::VARCHAR = 'Closed' AND coalesce(CloseDate > stop - INTERVAL 90 DAY
      AND CloseDate <= stop, false) AS sold,
    ListPrice AS lp, PreviousListPrice AS pp, ClosePrice AS cp, LivingArea AS area,
    DaysOnMarket AS dom, CASE WHEN lp <> 0 THEN cp / lp END AS r
  FROM market, w)
SELECT City,
  count(*) FILTER (active) AS active_listings, count(*) FILTER (new) AS new_listings,
  count(*) FILTER (pending) AS pending_sales, count(*) FILTER (sold) AS homes_sold,
  median(lp) FILTER (active) AS median_list_price,
  median(lp / area) FILTER (active AND area > 0) AS median_list_ppsf,
  median(cp) FILTER (sold) AS median_sale_price,
  median(cp / area) FILTER (sold AND area > 0) AS median_sale_ppsf,
  median(dom) FILTER (sold) AS median_dom,
  avg(r) FILTER (sold AND r BETWEEN 0.5 AND 1.5) AS avg_sale_to_list,
  avg((r > 1)::DOUBLE) FILTER (sold AND r BETWEEN 0.5 AND 1.5) AS pct_sold_above_list,
  count(*) FILTER (active) / (count(*) FILTER (sold) * 30.0 / 90) AS months_of_supply,
  count(*) FILTER (active AND pp > lp) / count(*) FILTER (active) AS pct_active_with_price_drop
FROM f WHERE seg GROUP BY City ORDER BY City
""".replace("{SALE}", str(SALE))


def polars_query(frame: pl.DataFrame) -> pl.DataFrame:
    """The same metrics as :data:`SQL`, as one Polars query."""
    stop = frame.select(
        pl.max_horizontal(
            pl.col("OriginalEntryTimestamp").max(),
            pl.col("MajorChangeTimestamp").max(),
            pl.col("CloseDate").max(),
        )
    ).item()
    start = stop - pd.Timedelta(days=90)

    def inside(column: str) -> pl.Expr:
        return ((pl.col(column) > start) & (pl.col(column) <= stop)).fill_null(False)

    status = pl.col("StandardStatus").cast(pl.String)
    active = status == "Active"
    sold = (status == "Closed") & inside("CloseDate")
    price, close, area = pl.col("ListPrice"), pl.col("ClosePrice"), pl.col("LivingArea")
    ratio = pl.when(price != 0).then(close / price)
    rated = sold & ratio.is_between(0.5, 1.5).fill_null(False)
    return (
        frame.filter(pl.col("PropertyType").cast(pl.String).is_in(list(SALE)))
        .group_by("City")
        .agg(
            active.sum().alias("active_listings"),
            inside("OriginalEntryTimestamp").sum().alias("new_listings"),
            ((status == "Pending") & inside("MajorChangeTimestamp")).sum().alias("pending_sales"),
            sold.sum().alias("homes_sold"),
            price.filter(active).median().alias("median_list_price"),
            (price / area).filter(active & (area > 0)).median().alias("median_list_ppsf"),
            close.filter(sold).median().alias("median_sale_price"),
            (close / area).filter(sold & (area > 0)).median().alias("median_sale_ppsf"),
            pl.col("DaysOnMarket").filter(sold).median().alias("median_dom"),
            ratio.filter(rated).mean().alias("avg_sale_to_list"),
            (ratio > 1).cast(pl.Float64).filter(rated).mean().alias("pct_sold_above_list"),
            (active.sum() / (sold.sum() * 30.0 / 90)).alias("months_of_supply"),
            ((active & (pl.col("PreviousListPrice") > price)).sum() / active.sum()).alias(
                "pct_active_with_price_drop"
            ),
        )
        .sort("City")
    )


def _check(calls: dict[str, Callable[[], Any]]) -> int:
    """Every call's numbers equal ``market_summary``'s on pandas (cells compared)."""
    want = calls["pandas"]().reset_index()
    for name, call in calls.items():
        got = call()
        got = got.to_pandas() if isinstance(got, pl.DataFrame) else got
        got = got.reset_index() if "City" not in got.columns else got
        for column in want.columns:
            left, right = want[column].to_numpy(), got[column].to_numpy()
            if column == "City":
                assert (left.astype(str) == right.astype(str)).all(), name
            else:
                np.testing.assert_allclose(right.astype(float), left.astype(float), rtol=1e-9)
    return want.size


def run() -> str:
    market, _ = synthetic()
    frame = pl.from_pandas(market)
    con = duckdb.connect()
    con.register("market", market)
    calls: dict[str, Callable[[], Any]] = {
        "pandas": lambda: rf.market_summary(market, by="City"),
        "sql": lambda: con.sql(SQL).df(),
        "polars": lambda: polars_query(frame),
        "rf-polars": lambda: rf.market_summary(frame, by="City"),
    }
    cells = _check(calls)
    runs: dict[str, list[float]] = {name: [] for name in calls}
    cpu: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(ROUNDS):
        for name, call in calls.items():
            start, used = time.perf_counter(), time.process_time()
            call()
            runs[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - used)
    seconds = {name: statistics.median(r) for name, r in runs.items()}
    work = {name: statistics.median(r) for name, r in cpu.items()}
    labels = {
        "sql": "DuckDB SQL of the 13 metrics, over the pandas frame (baseline)",
        "polars": "the same metrics as one Polars query (a Polars DataFrame)",
        "rf-polars": "`rf.market_summary(by='City')` on that Polars DataFrame",
        "pandas": "`rf.market_summary(by='City')` on the pandas frame",
    }
    rows = [
        [label, f"{seconds[k]:.3f} s", f"{seconds[k] / seconds['sql']:.2f}×",
         f"{seconds[k] / seconds['polars']:.2f}×", f"{work[k]:.3f} s",
         f"{work[k] / work['sql']:.2f}×", f"{work[k] / work['polars']:.2f}×"]
        for k, label in labels.items()
    ]  # fmt: skip
    sql, polars = seconds["sql"], seconds["polars"]
    ratio = max(seconds["pandas"] / sql, seconds["pandas"] / polars)
    verdict = "met" if ratio <= GOAL else "**missed**"
    return (
        "## market_summary against hand-written DuckDB SQL and Polars\n\n"
        "Command: `.venv/bin/python benchmarks/run_all.py summary_sql`. bench_trends' synthetic "
        f"market: {N:,} listings in 50 cities, typed as `client.listings(...)` types them. "
        "The SQL and the Polars query compute the 13 metrics of `market_summary` by hand "
        "(benchmarks/bench_summary_sql.py); before timing, all four gave the same numbers in "
        f"all {cells:,} cells. Median of {ROUNDS} runs each, the calls in turn; time is wall "
        "time, CPU time the process's (every thread; steadier than wall time on a shared "
        "machine). The goal is on wall time.\n\n"
        + table(
            ["call", "time", "× SQL", "× Polars", "CPU time", "× SQL (CPU)", "× Polars (CPU)"], rows
        )
        + f"\n\nGoal (pandas ≤ {GOAL:g}× the SQL and ≤ {GOAL:g}× Polars) {verdict}.\n"
    )


if __name__ == "__main__":
    print(run())
