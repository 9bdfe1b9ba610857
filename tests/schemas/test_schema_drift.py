"""Schema drift: added fields kept, missing fields typed nulls, type changes reported + quarantined."""

from __future__ import annotations

import copy
import json
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import realtyframes.schemas as rs
from realtyframes.errors import BadResponseError

STR = pd.StringDtype(na_value=np.nan)


def test_added_fields_are_kept_with_inferred_dtypes(rec):
    records = [rec.listing(i) for i in range(80)]
    for i, r in enumerate(records):
        r["ListingKeyNumeric"] = 1000 + i
        r["VirtualTourURLBranded"] = f"https://tour.example/{i}"
        r["GreenBuilding"] = {"certified": i % 2 == 0, "score": 71.5}
    listings, _ = rs.listings_from_pages(rec.pages_of(records))
    added = ["ListingKeyNumeric", "VirtualTourURLBranded", "GreenBuilding"]
    assert list(listings.columns[-3:]) == added  # after the model's columns
    assert listings.dtypes["ListingKeyNumeric"] == pd.Int64Dtype()
    assert listings.dtypes["VirtualTourURLBranded"] == STR
    assert listings.loc[3, "GreenBuilding"] == {"certified": False, "score": 71.5}
    valid, quarantined = rs.validate(listings, rs.Listing)
    assert len(valid) == 80 and len(quarantined) == 0 and set(added) <= set(valid.columns)


def test_added_media_member_is_kept(rec):
    records = [rec.listing(i) for i in range(3)]
    for r in records:
        for m in r["Media"]:
            m["MediaKey"] = f"k{m['Order']}"
    _, media = rs.listings_from_pages(rec.pages_of(records))
    assert media.columns.tolist() == [
        "ListingId",
        "Order",
        "MediaURL",
        "ShortDescription",
        "MediaKey",
    ]


def test_missing_optional_fields_become_typed_null_columns(rec):
    records = [rec.listing(i) for i in range(10)]
    dropped = [
        "BuildingName",
        "coordinates",
        "CloseDate",
        "WaterfrontYN",
        "YearBuilt",
        "PropertyType",
    ]
    for r in records:
        for f in dropped:
            r.pop(f, None)
    listings, _ = rs.listings_from_pages(rec.pages_of(records))
    expected = rs.target_dtypes(rs.Listing)
    for col in [
        "BuildingName",
        "Latitude",
        "Longitude",
        "CloseDate",
        "WaterfrontYN",
        "YearBuilt",
        "PropertyType",
    ]:
        assert listings[col].isna().all(), col
        assert listings.dtypes[col] == expected[col], col
    valid, quarantined = rs.validate(listings, rs.Listing)
    assert len(valid) == 10 and len(quarantined) == 0


def test_missing_columns_of_a_hand_made_frame_are_added(rec):
    frame = pd.DataFrame({"ListingId": ["A1", "A2"], "ListPrice": [1.0, 2.0]})
    valid, quarantined = rs.validate(frame, rs.Listing)
    assert list(valid.columns[: len(rs.SUMMARY_FIELDS)]) == list(rs.SUMMARY_FIELDS)
    assert valid.dtypes["DaysOnMarket"] == pd.Int64Dtype() and len(quarantined) == 0


def type_change_case(rec, field: str, value: Any) -> tuple[pd.DataFrame, pd.DataFrame, list[Any]]:
    records = [rec.listing(i) for i in range(120)]
    records[61] = copy.deepcopy(records[61])
    records[61][field] = value
    listings, media = rs.listings_from_pages(rec.pages_of(records))
    assert len(listings) == 120 and len(media) == sum(len(r["Media"]) for r in records)
    with pytest.warns(rs.DataQualityWarning) as caught:
        valid, quarantined = rs.validate(listings, rs.Listing)
    return (
        valid,
        quarantined,
        [str(w.message) for w in caught if w.category is rs.SchemaDriftWarning],
    )


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("ListPrice", "450000", "a number"),
        ("BedroomsTotal", 2.5, "an integer"),
        ("PostalCode", 33139, "a string"),
        ("ModificationTimestamp", "last tuesday", "an ISO 8601 timestamp"),
        ("WaterfrontYN", "Y", "a boolean"),
        ("StandardStatus", 1, "a string"),
    ],
)
def test_type_change_is_reported_and_its_row_quarantined(rec, field, value, expected):
    valid, quarantined, drift = type_change_case(rec, field, value)
    assert len(drift) == 1 and f"column {field!r} changed type" in drift[0]
    assert f"not {expected}" in drift[0] and repr(value) in drift[0]
    assert quarantined.index.tolist() == [61]
    reason = quarantined[rs.QUARANTINE_REASON].iloc[0]
    assert (
        field in reason and f"type_changed(expected {expected})" in reason and repr(value) in reason
    )
    assert len(valid) == 119
    assert valid.dtypes[field] == rs.target_dtypes(rs.Listing)[field] or field == "StandardStatus"
    assert pd.isna(quarantined.loc[61, field])  # the cell cannot hold the value: the reason does


