"""Monthly price tiers against hand-written DuckDB SQL of the same bands and columns (#34).

``rf.market_trends(market, history, freq="M", by="City", tiers=True)`` over bench_trends'
synthetic market of 1,000,000 listings and its history, against one plain DuckDB query over the
same pandas frames: benchmarks/_trends_sql.py, the query bench_trends_sql times against the weekly
trends, with the tier as one more key. It computes each listing's list price at entry (the old
price of its first price change, else ListPrice), the 5th / 35th / 65th / 95th percentile
(``quantile_cont``) of the sale prices per city × month of close and of the entry prices per
city × month of entry, each listing's list tier and its sale's tier, then per city × tier ×
month the 12 trend columns of the weekly comparison (stocks, flows, the median sale price and
the competition columns read from the status timelines), the sale ones (homes sold, median sale
price, days to close) by the sale's tier, the others by the list tier, and the band edges.
``tiers=True`` computes the same bands and all 23 trend columns per tier with their sample sizes
and changes; the untiered ``market_trends`` is timed beside it.

Before timing, the small mode (:func:`check`, 20,000 listings) asserts the SQL and
``tiers=True`` give the same numbers in every cell of the 12 columns and the 4 band edges, and
``tiers=True`` on DuckDB equal to pandas'. Median of ``RF_BENCH_REPEAT`` (3) runs each, in the
same run. Command: ``.venv/bin/python benchmarks/run_all.py tiers_sql`` (small mode alone:
``.venv/bin/python benchmarks/bench_tiers_sql.py --small``).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
from _trends_sql import BANDS, COLUMNS, median_seconds, sql, written
from bench_trends import END, synthetic

import realtyframes as rf

REPEAT = int(os.environ.get("RF_BENCH_REPEAT", "3"))
SMALL = 20_000
GOAL = 1.0


def tiers(market: Any, history: Any, min_sample: int = 5) -> pd.DataFrame:
    return rf.market_trends(
        market, history, freq="M", by="City", end=END, tiers=True, min_sample=min_sample
    )


def untiered(market: Any, history: Any) -> pd.DataFrame:
    return rf.market_trends(market, history, freq="M", by="City", end=END)


def tiered_sql(market: pd.DataFrame, history: pd.DataFrame, months: pd.Series) -> pd.DataFrame:
    """The SQL (benchmarks/_trends_sql.py) by city × tier, for the months starting at
    ``months``."""
    return sql(market, history, months, "M", END, tiers=True)


def check(n: int = SMALL) -> int:
    """The SQL's numbers equal ``tiers=True``'s in every (city, tier, month) cell of the 12
    columns and the band edges; returns the number of cells compared."""
    market, history = synthetic(n)
    ours = tiers(market, history, min_sample=1)
    theirs = tiered_sql(market, history, ours["period_begin"])
    ours = ours.sort_values(["City", "tier", "period_begin"], ignore_index=True)
    assert len(ours) == len(theirs), (len(ours), len(theirs))
    assert list(ours["City"]) == list(theirs["city"])
    assert list(ours["tier"].astype(str)) == list(theirs["tier"])
    assert (ours["period_begin"].to_numpy() == theirs["pbeg"].to_numpy()).all()
    for column in (*COLUMNS, *BANDS):
        np.testing.assert_allclose(
            ours[column].to_numpy(dtype=float), theirs[column].to_numpy(dtype=float),
            rtol=1e-9, err_msg=column,
        )  # fmt: skip
        assert np.nanmax(ours[column].to_numpy(dtype=float)) > 0, column  # numbers compared
    with tempfile.TemporaryDirectory() as tmp:
        folder = written(market, history, Path(tmp))
        con = duckdb.connect()
        got = tiers(con.read_parquet(str(folder / "market.parquet")),
                    con.read_parquet(str(folder / "history.parquet")), min_sample=1)  # fmt: skip
        pd.testing.assert_frame_equal(got, tiers(market, history, min_sample=1), rtol=1e-9)
    return len(ours) * (len(COLUMNS) + len(BANDS))


def run() -> str:
    checked = check()
    market, history = synthetic()
    months = tiers(market, history)["period_begin"]  # warm-up, and the months for the SQL
    tiered_sql(market, history, months)  # warm-up
    theirs = median_seconds(lambda: tiered_sql(market, history, months), REPEAT)
    ours = median_seconds(lambda: tiers(market, history), REPEAT)
    plain = median_seconds(lambda: untiered(market, history), REPEAT)
    load = os.getloadavg()[0]
    rows = [
        ("DuckDB SQL of the bands and the 12 columns per tier (baseline)", theirs),
        ("`rf.market_trends(freq='M', by='City', tiers=True)`, 23 columns per tier", ours),
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
            "records. The SQL (benchmarks/_trends_sql.py, the query of the weekly comparison "
            "with the tier as one more key) computes the bands (sale price by month of close, "
            "list price at entry by month of entry; `quantile_cont`), each listing's list tier "
            "and its sale's tier, and per city × tier × month the 12 trend columns of the weekly "
            "comparison (stocks, flows, median sale price, active at any point, age of "
            "inventory, days to pending and to close, off market in two weeks; the sale ones by "
            "the sale's tier) with the band edges; `tiers=True` computes the same and all 23 "
            "trend columns per tier with their sample sizes and changes. Before timing, the "
            f"small mode asserted both give the same numbers in all {checked:,} cells of a "
            f"{SMALL:,}-listing market (1e-9), and `tiers=True` on DuckDB equal to pandas'. "
            f"Median of {REPEAT}, all in the same run; load average {load:.1f} at the end "
            "(2 cores, shared): compare the ratios.",
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
