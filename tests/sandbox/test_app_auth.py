"""Auth modes, scope rules, the OAuth flow through the consent page, tokens, the legacy host."""

from __future__ import annotations

import time
from email.utils import parsedate_to_datetime
from html.parser import HTMLParser
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from realtyframes.sandbox import DEMO

SCOPE_OF = {
    "/v1/listings": "listings",
    "/v1/listings/changes?Since=2026-01-01T00:00:00Z&ListingIds=X1": "listings",
    "/v1/analytics": "analytics",
    "/v1/contacts": "contacts",
    "/v1/me": None,
}


class ConsentForm(HTMLParser):
    """Reads the consent page like a browser: the form, its hidden fields and its buttons."""

    def __init__(self) -> None:
        super().__init__()
        self.method = self.action = ""
        self.fields: dict[str, str] = {}
        self.buttons: dict[str, tuple[str, str]] = {}  # value -> (name, value)
        self.forms = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.forms += 1
            self.method, self.action = a.get("method", "get").lower(), a.get("action", "")
        elif tag == "input" and a.get("type") == "hidden":
            self.fields[a["name"]] = a.get("value", "")
        elif tag == "button" and a.get("type", "submit") == "submit":
            self.buttons[a["value"]] = (a["name"], a["value"])


def _token(
    http_client: httpx.Client, url: str, scopes: list[str], ttl: float = 600, plan: str = "standard"
) -> str:
    response = http_client.post(
        f"{url}/_sandbox/tokens",
        json={"scopes": scopes, "ttl_seconds": ttl, "plan": plan},
        headers={"X-Sandbox-Admin": DEMO.admin_secret},
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["token_type"] == "Bearer" and body["scope"] == ",".join(scopes)
    return body["access_token"]


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _code(response: httpx.Response) -> str:
    return response.json()["error"]["code"]


# -- protected mode: credentials and scopes ----------------------------------------------------
@pytest.mark.parametrize("path", list(SCOPE_OF))
def test_protected_needs_a_credential(
    protected_sandbox_url: str, path: str, http_client: httpx.Client
) -> None:
    response = http_client.get(protected_sandbox_url + path)
    assert response.status_code == 401 and _code(response) == "invalid_token"


def test_token_scopes_gate_each_operation(
    protected_sandbox_url: str, http_client: httpx.Client
) -> None:
    url = protected_sandbox_url
    for scope in ("listings", "contacts", "analytics"):
        token = _token(http_client, url, [scope])
        for path, needed in SCOPE_OF.items():
            response = http_client.get(url + path, headers=_bearer(token))
            if needed in (None, scope):
                assert response.status_code == 200, (scope, path, response.text)
            else:
                assert response.status_code == 403, (scope, path)
                assert _code(response) == "insufficient_scope"
                assert needed in response.json()["error"]["message"]


def test_api_key_reaches_listings_analytics_and_me_only(
    protected_sandbox_url: str, http_client: httpx.Client
) -> None:
    url = protected_sandbox_url
    for headers in ({"X-API-Key": DEMO.api_key}, _bearer(DEMO.api_key)):
        assert http_client.get(f"{url}/v1/listings", headers=headers).status_code == 200
        assert http_client.get(f"{url}/v1/analytics", headers=headers).status_code == 200
        me = http_client.get(f"{url}/v1/me", headers=headers)
        assert me.status_code == 200 and me.json()["plan"] == "standard"
        assert me.json()["domain"] == DEMO.domain
        for path in ("/v1/contacts", "/v1/contacts/x", "/v1/contacts/x/activity"):
            response = http_client.get(url + path, headers=headers)
            assert response.status_code == 403 and _code(response) == "insufficient_scope"


def test_plans_per_key_and_token(
    protected_sandbox_url: str, start_sandbox, http_client: httpx.Client
) -> None:
    premium = http_client.get(
        f"{protected_sandbox_url}/v1/me", headers={"X-API-Key": DEMO.premium_api_key}
    )
    assert premium.json()["plan"] == "premium"
    token_me = http_client.get(
        f"{protected_sandbox_url}/v1/me",
        headers=_bearer(_token(http_client, protected_sandbox_url, ["contacts"])),
    ).json()
    assert (token_me["plan"], token_me["scopes"]) == ("standard", ["contacts"])
    sb = start_sandbox(protected=True)  # default quotas: by plan
    standard = http_client.get(f"{sb.url}/v1/me", headers={"X-API-Key": DEMO.api_key})
    assert standard.headers["X-RateLimit-Limit"] == "60"
    assert standard.headers["RateLimit-Policy"] == "60;w=60"
    prem = http_client.get(f"{sb.url}/v1/me", headers={"X-API-Key": DEMO.premium_api_key})
    assert prem.headers["X-RateLimit-Limit"] == "300"


def test_bad_credentials_are_401(protected_sandbox_url: str, http_client: httpx.Client) -> None:
    url = protected_sandbox_url
    for headers in (
        {"X-API-Key": "rfk_wrong"},
        {"Authorization": "Bearer not-a-token"},
        {"Authorization": f"Basic {DEMO.api_key}"},
        {"Authorization": "Bearer"},
    ):
        response = http_client.get(f"{url}/v1/listings", headers=headers)
        assert response.status_code == 401 and _code(response) == "invalid_token"
        assert "rfk_wrong" not in response.text and "not-a-token" not in response.text


def test_token_expires(start_sandbox, http_client: httpx.Client) -> None:
    # The registry's wall clock, moved by the test: expiry at exactly issue time + ttl.
    sb = start_sandbox(protected=True)
    now = [float(int(time.time()))]  # whole seconds: the sums below are exact
    sb.admin.auth.clock = lambda: now[0]
    token = _token(http_client, sb.url, ["listings"], ttl=600)
    url = f"{sb.url}/v1/listings"
    assert http_client.get(url, headers=_bearer(token)).status_code == 200
    now[0] += 599.5
    assert http_client.get(url, headers=_bearer(token)).status_code == 200
    now[0] += 0.5
    expired = http_client.get(url, headers=_bearer(token))
    assert expired.status_code == 401 and _code(expired) == "invalid_token"
    assert token not in expired.text


def test_mint_route_validates(protected_sandbox_url: str, http_client: httpx.Client) -> None:
    url = f"{protected_sandbox_url}/_sandbox/tokens"
    assert (
        http_client.post(
            url, headers={"X-Sandbox-Admin": DEMO.admin_secret}, json={"scopes": ["houses"]}
        ).status_code
        == 400
    )
    assert (
        http_client.post(
            url, headers={"X-Sandbox-Admin": DEMO.admin_secret}, json={"ttl_seconds": 0}
        ).status_code
        == 400
    )
    assert (
        http_client.post(
            url, headers={"X-Sandbox-Admin": DEMO.admin_secret}, json={"plan": "gold"}
        ).status_code
        == 400
    )
    assert (
        http_client.post(
            url, headers={"X-Sandbox-Admin": DEMO.admin_secret}, json={"scope": "listings"}
        ).status_code
        == 400
    )


def test_open_mode_ignores_credentials(sandbox_url: str, http_client: httpx.Client) -> None:
    for headers in ({}, {"Authorization": "Bearer junk"}, {"X-API-Key": "junk"}):
        assert http_client.get(f"{sandbox_url}/v1/contacts", headers=headers).status_code == 200


# -- OAuth ----------------------------------------------------------------------------------
def _authorize_params(**overrides: str) -> dict[str, str]:
    params = {
        "client_id": DEMO.client_id,
        "redirect_uri": DEMO.redirect_uri,
        "scope": "listings,analytics",
        "state": "st-<&>\"'-42",
    }
    params.update(overrides)
    return {k: v for k, v in params.items() if v is not None}


def _consent(http: httpx.Client, decision: str, **overrides: str) -> httpx.Response:
    """GET the consent page, parse its form, submit it with a button like a browser would."""
    page = http.get("/authorize", params=_authorize_params(**overrides))
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "Realtyframes Demo App" in page.text
    form = ConsentForm()
    form.feed(page.text)
    assert form.forms == 1 and form.method == "post" and form.action == "/authorize"
    assert set(form.buttons) == {"approve", "deny"}
    name, value = form.buttons[decision]
    return http.post(form.action, data={**form.fields, name: value})


def test_oauth_flow_end_to_end(protected_sandbox_url: str) -> None:
    with httpx.Client(base_url=protected_sandbox_url) as http:
        page = http.get("/authorize", params=_authorize_params())
        for scope in ("listings", "analytics"):
            assert scope in page.text
        redirect = _consent(http, "approve")
        assert redirect.status_code == 302
        target = urlsplit(redirect.headers["location"])
        assert f"{target.scheme}://{target.netloc}{target.path}" == DEMO.redirect_uri
        query = parse_qs(target.query)
        assert query["state"] == [_authorize_params()["state"]]  # unchanged
        code = query["code"][0]
        assert len(code) >= 20
        exchange = {
            "grant_type": "authorization_code",
            "code": code,
            "client_id": DEMO.client_id,
            "client_secret": DEMO.client_secret,
            "redirect_uri": DEMO.redirect_uri,
        }
        token = http.post("/api/oauth/token", data=exchange)
        assert token.status_code == 200, token.text
        body = token.json()
        assert (body["token_type"], body["expires_in"], body["scope"]) == (
            "Bearer",
            3600,
            "listings,analytics",
        )
        assert token.headers["cache-control"] == "no-store"
        headers = _bearer(body["access_token"])
        assert http.get("/v1/listings", headers=headers).status_code == 200
        assert http.get("/v1/contacts", headers=headers).status_code == 403
        # the code is single-use; reuse fails and revokes the token issued on first use
        again = http.post("/api/oauth/token", data=exchange)
        assert again.status_code == 400 and _code(again) == "invalid_grant"  # RFC 6749 5.2
        assert "code" in again.json()["error"]["message"]
        assert http.get("/v1/listings", headers=headers).status_code == 401


def test_oauth_deny_redirects_with_access_denied(protected_sandbox_url: str) -> None:
    with httpx.Client(base_url=protected_sandbox_url) as http:
        redirect = _consent(http, "deny", state="s1")
        assert redirect.status_code == 302
        query = parse_qs(urlsplit(redirect.headers["location"]).query)
        assert query == {"error": ["access_denied"], "state": ["s1"]}


def test_oauth_loopback_any_port_and_query_credentials(sandbox_url: str) -> None:
    uri = "http://localhost:51234/callback"
    with httpx.Client(base_url=sandbox_url) as http:  # OAuth works in open mode too
        redirect = _consent(http, "approve", redirect_uri=uri, state=None)
        location = redirect.headers["location"]
        assert location.startswith(uri + "?code=") and "state" not in location
        code = parse_qs(urlsplit(location).query)["code"][0]
        token = http.post(
            "/api/oauth/token",
            params={"client_id": DEMO.client_id, "client_secret": DEMO.client_secret},
            data={"code": code, "redirect_uri": uri},
        )
        assert token.status_code == 200 and token.json()["access_token"]


@pytest.mark.parametrize(
    ("override", "param"),
    [
        ({"redirect_uri": "https://evil.example/callback"}, "redirect_uri"),
        ({"redirect_uri": "http://127.0.0.1:8765/other"}, "redirect_uri"),
        ({"redirect_uri": "http://127.0.0.2:8765/callback"}, "redirect_uri"),
        ({"redirect_uri": None}, "redirect_uri"),
        ({"client_id": "unknown-app"}, "client_id"),
        ({"scope": "listings,houses"}, "scope"),
        ({"scope": None}, "scope"),
    ],
)
def test_authorize_refusals_never_redirect(
    protected_sandbox_url: str, override: dict, param: str, http_client: httpx.Client
) -> None:
    response = http_client.get(
        f"{protected_sandbox_url}/authorize", params=_authorize_params(**override)
    )
    assert response.status_code == 400
    assert "location" not in response.headers
    assert response.headers["content-type"].startswith("text/html")
    assert param in response.text
    as_json = http_client.get(
        f"{protected_sandbox_url}/authorize",
        params=_authorize_params(**override),
        headers={"Accept": "application/json"},
    )
    assert as_json.status_code == 400 and param in as_json.json()["error"]["message"]


def test_consent_post_revalidates_the_request(
    protected_sandbox_url: str, http_client: httpx.Client
) -> None:
    fields = {**_authorize_params(redirect_uri="https://evil.example/cb"), "decision": "approve"}
    response = http_client.post(f"{protected_sandbox_url}/authorize", data=fields)
    assert response.status_code == 400 and "location" not in response.headers
    bad_decision = {**_authorize_params(), "decision": "maybe"}
    assert (
        http_client.post(f"{protected_sandbox_url}/authorize", data=bad_decision).status_code == 400
    )


def _fresh_code(http: httpx.Client) -> str:
    redirect = _consent(http, "approve")
    return parse_qs(urlsplit(redirect.headers["location"]).query)["code"][0]


def test_token_exchange_errors(protected_sandbox_url: str) -> None:
    with httpx.Client(base_url=protected_sandbox_url) as http:
        code = _fresh_code(http)
        base = {
            "code": code,
            "client_id": DEMO.client_id,
            "client_secret": DEMO.client_secret,
            "redirect_uri": DEMO.redirect_uri,
        }
        wrong_secret = http.post("/api/oauth/token", data={**base, "client_secret": "guess"})
        assert wrong_secret.status_code == 401 and _code(wrong_secret) == "invalid_client"
        assert wrong_secret.headers["WWW-Authenticate"] == 'Basic realm="realtyframes"'
        assert "guess" not in wrong_secret.text
        wrong_uri = http.post(
            "/api/oauth/token", data={**base, "redirect_uri": "http://127.0.0.1:9/callback"}
        )
        assert wrong_uri.status_code == 400 and "redirect_uri" in wrong_uri.text
        assert _code(wrong_uri) == "invalid_grant"
        grant = http.post("/api/oauth/token", data={**base, "grant_type": "password"})
        assert grant.status_code == 400 and "grant_type" in grant.text
        assert _code(grant) == "unsupported_grant_type"
        unknown = http.post("/api/oauth/token", data={**base, "code": "made-up"})
        assert unknown.status_code == 400 and "code" in unknown.text
        assert _code(unknown) == "invalid_grant"
        extra = http.post("/api/oauth/token", data={**base, "colour": "red"})
        assert extra.status_code == 400 and _code(extra) == "invalid_request"
        # the failed attempts did not consume the code
        assert http.post("/api/oauth/token", data=base).status_code == 200


def test_code_expires_after_ten_minutes(start_sandbox) -> None:
    sb = start_sandbox(protected=True)
    with httpx.Client(base_url=sb.url) as http:
        code = _fresh_code(http)
        sb.admin.auth.clock = lambda: time.time() + 601
        response = http.post(
            "/api/oauth/token",
            data={
                "code": code,
                "client_id": DEMO.client_id,
                "client_secret": DEMO.client_secret,
                "redirect_uri": DEMO.redirect_uri,
            },
        )
    assert response.status_code == 400 and "expired" in response.json()["error"]["message"]
    assert response.json()["error"]["code"] == "invalid_grant"


# -- legacy host ------------------------------------------------------------------------------
def _assert_deprecated(response: httpx.Response, base_url: str) -> None:
    assert response.headers["Deprecation"] == "true"
    assert parsedate_to_datetime(response.headers["Sunset"]).year >= 2027
    assert response.headers["Link"].startswith(f"<{base_url}/docs#deprecation>")
    assert 'rel="deprecation"' in response.headers["Link"]
    assert "X-RateLimit-Remaining" in response.headers


@pytest.mark.parametrize("fixture", ["sandbox_url", "protected_sandbox_url"])
def test_legacy_host(
    request: pytest.FixtureRequest, fixture: str, http_client: httpx.Client
) -> None:
    url = request.getfixturevalue(fixture)
    me = http_client.get(f"{url}/api/me", params={"api_key": DEMO.api_key})
    assert me.status_code == 200
    assert set(me.json()) == {"_id", "email", "name", "role", "createdAt", "updatedAt", "domain"}
    assert me.json()["domain"] == DEMO.domain
    _assert_deprecated(me, url)
    contacts = http_client.get(f"{url}/api/getContacts", params={"api_key": DEMO.api_key})
    assert contacts.status_code == 200
    assert isinstance(contacts.json(), list) and contacts.json()
    assert {"id", "name", "email", "phones", "stage", "source"} <= set(contacts.json()[0])
    _assert_deprecated(contacts, url)


@pytest.mark.parametrize("fixture", ["sandbox_url", "protected_sandbox_url"])
def test_legacy_errors(
    request: pytest.FixtureRequest, fixture: str, http_client: httpx.Client
) -> None:
    url = request.getfixturevalue(fixture)
    for params in ({}, {"api_key": "rfk_nope"}):
        for path in ("/api/me", "/api/getContacts"):
            response = http_client.get(
                url + path, params=params, headers={"Accept": "application/problem+json"}
            )
            assert response.status_code == 401
            assert response.headers["content-type"].startswith("application/json")
            assert response.json()["error"] == "Unauthorized"
            assert isinstance(response.json()["message"], str)
            assert "rfk_nope" not in response.text
            _assert_deprecated(response, url)
    empty = http_client.get(f"{url}/api/getContacts", params={"api_key": DEMO.empty_api_key})
    assert empty.status_code == 404
    assert set(empty.json()) == {"error", "message"} and empty.json()["error"] == "NotFoundError"
    _assert_deprecated(empty, url)


def test_legacy_server_error_shape(start_sandbox, http_client: httpx.Client) -> None:
    sb = start_sandbox()

    def explode(domain: str) -> list:
        raise RuntimeError("boom")

    sb.admin.contacts.for_domain = explode
    response = http_client.get(f"{sb.url}/api/getContacts", params={"api_key": DEMO.api_key})
    assert response.status_code == 500
    assert response.json()["error"] == "ServerError" and "boom" not in response.text
    _assert_deprecated(response, sb.url)
