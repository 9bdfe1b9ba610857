"""Every route of the sandbox, by family; the app is routed from these declarations.

``v1`` (the spec's operations and the index), ``legacy`` (the deprecated legacy host), ``oauth``
(the authorization code flow), ``docs`` (the documentation host: ``/docs`` and ``/openapi.json``)
``admin`` (the sandbox's own ``/_sandbox/*``) and ``reso`` (the RESO Web API face, OData v4,
under ``/reso/odata``). The MCP sub-apps are mounted by
``create_app``, which imports the routes, never the other way round.

>>> len(ENDPOINTS) == len({e.path for e in ENDPOINTS})
True
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.routing import BaseRoute, Route

from realtyframes.sandbox.routes import admin, docs, legacy, oauth, reso, v1
from realtyframes.sandbox.routes._declare import Endpoint

__all__ = [
    "ENDPOINTS",
    "LEGACY_PATHS",
    "RESO_PATH",
    "SEARCH_PATH",
    "SPARED_PATHS",
    "Endpoint",
    "starlette_routes",
]

ENDPOINTS: tuple[Endpoint, ...] = (
    *v1.ENDPOINTS,
    *legacy.ENDPOINTS,
    *oauth.ENDPOINTS,
    *docs.ENDPOINTS,
    *admin.ENDPOINTS,
    *reso.ENDPOINTS,
)
LEGACY_PATHS = legacy.LEGACY_PATHS
#: The RESO face's root: it counts its vendor's budgets, not the platform's quotas.
RESO_PATH = reso.BASE_PATH
#: Paths (and their sub-paths) no fault touches, not even latency.
SPARED_PATHS: tuple[str, ...] = tuple(e.path for e in ENDPOINTS if not e.faults)
#: The listings search (the drift and bad-record faults act on its pages).
SEARCH_PATH = next(e.path for e in v1.ENDPOINTS if e.index == ("listings", "search"))


def _route(endpoint: Endpoint) -> Route:
    return Route(endpoint.path, endpoint.handler, methods=list(endpoint.methods))


def starlette_routes(endpoints: Iterable[Endpoint] = ENDPOINTS) -> list[BaseRoute]:
    """Starlette routes of ``endpoints`` in declaration order (``create_app`` adds the MCP mounts)."""
    return [_route(e) for e in endpoints]
