"""Lookups resolved from the server's ``$metadata``: a face whose StandardStatus and
PropertyType are enum members (``ActiveUnderContract``) or the MLS's own values read through the
``Lookup`` resource (``Sold``, ``Single Family/Condo``) gives the same frames as the platform
source; a value the server's lookup cannot map is quarantined with the value in its reason; local
fields keep their names; an unknown filter field names the close matches from ``$metadata``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest

import realtyframes as rf
from realtyframes.reso import HISTORY_SOURCE, ServerMetadata, server_lookups
from realtyframes.reso import listing_objects as to_listings
from realtyframes.schemas import Listing, listings_from_pages, validate
from reso_clients import pair

SEARCHES: list[dict[str, Any]] = [
    {},
    {"Status": "Active Under Contract"},
    {"Status": "Closed", "City": "Miami Beach"},
    {"PropertyType": "Residential Lease", "Status": "Pending"},
    {"PropertyType": "Land/Boat Docks", "Status": "Closed"},
    {"Subtypes": ["Condominium", "1/2 Duplex"], "Status": "Closed"},
]
#: What the face's records carry for "Active Under Contract" / "Closed" in each mode.
CARRIED = {"enum": ("ActiveUnderContract", "Closed"), "lookup": ("Under Contract", "Sold")}


def _carried(url: str, status: str) -> int:
    """How many Property records carry ``status`` as the face sends it."""
    quoted = status.replace("'", "''")
    params = {"$filter": f"StandardStatus eq '{quoted}'", "$count": "true", "$top": "1"}
    answer = httpx.get(url + "/reso/odata/Property", params=params)
    answer.raise_for_status()
    return int(answer.json()["@odata.count"])


@pytest.mark.parametrize("mode", ["enum", "lookup"])
def test_a_face_with_other_lookup_values_gives_the_same_frames(
    start_sandbox: Any, tmp_path: Path, mode: str
) -> None:
    sb = start_sandbox(reso_lookups=mode)
    assert all(_carried(sb.url, value) > 0 for value in CARRIED[mode])  # the face's own values
    assert _carried(sb.url, "Active Under Contract") == 0
    platform, source = pair(sb.url, tmp_path)
    for filters in SEARCHES:
        expected = platform.listings(**filters)
        got = source.listings(**filters)
        assert len(expected) > 0, filters
        pd.testing.assert_frame_equal(got, expected)


def test_sync_and_history_through_the_lookup_resource_equal_the_platform_source(
    start_sandbox: Any, tmp_path: Path
) -> None:
    sb = start_sandbox(reso_lookups="lookup")
    platform, source = pair(sb.url, tmp_path)
    expected, got = platform.sync_listings(), source.sync_listings()
    assert len(expected) > 0
    pd.testing.assert_frame_equal(got, expected)
    history = source.listing_history()
    assert set(history[HISTORY_SOURCE]) == {"HistoryTransactional"}
    assert "Sold" not in set(history["StandardStatus"].dropna().astype(str))
    pd.testing.assert_frame_equal(history.drop(columns=HISTORY_SOURCE), platform.listing_history())


def test_a_local_field_keeps_its_name_and_filters_by_metadata(
    start_sandbox: Any, tmp_path: Path
) -> None:
    sb = start_sandbox(reso_lookups="lookup")
    platform, source = pair(sb.url, tmp_path)
    closed = source.listings(Status="Closed", reso_fields=True)
    assert list(closed.columns)[: len(platform.listings().columns)] == list(
        platform.listings().columns
    )
    assert set(closed["MRD_StatusLocal"]) == {"Sold"}  # the MLS's own value, under its name
    by_local = source.listings(Status="Closed", MRD_StatusLocal="Sold")
    assert sorted(by_local["ListingId"]) == sorted(closed["ListingId"])
    with pytest.raises(rf.QueryError, match="did you mean MRD_StatusLocal"):
        source.listings(MRD_StatusLokal="Sold")
    with pytest.raises(rf.QueryError, match="did you mean StandardStatus"):
        source.listings(filter="StandardStatuss eq 'Sold'")


def test_a_value_the_lookup_cannot_map_is_quarantined_with_the_value() -> None:
    meta = ServerMetadata(
        {"Property": {"StandardStatus": "Edm.String", "PropertyType": "Edm.String"}},
        lookup_names={"Property": {"StandardStatus": "ListingStatus"}},
    )
    rows = [
        {"LookupName": "ListingStatus", "LookupValue": "A", "StandardLookupValue": "Active"},
        {"LookupName": "ListingStatus", "LookupValue": "CS", "StandardLookupValue": "Coming Soon"},
    ]
    asked: list[list[str]] = []
    lookups = server_lookups(meta, lambda names: asked.append(names) or rows)
    assert asked == [["ListingStatus"]]
    assert lookups.decoding == {"StandardStatus": {"A": "Active"}}
    assert "Coming Soon" in lookups.unmapped["StandardStatus"]["CS"]
    base = {"PropertyType": "Residential", "ListPrice": 400_000,
            "OriginalEntryTimestamp": "2026-01-02T00:00:00Z",
            "ModificationTimestamp": "2026-01-03T00:00:00Z"}  # fmt: skip
    records = [
        {**base, "ListingId": "A1", "StandardStatus": "A"},
        {**base, "ListingId": "A2", "StandardStatus": "CS"},
        {**base, "ListingId": "A3", "StandardStatus": "Zzz"},
    ]
    lookups.decode("Property", records)
    body = json.dumps({"listings": to_listings(records)}).encode()
    with pytest.warns(rf.DataQualityWarning, match="2 of 3 rows quarantined: StandardStatus"):
        valid, bad = validate(listings_from_pages([body])[0], Listing)
    assert list(valid["ListingId"]) == ["A1"] and str(valid["StandardStatus"][0]) == "Active"
    reasons = dict(zip(bad["ListingId"], bad["_quarantine_reason"], strict=True))
    assert "StandardStatus='CS'" in reasons["A2"] and "StandardStatus='Zzz'" in reasons["A3"]


def test_a_filter_value_the_server_lookup_lacks_is_a_query_error() -> None:
    meta = ServerMetadata(
        {"Property": {"StandardStatus": "e.Status", "PropertyType": "Edm.String"}},
        {"e.Status": {"Active": "Active", "Closed": "Closed"}},
    )
    lookups = server_lookups(meta, lambda names: [])
    assert lookups.literal("StandardStatus", "Closed") == "e.Status'Closed'"
    with pytest.raises(rf.QueryError, match="no value for 'Pending'; allowed: Active, Closed"):
        lookups.literal("StandardStatus", "Pending")


def test_a_plan_on_a_lookup_server_counts_what_the_sync_sends(
    start_sandbox: Any, tmp_path: Path
) -> None:
    sb = start_sandbox(listings=1500, reso_lookups="lookup")
    _, source = pair(sb.url, tmp_path, page_size=100)
    plan = source.plan_sync()  # reads $metadata and the Lookup resource, sends the server's values

    def sent() -> int:
        tokens = httpx.get(sb.url + "/_sandbox/reso/usage").json()["tokens"]
        return sum(int(t["requests"]) for t in tokens.values())

    before = sent()
    market = source.sync_listings()
    assert len(market) > 100
    assert plan.requests == sent() - before > 1
