"""The sandbox's OAuth / HTTP conformance with an outside client (authlib) and raw HTTP (issue #24):
PKCE S256 (RFC 7636, RFC 9700 2.1.1), ``invalid_client`` (RFC 6749 5.2), the Bearer challenge
rules (RFC 6750 3), 405 with ``Allow`` (RFC 9110 15.5.6), discovery (RFC 9728 for ``/mcp``,
RFC 8414), and ``rf.oauth.login`` with PKCE end to end."""

from __future__ import annotations

import base64
import hashlib
import logging
import re
import warnings
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from test_oauth import submit_consent

from realtyframes import oauth
from realtyframes.errors import BadRequestError, InvalidTokenError, QueryError
from realtyframes.sandbox import DEMO

JSON_ONLY = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "conformance-test", "version": "1"},
    },
}


def _s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _authlib() -> tuple[Any, Any, Any]:
    with warnings.catch_warnings():  # authlib warns about its own httpx module on import
        warnings.simplefilter("ignore", DeprecationWarning)
        from authlib.common.security import generate_token
        from authlib.integrations.base_client.errors import OAuthError
        from authlib.integrations.httpx_client import OAuth2Client
    return OAuth2Client, OAuthError, generate_token


@pytest.fixture
def insecure_transport(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTHLIB_INSECURE_TRANSPORT", "1")  # plain http on loopback


@pytest.fixture
def pkce_client(insecure_transport: None) -> Iterator[Any]:
    with _demo_pkce_client() as client:
        yield client


def _demo_pkce_client() -> Any:
    """authlib's OAuth2Client for the demo client, with PKCE S256."""
    client_class, _, _ = _authlib()
    return client_class(
        DEMO.client_id,
        DEMO.client_secret,
        scope="listings",
        redirect_uri=DEMO.redirect_uri,
        code_challenge_method="S256",
    )


def _consent(client: Any, base: str, verifier: str | None) -> str:
    """The authorize URL (with a challenge when ``verifier`` is given), approved: the callback."""
    url, _ = client.create_authorization_url(f"{base}/authorize", code_verifier=verifier)
    if verifier is not None:
        query = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
        assert query["code_challenge"] == _s256(verifier)
        assert query["code_challenge_method"] == "S256"
    return submit_consent(url)


# -- PKCE --------------------------------------------------------------------------------------
def test_authlib_pkce_round_trip(protected_sandbox_url: str, pkce_client: Any) -> None:
    _, _, generate_token = _authlib()
    verifier = generate_token(64)
    location = _consent(pkce_client, protected_sandbox_url, verifier)
    token = pkce_client.fetch_token(
        f"{protected_sandbox_url}/api/oauth/token",
        authorization_response=location,
        code_verifier=verifier,
    )
    assert token["access_token"] and token["scope"] == "listings"
    me = pkce_client.get(f"{protected_sandbox_url}/v1/me")
    assert me.status_code == 200 and me.json()["email"] == DEMO.email


def test_wrong_and_missing_verifier_are_refused(
    protected_sandbox_url: str, pkce_client: Any
) -> None:
    _, oauth_error, generate_token = _authlib()
    verifier = generate_token(64)
    location = _consent(pkce_client, protected_sandbox_url, verifier)
    token_url = f"{protected_sandbox_url}/api/oauth/token"
    for sent in (generate_token(64), None):  # a wrong verifier, then none at all
        with pytest.raises(oauth_error) as refused:
            pkce_client.fetch_token(token_url, authorization_response=location, code_verifier=sent)
        # the spec's ApiError envelope: its "error" member is an object with the RFC code
        assert refused.value.error["code"] == "invalid_grant"
        assert "code_verifier" in refused.value.error["message"]
    # the refusals did not use the code up: the right verifier still gets the token
    token = pkce_client.fetch_token(
        token_url, authorization_response=location, code_verifier=verifier
    )
    assert token["access_token"]


def test_a_verifier_without_a_challenge_is_refused(
    protected_sandbox_url: str, insecure_transport: None
) -> None:
    """RFC 9700 2.1.1: a code_verifier is accepted only if the authorize step sent a challenge."""
    client_class, oauth_error, generate_token = _authlib()
    with client_class(
        DEMO.client_id, DEMO.client_secret, scope="listings", redirect_uri=DEMO.redirect_uri
    ) as plain:
        location = _consent(plain, protected_sandbox_url, None)
        assert "code_challenge" not in location
        with pytest.raises(oauth_error) as refused:
            plain.fetch_token(
                f"{protected_sandbox_url}/api/oauth/token",
                authorization_response=location,
                code_verifier=generate_token(64),
            )
    assert refused.value.error["code"] == "invalid_grant"
    assert "no code_challenge" in refused.value.error["message"]


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"code_challenge": "x" * 43}, "code_challenge_method"),  # plain by default: refused
        ({"code_challenge": "x" * 43, "code_challenge_method": "plain"}, "code_challenge_method"),
        ({"code_challenge_method": "S256"}, "code_challenge"),
        ({"code_challenge": "short", "code_challenge_method": "S256"}, "code_challenge"),
    ],
)
def test_authorize_refuses_bad_pkce_parameters(
    protected_sandbox_url: str, extra: dict[str, str], param: str
) -> None:
    params = {"client_id": DEMO.client_id, "redirect_uri": DEMO.redirect_uri, "scope": "listings"}
    answer = httpx.get(
        f"{protected_sandbox_url}/authorize",
        params={**params, **extra},
        headers={"Accept": "application/json"},
    )
    assert answer.status_code == 400 and f": {param}: " in answer.json()["error"]["message"]


