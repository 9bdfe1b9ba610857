"""``realtyframes mcp serve`` through the official SDK client: ``python -m realtyframes.mcp_server``
as a subprocess over stdio (and one test over streamable HTTP with ``--port``), its environment
pointing at the shared sandbox and a temporary cache directory.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TextIO

import anyio
import httpx
import pandas as pd
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

import realtyframes as rf
from realtyframes.analysis import MARKET_METRICS, SEGMENTS
from realtyframes.mcp_server import MAX_LIST_ITEMS
from realtyframes.mcp_server.__main__ import parse_args

Body = Callable[[ClientSession], Awaitable[Any]]
SCOPE = {"City": "Miami Beach"}
TOOL_NAMES = {"market_summary", "price_drops", "compare_markets", "traffic_summary", "sync_market"}


def server_env(base_url: str, cache_dir: Path) -> dict[str, str]:
    """The environment of the server: the sandbox and the cache, nothing else of realtyframes."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REALTYFRAMES_")}
    return {**env, "REALTYFRAMES_BASE_URL": base_url, "REALTYFRAMES_CACHE_DIR": str(cache_dir)}


def run_stdio(env: dict[str, str], body: Body, errlog: TextIO = sys.stderr) -> Any:
    """Start ``python -m realtyframes.mcp_server`` over stdio and run ``body`` in a session."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "realtyframes.mcp_server"], env=env
    )

    async def main() -> Any:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await body(session)

    return anyio.run(main)


def _client(sandbox_url: str, cache_dir: Path) -> rf.Client:
    return rf.Client(base_url=sandbox_url, cache_dir=cache_dir)


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Records as the server writes them (index as columns, NaN as null, ISO timestamps)."""
    text = frame.reset_index().to_json(orient="records", date_format="iso", date_unit="s")
    return list(json.loads(text or "[]"))


def test_tools_list_gives_the_five_tools_with_their_input_schemas(
    sandbox_url: str, tmp_path: Path
) -> None:
    async def body(session: ClientSession) -> Any:
        return {t.name: t for t in (await session.list_tools()).tools}

    tools = run_stdio(server_env(sandbox_url, tmp_path), body)
    assert set(tools) == TOOL_NAMES
    summary = tools["market_summary"].input_schema
    assert summary["additionalProperties"] is False
    # the analysis function's own arguments, with their defaults and enumerations
    assert summary["properties"]["window_days"]["default"] == 90
    assert summary["properties"]["segment"]["enum"] == list(SEGMENTS)
    assert summary["properties"]["compare_previous"]["type"] == "boolean"
    # the market's scope: the listing search filters a sync follows, not the ones it manages
    assert "City" in summary["properties"] and "Status" not in summary["properties"]
    assert "Condominium" in summary["properties"]["Subtypes"]["items"]["enum"]
    drops = tools["price_drops"].input_schema["properties"]
    assert drops["min_drop_pct"]["maximum"] == 1 and "since" in drops
    compare = tools["compare_markets"].input_schema["properties"]
    assert set(compare["metrics"]["items"]["enum"]) == set(MARKET_METRICS)
    traffic = tools["traffic_summary"].input_schema["properties"]
    assert traffic["Period"]["enum"] == ["24h", "7d", "30d", "90d", "1y"]
    assert traffic["top_n"]["default"] == 10
    assert tools["sync_market"].annotations.read_only_hint is False
    assert tools["market_summary"].annotations.read_only_hint is True


def test_market_summary_equals_rf_market_summary_on_the_same_cache(
    sandbox_url: str, sandbox_as_of: Any, tmp_path: Path
) -> None:
    """On the server's day (its clock; without ``as_of`` the tool, as the report, means today's
    end, and this sandbox's clock is not today)."""
    day = sandbox_as_of.date().isoformat()
    arguments = {**SCOPE, "window_days": 60, "by": ["City", "PropertySubType"], "as_of": day}

    async def body(session: ClientSession) -> Any:
        return await session.call_tool("market_summary", arguments)

    result = run_stdio(server_env(sandbox_url, tmp_path), body)
    assert result.is_error is False, result.content
    got = result.structured_content
    assert json.loads(result.content[0].text) == got
    with _client(sandbox_url, tmp_path) as client:
        assert client.sync_state(**SCOPE) is not None  # the server synced into this cache
        market = client.sync_listings(**SCOPE)
        expected = rf.market_summary(
            market, by=["City", "PropertySubType"], window_days=60, as_of=day
        )
    assert got["row_count"] == len(expected) > 1
    assert got["columns"] == ["City", "PropertySubType", *expected.columns]
    assert got["rows"] == _records(expected)
    assert got["attrs"]["window_days"] == 60
    first = got["rows"][0]
    assert first["active_listings"] == expected["active_listings"].iloc[0]


