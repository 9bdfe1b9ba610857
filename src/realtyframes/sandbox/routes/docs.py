"""The documentation host: ``/docs`` (the page error types and deprecation links point to) and
``/openapi.json`` (the machine-readable description).

The place for documentation sub-apps: :func:`mounts` returns the ASGI apps mounted under
``DOCS_PATH`` (none yet; the MCP issue mounts ``/docs/mcp`` here) and :data:`MCP_PATH` is the main
host's MCP path announced by the index document.

>>> DOCS_PATH, MCP_PATH, mounts()
('/docs', '/mcp', [])
"""

from __future__ import annotations

from email.utils import format_datetime
from html import escape

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute

from realtyframes.sandbox._errors import CODES
from realtyframes.sandbox._negotiate import SUNSET
from realtyframes.sandbox.routes import legacy, v1
from realtyframes.sandbox.routes._declare import Endpoint, admin_of

__all__ = ["DOCS_PATH", "ENDPOINTS", "MCP_PATH", "OPENAPI_PATH", "mounts"]

DOCS_PATH = "/docs"
OPENAPI_PATH = "/openapi.json"
#: The main host's MCP endpoint (announced by the index document; served by a later issue).
MCP_PATH = "/mcp"

_DOCS = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>realtyframes sandbox API</title></head>
<body>
<h1>realtyframes sandbox API</h1>
<p>The embedded sandbox of the listings, contacts and analytics REST API. Machine-readable
description: <a href="{openapi}">{openapi}</a>.</p>
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
    codes = "\n".join(
        f'<dt id="{code}">{status} <code>{code}</code></dt><dd>{message}</dd>'
        for status, (code, message) in sorted(CODES.items())
    )
    page = _DOCS.format(
        openapi=OPENAPI_PATH,
        codes=codes,
        legacy=_operations(tuple(e.path for e in legacy.ENDPOINTS)),
        successors=_operations((v1.path_of("user", "me"), v1.path_of("contacts", "list"))),
        sunset=format_datetime(SUNSET, usegmt=True),
    )
    return HTMLResponse(page)


def mounts() -> list[BaseRoute]:
    """ASGI sub-apps of the documentation host, as ``Mount(f"{DOCS_PATH}/...", app)`` (none yet)."""
    return []


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint(OPENAPI_PATH, openapi, faults=False),
    Endpoint(DOCS_PATH, docs, faults=False),
)
