"""The RESO face (OData v4 under /reso/odata) over the same market the REST API serves."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

import httpx
import pytest

from realtyframes.sandbox import RunningSandbox, start
from realtyframes.sandbox._spec import PROPERTY_TYPES, STATUSES

N_LISTINGS = 5000


@pytest.fixture(scope="module")
def reso(sandbox_as_of: datetime) -> Iterator[RunningSandbox]:
    """A generic-profile sandbox of 5,000 listings (visible at the clock)."""
    options = {"seed": 7, "listings": N_LISTINGS, "contacts": 10, "history_years": 1}
    with start(**options, as_of=sandbox_as_of) as running:
        yield running


def _odata(sandbox: RunningSandbox) -> str:
    return f"{sandbox.url}/reso/odata"


def _pages(
    client: httpx.Client, url: str, params: dict[str, str] | None = None, **headers: str
) -> list[dict[str, Any]]:
    """Every page of a query, following @odata.nextLink to the end."""
    pages = []
    next_url: str | None = url
    while next_url is not None:
        r = client.get(next_url, params=params if next_url == url else None, headers=headers)
        assert r.status_code == 200, r.text
        pages.append(r.json())
        next_url = r.json().get("@odata.nextLink")
    return pages


def _rest_ids(client: httpx.Client, base: str, **query: str) -> list[str]:
    ids, offset = [], 0
    while True:
        r = client.get(
            f"{base}/v1/listings", params={**query, "Limit": "50", "Offset": str(offset)}
        )
        assert r.status_code == 200, r.text
        body = r.json()
        ids += [x["ListingId"] for x in body["listings"]]
        offset += 50
        if offset >= body["total"]:
            return ids


def test_paging_with_nextlink_reaches_every_listing_exactly_once(
    reso: RunningSandbox, http_client: httpx.Client
) -> None:
    pages = _pages(
        http_client,
        f"{_odata(reso)}/Property",
        {"$select": "ListingKey", "$count": "true"},
        Prefer="odata.maxpagesize=700",
    )
    keys = [rec["ListingKey"] for page in pages for rec in page["value"]]
    rest = {
        lid
        for ptype in PROPERTY_TYPES
        for status in STATUSES
        for lid in _rest_ids(http_client, reso.url, PropertyType=ptype, Status=status)
    }
    assert len(keys) >= N_LISTINGS
    assert len(keys) - len(set(keys)) == 0  # 0 duplicated
    assert set(keys) == rest  # 0 missing, 0 extra: the REST API's listings at the same clock
    assert pages[0]["@odata.count"] == len(keys)
    assert all(len(p["value"]) == 700 for p in pages[:-1])


def test_filter_equals_the_rest_search_for_the_same_question(
    reso: RunningSandbox, http_client: httpx.Client
) -> None:
    flt = (
        "City eq 'Miami' and StandardStatus eq 'Active' and PropertyType eq 'Residential'"
        " and ListPrice ge 500000"
    )
    pages = _pages(http_client, f"{_odata(reso)}/Property", {"$filter": flt})
    odata = [rec for page in pages for rec in page["value"]]
    rest = _rest_ids(http_client, reso.url, City="Miami", Status="Active", MinListPrice="500000")
    assert len(rest) > 20
    assert sorted(r["ListingId"] for r in odata) == sorted(rest)
    detail = http_client.get(f"{reso.url}/v1/listings/{rest[0]}").json()
    record = next(r for r in odata if r["ListingKey"] == rest[0])
    for name in ("ListPrice", "City", "BedroomsTotal", "ModificationTimestamp", "ListAgentMlsId"):
        assert record[name] == detail[name]
    assert (record["Latitude"], record["Longitude"]) == (
        detail["coordinates"]["lat"],
        detail["coordinates"]["lng"],
    )


def test_select_orderby_count_and_top(reso: RunningSandbox, http_client: httpx.Client) -> None:
    r = http_client.get(
        f"{_odata(reso)}/Property",
        params={
            "$filter": "City in ('Miami','Doral') and ListPrice ne null",
            "$orderby": "ListPrice desc,ListingKey",
            "$select": "ListingKey,ListPrice,City",
            "$top": "40",
            "$count": "true",
        },
    )
    body = r.json()
    assert r.headers["OData-Version"] == "4.0"
    assert body["@odata.context"].endswith("$metadata#Property(ListingKey,ListPrice,City)")
    rows = body["value"]
    assert len(rows) == 40 and all(set(x) == {"ListingKey", "ListPrice", "City"} for x in rows)
    assert {x["City"] for x in rows} <= {"Miami", "Doral"}
    assert [(-x["ListPrice"], x["ListingKey"]) for x in rows] == sorted(
        (-x["ListPrice"], x["ListingKey"]) for x in rows
    )
    everything = [
        x
        for p in _pages(
            http_client,
            f"{_odata(reso)}/Property",
            {
                "$filter": "City in ('Miami','Doral') and ListPrice ne null",
                "$select": "ListingKey,ListPrice",
            },
        )
        for x in p["value"]
    ]
    assert body["@odata.count"] == len(everything)
    best = sorted(everything, key=lambda x: (-x["ListPrice"], x["ListingKey"]))[:40]
    assert [x["ListingKey"] for x in rows] == [x["ListingKey"] for x in best]


def test_datetimeoffset_filter_and_orderby(reso: RunningSandbox, http_client: httpx.Client) -> None:
    since = "2026-06-01T00:00:00Z"
    pages = _pages(
        http_client,
        f"{_odata(reso)}/Property",
        {
            "$filter": f"ModificationTimestamp ge {since}",
            "$orderby": "ModificationTimestamp,ListingKey",
            "$select": "ListingKey,ModificationTimestamp",
        },
        Prefer="odata.maxpagesize=1000",
    )
    rows = [x for p in pages for x in p["value"]]
    assert rows and all(x["ModificationTimestamp"] >= since for x in rows)
    stamps = [(x["ModificationTimestamp"], x["ListingKey"]) for x in rows]
    assert stamps == sorted(stamps)
    everything = _pages(
        http_client,
        f"{_odata(reso)}/Property",
        {"$select": "ListingKey,ModificationTimestamp"},
        Prefer="odata.maxpagesize=1000",
    )
    expected = {
        x["ListingKey"]
        for p in everything
        for x in p["value"]
        if x["ModificationTimestamp"] >= since
    }
    assert {x["ListingKey"] for x in rows} == expected


def test_expand_media_is_the_rest_detail_media(
    reso: RunningSandbox, http_client: httpx.Client
) -> None:
    body = http_client.get(
        f"{_odata(reso)}/Property", params={"$top": "3", "$expand": "Media", "$skip": "100"}
    ).json()
    assert len(body["value"]) == 3
    for rec in body["value"]:
        detail = http_client.get(f"{reso.url}/v1/listings/{rec['ListingKey']}").json()
        assert [(m["Order"], m["MediaURL"], m["ShortDescription"]) for m in rec["Media"]] == [
            (m["Order"], m["MediaURL"], m["ShortDescription"]) for m in detail["Media"]
        ]
        key = rec["ListingKey"]
        media = http_client.get(
            f"{_odata(reso)}/Media", params={"$filter": f"ResourceRecordKey eq '{key}'"}
        ).json()["value"]
        assert media == rec["Media"]


def test_members_offices_open_houses_are_consistent_with_the_listings(
    reso: RunningSandbox, http_client: httpx.Client
) -> None:
    base = _odata(reso)
    members = {m["MemberKey"]: m for p in _pages(http_client, f"{base}/Member") for m in p["value"]}
    offices = {o["OfficeKey"] for p in _pages(http_client, f"{base}/Office") for o in p["value"]}
    props = [
        x
        for p in _pages(http_client, f"{base}/Property", Prefer="odata.maxpagesize=1000")
        for x in p["value"]
    ]
    closed = [x for x in props if x["StandardStatus"] == "Closed"]
    assert closed and all(x["BuyerAgentKey"] in members for x in closed)
    assert all(x["BuyerOfficeKey"] == members[x["BuyerAgentKey"]]["OfficeKey"] for x in closed)
    assert all(x["BuyerAgentKey"] is None for x in props if x["StandardStatus"] != "Closed")
    assert all(x["ListAgentKey"] in members and x["ListOfficeKey"] in offices for x in props)
    assert {m["OfficeKey"] for m in members.values()} <= offices
    houses = [h for p in _pages(http_client, f"{base}/OpenHouse") for h in p["value"]]
    keys = {x["ListingKey"] for x in props}
    assert houses and all(h["ListingKey"] in keys for h in houses)
    assert all(h["OpenHouseStartTime"] > h["ModificationTimestamp"] for h in houses)
    one = http_client.get(f"{base}/Member('{closed[0]['BuyerAgentKey']}')").json()
    assert one["MemberKey"] == closed[0]["BuyerAgentKey"]


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"$filter": "Citty eq 'Miami'"}, "'Citty'; did you mean City"),
        ({"$filter": "City eq 'Miami' and"}, "end of the expression"),
        ({"$filter": "City eq 'Miami' xor ListPrice gt 1"}, "'xor'"),
        ({"$filter": "ListPrice gt 'cheap'"}, "ListPrice is Edm.Decimal"),
        ({"$filter": "City eq 'Miami' )"}, "')'"),
        ({"$orderby": "Price desc"}, "$orderby: unknown field 'Price'"),
        ({"$select": "ListingKey,Nope"}, "$select: unknown field 'Nope'"),
        ({"$expand": "Photos"}, "$expand: unknown navigation property 'Photos'"),
        ({"$top": "-1"}, "$top: not a non-negative integer"),
        ({"$search": "pool"}, "$search: not supported"),
        ({"City": "Miami"}, "City: not a query option"),
    ],
)
def test_bad_options_are_odata_errors_naming_the_token(
    reso: RunningSandbox, http_client: httpx.Client, params: dict[str, str], named: str
) -> None:
    r = http_client.get(f"{_odata(reso)}/Property", params=params)
    assert r.status_code == 400
    error = r.json()["error"]
    assert set(error) == {"code", "message"} and named in error["message"]


def test_unknown_entity_set_and_key_are_404s(
    reso: RunningSandbox, http_client: httpx.Client
) -> None:
    r = http_client.get(f"{_odata(reso)}/Listings")
    assert r.status_code == 404 and "Property, Member" in r.json()["error"]["message"]
    r = http_client.get(f"{_odata(reso)}/Property('nope')")
    assert r.status_code == 404 and "nope" in r.json()["error"]["message"]


def test_metadata_and_service_document(reso: RunningSandbox, http_client: httpx.Client) -> None:
    import xml.etree.ElementTree as ET

    r = http_client.get(f"{_odata(reso)}/$metadata")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/xml")
    root = ET.fromstring(r.text)
    edm = "{http://docs.oasis-open.org/odata/ns/edm}"
    schema = root.find(f".//{edm}Schema")
    assert schema is not None and schema.get("Namespace") == "org.reso.metadata"
    sets = [e.get("Name") for e in root.iter(f"{edm}EntitySet")]
    assert sets == ["Property", "Member", "Office", "OpenHouse", "Media", "HistoryTransactional"]
    prop = next(e for e in root.iter(f"{edm}EntityType") if e.get("Name") == "Property")
    names = {p.get("Name"): p.get("Type") for p in prop.iter(f"{edm}Property")}
    assert names["StandardStatus"] == "Edm.String" and names["CloseDate"] == "Edm.Date"
    assert names["ModificationTimestamp"] == "Edm.DateTimeOffset"
    first = http_client.get(f"{_odata(reso)}/Property", params={"$top": "1"}).json()["value"][0]
    assert set(first) == set(names)  # every field served is declared, and the reverse
    doc = http_client.get(_odata(reso)).json()
    assert [x["name"] for x in doc["value"]] == sets


def test_the_face_is_read_only(reso: RunningSandbox, http_client: httpx.Client) -> None:
    for method in ("POST", "PUT", "PATCH", "DELETE"):
        r = http_client.request(method, f"{_odata(reso)}/Property", json={})
        assert r.status_code == 405 and r.headers["Allow"] == "GET, HEAD"
        assert "read-only" in r.json()["error"]["message"]
    assert http_client.head(f"{_odata(reso)}/Property").status_code == 200
