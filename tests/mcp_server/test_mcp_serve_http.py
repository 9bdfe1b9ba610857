"""``mcp serve --port`` over HTTP: its own bearer token (``--auth-token`` /
``REALTYFRAMES_MCP_AUTH_TOKEN``), 401 with ``WWW-Authenticate: Bearer`` without it, the refusal
to bind a non-loopback address without one, and the token never shown. Real processes, the
official SDK client and httpx.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from realtyframes.errors import ConfigError
from realtyframes.mcp_server import AUTH_ENV, AuthToken, is_loopback
from realtyframes.mcp_server.__main__ import http_options, parse_args

TOKEN = "mcp-serve-test-token-0123456789abcdef"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


def _post(url: str, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(url, json=INITIALIZE, headers={**ACCEPT, **headers}, timeout=30)


def _session(url: str, token: str | None, body: Callable[[ClientSession], Any]) -> Any:
    async def main() -> Any:
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=headers) as http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await body(session)

    return anyio.run(main)


def test_requests_without_the_token_get_401_and_the_sdk_client_with_it_works(
    sandbox_url: str, start_mcp_serve: Any
) -> None:
    served = start_mcp_serve(sandbox_url, env={AUTH_ENV: TOKEN})
    missing = _post(served.url, {})
    wrong = _post(served.url, {"Authorization": "Bearer not-the-token"})
    basic = _post(served.url, {"Authorization": f"Basic {TOKEN}"})
    api_token = _post(served.url, {"Authorization": f"Bearer {TOKEN}x"})
    for response in (missing, wrong, basic, api_token):
        assert response.status_code == 401
        assert response.headers["WWW-Authenticate"].startswith("Bearer ")
    # RFC 6750 §3.1: no error code when no credential was sent; invalid_token for a wrong one
    assert missing.headers["WWW-Authenticate"] == 'Bearer realm="realtyframes-mcp"'
    assert 'error="invalid_token"' in wrong.headers["WWW-Authenticate"]
    assert "bearer token is required" in missing.json()["message"]
    assert _post(served.url, {"Authorization": f"Bearer {TOKEN}"}).status_code == 200

    async def body(session: ClientSession) -> list[Any]:
        return [
            await session.list_tools(),
            await session.call_tool("compare_markets", {"markets": ["Miami", "Miami"]}),
            await session.call_tool("market_summary", {"window_days": None}),
        ]

    tools, duplicate, null = _session(served.url, TOKEN, body)
    assert "sync_market" in {t.name for t in tools.tools}
    for result, param in ((duplicate, "markets"), (null, "window_days")):
        assert result.is_error is True and result.structured_content is None
        assert json.loads(result.content[0].text)["error"]["param"] == param

    async def refused(session: ClientSession) -> None:
        raise AssertionError("initialize must fail without the token")

    for token in (None, "not-the-token"):  # the SDK client gives up on the 401
        with pytest.raises(ExceptionGroup) as failed:
            _session(served.url, token, refused)
        assert failed.group_contains(MCPError, depth=None)
    out, err = served.stop()
    assert TOKEN not in out + err and out == ""
    assert "bearer token required" in err


def test_auth_token_flag_and_a_wrong_host_header_still_refused(
    sandbox_url: str, start_mcp_serve: Any
) -> None:
    served = start_mcp_serve(sandbox_url, "--auth-token", TOKEN)
    assert _post(served.url, {}).status_code == 401
    right = {"Authorization": f"Bearer {TOKEN}"}
    assert _post(served.url, right).status_code == 200
    # the SDK's DNS-rebinding checks on loopback stay (Host / Origin)
    assert _post(served.url, {**right, "Host": "evil.example:80"}).status_code in (421, 403)
    assert _post(served.url, {**right, "Origin": "http://evil.example"}).status_code == 403
    out, err = served.stop()
    assert TOKEN not in out + err


@pytest.mark.parametrize(
    "command",
    [
        [sys.executable, "-m", "realtyframes.cli", "mcp", "serve"],
        [sys.executable, "-m", "realtyframes.mcp_server"],
    ],
)
def test_non_loopback_host_without_a_token_refuses_to_start(
    command: list[str], sandbox_url: str
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REALTYFRAMES_")}
    env["REALTYFRAMES_BASE_URL"] = sandbox_url
    done = subprocess.run([*command, "--port", "8765", "--host", "0.0.0.0"], env=env,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode != 0 and done.stdout == ""
    assert "0.0.0.0 is not a loopback address" in done.stderr
    assert "--auth-token" in done.stderr and AUTH_ENV in done.stderr


def test_http_options_token_and_host_rules() -> None:
    env = {AUTH_ENV: TOKEN}
    options = http_options(parse_args(["--port", "8765"]), env)
    assert options["host"] == "127.0.0.1" and isinstance(options["auth_token"], AuthToken)
    assert options["auth_token"].matches(f"Bearer {TOKEN}")
    given = http_options(parse_args(["--port", "1", "--auth-token", "flag-wins"]), env)
    assert given["auth_token"].matches("Bearer flag-wins")
    assert not given["auth_token"].matches(f"Bearer {TOKEN}")
    anywhere = http_options(parse_args(["--port", "1", "--host", "0.0.0.0"]), env)
    assert anywhere["host"] == "0.0.0.0"
    # stdio needs no token: the environment's is ignored there, the flags are refused
    assert http_options(parse_args([]), env) == {"port": None, "host": "127.0.0.1",
                                                  "auth_token": None}  # fmt: skip
    for argv, flag in ((["--auth-token", TOKEN], "--auth-token"), (["--host", "::1"], "--host")):
        with pytest.raises(ConfigError, match="applies to HTTP only") as info:
            http_options(parse_args(argv), {})
        assert info.value.param == flag and TOKEN not in str(info.value)
    with pytest.raises(ConfigError, match="not a loopback address"):
        http_options(parse_args(["--port", "1", "--host", "192.0.2.1"]), {})
    assert [is_loopback(h) for h in ("::1", "[::1]", "127.0.0.2", "example.com", "::")] == [
        True, True, True, False, False]  # fmt: skip


def test_the_token_never_shows(capsys: pytest.CaptureFixture[str]) -> None:
    args = parse_args(["--port", "8765", "--auth-token", TOKEN])
    assert TOKEN not in repr(args) and TOKEN not in str(args.auth_token)
    assert repr(args.auth_token) == "AuthToken('***')"
    with pytest.raises(ConfigError) as info:
        AuthToken("two words")
    assert "two words" not in str(info.value)
    with pytest.raises(SystemExit):
        parse_args(["--port", "8765", "--auth-token", ""])
    assert "--auth-token: empty or not a header value" in capsys.readouterr().err
