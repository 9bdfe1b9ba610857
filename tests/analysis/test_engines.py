"""The analysis on other engines: the same numbers from a pandas frame, a Polars DataFrame and
LazyFrame, a DuckDB relation and a PySpark DataFrame (local mode), all read from the same Parquet
files: the sandbox's listings, and a synced market with its history. pandas is the reference.

PySpark needs a Java runtime: ``.ci/run`` installs Java 17 from the OS packages (marker ``spark``);
without one these tests fail under CI and are skipped, saying why, elsewhere (as the browser tests).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pytest
from engine_parity import assert_same, warned

import realtyframes as rf
from realtyframes.analysis import _trends_local, ppsf_values
from realtyframes.analysis.trends import keyed_trends
from realtyframes.errors import (
    AnalysisInputError,
    ColumnTypeError,
    MissingColumnsError,
)

STATUSES = ("Active", "Active Under Contract", "Pending", "Closed")
AS_OF = "2026-06-30"


@pytest.fixture(scope="module")
def listings_file(sandbox_url: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    with rf.Client(sandbox_url, cache=False, progress=False) as client:
        frames = [client.listings(Status=s) for s in STATUSES]
    path = tmp_path_factory.mktemp("engines") / "listings.parquet"
    pd.concat(frames, ignore_index=True).to_parquet(path)
    return path


@pytest.fixture(scope="module")
def reference(listings_file: Path) -> pd.DataFrame:
    return pd.read_parquet(listings_file)


@pytest.fixture(scope="module")
def synced_files(sandbox_url: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A synced Residential market and its history (backfilled by the sync), as Parquet."""
    folder = tmp_path_factory.mktemp("synced")
    with rf.Client(sandbox_url, cache_dir=folder / "cache", progress=False) as client:
        scope = {"PropertyType": "Residential"}
        market, history = client.sync_listings(**scope), client.listing_history(**scope)
    market.to_parquet(folder / "market.parquet")
    history.to_parquet(folder / "history.parquet")
    return folder / "market.parquet", folder / "history.parquet"


def _duckdb(path: Path) -> Any:
    return duckdb.connect().read_parquet(str(path))


def _duckdb_ns(path: Path) -> Any:
    """The same listings with nanosecond timestamps (DuckDB TIMESTAMPTZ_NS, a type narwhals
    reports as Unknown)."""
    ns = path.with_name(f"{path.stem}-ns.parquet")
    if not ns.exists():
        frame = pd.read_parquet(path)
        stamps = frame.select_dtypes(include=["datetimetz"]).columns
        frame[stamps] = frame[stamps].astype("datetime64[ns, UTC]")
        frame.to_parquet(ns)
    return _duckdb(ns)