# -- client authentication --------------------------------------------------------------------
@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
@pytest.mark.parametrize(
    ("client_id", "secret"), [(DEMO.client_id, "wrong-secret-abc"), ("no-such-app", "whatever")]
)
def test_bad_client_credentials_are_invalid_client(
    protected_sandbox_url: str,
    insecure_transport: None,
    method: str,
    client_id: str,
    secret: str,
) -> None:
    client_class, oauth_error, _ = _authlib()
    with client_class(
        DEMO.client_id, DEMO.client_secret, scope="listings", redirect_uri=DEMO.redirect_uri
    ) as good:
        location = _consent(good, protected_sandbox_url, None)
    token_url = f"{protected_sandbox_url}/api/oauth/token"
    with (
        client_class(
            client_id,
            secret,
            redirect_uri=DEMO.redirect_uri,
            token_endpoint_auth_method=method,
        ) as bad,
        pytest.raises(oauth_error) as refused,
    ):
        bad.fetch_token(token_url, authorization_response=location)
    assert refused.value.error["code"] == "invalid_client" and secret not in str(refused.value)
    # the same request on the wire: 401, a Basic challenge (RFC 6749 5.2), never invalid_token
    code = httpx.URL(location).params["code"]
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": DEMO.redirect_uri}
    if method == "client_secret_basic":
        answer = httpx.post(token_url, data=form, auth=(client_id, secret))
    else:
        answer = httpx.post(
            token_url, data={**form, "client_id": client_id, "client_secret": secret}
        )
    assert answer.status_code == 401 and answer.json()["error"]["code"] == "invalid_client"
    assert answer.headers["WWW-Authenticate"] == 'Basic realm="realtyframes"'
    assert secret not in answer.text
    problem = httpx.post(
        token_url,
        data={**form, "client_id": client_id, "client_secret": secret},
        headers={"Accept": "application/problem+json"},
    ).json()
    assert problem["code"] == problem["error"] == "invalid_client"  # RFC members beside the spec's
    assert problem["error_description"] == problem["detail"]


