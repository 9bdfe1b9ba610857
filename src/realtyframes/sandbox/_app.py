"""The sandbox app: :func:`create_app`, routed from the declarations in
:mod:`realtyframes.sandbox.routes`, its state a :class:`~realtyframes.sandbox._admin.SandboxAdmin`.

One Starlette app serves every host of the spec (base, auth and legacy share the base URL);
``create_app`` composes it: the declared routes, the MCP sub-apps (:func:`mounts`), the OpenAPI
writer the ``/openapi.json`` route calls, the middleware and the state.
Middleware, outermost first: rate limits (:mod:`~realtyframes.sandbox._middleware`: headers on
every answer, 429 when a quota is used up, 500 ``server_error`` for unhandled exceptions, never a
stack trace) -> faults (``/v1/*`` only) -> Starlette's exception handling (SandboxError and HTTP
errors rendered by :mod:`~realtyframes.sandbox._negotiate`). Paths match exactly: a trailing slash
(``/v1/listings/``) is a 404, never a redirect.

>>> from realtyframes.sandbox import SandboxOptions
>>> app = create_app(SandboxOptions(listings=200, contacts=20))  # doctest: +SKIP
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.routing import BaseRoute, Route

from realtyframes.sandbox._admin import build_admin
from realtyframes.sandbox._errors import SandboxError
from realtyframes.sandbox._faults import FaultsMiddleware
from realtyframes.sandbox._mcp import product_host
from realtyframes.sandbox._mcp_docs import docs_host
from realtyframes.sandbox._middleware import LimitsMiddleware
from realtyframes.sandbox._negotiate import ErrorRenderer, http_error, sandbox_error
from realtyframes.sandbox._openapi import openapi_document
from realtyframes.sandbox._options import SandboxOptions
from realtyframes.sandbox._spec import DOCS_PATH, MCP_PATH
from realtyframes.sandbox.routes import (
    LEGACY_PATHS,
    RESO_PATH,
    SEARCH_PATH,
    SPARED_PATHS,
    starlette_routes,
)

__all__ = ["create_app", "mounts"]

#: The MCP transport's methods (streamable HTTP).
MCP_METHODS = ["GET", "POST", "DELETE"]


def mounts() -> list[BaseRoute]:
    """The ASGI sub-apps (new ones per app): the product MCP at :data:`MCP_PATH` (announced by the
    index document) and the documentation host's MCP at ``DOCS_PATH + MCP_PATH``.

    >>> [route.path for route in mounts()]
    ['/mcp', '/docs/mcp']
    """
    routes = [
        Route(MCP_PATH, product_host(), methods=MCP_METHODS),
        Route(DOCS_PATH + MCP_PATH, docs_host(), methods=MCP_METHODS),
    ]
    for route in routes:  # no implicit HEAD: the MCP transport has none (405 with Allow)
        route.methods = set(MCP_METHODS)
    return list(routes)


def create_app(options: SandboxOptions | None = None) -> Starlette:
    """The sandbox as an ASGI app (data generated now); ``app.state.admin`` holds its state.

    >>> app = create_app(SandboxOptions(listings=300, contacts=20))  # doctest: +SKIP
    >>> app.state.admin.now  # doctest: +SKIP
    """
    options = options or SandboxOptions()
    admin = build_admin(options)

    def on_search(count: int) -> None:
        admin.listings.insert_new(count)

    render_error = ErrorRenderer(
        LEGACY_PATHS, DOCS_PATH, protected=options.protected, mcp_path=MCP_PATH
    )
    app = Starlette(
        routes=[*starlette_routes(), *mounts()],
        middleware=[
            Middleware(
                LimitsMiddleware, admin=admin, render_error=render_error, exempt=(RESO_PATH,)
            ),
            Middleware(
                FaultsMiddleware,
                faults=options.faults,
                latency_ms=options.latency_ms,
                seed=options.seed,
                counters=admin.faults,
                render_error=render_error,
                on_search=on_search,
                search_path=SEARCH_PATH,
                spared=SPARED_PATHS,
            ),
        ],
        exception_handlers={SandboxError: sandbox_error, HTTPException: http_error},
    )
    # No 307 to the slash-less twin: /v1/listings/ is not an operation of the spec, and a
    # redirect would answer before authentication and validation. It is a 404 not_found.
    app.router.redirect_slashes = False
    app.state.admin = admin
    app.state.openapi = openapi_document  # read by GET /openapi.json (routes/docs)
    app.state.render_error = render_error
    return app