ENGINES: dict[str, Callable[[Path], Any]] = {
    "polars": pl.read_parquet,
    "polars-lazy": pl.scan_parquet,
    "duckdb": _duckdb,
    "duckdb-ns": _duckdb_ns,
}
CALLS: dict[str, Callable[[Any], pd.DataFrame]] = {
    "market_summary": lambda f: rf.market_summary(f, by="City", as_of=AS_OF),
    "market_summary-both-previous": lambda f: rf.market_summary(
        f, by=["City", "PropertySubType"], segment="both", compare_previous=True, as_of=AS_OF
    ),
    "market_summary-default-as-of": lambda f: rf.market_summary(f, by="PostalCode"),
    "compare_markets": lambda f: rf.compare_markets(f, ["Miami", "Coral Gables"], as_of=AS_OF),
    "compare_markets-rent": lambda f: rf.compare_markets(f, segment="rent", window_days=30),
    "ppsf_values": lambda f: ppsf_values(f, by="City", price="sale", as_of=AS_OF).sort_values(
        ["City", "ppsf"], ignore_index=True
    ),
    "price_drops": lambda f: rf.price_drops(f),
    "price_drops-since": lambda f: rf.price_drops(f, since="2026-05-01", min_drop_pct=0.03),
    "price_drop_summary": lambda f: rf.price_drop_summary(f, by="PostalCode", segment="both"),
}
#: Calls on a market and its history (either may be on any engine).
HISTORY_CALLS: dict[str, Callable[[Any, Any], pd.DataFrame]] = {
    "price_drops-changes": lambda m, h: rf.price_drops(m, h),
    "price_drops-changes-since": lambda m, h: rf.price_drops(
        m, h, since="2026-03-01", min_drop_pct=0.02
    ),
    "price_drop_summary-listings": lambda m, h: rf.price_drop_summary(
        rf.price_drops(m, h), listings=m, segment="both"
    ),
    "market_trends": lambda m, h: rf.market_trends(m, h, by="City"),
    "market_trends-weeks": lambda m, h: rf.market_trends(
        m, h, freq="W", start="2026-01-01", end=AS_OF, min_sample=2
    ),
    "market_trends-no-history": lambda m, h: rf.market_trends(
        m, None, freq="Q", by=["City", "PropertySubType"]
    ),
    "market_trends-rolling-4-weeks": lambda m, h: rf.market_trends(
        m, h, freq="4W", by="City", start="2026-01-01", end=AS_OF, min_sample=2
    ),
    "market_trends-rolling-4-weeks-no-history": lambda m, h: rf.market_trends(
        m, None, freq="4W", start="2026-03-01", end=AS_OF, min_sample=1
    ),
    "market_trends-redfin": lambda m, h: rf.market_trends(
        m, h, freq="M", by="City", definitions="redfin", min_sample=1
    ),
    "market_trends-tiers": lambda m, h: rf.market_trends(
        m, h, freq="Q", by="City", tiers=True, min_sample=1
    ),
    "market_trends-quarters": lambda m, h: rf.market_trends(m, h, freq="Q", min_sample=1),
    "market_trends-weeks-by-city": lambda m, h: rf.market_trends(
        m, h, freq="W", by="City", start="2026-03-01", end=AS_OF, min_sample=1
    ),
    "price_index-quarterly": lambda m, h: rf.price_index(m, freq="Q", method="repeat_sales"),
    "price_index-rolling": lambda m, h: rf.price_index(m, freq="Q", rolling=2),
    "price_index-hedonic-cells": lambda m, h: warned(
        rf.price_index, m, freq="M", by="City", location="PostalCode", min_sample=1
    ),
    "price_index-hedonic-weeks": lambda m, h: warned(rf.price_index, m, freq="W", location=None),
    "price_index-pairs-by": lambda m, h: warned(
        rf.price_index, m, freq="Q", method="repeat_sales", by="City", min_sample=1, rolling=2
    ),
    "price_index-case-shiller": lambda m, h: warned(
        rf.price_index, m, freq="Q", method="repeat_sales", weights="case_shiller"
    ),
}


@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize("engine", ENGINES)
def test_every_engine_gives_the_pandas_numbers(listings_file, reference, engine, call):
    want = CALLS[call](reference)
    got = CALLS[call](ENGINES[engine](listings_file))
    assert len(want) > 0
    assert_same(got, want)


@pytest.mark.parametrize("call", HISTORY_CALLS)
@pytest.mark.parametrize("engine", ENGINES)
def test_every_engine_gives_the_pandas_numbers_with_a_history(synced_files, engine, call):
    market, history = synced_files
    want = HISTORY_CALLS[call](pd.read_parquet(market), pd.read_parquet(history))
    got = HISTORY_CALLS[call](ENGINES[engine](market), ENGINES[engine](history))
    assert len(want) > 0
    assert_same(got, want)


def test_an_engine_frame_is_checked_before_it_is_computed(listings_file):
    lazy = pl.scan_parquet(listings_file)
    with pytest.raises(MissingColumnsError, match="ClosePrice"):
        rf.market_summary(lazy.drop("ClosePrice"))
    with pytest.raises(ColumnTypeError, match="'ListPrice' must be numeric"):
        rf.market_summary(lazy.with_columns(pl.col("ListPrice").cast(pl.String)))
    with pytest.raises(ColumnTypeError, match="'CloseDate' must be a timestamp"):
        rf.market_summary(lazy.with_columns(pl.col("CloseDate").cast(pl.String)))
    with pytest.raises(AnalysisInputError, match="pandas or Polars DataFrame"):
        rf.market_summary([1, 2, 3])  # type: ignore[arg-type]
    with pytest.raises(MissingColumnsError, match="`listings` lacks required column 'ListPrice'"):
        rf.price_drops(lazy.drop("ListPrice"))
    with pytest.raises(MissingColumnsError, match="`history` lacks required columns 'ChangeType'"):
        rf.price_drops(lazy, lazy.select("ListingId"))
    with pytest.raises(ColumnTypeError, match="'MajorChangeTimestamp' must be a timestamp"):
        rf.price_drops(lazy.with_columns(pl.col("MajorChangeTimestamp").cast(pl.String)))
    with pytest.raises(TypeError, match="`history` must be a pandas or Polars DataFrame"):
        rf.price_drops(lazy, {"ListingId": []})
    with pytest.raises(MissingColumnsError, match="`market` lacks required column 'CloseDate'"):
        rf.market_trends(lazy.drop("CloseDate"))
    with pytest.raises(MissingColumnsError, match="`history` lacks required columns 'ChangeType'"):
        rf.market_trends(lazy, lazy.select("ListingId"))
    with pytest.raises(TypeError, match="`history` must be a pandas or Polars DataFrame"):
        rf.market_trends(lazy, [1])
    history = pl.LazyFrame(
        {"ListingId": ["a"], "ChangeType": ["price_change"], "ChangeTimestamp": ["2026-01-01"]}
    )
    with pytest.raises(ColumnTypeError, match="'ChangeTimestamp' must be a timestamp"):
        rf.market_trends(lazy, history)