# -- WWW-Authenticate ----------------------------------------------------------------------------
def test_bearer_challenge_rules(protected_sandbox_url: str, http_client: httpx.Client) -> None:
    url = protected_sandbox_url
    metadata = f'resource_metadata="{url}/.well-known/oauth-protected-resource"'
    none = http_client.get(f"{url}/v1/listings")
    assert none.status_code == 401
    assert none.headers["WWW-Authenticate"] == f'Bearer realm="realtyframes", {metadata}'
    for headers in ({"Authorization": "Bearer not-a-token"}, {"X-API-Key": "rfk_wrong"}):
        bad = http_client.get(f"{url}/v1/listings", headers=headers)
        assert bad.status_code == 401
        assert bad.headers["WWW-Authenticate"] == (
            f'Bearer realm="realtyframes", error="invalid_token", {metadata}'
        )
    minted = http_client.post(
        f"{url}/_sandbox/tokens",
        json={"scopes": ["listings"]},
        headers={"X-Sandbox-Admin": DEMO.admin_secret},
    ).json()["access_token"]
    scope = http_client.get(f"{url}/v1/contacts", headers={"Authorization": f"Bearer {minted}"})
    assert scope.status_code == 403
    assert scope.headers["WWW-Authenticate"] == (
        'Bearer realm="realtyframes", error="insufficient_scope", scope="contacts"'
    )


# -- 405 -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("POST", "/v1/listings", "GET, HEAD"),
        ("DELETE", "/v1/contacts", "GET, HEAD"),
        ("GET", "/api/oauth/token", "POST"),
        ("PUT", "/authorize", "GET, HEAD, POST"),
        ("PATCH", "/mcp", "DELETE, GET, POST"),
    ],
)
@pytest.mark.parametrize("accept", ["application/json", "application/problem+json"])
def test_undeclared_methods_are_405_with_allow(
    sandbox_url: str, http_client: httpx.Client, method: str, path: str, allow: str, accept: str
) -> None:
    answer = http_client.request(method, f"{sandbox_url}{path}", headers={"Accept": accept})
    assert answer.status_code == 405 and answer.headers["Allow"] == allow
    body = answer.json()
    code = body["code"] if accept.endswith("problem+json") else body["error"]["code"]
    assert code == "method_not_allowed" and method in answer.text


# -- discovery -------------------------------------------------------------------------------
def test_mcp_401_links_its_metadata_and_discovery_leads_to_a_token(
    protected_sandbox_url: str, insecure_transport: None
) -> None:
    """An MCP client's path (MCP authorization spec): 401 -> RFC 9728 -> RFC 8414 -> PKCE."""
    url = protected_sandbox_url
    with httpx.Client(timeout=30) as http:
        refused = http.post(f"{url}/mcp", json=INITIALIZE, headers=JSON_ONLY)
        assert refused.status_code == 401
        challenge = refused.headers["WWW-Authenticate"]
        assert "error=" not in challenge  # no credential was sent
        link = re.search(r'resource_metadata="([^"]+)"', challenge)
        assert link is not None and link[1] == f"{url}/.well-known/oauth-protected-resource/mcp"
        resource = http.get(link[1]).json()
        assert resource["resource"] == f"{url}/mcp"
        assert resource["authorization_servers"] == [url]
        assert resource["scopes_supported"] == ["listings", "contacts", "analytics"]
        assert resource["bearer_methods_supported"] == ["header"]
        host = http.get(f"{url}/.well-known/oauth-protected-resource").json()
        assert host["resource"] == url and host["authorization_servers"] == [url]
        issuer = resource["authorization_servers"][0]
        server = http.get(f"{issuer}/.well-known/oauth-authorization-server").json()
    assert server["issuer"] == issuer and server["code_challenge_methods_supported"] == ["S256"]
    assert {"client_secret_basic", "client_secret_post"} <= set(
        server["token_endpoint_auth_methods_supported"]
    )
    _, _, generate_token = _authlib()
    verifier = generate_token(64)
    with _demo_pkce_client() as client:
        authorize, _ = client.create_authorization_url(
            server["authorization_endpoint"], code_verifier=verifier, resource=resource["resource"]
        )
        token = client.fetch_token(
            server["token_endpoint"],
            authorization_response=submit_consent(authorize),
            code_verifier=verifier,
            resource=resource["resource"],
        )
        opened = client.post(f"{url}/mcp", json=INITIALIZE, headers=JSON_ONLY)
    assert token["access_token"] and opened.status_code == 200


