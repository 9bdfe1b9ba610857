"""Domain checks quarantine exactly the bad rows, with the failing check as the reason."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pandas as pd
import pandera.errors
import pytest

import realtyframes.schemas as rs
from realtyframes.errors import RealtyFramesError

NEXT_YEAR = datetime.now(UTC).year + 1


def shaped(rec, records: list[dict[str, Any]]) -> pd.DataFrame:
    listings, _ = rs.listings_from_pages(rec.pages_of(records))
    return listings


def closed_or_active(rec, status: str, start: int = 0) -> dict[str, Any]:
    for i in range(start, start + 200):
        r = rec.listing(i)
        if r["StandardStatus"] == status:
            return r
    raise AssertionError(status)


def _set(field: str, value: Any):
    def mutate(r: dict[str, Any]) -> None:
        r[field] = value

    return mutate


def _coords(lat: float, lng: float):
    def mutate(r: dict[str, Any]) -> None:
        r["coordinates"] = {"lat": lat, "lng": lng}

    return mutate


# (mutation, status the record must have, text the reason must contain)
CASES = {
    "negative ListPrice": (_set("ListPrice", -1.0), None, "ListPrice=-1.0: greater_than_or_equal_to(0)"),
    "negative AssociationFee": (_set("AssociationFee", -5.0), None, "AssociationFee=-5.0"),
    "ClosePrice on Active": (_set("ClosePrice", 400_000.0), "Active", "close_price_only_on_closed"),
    "CloseDate on Pending": (_set("CloseDate", "2025-05-01"), "Pending", "close_date_only_on_closed"),
    "51 bedrooms": (_set("BedroomsTotal", 51), None, "BedroomsTotal=51: less_than_or_equal_to(50)"),
    "negative bedrooms": (_set("BedroomsTotal", -1), None, "BedroomsTotal=-1"),
    "built in 1700": (_set("YearBuilt", 1700), None, "YearBuilt=1700: year_from_1800_to_next_year"),
    "built after next year": (_set("YearBuilt", NEXT_YEAR + 1), None, "year_from_1800_to_next_year"),
    "latitude 95": (_coords(95.0, -80.1), None, "Latitude=95.0: in_range(-90, 90)"),
    "longitude -200": (_coords(25.7, -200.0), None, "Longitude=-200.0: in_range(-180, 180)"),
    "4-digit zip": (_set("PostalCode", "3313"), None, "PostalCode='3313': str_matches"),
    "letters zip": (_set("PostalCode", "ABCDE"), None, "PostalCode='ABCDE'"),
    "state name": (_set("StateOrProvince", "Florida"), None, "StateOrProvince='Florida'"),
    "unknown status": (_set("StandardStatus", "Coming Soon"), None, "StandardStatus='Coming Soon': isin"),
    "unknown type": (_set("PropertyType", "Houseboat"), None, "PropertyType='Houseboat': isin"),
    "no ListingId": (_set("ListingId", None), None, "ListingId: not_nullable"),
    "empty ListingId": (_set("ListingId", ""), None, "ListingId='': str_length"),
    "negative DOM": (_set("DaysOnMarket", -3), None, "DaysOnMarket=-3"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_domain_check_quarantines_the_bad_row(rec, case):
    mutate, status, reason = CASES[case]
    records = [rec.listing(i) for i in range(30)]
    bad = copy.deepcopy(closed_or_active(rec, status, 100) if status else rec.listing(100))
    mutate(bad)
    records.insert(7, bad)
    frame = shaped(rec, records)
    with pytest.warns(rs.DataQualityWarning, match=r"1 of 31 rows quarantined"):
        valid, quarantined = rs.validate(frame, rs.Listing)
    assert len(valid) == 30 and len(quarantined) == 1
    assert quarantined.index.tolist() == [7]
    assert reason in quarantined[rs.QUARANTINE_REASON].iloc[0]
    assert list(quarantined.columns) == [*frame.columns, rs.QUARANTINE_REASON]
    assert valid["StandardStatus"].cat.categories.tolist() == list(rs.STANDARD_STATUSES)
    assert valid["PropertyType"].cat.categories.tolist() == list(rs.PROPERTY_TYPES)


def test_valid_edge_values_pass(rec):
    records = [rec.listing(i) for i in range(6)]
    records[0]["PostalCode"] = "33139-1234"
    records[1]["YearBuilt"] = 1800
    records[2]["YearBuilt"] = NEXT_YEAR
    records[3]["BedroomsTotal"] = 0  # a studio
    records[4]["coordinates"] = {"lat": -90.0, "lng": 180.0}
    closed = copy.deepcopy(closed_or_active(rec, "Closed", 100))
    records.append(closed)
    valid, quarantined = rs.validate(shaped(rec, records), rs.Listing)
    assert len(valid) == 7 and len(quarantined) == 0
    assert (valid["ClosePrice"].notna() <= (valid["StandardStatus"] == "Closed")).all()
    assert valid["ClosePrice"].notna().sum() >= 1


def test_several_failures_on_one_row_are_all_named(rec):
    bad = copy.deepcopy(closed_or_active(rec, "Active", 100))
    bad |= {"ListPrice": -10.0, "ClosePrice": 5.0, "BedroomsTotal": 99}
    with pytest.warns(rs.DataQualityWarning):
        _, quarantined = rs.validate(shaped(rec, [bad, rec.listing(1)]), rs.Listing)
    reason = quarantined[rs.QUARANTINE_REASON].iloc[0]
    for part in ("ListPrice=-10.0", "BedroomsTotal=99", "close_price_only_on_closed"):
        assert part in reason


def test_raise_carries_the_failure_cases(rec):
    records = [rec.listing(i) for i in range(5)]
    records[2]["ListPrice"] = -1.0
    frame = shaped(rec, records)
    with pytest.raises(rs.SchemaValidationError) as info:
        rs.validate(frame, rs.Listing, on_invalid="raise")
    err = info.value
    assert isinstance(err, RealtyFramesError) and isinstance(err, ValueError)
    assert "Listing: 1 of 5 rows invalid" in str(err)
    fc = err.failure_cases
    assert {"column", "check", "failure_case", "index"} <= set(fc.columns)
    row = fc[fc["column"] == "ListPrice"].iloc[0]
    assert row["index"] == 2 and row["failure_case"] == -1.0


def test_keep_returns_every_row_and_warns(rec):
    records = [rec.listing(i) for i in range(5)]
    records[2]["StandardStatus"] = "Coming Soon"
    frame = shaped(rec, records)
    with pytest.warns(rs.DataQualityWarning, match="kept"):
        kept, quarantined = rs.validate(frame, rs.Listing, on_invalid="keep")
    assert len(kept) == 5 and len(quarantined) == 0
    assert kept.loc[2, "StandardStatus"] == "Coming Soon"  # visible, not nulled
    valid, _ = rs.validate(shaped(rec, records[:2]), rs.Listing, on_invalid="raise")
    assert len(valid) == 2


def test_unknown_on_invalid_names_the_allowed_values(rec):
    with pytest.raises(
        ValueError, match="on_invalid: unknown value 'drop'; allowed: quarantine, raise, keep"
    ):
        rs.validate(shaped(rec, [rec.listing(0)]), rs.Listing, on_invalid="drop")  # type: ignore[arg-type]


def test_index_labels_are_kept(rec):
    frame = shaped(rec, [rec.listing(i) for i in range(4)])
    frame.index = ["a", "b", "c", "d"]
    frame.loc["c", "ListPrice"] = -1.0
    with pytest.warns(rs.DataQualityWarning):
        valid, quarantined = rs.validate(frame, rs.Listing)
    assert valid.index.tolist() == ["a", "b", "d"] and quarantined.index.tolist() == ["c"]


def test_duplicates_keep_the_newest_and_its_media(rec):
    old = rec.listing(5)
    new = copy.deepcopy(old)
    new["ListPrice"] = old["ListPrice"] - 10_000
    new["ModificationTimestamp"] = "2030-01-01T00:00:00Z"
    new["Media"] = [
        {"Order": 0, "MediaURL": "https://cdn.example/new.jpg", "ShortDescription": "New"}
    ]
    records = (
        [rec.listing(i) for i in range(5)] + [new] + [rec.listing(i) for i in range(6, 60)] + [old]
    )
    listings, media = rs.listings_from_pages(rec.pages_of(records))
    assert len(listings) == 60 and listings["ListingId"].is_unique
    row = listings[listings["ListingId"] == old["ListingId"]].iloc[0]
    assert row["ListPrice"] == new["ListPrice"]
    assert media.loc[media["ListingId"] == old["ListingId"], "MediaURL"].tolist() == [
        "https://cdn.example/new.jpg"
    ]
    _valid, quarantined = rs.validate(media, rs.ListingMedia)
    assert len(quarantined) == 0


def test_duplicates_that_bypass_shaping_are_quarantined(rec):
    frame = shaped(rec, [rec.listing(i) for i in range(3)])
    frame = pd.concat([frame, frame.iloc[[1]]], ignore_index=True)
    with pytest.warns(rs.DataQualityWarning):
        _valid, quarantined = rs.validate(frame, rs.Listing)
    assert quarantined.index.tolist() == [1, 3]
    assert all("field_uniqueness" in r for r in quarantined[rs.QUARANTINE_REASON])


def test_media_checks(rec):
    _, media = rs.listings_from_pages(rec.pages_of([rec.listing(i) for i in range(3)]))
    media = pd.concat([media, media.iloc[[0]]], ignore_index=True)
    media.loc[1, "Order"] = -1
    with pytest.warns(rs.DataQualityWarning):
        _, quarantined = rs.validate(media, rs.ListingMedia)
    assert 1 in quarantined.index and len(media) - 1 in quarantined.index
    reasons = " ".join(quarantined[rs.QUARANTINE_REASON])
    assert "Order=-1" in reasons and "multiple_fields_uniqueness" in reasons


def test_change_checks(rec):
    records = [rec.change(i) for i in range(4)] + [rec.change(9, "status_change")]
    records[1]["ListPrice"] = None  # a price change without its new price
    records[2]["ChangeType"] = "deleted"
    records[4]["StandardStatus"] = "Sold"
    changes = rs.changes_from_pages(rec.pages_of(records, key="changes"))
    with pytest.warns(rs.DataQualityWarning, match="3 of 5"):
        _valid, quarantined = rs.validate(changes, rs.ListingChange)
    assert quarantined.index.tolist() == [1, 2, 4]
    reasons = quarantined[rs.QUARANTINE_REASON].tolist()
    assert "price_change_has_new_price" in reasons[0]
    assert "ChangeType='deleted': isin" in reasons[1]
    assert "StandardStatus='Sold': isin" in reasons[2]


def test_contact_and_analytics_checks(rec):
    records = [rec.contact(i) for i in range(3)]
    records[1]["email"] = "not-an-address"
    contacts = rs.contacts_from_pages([rec.page(records, key="contacts")])
    with pytest.warns(rs.DataQualityWarning):
        _, quarantined = rs.validate(contacts, rs.Contact)
    assert quarantined.index.tolist() == [1]
    overview = rs.analytics_from_json({"overview": {"visitors": -1, "bounce_rate": 1.5}}).overview
    with pytest.warns(rs.DataQualityWarning):
        _, quarantined = rs.validate(overview, rs.AnalyticsOverview)
    reason = quarantined[rs.QUARANTINE_REASON].iloc[0]
    assert "visitors=-1" in reason and "bounce_rate=1.5" in reason


def test_value_checks_find_what_the_whole_schema_finds(rec):
    """A conformed frame is checked without pandera's dtype checks (#33: 2/3 of its time): the
    rows and checks it fails are those the model's whole schema fails, a duplicate id too."""
    value_cases = [c for c in sorted(CASES) if "unknown" not in c and "state" not in c]
    records = [rec.listing(i) for i in range(40)]
    for n, case in enumerate(value_cases):
        mutate, status, _ = CASES[case]
        start = 100 + 10 * n
        bad = copy.deepcopy(closed_or_active(rec, status, start) if status else rec.listing(start))
        mutate(bad)
        records.insert(2 * n, bad)
    listings = shaped(rec, records)
    listings = pd.concat([listings, listings.iloc[[1]]], ignore_index=True)  # an id seen twice
    frame, _ = rs.conform(listings, rs.Listing)
    assert all(frame[c].dtype == d for c, d in rs.target_dtypes(rs.Listing).items() if c in frame)
    with pytest.raises(pandera.errors.SchemaErrors) as whole:
        rs.Listing.to_schema().validate(frame, lazy=True)
    expected = set(whole.value.failure_cases["index"].dropna().astype(int))
    with pytest.warns(rs.DataQualityWarning):
        _, quarantined = rs.validate(frame, rs.Listing)
    assert set(quarantined.index) == expected and len(expected) >= len(value_cases) + 2
    checks = set(whole.value.failure_cases["check"].astype(str))
    reasons = "; ".join(quarantined[rs.QUARANTINE_REASON])
    assert all(check in reasons for check in checks)
