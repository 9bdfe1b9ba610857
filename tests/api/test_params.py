"""Client-side validation: every parameter family refused with a QueryError before any request."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import httpx
import pytest

from realtyframes._spec import FEATURE_FLAGS, PROPERTY_TYPES
from realtyframes.api import ApiClient
from realtyframes.errors import QueryError
from realtyframes.loaders import (
    LISTING_SEARCH,
    SUBTYPES,
    prepare,
    validate_analytics,
    validate_listing_changes,
    validate_listing_search,
    validate_paging,
)


@pytest.fixture
def counted(sandbox_url: str) -> Iterator[tuple[ApiClient, list[httpx.Request]]]:
    sent: list[httpx.Request] = []
    with ApiClient(sandbox_url, event_hooks={"request": [sent.append]}, prepare=prepare) as api:
        yield api, sent


# (operation, params, offending parameter, text expected in the message)
BAD: list[tuple[str, dict[str, Any], str, str]] = [
    # names
    ("listings", {"city": "Miami"}, "city", "did you mean 'City'"),
    ("listings", {"min_list_price": 1}, "min_list_price", "did you mean 'MinListPrice'"),
    ("listings", {"MinListPrise": 1}, "MinListPrise", "did you mean 'MinListPrice'"),
    ("listings", {"Period": "7d"}, "Period", "unknown parameter for listings"),
    ("analytics", {"period": "7d"}, "period", "did you mean 'Period'"),
    (
        "listing_changes",
        {"Since": "2026-01-01", "ListingIds": ["A"], "Status": "Active"},
        "Status",
        "unknown",
    ),
    ("me", {"Limit": 5}, "Limit", "unknown parameter for me"),
    # enumerations
    ("listings", {"PropertyType": "House"}, "PropertyType", "Residential Lease"),
    ("listings", {"PropertyType": "residential"}, "PropertyType", "did you mean 'Residential'"),
    ("listings", {"Status": "Sold"}, "Status", "Active Under Contract"),
    ("listings", {"Status": ["Active", "Pending"]}, "Status", "expected a string"),
    ("listings", {"Sort": "price"}, "Sort", "-listprice"),
    (
        "listing_changes",
        {"Since": "2026-01-01", "ListingIds": ["A"], "ChangeType": "price"},
        "ChangeType",
        "price_change",
    ),
    ("analytics", {"Period": "14d"}, "Period", "24h, 7d, 30d, 90d, 1y"),
    ("analytics", {"Device": "phone"}, "Device", "desktop, mobile, tablet"),
    ("listings", {"SeniorCommunity": False}, "SeniorCommunity", "exclude"),
    ("listings", {"SeniorCommunity": "yes"}, "SeniorCommunity", "exclude"),
    # types
    ("listings", {"City": 33139}, "City", "expected a string"),
    ("listings", {"PostalCode": 33139}, "PostalCode", "'33139'"),
    ("listings", {"City": ""}, "City", "empty"),
    ("listings", {"City": " Miami"}, "City", "spaces"),
    ("listings", {"City": "Mi\nami"}, "City", "control"),
    ("listings", {"MinListPrice": "cheap"}, "MinListPrice", "not a number"),
    ("listings", {"MinListPrice": True}, "MinListPrice", "expected a number"),
    ("listings", {"MinListPrice": float("nan")}, "MinListPrice", "finite"),
    ("listings", {"MinListPrice": [1]}, "MinListPrice", "expected a number"),
    ("listings", {"Pool": "yes"}, "Pool", "True, False"),
    ("listings", {"Waterfront": 1}, "Waterfront", "expected a boolean"),
    ("listings", {"Pool": "True"}, "Pool", "expected a boolean"),
    ("analytics", {"Page": 3}, "Page", "expected a string"),
    ("contacts", {"Offset": "ten"}, "Offset", "not a number"),
    # ranges
    ("listings", {"MinListPrice": -1}, "MinListPrice", "too small"),
    ("listings", {"MinBedroomsTotal": 1.5}, "MinBedroomsTotal", "whole number"),
    ("listings", {"MaxBathrooms": -0.5}, "MaxBathrooms", "too small"),
    ("listings", {"MinYearBuilt": 99}, "MinYearBuilt", "from 1000 to 9999"),
    ("listings", {"MaxDaysOnMarket": -3}, "MaxDaysOnMarket", "too small"),
    ("listings", {"Limit": 51}, "Limit", "from 1 to 50"),
    ("listings", {"Limit": 0}, "Limit", "from 1 to 50"),
    ("listings", {"Offset": -1}, "Offset", ">= 0"),
    (
        "listing_changes",
        {"Since": "2026-01-01", "ListingIds": ["A"], "Limit": 500},
        "Limit",
        "from 1 to 50",
    ),
    ("contacts", {"Limit": 51}, "Limit", "from 1 to 50"),
    # Min <= Max
    (
        "listings",
        {"MinListPrice": 900_000, "MaxListPrice": 100_000},
        "MinListPrice",
        "MinListPrice <= MaxListPrice",
    ),
    (
        "listings",
        {"MinBedroomsTotal": 4, "MaxBedroomsTotal": 2},
        "MinBedroomsTotal",
        "<= MaxBedroomsTotal",
    ),
    ("listings", {"MinYearBuilt": 2020, "MaxYearBuilt": 1990}, "MinYearBuilt", "<= MaxYearBuilt"),
    (
        "listings",
        {"MinLivingArea": 3000, "MaxLivingArea": 1000},
        "MinLivingArea",
        "<= MaxLivingArea",
    ),
    ("listings", {"MinLotSize": 10, "MaxLotSize": 5}, "MinLotSize", "<= MaxLotSize"),
    ("listings", {"MinBathrooms": 3, "MaxBathrooms": 2}, "MinBathrooms", "<= MaxBathrooms"),
    (
        "listings",
        {"MinAssociationFee": 900, "MaxAssociationFee": 100},
        "MinAssociationFee",
        "<= MaxAssociationFee",
    ),
    # timestamps
    ("listings", {"Since": "yesterday"}, "Since", "ISO 8601"),
    ("listings", {"Since": "2026-02-30"}, "Since", "not a valid date"),
    ("listings", {"Since": "2026-06-01T10:00:00"}, "Since", "no time zone"),
    ("listings", {"Since": datetime(2026, 6, 1)}, "Since", "no time zone"),
    ("listings", {"Since": 1_750_000_000}, "Since", "expected a timestamp"),
    ("listing_changes", {"ListingIds": ["A"]}, "Since", "required"),
    # subtypes
    ("listings", {"Subtypes": ["Castle"]}, "Subtypes", "Single Family Residence"),
    ("listings", {"Subtypes": "condominium"}, "Subtypes", "did you mean 'Condominium'"),
    ("listings", {"Subtypes": ["Apartment"]}, "Subtypes", "for PropertyType 'Residential'"),
    (
        "listings",
        {"PropertyType": "Residential Lease", "Subtypes": ["1/2 Duplex"]},
        "Subtypes",
        "Efficiency",
    ),
    (
        "listings",
        {"PropertyType": "Land", "Subtypes": ["Villa"]},
        "Subtypes",
        "not available for PropertyType 'Land'",
    ),
    ("listings", {"Subtypes": []}, "Subtypes", "empty"),
    ("listings", {"Subtypes": ["Villa", 3]}, "Subtypes", "items must be strings"),
    # listing ids
    ("listing_changes", {"Since": "2026-01-01", "ListingIds": []}, "ListingIds", "empty"),
    ("listing_changes", {"Since": "2026-01-01", "ListingIds": ""}, "ListingIds", "empty"),
    (
        "listing_changes",
        {"Since": "2026-01-01", "ListingIds": ["A1", ""]},
        "ListingIds",
        "empty item",
    ),
    (
        "listing_changes",
        {"Since": "2026-01-01", "ListingIds": [101]},
        "ListingIds",
        "must be strings",
    ),
    ("listing_changes", {"Since": "2026-01-01"}, "ListingIds", "required"),
    # path identifiers and operations
    ("listing", {}, "ListingId", "required"),
    ("listing", {"ListingId": "changes"}, "ListingId", "change-feed path"),
    ("listing", {"ListingId": "../me"}, "ListingId", "slash"),
    ("contact", {"contactId": ""}, "contactId", "empty"),
    ("contact_activity", {"contactId": 12}, "contactId", "expected a string"),
    ("listngs", {}, "operation", "did you mean 'listings'"),
]


@pytest.mark.parametrize(("operation", "params", "param", "text"), BAD)
def test_bad_input_refused_before_any_request(
    counted: tuple[ApiClient, list[httpx.Request]],
    operation: str,
    params: dict[str, Any],
    param: str,
    text: str,
) -> None:
    api, sent = counted
    with pytest.raises(QueryError) as caught:
        api.call(operation, params)
    assert caught.value.param == param
    assert text in str(caught.value)
    assert isinstance(caught.value, ValueError)
    assert sent == []


def test_messages_name_the_allowed_values() -> None:
    with pytest.raises(QueryError) as caught:
        validate_listing_search({"Status": "Sold"})
    assert caught.value.allowed == "Active, Pending, Closed, Active Under Contract"
    with pytest.raises(QueryError) as caught:
        validate_listing_search({"citty": "Miami"})
    assert caught.value.allowed is not None and "City" in caught.value.allowed


def test_valid_input_is_normalised() -> None:
    tz = timezone(timedelta(hours=-5))
    assert validate_listing_search(
        {
            "PropertyType": "Residential",
            "Status": "Active Under Contract",
            "City": "Fort Lauderdale",
            "MinListPrice": 250_000.0,
            "MaxListPrice": Decimal("1250000.5"),
            "MinBedroomsTotal": 0,
            "MaxBathrooms": 2.5,
            "MinYearBuilt": "1990",
            "Pool": True,
            "Waterfront": "false",
            "SeniorCommunity": True,
            "Since": datetime(2026, 5, 1, 7, 30, tzinfo=tz),
            "Subtypes": {"Townhouse", "Condominium"},
            "Sort": "-listdate",
            "Offset": 100,
            "Limit": 50,
            "Agent": None,  # None means "not given"
        }
    ) == {
        "PropertyType": "Residential",
        "Status": "Active Under Contract",
        "City": "Fort Lauderdale",
        "MinListPrice": "250000",
        "MaxListPrice": "1250000.5",
        "MinBedroomsTotal": "0",
        "MaxBathrooms": "2.5",
        "MinYearBuilt": "1990",
        "Pool": "true",
        "Waterfront": "false",
        "SeniorCommunity": "true",
        "Since": "2026-05-01T12:30:00Z",
        "Subtypes": "Condominium,Townhouse",  # the spec's order
        "Sort": "-listdate",
        "Offset": "100",
        "Limit": "50",
    }
    assert validate_listing_search({"Since": date(2026, 1, 2)}) == {"Since": "2026-01-02T00:00:00Z"}
    assert validate_listing_search({"Since": "2026-01-02T03:04:05.250+01:00"}) == {
        "Since": "2026-01-02T02:04:05.250000Z"
    }
    assert validate_listing_search({"SeniorCommunity": "exclude"}) == {"SeniorCommunity": "exclude"}
    assert validate_listing_changes(
        {
            "Since": datetime(2026, 1, 1, tzinfo=UTC),
            "ListingIds": "A1, A2,A1",
            "ChangeType": "price_change",
        }
    ) == {"Since": "2026-01-01T00:00:00Z", "ListingIds": "A1,A2", "ChangeType": "price_change"}
    assert validate_analytics({"Period": "1y", "Referrer": "Direct", "UtmCampaign": "spring"}) == {
        "Period": "1y",
        "Referrer": "Direct",
        "UtmCampaign": "spring",
    }
    assert validate_paging({"Limit": "20"}) == {"Limit": "20"}
    assert prepare("contact_activity", {"contactId": "c 1"}).path == "/v1/contacts/c%201/activity"
    assert prepare("legacy_contacts").host == "legacy"


def test_every_spec_parameter_has_a_checker() -> None:
    spec_names = {
        "PropertyType", "Status", "Subtypes", "City", "PostalCode", "StreetNumber", "StreetName",
        "UnitNumber", "BuildingName", "SubdivisionName", "MinListPrice", "MaxListPrice",
        "MinBedroomsTotal", "MaxBedroomsTotal", "MinBathrooms", "MaxBathrooms", "MinLivingArea",
        "MaxLivingArea", "MinLotSize", "MaxLotSize", "MinYearBuilt", "MaxYearBuilt",
        "MinAssociationFee", "MaxAssociationFee", *FEATURE_FLAGS, "SeniorCommunity", "Agent",
        "Broker", "MaxDaysOnMarket", "Since", "Sort", "Offset", "Limit",
    }  # fmt: skip
    assert set(LISTING_SEARCH) == spec_names
    assert len(FEATURE_FLAGS) == 11
    assert set(SUBTYPES) == {"Residential", "Residential Lease"} < set(PROPERTY_TYPES)


def test_valid_calls_reach_the_sandbox_and_it_agrees(
    counted: tuple[ApiClient, list[httpx.Request]],
) -> None:
    api, sent = counted
    page = api.call(
        "listings",
        {
            "PropertyType": "Residential",
            "Subtypes": ["Condominium", "Townhouse"],
            "MinListPrice": 100_000,
            "MaxListPrice": 2_000_000,
            "Since": date(2024, 1, 1),
            "Pool": False,
            "Limit": 50,
        },
    )
    assert page["limit"] == 50 and page["total"] >= len(page["listings"])
    assert all(item["PropertySubType"] in ("Condominium", "Townhouse") for item in page["listings"])
    ids = [item["ListingId"] for item in page["listings"][:3]]
    changes = api.call("listing_changes", {"Since": "2024-01-01T00:00:00Z", "ListingIds": ids})
    assert isinstance(changes, dict)
    assert api.call("analytics", {"Period": "7d", "Device": "mobile"})["period"] == "7d"
    assert len(sent) == 3
