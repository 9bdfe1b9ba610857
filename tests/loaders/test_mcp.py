"""``client.mcp()``: the MCP session of the toolkit against the running sandbox."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pandas as pd
import pytest

import realtyframes as rf
from realtyframes import Client
from realtyframes.sandbox import DEMO

MakeClient = Callable[..., tuple[Client, Any]]  # (client, its request log)


def test_tools_frame(sandbox_url: str, make_client: MakeClient) -> None:
    client, _ = make_client(sandbox_url)
    with client.mcp() as mcp:
        tools = mcp.tools()
        assert mcp.server_info["name"] == "realtyframes-sandbox"
    assert list(tools.columns) == ["name", "description", "required", "optional"]
    by_name = tools.set_index("name")
    assert by_name.loc["get_listing", "required"] == ["ListingId"]
    assert "City" in by_name.loc["search_listings", "optional"]
    assert by_name.loc["list_contacts", "description"].startswith("The user's CRM contacts")
    assert len(tools) == 8


def test_search_equals_client_listings(sandbox_url: str, make_client: MakeClient) -> None:
    client, _ = make_client(sandbox_url)
    with client.mcp() as mcp:
        frame = mcp.call("search_listings", City="Miami", Limit=50)
        changes = mcp.call("listing_changes", ListingIds=list(frame["ListingId"][:5]),
                           Since="2026-01-01")  # fmt: skip
    expected = client.listings(City="Miami")
    assert isinstance(frame, pd.DataFrame) and len(frame) > 0
    assert list(frame.columns) == list(expected.columns)
    assert frame.dtypes.equals(expected.dtypes)
    assert set(frame["ListingId"]) <= set(expected["ListingId"])
    reference = client.listing_changes(list(frame["ListingId"][:5]), "2026-01-01")
    assert changes.dtypes.equals(reference.dtypes) and len(changes) == len(reference)


def test_single_objects_are_dicts(sandbox_url: str, make_client: MakeClient) -> None:
    client, _ = make_client(sandbox_url)
    with client.mcp() as mcp:
        me = mcp.call("me")
        analytics = mcp.call("get_analytics", Period="7d")
    assert me == client.me()
    assert isinstance(analytics, dict) and analytics["period"] == "7d"


def test_tool_errors_raise_the_api_error_subclass(
    protected_sandbox_url: str, make_client: MakeClient
) -> None:
    client, _ = make_client(protected_sandbox_url, api_key=DEMO.api_key)
    with client.mcp() as mcp:
        with pytest.raises(rf.NotFoundError) as missing:
            mcp.call("get_listing", ListingId="no-such-listing")
        with pytest.raises(rf.InsufficientScopeError) as scope:
            mcp.call("list_contacts")
    assert missing.value.status == 404 and missing.value.code == "not_found"
    assert scope.value.status == 403 and "contacts" in scope.value.message


def test_bad_arguments_are_refused_before_any_request(
    sandbox_url: str, make_client: MakeClient
) -> None:
    client, log = make_client(sandbox_url)
    with client.mcp() as mcp:
        mcp.tools()
        sent = log.count
        cases: list[tuple[dict[str, Any], str, str]] = [
            ({"Status": "Sold"}, "Status", "Active, Pending"),
            ({"Limit": 51}, "Limit", "from 1 to 50"),
            ({"MinListPrice": -1}, "MinListPrice", "number"),
            ({"Subtypes": ["Castle"]}, "Subtypes", "Condominium"),
            ({"Colour": "red"}, "Colour", "City"),
        ]
        for arguments, param, allowed in cases:
            with pytest.raises(rf.QueryError) as refused:
                mcp.call("search_listings", **arguments)
            assert refused.value.param == param and allowed in str(refused.value)
        with pytest.raises(rf.QueryError, match="ListingId"):
            mcp.call("get_listing")
        with pytest.raises(rf.QueryError, match="at least 1 items"):
            mcp.call("listing_changes", ListingIds=[], Since="2026-01-01")
        with pytest.raises(rf.QueryError, match="search_listings"):
            mcp.call("no_such_tool")
        assert log.count == sent


def test_credentials_masked_and_401(protected_sandbox_url: str, make_client: MakeClient) -> None:
    secret = "rfk_not_a_real_key_0123456789"
    client, _ = make_client(protected_sandbox_url, api_key=secret)
    session = client.mcp()
    with pytest.raises(rf.InvalidTokenError) as refused:
        session.open()
    assert secret not in str(refused.value) and secret not in repr(session)
    assert secret not in repr(refused.value.body)


def test_rate_budget_and_retry_after_429(start_sandbox: Any, make_client: MakeClient) -> None:
    sb = start_sandbox(protected=True, rate_limit=(4, 2.0))
    client, _ = make_client(sb.url, api_key=DEMO.api_key, max_retries=3)
    assert client.rate_limit is None
    with client.mcp() as mcp:  # initialize + initialized
        mcp.tools()
        first = mcp.call("me")  # the 4th request of the window
        again = mcp.call("me")  # paced until the window resets (or 429 + Retry-After, retried)
    assert first == again
    assert client.rate_limit is not None and client.rate_limit.limit == 4


def test_docs_host(sandbox_url: str, make_client: MakeClient) -> None:
    client, _ = make_client(sandbox_url)
    with client.mcp(host="docs") as docs:
        assert docs.url == f"{sandbox_url}/docs/mcp"
        found = docs.call("search_docs", query="retry after 429", limit=3)
        section = docs.call("get_doc_section", heading=found["heading"][0])
    assert isinstance(found, pd.DataFrame) and list(found.columns)[:2] == ["heading", "level"]
    assert "Retry-After" in section["text"]
    with pytest.raises(rf.QueryError, match="host"):
        client.mcp(host="elsewhere")  # type: ignore[arg-type]


def test_works_inside_a_running_event_loop(sandbox_url: str, make_client: MakeClient) -> None:
    """As in Jupyter: the synchronous session called from code running inside an event loop."""
    client, _ = make_client(sandbox_url)

    async def notebook_cell() -> Any:
        with client.mcp() as mcp:
            return mcp.call("list_contacts", Limit=3)

    frame = asyncio.run(notebook_cell())
    assert len(frame) == 3 and "id" in frame.columns


def test_an_ended_session_is_reopened_once(sandbox_url: str, make_client: MakeClient) -> None:
    client, _ = make_client(sandbox_url)
    with client.mcp() as mcp:
        first = mcp.session_id
        assert first is not None
        ended = httpx.delete(mcp.url, headers={"Mcp-Session-Id": first})  # as an idle timeout
        assert ended.status_code == 200
        assert mcp.call("me")["email"] == DEMO.email
        assert mcp.session_id not in (None, first)
    assert mcp.session_id is None


def test_a_session_retries_in_the_clients_transports_on_its_clock() -> None:
    """A 503 and a 429 (``Retry-After: 3``) on the session's POSTs are retried by the client's own
    retry and pacing transports: the waits go to the injected clock (no sleep), every attempt is
    counted. A scripted server: the sandbox's faults are on ``/v1/*`` only."""
    from fakeclock import FakeClock
    from realtyframes.api import ApiClient, RetryPolicy
    from realtyframes.loaders.mcp import McpSession

    faults = {"initialize": [503], "tools/list": [429]}
    seen: list[str] = []

    def server(request: httpx.Request) -> httpx.Response:
        if request.method == "DELETE":
            return httpx.Response(200)
        message = json.loads(request.content)
        seen.append(message["method"])
        if faults.get(message["method"]):
            status = faults[message["method"]].pop(0)
            return httpx.Response(status, headers={"Retry-After": "3"} if status == 429 else {})
        if "id" not in message:
            return httpx.Response(202)
        tool = {"name": "me", "inputSchema": {"type": "object", "properties": {}}}
        result = {"tools": [tool]} if message["method"] == "tools/list" else {}
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        return httpx.Response(200, json=answer, headers={"Mcp-Session-Id": "s-1"})

    clock = FakeClock()
    policy = RetryPolicy(max_retries=2, backoff_base=0.25, backoff_cap=0.5, retry_after_cap=10)
    api = ApiClient(
        "http://api.test", transport=httpx.MockTransport(server), retry=policy, clock=clock
    )
    with api, McpSession(api) as mcp:
        assert mcp.tools().name.tolist() == ["me"]
    assert seen == [
        "initialize", "initialize", "notifications/initialized", "tools/list", "tools/list"
    ]  # fmt: skip
    assert 3.0 in clock.sleeps and clock.now() >= 1003.0  # the 429's wait, on the fake clock
    counts = api.request_counts()
    assert (counts.requests, counts.retries, counts.throttled) == (5, 2, 1)
