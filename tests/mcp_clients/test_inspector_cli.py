"""Both MCP servers through the MCP Inspector CLI (the official TypeScript SDK's client): every
error path reaches it with its real message, and no result breaks a tool's ``outputSchema``
(the bug: error JSON as ``structuredContent`` made it print "Structured content does not match
the tool's output schema" and lose the message).

The sandbox's ``/mcp`` (open and protected) and ``/docs/mcp``, and ``mcp serve --port`` with its
bearer token. Each call is one ``mcp-inspector --cli`` process (the ``inspector`` fixture of
``conftest.py``: ``inspector(url, method, *flags, headers=...)`` / ``inspector.call(url, tool,
"key=value", ...)``, a run with ``returncode``, ``stdout``, ``stderr`` and ``result``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from realtyframes.mcp_server import AUTH_ENV, MAX_LIST_ITEMS
from realtyframes.sandbox import DEMO

pytestmark = pytest.mark.mcp_clients

TOKEN = "inspector-test-token-0123456789abcdef"
#: What the TypeScript SDK says when structuredContent breaks the outputSchema (0.x / 2.x).
SCHEMA_FAILURES = ("Structured content does not match", "must have required property", "-32602")


def no_schema_failure(run: Any) -> None:
    for text in SCHEMA_FAILURES:
        assert text not in run.stdout + run.stderr, run


def tool_error(run: Any, *expected: str) -> dict[str, Any]:
    """A tool error as the Inspector shows it: ``isError``, the message in the text content, no
    ``structuredContent``; the error body."""
    no_schema_failure(run)
    result = run.result
    assert result["isError"] is True and "structuredContent" not in result, result
    assert run.returncode != 0 and "returned isError:true" in run.stderr
    for text in expected:
        assert text in run.stdout, (text, run.stdout)
    body: dict[str, Any] = json.loads(result["content"][0]["text"])["error"]
    return body


def test_sandbox_tool_errors_reach_the_inspector(inspector: Any, sandbox_url: str) -> None:
    url = f"{sandbox_url}/mcp"
    ok = inspector.call(url, "search_listings", "City=Miami", "Limit=2")
    no_schema_failure(ok)
    assert ok.returncode == 0 and ok.result.get("isError") in (None, False)
    # a success: structuredContent valid against the outputSchema the Inspector checks
    listing_id = ok.result["structuredContent"]["listings"][0]["ListingId"]
    found = inspector.call(url, "get_listing", f"ListingId={listing_id}")
    assert found.returncode == 0 and found.result["structuredContent"]["ListingId"] == listing_id

    missing = tool_error(inspector.call(url, "get_listing", "ListingId=NOPE"), "no listing 'NOPE'")
    assert (missing["code"], missing["status"]) == ("not_found", 404)
    limit = tool_error(inspector.call(url, "search_listings", "Limit=500"), "at most 50, got 500")
    assert limit["param"] == "Limit" and limit["status"] == 400
    null = tool_error(inspector.call(url, "search_listings", "Limit=null"),
                      "Limit: null is not allowed")  # fmt: skip
    assert null["param"] == "Limit"
    status = tool_error(inspector.call(url, "search_listings", "Status=Sold"), "unknown value")
    assert status["param"] == "Status"
    unknown = inspector.call(url, "nope")
    assert unknown.returncode != 0 and "nope" in unknown.stderr and unknown.stdout == ""


def test_protected_sandbox_scope_and_credential_errors(
    inspector: Any, protected_sandbox_url: str
) -> None:
    url = f"{protected_sandbox_url}/mcp"
    key = {"X-API-Key": DEMO.api_key}
    scope = tool_error(inspector.call(url, "list_contacts", headers=key), "insufficient_scope",
                       "use an OAuth token with scope contacts")  # fmt: skip
    assert scope["status"] == 403
    me = inspector.call(url, "me", headers=key)
    assert me.returncode == 0 and me.result["structuredContent"]["plan"] == "standard"
    # the sandbox's 401 message reaches the client (no interactive OAuth: --stored-auth-only)
    for headers, message in (
        ({}, "no credential"),
        ({"Authorization": "Bearer not-a-token"}, "unknown or expired"),
    ):
        refused = inspector.call(url, "me", headers=headers)
        assert refused.returncode != 0 and refused.stdout == ""
        assert "auth_required" in refused.stderr and message in refused.stderr


def test_docs_host_errors_reach_the_inspector(inspector: Any, sandbox_url: str) -> None:
    url = f"{sandbox_url}/docs/mcp"
    found = inspector.call(url, "search_docs", "query=retry after 429", "limit=2")
    assert found.returncode == 0 and found.result["structuredContent"]["results"]
    section = tool_error(inspector.call(url, "get_doc_section", "heading=No such heading"),
                         "no section 'No such heading'")  # fmt: skip
    assert section["code"] == "not_found"
    limit = tool_error(inspector.call(url, "search_docs", "query=x", "limit=0"),
                       "an integer from 1 to 20")  # fmt: skip
    assert limit["param"] == "limit"
    null = tool_error(inspector.call(url, "search_docs", "query=x", "limit=null"),
                      "limit: null is not allowed")  # fmt: skip
    assert null["param"] == "limit"


def test_mcp_serve_auth_and_tool_errors_reach_the_inspector(
    inspector: Any, sandbox_url: str, start_mcp_serve: Any
) -> None:
    served = start_mcp_serve(sandbox_url, env={AUTH_ENV: TOKEN})
    missing = inspector(served.url, "tools/list")
    wrong = inspector(served.url, "tools/list", headers={"Authorization": "Bearer wrong"})
    for run, message in ((missing, "a bearer token is required"), (wrong, "wrong bearer token")):
        assert run.returncode != 0 and run.stdout == ""
        assert "auth_required" in run.stderr and message in run.stderr
    auth = {"Authorization": f"Bearer {TOKEN}"}
    listed = inspector(served.url, "tools/list", headers=auth)
    assert listed.returncode == 0
    assert {t["name"] for t in listed.result["tools"]} >= {"market_summary", "sync_market"}
    twice = inspector.call(served.url, "compare_markets", 'markets=["Miami", "Miami"]',
                           headers=auth)  # fmt: skip
    assert tool_error(twice, "duplicate item 'Miami'")["param"] == "markets"
    many = json.dumps([f"Town {i}" for i in range(MAX_LIST_ITEMS + 1)])
    capped = inspector.call(served.url, "compare_markets", f"markets={many}", headers=auth)
    assert tool_error(capped, f"at most {MAX_LIST_ITEMS} items")["param"] == "markets"
    null = inspector.call(served.url, "market_summary", "window_days=null", headers=auth)
    assert tool_error(null, "window_days: null is not allowed")["type"] == "QueryError"
    status = inspector.call(served.url, "market_summary", "Status=Active", headers=auth)
    assert tool_error(status, "not allowed in a market scope")["param"] == "Status"
    unknown = inspector.call(served.url, "no_such_tool", headers=auth)
    assert unknown.returncode != 0 and "no_such_tool" in unknown.stderr
    out, err = served.stop()
    assert TOKEN not in out + err
