"""price_drops / price_drop_summary on hand-built listings and change feeds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from realtyframes.analysis import (
    PRICE_DROP_COLUMNS,
    PRICE_DROP_SUMMARY_COLUMNS,
    AnalysisInputError,
    MissingColumnsError,
    price_drop_summary,
    price_drops,
)
from realtyframes.errors import DataQualityWarning

NaN = np.nan


def ts(s: str) -> pd.Timestamp:
    return pd.Timestamp(s, tz="UTC")


@pytest.fixture
def listings() -> pd.DataFrame:
    rows = [
        # id, city, type, status, ListPrice, PreviousListPrice, MajorChangeTimestamp, DOM
        ("P1", "Alpha", "Residential", "Active", 90_000, 100_000, "2024-06-01", 30),
        ("P2", "Alpha", "Residential", "Pending", 180_000, 200_000, "2024-06-20", 45),
        ("P3", "Beta", "Residential", "Active", 950_000, 1_000_000, "2024-06-30", 12),
        ("P4", "Beta", "Residential", "Active", 500_000, 450_000, "2024-06-02", 3),  # a raise
        ("P5", "Beta", "Residential", "Active", 300_000, NaN, "2024-05-02", 80),  # never changed
        ("P6", "Alpha", "Residential Lease", "Active", 2_700, 3_000, "2024-06-03", 9),
        ("P7", "Alpha", "Residential", "Active", 410_000, 410_000, "2024-06-03", 9),  # equal
    ]
    df = pd.DataFrame(
        rows,
        columns=[
            "ListingId", "City", "PropertyType", "StandardStatus", "ListPrice",
            "PreviousListPrice", "MajorChangeTimestamp", "DaysOnMarket",
        ],
    )  # fmt: skip
    df["MajorChangeTimestamp"] = pd.to_datetime(df["MajorChangeTimestamp"], utc=True)
    df["UnparsedAddress"] = [f"{i} Main St" for i in range(1, 8)]
    df["PostalCode"] = "33139"
    df["PropertySubType"] = "Condominium"
    return df.astype({"ListingId": "str", "City": "str", "StandardStatus": "category"})


def test_cuts_from_the_listings_snapshot(listings: pd.DataFrame) -> None:
    out = price_drops(listings)
    assert list(out.columns) == list(PRICE_DROP_COLUMNS)
    # P1 10k/100k = 0.10, P2 20k/200k = 0.10 (tie: ListingId order), P6 300/3000 = 0.10,
    # P3 50k/1M = 0.05; P4 (raise), P5 (no previous price), P7 (equal) are not cuts
    assert list(out["ListingId"]) == ["P1", "P2", "P6", "P3"]
    p2 = out.set_index("ListingId").loc["P2"]
    assert p2["previous_price"] == 200_000 and p2["current_price"] == 180_000
    assert p2["drop_amount"] == 20_000 and p2["drop_pct"] == pytest.approx(0.10)
    assert p2["drop_count"] == 1 and p2["first_price"] == 200_000
    assert p2["total_drop_pct"] == pytest.approx(0.10)
    assert p2["last_drop_at"] == ts("2024-06-20")  # the listing's MajorChangeTimestamp
    assert p2["City"] == "Alpha" and p2["UnparsedAddress"] == "2 Main St"
    assert p2["DaysOnMarket"] == 45 and p2["StandardStatus"] == "Pending"
    assert out["drop_count"].dtype == "int64"
    assert str(out["last_drop_at"].dtype) == "datetime64[us, UTC]"


def test_min_drop_pct_and_since_filter_the_cuts(listings: pd.DataFrame) -> None:
    # cuts at or above 6%: P1, P2, P6 (10% each); P3 (5%) goes
    assert list(price_drops(listings, min_drop_pct=0.06)["ListingId"]) == ["P1", "P2", "P6"]
    assert len(price_drops(listings, min_drop_pct=0.10)) == 3  # "at or above": 0.10 stays
    # cuts after 2024-06-02: P2 (06-20), P6 (06-03), P3 (06-30); P1 (06-01) goes
    out = price_drops(listings, since="2024-06-02")
    assert list(out["ListingId"]) == ["P2", "P6", "P3"]


def test_cuts_from_the_change_feed() -> None:
    listings = pd.DataFrame(
        {
            "ListingId": ["Q1", "Q2", "Q3"],
            "City": ["Alpha", "Beta", "Beta"],
            "PropertyType": "Residential",
            "StandardStatus": "Active",
            "ListPrice": [180_000, 400_000, 310_000],
            "PreviousListPrice": [171_000, 500_000, 300_000],
        }
    )
    changes = pd.DataFrame(
        [
            ("Q1", "price_change", "2024-05-01T00:00Z", 200_000, 190_000, None, None),  # -5%
            ("Q1", "price_change", "2024-05-10T00:00Z", 190_000, 171_000, None, None),  # -10%
            ("Q1", "price_change", "2024-05-20T00:00Z", 171_000, 180_000, None, None),  # raise
            ("Q2", "price_change", "2024-05-05T00:00Z", 500_000, 400_000, None, None),  # -20%
            ("Q2", "price_change", "2024-05-05T00:00Z", 500_000, 400_000, None, None),  # duplicate
            ("Q2", "status_change", "2024-05-06T00:00Z", NaN, NaN, "Active", "Pending"),
            ("Q3", "price_change", "2024-05-07T00:00Z", 300_000, 310_000, None, None),  # raise
            ("Q9", "price_change", "2024-05-08T00:00Z", 100_000, 50_000, None, None),  # unknown
        ],
        columns=[
            "ListingId", "ChangeType", "ChangeTimestamp", "PreviousListPrice", "ListPrice",
            "PreviousStatus", "StandardStatus",
        ],
    )  # fmt: skip
    changes["ChangeTimestamp"] = pd.to_datetime(changes["ChangeTimestamp"], utc=True)
    out = price_drops(listings, changes).set_index("ListingId")
    assert list(out.index) == ["Q2", "Q1"]  # 20% before 10%; Q3 only rose, Q9 is not listed
    q1 = out.loc["Q1"]
    # the last cut: 190k -> 171k = 19k, 19k/190k = 0.10
    assert (q1["previous_price"], q1["current_price"], q1["drop_amount"]) == (
        190_000,
        171_000,
        19_000,
    )
    assert q1["drop_pct"] == pytest.approx(0.10)
    assert q1["drop_count"] == 2  # 05-01 and 05-10
    # first price seen 200k, latest 180k (after the raise): 20k, 20k/200k = 0.10
    assert q1["first_price"] == 200_000 and q1["total_drop_amount"] == 20_000
    assert q1["total_drop_pct"] == pytest.approx(0.10)
    assert q1["last_drop_at"] == ts("2024-05-10")
    q2 = out.loc["Q2"]
    assert q2["drop_count"] == 1 and q2["drop_pct"] == pytest.approx(0.20)  # duplicate once

    # since: changes strictly after 05-05 00:00. Q1: 05-10 cut and 05-20 raise; first price
    # seen 190k, latest 180k -> total 10k/190k. Q2's cut at 05-05 00:00 is not after it.
    later = price_drops(listings, changes, since="2024-05-05T00:00:00Z").set_index("ListingId")
    assert list(later.index) == ["Q1"]
    assert later.loc["Q1", "drop_count"] == 1 and later.loc["Q1", "first_price"] == 190_000
    assert later.loc["Q1", "total_drop_pct"] == pytest.approx(10_000 / 190_000)

    # min_drop_pct=0.08 keeps Q1's 10% cut only (not the 5% one); totals still from 200k
    big = price_drops(listings, changes, min_drop_pct=0.08).set_index("ListingId")
    assert big.loc["Q1", "drop_count"] == 1 and big.loc["Q1", "total_drop_amount"] == 20_000
    assert list(big.index) == ["Q2", "Q1"]
    # descriptive columns the listings frame lacks are null, not an error
    assert out["UnparsedAddress"].isna().all() and out["DaysOnMarket"].isna().all()


def test_no_cuts_gives_an_empty_frame_with_the_columns(listings: pd.DataFrame) -> None:
    out = price_drops(listings, min_drop_pct=0.5)
    assert out.empty and list(out.columns) == list(PRICE_DROP_COLUMNS)
    empty_changes = pd.DataFrame(
        columns=["ListingId", "ChangeType", "ChangeTimestamp", "PreviousListPrice", "ListPrice"]
    )
    # empty changes (a history never synced): the listing fields, said so
    with pytest.warns(DataQualityWarning, match="`history` is empty.*listing fields"):
        fallback = price_drops(listings, empty_changes)
    pd.testing.assert_frame_equal(fallback, price_drops(listings))
    assert fallback.attrs["source"] == "listing fields"


def test_the_source_of_the_cuts_is_recorded(listings: pd.DataFrame) -> None:
    assert price_drops(listings).attrs["source"] == "listing fields"
    changes = pd.DataFrame(
        {"ListingId": ["P1"], "ChangeType": ["price_change"],
         "ChangeTimestamp": [pd.Timestamp("2024-06-01", tz="UTC")],
         "PreviousListPrice": [110.0], "ListPrice": [100.0]}
    )  # fmt: skip
    out = price_drops(listings, changes)
    assert out.attrs["source"] == "changes" and list(out["ListingId"]) == ["P1"]
    assert out["DaysOnMarket"].dtype == "Int64"  # as the loaders type it


def test_summary_from_listings(listings: pd.DataFrame) -> None:
    out = price_drop_summary(listings, by="City")
    assert list(out.columns) == list(PRICE_DROP_SUMMARY_COLUMNS)
    # sale segment only (P6 is a lease). Alpha: cuts P1 (10%, 10k), P2 (10%, 20k);
    # active P1, P7 -> 1 of 2 with a cut. Beta: cut P3 (5%, 50k); active P3, P4, P5 -> 1 of 3.
    a, b = out.loc["Alpha"], out.loc["Beta"]
    assert (a["price_drops"], a["active_listings"], a["active_with_price_drop"]) == (2, 2, 1)
    assert a["pct_active_with_price_drop"] == pytest.approx(1 / 2)
    assert a["median_drop_pct"] == pytest.approx(0.10)
    assert a["median_drop_amount"] == 15_000  # median(10k, 20k)
    assert (b["price_drops"], b["active_listings"]) == (1, 3)
    assert b["pct_active_with_price_drop"] == pytest.approx(1 / 3)
    rent = price_drop_summary(listings, segment="rent")
    assert rent.loc["Alpha", "median_drop_amount"] == 300


def test_summary_from_drops_with_and_without_listings(listings: pd.DataFrame) -> None:
    drops = price_drops(listings)
    with_base = price_drop_summary(drops, listings=listings)
    pd.testing.assert_frame_equal(with_base, price_drop_summary(listings))
    alone = price_drop_summary(drops)
    assert list(alone["price_drops"]) == [2, 1]
    assert alone["active_listings"].isna().all()  # unknown without the listings
    assert alone["pct_active_with_price_drop"].isna().all()
    both = price_drop_summary(drops, listings=listings, segment="both")
    assert both.index.names == ["segment", "City"]
    assert both.loc[("rent", "Alpha"), "price_drops"] == 1


def test_errors_name_the_problem(listings: pd.DataFrame) -> None:
    with pytest.raises(MissingColumnsError, match="'PreviousListPrice'"):
        price_drops(listings.drop(columns="PreviousListPrice"))
    with pytest.raises(
        MissingColumnsError,
        match="`history` lacks required columns 'ChangeType', 'ChangeTimestamp'",
    ):
        price_drops(listings, pd.DataFrame({"ListingId": ["P1"]}))
    with pytest.raises(AnalysisInputError, match=r"`min_drop_pct` must be a number in \[0, 1\)"):
        price_drops(listings, min_drop_pct=5)
    with pytest.raises(AnalysisInputError, match="one row per ListingId; duplicated: 'P1'"):
        price_drops(pd.concat([listings, listings.iloc[:1]]))
    with pytest.raises(AnalysisInputError, match="`since`"):
        price_drops(listings, since="not a date")
    with pytest.raises(TypeError, match="`listings` must be a pandas or Polars DataFrame"):
        price_drops([1, 2])  # type: ignore[arg-type]


def test_nan_prices_are_not_cuts() -> None:
    df = pd.DataFrame(
        {"ListingId": ["x", "y"], "ListPrice": [NaN, 100.0], "PreviousListPrice": [200.0, NaN]}
    )
    assert price_drops(df).empty
