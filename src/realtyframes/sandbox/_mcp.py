"""The product MCP at ``/mcp``: tools that mirror the /v1 operations and share their code path.

Each tool names a /v1 operation by its place in the index document (:data:`TOOLS`). Its
``inputSchema`` is written from the operation's query declarations (:mod:`._query`, the same
ones that validate REST requests and write ``/openapi.json``) plus its path parameter; its
``outputSchema`` is the operation's 200 schema from ``/openapi.json``.

A call runs the operation's own route handler in-process with the caller's headers (version
check, authentication, scope rule, query validation and store: all the REST ones), after the
HTTP request of the call went through the app's middleware once (one call counts once against
the quota, and its answer carries the rate-limit headers). A 200 becomes ``structuredContent``
plus the same JSON as text; any REST error becomes a tool error (``isError: true``) whose text
is the REST ApiError body as JSON (its code, message, status, and the parameter for a 400;
``insufficient_scope`` for a 403), with no ``structuredContent`` (an error matches no tool's
``outputSchema``, and clients that validate it would lose the message). JSON ``null`` is refused
unless the argument's schema takes it (none does): a 400-shaped tool error naming the argument,
never the default. A ``tools/call`` naming no tool is the JSON-RPC error -32602 (Invalid
params), as the MCP spec's tools error handling asks. In protected mode a request without a
valid credential is an HTTP 401 with ``WWW-Authenticate`` before MCP sees it.

>>> sorted(TOOLS)[:3]
['contact_activity', 'get_analytics', 'get_contact']
>>> input_schema("get_listing")["required"]
['ListingId']
"""

from __future__ import annotations

import json
import logging
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Scope

from realtyframes.sandbox._errors import SandboxError, bad_param
from realtyframes.sandbox._mcp_common import (
    error_body,
    query_text,
    refuse_nulls,
    tool_result,
    unknown_tool,
)
from realtyframes.sandbox._spec import API_VERSION
from realtyframes.sandbox.routes import Endpoint, v1

if TYPE_CHECKING:
    import mcp_types as types
    from mcp.server.lowlevel import Server

    from realtyframes.sandbox._mcp_host import McpHost

__all__ = [
    "SERVER_NAME",
    "TOOLS",
    "call_tool",
    "input_schema",
    "output_schema",
    "product_host",
]

_log = logging.getLogger("realtyframes.sandbox")

SERVER_NAME = "realtyframes-sandbox"
#: Tool name -> (group, name) of its operation in the index document.
TOOLS: dict[str, tuple[str, str]] = {
    "search_listings": ("listings", "search"),
    "get_listing": ("listings", "detail"),
    "listing_changes": ("listings", "changes"),
    "get_analytics": ("analytics", "query"),
    "list_contacts": ("contacts", "list"),
    "get_contact": ("contacts", "detail"),
    "contact_activity": ("contacts", "activity"),
    "me": ("user", "me"),
}
_PATH_PARAM = re.compile(r"\{(\w+)\}")
#: Headers of the MCP request that reach the operation (credentials, version); Accept is JSON.
_CARRIED = ("authorization", "x-api-key", "service-api-version", "user-agent")


def _endpoint(tool: str) -> Endpoint:
    group_name = TOOLS[tool]
    return next(e for e in v1.ENDPOINTS if e.index == group_name)


def _tool_of(endpoint: Endpoint) -> str:
    return next(name for name, index in TOOLS.items() if index == endpoint.index)


def _path_params(endpoint: Endpoint) -> list[str]:
    return _PATH_PARAM.findall(endpoint.path)


def input_schema(tool: str) -> dict[str, Any]:
    """The tool's ``inputSchema``: its path parameter and the operation's query declarations."""
    endpoint = _endpoint(tool)
    properties: dict[str, Any] = {
        name: {"type": "string", "minLength": 1, "description": f"The {name} (path parameter)"}
        for name in _path_params(endpoint)
    }
    for param in endpoint.params:
        properties[param.name] = {**param.schema(), "description": param.description}
    required = [*_path_params(endpoint), *(p.name for p in endpoint.params if p.required)]
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    return {**schema, "required": required} if required else schema


def _refs(node: Any) -> set[str]:
    if isinstance(node, dict):
        found = {node["$ref"].rsplit("/", 1)[-1]} if isinstance(node.get("$ref"), str) else set()
        return found.union(*(_refs(value) for value in node.values()))
    if isinstance(node, list):
        return set().union(*(_refs(value) for value in node))
    return set()


