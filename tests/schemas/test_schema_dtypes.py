"""Shaped frames have the dtypes a pandas 3 user expects and round-trip through Parquet unchanged."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import realtyframes.schemas as rs

STR = pd.StringDtype(na_value=np.nan)
UTC_US = pd.DatetimeTZDtype("us", "UTC")


def roundtrip(frame: pd.DataFrame) -> pd.DataFrame:
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pandas(frame), buf)
    return pq.read_table(io.BytesIO(buf.getvalue())).to_pandas()


def assert_roundtrips(frame: pd.DataFrame) -> None:
    back = roundtrip(frame)
    pd.testing.assert_frame_equal(back, frame, check_dtype=True, check_categorical=True)
    assert back.equals(frame)


ANALYTICS = {
    "period": "7d",
    "overview": {
        "visitors": 1200,
        "pageviews": 5400,
        "sessions": 1500,
        "conversions": 36,
        "conversion_rate": 0.024,
        "bounce_rate": 0.41,
        "avg_session_seconds": 143.5,
    },
    "timelines": {
        "visitors": [{"date": "2025-05-26", "value": 160}, {"date": "2025-05-27", "value": 171}],
        "conversion_rate": [{"date": "2025-05-26", "value": 0.02}],
    },
    "pages": [{"name": "/", "visitors": 900, "pageviews": 1500, "conversions": 10}],
    "referrers": [{"name": "Direct", "visitors": 500, "pageviews": 2000, "conversions": 20}],
    "countries": [
        {"name": "United States", "visitors": 1000, "pageviews": 4600, "conversions": 30}
    ],
    "browsers": [{"name": "Chrome", "visitors": 700, "pageviews": 3000, "conversions": 22}],
    "os": [{"name": "iOS", "visitors": 400, "pageviews": 1800, "conversions": 9}],
    "devices": [{"name": "mobile", "visitors": 650, "pageviews": 2500, "conversions": 15}],
    "utm": {
        "source": [{"name": "google", "visitors": 300, "pageviews": 900, "conversions": 8}],
        "medium": [{"name": "cpc", "visitors": 200, "pageviews": 700, "conversions": 6}],
        "campaign": [
            {"name": "spring_open_house", "visitors": 80, "pageviews": 240, "conversions": 3}
        ],
    },
}


def test_listing_summary_dtypes(rec):
    listings, media = rs.listings_from_pages(rec.pages_of([rec.listing(i) for i in range(120)]))
    assert len(listings) == 120 and listings["ListingId"].is_unique
    d = listings.dtypes
    assert list(listings.columns[: len(rs.SUMMARY_FIELDS)]) == list(rs.SUMMARY_FIELDS)
    for col in ("ListingId", "City", "PostalCode", "UnparsedAddress", "PublicRemarks"):
        assert d[col] == STR, col
    for col in ("ListPrice", "PreviousListPrice", "ClosePrice", "LivingArea", "Latitude"):
        assert d[col] == np.dtype("float64"), col
    for col in ("BedroomsTotal", "BathroomsTotalInteger", "YearBuilt", "DaysOnMarket"):
        assert d[col] == pd.Int64Dtype(), col
    for col in ("WaterfrontYN", "PoolPrivateYN", "SeniorCommunityYN"):
        assert d[col] == pd.BooleanDtype(), col
    for col in (
        "OriginalEntryTimestamp",
        "ModificationTimestamp",
        "MajorChangeTimestamp",
        "CloseDate",
    ):
        assert d[col] == UTC_US, col
    assert listings["StandardStatus"].cat.categories.tolist() == list(rs.STANDARD_STATUSES)
    assert listings["PropertyType"].cat.categories.tolist() == list(rs.PROPERTY_TYPES)
    assert "coordinates" not in listings and "Media" not in listings
    first = rec.listing(0)
    row = listings.iloc[0]
    assert row["Latitude"] == pytest.approx(first["coordinates"]["lat"])
    assert row["Longitude"] == pytest.approx(first["coordinates"]["lng"])
    assert row["ModificationTimestamp"] == pd.Timestamp(first["ModificationTimestamp"])
    assert list(media.columns) == ["ListingId", "Order", "MediaURL", "ShortDescription"]
    assert [str(t) for t in media.dtypes] == ["str", "Int64", "str", "str"]
    assert len(media) == sum(len(rec.listing(i)["Media"]) for i in range(120))
    mine = media[media["ListingId"] == first["ListingId"]]
    assert mine["MediaURL"].tolist() == [m["MediaURL"] for m in first["Media"]]
    assert_roundtrips(listings)
    assert_roundtrips(media)


def test_listing_detail_dtypes_and_roundtrip(rec):
    records = [rec.listing(i, detail=True) for i in range(40)]
    listings, media = rs.listings_from_pages(rec.pages_of(records), detail=True)
    assert set(rs.DETAIL_FIELDS) <= set(listings.columns)
    d = listings.dtypes
    for col in ("TaxYear", "GarageSpaces", "CoveredSpaces", "Stories"):
        assert d[col] == pd.Int64Dtype(), col
    assert d["TaxAnnualAmount"] == np.dtype("float64")
    assert d["WaterfrontFeatures"] == np.dtype(object)
    with_water = listings.loc[listings["WaterfrontYN"].fillna(False), "WaterfrontFeatures"].iloc[0]
    assert [f["name"] for f in with_water] == ["Canal Front", "Seawall"]
    assert d["Sewer"] == STR and listings["Sewer"].isna().all()  # absent detail field: typed null
    assert_roundtrips(listings)
    assert_roundtrips(media)


def test_detail_bodies_one_listing_each(rec):
    bodies = [json.dumps(rec.listing(i, detail=True)).encode() for i in range(5)]
    listings, media = rs.listings_from_records(bodies)
    assert listings["ListingId"].tolist() == [rec.listing(i)["ListingId"] for i in range(5)]
    assert listings["TaxYear"].tolist() == [2024] * 5
    assert len(media) == sum(len(rec.listing(i)["Media"]) for i in range(5))


def test_detail_bodies_in_batches_equal_one_call(rec):
    """Batches parsed one after the other give one call's frames: a listing repeated across
    batches keeps its last body, no batch at all gives the typed empty frames."""
    bodies = [json.dumps(rec.listing(i, detail=True)).encode() for i in range(9)]
    bodies.append(bodies[2])  # the same listing again, in the last batch
    whole = rs.listings_from_records(bodies)
    batched = rs.listings_from_record_batches(bodies[i : i + 4] for i in range(0, 10, 4))
    for got, want in zip(batched, whole, strict=True):
        pd.testing.assert_frame_equal(got, want)
    assert len(whole[0]) == 9
    empty = rs.listings_from_record_batches(iter([]))
    for got, want in zip(empty, rs.listings_from_records([]), strict=True):
        pd.testing.assert_frame_equal(got, want)
        assert got.empty


def test_categories_are_the_full_list_and_frames_concatenate(rec):
    active = [r for r in (rec.listing(i) for i in range(60)) if r["StandardStatus"] == "Active"]
    closed = [r for r in (rec.listing(i) for i in range(60)) if r["StandardStatus"] == "Closed"]
    a, _ = rs.listings_from_pages(rec.pages_of(active))
    c, _ = rs.listings_from_pages(rec.pages_of(closed))
    both = pd.concat([a, c], ignore_index=True)
    assert isinstance(both["StandardStatus"].dtype, pd.CategoricalDtype)
    assert both["StandardStatus"].cat.categories.tolist() == list(rs.STANDARD_STATUSES)
    back = roundtrip(a)  # only Active present, yet every category survives Parquet
    assert back["StandardStatus"].cat.categories.tolist() == list(rs.STANDARD_STATUSES)


def test_pretty_printed_and_compact_pages_give_the_same_frame(rec):
    records = [rec.listing(i) for i in range(30)]
    body = {"total": 30, "offset": 0, "limit": 50, "listings": records}
    compact = rs.listings_from_pages([json.dumps(body, separators=(",", ":")).encode()])
    pretty = rs.listings_from_pages([json.dumps(body, indent=2).encode() + b"\r\n"])
    pd.testing.assert_frame_equal(pretty[0], compact[0])
    pd.testing.assert_frame_equal(pretty[1], compact[1])


def test_empty_input_gives_typed_empty_frames():
    listings, media = rs.listings_from_pages([])
    assert len(listings) == 0 and list(listings.columns) == list(rs.SUMMARY_FIELDS)
    assert listings.dtypes["ListPrice"] == np.dtype("float64")
    assert listings.dtypes["StandardStatus"] == rs.target_dtypes(rs.Listing)["StandardStatus"]
    assert list(media.columns) == ["ListingId", "Order", "MediaURL", "ShortDescription"]
    page = b'{"total":0,"offset":0,"limit":50,"listings":[]}'
    listings, media = rs.listings_from_pages([page])
    assert len(listings) == 0 and listings.dtypes["BedroomsTotal"] == pd.Int64Dtype()
    valid, quarantined = rs.validate(listings, rs.Listing)
    assert len(valid) == len(quarantined) == 0


def test_changes_dtypes_and_roundtrip(rec):
    records = [rec.change(i, "price_change" if i % 3 else "status_change") for i in range(90)]
    changes = rs.changes_from_pages(rec.pages_of(records, key="changes"))
    assert len(changes) == 90
    assert list(changes.columns) == list(rs.target_dtypes(rs.ListingChange))
    assert changes["ChangeType"].cat.categories.tolist() == list(rs.CHANGE_TYPES)
    assert changes["PreviousStatus"].cat.categories.tolist() == list(rs.STANDARD_STATUSES)
    assert changes.dtypes["ChangeTimestamp"] == UTC_US
    assert changes.dtypes["ListPrice"] == np.dtype("float64")
    valid, quarantined = rs.validate(changes, rs.ListingChange)
    assert len(valid) == 90 and len(quarantined) == 0
    assert_roundtrips(changes)


def test_contacts_flattened_lists_and_legacy_array(rec):
    records = [rec.contact(i) for i in range(75)]
    contacts = rs.contacts_from_pages(rec.pages_of(records, key="contacts"))
    assert len(contacts) == 75
    links = [f"links_{m}" for m in rs.LINK_MEMBERS]
    assert links == [c for c in contacts.columns if c.startswith("links_")]
    assert contacts.loc[0, "links_facebook"] == records[0]["links"]["facebook"]
    assert contacts.dtypes["registration_date"] == UTC_US
    assert contacts.loc[3, "registration_date"] == pd.Timestamp(
        records[3]["registration"]["date"], tz="UTC"
    )
    assert list(contacts.loc[1, "spokenLanguages"]) == ["English", "Spanish"]
    assert contacts.explode("spokenLanguages")["spokenLanguages"].value_counts()["English"] == 75
    assert contacts.dtypes["createdAt"] == UTC_US and contacts.dtypes["email"] == STR
    legacy = rs.contacts_from_pages([json.dumps(records).encode()])
    pd.testing.assert_frame_equal(legacy, contacts)
    single = rs.contacts_from_pages([b"[" + json.dumps(records[4]).encode() + b"]"])
    assert single["id"].tolist() == [records[4]["id"]]
    valid, quarantined = rs.validate(contacts, rs.Contact)
    assert len(valid) == 75 and len(quarantined) == 0
    assert_roundtrips(contacts)


def test_activity_long_frame_keeps_type_specific_members(rec):
    body = {
        "contactId": "c0001",
        "activity": [
            {"id": "a3", "type": "call", "timestamp": "2025-05-03T15:00:00Z", "description": "Outbound call",
             "direction": "outbound", "durationSeconds": 240},
            {"id": "a2", "type": "listing_view", "timestamp": "2025-05-02T10:00:00Z",
             "description": "Viewed listing", "address": "1 Ocean Dr", "listPrice": 650000},
            {"id": "a1", "type": "page_view", "timestamp": "2025-05-01T09:00:00Z", "description": "Viewed /",
             "path": "/"},
        ],
    }  # fmt: skip
    activity = rs.activity_from_json(json.dumps(body).encode())
    assert list(activity.columns[:5]) == ["contactId", "id", "type", "timestamp", "description"]
    assert activity["contactId"].tolist() == ["c0001"] * 3
    assert activity.dtypes["timestamp"] == UTC_US
    assert {"direction", "durationSeconds", "address", "listPrice", "path"} <= set(activity.columns)
    assert activity.loc[0, "durationSeconds"] == 240
    valid, quarantined = rs.validate(activity, rs.ContactActivity)
    assert len(valid) == 3 and len(quarantined) == 0
    assert_roundtrips(activity)
    empty = rs.activity_from_json({"contactId": "c9", "activity": []})
    assert len(empty) == 0 and empty.dtypes["timestamp"] == UTC_US


def test_analytics_frames():
    a = rs.analytics_from_json(json.dumps(ANALYTICS).encode())
    assert a.period == "7d"
    assert len(a.overview) == 1 and a.overview.loc[0, "visitors"] == 1200
    assert a.overview.dtypes["visitors"] == pd.Int64Dtype()
    assert a.overview.dtypes["bounce_rate"] == np.dtype("float64")
    t = a.timelines
    assert list(t.columns) == ["date", "metric", "value"] and len(t) == 3
    assert t.dtypes["date"] == UTC_US and t.dtypes["value"] == np.dtype("float64")
    assert t["metric"].cat.categories.tolist()[:7] == list(rs.OVERVIEW_METRICS)
    assert t.loc[t["metric"] == "visitors", "value"].tolist() == [160.0, 171.0]
    for name in rs.BREAKDOWNS:
        frame = getattr(a, name)
        assert list(frame.columns) == ["name", "visitors", "pageviews", "conversions"], name
        assert frame.dtypes["visitors"] == pd.Int64Dtype()
    assert a.utm["dimension"].tolist() == ["source", "medium", "campaign"]
    assert a.utm["dimension"].cat.categories.tolist() == list(rs.UTM_DIMENSIONS)
    for name, frame in a.frames().items():
        valid, quarantined = rs.validate(frame, rs.ANALYTICS_MODELS[name])
        assert len(valid) == len(frame) and len(quarantined) == 0, name
        assert_roundtrips(frame)


def test_analytics_added_metric_is_kept_as_a_category():
    body = dict(ANALYTICS, timelines={"leads": [{"date": "2025-05-26", "value": 4}]})
    a = rs.analytics_from_json(body)
    assert a.timelines["metric"].tolist() == ["leads"]
    assert a.timelines["metric"].cat.categories.tolist() == [*rs.OVERVIEW_METRICS, "leads"]
    valid, quarantined = rs.validate(a.timelines, rs.AnalyticsTimeline)
    assert len(valid) == 1 and len(quarantined) == 0


def test_empty_frame_has_the_model_dtypes():
    empty = rs.empty_frame(rs.Contact)
    assert list(empty.columns) == list(rs.target_dtypes(rs.Contact))
    assert empty.dtypes["createdAt"] == UTC_US and empty.dtypes["phones"] == np.dtype(object)
    full = rs.empty_frame(rs.Listing, optional=True)
    assert set(rs.DETAIL_FIELDS) <= set(full.columns)
    # Parquet keeps no dictionary for a table without rows: only the categories are lost (the
    # cache restores them from its metadata, see tests/cache).
    back = roundtrip(rs.empty_frame(rs.Listing))
    assert back.dtypes.drop(["StandardStatus", "PropertyType"]).equals(
        rs.empty_frame(rs.Listing).dtypes.drop(["StandardStatus", "PropertyType"])
    )


def test_shape_pages_reports_each_page(rec):
    records = [rec.listing(i) for i in range(120)]
    pages = rec.pages_of(records)  # 50, 50, 20
    pages.append(rec.page(records[:3], total=120, offset=120))  # drift: 3 seen again
    pages.append(b"   ")  # an empty body is skipped
    shaped = rs.shape_pages(pages, "listings")
    assert shaped.pages["records"].tolist() == [50, 50, 20, 3]
    assert shaped.pages["offset"].tolist() == [0, 50, 100, 120]
    assert shaped.pages["total"].tolist() == [120] * 4
    assert shaped.merged == 3 and len(shaped.frame) == 120
    assert shaped.pages["records"].sum() - shaped.merged == len(shaped.frame)
    legacy = rs.shape_pages([json.dumps([rec.contact(1), rec.contact(2)]).encode()], "contacts")
    assert legacy.pages["records"].tolist() == [2] and legacy.pages["total"].isna().all()
    assert legacy.media is None
    with pytest.raises(
        ValueError, match="resource: unknown value 'houses'; allowed: listings, changes, contacts"
    ):
        rs.shape_pages([], "houses")


@pytest.mark.parametrize("dtype", ["str", object])
def test_latest_per_listing_finds_copies_in_arrow_and_object_ids(dtype):
    # Arrow-backed ids are counted in Arrow, others by pandas: the same answer (#33)
    stamps = pd.to_datetime(["2025-01-01", "2025-02-01", "2025-03-01", "2025-01-15"], utc=True)
    unique = pd.DataFrame({"ListingId": pd.array(["A1", None, "A2", "A3"], dtype=dtype)})
    unique["ModificationTimestamp"] = stamps
    kept, _ = rs.latest_per_listing(unique)
    assert kept is unique  # nothing to merge: the frame as it was
    copies = unique.assign(ListingId=pd.array(["A1", "A2", "A1", None], dtype=dtype))
    kept, _ = rs.latest_per_listing(copies)
    assert kept["ListingId"].tolist()[:2] == ["A2", "A1"] and kept["ListingId"].isna().iloc[2]
    assert kept["ModificationTimestamp"].tolist() == [stamps[1], stamps[2], stamps[3]]