def test_type_change_in_a_nested_member(rec):
    _valid, quarantined, drift = type_change_case(rec, "coordinates", [-80.1, 25.7])
    assert {"Latitude", "Longitude"} <= {m.split("'")[1] for m in drift}
    assert quarantined.index.tolist() == [61]


def test_fast_path_rows_around_a_bad_page_keep_their_types(rec):
    valid, _, _ = type_change_case(rec, "ListPrice", "450000")
    assert valid.dtypes["ListPrice"] == np.dtype("float64")
    assert valid["StandardStatus"].cat.categories.tolist() == list(rs.STANDARD_STATUSES)
    assert valid["ListingId"].tolist() == [
        rec.listing(i)["ListingId"] for i in range(120) if i != 61
    ]


def test_records_that_are_not_objects_are_quarantined_not_dropped(rec):
    body = json.dumps({"total": 2, "listings": [rec.listing(0), "oops"]}).encode()
    listings, _ = rs.listings_from_pages([body])
    assert len(listings) == 2
    with pytest.warns(rs.DataQualityWarning):
        _valid, quarantined = rs.validate(listings, rs.Listing)
    assert (
        quarantined.index.tolist() == [1]
        and "ListingId: not_nullable" in quarantined.iloc[0][rs.QUARANTINE_REASON]
    )


def test_broken_json_is_a_clear_error(rec):
    good = rec.page([rec.listing(0)])
    with pytest.raises(BadResponseError, match="not valid JSON"):
        rs.listings_from_pages([good, good[:-20]])
    with pytest.raises(BadResponseError, match="not an object"):
        rs.analytics_from_json(b"[1, 2]")


# --- the invariant: valid + quarantined == fetched ------------------------------------------------

MUTATIONS: dict[str, Any] = {
    "none": None,
    "neg_price": ("ListPrice", -1.0),
    "str_price": ("ListPrice", "12"),
    "beds": ("BedroomsTotal", 77),
    "frac_beds": ("BedroomsTotal", 1.5),
    "zip": ("PostalCode", "1"),
    "zip_num": ("PostalCode", 33101),
    "status": ("StandardStatus", "Withdrawn"),
    "close": ("ClosePrice", 1.0),
    "stamp": ("ModificationTimestamp", "soon"),
    "year": ("YearBuilt", 1066),
    "lat": ("coordinates", {"lat": 123.0, "lng": 0.0}),
    "null_id": ("ListingId", None),
    "extra": ("Surprise", [1, 2, 3]),
}


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    plan=st.lists(
        st.tuples(st.integers(0, 40), st.sampled_from(sorted(MUTATIONS))), min_size=0, max_size=90
    ),
    page_size=st.integers(1, 50),
)
def test_valid_plus_quarantined_equals_fetched(rec, plan, page_size):
    records = []
    for n, (i, mutation) in enumerate(plan):
        r = rec.listing(i, media=(0, 2), remarks=False)
        r["ModificationTimestamp"] = rec.iso(rec.as_of) if n % 2 else r["ModificationTimestamp"]
        change = MUTATIONS[mutation]
        if change:
            r[change[0]] = change[1]
        records.append(r)
    listings, media = rs.listings_from_pages(rec.pages_of(records, size=page_size))
    distinct_ids = {r["ListingId"] for r in records if r["ListingId"] is not None}
    null_ids = sum(r["ListingId"] is None for r in records)
    assert len(listings) == len(distinct_ids) + null_ids  # duplicates merged, nothing dropped
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rs.DataQualityWarning)
        valid, quarantined = rs.validate(listings, rs.Listing)
        mvalid, mquarantined = rs.validate(media, rs.ListingMedia)
    assert len(valid) + len(quarantined) == len(listings)
    assert valid.index.union(quarantined.index).equals(listings.index)
    assert valid.index.intersection(quarantined.index).empty
    assert quarantined[rs.QUARANTINE_REASON].str.len().gt(0).all()
    assert len(mvalid) + len(mquarantined) == len(media)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "ListingId": st.one_of(
                    st.none(), st.sampled_from(["A1", "A2", "A3", ""]), st.integers()
                ),
                "ListPrice": st.one_of(
                    st.none(), st.floats(allow_nan=True), st.text(max_size=3), st.booleans()
                ),
                "BedroomsTotal": st.one_of(st.none(), st.integers(-5, 60), st.floats(0, 10)),
                "StandardStatus": st.one_of(
                    st.none(), st.sampled_from(["Active", "Closed", "Gone"]), st.integers()
                ),
                "CloseDate": st.one_of(
                    st.none(), st.sampled_from(["2025-01-01", "x", "2025-13-01"])
                ),
                "ClosePrice": st.one_of(st.none(), st.floats(-10, 10)),
            }
        ),
        max_size=25,
    )
)
def test_validate_never_loses_rows_of_arbitrary_frames(rows):
    frame = pd.DataFrame(
        rows,
        columns=[
            "ListingId",
            "ListPrice",
            "BedroomsTotal",
            "StandardStatus",
            "CloseDate",
            "ClosePrice",
        ],
    )
    frame = frame.astype(object)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rs.DataQualityWarning)
        valid, quarantined = rs.validate(frame, rs.Listing)
    assert len(valid) + len(quarantined) == len(frame)
    assert sorted(valid.index.tolist() + quarantined.index.tolist()) == list(range(len(frame)))
    for col, dtype in rs.target_dtypes(rs.Listing).items():
        if col in valid.columns and not isinstance(dtype, pd.CategoricalDtype):
            assert valid.dtypes[col] == dtype, col


