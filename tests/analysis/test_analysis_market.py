"""market_summary / compare_markets on a small hand-built market, values worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from realtyframes.analysis import (
    MARKET_METRICS,
    REFERENCE_LABEL,
    AnalysisInputError,
    ColumnTypeError,
    MissingColumnsError,
    compare_markets,
    market_summary,
    ppsf_values,
)

NaN = np.nan
AS_OF = pd.Timestamp("2024-06-30T00:00:00Z")
# window_days=60: current window (2024-05-01 00:00, 2024-06-30 00:00],
#                 previous window (2024-03-02 00:00, 2024-05-01 00:00]


def ts(s: str | None) -> pd.Timestamp:
    return pd.NaT if s is None else pd.Timestamp(s, tz="UTC")


# id, city, type, status, ListPrice, PreviousListPrice, ClosePrice, LivingArea, DOM,
# OriginalEntryTimestamp, MajorChangeTimestamp, CloseDate
ROWS = [
    (
        "A1",
        "Alpha",
        "Residential",
        "Active",
        500_000,
        550_000,
        NaN,
        1000,
        5,
        "2024-06-10",
        "2024-06-12",
        None,
    ),
    (
        "A2",
        "Alpha",
        "Residential",
        "Active",
        300_000,
        NaN,
        NaN,
        1500,
        90,
        "2024-01-15",
        "2024-01-15",
        None,
    ),
    (
        "A3",
        "Alpha",
        "Residential",
        "Active",
        400_000,
        400_000,
        NaN,
        0,
        40,
        "2024-05-01",
        "2024-05-01",
        None,
    ),
    (
        "A4",
        "Alpha",
        "Residential",
        "Pending",
        600_000,
        NaN,
        NaN,
        2000,
        20,
        "2024-04-01",
        "2024-06-15",
        None,
    ),
    (
        "A5",
        "Alpha",
        "Residential",
        "Pending",
        650_000,
        NaN,
        NaN,
        2000,
        60,
        "2024-02-01",
        "2024-04-20",
        None,
    ),
    (
        "A6",
        "Alpha",
        "Residential",
        "Closed",
        400_000,
        NaN,
        420_000,
        2000,
        10,
        "2024-06-01",
        "2024-06-30",
        "2024-06-30",
    ),
    (
        "A7",
        "Alpha",
        "Residential",
        "Closed",
        500_000,
        NaN,
        450_000,
        1500,
        30,
        "2024-03-15",
        "2024-06-05",
        "2024-06-05",
    ),
    (
        "A8",
        "Alpha",
        "Residential",
        "Closed",
        100_000,
        NaN,
        200_000,
        1000,
        50,
        "2024-01-10",
        "2024-06-20",
        "2024-06-20",
    ),
    (
        "A9",
        "Alpha",
        "Residential",
        "Closed",
        1_000_000,
        NaN,
        1_000_000,
        2500,
        5,
        "2024-03-10",
        "2024-05-01",
        "2024-05-01",
    ),
    (
        "A10",
        "Alpha",
        "Residential Lease",
        "Active",
        3_000,
        NaN,
        NaN,
        1000,
        7,
        "2024-06-20",
        "2024-06-20",
        None,
    ),
    (
        "A11",
        "Alpha",
        "Residential",
        "Active Under Contract",
        700_000,
        NaN,
        NaN,
        1800,
        12,
        "2024-06-25",
        "2024-06-28",
        None,
    ),
    ("A12", "Alpha", "Farm", "Active", 900_000, NaN, NaN, 900, 1, "2024-06-05", "2024-06-05", None),
    (
        "B1",
        "Beta",
        "Residential",
        "Active",
        250_000,
        300_000,
        NaN,
        NaN,
        15,
        "2024-02-01",
        "2024-03-01",
        None,
    ),
    (
        "B2",
        "Beta",
        "Residential",
        "Closed",
        350_000,
        NaN,
        340_000,
        1000,
        25,
        "2023-12-01",
        "2024-01-15",
        "2024-01-15",
    ),
    (
        "C1",
        "Gamma",
        "Land/Boat Docks",
        "Active",
        90_000,
        NaN,
        NaN,
        NaN,
        100,
        "2023-11-01",
        "2023-11-01",
        None,
    ),
]
COLUMNS = [
    "ListingId", "City", "PropertyType", "StandardStatus", "ListPrice", "PreviousListPrice",
    "ClosePrice", "LivingArea", "DaysOnMarket", "OriginalEntryTimestamp", "MajorChangeTimestamp",
    "CloseDate",
]  # fmt: skip


@pytest.fixture
def listings() -> pd.DataFrame:
    """Typed like the loaders' frames: categoricals, nullable ints, str, tz-aware UTC."""
    df = pd.DataFrame(ROWS, columns=COLUMNS)
    for c in ("OriginalEntryTimestamp", "MajorChangeTimestamp", "CloseDate"):
        df[c] = pd.to_datetime(df[c], utc=True)
    return df.astype(
        {
            "ListingId": "str",
            "City": "str",
            "PropertyType": "category",
            "StandardStatus": pd.CategoricalDtype(
                ["Active", "Active Under Contract", "Pending", "Closed"]
            ),
            "LivingArea": "Float64",
            "DaysOnMarket": "Int64",
        }
    )


