"""The documentation host: ``/docs`` (the page error types and deprecation links point to) and
``/openapi.json`` (the machine-readable description).

The place for ASGI sub-apps: :func:`mounts` routes the MCP endpoints, the main host's product
MCP at :data:`MCP_PATH` (announced by the index document; :mod:`realtyframes.sandbox._mcp`) and
the documentation host's MCP at ``DOCS_PATH + MCP_PATH`` (:mod:`realtyframes.sandbox._mcp_docs`).

>>> DOCS_PATH, MCP_PATH, [route.path for route in mounts()]
('/docs', '/mcp', ['/mcp', '/docs/mcp'])
"""

from __future__ import annotations

from email.utils import format_datetime
from html import escape

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Route

from realtyframes.sandbox._errors import CODES, EXTRA_CODES
from realtyframes.sandbox._negotiate import SUNSET
from realtyframes.sandbox._spec import DOCS_PATH, MCP_PATH, OPENAPI_PATH
from realtyframes.sandbox.routes import legacy, v1
from realtyframes.sandbox.routes._declare import Endpoint, admin_of

__all__ = ["ENDPOINTS", "mounts"]

MCP_METHODS = ["GET", "POST", "DELETE"]

_DOCS = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>realtyframes sandbox API</title></head>
<body>
<h1>realtyframes sandbox API</h1>
<p>The embedded sandbox of the listings, contacts and analytics REST API. Machine-readable
description: <a href="{openapi}">{openapi}</a>. MCP (streamable HTTP): the product tools at
<code>{mcp}</code> (same auth, scopes and quota as REST), this documentation at
<code>{docs_mcp}</code>.</p>
<h2>Errors</h2>
<dl>
{codes}
</dl>
<h2 id="deprecation">Deprecation</h2>
<p>The legacy operations {legacy} are deprecated
and answer with <code>Deprecation</code>, <code>Sunset: {sunset}</code> and a <code>Link</code> to
this section. Use {successors} instead.</p>
</body></html>
"""


def _operations(paths: tuple[str, ...]) -> str:
    return " and ".join(f"<code>GET {escape(path)}</code>" for path in paths)


async def openapi(request: Request) -> Response:
    """GET /openapi.json."""
    from realtyframes.sandbox._openapi import openapi_document

    base_url = str(request.base_url).rstrip("/")
    protected = admin_of(request).options.protected
    return JSONResponse(openapi_document(base_url=base_url, protected=protected))


async def docs(request: Request) -> Response:
    """GET /docs: the documentation page that error types and deprecation links point to."""
    listed = [(status, code, message) for status, (code, message) in CODES.items()]
    listed += [(status, code, message) for code, (status, message) in EXTRA_CODES.items()]
    codes = "\n".join(
        f'<dt id="{code}">{status} <code>{code}</code></dt><dd>{message}</dd>'
        for status, code, message in sorted(listed)
    )
    page = _DOCS.format(
        openapi=OPENAPI_PATH,
        mcp=MCP_PATH,
        docs_mcp=DOCS_PATH + MCP_PATH,
        codes=codes,
        legacy=_operations(tuple(e.path for e in legacy.ENDPOINTS)),
        successors=_operations((v1.path_of("user", "me"), v1.path_of("contacts", "list"))),
        sunset=format_datetime(SUNSET, usegmt=True),
    )
    return HTMLResponse(page)


def mounts() -> list[BaseRoute]:
    """The ASGI sub-apps (new ones per app): the product MCP and the documentation MCP."""
    from realtyframes.sandbox._mcp import product_host
    from realtyframes.sandbox._mcp_docs import docs_host

    routes = [
        Route(MCP_PATH, product_host(), methods=MCP_METHODS),
        Route(DOCS_PATH + MCP_PATH, docs_host(), methods=MCP_METHODS),
    ]
    for route in routes:  # no implicit HEAD: the MCP transport has none (405 with Allow)
        route.methods = set(MCP_METHODS)
    return list(routes)


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint(OPENAPI_PATH, openapi, faults=False),
    Endpoint(DOCS_PATH, docs, faults=False),
)
