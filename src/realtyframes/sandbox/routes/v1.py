"""The /v1 operations of the main host: listings, analytics, contacts, the current user; the index.

Each is declared once (:func:`~realtyframes.sandbox.routes._declare.operation`): its path, scope
rule, query parameters (:mod:`realtyframes.sandbox._query`) and documentation.

>>> [e.path for e in ENDPOINTS][:3]
['/', '/v1', '/v1/listings']
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from realtyframes.sandbox import _query as q
from realtyframes.sandbox._auth import Principal
from realtyframes.sandbox._errors import SandboxError
from realtyframes.sandbox._spec import API_VERSION, MCP_PATH
from realtyframes.sandbox.routes._declare import (
    Access,
    Doc,
    Endpoint,
    admin_of,
    check_version,
    operation,
)

__all__ = ["API_NAME", "ENDPOINTS", "path_of"]

JSON = "application/json"
API_NAME = "realtyframes sandbox: listings, contacts and analytics API"
LISTINGS = Access("listings")
ANALYTICS = Access("analytics")
CONTACTS = Access("contacts", api_key_ok=False)
ANY_CREDENTIAL = Access(None)
_CONTACT_ID = {"$ref": "#/components/parameters/contactId"}


def path_of(group: str, name: str) -> str:
    """The path of the operation listed as ``name`` of ``group`` in the index document."""
    return next(e.path for e in ENDPOINTS if e.index == (group, name))


def ok(schema: str) -> dict[str, Any]:
    """A JSON 200 answer with the named component schema."""
    return {JSON: {"schema": {"$ref": f"#/components/schemas/{schema}"}}}


def _found(value: Any, what: str) -> Any:
    if value is None:
        raise SandboxError(404, f"{what} not found")
    return value


async def search_listings(
    request: Request, principal: Principal, query: dict[str, str]
) -> Response:
    """GET /v1/listings."""
    return JSONResponse(admin_of(request).listings.search(query))


async def listing_changes(
    request: Request, principal: Principal, query: dict[str, str]
) -> Response:
    """GET /v1/listings/changes."""
    return JSONResponse(admin_of(request).listings.changes(query))


async def listing_detail(request: Request, principal: Principal, query: dict[str, str]) -> Response:
    """GET /v1/listings/{ListingId}."""
    return JSONResponse(admin_of(request).listings.detail(request.path_params["ListingId"]))


async def analytics(request: Request, principal: Principal, query: dict[str, str]) -> Response:
    """GET /v1/analytics."""
    return JSONResponse(admin_of(request).analytics.query(query))


async def contacts_list(request: Request, principal: Principal, query: dict[str, str]) -> Response:
    """GET /v1/contacts."""
    return JSONResponse(admin_of(request).contacts.list(query))


async def contact_detail(request: Request, principal: Principal, query: dict[str, str]) -> Response:
    """GET /v1/contacts/{contactId}."""
    contact_id = request.path_params["contactId"]
    return JSONResponse(
        _found(admin_of(request).contacts.get(contact_id), f"contact {contact_id!r}")
    )


async def contact_activity(
    request: Request, principal: Principal, query: dict[str, str]
) -> Response:
    """GET /v1/contacts/{contactId}/activity."""
    contact_id = request.path_params["contactId"]
    activity = admin_of(request).contacts.activity(contact_id)
    return JSONResponse(_found(activity, f"contact {contact_id!r}"))


async def me(request: Request, principal: Principal, query: dict[str, str]) -> Response:
    """GET /v1/me: the user fields plus plan and scopes."""
    return JSONResponse(principal.me())


async def index(request: Request) -> Response:
    """GET / and /v1: the index document."""

    check_version(request)
    endpoints: dict[str, dict[str, str]] = {}
    for e in ENDPOINTS:
        if e.index is not None:
            group, name = e.index
            endpoints.setdefault(group, {})[name] = f"{e.methods[0]} {e.path}"
    return JSONResponse(
        {"name": API_NAME, "version": API_VERSION, "endpoints": endpoints, "mcp": MCP_PATH}
    )


_INDEX_DOC = Doc(
    "getIndex",
    "Index document: the API's name, version, endpoint groups and MCP path",
    "meta",
    ok("IndexDocument"),
)
ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("/", index, doc=_INDEX_DOC),
    Endpoint("/v1", index, doc=Doc(**{**_INDEX_DOC.__dict__, "operation_id": "getIndexV1"})),
    operation(
        "/v1/listings",
        search_listings,
        LISTINGS,
        q.SEARCH,
        index=("listings", "search"),
        doc=Doc("searchListings", "Search listings", "listings", ok("ListingSearchResult")),
    ),
    operation(  # before {ListingId}
        "/v1/listings/changes",
        listing_changes,
        LISTINGS,
        q.CHANGES,
        index=("listings", "changes"),
        doc=Doc(
            "listingChanges",
            "Price and status changes on chosen listings since a time",
            "listings",
            ok("ListingChangesResult"),
        ),
    ),
    operation(
        "/v1/listings/{ListingId}",
        listing_detail,
        LISTINGS,
        index=("listings", "detail"),
        doc=Doc(
            "getListing",
            "One listing with all detail fields and photos",
            "listings",
            ok("Listing"),
            path_params=(
                {
                    "name": "ListingId",
                    "in": "path",
                    "required": True,
                    "description": "The MLS listing number",
                    "schema": {"type": "string"},
                },
            ),
        ),
    ),
    operation(
        "/v1/contacts",
        contacts_list,
        CONTACTS,
        q.CONTACTS,
        index=("contacts", "list"),
        doc=Doc(
            "listContacts", "The user's CRM contacts, newest first", "contacts", ok("ContactsPage")
        ),
    ),
    operation(
        "/v1/contacts/{contactId}",
        contact_detail,
        CONTACTS,
        index=("contacts", "detail"),
        doc=Doc("getContact", "One contact", "contacts", ok("Contact"), path_params=(_CONTACT_ID,)),
    ),
    operation(
        "/v1/contacts/{contactId}/activity",
        contact_activity,
        CONTACTS,
        index=("contacts", "activity"),
        doc=Doc(
            "getContactActivity",
            "A contact's activity, newest first",
            "contacts",
            ok("ContactActivity"),
            path_params=(_CONTACT_ID,),
        ),
    ),
    operation(
        "/v1/analytics",
        analytics,
        ANALYTICS,
        q.ANALYTICS,
        index=("analytics", "query"),
        doc=Doc(
            "getAnalytics",
            "Website analytics aggregated over a period",
            "analytics",
            ok("AnalyticsResult"),
        ),
    ),
    operation(
        "/v1/me",
        me,
        ANY_CREDENTIAL,
        index=("user", "me"),
        doc=Doc(
            "getMe",
            "The current user, with plan and scopes (exempt from the contacts scope)",
            "user",
            ok("Me"),
        ),
    ),
)
