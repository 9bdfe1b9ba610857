"""The OpenAPI 3.1 document of the sandbox, served at ``/openapi.json``: true to the service spec.

Every operation of the spec with its parameters (types, enumerations, ranges, defaults), its 200
body (the spec's shapes plus the decisions of design.md where the spec says "not shown"), both
error representations (ApiError as ``application/json``, Problem as ``application/problem+json``;
the legacy host's ``{error, message}``), the rate-limit headers on every answer, ``Retry-After`` on
429, the deprecation headers of the legacy operations, and the security schemes.

>>> doc = openapi_document("http://127.0.0.1:8000")
>>> doc["openapi"], doc["servers"][0]["url"]
('3.1.0', 'http://127.0.0.1:8000')
>>> sorted(doc["paths"])[:3]
['/', '/api/getContacts', '/api/me']
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["openapi_document"]

JSON = "application/json"
PROBLEM = "application/problem+json"
FORM = "application/x-www-form-urlencoded"
HTML = "text/html"

#: The spec's error table: status -> (code, message, legacy type name).
ERRORS: dict[int, tuple[str, str, str]] = {
    400: ("bad_request", "Invalid or missing parameters", "BadRequestError"),
    401: ("invalid_token", "Invalid or expired access token", "Unauthorized"),
    403: ("insufficient_scope", "Token is missing the required OAuth scope", "Forbidden"),
    404: ("not_found", "Resource not found", "NotFoundError"),
    429: ("rate_limit_exceeded", "Rate limit exceeded", "TooManyRequests"),
    500: ("server_error", "Internal server error", "ServerError"),
}
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
SUBTYPES = (
    "Single Family Residence",
    "Condominium",
    "Townhouse",
    "Villa",
    "Condo - Hotel",
    "1/2 Duplex",
    "Mobile Home",
    "Apartment",
    "Efficiency",
)
SORTS = ("-listprice", "listprice", "-listdate", "beds", "baths")
CHANGE_TYPES = ("price_change", "status_change")
PERIODS = ("24h", "7d", "30d", "90d", "1y")
DEVICES = ("desktop", "mobile", "tablet")
SCOPES = ("listings", "contacts", "analytics")
STAGES = ("lead", "client", "active-client", "past-client")
SOURCES = ("referral", "signup form", "open house", "listing inquiry", "social", "import")
ACTIVITY_TYPES = (
    "page_view",
    "listing_view",
    "saved_search",
    "email_open",
    "call",
    "showing",
    "offer",
    "note",
)
FEATURE_FILTERS = {
    "Pool": "Only listings with a private pool",
    "Waterfront": "Waterfront listings",
    "Penthouse": "Penthouses",
    "Furnished": "Furnished listings",
    "PetsAllowed": "Listings that allow pets",
    "Gated": "Gated communities",
    "TennisCourt": "With a tennis court",
    "GolfCourse": "On or with a golf course",
    "BoatDock": "With a boat dock",
    "ShortSale": "Short sales",
    "SeasonalRentals": "Short-term (seasonal) leases",
}
RANGE_FILTERS = {
    "ListPrice": ("List price, USD", "number"),
    "BedroomsTotal": ("Bedrooms; 0 means studio", "number"),
    "Bathrooms": ("Bathrooms", "number"),
    "LivingArea": ("Living area, sqft", "number"),
    "LotSize": ("Lot size, sqft", "number"),
    "YearBuilt": ("Year built", "number"),
    "AssociationFee": ("Monthly HOA fee, USD", "number"),
}
ANALYTICS_FILTERS = {
    "Page": "Sessions that viewed this page path (exact match)",
    "Referrer": "Sessions from this referrer: a referrer name or Direct (exact match)",
    "Browser": "Browser name (exact match)",
    "Country": "Country name (exact match)",
    "OS": "Operating system (exact match)",
    "VisitorId": "One visitor (exact match)",
    "UtmSource": "UTM source (exact match; empty: sessions without one)",
    "UtmMedium": "UTM medium (exact match; empty: sessions without one)",
    "UtmCampaign": "UTM campaign name (exact match; empty: sessions without one)",
}
LISTING_STRING_FIELDS = (
    "PublicRemarks",
    "ListingTerms",
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
    "OriginatingSystemKey",
    "OriginatingSystemName",
)


#: A text filter of the search: not blank (an empty filter is a 400, never silently dropped).
TEXT = {"type": "string", "pattern": r"\S"}


# -- small schema builders ------------------------------------------------------------------------
def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _nullable(type_: str, **extra: Any) -> dict[str, Any]:
    return {"type": [type_, "null"], **extra}


def _obj(
    properties: dict[str, Any], required: list[str] | tuple[str, ...] | None = None, **extra: Any
) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    schema.update(extra)
    return schema


def _query(
    name: str, schema: dict[str, Any], description: str, *, required: bool = False, **extra: Any
) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": required,
        "description": description,
        "schema": schema,
        **extra,
    }


def _paging(max_limit: int = 50) -> list[dict[str, Any]]:
    return [
        _query(
            "Offset", {"type": "integer", "minimum": 0, "default": 0}, "Results to skip. Default 0."
        ),
        _query(
            "Limit",
            {"type": "integer", "minimum": 1, "maximum": max_limit, "default": 20},
            f"Results per page. Default 20, maximum {max_limit}.",
        ),
    ]


def _page_schema(member: str, item: str) -> dict[str, Any]:
    return _obj(
        {
            "total": {
                "type": "integer",
                "minimum": 0,
                "description": "Count of all matching items",
            },
            "offset": {"type": "integer", "minimum": 0, "description": "Offset used"},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 50,
                "description": "Page size used",
            },
            member: {"type": "array", "items": _ref(item)},
        },
        ["total", "offset", "limit", member],
    )


# -- components -----------------------------------------------------------------------------------
def _listing_summary_properties() -> dict[str, Any]:
    number = _nullable("number")
    string = _nullable("string")
    boolean = _nullable("boolean")
    timestamp = _nullable("string", format="date-time")
    return {
        "ListingId": {"type": "string", "description": "MLS listing number"},
        "ListPrice": _nullable("number", description="Current list price, USD"),
        "PreviousListPrice": _nullable(
            "number", description="List price before the last price change"
        ),
        "ClosePrice": _nullable("number", description="Final sale/close price; null if not sold"),
        "StandardStatus": {
            "type": "string",
            "enum": list(STATUSES),
            "description": "Documented with Active, Pending, Closed; the Status filter also knows Active Under Contract",
        },
        "PropertyType": {"type": "string", "enum": list(PROPERTY_TYPES)},
        "PropertySubType": string,
        "UnparsedAddress": _nullable("string", description="Full address in one string"),
        "StreetNumber": string,
        "StreetDirPrefix": string,
        "StreetName": string,
        "UnitNumber": string,
        "City": string,
        "StateOrProvince": _nullable("string", description="State abbreviation"),
        "PostalCode": string,
        "CountyOrParish": string,
        "SubdivisionName": string,
        "BuildingName": string,
        "BedroomsTotal": _nullable("number", minimum=0),
        "BathroomsTotalInteger": _nullable("number", minimum=0),
        "LivingArea": _nullable("number", description="Living area, square feet"),
        "LotSizeSquareFeet": _nullable("number", description="Lot size, square feet"),
        "YearBuilt": number,
        "DaysOnMarket": _nullable("number", minimum=0),
        "AssociationFee": _nullable("number", description="Monthly association (HOA) fee, USD"),
        "coordinates": {
            "type": ["object", "null"],
            "description": "Property coordinates",
            "properties": {
                "lng": {"type": "number", "minimum": -180, "maximum": 180},
                "lat": {"type": "number", "minimum": -90, "maximum": 90},
            },
            "required": ["lng", "lat"],
        },
        "OriginalEntryTimestamp": timestamp,
        "ModificationTimestamp": timestamp,
        "MajorChangeTimestamp": timestamp,
        "CloseDate": _nullable("string", description="Close/sale date; null if not sold"),
        "WaterfrontYN": boolean,
        "PoolPrivateYN": boolean,
        "SeniorCommunityYN": boolean,
        "ListAgentMlsId": string,
        "ListOfficeMlsId": string,
        "ListOfficeName": string,
    }


def _schemas() -> dict[str, Any]:
    summary = _listing_summary_properties()
    detail = copy.deepcopy(summary)
    number = _nullable("number")
    detail.update(
        {
            "YearBuiltDetails": _nullable("string", description="New Construction or Resale"),
            "TaxAnnualAmount": _nullable("number", description="Annual property tax"),
            "TaxYear": _nullable("number", description="Year of TaxAnnualAmount"),
            "GarageSpaces": number,
            "CoveredSpaces": number,
            "Stories": number,
            "WaterfrontFeatures": {"type": ["array", "null"], "items": {"type": "object"}},
            "PoolFeatures": {"type": ["array", "null"], "items": {"type": "object"}},
            "Media": {
                "type": ["array", "null"],
                "description": "Photos",
                "items": _obj(
                    {
                        "Order": {"type": "number"},
                        "MediaURL": {"type": "string"},
                        "ShortDescription": _nullable("string"),
                    },
                    ["Order", "MediaURL"],
                ),
            },
            "Furnished": {
                "type": ["string", "null"],
                "description": "Furnished, Unfurnished or null",
            },
            "Levels": {"type": ["string", "null"], "description": "One, Two, Three Or More"},
            **{name: _nullable("string") for name in LISTING_STRING_FIELDS},
        }
    )
    summary_required = list(summary)
    change = _obj(
        {
            "ListingId": {"type": "string"},
            "ChangeType": {"type": "string", "enum": list(CHANGE_TYPES)},
            "ChangeTimestamp": {"type": "string", "format": "date-time"},
            "PreviousListPrice": {"type": "number"},
            "ListPrice": {"type": "number"},
            "PreviousStatus": {"type": "string", "enum": list(STATUSES)},
            "StandardStatus": {"type": "string", "enum": list(STATUSES)},
        },
        ["ListingId", "ChangeType", "ChangeTimestamp"],
        allOf=[
            {
                "if": {"properties": {"ChangeType": {"const": "price_change"}}},
                "then": {"required": ["PreviousListPrice", "ListPrice"]},
            },
            {
                "if": {"properties": {"ChangeType": {"const": "status_change"}}},
                "then": {"required": ["PreviousStatus", "StandardStatus"]},
            },
        ],
    )
    url = _nullable("string")
    contact = _obj(
        {
            "id": {"type": "string", "description": "Contact identifier"},
            "name": {"type": "string"},
            "email": {"type": "string"},
            "phones": {"type": "array", "items": {"type": "string"}},
            "createdAt": {"type": "string", "format": "date-time"},
            "stage": {"type": "string", "enum": list(STAGES)},
            "source": {"type": "string", "enum": list(SOURCES)},
            "image": _nullable("string", description="URL of the profile image, if available"),
            "spokenLanguages": {"type": "array", "items": {"type": "string"}},
            "address": _nullable("string", description="Full address"),
            "streetAddress": _nullable("string"),
            "notes": _nullable("string"),
            "links": _obj(
                {
                    name: url
                    for name in (
                        "facebook",
                        "twitter",
                        "instagram",
                        "linkedin",
                        "youtube",
                        "website",
                        "whatsapp",
                        "service",
                    )
                },
                description="URL strings; `service` is the contact's page on the platform itself",
            ),
            "registration": _obj({"date": _nullable("string", format="date")}, ["date"]),
        },
        [
            "id",
            "name",
            "email",
            "phones",
            "createdAt",
            "stage",
            "source",
            "image",
            "spokenLanguages",
            "address",
            "streetAddress",
            "notes",
            "links",
            "registration",
        ],
    )
    activity = _obj(
        {
            "contactId": {"type": "string"},
            "activity": {
                "type": "array",
                "items": _obj(
                    {
                        "id": {"type": "string"},
                        "type": {"type": "string", "enum": list(ACTIVITY_TYPES)},
                        "timestamp": {"type": "string", "format": "date-time"},
                        "description": {"type": "string"},
                    },
                    ["id", "type", "timestamp", "description"],
                    description="Other members depend on the type (path, address, amount, ...)",
                ),
            },
        },
        ["contactId", "activity"],
    )
    user_props = {
        "_id": {"type": "string", "description": "User identifier"},
        "email": {"type": "string", "description": "User e-mail address"},
        "name": {"type": "string", "description": "Full name"},
        "role": {"type": "string", "description": "Role, for example user or admin"},
        "createdAt": {"type": "string", "description": "Creation time, ISO 8601"},
        "updatedAt": {"type": "string", "description": "Last update time"},
        "domain": {"type": "string", "description": "Domain associated with the user"},
    }
    item = _obj(
        {
            "name": {"type": "string"},
            "visitors": {"type": "integer", "minimum": 0},
            "pageviews": {"type": "integer", "minimum": 0},
            "conversions": {"type": "integer", "minimum": 0},
        },
        ["name", "visitors", "pageviews", "conversions"],
    )
    point = _obj(
        {"date": {"type": "string", "format": "date"}, "value": {"type": "integer", "minimum": 0}},
        ["date", "value"],
    )
    breakdown = {"type": "array", "items": _ref("BreakdownItem")}
    rate = {"type": "number", "minimum": 0, "maximum": 1}
    analytics = _obj(
        {
            "period": {"type": "string", "enum": list(PERIODS)},
            "overview": _obj(
                {
                    "visitors": {"type": "integer", "minimum": 0},
                    "pageviews": {"type": "integer", "minimum": 0},
                    "sessions": {"type": "integer", "minimum": 0},
                    "conversions": {"type": "integer", "minimum": 0},
                    "conversion_rate": {**rate, "description": "conversions / sessions"},
                    "bounce_rate": {**rate, "description": "single-page sessions / sessions"},
                    "avg_session_seconds": {"type": "number", "minimum": 0},
                },
                [
                    "visitors",
                    "pageviews",
                    "sessions",
                    "conversions",
                    "conversion_rate",
                    "bounce_rate",
                    "avg_session_seconds",
                ],
            ),
            "timelines": _obj(
                {
                    m: {"type": "array", "items": point}
                    for m in ("visitors", "pageviews", "sessions", "conversions")
                },
                ["visitors", "pageviews", "sessions", "conversions"],
                description="One point per day of the window, zeros included",
            ),
            **{
                name: breakdown
                for name in ("pages", "referrers", "countries", "browsers", "os", "devices")
            },
            "utm": _obj(
                {"source": breakdown, "medium": breakdown, "campaign": breakdown},
                ["source", "medium", "campaign"],
            ),
        },
        [
            "period",
            "overview",
            "timelines",
            "pages",
            "referrers",
            "countries",
            "browsers",
            "os",
            "devices",
            "utm",
        ],
    )
    group = {"type": "object", "additionalProperties": {"type": "string"}}
    return {
        "ListingSummary": _obj(
            summary,
            summary_required,
            description="A listing inside search results: the summary fields (more may appear)",
        ),
        "Listing": _obj(
            detail,
            [*summary_required, "Media"],
            description="One listing with description, all photos and extended fields",
        ),
        "ListingSearchResult": _page_schema("listings", "ListingSummary"),
        "ListingChange": change,
        "ListingChangesResult": _page_schema("changes", "ListingChange"),
        "Contact": contact,
        "ContactsPage": _page_schema("contacts", "Contact"),
        "ContactActivity": activity,
        "User": _obj(user_props, list(user_props)),
        "Me": _obj(
            {
                **user_props,
                "plan": {"type": "string", "enum": ["standard", "premium"]},
                "scopes": {"type": "array", "items": {"type": "string", "enum": list(SCOPES)}},
            },
            [*user_props, "plan", "scopes"],
        ),
        "Token": _obj(
            {
                "access_token": {"type": "string"},
                "token_type": {"type": "string", "description": "Bearer"},
                "expires_in": {"type": "integer", "minimum": 0, "description": "Seconds"},
                "scope": {"type": "string", "description": "Comma-separated scopes granted"},
            },
            ["access_token", "token_type", "expires_in", "scope"],
        ),
        "BreakdownItem": item,
        "AnalyticsResult": analytics,
        "IndexDocument": _obj(
            {
                "name": {"type": "string"},
                "version": {"type": "string"},
                "endpoints": _obj(
                    {g: group for g in ("listings", "contacts", "analytics", "user")},
                    ["listings", "contacts", "analytics", "user"],
                ),
                "mcp": {"type": "string", "const": "/mcp"},
            },
            ["name", "version", "endpoints", "mcp"],
        ),
        "ApiError": _obj(
            {
                "error": _obj(
                    {
                        "code": {"type": "string", "enum": [c for c, _, _ in ERRORS.values()]},
                        "message": {"type": "string"},
                        "status": {"type": "integer"},
                    },
                    ["code", "message", "status"],
                )
            },
            ["error"],
        ),
        "Problem": _obj(
            {
                "type": {"type": "string", "description": "{docs_url}#<code>"},
                "title": {"type": "string", "description": "The code with underscores as spaces"},
                "status": {"type": "integer"},
                "detail": {"type": "string"},
                "code": {"type": "string", "enum": [c for c, _, _ in ERRORS.values()]},
            },
            ["type", "title", "status", "detail", "code"],
        ),
        "LegacyError": _obj(
            {
                "error": {"type": "string", "description": "A type name"},
                "message": {"type": "string"},
            },
            ["error", "message"],
        ),
    }


def _headers() -> dict[str, Any]:
    def header(description: str, schema: dict[str, Any]) -> dict[str, Any]:
        return {"description": description, "required": True, "schema": schema}

    integer = {"type": "integer", "minimum": 0}
    return {
        "RateLimit": header(
            "limit=<n>, remaining=<n>, reset=<n>",
            {"type": "string", "pattern": r"^limit=\d+, remaining=\d+, reset=\d+$"},
        ),
        "RateLimit-Policy": header(
            "<limit>;w=<window seconds>", {"type": "string", "pattern": r"^\d+;w=\d+(\.\d+)?$"}
        ),
        "X-RateLimit-Limit": header("Requests allowed", integer),
        "X-RateLimit-Remaining": header("Requests left", integer),
        "X-RateLimit-Reset": header("Time to reset, seconds", integer),
        "Retry-After": header("Seconds to wait", integer),
        "WWW-Authenticate": {
            "description": "Bearer challenge with the error code (RFC 6750)",
            "required": False,
            "schema": {"type": "string"},
        },
        "Deprecation": header("The operation is deprecated", {"type": "string", "const": "true"}),
        "Sunset": header("Earliest removal day, an HTTP-date (RFC 8594)", {"type": "string"}),
        "Link": header(
            "{docs_url} with rel=deprecation", {"type": "string", "pattern": 'rel="?deprecation"?'}
        ),
    }


RATE_HEADERS = (
    "RateLimit",
    "RateLimit-Policy",
    "X-RateLimit-Limit",
    "X-RateLimit-Remaining",
    "X-RateLimit-Reset",
)
DEPRECATION_HEADERS = ("Deprecation", "Sunset", "Link")


def _header_refs(names: tuple[str, ...]) -> dict[str, Any]:
    return {name: {"$ref": f"#/components/headers/{name}"} for name in names}


def _error_responses(*, legacy: bool, html_400: bool = False) -> dict[str, Any]:
    """The six error answers of the spec for one operation."""
    out: dict[str, Any] = {}
    for status, (code, message, legacy_name) in ERRORS.items():
        names = RATE_HEADERS + (("Retry-After",) if status == 429 else ())
        if legacy:
            content: dict[str, Any] = {
                JSON: {
                    "schema": {
                        "allOf": [
                            _ref("LegacyError"),
                            {"properties": {"error": {"const": legacy_name}}},
                        ]
                    }
                }
            }
            names += DEPRECATION_HEADERS
        else:
            content = {
                JSON: {
                    "schema": {
                        "allOf": [
                            _ref("ApiError"),
                            {
                                "properties": {
                                    "error": {
                                        "properties": {
                                            "code": {"const": code},
                                            "status": {"const": status},
                                            "message": {"pattern": f"^{message}"},
                                        }
                                    }
                                }
                            },
                        ]
                    }
                },
                PROBLEM: {
                    "schema": {
                        "allOf": [
                            _ref("Problem"),
                            {
                                "properties": {
                                    "code": {"const": code},
                                    "status": {"const": status},
                                    "title": {"const": code.replace("_", " ")},
                                    "type": {"pattern": f"#{code}$"},
                                    "detail": {"pattern": f"^{message}"},
                                }
                            },
                        ]
                    }
                },
            }
        if html_400 and status == 400:
            content[HTML] = {"schema": {"type": "string"}}
        headers = _header_refs(names)
        if status in (401, 403) and not legacy:
            headers["WWW-Authenticate"] = {"$ref": "#/components/headers/WWW-Authenticate"}
        out[str(status)] = {
            "description": f"{code}: {message} (the message starts with it, then details)",
            "headers": headers,
            "content": content,
        }
    return out


def _operation(
    operation_id: str,
    summary: str,
    tag: str,
    ok: dict[str, Any],
    *,
    parameters: list[dict[str, Any]] | None = None,
    security: list[dict[str, list[str]]] | None = None,
    legacy: bool = False,
    html_400: bool = False,
    ok_description: str = "OK",
    **extra: Any,
) -> dict[str, Any]:
    ok_headers = RATE_HEADERS + (DEPRECATION_HEADERS if legacy else ())
    op: dict[str, Any] = {
        "operationId": operation_id,
        "summary": summary,
        "tags": [tag],
        "parameters": [{"$ref": "#/components/parameters/ServiceApiVersion"}, *(parameters or [])],
        "responses": {
            "200": {
                "description": ok_description,
                "headers": _header_refs(ok_headers),
                "content": ok,
            },
            **_error_responses(legacy=legacy, html_400=html_400),
        },
        **extra,
    }
    if security is not None:
        op["security"] = security
    if legacy:
        op["deprecated"] = True
    return op


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {JSON: {"schema": schema}}


def _search_parameters() -> list[dict[str, Any]]:
    params = [
        _query(
            "PropertyType",
            {"type": "string", "enum": list(PROPERTY_TYPES), "default": "Residential"},
            "Sale types: Residential, Residential Income, Land, Commercial Sale, Business Opportunity. "
            "Rent types: Residential Lease, Commercial Lease. The spec marks it required and gives a "
            "default; the default applies when it is omitted.",
        ),
        _query(
            "Status",
            {"type": "string", "enum": list(STATUSES), "default": "Active"},
            "Listing status. The spec marks it required and gives a default; the default applies "
            "when it is omitted.",
        ),
        _query(
            "Subtypes",
            {"type": "array", "items": {"type": "string", "enum": list(SUBTYPES)}, "minItems": 1},
            "Comma-separated. For Residential: Single Family Residence, Condominium, Townhouse, "
            "Villa, Condo - Hotel, 1/2 Duplex, Mobile Home. For Residential Lease: Single Family "
            "Residence, Condominium, Townhouse, Villa, Apartment, Efficiency. Valid only for those "
            "two property types; a subtype of the other one is a 400.",
            style="form",
            explode=False,
        ),
        _query("City", TEXT, "City name filter"),
        _query("PostalCode", TEXT, "Postal code filter"),
        _query("StreetNumber", TEXT, "Address search"),
        _query("StreetName", TEXT, "Address search"),
        _query("UnitNumber", TEXT, "Unit number"),
        _query("BuildingName", TEXT, "Phrase match"),
        _query("SubdivisionName", TEXT, "Subdivision filter"),
    ]
    for name, (description, type_) in RANGE_FILTERS.items():
        for side in ("Min", "Max"):
            params.append(
                _query(
                    f"{side}{name}",
                    {"type": type_, "minimum": 0},
                    f"{description}: {'lower' if side == 'Min' else 'upper'} bound, inclusive",
                )
            )
    for name, description in FEATURE_FILTERS.items():
        params.append(_query(name, {"type": "boolean"}, description))
    params += [
        _query(
            "SeniorCommunity",
            {"type": "string", "enum": ["true", "exclude"]},
            "true = include only 55+ communities; exclude = leave them out; omitted = no filter",
        ),
        _query("Agent", TEXT, "Agent MLS ID"),
        _query("Broker", TEXT, "Broker/office MLS ID"),
        _query("MaxDaysOnMarket", {"type": "number", "minimum": 0}, "Maximum days on market"),
        _query(
            "Since",
            {"type": "string", "format": "date-time"},
            "ISO 8601 timestamp; only listings added after it",
        ),
        _query(
            "Sort", {"type": "string", "enum": list(SORTS), "default": "-listprice"}, "Sort order"
        ),
        *_paging(),
    ]
    return params


def _paths(protected: bool) -> dict[str, Any]:
    def sec(*requirements: dict[str, list[str]]) -> list[dict[str, list[str]]]:
        return ([] if protected else [{}]) + list(requirements)

    listings_sec = sec({"bearer": ["listings"]}, {"apiKeyHeader": []})
    analytics_sec = sec({"bearer": ["analytics"]}, {"apiKeyHeader": []})
    contacts_sec = sec({"bearer": ["contacts"]})
    me_sec = sec({"bearer": []}, {"apiKeyHeader": []})
    legacy_sec: list[dict[str, list[str]]] = [{"apiKeyQuery": []}]
    index = _operation(
        "getIndex",
        "Index document: the API's name, version, endpoint groups and MCP path",
        "meta",
        _json(_ref("IndexDocument")),
        security=[],
    )
    return {
        "/": {"get": index},
        "/v1": {"get": {**index, "operationId": "getIndexV1"}},
        "/authorize": {
            "get": _operation(
                "authorize",
                "Start the OAuth flow: the consent page (a browser redirect target)",
                "auth",
                {HTML: {"schema": {"type": "string"}}},
                parameters=[
                    _query(
                        "client_id", {"type": "string"}, "Application credential", required=True
                    ),
                    _query(
                        "redirect_uri",
                        {"type": "string"},
                        "Must match a URI registered for the application",
                        required=True,
                    ),
                    _query(
                        "scope",
                        {
                            "type": "array",
                            "items": {"type": "string", "enum": list(SCOPES)},
                            "minItems": 1,
                        },
                        "Comma-separated from: listings, contacts, analytics",
                        required=True,
                        style="form",
                        explode=False,
                    ),
                    _query(
                        "state",
                        {"type": "string"},
                        "Opaque anti-forgery value, echoed back unchanged",
                    ),
                    _query(
                        "response_type",
                        {"type": "string", "enum": ["code"], "default": "code"},
                        "OAuth response type (authorization code)",
                    ),
                ],
                security=[],
                html_400=True,
                ok_description="The consent page; approving redirects to redirect_uri with code and state",
            )
        },
        "/api/oauth/token": {
            "post": _operation(
                "exchangeToken",
                "Exchange an authorization code for an access token",
                "auth",
                _json(_ref("Token")),
                security=[],
                requestBody={
                    "required": True,
                    "content": {
                        FORM: {
                            "schema": _obj(
                                {
                                    "grant_type": {
                                        "type": "string",
                                        "enum": ["authorization_code"],
                                        "default": "authorization_code",
                                    },
                                    "code": {
                                        "type": "string",
                                        "description": "Code from the callback redirect",
                                    },
                                    "client_id": {"type": "string"},
                                    "client_secret": {"type": "string"},
                                    "redirect_uri": {
                                        "type": "string",
                                        "description": "Must equal the URI used in the authorize step",
                                    },
                                },
                                ["grant_type", "code", "client_id", "client_secret"],
                                additionalProperties=False,
                            )
                        }
                    },
                },
                description="client_id and client_secret go in the form body (the sandbox also "
                "reads them from the query). Codes are single-use.",
            )
        },
        "/v1/listings": {
            "get": _operation(
                "searchListings",
                "Search listings",
                "listings",
                _json(_ref("ListingSearchResult")),
                parameters=_search_parameters(),
                security=listings_sec,
            )
        },
        "/v1/listings/changes": {
            "get": _operation(
                "listingChanges",
                "Price and status changes on chosen listings since a time",
                "listings",
                _json(_ref("ListingChangesResult")),
                parameters=[
                    _query(
                        "Since",
                        {"type": "string", "format": "date-time"},
                        "ISO 8601 timestamp; listings modified after it",
                        required=True,
                    ),
                    _query(
                        "ListingIds",
                        {
                            "type": "array",
                            "items": {"type": "string", "pattern": r"^[^,]*[^,\s][^,]*$"},
                            "minItems": 1,
                            "maxItems": 100,
                        },
                        "Comma-separated MLS numbers, at most 100",
                        required=True,
                        style="form",
                        explode=False,
                    ),
                    _query(
                        "ChangeType",
                        {"type": "string", "enum": list(CHANGE_TYPES)},
                        "Only this kind of change",
                    ),
                    *_paging(),
                ],
                security=listings_sec,
            )
        },
        "/v1/listings/{ListingId}": {
            "get": _operation(
                "getListing",
                "One listing with all detail fields and photos",
                "listings",
                _json(_ref("Listing")),
                parameters=[
                    {
                        "name": "ListingId",
                        "in": "path",
                        "required": True,
                        "description": "The MLS listing number",
                        "schema": {"type": "string"},
                    }
                ],
                security=listings_sec,
            )
        },
        "/v1/analytics": {
            "get": _operation(
                "getAnalytics",
                "Website analytics aggregated over a period",
                "analytics",
                _json(_ref("AnalyticsResult")),
                parameters=[
                    _query(
                        "Period",
                        {"type": "string", "enum": list(PERIODS), "default": "30d"},
                        "The window ending now",
                    ),
                    _query("Device", {"type": "string", "enum": list(DEVICES)}, "Device type"),
                    *(
                        _query(name, {"type": "string"}, text)
                        for name, text in ANALYTICS_FILTERS.items()
                    ),
                ],
                security=analytics_sec,
            )
        },
        "/v1/contacts": {
            "get": _operation(
                "listContacts",
                "The user's CRM contacts, newest first",
                "contacts",
                _json(_ref("ContactsPage")),
                parameters=_paging(),
                security=contacts_sec,
            )
        },
        "/v1/contacts/{contactId}": {
            "get": _operation(
                "getContact",
                "One contact",
                "contacts",
                _json(_ref("Contact")),
                parameters=[{"$ref": "#/components/parameters/contactId"}],
                security=contacts_sec,
            )
        },
        "/v1/contacts/{contactId}/activity": {
            "get": _operation(
                "getContactActivity",
                "A contact's activity, newest first",
                "contacts",
                _json(_ref("ContactActivity")),
                parameters=[{"$ref": "#/components/parameters/contactId"}],
                security=contacts_sec,
            )
        },
        "/v1/me": {
            "get": _operation(
                "getMe",
                "The current user, with plan and scopes (exempt from the contacts scope)",
                "user",
                _json(_ref("Me")),
                security=me_sec,
            )
        },
        "/api/me": {
            "get": _operation(
                "legacyGetMe",
                "Current user (legacy host, API key in the query; deprecated: use /v1/me)",
                "legacy",
                _json(_ref("User")),
                security=legacy_sec,
                legacy=True,
            )
        },
        "/api/getContacts": {
            "get": _operation(
                "legacyGetContacts",
                "Contacts of the key's domain (legacy host; deprecated: use /v1/contacts); "
                "404 when the domain has none",
                "legacy",
                _json({"type": "array", "items": _ref("Contact")}),
                security=legacy_sec,
                legacy=True,
            )
        },
    }


def openapi_document(base_url: str | None = None, *, protected: bool = True) -> dict[str, Any]:
    """The OpenAPI 3.1 document; ``base_url`` goes in ``servers``.

    ``protected=False`` describes the open sandbox: every operation also accepts no credential
    (the legacy host's ``api_key`` stays required).

    >>> openapi_document(protected=False)["paths"]["/v1/listings"]["get"]["security"][0]
    {}
    """
    doc: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {
            "title": "Listings, Contacts and Analytics REST API (realtyframes sandbox)",
            "version": "1",
            "description": (
                "JSON REST API of a real-estate website platform: MLS listings (search, detail, "
                "change feed), CRM contacts, website analytics and the current user, with OAuth 2.0 "
                "and personal API keys. Every error comes as ApiError (application/json) or, when "
                "the Accept header prefers it, as Problem (application/problem+json). Every answer "
                "carries the rate-limit headers. The legacy host's operations are deprecated."
            ),
        },
        "servers": [{"url": base_url or "/"}],
        "tags": [
            {"name": "listings", "description": "Scope listings, or an API key"},
            {"name": "contacts", "description": "Scope contacts (OAuth only)"},
            {"name": "analytics", "description": "Scope analytics, or an API key"},
            {"name": "user", "description": "The authenticated user"},
            {"name": "auth", "description": "OAuth 2.0 authorization code flow"},
            {"name": "legacy", "description": "API-key-only legacy host (deprecated)"},
            {"name": "meta", "description": "Index document"},
        ],
        "paths": _paths(protected),
        "components": {
            "schemas": _schemas(),
            "headers": _headers(),
            "parameters": {
                "ServiceApiVersion": {
                    "name": "Service-Api-Version",
                    "in": "header",
                    "required": False,
                    "description": "API version (1). When it and the path disagree, the path wins.",
                    "schema": {"type": "integer", "minimum": 1, "default": 1},
                },
                "contactId": {
                    "name": "contactId",
                    "in": "path",
                    "required": True,
                    "description": "Contact identifier",
                    "schema": {"type": "string"},
                },
            },
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "OAuth 2.0 access token (scopes listings, contacts, analytics) "
                    "from /authorize and /api/oauth/token; a personal API key is also accepted here",
                },
                "apiKeyHeader": {
                    "type": "apiKey",
                    "in": "header",
                    "name": "X-API-Key",
                    "description": "Personal API key: listings, analytics and /v1/me",
                },
                "apiKeyQuery": {
                    "type": "apiKey",
                    "in": "query",
                    "name": "api_key",
                    "description": "API key of the legacy host; identifies the user and its domain",
                },
            },
        },
    }
    return copy.deepcopy(doc)  # no node shared with module constants