def test_a_foreign_resource_is_refused(protected_sandbox_url: str) -> None:
    params = {
        "client_id": DEMO.client_id,
        "redirect_uri": DEMO.redirect_uri,
        "scope": "listings",
        "resource": "https://elsewhere.example/mcp",
    }
    answer = httpx.get(
        f"{protected_sandbox_url}/authorize", params=params, headers={"Accept": "application/json"}
    )
    assert answer.status_code == 400
    assert ": resource: not a resource of this server" in answer.json()["error"]["message"]


def test_the_open_sandbox_protects_nothing(sandbox_url: str, http_client: httpx.Client) -> None:
    for path in ("", "/mcp"):
        missing = http_client.get(f"{sandbox_url}/.well-known/oauth-protected-resource{path}")
        assert missing.status_code == 404
    server = http_client.get(f"{sandbox_url}/.well-known/oauth-authorization-server")
    assert server.status_code == 200 and server.json()["issuer"] == sandbox_url


# -- rf.oauth ------------------------------------------------------------------------------------
class _Recording(httpx.HTTPTransport):
    """A real transport that keeps the bodies it sent (to see the token request's fields)."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[dict[str, list[str]]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(parse_qs(request.read().decode()))
        return super().handle_request(request)


def test_rf_login_uses_pkce_end_to_end(
    protected_sandbox_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    visited: list[str] = []

    def browser(url: str) -> None:
        visited.append(url)
        httpx.get(submit_consent(url))  # the browser follows the redirect to the listener

    transport = _Recording()
    with caplog.at_level(logging.DEBUG):
        token = oauth.login(
            DEMO.client_id,
            DEMO.client_secret,
            ["listings"],
            auth_url=protected_sandbox_url,
            open_browser=browser,
            timeout=20,
            transport=transport,
        )
    query = {k: v[0] for k, v in parse_qs(urlsplit(visited[0]).query).items()}
    assert query["code_challenge_method"] == "S256"
    (sent,) = transport.sent
    verifier = sent["code_verifier"][0]
    assert 43 <= len(verifier) <= 128 and _s256(verifier) == query["code_challenge"]
    assert verifier not in caplog.text and verifier not in repr(token)
    with httpx.Client() as http:
        me = http.get(
            f"{protected_sandbox_url}/v1/me",
            headers={"Authorization": f"Bearer {token.access_token}"},
        )
    assert me.status_code == 200


def test_rf_exchange_code_keeps_the_verifier_secret(protected_sandbox_url: str) -> None:
    auth = protected_sandbox_url
    request = oauth.authorization_url(DEMO.client_id, DEMO.redirect_uri, "listings", auth_url=auth)
    assert request.code_verifier not in repr(request)
    code = httpx.URL(submit_consent(request.url)).params["code"]
    exchange: dict[str, Any] = {
        "client_id": DEMO.client_id,
        "client_secret": DEMO.client_secret,
        "redirect_uri": DEMO.redirect_uri,
        "state": request.state,
        "expected_state": request.state,
        "auth_url": auth,
    }
    other = oauth.authorization_url(DEMO.client_id, DEMO.redirect_uri, "listings", auth_url=auth)
    with pytest.raises(BadRequestError) as wrong:
        oauth.exchange_code(code, code_verifier=other.code_verifier, **exchange)
    assert wrong.value.code == "invalid_grant"
    assert other.code_verifier not in str(wrong.value) and other.code_verifier not in repr(
        wrong.value.body
    )
    with pytest.raises(BadRequestError, match="code_verifier: missing"):
        oauth.exchange_code(code, **exchange)  # the pre-PKCE call: refused, nothing issued
    with pytest.raises(QueryError, match="code_verifier") as malformed:
        oauth.exchange_code(code, code_verifier="too-short-secret", **exchange)
    assert "too-short-secret" not in str(malformed.value)
    token = oauth.exchange_code(code, code_verifier=request.code_verifier, **exchange)
    assert token.access_token
    with pytest.raises(InvalidTokenError) as bad_client:
        oauth.exchange_code(
            code,
            code_verifier=request.code_verifier,
            **{**exchange, "client_secret": "not-the-secret"},
        )
    assert bad_client.value.code == "invalid_client" and bad_client.value.status == 401