def test_every_metric_of_a_hand_built_market(listings: pd.DataFrame) -> None:
    out = market_summary(listings, by="City", as_of=AS_OF, window_days=60)
    assert list(out.columns) == list(MARKET_METRICS)
    assert out.index.name == "City"
    # sale segment: Alpha (A1-A9, A11), Beta, Gamma (Land/Boat Docks is a sale type);
    # A10 (lease) and A12 (unknown type "Farm") are left out.
    assert list(out.index) == ["Alpha", "Beta", "Gamma"]
    a = out.loc["Alpha"]
    assert a["active_listings"] == 3  # A1, A2, A3 (A11 is Active Under Contract, A12 is a Farm)
    assert (
        a["new_listings"] == 3
    )  # A1 06-10, A6 06-01, A11 06-25; A3 at 05-01 00:00 is the open start
    assert a["pending_sales"] == 1  # A4 went pending 06-15; A5 on 04-20 is before the window
    assert a["homes_sold"] == 3  # A6 (06-30 00:00 = as_of, included), A7, A8; A9 05-01 excluded
    assert a["median_list_price"] == 400_000  # median(500k, 300k, 400k)
    assert (
        a["median_list_ppsf"] == 350
    )  # median(500k/1000, 300k/1500) = median(500, 200); A3 area 0
    assert a["median_sale_price"] == 420_000  # median(420k, 450k, 200k)
    assert (
        a["median_sale_ppsf"] == 210
    )  # median(420k/2000, 450k/1500, 200k/1000) = median(210, 300, 200)
    assert a["median_dom"] == 30  # median(10, 30, 50)
    # sale-to-list: A6 420/400 = 1.05, A7 450/500 = 0.9, A8 200/100 = 2.0 is outside [0.5, 1.5]
    assert a["avg_sale_to_list"] == pytest.approx((1.05 + 0.9) / 2)  # 0.975
    assert a["pct_sold_above_list"] == pytest.approx(1 / 2)  # A6 above list, A7 below
    # 3 active / (3 sold per 60 days * 30 / 60 = 1.5 sold per 30 days) = 2.0 months
    assert a["months_of_supply"] == pytest.approx(2.0)
    assert a["pct_active_with_price_drop"] == pytest.approx(1 / 3)  # A1 only (A3 equal prices)

    b = out.loc["Beta"]
    assert b["active_listings"] == 1 and b["homes_sold"] == 0  # B2 closed in January
    assert b["median_list_price"] == 250_000
    assert math.isnan(b["median_list_ppsf"])  # no living area
    for metric in ("median_sale_price", "median_sale_ppsf", "median_dom", "avg_sale_to_list"):
        assert math.isnan(b[metric]), metric  # nothing sold: NaN, not an error
    assert math.isnan(b["pct_sold_above_list"]) and math.isnan(b["months_of_supply"])
    assert b["pct_active_with_price_drop"] == 1.0  # B1: 300k -> 250k

    g = out.loc["Gamma"]
    assert g["active_listings"] == 1 and g["median_list_price"] == 90_000
    assert out["active_listings"].dtype == "int64" and out["median_dom"].dtype == "float64"
    assert out.attrs["as_of"] == AS_OF and out.attrs["window_days"] == 60
    assert out.attrs["window_start"] == pd.Timestamp("2024-05-01T00:00:00Z")


