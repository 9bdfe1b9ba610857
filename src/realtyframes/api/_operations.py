"""The spec's operations, declared once as a plain table: name, host, path, path parameter,
parameter validator and a one-line summary.

Nothing registers into it: :func:`prepare` and ``ApiClient.call`` read :data:`OPERATIONS`
directly, and the loaders' endpoint table (:mod:`realtyframes.loaders.endpoints`) adds to each
row how it is loaded (schema, shaper, fetch strategy, cache folder). Each path is written here and
nowhere else.

>>> OPERATIONS["listing"].at("A1")
'/v1/listings/A1'
>>> prepare("listings", {"City": "Miami"}).params
{'City': 'Miami'}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from realtyframes._spec import ANALYTICS_DEFAULTS, LISTING_DEFAULTS
from realtyframes.api._engine import Host
from realtyframes.api._params import (
    ANALYTICS,
    CONTACTS,
    LISTING_CHANGES,
    LISTING_SEARCH,
    Checker,
    PreparedRequest,
    Validator,
    _suggest,
    build_request,
    validate_analytics,
    validate_listing_changes,
    validate_listing_search,
    validate_paging,
)
from realtyframes.errors import QueryError


@dataclass(frozen=True)
class Operation:
    """One operation of the spec: where it lives and how its parameters are checked.

    ``path`` is a template whose ``{}`` is the ``path_param`` (given under its spec name);
    ``validate`` checks the query parameters (None: the operation takes none); ``parameters``
    is the table of query parameters it checks them with (name -> checker, read by the command
    line and the MCP tools) and ``defaults`` what the service applies when one is omitted.
    """

    name: str
    host: Host
    path: str
    validate: Validator | None = None
    path_param: str | None = None
    summary: str = ""
    parameters: Mapping[str, Checker] = field(default_factory=dict)
    defaults: Mapping[str, str] = field(default_factory=dict)

    def prepare(self, params: Mapping[str, Any] | None = None) -> PreparedRequest:
        """The validated request (path filled in); QueryError before any I/O."""
        return build_request(
            self.name,
            self.path,
            params,
            host=self.host,
            path_param=self.path_param,
            validate=self.validate,
        )

    def at(self, identifier: str) -> str:
        """The path of the resource ``identifier`` names (``path_param`` operations).

        >>> OPERATIONS["contact_activity"].at("c 1")
        '/v1/contacts/c%201/activity'
        """
        return self.prepare({self.path_param or "id": identifier}).path


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


__all__ = ["OPERATIONS", "Operation", "prepare"]
