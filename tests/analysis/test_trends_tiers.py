"""Price tiers of ``rf.market_trends(..., tiers=True)`` (docs/metrics.md "Price tiers"): a hand-built
market whose tiers are known, the counts of the three tiers adding up to the 5th–95th percentile
population and each tier's median inside its band on the sandbox's market, the same answer from
Polars, and bad input named."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import realtyframes as rf
from realtyframes.analysis import TIER_BANDS, TIERS

MARCH = pd.Timestamp("2026-03-01")


def _hand_market() -> pd.DataFrame:
    """One city, March 2026: 21 sales at 100k ... 2.1M (list price 10k above) and 21 new
    listings still active at 50k ... 1.05M; plus a rental that no band may see."""
    sold = np.arange(1, 22) * 100_000.0
    listed = np.arange(1, 22) * 50_000.0
    n = len(sold)
    day = pd.Timestamp("2026-03-10 12:00", tz="UTC")
    closed = pd.DataFrame(
        {
            "ListingId": [f"S{i}" for i in range(n)],
            "StandardStatus": "Closed",
            "ListPrice": sold + 10_000,
            "ClosePrice": sold,
            "OriginalEntryTimestamp": pd.Timestamp("2025-06-01 12:00", tz="UTC"),
            "MajorChangeTimestamp": day,
            "CloseDate": day,
        }
    )
    active = pd.DataFrame(
        {
            "ListingId": [f"A{i}" for i in range(n)],
            "StandardStatus": "Active",
            "ListPrice": listed,
            "ClosePrice": np.nan,
            "OriginalEntryTimestamp": day,
            "MajorChangeTimestamp": day,
            "CloseDate": pd.NaT,
        }
    )
    rental = active.iloc[:1].assign(ListingId="R1", ListPrice=9_000_000.0)
    frame = pd.concat([closed, active, rental], ignore_index=True)
    frame["City"] = "Doral"
    frame["PropertyType"] = ["Residential"] * (2 * n) + ["Residential Lease"]
    frame["PropertySubType"] = "Single Family Residence"
    frame["PreviousListPrice"] = np.nan
    frame["LivingArea"] = 1500.0
    frame["DaysOnMarket"] = 30
    return frame


def _expected(prices: np.ndarray) -> dict[str, np.ndarray]:
    q = np.quantile(prices, [0.05, 0.35, 0.65, 0.95])
    return {
        "bottom": prices[(prices >= q[0]) & (prices < q[1])],
        "middle": prices[(prices >= q[1]) & (prices < q[2])],
        "top": prices[(prices >= q[2]) & (prices <= q[3])],
    }


def test_a_hand_built_market_has_the_tiers_worked_by_hand() -> None:
    out = rf.market_trends(
        _hand_market(), by="City", start="2026-03-01", end="2026-03-31", min_sample=1, tiers=True
    )
    assert list(out["tier"]) == list(TIERS) and (out["period_begin"] == MARCH).all()
    row = out.set_index("tier")
    # 21 prices, 5th..95th percentile at 200k and 2.0M: 1 below, 1 above, 19 in three tiers
    sales = _expected(np.arange(1, 22) * 100_000.0)
    assert [len(sales[t]) for t in TIERS] == [6, 6, 7]
    for tier in TIERS:
        assert row.loc[tier, "homes_sold"] == len(sales[tier])
        assert row.loc[tier, "median_sale_price"] == np.median(sales[tier])
        assert row.loc[tier, "median_sale_price_n"] == len(sales[tier])
    assert row.loc["bottom", "median_sale_price"] == 450_000.0  # 200k ... 700k
    # the 21 new listings (entry price = ListPrice, no history); the rental is in no band
    listed = _expected(np.arange(1, 22) * 50_000.0)
    for tier in TIERS:
        assert row.loc[tier, "new_listings"] == len(listed[tier])
        assert row.loc[tier, "active_listings"] == len(listed[tier])
        assert row.loc[tier, "median_list_price"] == np.median(listed[tier])
    low, high = TIER_BANDS["middle"]
    assert row.loc["middle", "sale_band_low"] == np.quantile(np.arange(1, 22) * 1e5, low)
    assert row.loc["middle", "list_band_high"] == np.quantile(np.arange(1, 22) * 5e4, high)
    tiers = out.attrs["tiers"]
    assert tiers["untiered_sales"] == 2 and tiers["untiered_listings"] == 2 + 2  # 2 sold, 2 not
    assert "homes_sold" in tiers["sale_metrics"] and "new_listings" not in tiers["sale_metrics"]
    plain = rf.market_trends(_hand_market(), by="City", start="2026-03-01", end="2026-03-31")
    assert out[plain.columns].dtypes.to_dict() == plain.dtypes.to_dict()  # counts stay integers


def test_rows_without_a_market_are_in_no_band_and_an_empty_market_keeps_the_columns() -> None:
    market = _hand_market()
    market.loc[[0, 1, 2], "City"] = None  # three of the cheapest sales: no market
    out = rf.market_trends(market, by="City", start="2026-03-01", end="2026-03-31", tiers=True)
    sales = _expected(np.arange(4, 22) * 100_000.0)  # the other 18 sales' tiers
    assert out["homes_sold"].tolist() == [len(sales[t]) for t in TIERS]
    prices = np.arange(4, 22) * 100_000.0
    assert out["sale_band_low"].tolist() == [np.quantile(prices, TIER_BANDS[t][0]) for t in TIERS]
    empty = rf.market_trends(market.iloc[:0], by="City", end="2026-03-31", tiers=True)
    plain = rf.market_trends(market.iloc[:0], by="City", end="2026-03-31")
    assert empty.empty and list(empty.columns) == [
        *plain.columns[:4], "tier", *plain.columns[4:],
        "sale_band_low", "sale_band_high", "list_band_low", "list_band_high",
    ]  # fmt: skip


@pytest.fixture(scope="module")
def synced(sandbox_url: str, tmp_path_factory: pytest.TempPathFactory) -> Any:
    cache = tmp_path_factory.mktemp("cache")
    with rf.Client(base_url=sandbox_url, cache_dir=cache, progress=False) as client:
        scope = {"PropertyType": "Residential"}
        return client.sync_listings(**scope), client.listing_history(**scope)


@pytest.fixture(scope="module")
def tiered(synced: Any) -> pd.DataFrame:
    market, history = synced
    return rf.market_trends(
        market, history, by="City", start="2025-07-01", end="2026-06-30", min_sample=1, tiers=True
    )


def _by_hand(prices: pd.Series, groups: list[pd.Series]) -> pd.Series:
    """How many prices of each group lie in its own 5th–95th percentile (numpy's quantile)."""

    def inside(values: pd.Series) -> int:
        q05, q95 = np.quantile(values.to_numpy(), [0.05, 0.95])
        return int(((values >= q05) & (values <= q95)).sum())

    return prices.groupby(groups).apply(inside)


def test_the_three_tiers_add_up_to_the_5th_to_95th_percentile_population(
    synced: Any, tiered: pd.DataFrame
) -> None:
    market, _ = synced
    month = pd.to_datetime(market["CloseDate"], utc=True).dt.tz_convert(None).dt.to_period("M")
    sold = market[(market["StandardStatus"] == "Closed") & market["ClosePrice"].notna()]
    begin = month[sold.index].dt.start_time.rename("period_begin")
    expected = _by_hand(sold["ClosePrice"], [sold["City"], begin])
    summed = tiered.groupby(["City", "period_begin"])["homes_sold"].sum()
    assert len(summed) == 14 * 12 and summed.sum() > 200  # 14 cities, 12 months
    assert summed.to_dict() == expected.reindex(summed.index, fill_value=0).to_dict()
    # and the untiered series counts the tails too: the tiers hold 5th..95th only
    plain = rf.market_trends(market, by="City", start="2025-07-01", end="2026-06-30")
    plain = plain.set_index(["City", "period_begin"])["homes_sold"]
    assert (summed <= plain.reindex(summed.index)).all() and summed.sum() < plain.sum()


def test_each_tier_median_lies_inside_its_band(tiered: pd.DataFrame) -> None:
    for metric, side in (("median_sale_price", "sale"), ("median_list_price", "list")):
        known = tiered[tiered[metric].notna()]
        assert len(known) > 100
        assert (known[metric] >= known[f"{side}_band_low"]).all()
        assert (known[metric] <= known[f"{side}_band_high"]).all()
    # bands follow each other: bottom's top edge is middle's bottom edge
    wide = tiered.pivot_table(
        index=["City", "period_begin"], columns="tier", values="sale_band_low", observed=True
    )
    assert (wide["bottom"] <= wide["middle"]).all() and (wide["middle"] <= wide["top"]).all()
    assert tiered.attrs["by"] == ["City"] and tiered.attrs["tiers"]["bands"]["top"] == [0.65, 0.95]


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_polars_and_duckdb_frames_give_the_same_tiers(
    engine: str, synced: Any, tiered: pd.DataFrame, tmp_path: Path
) -> None:
    market, history = synced
    if engine == "polars":
        pl = pytest.importorskip("polars")
        market_in, history_in = pl.from_pandas(market), pl.from_pandas(history).lazy()
    else:
        duckdb = pytest.importorskip("duckdb")
        market.to_parquet(tmp_path / "market.parquet")
        history.to_parquet(tmp_path / "history.parquet")
        connection = duckdb.connect()
        market_in = connection.read_parquet(str(tmp_path / "market.parquet"))
        history_in = connection.read_parquet(str(tmp_path / "history.parquet"))
    out = rf.market_trends(
        market_in,
        history_in,
        by="City",
        start="2025-07-01",
        end="2026-06-30",
        min_sample=1,
        tiers=True,
    )
    pd.testing.assert_frame_equal(out, tiered, check_dtype=False)
    assert out.attrs["tiers"] == tiered.attrs["tiers"]


def test_the_age_of_inventory_on_a_lazy_engine_is_the_same(
    synced: Any, tiered: pd.DataFrame
) -> None:
    """The age of inventory's medians computed on the engine (a Polars LazyFrame; only markets ×
    periods come back) give the numbers of the pandas path, city × tier markets."""
    pl = pytest.importorskip("polars")
    market, history = synced
    out = rf.market_trends(
        pl.from_pandas(market).lazy(),
        pl.from_pandas(history).lazy(),
        by="City",
        start="2025-07-01",
        end="2026-06-30",
        min_sample=1,
        tiers=True,
    )
    assert tiered["age_of_inventory"].notna().sum() > 10
    pd.testing.assert_frame_equal(out, tiered, check_dtype=False)


@pytest.mark.spark
def test_pyspark_frames_give_the_same_tiers(
    spark: Any, synced: Any, tiered: pd.DataFrame, tmp_path: Path
) -> None:
    market, history = synced
    market.to_parquet(tmp_path / "market.parquet")
    history.to_parquet(tmp_path / "history.parquet")
    out = rf.market_trends(
        spark.read.parquet(str(tmp_path / "market.parquet")),
        spark.read.parquet(str(tmp_path / "history.parquet")),
        by="City",
        start="2025-07-01",
        end="2026-06-30",
        min_sample=1,
        tiers=True,
    )
    pd.testing.assert_frame_equal(out, tiered, check_dtype=False)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"tiers": "yes"}, "`tiers` must be True or False"),
        ({"tiers": True, "by": ["City", "tier"]}, "`by` may not name 'tier'"),
        ({"seasonally_adjusted": "homes_sold"}, "`seasonally_adjusted` must be True, False"),
        ({"seasonally_adjusted": []}, "`seasonally_adjusted` must be True, False"),
    ],
)
def test_bad_tier_options_are_named(options: dict[str, Any], message: str) -> None:
    market = _hand_market().assign(tier="x")
    call: Callable[[], Any] = lambda: rf.market_trends(market, **{"by": "City", **options})  # noqa: E731
    with pytest.raises(rf.AnalysisInputError, match=message):
        call()


def test_a_missing_column_is_named_before_any_tier_is_computed() -> None:
    with pytest.raises(rf.MissingColumnsError, match="ClosePrice"):
        rf.market_trends(_hand_market().drop(columns="ClosePrice"), by="City", tiers=True)
