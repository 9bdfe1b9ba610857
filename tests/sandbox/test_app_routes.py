"""Every operation of the sandbox through HTTP (open mode), routing, versioning, clock, determinism."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

import httpx
import pytest


@pytest.fixture(scope="module")
def http(sandbox_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=sandbox_url, timeout=30) as client:
        yield client


def _ok(response: httpx.Response) -> dict:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    return response.json()


def test_index_document_at_root_and_v1(http: httpx.Client) -> None:
    for path in ("/", "/v1"):
        doc = _ok(http.get(path))
        assert set(doc) == {"name", "version", "endpoints", "mcp"}
        assert isinstance(doc["version"], str) and doc["mcp"] == "/mcp"
        assert set(doc["endpoints"]) == {"listings", "contacts", "analytics", "user"}
        assert doc["endpoints"]["listings"]["changes"] == "GET /v1/listings/changes"
        assert doc["endpoints"]["user"]["me"] == "GET /v1/me"
        for group in doc["endpoints"].values():
            assert all(route.startswith("GET /v1/") for route in group.values())


def test_openapi_document_is_served(http: httpx.Client) -> None:
    doc = _ok(http.get("/openapi.json"))
    assert doc["openapi"].startswith("3.")
    assert "/v1/listings/changes" in doc["paths"]


def test_docs_page_has_the_anchors_errors_point_to(http: httpx.Client) -> None:
    page = http.get("/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    for anchor in ("bad_request", "invalid_token", "rate_limit_exceeded", "deprecation"):
        assert f'id="{anchor}"' in page.text


def test_search_defaults_and_paging(http: httpx.Client) -> None:
    page = _ok(http.get("/v1/listings"))
    assert set(page) >= {"total", "offset", "limit", "listings"}
    assert (page["offset"], page["limit"]) == (0, 20)
    assert len(page["listings"]) == 20 < page["total"]
    assert {x["StandardStatus"] for x in page["listings"]} == {"Active"}
    assert {x["PropertyType"] for x in page["listings"]} == {"Residential"}
    prices = [x["ListPrice"] for x in page["listings"]]
    assert prices == sorted(prices, reverse=True)  # default Sort -listprice
    second = _ok(http.get("/v1/listings", params={"Offset": 20, "Limit": 50}))
    assert (second["offset"], second["limit"], second["total"]) == (20, 50, page["total"])
    assert not {x["ListingId"] for x in page["listings"]} & {
        x["ListingId"] for x in second["listings"]
    }


def test_search_filter_through_the_wire(http: httpx.Client) -> None:
    city = _ok(http.get("/v1/listings"))["listings"][0]["City"]
    page = _ok(http.get("/v1/listings", params={"City": city, "MinBedroomsTotal": 2, "Limit": 50}))
    assert page["total"] > 0
    assert all(x["City"] == city and x["BedroomsTotal"] >= 2 for x in page["listings"])


def test_detail_of_a_search_result(http: httpx.Client) -> None:
    listing_id = _ok(http.get("/v1/listings"))["listings"][0]["ListingId"]
    detail = _ok(http.get(f"/v1/listings/{listing_id}"))
    assert detail["ListingId"] == listing_id
    assert isinstance(detail["Media"], list) and detail["Media"]
    assert {"Order", "MediaURL", "ShortDescription"} <= set(detail["Media"][0])


def test_unknown_listing_is_404(http: httpx.Client) -> None:
    response = http.get("/v1/listings/NO-SUCH-ID")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_changes_is_a_fixed_path_not_a_listing_id(http: httpx.Client) -> None:
    response = http.get("/v1/listings/changes")
    assert response.status_code == 400  # Since and ListingIds are required: not a 404 for an id
    assert response.json()["error"]["code"] == "bad_request"


def test_change_feed_filter_through_the_wire(http: httpx.Client, sandbox_as_of: datetime) -> None:
    listings = _ok(http.get("/v1/listings", params={"Limit": 50}))["listings"]
    cut = [x["ListingId"] for x in listings if (x.get("PreviousListPrice") or 0) > x["ListPrice"]]
    assert cut, "the sandbox should have price cuts among active listings"
    # before the oldest listing (a history is at most 10 years): every cut of these listings
    since = (sandbox_as_of - timedelta(days=3700)).isoformat().replace("+00:00", "Z")
    params = {"Since": since, "ListingIds": ",".join(cut), "ChangeType": "price_change"}
    feed = _ok(http.get("/v1/listings/changes", params=params))
    assert set(feed) >= {"total", "offset", "limit", "changes"}
    assert feed["total"] >= len(cut) > 0
    assert {c["ChangeType"] for c in feed["changes"]} == {"price_change"}
    assert {c["ListingId"] for c in feed["changes"]} <= set(cut)


def test_analytics_filter_through_the_wire(http: httpx.Client) -> None:
    whole = _ok(http.get("/v1/analytics", params={"Period": "7d"}))
    assert whole["period"] == "7d"
    for member in ("overview", "timelines", "pages", "referrers", "countries", "browsers"):
        assert member in whole
    mobile = _ok(http.get("/v1/analytics", params={"Period": "7d", "Device": "mobile"}))
    assert 0 < mobile["overview"]["visitors"] <= whole["overview"]["visitors"]
    assert [d["name"] for d in mobile["devices"]] == ["mobile"]


def test_contacts_list_detail_activity(http: httpx.Client) -> None:
    page = _ok(http.get("/v1/contacts", params={"Limit": 5}))
    assert (page["offset"], page["limit"], len(page["contacts"])) == (0, 5, 5)
    contact = page["contacts"][0]
    assert _ok(http.get(f"/v1/contacts/{contact['id']}")) == contact
    activity = _ok(http.get(f"/v1/contacts/{contact['id']}/activity"))
    assert activity["contactId"] == contact["id"] and isinstance(activity["activity"], list)
    assert http.get("/v1/contacts/nope/activity").status_code == 404


def test_me_in_open_mode_is_the_demo_user(http: httpx.Client) -> None:
    me = _ok(http.get("/v1/me"))
    assert {"_id", "email", "name", "role", "createdAt", "updatedAt", "domain"} <= set(me)
    assert me["plan"] == "standard" and set(me["scopes"]) == {"listings", "contacts", "analytics"}


def test_unknown_and_repeated_parameters_are_refused(http: httpx.Client) -> None:
    response = http.get("/v1/listings", params={"city": "Miami"})
    assert response.status_code == 400
    assert "city" in response.json()["error"]["message"]
    assert "did you mean City" in response.json()["error"]["message"]
    repeated = http.get("/v1/listings?City=A&City=B")
    assert repeated.status_code == 400 and "City" in repeated.json()["error"]["message"]
    assert http.get("/v1/me", params={"x": "1"}).status_code == 400


def test_bad_value_names_parameter_and_allowed_values(http: httpx.Client) -> None:
    body = http.get("/v1/listings", params={"Limit": 51}).json()
    assert body["error"]["status"] == 400
    message = body["error"]["message"]
    assert message.startswith("Invalid or missing parameters: Limit")
    assert "50" in message


def test_service_api_version_header(http: httpx.Client) -> None:
    one = http.get("/v1/listings", headers={"Service-Api-Version": "1"})
    two = http.get("/v1/listings", headers={"Service-Api-Version": "2"})  # the path wins
    assert one.status_code == two.status_code == 200
    assert one.json() == two.json()
    bad = http.get("/v1/listings", headers={"Service-Api-Version": "v1"})
    assert bad.status_code == 400
    assert "Service-Api-Version" in bad.json()["error"]["message"]


def test_unknown_path_and_unsupported_method(http: httpx.Client) -> None:
    missing = http.get("/v1/nothing-here")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    wrong = http.post("/v1/listings")  # RFC 9110 15.5.6: 405 with the path's methods in Allow
    assert wrong.status_code == 405 and wrong.headers["Allow"] == "GET, HEAD"
    assert wrong.json()["error"]["code"] == "method_not_allowed"
    assert "POST" in wrong.json()["error"]["message"]


def test_same_seed_same_data_on_two_servers(start_sandbox, http_client: httpx.Client) -> None:
    first, second = start_sandbox(seed=11), start_sandbox(seed=11)
    other = start_sandbox(seed=12)
    paths = ["/v1/listings?Limit=50", "/v1/contacts?Limit=50", "/v1/analytics?Period=90d"]
    for path in paths:
        a = http_client.get(first.url + path).json()
        assert a == http_client.get(second.url + path).json()
    listings = http_client.get(first.url + paths[0]).json()["listings"][0]
    detail_a = http_client.get(f"{first.url}/v1/listings/{listings['ListingId']}").json()
    detail_b = http_client.get(f"{second.url}/v1/listings/{listings['ListingId']}").json()
    assert detail_a == detail_b
    assert (
        http_client.get(other.url + paths[0]).json() != http_client.get(first.url + paths[0]).json()
    )


def test_clock_advance_through_admin_route(start_sandbox, sandbox_as_of: datetime) -> None:
    as_of = sandbox_as_of
    sb = start_sandbox()
    with httpx.Client(base_url=sb.url) as http:
        now = datetime.fromisoformat(_ok(http.get("/_sandbox/clock"))["now"])
        assert now == as_of
        before = _ok(http.get("/v1/listings", params={"Limit": 1}))
        moved = _ok(http.post("/_sandbox/clock", json={"advance_days": 30}))
        assert datetime.fromisoformat(moved["now"]) == as_of + timedelta(days=30)
        assert datetime.fromisoformat(moved["previous"]) == as_of
        for store in sb.admin.stores:
            assert store.now == as_of + timedelta(days=30)
        since = as_of.isoformat().replace("+00:00", "Z")
        new = _ok(http.get("/v1/listings", params={"Since": since, "Limit": 1}))
        assert new["total"] > 0  # listings entered after the old clock are now visible
        assert before["listings"][0]["ListingId"]
        seconds = _ok(http.post("/_sandbox/clock", json={"advance_seconds": 3600}))
        assert datetime.fromisoformat(seconds["now"]) == as_of + timedelta(days=30, hours=1)
        target = "2026-09-01T00:00:00Z"
        assert _ok(http.post("/_sandbox/clock", json={"now": target}))["now"] == target
        back = http.post("/_sandbox/clock", json={"now": "2026-01-01T00:00:00Z"})
        assert back.status_code == 400 and "forward" in back.json()["error"]["message"]
        both = http.post("/_sandbox/clock", json={"advance_days": 1, "advance_seconds": 1})
        assert both.status_code == 400
        assert http.post("/_sandbox/clock", json={"advance_days": "x"}).status_code == 400
        assert http.post("/_sandbox/clock", content=b"{not json").status_code == 400
