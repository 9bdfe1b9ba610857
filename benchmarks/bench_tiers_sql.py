"""Monthly price tiers against hand-written DuckDB SQL of the same bands (#34).

``rf.market_trends(market, history, freq="M", by="City", tiers=True)`` over bench_trends'
synthetic market of 1,000,000 listings and its history, against one plain DuckDB query
(:data:`SQL`) over the same pandas frames, written as an analyst would from docs/metrics.md's
tiers: each listing's list price at entry (the old price of its first price change, else
ListPrice), the 5th / 35th / 65th / 95th percentile (``quantile_cont``) of the sale prices per
city × month of close and of the entry prices per city × month of entry, each row's tier, and
per city × month × tier the homes sold and median sale price (sale tier) and the new listings
and median list price (list tier), with the band edges. ``tiers=True`` computes the same bands
and all 23 trend columns per tier (stocks, flows, medians, competition columns) with their
sample sizes and changes; the untiered ``market_trends`` is timed beside it.

Before timing, the small mode (:func:`check`, 20,000 listings) asserts the SQL and
``tiers=True`` give the same numbers in every cell the SQL computes. Median of 3 runs each, in
the same run. Command: ``.venv/bin/python benchmarks/run_all.py tiers_sql`` (small mode alone:
``.venv/bin/python benchmarks/bench_tiers_sql.py --small``).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
from bench_trends import END, synthetic

import realtyframes as rf

REPEAT = 3
SMALL = 20_000
GOAL = 1.0
#: The columns the SQL computes, compared cell by cell in the small mode.
COLUMNS = (
    "homes_sold",
    "median_sale_price",
    "new_listings",
    "median_list_price",
    "sale_band_low",
    "sale_band_high",
    "list_band_low",
    "list_band_high",
)

SQL = """
WITH
l AS (
  SELECT ListingId::VARCHAR AS id, City::VARCHAR AS city, StandardStatus::VARCHAR AS status,
         ListPrice AS list_price, ClosePrice AS close_price,
         OriginalEntryTimestamp AS entered, CloseDate AS closed
  FROM market WHERE PropertyType::VARCHAR = 'Residential' AND City IS NOT NULL
),
first_cut AS (
  SELECT ListingId::VARCHAR AS id, arg_min(PreviousListPrice, ChangeTimestamp) AS old
  FROM history WHERE ChangeType::VARCHAR = 'price_change' GROUP BY ALL
),
sales AS (
  SELECT city, date_trunc('month', closed) AS month, close_price AS price FROM l
  WHERE status = 'Closed' AND closed IS NOT NULL AND close_price IS NOT NULL
),
entries AS (
  SELECT city, date_trunc('month', entered) AS month,
         coalesce(f.old, l.list_price) AS price
  FROM l LEFT JOIN first_cut f USING (id)
  WHERE entered IS NOT NULL AND coalesce(f.old, l.list_price) IS NOT NULL
),
bands AS (
  SELECT side, city, month,
         quantile_cont(price, 0.05) AS q05, quantile_cont(price, 0.35) AS q35,
         quantile_cont(price, 0.65) AS q65, quantile_cont(price, 0.95) AS q95
  FROM (SELECT 'sale' AS side, * FROM sales UNION ALL SELECT 'list', * FROM entries)
  GROUP BY ALL
),
tiered AS (
  SELECT side, city, month, price, q05, q35, q65, q95,
         CASE WHEN price >= q05 AND price < q35 THEN 'bottom'
              WHEN price >= q35 AND price < q65 THEN 'middle'
              WHEN price >= q65 AND price <= q95 THEN 'top' END AS tier
  FROM (SELECT 'sale' AS side, * FROM sales UNION ALL SELECT 'list', * FROM entries)
  JOIN bands USING (side, city, month)
)
SELECT side, city, month, tier, count(*) AS n, median(price) AS median,
       any_value(CASE tier WHEN 'bottom' THEN q05 WHEN 'middle' THEN q35 ELSE q65 END) AS low,
       any_value(CASE tier WHEN 'bottom' THEN q35 WHEN 'middle' THEN q65 ELSE q95 END) AS high
