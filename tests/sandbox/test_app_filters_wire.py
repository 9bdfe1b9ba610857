"""Every search filter of the spec over HTTP: the wire answer is what the server's own store says.

Each case sends one filter family to ``GET /v1/listings`` on the shared open sandbox and checks
that (1) the JSON body equals ``sandbox.admin.listings.search(params)`` for the same parameters,
and (2) the filter is not trivial: the total equals an independent count over every listing of
the unfiltered search (for filters visible in the summary fields), or the two sides of a boolean
partition the unfiltered search. Filter values are picked from the data, never hard-coded totals.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import httpx
import pytest

from realtyframes.sandbox import RunningSandbox
from realtyframes.sandbox._query import SEARCH_PARAMS

Listing = dict[str, Any]
Universe = dict[str, list[Listing]]  # PropertyType -> every Active listing of it

RESIDENTIAL = {"PropertyType": "Residential"}
LEASE = {"PropertyType": "Residential Lease"}
PAGE = 50

# The spec's search table, written out here (not taken from the sandbox) so a filter the
# sandbox forgot would be noticed by test_every_search_parameter_has_a_case.
PROPERTY_TYPES = (
    "Residential",
    "Residential Income",
    "Land",
    "Land/Boat Docks",
    "Commercial Sale",
    "Business Opportunity",
    "Residential Lease",
    "Commercial Lease",
)
STATUSES = ("Active", "Pending", "Closed", "Active Under Contract")
# (range name, summary field)
RANGES = (
    ("ListPrice", "ListPrice"),
    ("BedroomsTotal", "BedroomsTotal"),
    ("Bathrooms", "BathroomsTotalInteger"),
    ("LivingArea", "LivingArea"),
    ("LotSize", "LotSizeSquareFeet"),
    ("YearBuilt", "YearBuilt"),
    ("AssociationFee", "AssociationFee"),
)
# boolean filter -> (summary field or None, PropertyType whose listings carry the feature)
BOOLEANS: dict[str, tuple[str | None, dict[str, str]]] = {
    "Pool": ("PoolPrivateYN", RESIDENTIAL),
    "Waterfront": ("WaterfrontYN", RESIDENTIAL),
    "Penthouse": (None, RESIDENTIAL),
    "Furnished": (None, RESIDENTIAL),
    "PetsAllowed": (None, RESIDENTIAL),
    "Gated": (None, RESIDENTIAL),
    "TennisCourt": (None, RESIDENTIAL),
    "GolfCourse": (None, RESIDENTIAL),
    "BoatDock": (None, RESIDENTIAL),
    "ShortSale": (None, RESIDENTIAL),
    "SeasonalRentals": (None, LEASE),  # short-term leases: a lease feature
}
# Sort -> (summary field, descending)
SORTS = {
    "-listprice": ("ListPrice", True),
    "listprice": ("ListPrice", False),
    "-listdate": ("OriginalEntryTimestamp", True),
    "beds": ("BedroomsTotal", False),
    "baths": ("BathroomsTotalInteger", False),
}
# text filter -> summary field it matches
TEXT = {
    "City": "City",
    "PostalCode": "PostalCode",
    "StreetNumber": "StreetNumber",
    "StreetName": "StreetName",
    "UnitNumber": "UnitNumber",
    "SubdivisionName": "SubdivisionName",
    "Agent": "ListAgentMlsId",
    "Broker": "ListOfficeMlsId",
}


@dataclass(frozen=True)
class Case:
    """One request: ``base`` (the unfiltered search) plus the filter ``params``."""

    params: dict[str, str]
    base: dict[str, str] = field(default_factory=lambda: dict(RESIDENTIAL))
    keep: Callable[[Listing], bool] | None = None  # the filter, evaluated on summary fields
    other: dict[str, str] | None = None  # the complement: together they partition ``base``
    order: tuple[str, bool] | None = None  # (field, descending) every page is sorted by
    slice_of: tuple[int, int] | None = None  # paging: this slice of the base's ordered listings
    filters: bool = True  # False: total must equal the base's (sorting, paging)

    @property
    def query(self) -> dict[str, str]:
        return {**self.base, **self.params}


def _date(value: str) -> datetime:
    return datetime.fromisoformat(value)


def _inner(values: list[Any]) -> tuple[Any, Any]:
    """About the quartiles of the distinct ``values``, strictly inside: each side leaves some out."""
    distinct = sorted({v for v in values if v is not None})
    n = len(distinct)
    assert n >= 3, distinct
    return distinct[max(1, n // 4)], distinct[min(n - 2, 3 * n // 4)]


def _first(universe: Universe, name: str, where: dict[str, str] = RESIDENTIAL) -> Any:
    return next(r[name] for r in universe[where["PropertyType"]] if r[name] is not None)


# -- the cases -----------------------------------------------------------------------------------
def _range_case(name: str, fld: str) -> Callable[[Universe], Case]:
    def build(u: Universe) -> Case:
        lo, hi = _inner([r[fld] for r in u["Residential"]])
        return Case(
            {f"Min{name}": str(lo), f"Max{name}": str(hi)},
            keep=lambda r: r[fld] is not None and lo <= r[fld] <= hi,
        )

    return build


def _boolean_case(name: str, value: str) -> Callable[[Universe], Case]:
    fld, base = BOOLEANS[name]
    flag = value == "true"
    opposite = "false" if flag else "true"

    def build(u: Universe) -> Case:
        keep = (lambda r: r[fld] is flag) if fld else None
        return Case({name: value}, dict(base), keep=keep, other={name: opposite})

    return build


def _text_case(name: str, fld: str) -> Callable[[Universe], Case]:
    def build(u: Universe) -> Case:
        value = _first(u, fld)
        return Case({name: value}, keep=lambda r: r[fld] == value)

    return build


def _building(u: Universe) -> Case:
    phrase = _first(u, "BuildingName").split()[-1].lower()  # a phrase, in another case
    return Case(
        {"BuildingName": phrase},
        keep=lambda r: r["BuildingName"] is not None and phrase in r["BuildingName"].lower(),
    )


def _subtypes(u: Universe) -> Case:
    seen = list(dict.fromkeys(r["PropertySubType"] for r in u["Residential"]))
    assert len(seen) >= 3, seen
    wanted = set(seen[:2])
    return Case({"Subtypes": ",".join(seen[:2])}, keep=lambda r: r["PropertySubType"] in wanted)


def _senior(value: str) -> Callable[[Universe], Case]:
    flag = value == "true"
    other = {"SeniorCommunity": "exclude" if flag else "true"}
    return lambda u: Case(
        {"SeniorCommunity": value}, keep=lambda r: r["SeniorCommunityYN"] is flag, other=other
    )


def _max_dom(u: Universe) -> Case:
    lo, hi = _inner([r["DaysOnMarket"] for r in u["Residential"]])
    limit = (lo + hi) // 2
    return Case({"MaxDaysOnMarket": str(limit)}, keep=lambda r: r["DaysOnMarket"] <= limit)


def _since(u: Universe) -> Case:
    entries = sorted(r["OriginalEntryTimestamp"] for r in u["Residential"])
    since = entries[len(entries) // 2]
    return Case({"Since": since}, keep=lambda r: _date(r["OriginalEntryTimestamp"]) > _date(since))


def _paging(u: Universe) -> Case:
    return Case({"Offset": "20", "Limit": "7"}, slice_of=(20, 27), filters=False)


def _property_type(name: str) -> Callable[[Universe], Case]:
    # No unfiltered search spans every PropertyType: the page is checked, not a count.
    return lambda u: Case({"PropertyType": name}, {}, keep=lambda r: r["PropertyType"] == name)


def _status(name: str) -> Callable[[Universe], Case]:
    # Likewise across statuses (Status defaults to Active).
    return lambda u: Case(
        {"PropertyType": "Residential", "Status": name},
        {},
        keep=lambda r: r["StandardStatus"] == name,
    )


def _sort(name: str) -> Callable[[Universe], Case]:
    return lambda u: Case({"Sort": name}, order=SORTS[name], filters=False)


def _cases() -> Iterator[tuple[str, Callable[[Universe], Case]]]:
    for name in PROPERTY_TYPES:
        yield f"PropertyType={name}", _property_type(name)
    for name in STATUSES:
        yield f"Status={name}", _status(name)
    yield "Subtypes", _subtypes
    for name, fld in TEXT.items():
        yield name, _text_case(name, fld)
    yield "BuildingName", _building
    for name, fld in RANGES:
        yield f"Min/Max{name}", _range_case(name, fld)
    for name in BOOLEANS:
        for value in ("true", "false"):
            yield f"{name}={value}", _boolean_case(name, value)
    yield "SeniorCommunity=true", _senior("true")
    yield "SeniorCommunity=exclude", _senior("exclude")
    yield "MaxDaysOnMarket", _max_dom
    yield "Since", _since
    for name in SORTS:
        yield f"Sort={name}", _sort(name)
    yield "Offset/Limit", _paging


CASES = dict(_cases())


# -- helpers -------------------------------------------------------------------------------------
def _all(store: Any, params: dict[str, str]) -> list[Listing]:
    """Every listing a search matches, in order, read from the store page by page."""
    out: list[Listing] = []
    while True:
        page = store.search({**params, "Offset": str(len(out)), "Limit": str(PAGE)})
        out += page["listings"]
        if len(out) >= page["total"] or not page["listings"]:
            return out


@pytest.fixture(scope="module")
def universe(sandbox: RunningSandbox) -> Universe:
    """Every Active listing of each PropertyType the cases use as their unfiltered search."""
    store = sandbox.admin.listings
    return {t: _all(store, {"PropertyType": t}) for t in ("Residential", "Residential Lease")}


# -- the tests -----------------------------------------------------------------------------------
def test_every_search_parameter_has_a_case(universe: Universe) -> None:
    covered = {name for build in CASES.values() for name in build(universe).params}
    assert covered == set(SEARCH_PARAMS)


@pytest.mark.parametrize("name", list(CASES))
def test_filter_over_the_wire_equals_the_store(
    name: str, sandbox: RunningSandbox, universe: Universe, http_client: httpx.Client
) -> None:
    case = CASES[name](universe)
    query = case.query if case.slice_of else {**case.query, "Limit": str(PAGE)}
    response = http_client.get(f"{sandbox.url}/v1/listings", params=query)
    assert response.status_code == 200, response.text
    body = response.json()
    store = sandbox.admin.listings
    expected = store.search(query)
    assert body == json.loads(json.dumps(expected))  # the wire adds nothing and drops nothing

    total, listings = body["total"], body["listings"]
    assert total > 0 and listings, f"{name} matches nothing: the case proves nothing"
    base = universe[case.base["PropertyType"]] if case.base else []
    if case.keep is not None:
        assert all(case.keep(r) for r in listings)
        if case.base:  # an independent count of the filter over every listing of the base
            assert total == sum(case.keep(r) for r in base)
    if case.base and case.filters:
        assert total < len(base), f"{name} filters nothing out"
    if not case.filters:
        assert total == len(base)
    if case.other is not None:  # the two sides partition the unfiltered search
        ids = [r["ListingId"] for r in _all(store, case.query)]
        others = [r["ListingId"] for r in _all(store, {**case.base, **case.other})]
        assert others, f"the other side of {name} is empty"
        assert sorted(ids + others) == sorted(r["ListingId"] for r in base)
    if case.order is not None:
        fld, descending = case.order
        keys = [r[fld] for r in listings]
        assert keys == sorted(keys, reverse=descending)
        assert len(set(keys)) > 1  # the page really has an order to check
    if case.slice_of is not None:
        start, stop = case.slice_of
        assert (body["offset"], body["limit"]) == (start, stop - start)
        assert listings == json.loads(json.dumps(base[start:stop]))