#: One DuckDB connection for a market and its history (relations of two connections do not
#: join, so ``market_trends`` computes those locally).
_ONE_CONNECTION = duckdb.connect()
#: The trends calls, computed on the engine.
ENGINE_TRENDS = [c for c in HISTORY_CALLS if c.startswith("market_trends")]
ON_ENGINE: dict[str, Callable[[Path], Any]] = {
    "polars": pl.read_parquet,
    "polars-lazy": pl.scan_parquet,
    "duckdb-one-connection": lambda path: _ONE_CONNECTION.read_parquet(str(path)),
}


@pytest.mark.parametrize("call", ENGINE_TRENDS)
@pytest.mark.parametrize("engine", ON_ENGINE)
def test_market_trends_is_computed_on_the_engine(synced_files, engine, call, monkeypatch):
    """The same numbers as pandas with no listing brought to pandas: the local path's reading
    of the rows is not reached (W, 4W, M and Q; with and without a history)."""
    market, history = synced_files
    want = HISTORY_CALLS[call](pd.read_parquet(market), pd.read_parquet(history))

    def brought_back(*args: object) -> None:
        raise AssertionError("the listings came back to pandas")

    monkeypatch.setattr(_trends_local, "listing_rows", brought_back)
    monkeypatch.setattr(_trends_local, "history_rows", brought_back)
    got = HISTORY_CALLS[call](ON_ENGINE[engine](market), ON_ENGINE[engine](history))
    assert len(want) > 0
    assert_same(got, want)


def test_keyed_trends_takes_a_key_assigned_on_the_engine(synced_files):
    """A tier computed on the engine is one more market key (what ``tiers=True`` builds on)."""
    market, history = synced_files
    frame = pd.read_parquet(market)
    cut = float(frame["ListPrice"].median())
    frame["tier"] = np.where(frame["ListPrice"] > cut, "top", "rest")
    want = keyed_trends(frame, pd.read_parquet(history), ["City", "tier"], min_sample=1)
    tier = pl.when(pl.col("ListPrice") > cut).then(pl.lit("top")).otherwise(pl.lit("rest"))
    lazy = pl.scan_parquet(market).with_columns(tier.alias("tier"))
    got = keyed_trends(lazy, pl.scan_parquet(history), ["City", "tier"], min_sample=1)
    assert set(want["tier"]) == {"top", "rest"}
    assert_same(got, want)


def test_a_history_on_another_duckdb_connection_is_read_locally(synced_files):
    """Relations of two DuckDB connections cannot meet in one query: the rows are read
    locally, with the same numbers."""
    market, history = synced_files
    want = HISTORY_CALLS["market_trends"](pd.read_parquet(market), pd.read_parquet(history))
    got = HISTORY_CALLS["market_trends"](_duckdb(market), _duckdb(history))
    assert_same(got, want)


# -- PySpark, local mode ------------------------------------------------------------------------------


@pytest.mark.spark
@pytest.mark.parametrize("call", CALLS)
def test_pyspark_gives_the_pandas_numbers(spark, listings_file, reference, call):
    want = CALLS[call](reference)
    got = CALLS[call](spark.read.parquet(str(listings_file)))
    assert_same(got, want)


@pytest.mark.spark
@pytest.mark.parametrize("call", HISTORY_CALLS)
def test_pyspark_gives_the_pandas_numbers_with_a_history(spark, synced_files, call):
    market, history = synced_files
    want = HISTORY_CALLS[call](pd.read_parquet(market), pd.read_parquet(history))
    got = HISTORY_CALLS[call](spark.read.parquet(str(market)), spark.read.parquet(str(history)))
    assert_same(got, want)


def test_the_competition_columns_compared_on_the_engines_hold_numbers(synced_files):
    """The parity above is not over blank columns: the sandbox market fills every competition
    column in some period."""
    market, history = synced_files
    out = HISTORY_CALLS["market_trends-rolling-4-weeks"](
        pd.read_parquet(market), pd.read_parquet(history)
    )
    competition = ("active_listings_any", "off_market_in_two_weeks", "median_days_to_pending",
                   "median_days_to_close", "age_of_inventory", "price_cut_share", "median_cut_pct",
                   "pending_ratio", "absorption_rate")  # fmt: skip
    for metric in competition:
        assert out[metric].notna().any() and (out[metric] != 0).any(), metric
