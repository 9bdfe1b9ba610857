"""Client-side validation of every parameter of the spec, before any request is sent.

Written from the spec (``service-api.md``), independently of the sandbox. Each validator returns
the query parameters normalised to strings (booleans ``true``/``false``, timestamps as UTC ``Z``
strings, Subtypes in the spec's order), or raises :class:`~realtyframes.errors.QueryError` naming
the parameter and what is allowed. ``None`` means "not given". Unknown names are refused with a
"did you mean" for near misses.

>>> validate_listing_search({"City": "Miami", "MinListPrice": 300000, "Pool": True})
{'City': 'Miami', 'MinListPrice': '300000', 'Pool': 'true'}
>>> validate_listing_search({"city": "Miami"})
Traceback (most recent call last):
...
realtyframes.errors.QueryError: city: unknown parameter for listings; did you mean 'City'?
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from realtyframes._spec import (
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
from realtyframes.api._checkers import (
    _bool,
    _enum,
    _format_number,
    _list_of_text,
    _property_type,
    _Range,
    _since,
    _text,
    _type_name,
)
from realtyframes.api._constants import MAX_PAGE_SIZE
from realtyframes.errors import QueryError

# The spec's enumerations come from realtyframes._spec (re-exported: the CLI's help reads them).


# -- parameter tables -------------------------------------------------------------------------------
Checker = Callable[[str, Any], str]


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
_YEAR = _Range(1000, 9999, integer=True)
_OFFSET = _Range(0, None, integer=True)
_LIMIT = _Range(1, MAX_PAGE_SIZE, integer=True)

#: Min/Max pairs of the listing search and their range rule.
RANGE_PAIRS: dict[str, tuple[str, str, _Range]] = {
    "ListPrice": ("MinListPrice", "MaxListPrice", _PRICE),
    "BedroomsTotal": ("MinBedroomsTotal", "MaxBedroomsTotal", _COUNT),
    "Bathrooms": ("MinBathrooms", "MaxBathrooms", _Range(0, 10_000)),
    "LivingArea": ("MinLivingArea", "MaxLivingArea", _PRICE),
    "LotSize": ("MinLotSize", "MaxLotSize", _PRICE),
    "YearBuilt": ("MinYearBuilt", "MaxYearBuilt", _YEAR),
    "AssociationFee": ("MinAssociationFee", "MaxAssociationFee", _PRICE),
}

_PAGING: dict[str, Checker] = {
    "Offset": _range_checker(_OFFSET),
    "Limit": _range_checker(_LIMIT),
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


def _suggest(name: str, allowed: Iterable[str]) -> str | None:
    allowed = list(allowed)
    squash = name.replace("_", "").replace("-", "").replace(" ", "").lower()
    for candidate in allowed:
        if candidate.lower() == squash or candidate.lower() == name.lower():
            return candidate
    near = difflib.get_close_matches(name, allowed, n=1, cutoff=0.6)
    if not near:
        lowered = {a.lower(): a for a in allowed}
        near = [lowered[m] for m in difflib.get_close_matches(squash, lowered, n=1, cutoff=0.6)]
    return near[0] if near else None


def _validate(
    operation: str,
    table: Mapping[str, Checker],
    params: Mapping[str, Any] | None,
    required: Iterable[str] = (),
) -> dict[str, str]:
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise QueryError("params", f"expected a mapping of parameters, got {_type_name(params)}")
    result: dict[str, str] = {}
    for name, value in params.items():
        if not isinstance(name, str):
            raise QueryError(str(name), "parameter names must be strings", sorted(table))
        checker = table.get(name)
        if checker is None:
            near = _suggest(name, table)
            hint = f"did you mean {near!r}?" if near else "its names are in .allowed"
            raise QueryError(
                name, f"unknown parameter for {operation}; {hint}", list(table), brief=True
            )
        if value is None:
            continue
        result[name] = checker(name, value)
    for name in required:
        if name not in result:
            raise QueryError(name, f"required by {operation}", _describe_required(name))
    return result


def _describe_required(name: str) -> str:
    return {
        "Since": "an ISO 8601 timestamp with a time zone, a date, or a tz-aware datetime",
        "ListingIds": "a non-empty list of MLS listing numbers",
    }.get(name, "a value")


def refuse_none(params: Mapping[str, Any]) -> None:
    """A user's filter given as ``None`` is an error, not "not given": dropping it silently would
    run another query than the one asked (``PropertyType=None`` would search Residential).

    >>> refuse_none({"PropertyType": None})
    Traceback (most recent call last):
    ...
    realtyframes.errors.QueryError: PropertyType: None is not a value; allowed: a value, or leave the parameter out
    """
    for name, value in params.items():
        if value is None:
            raise QueryError(
                str(name), "None is not a value", "a value, or leave the parameter out"
            )


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


def validate_paging(
    params: Mapping[str, Any] | None = None, operation: str = "contacts"
) -> dict[str, str]:
    """Validate ``Offset``/``Limit`` paging (contacts).

    >>> validate_paging({"Offset": 100, "Limit": 50})
    {'Offset': '100', 'Limit': '50'}
    """
    return _validate(operation, CONTACTS, params)


def validate_path_id(name: str, value: Any) -> str:
    """A path identifier (ListingId, contactId), percent-encoded for the URL.

    >>> validate_path_id("ListingId", "A1234")
    'A1234'
    """
    text = _text(name, value, "a non-empty identifier string")
    if "/" in text or "\\" in text:
        raise QueryError(name, f"{value!r} contains a slash", "an identifier without '/'")
    if text in (".", ".."):
        raise QueryError(name, f"{value!r} is not an identifier", "an identifier")
    if name == "ListingId" and text == "changes":
        raise QueryError(
            name, "'changes' is the change-feed path, not a ListingId", "an MLS number"
        )
    return quote(text, safe="")


# -- operations -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PreparedRequest:
    """A validated request: path, query parameters (strings) and host."""

    operation: str
    path: str
    params: dict[str, str]
    host: str = "base"


Validator = Callable[[Mapping[str, Any] | None], dict[str, str]]


def build_request(
    operation: str,
    path: str,
    params: Mapping[str, Any] | None,
    *,
    host: str = "base",
    path_param: str | None = None,
    validate: Validator | None = None,
) -> PreparedRequest:
    """Validate ``params`` and fill the path template's ``{}`` with ``params[path_param]``
    (percent-encoded); raises QueryError before any I/O.

    >>> build_request("contact", "/v1/contacts/{}", {"contactId": "c 1"}, path_param="contactId").path
    '/v1/contacts/c%201'
    """
    params = dict(params or {})
    if path_param is not None:
        if params.get(path_param) is None:
            raise QueryError(path_param, f"required by {operation}", "a non-empty identifier")
        path = path.format(validate_path_id(path_param, params.pop(path_param)))
    query = validate(params) if validate is not None else _validate(operation, {}, params)
    return PreparedRequest(operation, path, query, host)
