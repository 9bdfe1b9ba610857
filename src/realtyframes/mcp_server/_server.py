"""The MCP server of the official ``mcp`` SDK around :data:`~._tools.TOOLS`, on stdio or HTTP.

:func:`build_server` makes a low-level ``Server`` whose ``tools/list`` gives the five tools and
whose ``tools/call`` runs one in a worker thread (the client is synchronous), one call at a
time. The client is made on the first call (``tools/list`` starts nothing). A call's arguments
are checked against the tool's ``inputSchema`` first (``null`` is refused unless the schema takes
it); any failure is a tool error (``isError: true``, the error JSON as text, no
``structuredContent``), never a crash of the server, and its text is masked of the client's
secrets. A ``tools/call`` naming no tool is the JSON-RPC error -32602 (Invalid params).

:func:`serve` runs it: over stdio (stdout is the protocol; logs go to stderr), or with ``port``
over streamable HTTP on 127.0.0.1 (another address only with a bearer token, see
:mod:`._http`).

>>> build_server(lambda: None).name  # doctest: +SKIP
'realtyframes'
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from realtyframes._version import __version__
from realtyframes.errors import RealtyFramesError
from realtyframes.mcp_server._http import AUTH_ENV, AuthToken, BearerGuard, check_bind
from realtyframes.mcp_server._tools import TOOLS, check_call, error_body

if TYPE_CHECKING:
    import mcp_types as types
    from mcp.server.lowlevel import Server

    from realtyframes._client import Client

__all__ = [
    "HOST",
    "SERVER_NAME",
    "ToolRunner",
    "build_server",
    "http_app",
    "serve",
    "unknown_tool",
]

logger = logging.getLogger("realtyframes.mcp_server")

SERVER_NAME = "realtyframes"
#: The interface the HTTP transport listens on by default (another one needs a bearer token).
HOST = "127.0.0.1"
_INSTRUCTIONS = (
    "Market questions answered from the local cache and realtyframes' analysis layer. Market "
    "tools take a scope of listing search filters (City, PostalCode, PropertyType ...) with the "
    "spec's parameter names, plus the analysis function's own arguments; results are tables "
    "(columns, row_count, rows)."
)


class ToolRunner:
    """Runs tool calls on one client, made by ``factory`` on first use; one call at a time."""

    def __init__(self, factory: Callable[[], Client]) -> None:
        self._factory = factory
        self._client: Client | None = None
        self._lock = threading.Lock()

    def _mask(self, text: str) -> str:
        return text if self._client is None else self._client.api.mask(text)

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """(JSON result, is_error) of tool ``name``; never raises."""
        with self._lock:
            try:
                spec = TOOLS.get(name)
                if spec is None:
                    raise RealtyFramesError(f"unknown tool {name!r}; tools: {', '.join(TOOLS)}")
                check_call(spec, arguments)
                if self._client is None:
                    self._client = self._factory()
                return spec.run(self._client, arguments), False
            except Exception as exc:  # every failure is the caller's tool error
                if not isinstance(exc, RealtyFramesError | ValueError | TypeError):
                    logger.error("tool %s failed: %s", name, self._mask(repr(exc)))
                return error_body(exc, self._mask), True

    def close(self) -> None:
        """Close the client, if one was made."""
        if self._client is not None:
            self._client.close()


def _result(body: dict[str, Any], is_error: bool) -> types.CallToolResult:
    """A result: its JSON as text, and as ``structuredContent`` unless it is an error (an error
    body matches no tool's output, so it is text only, as the spec's tool errors are)."""
    import mcp_types as types

    text = types.TextContent(type="text", text=json.dumps(body))
    if is_error:
        return types.CallToolResult(content=[text], is_error=True)
    return types.CallToolResult(content=[text], structured_content=body)


def unknown_tool(name: str) -> Exception:
    """The JSON-RPC error -32602 (Invalid params) of a ``tools/call`` naming no tool."""
    from mcp.shared.exceptions import MCPError
    from mcp_types import INVALID_PARAMS

    return MCPError(INVALID_PARAMS, f"Unknown tool: {name!r}; tools: {', '.join(TOOLS)}")


def build_server(runner: ToolRunner) -> Server[Any]:
    """The SDK ``Server`` of the five tools, calling them through ``runner``."""
    import anyio.to_thread
    import mcp_types as types
    from mcp.server.lowlevel import Server

    tools = [
        types.Tool(
            name=spec.name,
            title=spec.title,
            description=spec.description,
            input_schema=spec.input_schema,
            annotations=types.ToolAnnotations(
                read_only_hint=spec.read_only, open_world_hint=not spec.read_only
            ),
        )
        for spec in TOOLS.values()
    ]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in TOOLS:
            raise unknown_tool(params.name)
        call = partial(runner.call, params.name, dict(params.arguments or {}))
        return _result(*await anyio.to_thread.run_sync(call))

    return Server(
        SERVER_NAME,
        version=__version__,
        title="realtyframes: market questions from the cache and the analysis layer",
        instructions=_INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def _stdio(server: Server[Any]) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def http_app(server: Server[Any], host: str, token: AuthToken | None) -> Any:
    """The ASGI app of the HTTP transport: the SDK's streamable HTTP app (its Host/Origin checks
    on a loopback ``host``), behind :class:`~._http.BearerGuard` when a ``token`` is set."""
    app = server.streamable_http_app(host=host)
    return app if token is None else BearerGuard(app, token)


def serve(
    factory: Callable[[], Client],
    port: int | None = None,
    *,
    host: str = HOST,
    auth_token: AuthToken | None = None,
) -> None:
    """Serve the tools until stopped: stdio, or streamable HTTP on ``host:port`` at ``/mcp``
    (a non-loopback ``host`` needs ``auth_token``: :class:`~realtyframes.ConfigError` before
    anything starts).

    >>> serve(rf.Client)  # doctest: +SKIP
    """
    if port is not None:
        check_bind(host, auth_token)
    runner = ToolRunner(factory)
    server = build_server(runner)
    try:
        if port is None:
            import anyio

            anyio.run(_stdio, server)
        else:
            import uvicorn

            app = http_app(server, host, auth_token)
            shown = f"[{host}]" if ":" in host else host
            guard = (
                "bearer token required"
                if auth_token is not None
                else f"no bearer token: any local process can call the tools; set {AUTH_ENV}"
            )
            logger.warning("MCP server on http://%s:%d/mcp (%s)", shown, port, guard)
            uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
    finally:
        runner.close()
