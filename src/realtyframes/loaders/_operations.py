"""The spec's operations and their parameters, declared once: the table :data:`OPERATIONS` (name,
host, path, path parameter, validator, one-line summary) and the parameter tables each validator
checks with (written from the spec, ``service-api.md``, independently of the sandbox).

A validator returns the query normalised to strings (booleans ``true``/``false``, timestamps as
UTC ``Z``, Subtypes in the spec's order) or raises a QueryError naming the parameter and what is
allowed. ``ApiClient.call`` reads it through the ``prepare`` a ``Client`` gives it. Each path is
written here and nowhere else; the checking itself is :mod:`._checkers`.

>>> prepare("listings", {"City": "Miami", "MinListPrice": 300000, "Pool": True}).params
{'City': 'Miami', 'MinListPrice': '300000', 'Pool': 'true'}
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from realtyframes._spec import (
    ANALYTICS_DEFAULTS,
    CHANGE_TYPES,
    DEVICES,
    FEATURE_FLAGS,
    LISTING_DEFAULTS,
    PERIODS,
    SENIOR_COMMUNITY,
    SORTS,
    STATUSES,
    SUBTYPES,
)
from realtyframes._spec import PROPERTY_TYPES as PROPERTY_TYPES  # re-exported (CLI help)
from realtyframes.api import MAX_PAGE_SIZE
from realtyframes.errors import QueryError
from realtyframes.loaders._checkers import (
    Checker,
    Operation,
    PreparedRequest,
    _bool,
    _enum,
    _format_number,
    _list_of_text,
    _property_type,
    _Range,
    _since,
    _suggest,
    _text,
    _validate,
)

__all__ = ["OPERATIONS", "Operation", "prepare"]


# -- parameter tables -------------------------------------------------------------------------------
def _text_checker(what: str) -> Checker:
    return lambda name, value: _text(name, value, what)


def _enum_checker(allowed: tuple[str, ...]) -> Checker:
    return lambda name, value: _enum(name, value, allowed)


def _range_checker(rng: _Range) -> Checker:
    return lambda name, value: _format_number(rng.check(name, value))


def _senior(name: str, value: Any) -> str:
    if value is True:
        return "true"
    if isinstance(value, str) and value in SENIOR_COMMUNITY:
        return value
    hint = (
        " (to leave 55+ communities out use 'exclude'; omit it for no filter)"
        if value is False
        else ""
    )
    raise QueryError(name, f"unknown value {value!r}{hint}", (True, *SENIOR_COMMUNITY))


#: Upper bound of prices, fees and areas: far above any real listing (10 billion), so a slip such as
#: ``MinListPrice=1e30`` is refused instead of being sent as a 31-digit number.
SANE_MAXIMUM = 1e10
_PRICE = _Range(0, SANE_MAXIMUM)
_COUNT = _Range(0, 10_000, integer=True)

#: Min/Max pairs of the listing search and their range rule.
RANGE_PAIRS: dict[str, tuple[str, str, _Range]] = {
    "ListPrice": ("MinListPrice", "MaxListPrice", _PRICE),
    "BedroomsTotal": ("MinBedroomsTotal", "MaxBedroomsTotal", _COUNT),
    "Bathrooms": ("MinBathrooms", "MaxBathrooms", _Range(0, 10_000)),
    "LivingArea": ("MinLivingArea", "MaxLivingArea", _PRICE),
    "LotSize": ("MinLotSize", "MaxLotSize", _PRICE),
    "YearBuilt": ("MinYearBuilt", "MaxYearBuilt", _Range(1000, 9999, integer=True)),
    "AssociationFee": ("MinAssociationFee", "MaxAssociationFee", _PRICE),
}

_PAGING: dict[str, Checker] = {
    "Offset": _range_checker(_Range(0, None, integer=True)),
    "Limit": _range_checker(_Range(1, MAX_PAGE_SIZE, integer=True)),
}

#: The paging parameters of the list operations (the loaders page by themselves).
PAGING_PARAMETERS: tuple[str, ...] = tuple(_PAGING)

LISTING_SEARCH: dict[str, Checker] = {
    "PropertyType": lambda name, value: _property_type(name, value),
    "Status": _enum_checker(STATUSES),
    "Subtypes": lambda name, value: ",".join(_list_of_text(name, value, "a list of subtypes")),
    "City": _text_checker("a city name"),
    "PostalCode": _text_checker("a postal code as a string, e.g. '33139'"),
    "StreetNumber": _text_checker("a street number as a string"),
    "StreetName": _text_checker("a street name"),
    "UnitNumber": _text_checker("a unit number as a string"),
    "BuildingName": _text_checker("a building name"),
    "SubdivisionName": _text_checker("a subdivision name"),
    **{
        bound: _range_checker(rng)
        for low, high, rng in RANGE_PAIRS.values()
        for bound in (low, high)
    },
    **{flag: _bool for flag in FEATURE_FLAGS},
    "SeniorCommunity": _senior,
    "Agent": _text_checker("an agent MLS ID"),
    "Broker": _text_checker("a broker/office MLS ID"),
    "MaxDaysOnMarket": _range_checker(_COUNT),
    "Since": _since,
    "Sort": _enum_checker(SORTS),
    **_PAGING,
}

LISTING_CHANGES: dict[str, Checker] = {
    "Since": _since,
    "ListingIds": lambda name, value: ",".join(
        dict.fromkeys(_list_of_text(name, value, "a non-empty list of MLS listing numbers"))
    ),
    "ChangeType": _enum_checker(CHANGE_TYPES),
    **_PAGING,
}

ANALYTICS: dict[str, Checker] = {
    "Period": _enum_checker(PERIODS),
    "Page": _text_checker("a page path, e.g. '/listings'"),
    "Referrer": _text_checker("a referrer name or 'Direct'"),
    "Browser": _text_checker("a browser name"),
    "Country": _text_checker("a country name"),
    "OS": _text_checker("an operating system name"),
    "Device": _enum_checker(DEVICES),
    "VisitorId": _text_checker("a visitor ID"),
    "UtmSource": _text_checker("a UTM source"),
    "UtmMedium": _text_checker("a UTM medium"),
    "UtmCampaign": _text_checker("a UTM campaign name"),
}

CONTACTS: dict[str, Checker] = dict(_PAGING)


def validate_listing_search(params: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Validate the filters of ``GET /v1/listings``; returns them as query strings.

    Checks types, enumerations, ranges, Min <= Max, Limit <= 50, ISO 8601 ``Since``, and that
    ``Subtypes`` are valid for the PropertyType (Residential by default; the spec lists subtypes
    for Residential and Residential Lease only).

    >>> validate_listing_search({"PropertyType": "Residential Lease", "Subtypes": ["Apartment"]})
    {'PropertyType': 'Residential Lease', 'Subtypes': 'Apartment'}
    """
    result = _validate("listings", LISTING_SEARCH, params)
    for low, high, rng in RANGE_PAIRS.values():
        if low in result and high in result and float(result[low]) > float(result[high]):
            raise QueryError(
                low,
                f"{low}={result[low]} is greater than {high}={result[high]}",
                f"{low} <= {high} ({rng.describe()})",
            )
    if "Subtypes" in result:
        property_type = result.get("PropertyType", LISTING_DEFAULTS["PropertyType"])
        allowed = SUBTYPES.get(property_type)
        if allowed is None:
            raise QueryError(
                "Subtypes",
                f"not available for PropertyType {property_type!r}",
                "Subtypes only with PropertyType " + " or ".join(map(repr, SUBTYPES)),
            )
        given = result["Subtypes"].split(",")
        for subtype in given:
            if subtype not in allowed:
                near = _suggest(subtype, allowed)
                hint = f"; did you mean {near!r}?" if near else ""
                raise QueryError(
                    "Subtypes",
                    f"unknown subtype {subtype!r} for PropertyType {property_type!r}{hint}",
                    allowed,
                )
        result["Subtypes"] = ",".join(s for s in allowed if s in set(given))
    return result


