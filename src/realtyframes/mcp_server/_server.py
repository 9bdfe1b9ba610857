"""The MCP server of the official ``mcp`` SDK around :data:`~._tools.TOOLS`, on stdio or HTTP.

:func:`build_server` makes a low-level ``Server`` whose ``tools/list`` gives the five tools and
whose ``tools/call`` runs one in a worker thread (the client is synchronous), one call at a
time. The client is made on the first call (``tools/list`` starts nothing). A call's arguments
are checked against the tool's ``inputSchema`` first; any failure is a tool error
(``isError: true``), never a crash of the server, and its text is masked of the client's secrets.

:func:`serve` runs it: over stdio (stdout is the protocol; logs go to stderr), or with ``port``
over streamable HTTP on 127.0.0.1 only.

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
from realtyframes.mcp_server._tools import TOOLS, check_call, error_body

if TYPE_CHECKING:
    import mcp_types as types
    from mcp.server.lowlevel import Server

    from realtyframes._client import Client

__all__ = ["HOST", "SERVER_NAME", "ToolRunner", "build_server", "serve"]

logger = logging.getLogger("realtyframes.mcp_server")

SERVER_NAME = "realtyframes"
#: The only interface the HTTP transport listens on.
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
    import mcp_types as types

    text = types.TextContent(type="text", text=json.dumps(body))
    return types.CallToolResult(content=[text], structured_content=body, is_error=is_error)


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


def serve(factory: Callable[[], Client], port: int | None = None) -> None:
    """Serve the tools until stopped: stdio, or streamable HTTP on ``127.0.0.1:port`` at ``/mcp``.

    >>> serve(rf.Client)  # doctest: +SKIP
    """
    runner = ToolRunner(factory)
    server = build_server(runner)
    try:
        if port is None:
            import anyio

            anyio.run(_stdio, server)
        else:
            import uvicorn

            app = server.streamable_http_app(host=HOST)
            logger.warning("MCP server on http://%s:%d/mcp", HOST, port)
            uvicorn.run(app, host=HOST, port=port, log_level="warning", access_log=False)
    finally:
        runner.close()
