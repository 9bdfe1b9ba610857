"""The components of the sandbox's OpenAPI document: schemas of every answer, and headers.

Enumerations come from :mod:`realtyframes.sandbox._spec`; the document itself is put together in
:mod:`realtyframes.sandbox._openapi`.

>>> sorted(schemas())[:3]
['AnalyticsResult', 'ApiError', 'AuthorizationServerMetadata']
"""

from __future__ import annotations

import copy
from typing import Any

from realtyframes.sandbox._discovery import discovery_schemas
from realtyframes.sandbox._errors import EXTRA_CODES
from realtyframes.sandbox._spec import (
    ACTIVITY_TYPES,
    BREAKDOWNS,
    CHANGE_TYPES,
    CONTACT_FIELDS,
    ERRORS,
    LINK_FIELDS,
    MAX_LIMIT,
    MCP_PATH,
    PERIODS,
    PLANS,
    PROPERTY_TYPES,
    SCOPES,
    SOURCES,
    STAGES,
    STATUSES,
    TIMELINE_METRICS,
    UTM_PARTS,
)

__all__ = ["headers", "ref", "schemas"]

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


def ref(name: str) -> dict[str, str]:
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
                "maximum": MAX_LIMIT,
                "description": "Page size used",
            },
            member: {"type": "array", "items": ref(item)},
        },
        ["total", "offset", "limit", member],
    )


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


def schemas() -> dict[str, Any]:
    """Every component schema of the document."""
    return {
        **_listing_schemas(),
        **_contact_schemas(),
        **_account_schemas(),
        **_analytics_schemas(),
        **_meta_schemas(),
    }


def _listing_schemas() -> dict[str, Any]:
    """Listings: summary, detail, search result, change and change feed."""
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
    }


def _contact_schemas() -> dict[str, Any]:
    """Contacts, a page of them and a contact's activity."""
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
                {name: url for name in LINK_FIELDS},
                description="URL strings; `service` is the contact's page on the platform itself",
            ),
            "registration": _obj({"date": _nullable("string", format="date")}, ["date"]),
        },
        CONTACT_FIELDS,
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
    return {
        "Contact": contact,
        "ContactsPage": _page_schema("contacts", "Contact"),
        "ContactActivity": activity,
    }


def _account_schemas() -> dict[str, Any]:
    """The user (legacy and /v1/me) and the token answer."""
    user_props = {
        "_id": {"type": "string", "description": "User identifier"},
        "email": {"type": "string", "description": "User e-mail address"},
        "name": {"type": "string", "description": "Full name"},
        "role": {"type": "string", "description": "Role, for example user or admin"},
        "createdAt": {"type": "string", "description": "Creation time, ISO 8601"},
        "updatedAt": {"type": "string", "description": "Last update time"},
        "domain": {"type": "string", "description": "Domain associated with the user"},
    }
    return {
        "User": _obj(user_props, list(user_props)),
        "Me": _obj(
            {
                **user_props,
                "plan": {"type": "string", "enum": list(PLANS)},
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
    }


def _analytics_schemas() -> dict[str, Any]:
    """The analytics result and its breakdown items."""
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
    breakdown = {"type": "array", "items": ref("BreakdownItem")}
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
                {m: {"type": "array", "items": point} for m in TIMELINE_METRICS},
                TIMELINE_METRICS,
                description="One point per day of the window, zeros included",
            ),
            **{name: breakdown for name in BREAKDOWNS},
            "utm": _obj({part: breakdown for part in UTM_PARTS}, list(UTM_PARTS)),
        },
        ["period", "overview", "timelines", *BREAKDOWNS, "utm"],
    )
    return {"BreakdownItem": item, "AnalyticsResult": analytics}


def _meta_schemas() -> dict[str, Any]:
    """The index document and the three error bodies."""
    from realtyframes.sandbox.routes import ENDPOINTS

    group = {"type": "object", "additionalProperties": {"type": "string"}}
    groups = list(dict.fromkeys(e.index[0] for e in ENDPOINTS if e.index is not None))
    codes = [code for code, _, _ in ERRORS.values()] + list(EXTRA_CODES)
    return {
        "IndexDocument": _obj(
            {
                "name": {"type": "string"},
                "version": {"type": "string"},
                "endpoints": _obj({g: group for g in groups}, groups),
                "mcp": {"type": "string", "const": MCP_PATH},
            },
            ["name", "version", "endpoints", "mcp"],
        ),
        "ApiError": _obj(
            {
                "error": _obj(
                    {
                        "code": {"type": "string", "enum": codes},
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
                "code": {"type": "string", "enum": codes},
                "error": {"type": "string", "description": "The token endpoint: RFC 6749 5.2"},
                "error_description": {"type": "string", "description": "As detail"},
            },
            ["type", "title", "status", "detail", "code"],
        ),
        **discovery_schemas(),
        "LegacyError": _obj(
            {
                "error": {"type": "string", "description": "A type name"},
                "message": {"type": "string"},
            },
            ["error", "message"],
        ),
    }


def headers() -> dict[str, Any]:
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
            "description": "Bearer challenge (RFC 6750 3): no error code when no credential was "
            "sent, else invalid_token or insufficient_scope (with scope); resource_metadata links "
            "the RFC 9728 document in protected mode. The token endpoint's 401: Basic",
            "required": False,
            "schema": {"type": "string"},
        },
        "Deprecation": header("The operation is deprecated", {"type": "string", "const": "true"}),
        "Sunset": header("Earliest removal day, an HTTP-date (RFC 8594)", {"type": "string"}),
        "Link": header(
            "{docs_url} with rel=deprecation", {"type": "string", "pattern": 'rel="?deprecation"?'}
        ),
    }