def validate_listing_changes(params: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Validate ``GET /v1/listings/changes``: ``Since`` and non-empty ``ListingIds`` required.

    >>> validate_listing_changes({"Since": "2024-05-01", "ListingIds": ["A1", "A2"]})
    {'Since': '2024-05-01T00:00:00Z', 'ListingIds': 'A1,A2'}
    """
    return _validate("listing_changes", LISTING_CHANGES, params, required=("Since", "ListingIds"))


def validate_analytics(params: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Validate ``GET /v1/analytics`` (Period, Device enumerations; text filters).

    >>> validate_analytics({"Period": "7d", "Device": "mobile"})
    {'Period': '7d', 'Device': 'mobile'}
    """
    return _validate("analytics", ANALYTICS, params)


def validate_paging(params: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Validate ``Offset``/``Limit`` paging (contacts).

    >>> validate_paging({"Offset": 100, "Limit": 50})
    {'Offset': '100', 'Limit': '50'}
    """
    return _validate("contacts", CONTACTS, params)


def _table(*operations: Operation) -> Mapping[str, Operation]:
    return MappingProxyType({op.name: op for op in operations})


#: The spec's operations by name, in the spec's order (read-only).
OPERATIONS: Mapping[str, Operation] = _table(
    Operation(
        "listings",
        "base",
        "/v1/listings",
        validate_listing_search,
        summary="Search listings (every page): one row per ListingId",
        parameters=LISTING_SEARCH,
        defaults=LISTING_DEFAULTS,
    ),
    Operation(
        "listing",
        "base",
        "/v1/listings/{}",
        path_param="ListingId",
        summary="One listing with every detail field and its Media",
    ),
    Operation(
        "listing_changes",
        "base",
        "/v1/listings/changes",
        validate_listing_changes,
        summary="Price and status changes of listings since a time: one row per change",
        parameters=LISTING_CHANGES,
    ),
    Operation(
        "contacts",
        "base",
        "/v1/contacts",
        validate_paging,
        summary="Every CRM contact: one row per contact",
        parameters=CONTACTS,
    ),
    Operation(
        "contact",
        "base",
        "/v1/contacts/{}",
        path_param="contactId",
        summary="One CRM contact",
    ),
    Operation(
        "contact_activity",
        "base",
        "/v1/contacts/{}/activity",
        path_param="contactId",
        summary="A contact's activity: one row per event",
    ),
    Operation(
        "analytics",
        "base",
        "/v1/analytics",
        validate_analytics,
        summary="Website analytics of a period: overview plus breakdowns",
        parameters=ANALYTICS,
        defaults=ANALYTICS_DEFAULTS,
    ),
    Operation("me", "base", "/v1/me", summary="The current user, plan and scopes"),
    Operation(
        "legacy_me",
        "legacy",
        "/api/me",
        summary="The current user (legacy host, deprecated; needs an API key)",
    ),
    Operation(
        "legacy_contacts",
        "legacy",
        "/api/getContacts",
        summary="The contacts list of the legacy host (deprecated; needs an API key)",
    ),
)


def prepare(operation: str, params: Mapping[str, Any] | None = None) -> PreparedRequest:
    """Validate ``params`` for ``operation`` and build its path; raises QueryError before any I/O.

    Path identifiers are given under their spec names (``ListingId``, ``contactId``).

    >>> prepare("listing", {"ListingId": "A1"}).path
    '/v1/listings/A1'
    >>> prepare("listings", {"Limit": 50}).params
    {'Limit': '50'}
    """
    op = OPERATIONS.get(operation)
    if op is None:
        near = _suggest(operation, OPERATIONS)
        hint = f"; did you mean {near!r}?" if near else ""
        raise QueryError("operation", f"unknown operation {operation!r}{hint}", list(OPERATIONS))
    return op.prepare(params)
