"""The RESO face keeps a query's ordered matches for its next pages (a server-side cursor, so a
page of 5,000 does not filter and sort the whole market again), and drops them when the market
moves: a query after a clock move answers from the new market; pages of one query never overlap."""

from __future__ import annotations

from typing import Any

import httpx

QUERY = {
    "$filter": "PropertyType eq 'Residential'",
    "$orderby": "ModificationTimestamp desc,ListingKey asc",
    "$top": "40",
}


def _page(url: str, params: dict[str, str]) -> dict[str, Any]:
    answer = httpx.get(url + "/reso/odata/Property", params=params)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def test_pages_of_one_query_follow_each_other_and_a_clock_move_is_seen(start_sandbox: Any) -> None:
    sb = start_sandbox(listings=800, reso_vendor="trestle")
    whole = _page(sb.url, {**QUERY, "$top": "120"})["value"]
    first = _page(sb.url, QUERY)
    second = httpx.get(first["@odata.nextLink"]).json()
    third = httpx.get(second["@odata.nextLink"]).json()
    keys = [r["ListingKey"] for page in (first, second, third) for r in page["value"]]
    assert keys == [r["ListingKey"] for r in whole] and len(set(keys)) == 120
    newest = first["value"][0]["ModificationTimestamp"]
    httpx.post(sb.url + "/_sandbox/clock", json={"advance_days": 20}).raise_for_status()
    moved = _page(sb.url, QUERY)
    assert moved["value"][0]["ModificationTimestamp"] > newest  # not the kept answer


def test_records_changed_in_place_are_seen_once_the_generation_moves() -> None:
    from datetime import UTC, datetime

    from realtyframes.sandbox._reso_odata import ResoService
    from realtyframes.sandbox._reso_vendors import profile
    from realtyframes.sandbox._store import ListingStore

    svc = ResoService(
        ListingStore(n=300, as_of=datetime(2026, 5, 1, tzinfo=UTC)), profile("trestle")
    )
    query = {"$filter": "City ne 'Nowhere'", "$orderby": "ListPrice desc", "$top": "5"}
    first = svc.query("Property", query, None, False, "http://x")[0]["value"][0]
    first["City"] = "Nowhere"  # the face's record itself, changed in place
    svc.data.generation += 1
    again = svc.query("Property", query, None, False, "http://x")[0]["value"]
    assert first["ListingKey"] not in [r["ListingKey"] for r in again]