FROM tiered WHERE tier IS NOT NULL
GROUP BY ALL ORDER BY ALL
"""


def tiers(market: Any, history: Any, min_sample: int = 5) -> pd.DataFrame:
    return rf.market_trends(
        market, history, freq="M", by="City", end=END, tiers=True, min_sample=min_sample
    )


def untiered(market: Any, history: Any) -> pd.DataFrame:
    return rf.market_trends(market, history, freq="M", by="City", end=END)


def sql(market: pd.DataFrame, history: pd.DataFrame) -> pd.DataFrame:
    """The SQL over the two pandas frames (DuckDB reads them in place)."""
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.register("market", market)
    con.register("history", history)
    return con.execute(SQL).df()


def _on_duckdb(folder: Path, call: Callable[[Any, Any], pd.DataFrame]) -> pd.DataFrame:
    con = duckdb.connect()
    market, history = folder / "market.parquet", folder / "history.parquet"
    return call(con.read_parquet(str(market)), con.read_parquet(str(history)))


def check(n: int = SMALL) -> int:
    """The SQL's numbers equal ``tiers=True``'s in every (city, month, tier) cell it computes;
    returns the number of cells compared."""
    market, history = synthetic(n)
    ours = tiers(market, history, min_sample=1)
    theirs = sql(market, history)
    theirs["month"] = theirs["month"].dt.tz_localize(None).astype("datetime64[us]")
    on = ["City", "tier", "period_begin"]
    ours = ours.assign(tier=ours["tier"].astype(str), period_begin=ours["period_begin"])
    cells = 0
    for side, count, median in (
        ("sale", "homes_sold", "median_sale_price"),
        ("list", "new_listings", "median_list_price"),
    ):
        part = theirs[theirs["side"] == side].rename(
            columns={"city": "City", "month": "period_begin", "n": count, "median": median,
                     "low": f"{side}_band_low", "high": f"{side}_band_high"}
        )  # fmt: skip
        columns = [count, median, f"{side}_band_low", f"{side}_band_high"]
        both = ours[[*on, *columns]].merge(part[[*on, *columns]], on=on, suffixes=("", "_sql"))
        counted = int((ours[count] > 0).sum())
        assert len(both) == counted, (side, len(both), counted)
        for column in columns:
            np.testing.assert_allclose(
                both[column].to_numpy(dtype=float), both[f"{column}_sql"].to_numpy(dtype=float),
                rtol=1e-9, err_msg=column,
            )  # fmt: skip
        cells += len(both) * len(columns)
    with tempfile.TemporaryDirectory() as tmp:
        market.to_parquet(Path(tmp) / "market.parquet")
        history.to_parquet(Path(tmp) / "history.parquet")
        got = _on_duckdb(Path(tmp), lambda m, h: tiers(m, h, min_sample=1))
        pd.testing.assert_frame_equal(got, tiers(market, history, min_sample=1), rtol=1e-9)
    return cells


def _median_seconds(fn: Callable[[], Any]) -> float:
    times = []
    for _ in range(REPEAT):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def run() -> str:
    checked = check()
    market, history = synthetic()
    tiers(market, history)  # warm-up
    sql(market, history)
    theirs = _median_seconds(lambda: sql(market, history))
    ours = _median_seconds(lambda: tiers(market, history))
    plain = _median_seconds(lambda: untiered(market, history))
    with tempfile.TemporaryDirectory() as tmp:
        market.to_parquet(Path(tmp) / "market.parquet")
        history.to_parquet(Path(tmp) / "history.parquet")
        on_duckdb = _median_seconds(lambda: _on_duckdb(Path(tmp), tiers))
    rows = [
        ("DuckDB SQL of the bands and 4 tiered columns (baseline)", theirs),
        ("`rf.market_trends(freq='M', by='City', tiers=True)`, 23 columns per tier", ours),
        ("the same on DuckDB (`read_parquet`, one connection), computed on DuckDB", on_duckdb),
        ("`rf.market_trends(freq='M', by='City')`, untiered (for scale)", plain),
    ]
    ratio = ours / theirs
    verdict = (
        f"Goal (≤ {GOAL:g}× the SQL): {'met' if ratio <= GOAL else '**missed**'} on pandas "
        f"({ratio:.2f}×); `tiers=True` costs {ours / plain:.2f}× the untiered trends."
    )
    return "\n".join(
        [
            "## Monthly price tiers against hand-written DuckDB SQL of the same bands",
            "",
            "Command: `.venv/bin/python benchmarks/run_all.py tiers_sql`. bench_trends' "
            f"synthetic market: {len(market):,} listings in 50 cities, {len(history):,} history "
            "records. The SQL (benchmarks/bench_tiers_sql.py) computes the bands (sale price by "
            "month of close, list price at entry by month of entry; `quantile_cont`), each "
            "row's tier, and per city × month × tier the homes sold, median sale price, new "
            "listings and median list price with the band edges; `tiers=True` computes the "
            "same bands and all 23 trend columns per tier with their sample sizes and changes "
            "(one run of the trends with the tier as a key). Before timing, the small mode "
            f"asserted both give the same numbers in all {checked:,} cells of a {SMALL:,}-"
            "listing market (1e-9), and `tiers=True` on DuckDB equal to pandas'. Median of "
            f"{REPEAT}, all in the same run.",
            "",
            "| computation | median time | × SQL |",
            "|---|---|---|",
            *(f"| {name} | {t:.2f} s | {t / theirs:.2f}× |" for name, t in rows),
            "",
            verdict,
        ]
    )


if __name__ == "__main__":
    if "--small" in sys.argv:
        print(f"the SQL and tiers=True agree in {check():,} cells")
    else:
        print(run())
