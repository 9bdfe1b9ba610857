"""The cache as datasets other engines read as one table: ``client.dataset_path(resource)``, hive
partitions ``account`` and ``scope``, every entry once across runs (DuckDB, Polars, pyarrow here;
Spark under the ``spark`` marker), and the move from the flat layout of realtyframes 0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import polars as pl
import pyarrow.dataset as ds
import pytest

import realtyframes as rf
from realtyframes.errors import QueryError

#: Two synced markets that do not overlap: together, one market of two cities.
SCOPES = [{"PropertyType": "Residential", "City": c} for c in ("Coral Gables", "Doral")]
SCOPE = SCOPES[-1]


class Cached:
    """What one client cached: the frames it returned, by scope key, per resource."""

    def __init__(self, client: rf.Client) -> None:
        self.client = client
        self.frames: dict[str, dict[str, pd.DataFrame]] = {}

    def keep(self, frame: pd.DataFrame) -> pd.DataFrame:
        info = self.client.last_load
        assert info is not None and info.key is not None
        self.frames.setdefault(info.resource, {})[f"key-{info.key}"] = frame
        return frame


@pytest.fixture(scope="module")
def cached(sandbox_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cached]:
    """Two runs of the same loads (the second refreshed), two listing scopes, a market sync."""
    root = tmp_path_factory.mktemp("dataset") / "cache"
    with rf.Client(sandbox_url, cache_dir=root, progress=False) as client:
        out = Cached(client)
        for refresh in (False, True):
            out.keep(client.listings(City="Miami", refresh=refresh))
            out.keep(client.listings(City="Doral", Status="Closed", refresh=refresh))
            for scope in SCOPES:
                out.keep(client.sync_listings(**scope))
        yield out


def _expected(cached: Cached, resource: str) -> pd.DataFrame:
    frames = [f.assign(scope=s) for s, f in cached.frames[resource].items()]
    return pd.concat(frames, ignore_index=True)


def _readers(root: Path) -> dict[str, pd.DataFrame]:
    glob = f"{root}/**/*.parquet"
    return {
        "duckdb": duckdb.sql(f"FROM read_parquet('{glob}', hive_partitioning = true)").df(),
        "polars": pl.scan_parquet(glob, hive_partitioning=True).collect().to_pandas(),
        "polars (folder)": pl.scan_parquet(root).collect().to_pandas(),
        "pyarrow": ds.dataset(root, format="parquet", partitioning="hive").to_table().to_pandas(),
    }


@pytest.mark.parametrize("resource", ["listings", "market"])
def test_every_reader_sees_each_scope_once_across_runs(cached: Cached, resource: str) -> None:
    root = cached.client.dataset_path(resource)
    want = _expected(cached, resource)
    account = f"acct-{cached.client.api.fingerprint}"  # never a number, whatever the hex digits
    for reader, got in _readers(root).items():
        assert len(got) == len(want), reader  # two runs, one copy
        assert set(got["account"]) == {account}, reader
        assert got.groupby("scope").size().to_dict() == want.groupby("scope").size().to_dict()
        assert not got.duplicated(["scope", "ListingId"]).any(), reader
        for scope, frame in cached.frames[resource].items():
            rows = got[got["scope"] == scope].sort_values("ListingId", ignore_index=True)
            mine = frame.sort_values("ListingId", ignore_index=True)
            assert rows["ListingId"].tolist() == mine["ListingId"].tolist(), reader
            assert rows["ListPrice"].tolist() == pytest.approx(
                mine["ListPrice"].tolist(), nan_ok=True
            )


def test_companions_are_datasets_too(cached: Cached) -> None:
    root = cached.client.dataset_path("market.history")
    history = dict(
        duckdb.sql(
            f"SELECT scope, count(*) AS n FROM read_parquet('{root}/**/*.parquet', "
            "hive_partitioning = true) GROUP BY scope"
        ).fetchall()
    )
    assert set(history) == set(cached.frames["market"])  # one history per synced market
    assert sum(history.values()) == sum(len(cached.client.listing_history(**s)) for s in SCOPES)


def test_the_dataset_path_is_checked(cached: Cached, sandbox_url: str) -> None:
    with pytest.raises(
        QueryError, match=r"resource: unknown resource 'houses'; allowed: .*listings"
    ):
        cached.client.dataset_path("houses")
    with (
        rf.Client(sandbox_url, cache=False, progress=False) as uncached,
        pytest.raises(ValueError, match="no cache"),
    ):
        uncached.dataset_path("listings")


def test_a_dataset_folder_holds_only_whole_entries(cached: Cached) -> None:
    """Locks, files being written and files moved aside live in ``.rf``, never in a dataset."""
    root = cached.client.dataset_path("listings")
    names = {p.name for p in root.rglob("*") if p.is_file()}
    assert names == {"part-0.parquet"}
    assert [p.name for p in root.parent.iterdir() if p.name.startswith(".")] == [".rf"]


def _summary(market: Any) -> pd.DataFrame:
    return rf.market_summary(market, by="City", window_days=90, as_of="2026-06-30")


@pytest.mark.parametrize("engine", ["duckdb", "polars"])
def test_market_metrics_over_the_dataset(cached: Cached, engine: str) -> None:
    """docs/scale.md: the market report's numbers from the synced markets' dataset, read by an
    engine as one table, equal those of the frames the syncs returned."""
    root = cached.client.dataset_path("market")
    glob = f"{root}/**/*.parquet"
    table = (
        duckdb.read_parquet(glob, hive_partitioning=True)
        if engine == "duckdb"
        else pl.scan_parquet(glob, hive_partitioning=True)
    )
    want = _summary(pd.concat(cached.frames["market"].values(), ignore_index=True))
    assert set(want.index) == {"Coral Gables", "Doral"}
    pd.testing.assert_frame_equal(_summary(table), want, rtol=1e-9)


# --- Spark -------------------------------------------------------------------------------------------


@pytest.mark.spark
@pytest.mark.parametrize("resource", ["listings", "market"])
def test_spark_reads_the_dataset_as_one_table(spark: Any, cached: Cached, resource: str) -> None:
    root = cached.client.dataset_path(resource)
    table = spark.read.parquet(str(root))
    want = _expected(cached, resource)
    assert table.count() == len(want)
    assert table.select("scope", "ListingId").distinct().count() == len(want)
    counts = {r["scope"]: r["count"] for r in table.groupBy("scope").count().collect()}
    assert counts == want.groupby("scope").size().to_dict()
    accounts = {r["account"] for r in table.select("account").distinct().collect()}
    assert accounts == {f"acct-{cached.client.api.fingerprint}"}


@pytest.mark.spark
def test_spark_computes_the_market_metrics_over_the_dataset(spark: Any, cached: Cached) -> None:
    """The example of docs/scale.md."""
    market = spark.read.parquet(str(cached.client.dataset_path("market")))
    want = _summary(pd.concat(cached.frames["market"].values(), ignore_index=True))
    pd.testing.assert_frame_equal(_summary(market), want, rtol=1e-9)
