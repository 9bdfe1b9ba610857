"""``realtyframes mcp serve``: the toolkit's own MCP server (stdio, or streamable HTTP on loopback).

An assistant in an editor or a desktop app asks market questions; the answers come from the
local cache and the analysis layer. Tools (:data:`TOOLS`): ``market_summary``, ``price_drops``,
``compare_markets``, ``traffic_summary`` (the analysis functions' own arguments, plus the scope
of the market) and ``sync_market``; they return tables. The server is configured like
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
    from realtyframes.mcp_server._server import HOST, SERVER_NAME, ToolRunner, build_server, serve
    from realtyframes.mcp_server._tools import MAX_ROWS, TOOLS, ToolSpec, table

# Imported on first use: `realtyframes mcp serve --help` does not load pandas or the SDK.
_SERVER = "realtyframes.mcp_server._server"
_TOOLS = "realtyframes.mcp_server._tools"
_LAZY = {
    **dict.fromkeys(("HOST", "SERVER_NAME", "ToolRunner", "build_server", "serve"), _SERVER),
    **dict.fromkeys(("MAX_ROWS", "TOOLS", "ToolSpec", "table"), _TOOLS),
}

__all__ = [
    "HOST",
    "MAX_ROWS",
    "SERVER_NAME",
    "TOOLS",
    "ToolRunner",
    "ToolSpec",
    "build_server",
    "serve",
    "table",
]

__getattr__, __dir__ = lazy(__name__, _LAZY, globals(), __all__)