# --- many Arrow chunks (big loads) behave like one ------------------------------------------------


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setenv("REALTYFRAMES_PARSE_CHUNK_BYTES", "30000")  # the public tuning setting


def test_chunked_parse_equals_one_parse(rec, monkeypatch):
    records = [rec.listing(i) for i in range(150)]
    for r in records[100:]:
        r["ListingKeyNumeric"] = 7  # an added field only in the later pages
    pages = rec.pages_of(records, size=10)
    whole = rs.listings_from_pages(pages)
    monkeypatch.setenv("REALTYFRAMES_PARSE_CHUNK_BYTES", "30000")
    assert sum(map(len, pages)) > 6 * 30_000  # more than five chunks of 30,000 bytes
    chunked = rs.listings_from_pages(pages)
    pd.testing.assert_frame_equal(chunked[0], whole[0])
    pd.testing.assert_frame_equal(chunked[1], whole[1])
    assert whole[0]["ListingKeyNumeric"].isna().sum() == 100


def test_added_field_with_varying_type_is_kept_as_text(rec, small_chunks):
    records = [rec.listing(i, media=(0, 1), remarks=False) for i in range(400)]
    for i, r in enumerate(records):
        r["HighSchool"] = 12 if i < 200 else "Miami Beach Senior High"
    with pytest.warns(
        rs.SchemaDriftWarning, match="added field 'HighSchool' arrives as number and str"
    ):
        listings, _ = rs.listings_from_pages(rec.pages_of(records))
    assert (
        listings["HighSchool"].iloc[0] == "12"
        and listings["HighSchool"].iloc[-1] == "Miami Beach Senior High"
    )
    assert listings.dtypes["HighSchool"] == STR
    assert listings.dtypes["ListPrice"] == np.dtype("float64")  # the model's columns are unaffected


def test_a_bad_page_among_many_chunks(rec, small_chunks):
    records = [rec.listing(i, media=(1, 3), remarks=False) for i in range(500)]
    records[321]["BedroomsTotal"] = "three"
    listings, media = rs.listings_from_pages(rec.pages_of(records))
    assert listings["ListingId"].tolist() == [r["ListingId"] for r in records]
    assert len(media) == sum(len(r["Media"]) for r in records)
    with pytest.warns(rs.DataQualityWarning):
        valid, quarantined = rs.validate(listings, rs.Listing)
    assert quarantined.index.tolist() == [321] and valid.dtypes["BedroomsTotal"] == pd.Int64Dtype()
