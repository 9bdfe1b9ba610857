"""The embedded sandbox: a real HTTP server implementing the whole service spec.

A second, independent implementation of the spec (it imports nothing from the client side), with
deterministic synthetic data, an open and a protected mode, an adjustable clock and faults.

>>> from realtyframes.sandbox import serve
>>> with serve(listings=2000) as url:  # doctest: +SKIP
...     httpx.get(f"{url}/v1/listings", params={"City": "Miami"}).json()["total"]

Module map (each module one concern; imports point down the list):

- ``_spec``: the spec's enumerations, once (property types, statuses, subtypes, sorts, periods,
  devices, change types, feature and range filters, stages, scopes, plans, the error table), and
  the sandbox's own paths (``DOCS_PATH``, ``OPENAPI_PATH``, ``MCP_PATH``).
- ``_errors``: :class:`SandboxError`, ``bad_param`` (a 400 naming the parameter) and
  ``oauth_error`` (the token endpoint's RFC 6749 5.2 codes).
- ``_query``: every operation's query parameters, declared once (``Param``); the same
  declarations validate requests (``check_names``, ``parse``) and document them in OpenAPI.
- ``_options``: :class:`SandboxOptions`, :class:`Faults`, the ``DEMO`` credentials.
- Listings: ``_market_data`` (cities, subdivisions, subtype shares: data) -> ``_tables`` (lookup
  tables of one market); ``_market_path`` (the history's length, the season and the price level:
  pure functions of time, published as ``price_path``, ``price_level``, ``seasonal_factor``) ->
  ``_generate`` (attributes, in ordered steps; ``_steps`` holds their shared mechanism,
  ``_draws`` fast exact equivalents of numpy draws) and ``_pricing`` (list prices, price and
  status history) -> ``_history`` (seasonal entry times, resales of the same homes years apart)
  -> ``_state`` (the state at the clock, sort orders) ->
  ``_search`` (the search's filters) -> ``_store``
  (``ListingStore``: search, detail, change feed, clock, drift insertions); ``_listing_text``
  (the detail-only text fields and their vocabularies).
- Analytics: ``_analytics_data`` (shares: data) -> ``_analytics_gen`` (sessions, in ordered
  steps) -> ``_analytics`` (``AnalyticsStore``: queries and aggregation).
- Contacts: ``_crm`` (``ContactStore``: contacts and their activity).
- Auth: ``_auth`` (users, API keys, OAuth clients, codes, tokens, scope rules), ``_pkce`` (RFC
  7636 S256), ``_discovery`` (RFC 8414 and RFC 9728 metadata, the ``WWW-Authenticate`` Bearer
  challenge) and ``_pages`` (the consent and refusal pages); ``_limits`` (quotas and rate-limit
  headers).
- HTTP: ``_negotiate`` (error negotiation: the one renderer of every 4xx/5xx, ApiError, Problem
  or the legacy body), ``_middleware`` (quotas and the last-resort 500), ``_faults`` (fault
  injection), ``_admin`` (:class:`SandboxAdmin`: the state the middleware and routes read),
  ``routes`` (``routes/v1``, ``legacy``, ``oauth``, ``docs``, ``admin``: each route declared once
  with its path, methods, parameters, scope rule and documentation; ``docs`` is the documentation
  host under ``/docs``), ``_openapi`` and ``_openapi_schemas`` (``/openapi.json``, written from
  the declarations and ``_spec``).
- MCP (on the official ``mcp`` SDK): ``_mcp_host`` (the streamable HTTP session managers),
  ``_mcp`` (the product tools at ``/mcp``: each runs its REST route in-process), ``_mcp_docs``
  (``/docs/mcp``: the spec text ``service-api.md`` searched and served as resources) and
  ``_mcp_common`` (what the two share).
- RESO Web API face (OData v4 under ``/reso/odata``, a thin translation of the listings store):
  ``_reso_fields`` (Data Dictionary 2.0 names, EDM types, sources) -> ``_reso_filter``
  (``$filter``, ``$orderby``, ``$select``) and ``_reso_vendors`` (the vendor profiles, as data)
  -> ``_reso_usage`` (budgets per token, suspension) and ``_reso_data`` (the six resources'
  records from ``_store``) and ``_reso_metadata`` (``$metadata``) -> ``_reso_odata``
  (``ResoService``: options, vendor rules, paging); its routes are ``routes/reso``.
- ``_app``: ``create_app`` composes the app: the declared routes, the MCP mounts, the OpenAPI
  writer ``/openapi.json`` calls, the middleware and the state.
- Serving: ``_server`` (``serve``, ``start``, ``run_forever``) and ``_embedded``
  (:func:`embedded`: the process's shared, reference-counted sandbox that ``Client()`` uses).
"""

from __future__ import annotations

from realtyframes.sandbox._admin import SandboxAdmin
from realtyframes.sandbox._app import create_app
from realtyframes.sandbox._embedded import (
    EMBEDDED_HISTORY_YEARS,
    EMBEDDED_LISTINGS,
    EmbeddedSandbox,
    embedded,
)
from realtyframes.sandbox._faults import validate_faults
from realtyframes.sandbox._limits import parse_rate_limit
from realtyframes.sandbox._market_path import (
    DEFAULT_HISTORY_YEARS,
    HISTORY_YEARS_RANGE,
    price_level,
    price_path,
    seasonal_factor,
)
from realtyframes.sandbox._options import DEMO, Faults, SandboxOptions
from realtyframes.sandbox._reso_lookups import LOOKUP_MODES as RESO_LOOKUPS
from realtyframes.sandbox._reso_vendors import PROFILES as _RESO_PROFILES
from realtyframes.sandbox._server import (
    EXPOSED,
    RunningSandbox,
    is_loopback,
    run_forever,
    serve,
    start,
)

#: The vendor profiles of the RESO Web API face (``SandboxOptions.reso_vendor``).
RESO_VENDORS: tuple[str, ...] = tuple(_RESO_PROFILES)

__all__ = [
    "DEFAULT_HISTORY_YEARS",
    "DEMO",
    "EMBEDDED_HISTORY_YEARS",
    "EMBEDDED_LISTINGS",
    "EXPOSED",
    "HISTORY_YEARS_RANGE",
    "RESO_LOOKUPS",
    "RESO_VENDORS",
    "EmbeddedSandbox",
    "Faults",
    "RunningSandbox",
    "SandboxAdmin",
    "SandboxOptions",
    "create_app",
    "embedded",
    "is_loopback",
    "parse_rate_limit",
    "price_level",
    "price_path",
    "run_forever",
    "seasonal_factor",
    "serve",
    "start",
    "validate_faults",
]
