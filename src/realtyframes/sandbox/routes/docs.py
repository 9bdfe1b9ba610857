"""The documentation host: ``/docs`` (the page error types and deprecation links point to) and
``/openapi.json`` (the machine-readable description).

The document is written from the route table this module is part of, so the handler does not
import its writer: ``create_app`` gives it (``app.state.openapi``, :mod:`realtyframes.sandbox._openapi`),
as it mounts the MCP sub-apps beside these routes.

>>> [e.path for e in ENDPOINTS]
['/openapi.json', '/docs']
"""

from __future__ import annotations

from collections.abc import Callable
from email.utils import format_datetime
from html import escape
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from realtyframes.sandbox._errors import CODES, EXTRA_CODES
from realtyframes.sandbox._negotiate import SUNSET
from realtyframes.sandbox._spec import DOCS_PATH, MCP_PATH, OPENAPI_PATH
from realtyframes.sandbox.routes import legacy, v1
from realtyframes.sandbox.routes._declare import Endpoint, admin_of

__all__ = ["ENDPOINTS"]


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


#: What writes ``/openapi.json`` (``_openapi.openapi_document``, given by ``create_app``).
OpenApiWriter = Callable[..., dict[str, Any]]


def _operations(paths: tuple[str, ...]) -> str:
    return " and ".join(f"<code>GET {escape(path)}</code>" for path in paths)


async def openapi(request: Request) -> Response:
    """GET /openapi.json."""
    write: OpenApiWriter = request.app.state.openapi
    base_url = str(request.base_url).rstrip("/")
    protected = admin_of(request).options.protected
    return JSONResponse(write(base_url=base_url, protected=protected))


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


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint(OPENAPI_PATH, openapi, faults=False),
    Endpoint(DOCS_PATH, docs, faults=False),
)
