"""``realtyframes mcp serve``: the toolkit's own MCP server (stdio, or streamable HTTP on loopback).

An assistant in an editor or a desktop app asks market questions; the answers come from the
local cache and the analysis layer. Tools (:data:`TOOLS`): ``market_summary``, ``price_drops``,
``compare_markets``, ``traffic_summary`` (the analysis functions' own arguments, plus the scope
of the market) and ``sync_market``; they return tables. List arguments hold at most
:data:`MAX_LIST_ITEMS` items, each once; ``null`` is refused (leave an argument out instead); a
tool error is ``isError`` with the error JSON as text; an unknown tool is JSON-RPC -32602. Over
HTTP (``--port``) clients send the server's own bearer token (:class:`AuthToken`). The server is configured like
``rf.Client()`` (arguments > ``REALTYFRAMES_*`` > config file > the embedded sandbox); logs go to
stderr, never to stdout (the protocol on stdio). Registering it in an MCP client:
``docs/mcp-serve.md``. The ``mcp`` SDK is imported only when serving.

>>> from realtyframes.mcp_server import TOOLS
>>> sorted(TOOLS)[:2]
['compare_markets', 'market_summary']
>>> serve(rf.Client, port=8765)  # doctest: +SKIP
"""

from typing import TYPE_CHECKING

from realtyframes._lazy import lazy

if TYPE_CHECKING:
    from realtyframes.mcp_server._http import AUTH_ENV, AuthToken, is_loopback
    from realtyframes.mcp_server._schemas import MAX_LIST_ITEMS
    from realtyframes.mcp_server._server import HOST, SERVER_NAME, ToolRunner, build_server, serve
    from realtyframes.mcp_server._tools import MAX_ROWS, TOOLS, ToolSpec, table

# Imported on first use: `realtyframes mcp serve --help` does not load pandas or the SDK.
_SERVER = "realtyframes.mcp_server._server"
_TOOLS = "realtyframes.mcp_server._tools"
_LAZY = {
    **dict.fromkeys(("AUTH_ENV", "AuthToken", "is_loopback"), "realtyframes.mcp_server._http"),
    "MAX_LIST_ITEMS": "realtyframes.mcp_server._schemas",
    **dict.fromkeys(("HOST", "SERVER_NAME", "ToolRunner", "build_server", "serve"), _SERVER),
    **dict.fromkeys(("MAX_ROWS", "TOOLS", "ToolSpec", "table"), _TOOLS),
}

__all__ = [
    "AUTH_ENV",
    "HOST",
    "MAX_LIST_ITEMS",
    "MAX_ROWS",
    "SERVER_NAME",
    "TOOLS",
    "AuthToken",
    "ToolRunner",
    "ToolSpec",
    "build_server",
    "is_loopback",
    "serve",
    "table",
]

__getattr__, __dir__ = lazy(__name__, _LAZY, globals(), __all__)
