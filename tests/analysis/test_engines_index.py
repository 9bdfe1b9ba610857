"""``price_index`` with ``history=`` and Case-Shiller weights on the engines: the sales stay on
the engine (dated from the history there, paired there with the years between their sales), only
the pairs or cells come back, and the numbers equal pandas' to 1e-9. And the tiers' band edges,
made from ranks on the engine, equal pandas' quantiles on ties and tiny groups."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import narwhals as nw
import numpy as np
import pandas as pd
import polars as pl
import pytest
from engine_parity import assert_same, warned

import realtyframes as rf
from realtyframes.analysis._tiers_engine import _quantiles


@pytest.fixture(scope="module")
def undated_files(sandbox_url: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A synced Residential market with the CloseDate of one sale in three removed (the history
    dates them), and its history (backfilled by the sync), as Parquet."""
    folder = tmp_path_factory.mktemp("undated")
    with rf.Client(sandbox_url, cache_dir=folder / "cache", progress=False) as client:
        scope = {"PropertyType": "Residential"}
        frame, past = client.sync_listings(**scope), client.listing_history(**scope)
    history = folder / "history.parquet"
    past.to_parquet(history)
    sold = np.flatnonzero(frame["ClosePrice"].notna().to_numpy())
    frame.loc[frame.index[sold[::3]], "CloseDate"] = pd.NaT
    path = folder / "market.parquet"
    frame.to_parquet(path)
    return path, history


#: a Case-Shiller slope that is zero but for rounding: 2e-20 against -2e-20
ATOL = 1e-12
_CON = duckdb.connect()
ON_ENGINE: dict[str, Callable[[Path], Any]] = {
    "polars": pl.read_parquet,
    "polars-lazy": pl.scan_parquet,
    "duckdb-one-connection": lambda path: _CON.read_parquet(str(path)),
}
CALLS: dict[str, Callable[[Any, Any], pd.DataFrame]] = {
    "case-shiller": lambda m, h: warned(
        rf.price_index, m, freq="Q", method="repeat_sales", weights="case_shiller"
    ),
    "case-shiller-by-history": lambda m, h: warned(
        rf.price_index,
        m,
        h,
        freq="Q",
        method="repeat_sales",
        weights="case_shiller",
        by="City",
        min_sample=1,
    ),
    "pairs-by-history": lambda m, h: warned(
        rf.price_index, m, h, freq="M", method="repeat_sales", min_sample=1
    ),
    "hedonic-by-history": lambda m, h: warned(
        rf.price_index, m, h, freq="M", by="City", location="PostalCode", min_sample=1
    ),
}


def _no_sales_collected(monkeypatch: pytest.MonkeyPatch) -> None:
    def brought_back(*args: object) -> None:
        raise AssertionError("the sales came back to pandas")

    # the module (``realtyframes.analysis.price_index`` the attribute is the function)
    monkeypatch.setattr(sys.modules["realtyframes.analysis.price_index"], "_read_sales",
                        brought_back)  # fmt: skip


@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize("engine", ON_ENGINE)
def test_the_index_with_a_history_or_case_shiller_weights_stays_on_the_engine(
    undated_files, engine, call, monkeypatch
):
    market, history = undated_files
    want = CALLS[call](pd.read_parquet(market), pd.read_parquet(history))
    _no_sales_collected(monkeypatch)
    got = CALLS[call](ON_ENGINE[engine](market), ON_ENGINE[engine](history))
    assert len(want) > 0 and want["index"].notna().sum() > 3
    if "history" in call:
        assert want.attrs["dated_from_history"] > 10  # the history dated the removed dates
    assert_same(got, want, atol=ATOL)


def test_case_shiller_weights_change_the_engine_index(undated_files):
    """The weights reach the engine's fit (not the equal-weights index under another name)."""
    lazy = pl.scan_parquet(undated_files[0])
    plain = warned(rf.price_index, lazy, freq="Q", method="repeat_sales")
    weighted = CALLS["case-shiller"](lazy, None)
    assert weighted.attrs["weights"] == "case_shiller" and plain.attrs["weights"] is None
    assert not np.allclose(weighted["index"], plain["index"], equal_nan=True)


def test_a_history_on_another_duckdb_connection_dates_the_sales_locally(undated_files):
    market, history = undated_files
    want = CALLS["pairs-by-history"](pd.read_parquet(market), pd.read_parquet(history))
    got = CALLS["pairs-by-history"](
        duckdb.connect().read_parquet(str(market)), duckdb.connect().read_parquet(str(history))
    )
    assert_same(got, want, atol=ATOL)


@pytest.mark.spark
@pytest.mark.parametrize("call", CALLS)
def test_pyspark_index_with_a_history_or_case_shiller_weights(spark, undated_files, call,
                                                               monkeypatch):  # fmt: skip
    market, history = undated_files
    want = CALLS[call](pd.read_parquet(market), pd.read_parquet(history))
    _no_sales_collected(monkeypatch)
    got = CALLS[call](spark.read.parquet(str(market)), spark.read.parquet(str(history)))
    assert_same(got, want, atol=ATOL)


def test_band_edges_from_ranks_equal_pandas_quantiles_on_ties_and_tiny_groups():
    """Groups of 1, 2 and 3 prices, ties across the edges' ranks, and a large group: the
    engine's edges (ranks in a window, the rows at the edges' ranks) equal pandas'."""
    rng = np.random.default_rng(3)
    groups = ["a"] + ["b"] * 2 + ["c"] * 3 + ["d"] * 7 + ["e"] * 500
    prices = [5.0, 1.0, 2.0, 3.0, 3.0, 1.0, 4.0, 4.0, 4.0, 2.0, 9.0, 4.0, 4.0]
    prices += np.round(rng.lognormal(12, 0.5, 500), -3).tolist()  # many ties
    frame = pd.DataFrame({"g": groups, "p": prices})
    want = frame.groupby("g")["p"].quantile([0.05, 0.35, 0.65, 0.95]).unstack()
    want.columns = ["q05", "q35", "q65", "q95"]
    for native in (pl.LazyFrame(frame), duckdb.connect().from_df(frame)):
        got = nw.from_native(native)
        table = _quantiles(got, ["g"], "p").collect().to_pandas()
        table = table.set_index("g").sort_index()
        np.testing.assert_allclose(table.to_numpy(), want.to_numpy(), rtol=1e-12)
