"""The sandbox's MCP endpoints through the official ``mcp`` SDK's client, over HTTP.

``streamable_http_client`` + ``ClientSession``, as an outside client connects: initialize, list
and call every tool, open and protected modes, scopes, a bad argument, quota exhaustion, and the
documentation MCP's search and resources.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx
import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from realtyframes.sandbox import DEMO

Body = Callable[[ClientSession], Awaitable[Any]]


def run_session(url: str, body: Body, headers: dict[str, str] | None = None) -> Any:
    """Open an initialized SDK session on ``url`` and run ``body`` in it: (its value, or the
    MCPError that stopped it; the HTTP responses seen)."""
    seen: list[httpx2.Response] = []

    async def main() -> Any:
        async def keep(response: httpx2.Response) -> None:
            seen.append(response)

        http = httpx2.AsyncClient(headers=headers or {}, event_hooks={"response": [keep]})
        async with (
            http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            try:
                init = await session.initialize()
                assert init.protocol_version == "2025-11-25"
                return await body(session), seen
            except MCPError as error:
                return error, seen

    return anyio.run(main)


def _token(http_client: httpx.Client, url: str, scopes: list[str]) -> str:
    response = http_client.post(
        f"{url}/_sandbox/tokens",
        json={"scopes": scopes, "ttl_seconds": 600},
        headers={"X-Sandbox-Admin": DEMO.admin_secret},
    )
    assert response.status_code == 200, response.text
    return str(response.json()["access_token"])


def _error(result: Any) -> dict[str, Any]:
    """The REST error body of a tool error: in its text only, never as ``structuredContent``
    (which would violate the tool's ``outputSchema``; TypeScript-SDK clients reject that)."""
    assert result.is_error is True
    assert result.structured_content is None
    assert len(result.content) == 1 and result.content[0].type == "text"
    body: dict[str, Any] = json.loads(result.content[0].text)["error"]
    assert body["message"] and body["code"] and body["status"] >= 400
    return body


ARGUMENTS: dict[str, dict[str, Any]] = {
    "search_listings": {"City": "Miami", "Limit": 3, "Subtypes": ["Condominium"]},
    "listing_changes": {"Since": "2026-01-01T00:00:00Z"},  # ListingIds filled in
    "get_analytics": {"Period": "7d", "Device": "mobile"},
    "list_contacts": {"Limit": 2},
    "me": {},
}


def test_initialize_list_and_call_every_tool(sandbox_url: str) -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        results: dict[str, Any] = {"tools": tools}
        search = await session.call_tool("search_listings", ARGUMENTS["search_listings"])
        results["search_listings"] = search
        listing_id = search.structured_content["listings"][0]["ListingId"]
        results["get_listing"] = await session.call_tool("get_listing", {"ListingId": listing_id})
        changes = {**ARGUMENTS["listing_changes"], "ListingIds": [listing_id]}
        results["listing_changes"] = await session.call_tool("listing_changes", changes)
        for name in ("get_analytics", "list_contacts", "me"):
            results[name] = await session.call_tool(name, ARGUMENTS[name])
        contact_id = results["list_contacts"].structured_content["contacts"][0]["id"]
        for name in ("get_contact", "contact_activity"):
            results[name] = await session.call_tool(name, {"contactId": contact_id})
        assert (await session.send_ping()) is not None
        return results

    results, _ = run_session(f"{sandbox_url}/mcp", body)
    tools = results.pop("tools")
    assert sorted(tools) == sorted(results)
    for name, result in results.items():
        assert result.is_error is False, (name, result.content)
        # structuredContent, and the same JSON as text (validated against outputSchema by the SDK)
        assert json.loads(result.content[0].text) == result.structured_content
        assert tools[name].output_schema["type"] == "object"
    search = results["search_listings"].structured_content
    assert len(search["listings"]) == 3 and search["limit"] == 3
    assert {r["PropertySubType"] for r in search["listings"]} == {"Condominium"}
    assert results["get_analytics"].structured_content["period"] == "7d"
    assert (
        results["get_contact"].structured_content["id"]
        == (results["contact_activity"].structured_content["contactId"])
    )


def test_input_schema_has_every_filter_with_enums_and_ranges(
    sandbox_url: str, http_client: httpx.Client
) -> None:
    async def body(session: ClientSession) -> Any:
        return {t.name: t for t in (await session.list_tools()).tools}

    tools, _ = run_session(f"{sandbox_url}/mcp", body)
    schema = tools["search_listings"].input_schema
    openapi = http_client.get(f"{sandbox_url}/openapi.json").json()
    rest = {p["name"]: p["schema"] for p in openapi["paths"]["/v1/listings"]["get"]["parameters"]
            if "name" in p}  # fmt: skip
    assert set(schema["properties"]) == set(rest)
    assert schema["properties"]["Status"]["enum"] == rest["Status"]["enum"]
    assert schema["properties"]["Limit"]["maximum"] == 50
    assert schema["properties"]["MinListPrice"]["minimum"] == 0
    assert "Condominium" in schema["properties"]["Subtypes"]["items"]["enum"]
    assert schema["additionalProperties"] is False
    assert tools["listing_changes"].input_schema["required"] == ["Since", "ListingIds"]
    assert tools["get_contact"].input_schema["required"] == ["contactId"]


def test_bad_argument_is_a_tool_error_like_the_rest_400(
    sandbox_url: str, http_client: httpx.Client
) -> None:
    async def body(session: ClientSession) -> list[Any]:
        return [
            await session.call_tool("search_listings", {"Status": "Sold"}),
            await session.call_tool("search_listings", {"Limit": 500}),
            await session.call_tool("search_listings", {"Colour": "red"}),
            await session.call_tool("get_listing", {}),
            await session.call_tool("search_listings", {"City": {"nested": 1}}),
            await session.call_tool("get_listing", {"ListingId": "no-such-listing"}),
        ]

    results, _ = run_session(f"{sandbox_url}/mcp", body)
    status, limit, unknown, missing, nested, absent = (_error(r) for r in results)
    rest = http_client.get(f"{sandbox_url}/v1/listings", params={"Status": "Sold"}).json()
    assert status == {**rest["error"], "param": "Status"}
    assert "allowed: Active, Pending, Closed" in status["message"]
    assert (limit["status"], limit["param"]) == (400, "Limit")
    assert "an integer from 1 to 50" in limit["message"]
    assert unknown["param"] == "Colour" and "PropertyType" in unknown["message"]
    assert (missing["param"], nested["param"]) == ("ListingId", "City")
    assert (absent["status"], absent["code"]) == (404, "not_found")
    assert "no-such-listing" in absent["message"]


def test_protected_mode_needs_a_credential_401(protected_sandbox_url: str) -> None:
    async def body(session: ClientSession) -> None:
        raise AssertionError("initialize must fail")

    for headers in ({}, {"Authorization": "Bearer not-a-token"}):
        error, seen = run_session(f"{protected_sandbox_url}/mcp", body, headers)
        assert isinstance(error, MCPError)
        assert seen[0].status_code == 401
        assert seen[0].headers["WWW-Authenticate"].startswith("Bearer ")


def test_scopes_per_tool(protected_sandbox_url: str, http_client: httpx.Client) -> None:
    async def body(session: ClientSession) -> list[Any]:
        return [
            await session.call_tool("list_contacts", {"Limit": 1}),
            await session.call_tool("get_analytics", {}),
            await session.call_tool("me", {}),
        ]

    url = f"{protected_sandbox_url}/mcp"
    (contacts, analytics, me), _ = run_session(url, body, {"X-API-Key": DEMO.api_key})
    assert _error(contacts)["code"] == "insufficient_scope"
    assert analytics.is_error is False and me.structured_content["plan"] == "standard"
    token = _token(http_client, protected_sandbox_url, ["contacts"])
    (contacts, analytics, me), _ = run_session(url, body, {"Authorization": f"Bearer {token}"})
    assert contacts.is_error is False and len(contacts.structured_content["contacts"]) == 1
    assert _error(analytics)["code"] == "insufficient_scope"
    assert me.structured_content["scopes"] == ["contacts"]


def test_rate_limit_headers_and_the_rest_quota(start_sandbox: Any) -> None:
    sb = start_sandbox(protected=True, rate_limit=(6, 60.0))
    headers = {"X-API-Key": DEMO.api_key}
    calls: list[Any] = []

    async def body(session: ClientSession) -> None:
        for _ in range(10):
            calls.append(await session.call_tool("me", {}))

    error, seen = run_session(f"{sb.url}/mcp", body, headers)
    assert isinstance(error, MCPError)
    # every HTTP exchange of the session counts (initialize, initialized, GET stream, tools/list,
    # calls): 6 answered, then 429 with Retry-After like REST
    refused = [r for r in seen if r.status_code == 429]
    assert sum(r.status_code < 400 for r in seen) == 6 and refused
    assert int(refused[0].headers["Retry-After"]) >= 1
    assert refused[0].headers["X-RateLimit-Remaining"] == "0"
    assert calls and all(c.is_error is False for c in calls)
    rest = httpx.get(f"{sb.url}/v1/me", headers=headers)
    assert rest.status_code == 429 and int(rest.headers["Retry-After"]) >= 1
    assert rest.headers["X-RateLimit-Remaining"] == "0"


def test_one_tool_call_counts_once(start_sandbox: Any) -> None:
    sb = start_sandbox(protected=True, rate_limit=(100, 60.0))

    async def body(session: ClientSession) -> None:
        await session.call_tool("search_listings", {"Limit": 1})

    _, seen = run_session(f"{sb.url}/mcp", body, {"X-API-Key": DEMO.api_key})
    remaining = [int(r.headers["X-RateLimit-Remaining"]) for r in seen]
    # one request per HTTP exchange, the tool call's inner REST call not counted again
    assert remaining == list(range(99, 99 - len(remaining), -1))
    assert all("RateLimit" in r.headers for r in seen)


def test_docs_search_finds_retry_after(sandbox_url: str) -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        tools = [t.name for t in (await session.list_tools()).tools]
        search = await session.call_tool("search_docs", {"query": "retry after 429", "limit": 3})
        first = search.structured_content["results"][0]
        section = await session.call_tool("get_doc_section", {"heading": first["heading"]})
        resources = (await session.list_resources()).resources
        read = await session.read_resource(resources[-1].uri)
        bad = await session.call_tool("search_docs", {"query": "x", "limit": 0})
        missing = await session.call_tool("get_doc_section", {"heading": "No such heading"})
        return {"tools": tools, "search": search, "section": section, "resources": resources,
                "read": read, "bad": bad, "missing": missing}  # fmt: skip

    out, _ = run_session(f"{sandbox_url}/docs/mcp", body)
    assert sorted(out["tools"]) == ["get_doc_section", "search_docs"]
    results = out["search"].structured_content["results"]
    assert 1 <= len(results) <= 3 and "Retry-After" in results[0]["excerpt"]
    assert "Retry-After" in out["section"].structured_content["text"]
    assert len(out["resources"]) > 20
    assert out["read"].contents[0].text.startswith("## Versioning")
    bad = _error(out["bad"])
    assert bad["param"] == "limit" and "an integer from 1 to 20" in bad["message"]
    assert _error(out["missing"])["code"] == "not_found"


def test_docs_mcp_needs_no_auth(protected_sandbox_url: str) -> None:
    async def body(session: ClientSession) -> Any:
        return await session.call_tool("search_docs", {"query": "deprecation sunset"})

    result, _ = run_session(f"{protected_sandbox_url}/docs/mcp", body)
    assert result.structured_content["results"][0]["heading"] == "Versioning"


def test_the_sdks_stateless_revision_is_answered_too(sandbox_url: str) -> None:
    """The SDK's default ``Client`` probes ``server/discover`` (2026-07-28, no session)."""
    from mcp import Client

    async def main() -> Any:
        async with Client(f"{sandbox_url}/mcp") as client:
            version = client.protocol_version
            result = await client.call_tool("search_listings", {"City": "Miami", "Limit": 2})
            refused = await client.call_tool("search_listings", {"Limit": 0})
            return version, result, refused

    version, result, refused = anyio.run(main)
    assert version == "2026-07-28"
    assert result.is_error is False and len(result.structured_content["listings"]) == 2
    assert _error(refused)["param"] == "Limit"


def test_null_is_refused_naming_the_argument_never_the_default(sandbox_url: str) -> None:
    async def body(session: ClientSession) -> list[Any]:
        return [
            await session.call_tool("search_listings", {"City": "Miami", "Limit": None}),
            await session.call_tool("search_listings", {"Status": None}),
            await session.call_tool("get_listing", {"ListingId": None}),
            await session.call_tool("get_analytics", {"Period": None}),
        ]

    results, _ = run_session(f"{sandbox_url}/mcp", body)
    limit, status, listing, period = (_error(r) for r in results)
    assert (limit["param"], limit["status"]) == ("Limit", 400)
    assert "null is not allowed" in limit["message"] and "an integer" in limit["message"]
    assert status["param"] == "Status" and "Active, Pending, Closed" in status["message"]
    assert listing["param"] == "ListingId" and "null is not allowed" in listing["message"]
    assert period["param"] == "Period"


def test_unknown_tool_is_a_json_rpc_invalid_params_error(sandbox_url: str) -> None:
    async def body(session: ClientSession) -> list[Any]:
        errors = []
        for name in ("no_such_tool", "search_docs"):  # a docs tool is unknown on the main host
            try:
                await session.call_tool(name, {})
            except MCPError as error:
                errors.append(error)
        errors.append(await session.call_tool("me", {}))  # the session is still usable
        return errors

    (unknown, other_host, me), _ = run_session(f"{sandbox_url}/mcp", body)
    for error, name in ((unknown, "no_such_tool"), (other_host, "search_docs")):
        assert isinstance(error, MCPError) and error.code == -32602
        assert f"Unknown tool: {name!r}" in error.message and "search_listings" in error.message
    assert me.is_error is False

    async def docs(session: ClientSession) -> Any:
        try:
            await session.call_tool("search_listings", {})
        except MCPError as error:
            return error
        raise AssertionError("the docs host has no search_listings")

    error, _ = run_session(f"{sandbox_url}/docs/mcp", docs)
    assert error.code == -32602 and "search_docs" in error.message


def test_docs_tools_refuse_null(sandbox_url: str) -> None:
    async def body(session: ClientSession) -> list[Any]:
        return [
            await session.call_tool("search_docs", {"query": "retry", "limit": None}),
            await session.call_tool("get_doc_section", {"heading": None}),
        ]

    results, _ = run_session(f"{sandbox_url}/docs/mcp", body)
    limit, heading = (_error(r) for r in results)
    assert limit["param"] == "limit" and "null is not allowed" in limit["message"]
    assert heading["param"] == "heading" and heading["status"] == 400