def tool_error(result: Any) -> dict[str, Any]:
    """The error body of a tool error: JSON in its text, no ``structuredContent``."""
    assert result.is_error is True
    assert result.structured_content is None and len(result.content) == 1
    body: dict[str, Any] = json.loads(result.content[0].text)["error"]
    assert body["type"] and body["message"]
    return body


def test_bad_arguments_are_tool_errors_naming_the_parameter(
    sandbox_url: str, tmp_path: Path
) -> None:
    async def body(session: ClientSession) -> list[Any]:
        out: list[Any] = [
            await session.call_tool("market_summary", {**SCOPE, "segment": "sold"}),
            await session.call_tool("market_summary", {"Status": "Active"}),
            await session.call_tool("price_drops", {**SCOPE, "min_drop_pct": 5}),
            await session.call_tool("compare_markets", {**SCOPE, "metrics": ["median_price"]}),
            await session.call_tool("traffic_summary", {"Period": "2d"}),
            await session.call_tool("market_summary", {"PropertyType": "Castle"}),
        ]
        try:
            await session.call_tool("no_such_tool", {})
        except MCPError as error:
            out.append(error)
        out.append(await session.list_tools())  # the server is still there
        return out

    *errors, unknown, listed = run_stdio(server_env(sandbox_url, tmp_path), body)
    segment, status, pct, metrics, period, ptype = (tool_error(r) for r in errors)
    assert segment["param"] == "segment" and segment["allowed"] == "sale, rent, both"
    assert status["param"] == "Status" and "not allowed in a market scope" in status["message"]
    assert pct["param"] == "min_drop_pct" and "at most 1" in pct["message"]
    assert metrics["param"] == "metrics" and "median_sale_price" in metrics["allowed"]
    assert period["param"] == "Period" and "7d" in period["allowed"]
    assert ptype["param"] == "PropertyType" and "Residential" in ptype["allowed"]
    # an unknown tool is a protocol error (JSON-RPC -32602), not a tool result
    assert isinstance(unknown, MCPError) and unknown.code == -32602
    assert "Unknown tool: 'no_such_tool'" in unknown.message and "market_summary" in unknown.message
    assert {t.name for t in listed.tools} == TOOL_NAMES


def test_null_caps_and_duplicates_are_refused_naming_the_argument(
    sandbox_url: str, tmp_path: Path
) -> None:
    too_many = [f"Town {i}" for i in range(MAX_LIST_ITEMS + 1)]
    calls = [
        ("market_summary", {**SCOPE, "window_days": None}),
        ("market_summary", {"City": None}),
        ("traffic_summary", {"Period": None}),
        ("price_drops", {**SCOPE, "since": None}),
        ("compare_markets", {**SCOPE, "markets": ["Miami", "Miami"]}),
        ("compare_markets", {**SCOPE, "markets": [["Miami", "Condominium"]] * 2}),
        ("compare_markets", {**SCOPE, "markets": too_many}),
        ("market_summary", {**SCOPE, "Subtypes": ["Condominium", "Condominium"]}),
    ]

    async def body(session: ClientSession) -> list[Any]:
        return [await session.call_tool(name, arguments) for name, arguments in calls]

    results = run_stdio(server_env(sandbox_url, tmp_path), body)
    window, city, period, since, twice, twice_pairs, many, subtypes = map(tool_error, results)
    for error, name in ((window, "window_days"), (city, "City"), (period, "Period"),
                        (since, "since")):  # fmt: skip
        assert error["type"] == "QueryError" and error["param"] == name
        assert "null is not allowed" in error["message"], error
    assert "7d" in period["allowed"]
    assert twice["param"] == "markets" and "duplicate item 'Miami'" in twice["message"]
    assert twice_pairs["param"] == "markets" and "duplicate item" in twice_pairs["message"]
    assert many["param"] == "markets"
    assert f"at most {MAX_LIST_ITEMS} items, got {MAX_LIST_ITEMS + 1}" in many["message"]
    assert subtypes["param"] == "Subtypes" and "duplicate" in subtypes["message"]


