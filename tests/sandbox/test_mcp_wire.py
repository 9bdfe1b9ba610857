"""The MCP wire format of the sandbox, pinned with raw JSON-RPC over httpx (no SDK).

Headers, ``Mcp-Session-Id``, ``DELETE``, JSON answers (Accept ``application/json``) and
``text/event-stream`` answers (Accept with both), the 401 of protected mode, the documents.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from realtyframes.sandbox import DEMO

VERSION = "2025-11-25"
JSON_ONLY = {"Accept": "application/json"}
BOTH = {"Accept": "application/json, text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": VERSION,
        "capabilities": {},
        "clientInfo": {"name": "raw-test", "version": "0"},
    },
}


def _rpc(id_: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    return message if params is None else {**message, "params": params}


def _sse_messages(text: str) -> list[dict[str, Any]]:
    """The JSON-RPC messages of an SSE body (``data:`` lines of ``message`` events)."""
    out = []
    for event in text.replace("\r\n", "\n").split("\n\n"):
        data = [line[5:].strip() for line in event.split("\n") if line.startswith("data:")]
        if data and data[0]:
            out.append(json.loads("\n".join(data)))
    return out


def _open(
    http: httpx.Client, url: str, accept: dict[str, str]
) -> tuple[httpx.Response, dict[str, str]]:
    response = http.post(url, json=INITIALIZE, headers=accept)
    assert response.status_code == 200, response.text
    session = {
        "Mcp-Session-Id": response.headers["Mcp-Session-Id"],
        "MCP-Protocol-Version": VERSION,
    }
    done = http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                     headers={**accept, **session})  # fmt: skip
    assert done.status_code == 202 and done.content == b""
    return response, session


def test_json_session_initialize_list_call_delete(sandbox_url: str) -> None:
    url = f"{sandbox_url}/mcp"
    with httpx.Client(timeout=30) as http:
        response, session = _open(http, url, JSON_ONLY)
        assert response.headers["content-type"] == "application/json"
        assert len(response.headers["Mcp-Session-Id"]) >= 16
        assert response.headers["RateLimit"].startswith("limit=")
        assert "X-RateLimit-Remaining" in response.headers
        init = response.json()
        assert init["id"] == 1 and init["result"]["protocolVersion"] == VERSION
        assert init["result"]["serverInfo"]["name"] == "realtyframes-sandbox"
        assert init["result"]["capabilities"]["tools"] == {"listChanged": False}

        headers = {**JSON_ONLY, **session}
        ping = http.post(url, json=_rpc(2, "ping"), headers=headers)
        assert ping.json() == {"jsonrpc": "2.0", "id": 2, "result": {}}
        tools = http.post(url, json=_rpc(3, "tools/list"), headers=headers).json()
        assert len(tools["result"]["tools"]) == 8
        call = http.post(url, json=_rpc(4, "tools/call", {"name": "list_contacts",
                         "arguments": {"Limit": 1}}), headers=headers)  # fmt: skip
        assert call.headers["content-type"] == "application/json"
        result = call.json()["result"]
        assert result["isError"] is False and len(result["structuredContent"]["contacts"]) == 1
        assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
        bad = http.post(url, json=_rpc(5, "tools/call", {"name": "search_listings",
                        "arguments": {"Sort": "cheapest"}}), headers=headers)  # fmt: skip
        assert bad.status_code == 200 and bad.json()["result"]["isError"] is True
        assert "Sort: unknown value 'cheapest'; allowed:" in bad.text

        assert http.delete(url, headers=session).status_code == 200
        gone = http.post(url, json=_rpc(6, "ping"), headers=headers)
        assert gone.status_code == 404 and "RateLimit" in gone.headers


def test_sse_session_answers_text_event_stream(sandbox_url: str) -> None:
    url = f"{sandbox_url}/mcp"
    with httpx.Client(timeout=30) as http:
        response, session = _open(http, url, BOTH)
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["Mcp-Session-Id"] == session["Mcp-Session-Id"]
        assert "RateLimit" in response.headers
        (init,) = _sse_messages(response.text)
        assert init["result"]["protocolVersion"] == VERSION
        call = http.post(url, json=_rpc(2, "tools/call", {"name": "me", "arguments": {}}),
                         headers={**BOTH, **session})  # fmt: skip
        assert call.headers["content-type"].startswith("text/event-stream")
        (message,) = _sse_messages(call.text)
        assert message["id"] == 2 and message["result"]["structuredContent"]["plan"] == "standard"
        assert http.delete(url, headers=session).status_code == 200


def test_requests_without_session_or_with_bad_method(sandbox_url: str) -> None:
    url = f"{sandbox_url}/mcp"
    with httpx.Client(timeout=30) as http:
        no_session = http.post(url, json=_rpc(1, "tools/list"), headers=JSON_ONLY)
        assert no_session.status_code == 400 and no_session.json()["jsonrpc"] == "2.0"
        unknown = http.post(
            url, json=_rpc(1, "ping"), headers={**JSON_ONLY, "Mcp-Session-Id": "nope"}
        )
        assert unknown.status_code == 404
        put = http.put(url, json=INITIALIZE)
        assert put.status_code == 405 and put.json()["error"]["code"] == "method_not_allowed"
        assert put.headers["Allow"] == "DELETE, GET, POST"
        assert http.head(url).headers["Allow"] == "DELETE, GET, POST"


def test_protected_mode_401_with_www_authenticate(protected_sandbox_url: str) -> None:
    url = f"{protected_sandbox_url}/mcp"
    with httpx.Client(timeout=30) as http:
        for headers in ({}, {"X-API-Key": "rfk_wrong"}, {"Authorization": "Bearer nope"}):
            refused = http.post(url, json=INITIALIZE, headers={**JSON_ONLY, **headers})
            assert refused.status_code == 401
            assert refused.headers["WWW-Authenticate"].startswith('Bearer realm="realtyframes"')
            assert refused.json()["error"]["code"] == "invalid_token"
            assert "RateLimit" in refused.headers and "rfk_wrong" not in refused.text
        response, session = _open(http, url, {**JSON_ONLY, "X-API-Key": DEMO.api_key})
        assert response.json()["result"]["serverInfo"]["name"] == "realtyframes-sandbox"
        assert http.delete(url, headers={**session, "X-API-Key": DEMO.api_key}).status_code == 200


def test_documents_announce_mcp(sandbox_url: str, http_client: httpx.Client) -> None:
    index = http_client.get(f"{sandbox_url}/v1").json()
    assert index["mcp"] == "/mcp"
    openapi = http_client.get(f"{sandbox_url}/openapi.json").json()
    assert openapi["x-mcp"]["product"]["path"] == index["mcp"]
    assert "/mcp" in openapi["info"]["description"]
    assert "/docs/mcp" in http_client.get(f"{sandbox_url}/docs").text
    docs = http_client.post(f"{sandbox_url}/docs/mcp", json=INITIALIZE, headers=JSON_ONLY)
    assert docs.json()["result"]["capabilities"]["resources"] is not None