def test_rent_segment_and_both(listings: pd.DataFrame) -> None:
    rent = market_summary(listings, as_of=AS_OF, window_days=60, segment="rent")
    assert list(rent.index) == ["Alpha"]  # only A10
    r = rent.loc["Alpha"]
    assert r["active_listings"] == 1 and r["median_list_price"] == 3_000
    assert r["median_list_ppsf"] == 3.0  # 3000 / 1000
    assert r["new_listings"] == 1  # A10 listed 06-20
    both = market_summary(listings, as_of=AS_OF, window_days=60, segment="both")
    assert both.index.names == ["segment", "City"]
    pd.testing.assert_series_equal(both.loc[("rent", "Alpha")], r, check_names=False)
    sale = market_summary(listings, as_of=AS_OF, window_days=60, segment="sale")
    pd.testing.assert_frame_equal(both.xs("sale", level="segment"), sale, check_like=True)


def test_compare_previous_gives_the_earlier_window_and_the_change(listings: pd.DataFrame) -> None:
    out = market_summary(listings, as_of=AS_OF, window_days=60, compare_previous=True)
    a = out.loc["Alpha"]
    # previous window (2024-03-02, 2024-05-01]:
    assert (
        a["new_listings_prev"] == 4
    )  # A3 05-01 00:00 (end included), A4 04-01, A7 03-15, A9 03-10
    assert a["new_listings_change"] == 3 - 4
    assert a["new_listings_pct_change"] == pytest.approx(-1 / 4)
    assert a["pending_sales_prev"] == 1  # A5 went pending 04-20
    assert a["pending_sales_change"] == 0
    assert a["homes_sold_prev"] == 1  # A9 closed 05-01 00:00
    assert a["homes_sold_pct_change"] == pytest.approx(3 / 1 - 1)
    assert a["median_sale_price_prev"] == 1_000_000
    assert a["median_sale_price_change"] == 420_000 - 1_000_000
    assert a["median_sale_price_pct_change"] == pytest.approx(420_000 / 1_000_000 - 1)  # -0.58
    assert a["avg_sale_to_list_prev"] == 1.0  # A9 sold at list
    assert a["avg_sale_to_list_change"] == pytest.approx(0.975 - 1.0)
    assert a["pct_sold_above_list_prev"] == 0.0
    assert a["median_dom_prev"] == 5 and a["median_dom_change"] == 30 - 5
    # snapshot metrics describe the listings now: no earlier value from one snapshot
    for m in ("active_listings", "median_list_price", "months_of_supply"):
        assert pd.isna(a[f"{m}_prev"]) and pd.isna(a[f"{m}_change"])
    # counts stay whole numbers (NA where unknown), the rest floats
    for m in ("active_listings", "new_listings", "pending_sales", "homes_sold"):
        assert out[f"{m}_prev"].dtype == "Int64" and out[f"{m}_change"].dtype == "Int64"
    assert out["median_sale_price_prev"].dtype == "float64"
    assert list(out.columns[: len(MARKET_METRICS)]) == list(MARKET_METRICS)
    b = out.loc["Beta"]
    assert b["homes_sold_prev"] == 0 and pd.isna(b["homes_sold_pct_change"])  # 0 before


def test_as_of_defaults_to_newest_timestamp_and_dates_mean_end_of_day(
    listings: pd.DataFrame,
) -> None:
    out = market_summary(listings, window_days=60)
    # newest timestamp anywhere in the frame: A6's MajorChangeTimestamp / CloseDate 2024-06-30
    assert out.attrs["as_of"] == AS_OF
    pd.testing.assert_frame_equal(out, market_summary(listings, as_of=AS_OF, window_days=60))
    with_mod = listings.assign(ModificationTimestamp=ts("2024-07-02T08:00:00"))
    assert market_summary(with_mod).attrs["as_of"] == ts("2024-07-02T08:00:00")
    # a bare date is the end of that day: window (04-30 23:59:59.999999, 06-29 23:59:59.999999]
    # leaves out A6 (06-30 00:00) and takes in A9 (05-01 00:00)
    day = market_summary(listings, as_of="2024-06-29", window_days=60)
    assert day.attrs["as_of"] == ts("2024-06-29T23:59:59.999999")
    assert day.loc["Alpha", "homes_sold"] == 3  # A7, A8, A9
    assert day.loc["Alpha", "median_sale_price"] == 450_000  # median(450k, 200k, 1M)
    naive = market_summary(listings, as_of=pd.Timestamp("2024-06-30"), window_days=60)
    assert naive.loc["Alpha", "homes_sold"] == 3  # naive timestamps are UTC, taken literally


