"""``realtyframes mcp serve``: the toolkit's own MCP server (:mod:`realtyframes.mcp_server`).

stdio by default (an MCP client starts it as a subprocess: ``command: realtyframes``, ``args:
["mcp", "serve"]``); ``--port N``: streamable HTTP on ``http://127.0.0.1:N/mcp`` (``--host``,
and a bearer token of its own: ``--auth-token`` / ``REALTYFRAMES_MCP_AUTH_TOKEN``). The connection
flags of every command choose the data (flags > ``REALTYFRAMES_*`` > config file > the embedded
sandbox); log lines go to stderr, never to stdout. Registration in MCP clients: docs/mcp-serve.md.

>>> main(["mcp", "serve", "--port", "8765"])  # doctest: +SKIP
"""

from __future__ import annotations

import argparse

from realtyframes._config import Settings
from realtyframes.cli.config import PROG, add_arguments, client_options, run_guarded

__all__ = ["add_serve_parser", "run_mcp_serve"]


def add_serve_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``serve`` to the ``mcp`` group's actions (``subparsers``)."""
    from realtyframes.mcp_server.__main__ import add_http_arguments

    serve = subparsers.add_parser(
        "serve",
        help="run the toolkit's own MCP server (stdio; --port: HTTP on loopback)",
        description="Serve market_summary, price_drops, compare_markets, traffic_summary and "
        "sync_market to an MCP client, answered from the cache and the analysis layer. stdio "
        "by default; --port N serves streamable HTTP on 127.0.0.1 (clients must send "
        "Authorization: Bearer <token> when --auth-token or REALTYFRAMES_MCP_AUTH_TOKEN is set; "
        "--host other than loopback refuses to start without one).",
    )
    add_http_arguments(serve)
    add_arguments(serve)
    serve.set_defaults(func=run_mcp_serve)


def run_mcp_serve(args: argparse.Namespace) -> int:
    """The ``mcp serve`` command: serve until stopped (stdio: until the client closes it)."""

    def body(settings: Settings) -> int:
        from realtyframes._client import Client
        from realtyframes.mcp_server.__main__ import http_options, run

        http = http_options(args)  # a bad --host / --auth-token stops here: error line, exit 1
        options = {**settings.client_kwargs(), **client_options(args)}
        return run(lambda: Client(**options), **http)

    return run_guarded(f"{PROG} mcp serve", args, body, anomalies=False)
