"""A client that goes away in the middle of its MCP request (a client whose timeout ran out on a
slow first request: ``realtyframes mcp tools --timeout 0.05`` on the embedded sandbox) is not an
error of the sandbox: no "Error handling POST request" ClientDisconnect traceback on stderr (the
embedded sandbox shares the command's stderr), nothing answered; a whole request still is.

The sandbox's real ``/docs/mcp`` app (the SDK's transport inside) gets the ASGI messages a
server hands it when the client's connection closes after part of the body.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from realtyframes.sandbox._mcp_docs import docs_host

INITIALIZE = json.dumps({
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "gone", "version": "0"}},
}).encode()  # fmt: skip
SCOPE: dict[str, Any] = {
    "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
    "scheme": "http", "path": "/docs/mcp", "raw_path": b"/docs/mcp", "root_path": "",
    "query_string": b"", "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 5000),
    "headers": [(b"content-type", b"application/json"),
                (b"content-length", str(len(INITIALIZE)).encode())],
}  # fmt: skip


async def _exchange(messages: list[dict[str, Any]], accept: bytes) -> list[dict[str, Any]]:
    """Serve one request whose client sends ``messages`` (then is gone); what was sent back."""
    scope = {**SCOPE, "headers": [*SCOPE["headers"], (b"accept", accept)]}
    host = docs_host()
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await host(scope, receive, send)
    return sent


def test_a_client_gone_mid_request_gets_no_traceback_and_a_whole_request_an_answer(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    half = INITIALIZE[: len(INITIALIZE) // 2]
    gone = [{"type": "http.request", "body": half, "more_body": True}, {"type": "http.disconnect"}]
    assert (
        asyncio.run(_exchange(gone, b"application/json, text/event-stream")) == []
    )  # nothing to answer: nobody listens
    errors = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [(r.name, r.getMessage()) for r in errors] == []
    whole = [{"type": "http.request", "body": INITIALIZE, "more_body": False}]
    sent = asyncio.run(_exchange(whole, b"application/json"))
    assert sent[0]["type"] == "http.response.start" and sent[0]["status"] == 200
    assert b"realtyframes sandbox" in b"".join(m.get("body", b"") for m in sent[1:])
