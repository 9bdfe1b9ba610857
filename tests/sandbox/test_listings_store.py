"""Unit tests of the sandbox's listings data and logic (:class:`ListingStore`), no HTTP.

Every filter is checked against an expectation computed here from the returned records (summary
and detail fields), never against the store's own columns.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import statistics
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from realtyframes.sandbox._errors import SandboxError
from realtyframes.sandbox._store import ListingStore

AS_OF = datetime(2026, 5, 1, 15, 30, tzinfo=UTC)
N = 3000
SEED = 11

PROPERTY_TYPES = [
    "Residential",
    "Residential Income",
    "Land",
    "Land/Boat Docks",
    "Commercial Sale",
    "Business Opportunity",
    "Residential Lease",
    "Commercial Lease",
]
STATUSES = ["Active", "Pending", "Closed", "Active Under Contract"]
RESIDENTIAL_SUBTYPES = [
    "Single Family Residence",
    "Condominium",
    "Townhouse",
    "Villa",
    "Condo - Hotel",
    "1/2 Duplex",
    "Mobile Home",
]
LEASE_SUBTYPES = [
    "Single Family Residence",
    "Condominium",
    "Townhouse",
    "Villa",
    "Apartment",
    "Efficiency",
]
# The spec's Listing table and its string fields.
SPEC_FIELDS = [
    "ListingId",
    "ListPrice",
    "PreviousListPrice",
    "ClosePrice",
    "BedroomsTotal",
    "BathroomsTotalInteger",
    "LivingArea",
    "LotSizeSquareFeet",
    "YearBuilt",
    "YearBuiltDetails",
    "DaysOnMarket",
    "AssociationFee",
    "TaxAnnualAmount",
    "TaxYear",
    "GarageSpaces",
    "CoveredSpaces",
    "Stories",
    "WaterfrontYN",
    "PoolPrivateYN",
    "SeniorCommunityYN",
    "WaterfrontFeatures",
    "PoolFeatures",
    "Media",
    "coordinates",
    "OriginalEntryTimestamp",
    "ModificationTimestamp",
    "MajorChangeTimestamp",
    "CloseDate",
    "City",
    "StateOrProvince",
    "PostalCode",
    "StreetNumber",
    "StreetDirPrefix",
    "StreetName",
    "UnitNumber",
    "UnparsedAddress",
    "StandardStatus",
    "PropertyType",
    "PropertySubType",
    "SubdivisionName",
    "BuildingName",
    "CountyOrParish",
    "PublicRemarks",
    "ListOfficeName",
    "ListingTerms",
    "Furnished",
    "View",
    "PetsAllowed",
    "ParkingFeatures",
    "ConstructionMaterials",
    "ArchitecturalStyle",
    "Roof",
    "Cooling",
    "Heating",
    "Flooring",
    "Appliances",
    "InteriorFeatures",
    "ExteriorFeatures",
    "CommunityFeatures",
    "LaundryFeatures",
    "WindowFeatures",
    "Sewer",
    "WaterSource",
    "LeaseTerm",
    "LeaseAmountFrequency",
    "SpecialListingConditions",
    "VirtualTourURLUnbranded",
    "DirectionFaces",
    "LotFeatures",
    "Levels",
    "OriginatingSystemKey",
    "OriginatingSystemName",
]
SUMMARY_FIELDS = [
    "ListingId",
    "ListPrice",
    "PreviousListPrice",
    "ClosePrice",
    "StandardStatus",
    "PropertyType",
    "PropertySubType",
    "UnparsedAddress",
    "StreetNumber",
    "StreetDirPrefix",
    "StreetName",
    "UnitNumber",
    "City",
    "StateOrProvince",
    "PostalCode",
    "CountyOrParish",
    "SubdivisionName",
    "BuildingName",
    "BedroomsTotal",
    "BathroomsTotalInteger",
    "LivingArea",
    "LotSizeSquareFeet",
    "YearBuilt",
    "DaysOnMarket",
    "AssociationFee",
    "coordinates",
    "OriginalEntryTimestamp",
    "ModificationTimestamp",
    "MajorChangeTimestamp",
    "CloseDate",
    "ListAgentMlsId",
    "ListOfficeMlsId",
    "ListOfficeName",
    "WaterfrontYN",
    "PoolPrivateYN",
    "SeniorCommunityYN",
]
TS_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
DATE_RE = re.compile(r"\d{4}-\d\d-\d\d")
ID_RE = re.compile(r"A\d{8}")

Record = dict[str, Any]


def ts(text: str) -> datetime:
    return datetime.fromisoformat(text)


def all_pages(store: ListingStore, params: Mapping[str, str]) -> list[Record]:
    """Every listing matching ``params``, paged at the maximum page size."""
    out: list[Record] = []
    offset = 0
    while True:
        page = store.search({**params, "Offset": str(offset), "Limit": "50"})
        out += page["listings"]
        offset += 50
        if offset >= page["total"]:
            assert len(out) == page["total"]
            return out


def all_changes(store: ListingStore, params: Mapping[str, str]) -> list[Record]:
    out: list[Record] = []
    offset = 0
    while True:
        page = store.changes({**params, "Offset": str(offset), "Limit": "50"})
        out += page["changes"]
        offset += 50
        if offset >= page["total"]:
            assert len(out) == page["total"]
            return out


def ids(records: list[Record]) -> list[str]:
    return [r["ListingId"] for r in records]


def bad(call: Callable[[], object], param: str) -> SandboxError:
    """Assert ``call`` raises a 400 naming ``param``; return the error."""
    with pytest.raises(SandboxError) as info:
        call()
    err = info.value
    assert err.status == 400 and err.code == "bad_request"
    assert err.param == param
    assert err.detail is not None and param in err.detail
    return err


@pytest.fixture(scope="module")
def store() -> ListingStore:
    """A shared store; read-only (tests moving the clock build their own). One year of history:
    the N listings are recent, so every status has many at the clock (what the filters need)."""
    return ListingStore(N, SEED, as_of=AS_OF, history_years=1)


@pytest.fixture(scope="module")
def residential(store: ListingStore) -> list[Record]:
    """Closed Residential listings (the biggest group) with their detail fields."""
    return [store.detail(i) for i in ids(all_pages(store, {"Status": "Closed"}))]


@pytest.fixture(scope="module")
def leases(store: ListingStore) -> list[Record]:
    base = {"PropertyType": "Residential Lease", "Status": "Closed"}
    return [store.detail(i) for i in ids(all_pages(store, base))]


@pytest.fixture(scope="module")
def everything(store: ListingStore) -> list[Record]:
    """Every visible listing, all types and statuses."""
    out = []
    for pt in PROPERTY_TYPES:
        for status in STATUSES:
            out += all_pages(store, {"PropertyType": pt, "Status": status})
    return out


# -- defaults, types, statuses, paging ----------------------------------------------------------


def test_defaults_are_residential_active_by_price(store: ListingStore) -> None:
    page = store.search({})
    assert (page["offset"], page["limit"]) == (0, 20)
    assert len(page["listings"]) == 20 < page["total"]
    assert {r["PropertyType"] for r in page["listings"]} == {"Residential"}
    assert {r["StandardStatus"] for r in page["listings"]} == {"Active"}
    prices = [r["ListPrice"] for r in page["listings"]]
    assert prices == sorted(prices, reverse=True)
    assert store.search({"PropertyType": "Residential", "Status": "Active"}) == page


def test_n_listings_visible_and_every_type_and_status_present(
    store: ListingStore, everything: list[Record]
) -> None:
    assert len(everything) == N
    assert len(set(ids(everything))) == N
    for pt in PROPERTY_TYPES:
        for status in STATUSES:
            group = [
                r for r in everything if r["PropertyType"] == pt and r["StandardStatus"] == status
            ]
            total = store.search({"PropertyType": pt, "Status": status})["total"]
            assert total == len(group)
    assert {r["PropertyType"] for r in everything} == set(PROPERTY_TYPES)
    assert {r["StandardStatus"] for r in everything} == set(STATUSES)


def test_paging_is_stable_and_complete(store: ListingStore) -> None:
    base = {"Status": "Closed", "Sort": "beds"}  # many ties: paging must break them by ListingId
    full = all_pages(store, base)
    again = []
    for offset in range(0, len(full), 37):
        again += store.search({**base, "Offset": str(offset), "Limit": "37"})["listings"]
    assert ids(again) == ids(full)
    page = store.search({**base, "Offset": str(len(full) + 5)})
    assert page["listings"] == [] and page["total"] == len(full)
    assert len(store.search({**base, "Limit": "50"})["listings"]) == 50
    assert len(store.search({**base, "Limit": "1"})["listings"]) == 1


@pytest.mark.parametrize(
    ("params", "param"),
    [
        ({"Limit": "51"}, "Limit"),
        ({"Limit": "0"}, "Limit"),
        ({"Limit": "ten"}, "Limit"),
        ({"Limit": "2.5"}, "Limit"),
        ({"Offset": "-1"}, "Offset"),
        ({"Offset": "x"}, "Offset"),
        ({"PropertyType": "Condo"}, "PropertyType"),
        ({"PropertyType": "residential"}, "PropertyType"),
        ({"Status": "Sold"}, "Status"),
        ({"Sort": "price"}, "Sort"),
        ({"MinListPrice": "abc"}, "MinListPrice"),
        ({"MaxListPrice": "-5"}, "MaxListPrice"),
        ({"MinBedroomsTotal": "two"}, "MinBedroomsTotal"),
        ({"MinLotSize": "4,000"}, "MinLotSize"),
        ({"MaxDaysOnMarket": "-1"}, "MaxDaysOnMarket"),
        ({"MinYearBuilt": "2020", "MaxYearBuilt": "2010"}, "MinYearBuilt"),
        ({"MinListPrice": "500000", "MaxListPrice": "400000"}, "MinListPrice"),
        ({"Pool": "yes"}, "Pool"),
        ({"Waterfront": "1"}, "Waterfront"),
        ({"SeasonalRentals": ""}, "SeasonalRentals"),
        ({"SeniorCommunity": "false"}, "SeniorCommunity"),
        ({"Since": "yesterday"}, "Since"),
        ({"Since": ""}, "Since"),
        ({"City": ""}, "City"),
        ({"Agent": " "}, "Agent"),
        ({"Subtypes": "Apartment"}, "Subtypes"),
        ({"Subtypes": "Condominium,,Villa"}, "Subtypes"),
        ({"PropertyType": "Land", "Subtypes": "Condominium"}, "Subtypes"),
    ],
)
def test_bad_search_parameters_are_400_naming_them(
    store: ListingStore, params: dict[str, str], param: str
) -> None:
    err = bad(lambda: store.search(params), param)
    assert "allowed" in (err.detail or "")


def test_400_lists_allowed_values(store: ListingStore) -> None:
    detail = bad(lambda: store.search({"Status": "Sold"}), "Status").detail or ""
    assert all(s in detail for s in STATUSES)
    detail = bad(lambda: store.search({"Limit": "51"}), "Limit").detail or ""
    assert "50" in detail
    detail = bad(lambda: store.search({"Sort": "price"}), "Sort").detail or ""
    assert all(s in detail for s in ("-listprice", "listprice", "-listdate", "beds", "baths"))


def test_unknown_parameters_are_ignored(store: ListingStore) -> None:
    assert store.search({"Foo": "bar", "city": "nowhere"}) == store.search({})


# -- Subtypes --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ptype", "subtypes"),
    [("Residential", RESIDENTIAL_SUBTYPES), ("Residential Lease", LEASE_SUBTYPES)],
)
def test_subtypes_filter(store: ListingStore, ptype: str, subtypes: list[str]) -> None:
    base = {"PropertyType": ptype, "Status": "Closed"}
    everything = all_pages(store, base)
    per_subtype = {}
    for sub in subtypes:
        got = all_pages(store, {**base, "Subtypes": sub})
        assert {r["PropertySubType"] for r in got} <= {sub}
        assert ids(got) == [r["ListingId"] for r in everything if r["PropertySubType"] == sub]
        per_subtype[sub] = len(got)
    assert sum(per_subtype.values()) == len(everything)
    assert sum(1 for v in per_subtype.values() if v > 0) >= len(subtypes) - 1
    two = f"{subtypes[0]}, {subtypes[1]}"  # spaces after commas are fine
    got = store.search({**base, "Subtypes": two})["total"]
    assert got == per_subtype[subtypes[0]] + per_subtype[subtypes[1]]


def test_subtypes_rules(store: ListingStore) -> None:
    err = bad(lambda: store.search({"Subtypes": "Apartment"}), "Subtypes")
    assert "Condo - Hotel" in (err.detail or "")  # the allowed values of Residential
    for ptype in PROPERTY_TYPES:
        if ptype in ("Residential", "Residential Lease"):
            continue
        err = bad(
            lambda p=ptype: store.search({"PropertyType": p, "Subtypes": "Office"}), "Subtypes"
        )
        assert "Residential and Residential Lease only" in (err.detail or "")
    lease = {"PropertyType": "Residential Lease", "Status": "Closed"}
    assert store.search({**lease, "Subtypes": "Apartment,Efficiency"})["total"] > 0
    bad(lambda: store.search({**lease, "Subtypes": "Mobile Home"}), "Subtypes")


# -- every other filter, against an independent expectation ---------------------------------------


def _water_features(r: Record) -> set[str]:
    return {f["Feature"] for f in r["WaterfrontFeatures"]}


#: Boolean filters and how to read them from a record (summary + detail fields).
FEATURES: dict[str, Callable[[Record], bool]] = {
    "Pool": lambda r: r["PoolPrivateYN"],
    "Waterfront": lambda r: r["WaterfrontYN"],
    "Penthouse": lambda r: (
        (r["UnitNumber"] or "").upper().startswith("PH")
        or "Penthouse" in (r["InteriorFeatures"] or "")
    ),
    "Furnished": lambda r: r["Furnished"] == "Furnished",
    "PetsAllowed": lambda r: r["PetsAllowed"] not in (None, "No"),
    "Gated": lambda r: "Gated" in (r["CommunityFeatures"] or ""),
    "TennisCourt": lambda r: "Tennis" in (r["CommunityFeatures"] or ""),
    "GolfCourse": lambda r: "Golf" in (r["CommunityFeatures"] or ""),
    "BoatDock": lambda r: "Boat Dock" in _water_features(r),
    "ShortSale": lambda r: "Short Sale" in (r["SpecialListingConditions"] or ""),
    "SeasonalRentals": lambda r: r["LeaseTerm"] == "Short Term Lease",
}


def check_filter(
    store: ListingStore,
    base: Mapping[str, str],
    records: list[Record],
    params: Mapping[str, str],
    keep: Callable[[Record], bool],
) -> list[Record]:
    """The filtered search returns exactly the base records ``keep`` accepts, in base order."""
    got = all_pages(store, {**base, **params})
    expected = [r["ListingId"] for r in records if keep(r)]
    assert ids(got) == expected, params
    return got


RES_BASE = {"Status": "Closed"}
LEASE_BASE = {"PropertyType": "Residential Lease", "Status": "Closed"}


@pytest.mark.parametrize("name", list(FEATURES))
def test_boolean_filters(
    store: ListingStore, residential: list[Record], leases: list[Record], name: str
) -> None:
    base, records = (LEASE_BASE, leases) if name == "SeasonalRentals" else (RES_BASE, residential)
    has = FEATURES[name]
    yes = check_filter(store, base, records, {name: "true"}, has)
    no = check_filter(store, base, records, {name: "false"}, lambda r: not has(r))
    assert yes and no, f"{name}: both sides should be non-empty in the test data"
    assert len(yes) + len(no) == len(records)
    assert check_filter(store, base, records, {name: "TRUE"}, has) == yes  # case-insensitive


def test_senior_community(store: ListingStore, residential: list[Record]) -> None:
    yes = check_filter(
        store, RES_BASE, residential, {"SeniorCommunity": "true"}, lambda r: r["SeniorCommunityYN"]
    )
    no = check_filter(
        store,
        RES_BASE,
        residential,
        {"SeniorCommunity": "exclude"},
        lambda r: not r["SeniorCommunityYN"],
    )
    assert yes and no and len(yes) + len(no) == len(residential)
    assert all(
        "55+" in (r["CommunityFeatures"] or "") for r in residential if r["SeniorCommunityYN"]
    )


RANGES = {
    "ListPrice": ("MinListPrice", "MaxListPrice"),
    "BedroomsTotal": ("MinBedroomsTotal", "MaxBedroomsTotal"),
    "BathroomsTotalInteger": ("MinBathrooms", "MaxBathrooms"),
    "LivingArea": ("MinLivingArea", "MaxLivingArea"),
    "LotSizeSquareFeet": ("MinLotSize", "MaxLotSize"),
    "YearBuilt": ("MinYearBuilt", "MaxYearBuilt"),
    "AssociationFee": ("MinAssociationFee", "MaxAssociationFee"),
}


@pytest.mark.parametrize("field_name", list(RANGES))
def test_range_filters_are_inclusive(
    store: ListingStore, residential: list[Record], field_name: str
) -> None:
    lo_name, hi_name = RANGES[field_name]
    values = sorted(r[field_name] for r in residential if r[field_name] is not None)
    lo, hi = values[len(values) // 4], values[3 * len(values) // 4]  # values some listings have

    def within(a: float | None, b: float | None) -> Callable[[Record], bool]:
        return lambda r: (
            r[field_name] is not None
            and (a is None or r[field_name] >= a)
            and (b is None or r[field_name] <= b)
        )

    got_lo = check_filter(store, RES_BASE, residential, {lo_name: str(lo)}, within(lo, None))
    got_hi = check_filter(store, RES_BASE, residential, {hi_name: str(hi)}, within(None, hi))
    both = check_filter(
        store, RES_BASE, residential, {lo_name: str(lo), hi_name: str(hi)}, within(lo, hi)
    )
    assert any(r[field_name] == lo for r in got_lo) and any(r[field_name] == hi for r in got_hi)
    assert any(r[field_name] == lo for r in both) and any(r[field_name] == hi for r in both)
    # Min == Max is allowed and inclusive; decimals parse
    exact = check_filter(
        store, RES_BASE, residential, {lo_name: str(lo), hi_name: str(lo)}, within(lo, lo)
    )
    assert exact
    check_filter(store, RES_BASE, residential, {lo_name: f"{lo}.5"}, within(lo + 0.5, None))


def test_studios(store: ListingStore) -> None:
    base = {"PropertyType": "Residential Lease", "Status": "Closed"}
    studios = all_pages(store, {**base, "MaxBedroomsTotal": "0"})
    assert studios and all(r["BedroomsTotal"] == 0 for r in studios)
    assert {r["PropertySubType"] for r in studios} <= {"Condominium", "Apartment", "Efficiency"}
    everyone = all_pages(store, {**base, "MinBedroomsTotal": "0"})
    assert len(everyone) == store.search(base)["total"]


def test_max_days_on_market(store: ListingStore, residential: list[Record]) -> None:
    doms = sorted(r["DaysOnMarket"] for r in residential)
    cut = doms[len(doms) // 3]
    got = check_filter(
        store,
        RES_BASE,
        residential,
        {"MaxDaysOnMarket": str(cut)},
        lambda r: r["DaysOnMarket"] <= cut,
    )
    assert any(r["DaysOnMarket"] == cut for r in got)


def pick(records: list[Record], field_name: str, index: int = 7) -> str:
    values = sorted({r[field_name] for r in records if r[field_name]})
    return values[index % len(values)]


@pytest.mark.parametrize(
    "field_name",
    ["City", "PostalCode", "StreetNumber", "StreetName", "UnitNumber", "SubdivisionName"],
)
def test_exact_text_filters_case_insensitive(
    store: ListingStore, residential: list[Record], field_name: str
) -> None:
    value = pick(residential, field_name)
    for given in {value, value.lower(), value.upper()}:
        got = check_filter(
            store,
            RES_BASE,
            residential,
            {field_name: given},
            lambda r: (r[field_name] or "").lower() == value.lower(),
        )
        assert got
    check_filter(store, RES_BASE, residential, {field_name: value + "x"}, lambda r: False)
    check_filter(
        store,
        RES_BASE,
        residential,
        {field_name: value[:-1]},
        lambda r: (r[field_name] or "").lower() == value[:-1].lower(),
    )


def test_building_name_phrase_match(store: ListingStore, residential: list[Record]) -> None:
    def phrase(p: str) -> Callable[[Record], bool]:
        return lambda r: p.lower() in (r["BuildingName"] or "").lower()

    names = {r["BuildingName"] for r in residential if r["BuildingName"]}
    assert len(names) > 10
    got = check_filter(store, RES_BASE, residential, {"BuildingName": "tower"}, phrase("tower"))
    assert len({r["BuildingName"] for r in got}) > 1  # a phrase matches several buildings
    full = sorted(names)[0]
    assert check_filter(store, RES_BASE, residential, {"BuildingName": full.upper()}, phrase(full))
    check_filter(
        store,
        RES_BASE,
        residential,
        {"BuildingName": "no such building"},
        phrase("no such building"),
    )


@pytest.mark.parametrize(
    ("param", "field_name"), [("Agent", "ListAgentMlsId"), ("Broker", "ListOfficeMlsId")]
)
def test_agent_and_broker(
    store: ListingStore, residential: list[Record], param: str, field_name: str
) -> None:
    counts: dict[str, int] = {}
    for r in residential:
        counts[r[field_name]] = counts.get(r[field_name], 0) + 1
    busiest = max(counts, key=lambda k: (counts[k], k))
    got = check_filter(
        store, RES_BASE, residential, {param: busiest}, lambda r: r[field_name] == busiest
    )
    assert len(got) == counts[busiest] > 1
    check_filter(store, RES_BASE, residential, {param: "0000000"}, lambda r: False)


def test_since_filter(store: ListingStore, residential: list[Record]) -> None:
    entries = sorted(r["OriginalEntryTimestamp"] for r in residential)
    mark = entries[len(entries) // 2]
    got = check_filter(
        store,
        RES_BASE,
        residential,
        {"Since": mark},
        lambda r: ts(r["OriginalEntryTimestamp"]) > ts(mark),
    )
    assert mark not in {r["OriginalEntryTimestamp"] for r in got}  # strictly after
    forms = [
        "2026-01-01",
        "2026-01-01T00:00:00Z",
        "2025-12-31T19:00:00-05:00",
        "2026-01-01T00:00:00",
    ]
    totals = {f: store.search({**RES_BASE, "Since": f})["total"] for f in forms}
    assert len(set(totals.values())) == 1, totals
    midnight = datetime(2026, 1, 1, tzinfo=UTC)
    expected = sum(1 for r in residential if ts(r["OriginalEntryTimestamp"]) > midnight)
    assert totals["2026-01-01"] == expected > 0


def test_combined_filters(store: ListingStore, residential: list[Record]) -> None:
    city = max(
        {r["City"] for r in residential}, key=lambda c: sum(r["City"] == c for r in residential)
    )
    params = {
        "City": city,
        "MinBedroomsTotal": "2",
        "MaxListPrice": "1500000",
        "Waterfront": "false",
        "Sort": "listprice",
    }

    def keep(r: Record) -> bool:
        return (
            r["City"] == city
            and r["BedroomsTotal"] >= 2
            and r["ListPrice"] <= 1_500_000
            and not r["WaterfrontYN"]
        )

    got = all_pages(store, {**RES_BASE, **params})
    assert {r["ListingId"] for r in got} == {r["ListingId"] for r in residential if keep(r)}
    assert got


# -- Sort ------------------------------------------------------------------------------------------

SORT_KEYS: dict[str, Callable[[Record], tuple[Any, ...]]] = {
    "-listprice": lambda r: (-r["ListPrice"], r["ListingId"]),
    "listprice": lambda r: (r["ListPrice"], r["ListingId"]),
    "-listdate": lambda r: (-ts(r["OriginalEntryTimestamp"]).timestamp(), r["ListingId"]),
    "beds": lambda r: (r["BedroomsTotal"], r["ListingId"]),
    "baths": lambda r: (r["BathroomsTotalInteger"], r["ListingId"]),
}


@pytest.mark.parametrize("sort", list(SORT_KEYS))
@pytest.mark.parametrize("status", ["Active", "Closed"])
def test_sorts(store: ListingStore, sort: str, status: str) -> None:
    base = {"Status": status}
    default = all_pages(store, base)
    got = all_pages(store, {**base, "Sort": sort})
    assert sorted(ids(got)) == sorted(ids(default))
    assert got == sorted(got, key=SORT_KEYS[sort])


def test_sort_puts_missing_values_last(store: ListingStore) -> None:
    got = all_pages(store, {"PropertyType": "Commercial Sale", "Status": "Closed", "Sort": "beds"})
    assert got and all(r["BedroomsTotal"] is None for r in got)
    assert ids(got) == sorted(ids(got))


# -- records ---------------------------------------------------------------------------------------


def test_search_records(everything: list[Record], store: ListingStore) -> None:
    for r in everything:
        assert set(SUMMARY_FIELDS) <= set(r)
        assert ID_RE.fullmatch(r["ListingId"])
        for name in ("OriginalEntryTimestamp", "ModificationTimestamp", "MajorChangeTimestamp"):
            assert TS_RE.fullmatch(r[name]), r[name]
            assert ts(r[name]) <= store.now
        assert (
            r["OriginalEntryTimestamp"] <= r["MajorChangeTimestamp"] <= r["ModificationTimestamp"]
        )
        closed = r["StandardStatus"] == "Closed"
        assert (r["ClosePrice"] is not None) == closed
        assert (r["CloseDate"] is not None) == closed
        if closed:
            assert DATE_RE.fullmatch(r["CloseDate"])
            assert r["CloseDate"] <= store.now.date().isoformat()
        assert r["PreviousListPrice"] is None or r["PreviousListPrice"] != r["ListPrice"]
        assert r["ListPrice"] > 0
        assert re.fullmatch(r"\d{5}", r["PostalCode"])
        assert r["StateOrProvince"] == "FL"
        assert r["UnparsedAddress"].startswith(r["StreetNumber"] + " ")
        assert r["UnparsedAddress"].endswith(f"{r['City']}, FL {r['PostalCode']}")
        assert 24.5 < r["coordinates"]["lat"] < 27.5 and -81 < r["coordinates"]["lng"] < -79.5
        entry = ts(r["OriginalEntryTimestamp"])
        end = datetime.fromisoformat(r["CloseDate"] + "T23:59:59+00:00") if closed else store.now
        assert r["DaysOnMarket"] in ((end - entry).days, (end - entry).days - 1)
    json.dumps(everything)  # plain JSON types only


def test_detail_has_every_spec_field(store: ListingStore, everything: list[Record]) -> None:
    for r in everything[::15]:
        d = store.detail(r["ListingId"])
        assert set(SPEC_FIELDS) <= set(d)
        assert {k: d[k] for k in r} == r  # the summary fields agree
        media = d["Media"]
        assert 5 <= len(media) <= 20
        assert [m["Order"] for m in media] == list(range(1, len(media) + 1))
        assert all(m["MediaURL"].startswith("https://") and m["ShortDescription"] for m in media)
        assert isinstance(d["WaterfrontFeatures"], list) and isinstance(d["PoolFeatures"], list)
        assert bool(d["WaterfrontFeatures"]) == d["WaterfrontYN"]
        assert bool(d["PoolFeatures"]) == d["PoolPrivateYN"]
        assert d["PublicRemarks"]
        assert d["Levels"] in (None, "One", "Two", "Three Or More")
        assert d["Furnished"] in (None, "Furnished", "Unfurnished")
        lease = d["PropertyType"] in ("Residential Lease", "Commercial Lease")
        assert (d["LeaseAmountFrequency"] == "Monthly") == lease
        if d["YearBuiltDetails"] is not None:
            assert d["YearBuiltDetails"] in ("New Construction", "Resale")
    json.dumps(store.detail(everything[0]["ListingId"]))


@pytest.mark.parametrize("bad_id", ["changes", "A00000000", "A1234", "", "a" + "1" * 8])
def test_detail_unknown_is_404(store: ListingStore, bad_id: str) -> None:
    with pytest.raises(SandboxError) as info:
        store.detail(bad_id)
    assert info.value.status == 404 and info.value.code == "not_found"


def test_market_is_realistic(everything: list[Record]) -> None:
    active = [r for r in everything if r["StandardStatus"] == "Active"]
    cut = sum(
        1
        for r in active
        if r["PreviousListPrice"] is not None and r["PreviousListPrice"] > r["ListPrice"]
    )
    assert 0.22 <= cut / len(active) <= 0.40
    assert any(
        r["PreviousListPrice"] and r["PreviousListPrice"] < r["ListPrice"] for r in everything
    )  # raises
    sales = [
        r
        for r in everything
        if r["StandardStatus"] == "Closed" and r["PropertyType"] == "Residential"
    ]
    ratios = [r["ClosePrice"] / r["ListPrice"] for r in sales]
    assert 0.95 <= statistics.mean(ratios) <= 0.99
    assert 0.05 <= sum(x > 1 for x in ratios) / len(ratios) <= 0.35
    assert len({r["City"] for r in everything}) >= 12
    assert len({r["PostalCode"] for r in everything}) >= 40
    rents = [r["ListPrice"] for r in everything if r["PropertyType"] == "Residential Lease"]
    assert 1500 <= statistics.median(rents) <= 6000  # monthly rents
    homes = [r["ListPrice"] for r in everything if r["PropertyType"] == "Residential"]
    assert 350_000 <= statistics.median(homes) <= 1_500_000
    # price tied to living area within a city and type
    sfr = [
        r
        for r in everything
        if r["PropertySubType"] == "Single Family Residence" and r["PropertyType"] == "Residential"
    ]
    small = [r["ListPrice"] for r in sfr if r["LivingArea"] < 1800]
    large = [r["ListPrice"] for r in sfr if r["LivingArea"] > 3000]
    assert statistics.median(large) > 1.5 * statistics.median(small)
    condos = [
        r
        for r in everything
        if r["PropertySubType"] == "Condominium" and r["PropertyType"] == "Residential"
    ]
    assert all(r["AssociationFee"] for r in condos)
    assert any(r["SeniorCommunityYN"] for r in everything)


# -- change feed -----------------------------------------------------------------------------------


def test_changes_consistent_with_listing_fields(
    store: ListingStore, everything: list[Record]
) -> None:
    sample = everything[::7][:400]
    seen: list[Record] = []
    for start in range(0, len(sample), 100):
        chunk = sample[start : start + 100]
        feed = all_changes(store, {"Since": "2000-01-01", "ListingIds": ",".join(ids(chunk))})
        assert feed == sorted(feed, key=lambda c: (c["ChangeTimestamp"], c["ListingId"]))
        seen += feed
        for r in chunk:
            mine = [c for c in feed if c["ListingId"] == r["ListingId"]]
            prices = [c for c in mine if c["ChangeType"] == "price_change"]
            statuses = [c for c in mine if c["ChangeType"] == "status_change"]
            for c in mine:
                assert TS_RE.fullmatch(c["ChangeTimestamp"])
                assert (
                    r["OriginalEntryTimestamp"]
                    < c["ChangeTimestamp"]
                    <= store.now.strftime("%Y-%m-%dT%H:%M:%SZ")
                )
            if prices:
                assert prices[-1]["ListPrice"] == r["ListPrice"]
                assert prices[-1]["PreviousListPrice"] == r["PreviousListPrice"]
                for a, b in itertools.pairwise(prices):
                    assert b["PreviousListPrice"] == a["ListPrice"]
            else:
                assert r["PreviousListPrice"] is None
            chain = ["Active", *[c["StandardStatus"] for c in statuses]]
            assert [c["PreviousStatus"] for c in statuses] == chain[:-1]
            assert chain[-1] == r["StandardStatus"]
            if r["StandardStatus"] == "Closed":
                assert statuses[-1]["ChangeTimestamp"][:10] == r["CloseDate"]
            last = max([r["OriginalEntryTimestamp"], *[c["ChangeTimestamp"] for c in mine]])
            assert r["MajorChangeTimestamp"] == last
    kinds = {c["ChangeType"] for c in seen}
    assert kinds == {"price_change", "status_change"}
    moves = {
        (c["PreviousStatus"], c["StandardStatus"])
        for c in seen
        if c["ChangeType"] == "status_change"
    }
    assert {
        ("Active", "Pending"),
        ("Pending", "Closed"),
        ("Active", "Closed"),
        ("Pending", "Active"),
    } <= moves
    assert ("Active", "Active Under Contract") in moves


def test_changes_filters_and_paging(store: ListingStore, everything: list[Record]) -> None:
    chunk = ids([r for r in everything if r["StandardStatus"] == "Closed"][:100])
    base = {"Since": "2000-01-01", "ListingIds": ",".join(chunk)}
    full = all_changes(store, base)
    assert len(full) > 100  # more than two pages
    first = store.changes(base)
    assert (first["offset"], first["limit"], first["total"]) == (0, 20, len(full))
    for kind in ("price_change", "status_change"):
        got = all_changes(store, {**base, "ChangeType": kind})
        assert got == [c for c in full if c["ChangeType"] == kind]
    mark = full[len(full) // 2]["ChangeTimestamp"]
    later = all_changes(store, {**base, "Since": mark})
    assert later == [c for c in full if c["ChangeTimestamp"] > mark]
    for form in (
        "2026-01-01",
        "2026-01-01T00:00:00Z",
        "2025-12-31T19:00:00-05:00",
        "2026-01-01T00:00:00",
    ):
        got = all_changes(store, {**base, "Since": form})
        assert got == [c for c in full if c["ChangeTimestamp"] > "2026-01-01T00:00:00Z"]
    # unknown and malformed ids give no changes; duplicates change nothing
    assert store.changes({**base, "ListingIds": "A00000001,nope"})["total"] == 0
    dup = ",".join(chunk[:10] + chunk[:10])
    assert (
        store.changes({**base, "ListingIds": dup})["total"]
        == store.changes({**base, "ListingIds": ",".join(chunk[:10])})["total"]
    )


def test_changes_bad_parameters(store: ListingStore, everything: list[Record]) -> None:
    some = ",".join(ids(everything[:5]))
    bad(lambda: store.changes({"ListingIds": some}), "Since")
    bad(lambda: store.changes({"Since": "2026-01-01"}), "ListingIds")
    bad(lambda: store.changes({"Since": "not a date", "ListingIds": some}), "Since")
    bad(lambda: store.changes({"Since": "2026-01-01", "ListingIds": ""}), "ListingIds")
    bad(
        lambda: store.changes({"Since": "2026-01-01", "ListingIds": some, "ChangeType": "price"}),
        "ChangeType",
    )
    bad(lambda: store.changes({"Since": "2026-01-01", "ListingIds": some, "Limit": "51"}), "Limit")
    bad(
        lambda: store.changes({"Since": "2026-01-01", "ListingIds": some, "Offset": "-2"}), "Offset"
    )
    hundred = ids(everything[:100])
    assert store.changes({"Since": "2026-01-01", "ListingIds": ",".join(hundred)})["limit"] == 20
    err = bad(
        lambda: store.changes(
            {"Since": "2026-01-01", "ListingIds": ",".join([*hundred, "A99999999"])}
        ),
        "ListingIds",
    )
    assert "at most 100" in (err.detail or "")


# -- clock, drift, determinism ---------------------------------------------------------------------


def snapshot(store: ListingStore) -> dict[str, Record]:
    return {
        r["ListingId"]: r
        for pt in PROPERTY_TYPES
        for status in STATUSES
        for r in all_pages(store, {"PropertyType": pt, "Status": status})
    }


def test_clock_advance_reveals_listings_and_changes() -> None:
    s = ListingStore(600, 5, as_of=AS_OF)
    before = snapshot(s)
    assert len(before) == 600
    later = AS_OF + timedelta(days=45)
    s.set_now(later)
    assert s.now == later
    after = snapshot(s)
    new = {i for i in after if i not in before}
    assert new and set(before) <= set(after)
    for i in new:
        assert AS_OF < ts(after[i]["OriginalEntryTimestamp"]) <= later
    since_as_of = all_pages(s, {"Since": AS_OF.isoformat(), "Status": "Active"})
    assert {r["ListingId"] for r in since_as_of} <= new
    # replaying the feed over the old state gives the new state (what an incremental sync does)
    feed: list[Record] = []
    old_ids = sorted(before)
    for start in range(0, len(old_ids), 100):
        params = {"Since": AS_OF.isoformat(), "ListingIds": ",".join(old_ids[start : start + 100])}
        feed += all_changes(s, params)
    assert {c["ChangeType"] for c in feed} == {"price_change", "status_change"}
    replay = {i: dict(r) for i, r in before.items()}
    for c in feed:
        assert AS_OF < ts(c["ChangeTimestamp"]) <= later
        r = replay[c["ListingId"]]
        if c["ChangeType"] == "price_change":
            assert r["ListPrice"] == c["PreviousListPrice"]
            r["PreviousListPrice"], r["ListPrice"] = c["PreviousListPrice"], c["ListPrice"]
        else:
            assert r["StandardStatus"] == c["PreviousStatus"]
            r["StandardStatus"] = c["StandardStatus"]
        r["MajorChangeTimestamp"] = c["ChangeTimestamp"]
    fields = ("ListPrice", "PreviousListPrice", "StandardStatus", "MajorChangeTimestamp")
    for i in before:
        assert {f: replay[i][f] for f in fields} == {f: after[i][f] for f in fields}, i
    changed = {c["ListingId"] for c in feed}
    for i in set(before) - changed:  # untouched listings only age
        same = {k: v for k, v in before[i].items() if k != "DaysOnMarket"}
        assert same == {k: v for k, v in after[i].items() if k != "DaysOnMarket"}


def test_clock_only_moves_forward() -> None:
    s = ListingStore(50, 1, as_of=AS_OF)
    s.set_now(AS_OF)  # staying put is fine
    with pytest.raises(ValueError, match="forward"):
        s.set_now(AS_OF - timedelta(seconds=1))
    with pytest.raises(ValueError, match="timezone"):
        s.set_now(datetime(2027, 1, 1))
    with pytest.raises(ValueError, match="timezone"):
        ListingStore(50, 1, as_of=datetime(2026, 1, 1))
    s.set_now(AS_OF + timedelta(days=400))  # past the generated history: no error
    assert s.search({})["total"] > 0


def test_insert_new_drift() -> None:
    s = ListingStore(400, 2, as_of=AS_OF)
    before = s.search({"Limit": "50"})
    top = before["listings"][0]["ListPrice"]
    s.insert_new(3)
    after = s.search({"Limit": "50"})
    assert after["total"] == before["total"] + 3
    fresh = after["listings"][:3]
    assert all(r["ListPrice"] > top and r["StandardStatus"] == "Active" for r in fresh)
    assert all(r["OriginalEntryTimestamp"] == s.now.strftime("%Y-%m-%dT%H:%M:%SZ") for r in fresh)
    assert ids(after["listings"][3:]) == ids(before["listings"][:47])  # everything shifted by 3
    assert not set(ids(fresh)) & set(ids(before["listings"]))
    assert all(s.detail(i)["ListingId"] == i for i in ids(fresh))
    assert s.changes({"Since": "2000-01-01", "ListingIds": ",".join(ids(fresh))})["total"] == 0
    s.insert_new(2, property_type="Residential Lease")
    lease = s.search({"PropertyType": "Residential Lease", "Limit": "2"})["listings"]
    assert all(ts(r["OriginalEntryTimestamp"]) == s.now.replace(microsecond=0) for r in lease)
    s.set_now(AS_OF + timedelta(days=10))  # inserted listings survive a clock move
    assert s.search({})["total"] >= after["total"]


def answers(s: ListingStore) -> Iterator[str]:
    for params in (
        {},
        {"PropertyType": "Residential Lease", "Sort": "-listdate"},
        {"Status": "Closed", "Offset": "40"},
    ):
        page = s.search(params)
        yield json.dumps(page, sort_keys=False)
        yield json.dumps([s.detail(r["ListingId"]) for r in page["listings"]])
        yield json.dumps(
            s.changes({"Since": "2000-01-01", "ListingIds": ",".join(ids(page["listings"]))})
        )


def test_deterministic() -> None:
    a, b = ListingStore(700, 9, as_of=AS_OF), ListingStore(700, 9, as_of=AS_OF)
    assert list(answers(a)) == list(answers(b))
    a.insert_new(2)
    b.insert_new(2)
    assert list(answers(a)) == list(answers(b))
    other = ListingStore(700, 10, as_of=AS_OF)
    assert list(answers(other)) != list(answers(ListingStore(700, 9, as_of=AS_OF)))


def test_small_and_empty_markets() -> None:
    empty = ListingStore(0, 1, as_of=AS_OF)
    assert empty.search({}) == {"total": 0, "offset": 0, "limit": 20, "listings": []}
    empty.insert_new(1)
    assert empty.search({})["total"] == 1
    with pytest.raises(ValueError):
        ListingStore(-1, 1, as_of=AS_OF)


@pytest.mark.slow
def test_200k_listings() -> None:
    s = ListingStore(200_000, 7, as_of=AS_OF)  # start-up and search speed: benchmarks/bench_sandbox
    totals = sum(
        s.search({"PropertyType": p, "Status": st})["total"]
        for p in PROPERTY_TYPES
        for st in STATUSES
    )
    assert totals == 200_000
    params = {
        "City": "Miami",
        "MinListPrice": "300000",
        "MaxListPrice": "900000",
        "MinBedroomsTotal": "2",
        "Limit": "50",
    }
    page = s.search(params)
    assert page["total"] > 50 and len(page["listings"]) == 50
    assert all(
        300_000 <= r["ListPrice"] <= 900_000 and r["City"] == "Miami" for r in page["listings"]
    )
    assert not math.isnan(page["listings"][0]["coordinates"]["lat"])


@pytest.mark.parametrize("raw", ["1.5e6", "2E+3", "5e-324", ".5", "3."])
def test_number_parameters_accept_json_number_forms(store: ListingStore, raw: str) -> None:
    # The spec types these as "number": exponent notation is a number too (found by schemathesis).
    store.search({"MaxLotSize": raw})


@pytest.mark.parametrize("raw", ["1e999", "nan", "inf", "1e", "abc"])
def test_number_parameters_refuse_non_finite_or_malformed(store: ListingStore, raw: str) -> None:
    with pytest.raises(SandboxError) as exc:
        store.search({"MaxLotSize": raw})
    assert exc.value.status == 400 and "MaxLotSize" in (exc.value.detail or "")