def test_by_several_columns_and_postal_codes(listings: pd.DataFrame) -> None:
    df = listings.assign(PostalCode=["33139"] * 6 + ["33140"] * 9)
    out = market_summary(df, by=["City", "PostalCode"], as_of=AS_OF, window_days=60)
    assert out.index.names == ["City", "PostalCode"]
    # A7, A8 (and A9) are the 33140 sales in Alpha: median(450k, 200k) = 325k
    assert out.loc[("Alpha", "33140"), "median_sale_price"] == 325_000
    assert out.loc[("Alpha", "33139"), "homes_sold"] == 1  # A6


def test_compare_markets_table(listings: pd.DataFrame) -> None:
    table = compare_markets(
        listings,
        ["Beta", "Alpha", "Nowhere"],
        metrics=["homes_sold", "median_sale_price", "months_of_supply"],
        as_of=AS_OF,
        window_days=60,
    )
    assert list(table.columns) == ["Beta", "Alpha", "Nowhere", REFERENCE_LABEL]
    assert list(table.index) == ["homes_sold", "median_sale_price", "months_of_supply"]
    assert table.index.name == "metric" and table.columns.name == "City"
    assert table.loc["homes_sold", "Alpha"] == 3
    assert type(table.loc["homes_sold", "Alpha"]) is int  # a count prints as 3, not 3.0
    assert isinstance(table.loc["median_sale_price", "Alpha"], float)
    assert table["Nowhere"].isna().all()  # a market with no listings: NaN, never an error
    # reference = the whole sale segment: 3 sales (Alpha), median(420k, 450k, 200k) = 420k,
    # 5 active (A1-A3, B1, C1) / (3 sold * 30 / 60) = 5 / 1.5
    assert table.loc["homes_sold", REFERENCE_LABEL] == 3
    assert table.loc["median_sale_price", REFERENCE_LABEL] == 420_000
    assert table.loc["months_of_supply", REFERENCE_LABEL] == pytest.approx(5 / 1.5)
    full = compare_markets(listings, as_of=AS_OF, window_days=60)
    assert list(full.columns) == ["Alpha", "Beta", "Gamma", REFERENCE_LABEL]
    assert list(full.index) == list(MARKET_METRICS)


def test_compare_markets_refuses_a_market_given_twice(listings: pd.DataFrame) -> None:
    import realtyframes as rf

    with pytest.raises(rf.QueryError, match="duplicate market 'Alpha'") as info:
        compare_markets(listings, ["Alpha", "Beta", "Alpha"], as_of=AS_OF)
    assert info.value.param == "markets"
    # a several-column `by`: tuples, or lists as JSON gives them, compare as the same market
    with pytest.raises(rf.QueryError, match="duplicate market") as pairs:
        compare_markets(listings, [("Alpha", "Condo"), ["Alpha", "Condo"]],
                        by=["City", "PropertySubType"], as_of=AS_OF)  # fmt: skip
    assert pairs.value.param == "markets"


def test_compare_markets_reference_is_additive_for_counts(listings: pd.DataFrame) -> None:
    table = compare_markets(listings, as_of=AS_OF, window_days=60, segment="both")
    assert table.columns.names == ["segment", "City"]
    for seg in ("sale", "rent"):
        part = table[seg]
        for m in ("active_listings", "new_listings", "pending_sales", "homes_sold"):
            markets = part.drop(columns=REFERENCE_LABEL)
            assert markets.loc[m].sum() == part.loc[m, REFERENCE_LABEL]


def test_empty_frame_and_empty_markets_give_nan_not_errors(listings: pd.DataFrame) -> None:
    empty = market_summary(listings.iloc[0:0])
    assert empty.empty and list(empty.columns) == list(MARKET_METRICS)
    only_rent = listings[listings["PropertyType"] == "Residential Lease"]
    assert market_summary(only_rent).empty  # no sale listings: no sale markets
    table = compare_markets(listings.iloc[0:0], ["Alpha"])
    assert table.isna().all().all()