def output_schema(tool: str) -> dict[str, Any]:
    """The tool's ``outputSchema``: the operation's 200 schema, with the components it uses."""
    from realtyframes.sandbox._openapi_schemas import schemas

    doc = _endpoint(tool).doc
    assert doc is not None
    ok = dict(doc.ok["application/json"]["schema"])
    components = schemas()
    needed: set[str] = set()
    todo = _refs(ok)
    while todo:
        name = todo.pop()
        if name not in needed:
            needed.add(name)
            todo |= _refs(components[name])
    text = json.dumps({"ok": ok, "defs": {name: components[name] for name in sorted(needed)}})
    rewritten = json.loads(text.replace("#/components/schemas/", "#/$defs/"))
    return {"type": "object", "allOf": [rewritten["ok"]], "$defs": rewritten["defs"]}


def _tool(name: str) -> types.Tool:
    import mcp_types as types

    doc = _endpoint(name).doc
    assert doc is not None
    access = _endpoint(name).access
    scope = access.scope if access is not None else None
    needs = f" Needs the {scope} scope." if scope else ""
    return types.Tool(
        name=name,
        title=doc.summary,
        description=f"{doc.summary} (GET {_endpoint(name).path}).{needs}",
        input_schema=input_schema(name),
        output_schema=output_schema(name),
        annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )


def _operation_scope(request: Request, endpoint: Endpoint, arguments: dict[str, Any]) -> Scope:
    """The HTTP scope of the REST request a tool call stands for (refuses unknown arguments and
    nulls)."""
    path_names = _path_params(endpoint)
    allowed = [*path_names, *(p.name for p in endpoint.params)]
    for name in arguments:
        if name not in allowed:
            raise bad_param(name, "not an argument of this tool", ", ".join(allowed) or "none")
    refuse_nulls(input_schema(_tool_of(endpoint))["properties"], arguments)
    path_params: dict[str, str] = {}
    for name in path_names:
        value = arguments.get(name)
        if not isinstance(value, str) or not value.strip():
            raise bad_param(name, "required", f"the {name}, a non-empty string")
        path_params[name] = value
    query = [
        (name, query_text(name, value))
        for name, value in arguments.items()
        if name not in path_params
    ]
    path = _PATH_PARAM.sub(lambda m: quote(path_params[m.group(1)], safe=""), endpoint.path)
    carried = [(k.encode(), v.encode()) for k, v in request.headers.items() if k in _CARRIED]
    return {
        "type": "http",
        "http_version": "1.1",
        "method": "GET",
        "scheme": request.url.scheme,
        "server": request.scope.get("server"),
        "client": request.scope.get("client"),
        "root_path": "",
        "path": path,
        "raw_path": path.encode(),
        "query_string": urlencode(query).encode(),
        "headers": [*carried, (b"accept", b"application/json")],
        "path_params": path_params,
        "app": request.app,
    }


async def call_tool(request: Request, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    """Run the tool ``name`` as its REST operation with the caller's headers; a failure is a
    tool error, an unknown ``name`` the JSON-RPC error -32602 (raised: ``MCPError``)."""
    if name not in TOOLS:
        raise unknown_tool(name, TOOLS)
    endpoint = _endpoint(name)
    try:
        response = await endpoint.handler(Request(_operation_scope(request, endpoint, arguments)))
    except SandboxError as error:
        return tool_result(error_body(error), is_error=True)
    except Exception as exc:  # the REST side's last-resort 500, as a tool error
        _log.error("unhandled error in MCP tool %s", name, exc_info=exc)
        return tool_result(error_body(SandboxError(500)), is_error=True)
    return tool_result(json.loads(bytes(response.body)), is_error=False)


def _server() -> Server[Any]:
    import mcp_types as types
    from mcp.server.lowlevel import Server

    tools = [_tool(name) for name in TOOLS]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if not isinstance(ctx.request, Request):
            return tool_result(error_body(SandboxError(500, "no HTTP request")), is_error=True)
        return await call_tool(ctx.request, params.name, dict(params.arguments or {}))

    return Server(
        SERVER_NAME,
        version=API_VERSION,
        title="realtyframes sandbox: listings, contacts and analytics",
        instructions="Tools mirror the REST operations of /v1 with the same auth, scopes, "
        "quota and validation. Arguments use the spec's parameter names.",
        on_list_tools=list_tools,
        on_call_tool=on_call_tool,
    )


async def _guard(scope: Scope) -> Response | None:
    """Protected mode: no or a bad credential is HTTP 401 with ``WWW-Authenticate``."""
    app = scope["app"]
    admin = app.state.admin
    if not admin.options.protected:
        return None
    try:
        principal = admin.auth.authenticate(Headers(scope=scope))
    except SandboxError as error:
        refusal = error
    else:
        if principal is not None:
            return None
        refusal = SandboxError(
            401, "no credential: send Authorization: Bearer <token> or X-API-Key: <key>"
        )
    return app.state.render_error(scope, refusal)  # type: ignore[no-any-return]


def product_host() -> McpHost:
    """The ASGI app of ``/mcp`` (one per sandbox app)."""
    from realtyframes.sandbox._mcp_host import McpHost

    return McpHost(_server, guard=_guard)