@pytest.mark.slow
def test_sync_market_price_drops_compare_and_traffic(sandbox_url: str, tmp_path: Path) -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        out = {"first": await session.call_tool("sync_market", SCOPE)}
        out["second"] = await session.call_tool("sync_market", SCOPE)
        out["drops"] = await session.call_tool("price_drops", {**SCOPE, "min_drop_pct": 0.05})
        compare = {**SCOPE, "by": "PropertySubType", "metrics": ["median_sale_price"]}
        out["compare"] = await session.call_tool("compare_markets", compare)
        out["traffic"] = await session.call_tool("traffic_summary", {"Period": "7d", "top_n": 3})
        return {name: r.structured_content for name, r in out.items()}

    got = run_stdio(server_env(sandbox_url, tmp_path), body)
    first, second = got["first"], got["second"]
    assert first["mode"] == "full" and first["requests"] > 0 and first["rows"] > 0
    assert second["mode"] == "incremental" and second["rows"] == first["rows"]
    assert second["last_requests"]["backfill"] == 0 and second["syncs"] == 2
    drops = got["drops"]
    assert drops["row_count"] > 0 and drops["columns"][0] == "ListingId"
    assert all(row["drop_pct"] >= 0.05 for row in drops["rows"])
    compare = got["compare"]
    assert compare["rows"][0]["metric"] == "median_sale_price"
    assert "All markets" in compare["columns"]
    traffic = got["traffic"]
    assert traffic["period"] == "7d"
    assert traffic["tables"]["referrers"]["row_count"] == 3
    assert {r["metric"] for r in traffic["tables"]["headline"]["rows"]} >= {"visitors"}


@pytest.mark.slow
def test_nothing_configured_serves_the_embedded_sandbox_and_warns_on_stderr(
    tmp_path: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REALTYFRAMES_")}
    env.update(HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path))

    async def body(session: ClientSession) -> Any:
        return await session.call_tool("market_summary", SCOPE)

    with (tmp_path / "stderr.txt").open("w+", encoding="utf-8") as errlog:
        result = run_stdio(env, body, errlog)
        errlog.seek(0)
        stderr = errlog.read()
    # the protocol on stdout stayed clean; the warning is one log line on stderr
    assert result.is_error is False and result.structured_content["row_count"] == 1
    assert "UserWarning: no REALTYFRAMES_BASE_URL" in stderr and "synthetic data" in stderr


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.slow
def test_port_serves_streamable_http_on_loopback(sandbox_url: str, tmp_path: Path) -> None:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "realtyframes.mcp_server", "--port", str(port)],
        env=server_env(sandbox_url, tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while True:  # wait until it listens (or died)
            assert process.poll() is None, process.communicate()
            try:
                httpx.get(f"http://127.0.0.1:{port}/mcp", timeout=2)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.2)

        async def main() -> Any:
            url = f"http://127.0.0.1:{port}/mcp"
            async with (
                streamable_http_client(url) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                tools = await session.list_tools()
                return tools, await session.call_tool("market_summary", SCOPE)

        tools, summary = anyio.run(main)
    finally:
        process.terminate()
        out, err = process.communicate(timeout=30)
    assert {t.name for t in tools.tools} == TOOL_NAMES
    assert summary.is_error is False
    assert summary.structured_content["rows"][0]["City"] == "Miami Beach"
    assert out == b""  # nothing on stdout; the log line says where it listens, on stderr
    assert f"http://127.0.0.1:{port}/mcp".encode() in err
    assert b"no bearer token: any local process can call the tools" in err


@pytest.mark.parametrize("port", ["0", "70000", "http"])
def test_bad_port_is_refused(port: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        parse_args(["--port", port])
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    assert "not a port number" in captured.err and captured.out == ""