def test_missing_columns_are_named(listings: pd.DataFrame) -> None:
    with pytest.raises(MissingColumnsError) as err:
        market_summary(listings.drop(columns=["CloseDate", "LivingArea"]))
    assert err.value.missing == ("LivingArea", "CloseDate")
    assert "'LivingArea', 'CloseDate'" in str(err.value) and "market_summary" in str(err.value)
    assert isinstance(err.value, KeyError) and isinstance(err.value, ValueError)
    with pytest.raises(MissingColumnsError, match="'County'"):
        market_summary(listings, by="County")


def test_bad_arguments_name_the_parameter_and_allowed_values(listings: pd.DataFrame) -> None:
    with pytest.raises(AnalysisInputError, match="`segment` must be one of 'sale', 'rent', 'both'"):
        market_summary(listings, segment="lease")
    with pytest.raises(AnalysisInputError, match="`window_days`"):
        market_summary(listings, window_days=0)
    with pytest.raises(AnalysisInputError, match="`as_of`"):
        market_summary(listings, as_of="last tuesday")
    with pytest.raises(AnalysisInputError, match="`metrics` must be a list of names from"):
        compare_markets(listings, ["Alpha"], metrics=["median_price"])
    with pytest.raises(TypeError, match="unexpected keyword"):
        compare_markets(listings, ["Alpha"], window=30)
    with pytest.raises(ColumnTypeError, match=r"'ListPrice'.*'\$300,000'"):
        market_summary(listings.astype({"ListPrice": object}).assign(ListPrice="$300,000"))


def test_ppsf_values_follow_the_metric_populations(listings: pd.DataFrame) -> None:
    sale = ppsf_values(listings, price="sale", as_of=AS_OF, window_days=60)
    assert sorted(sale["ppsf"]) == [200, 210, 300]  # A8, A6, A7
    active = ppsf_values(listings, price="list", as_of=AS_OF, window_days=60)
    assert sorted(active["ppsf"]) == [200, 500]  # A2, A1 (A3 no area, B1 no area, C1 no area)
    assert list(active.columns) == ["City", "ppsf"]


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
def test_the_window_edges_hold_to_the_microsecond_in_every_unit(unit):
    """A sale at the window's end counts, one at its start does not; a nanosecond past either
    edge counts as its microsecond (the engines' reading); naive times are UTC; a missing date
    is no sale. The pandas path compares integer times in the column's own unit."""
    start, end = AS_OF - pd.Timedelta(days=60), AS_OF
    closes = [
        end,  # in
        end + pd.Timedelta(microseconds=1),  # out
        start,  # out
        start + pd.Timedelta(microseconds=1),  # in
        pd.NaT,  # no sale
    ]
    if unit == "ns":  # within the edge's microsecond: as the edge
        closes += [end + pd.Timedelta(nanoseconds=500), start + pd.Timedelta(nanoseconds=999)]
    n = len(closes)
    frame = pd.DataFrame(
        {
            "City": "Alpha",
            "PropertyType": "Residential",
            "StandardStatus": "Closed",
            "ListPrice": 100.0,
            "PreviousListPrice": np.nan,
            "ClosePrice": np.arange(1.0, n + 1) * 10,
            "LivingArea": 10.0,
            "DaysOnMarket": 5,
            "OriginalEntryTimestamp": pd.Timestamp("2020-01-01", tz="UTC"),
            "MajorChangeTimestamp": pd.Series(closes),
            "CloseDate": pd.Series(closes).dt.tz_convert(None).astype(f"datetime64[{unit}]"),
        }
    )
    got = market_summary(frame, by="City", as_of=AS_OF, window_days=60)
    # in s and ms the microsecond past each edge is the edge itself: end in, start out
    kept = {"s": [10.0, 20.0], "ms": [10.0, 20.0], "us": [10.0, 40.0]}.get(unit, [10.0, 40.0, 60.0])
    assert got.loc["Alpha", "homes_sold"] == len(kept)
    assert got.loc["Alpha", "median_sale_price"] == np.median(kept)
