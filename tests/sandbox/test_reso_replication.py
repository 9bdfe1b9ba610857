"""Replicating the RESO face: an outside OData v4 client, and a ModificationTimestamp watermark
across a page boundary inside a block of records that share one timestamp."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
from odata import ODataService  # python-odata: an OData v4 client, not ours

from realtyframes.sandbox import RunningSandbox

Start = Callable[..., RunningSandbox]
SHARED = 1200
PAGE = 250
ORDER = "ModificationTimestamp,ListingKey"


def test_an_outside_odata_client_reads_metadata_and_pages_a_filtered_resource(
    start_sandbox: Start, http_client: httpx.Client
) -> None:
    sb = start_sandbox(listings=1500)
    service = ODataService(f"{sb.url}/reso/odata/", reflect_entities=True)
    assert {"Property", "Member", "Office", "OpenHouse", "Media"} <= set(service.entities)
    prop = service.entities["Property"]
    query = service.query(prop).filter(prop.StandardStatus == "Active")
    got = [row.ListingKey for row in query]  # the client follows @odata.nextLink (pages of 100)
    ours = []
    next_url: str | None = f"{sb.url}/reso/odata/Property?$filter=StandardStatus eq 'Active'"
    pages = 0
    while next_url:
        body = http_client.get(next_url).json()
        ours += [x["ListingKey"] for x in body["value"]]
        next_url = body.get("@odata.nextLink")
        pages += 1
    assert pages > 2 and len(got) == len(set(got)) == len(ours)
    assert sorted(got) == sorted(ours)
    member = service.entities["Member"]
    first = service.query(member).first()
    assert (
        first.MemberKey
        and first.MemberFullName == f"{first.MemberFirstName} {first.MemberLastName}"
    )


def _run(
    client: httpx.Client, sb: RunningSandbox, op: str, since: str | None, pages: int | None
) -> list[dict[str, Any]]:
    """One replication run from the watermark ``since``, stopped after ``pages`` pages."""
    params = {"$orderby": ORDER, "$select": "ListingKey,ModificationTimestamp"}
    if since is not None:
        params["$filter"] = f"ModificationTimestamp {op} {since}"
    rows: list[dict[str, Any]] = []
    next_url: str | None = f"{sb.url}/reso/odata/Property"
    first = True
    while next_url and (pages is None or pages > 0):
        r = client.get(
            next_url,
            params=params if first else None,
            headers={"Prefer": f"odata.maxpagesize={PAGE}"},
        )
        first = False
        rows += r.json()["value"]
        next_url = r.json().get("@odata.nextLink")
        pages = None if pages is None else pages - 1
    return rows


def test_ge_watermark_with_key_dedup_loses_none_across_a_page_boundary(
    start_sandbox: Start, http_client: httpx.Client
) -> None:
    sb = start_sandbox(listings=2000, reso_shared_timestamps=SHARED)
    everything = _run(http_client, sb, "ge", None, None)
    stamps = [x["ModificationTimestamp"] for x in everything]
    shared = max(set(stamps), key=stamps.count)
    assert stamps.count(shared) >= SHARED  # the block spans several pages of 250
    all_keys = {x["ListingKey"] for x in everything}
    # a first run stops inside the block: its last page ends on the shared timestamp
    start = stamps.index(shared)
    stop_pages = start // PAGE + 2
    partial = _run(http_client, sb, "ge", None, stop_pages)
    assert partial[-1]["ModificationTimestamp"] == shared
    watermark = partial[-1]["ModificationTimestamp"]
    for op, expect_loss in (("ge", False), ("gt", True)):
        seen: dict[str, dict[str, Any]] = {x["ListingKey"]: x for x in partial}
        resumed = _run(http_client, sb, op, watermark, None)
        duplicates = sum(1 for x in resumed if x["ListingKey"] in seen)
        seen.update({x["ListingKey"]: x for x in resumed})  # key de-duplication
        lost = all_keys - set(seen)
        if expect_loss:  # gt skips the rest of the block: the control case
            assert len(lost) > 0 and duplicates == 0
        else:
            assert lost == set() and duplicates > 0 and len(seen) == len(all_keys)


def test_an_incremental_pass_after_the_clock_moves_equals_a_fresh_load(
    start_sandbox: Start, http_client: httpx.Client
) -> None:
    sb = start_sandbox(listings=1500)
    replica = {x["ListingKey"]: x for x in _run(http_client, sb, "ge", None, None)}
    watermark = max(x["ModificationTimestamp"] for x in replica.values())
    moved = http_client.post(f"{sb.url}/_sandbox/clock", json={"advance_days": 30})
    assert moved.status_code == 200
    changed = _run(http_client, sb, "ge", watermark, None)
    assert changed and all(x["ModificationTimestamp"] >= watermark for x in changed)
    replica.update({x["ListingKey"]: x for x in changed})
    fresh = {x["ListingKey"]: x for x in _run(http_client, sb, "ge", None, None)}
    assert replica == fresh  # new listings, price and status changes: none missed
    assert len(fresh) > 1500
    key = changed[-1]["ListingKey"]  # the face follows the REST API's clock
    detail = http_client.get(f"{sb.url}/v1/listings/{key}").json()
    assert detail["ModificationTimestamp"] == fresh[key]["ModificationTimestamp"]


def test_top_zero_is_an_empty_page_without_next_link(
    start_sandbox: Start, http_client: httpx.Client
) -> None:
    for vendor in ("trestle", "generic"):
        sb = start_sandbox(listings=200, reso_vendor=vendor)
        body = http_client.get(f"{sb.url}/reso/odata/Property", params={"$top": "0"}).json()
        assert body["value"] == [] and "@odata.nextLink" not in body


def test_an_outside_odata_client_reads_the_enum_and_lookup_faces(
    start_sandbox: Start, http_client: httpx.Client
) -> None:
    """python-odata reflects the EnumTypes of ``reso_lookups="enum"`` and the ``Lookup`` entity
    set of ``"lookup"``, and every status it reads is a member or a served lookup value."""
    enum_face = start_sandbox(listings=400, reso_lookups="enum")
    service = ODataService(f"{enum_face.url}/reso/odata/", reflect_entities=True)
    statuses = {row.StandardStatus for row in service.query(service.entities["Property"])}
    members = {type(s).__name__ for s in statuses}
    assert members == {"StandardStatus"} and len(statuses) >= 3  # enum members, not text
    raw = http_client.get(f"{enum_face.url}/reso/odata/Property?$select=StandardStatus").json()
    assert {r["StandardStatus"] for r in raw["value"]} <= {s.name for s in statuses}

    lookup_face = start_sandbox(listings=400, reso_lookups="lookup")
    service = ODataService(f"{lookup_face.url}/reso/odata/", reflect_entities=True)
    lookup = service.entities["Lookup"]
    served = {
        row.LookupValue
        for row in service.query(lookup).filter(lookup.LookupName == "StandardStatus")
    }
    read = {row.StandardStatus for row in service.query(service.entities["Property"])}
    assert len(read) >= 3 and read <= served  # the MLS's own values, each one a served lookup
