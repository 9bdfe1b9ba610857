"""Error answers in both representations for every status, and the headers on every answer."""

from __future__ import annotations

import re

import httpx
import pytest

from realtyframes.sandbox import DEMO, Faults
from realtyframes.sandbox._negotiate import negotiate

PROBLEM = "application/problem+json"
RATE_HEADERS = (
    "RateLimit",
    "RateLimit-Policy",
    "X-RateLimit-Limit",
    "X-RateLimit-Remaining",
    "X-RateLimit-Reset",
)
MESSAGES = {
    400: ("bad_request", "Invalid or missing parameters"),
    401: ("invalid_token", "Invalid or expired access token"),
    403: ("insufficient_scope", "Token is missing the required OAuth scope"),
    404: ("not_found", "Resource not found"),
    429: ("rate_limit_exceeded", "Rate limit exceeded"),
    500: ("server_error", "Internal server error"),
}
# (label, Accept header, expect Problem?)
ACCEPTS = [
    ("none", None, False),
    ("json", "application/json", False),
    ("wildcard", "*/*", False),
    ("problem", PROBLEM, True),
    ("problem-preferred-by-q", f"application/json;q=0.5, {PROBLEM}", True),
    ("json-preferred-by-q", f"{PROBLEM};q=0.4, application/json;q=0.9", False),
]


def assert_rate_headers(response: httpx.Response) -> None:
    for name in RATE_HEADERS:
        assert name in response.headers, f"{name} missing on {response.status_code}"
    limit = int(response.headers["X-RateLimit-Limit"])
    remaining = int(response.headers["X-RateLimit-Remaining"])
    reset = int(response.headers["X-RateLimit-Reset"])
    assert 0 <= remaining <= limit and reset >= 1
    assert response.headers["RateLimit"] == f"limit={limit}, remaining={remaining}, reset={reset}"
    assert re.fullmatch(rf"{limit};w=\d+(\.\d+)?", response.headers["RateLimit-Policy"])


def assert_error(response: httpx.Response, status: int, problem: bool, base_url: str) -> None:
    code, message = MESSAGES[status]
    assert response.status_code == status, response.text
    assert_rate_headers(response)
    body = response.json()
    if problem:
        assert response.headers["content-type"].startswith(PROBLEM)
        assert set(body) == {"type", "title", "status", "detail", "code"}
        assert body["type"] == f"{base_url}/docs#{code}"
        assert body["title"] == code.replace("_", " ")
        assert (body["status"], body["code"]) == (status, code)
        assert body["detail"].startswith(message)
    else:
        assert response.headers["content-type"].startswith("application/json")
        assert set(body) == {"error"}
        assert set(body["error"]) == {"code", "message", "status"}
        assert (body["error"]["code"], body["error"]["status"]) == (code, status)
        assert body["error"]["message"].startswith(message)
    assert "Traceback" not in response.text


def _headers(accept: str | None, **extra: str) -> dict[str, str]:
    return {**({"Accept": accept} if accept else {}), **extra}


@pytest.mark.parametrize(("label", "accept", "problem"), ACCEPTS)
def test_400_both_shapes(
    sandbox_url: str, label: str, accept: str | None, problem: bool, http_client: httpx.Client
) -> None:
    response = http_client.get(
        f"{sandbox_url}/v1/listings", params={"Limit": 999}, headers=_headers(accept)
    )
    assert_error(response, 400, problem, sandbox_url)
    text = response.json()["detail" if problem else "error"]
    text = text if problem else text["message"]
    assert "Limit" in text and "50" in text  # names the parameter and what is allowed


@pytest.mark.parametrize(("label", "accept", "problem"), ACCEPTS[:4])
def test_401_403_404_both_shapes(
    protected_sandbox_url: str,
    label: str,
    accept: str | None,
    problem: bool,
    http_client: httpx.Client,
) -> None:
    url = protected_sandbox_url
    missing = http_client.get(f"{url}/v1/listings", headers=_headers(accept))
    assert_error(missing, 401, problem, url)
    # RFC 6750 3.1: no credential sent, no error code in the challenge
    assert missing.headers["WWW-Authenticate"].startswith('Bearer realm="realtyframes"')
    assert "error=" not in missing.headers["WWW-Authenticate"]
    wrong = http_client.get(
        f"{url}/v1/listings", headers=_headers(accept, Authorization="Bearer nope")
    )
    assert_error(wrong, 401, problem, url)
    assert 'error="invalid_token"' in wrong.headers["WWW-Authenticate"]
    scope = http_client.get(
        f"{url}/v1/contacts", headers=_headers(accept, **{"X-API-Key": DEMO.api_key})
    )
    assert_error(scope, 403, problem, url)
    assert 'error="insufficient_scope", scope="contacts"' in scope.headers["WWW-Authenticate"]
    gone = http_client.get(f"{url}/no/such/path", headers=_headers(accept))
    assert_error(gone, 404, problem, url)


@pytest.mark.parametrize("problem", [False, True])
def test_429_both_shapes(start_sandbox, problem: bool, http_client: httpx.Client) -> None:
    sb = start_sandbox(rate_limit=(1, 60))
    accept = PROBLEM if problem else None
    assert http_client.get(f"{sb.url}/v1/me").status_code == 200
    refused = http_client.get(f"{sb.url}/v1/me", headers=_headers(accept))
    assert_error(refused, 429, problem, sb.url)
    assert 1 <= int(refused.headers["Retry-After"]) <= 60


def test_500_both_shapes_from_error_faults(start_sandbox) -> None:
    sb = start_sandbox(faults=Faults(error_rate=1.0))
    seen: dict[tuple[int, bool], int] = {}
    with httpx.Client(base_url=sb.url) as http:
        for i in range(60):
            problem = i % 2 == 1
            response = http.get("/v1/listings", headers=_headers(PROBLEM if problem else None))
            assert response.status_code in (500, 502, 503)
            assert_rate_headers(response)
            body = response.json()
            code = body["code"] if problem else body["error"]["code"]
            assert code == "server_error"  # 502/503 as a ServerError shape too
            if response.status_code == 500:
                assert_error(response, 500, problem, sb.url)
            seen[(response.status_code, problem)] = seen.get((response.status_code, problem), 0) + 1
    assert {s for s, _ in seen} == {500, 502, 503}
    assert (500, True) in seen and (500, False) in seen
    assert sum(sb.admin.faults.errors.values()) == 60


@pytest.mark.parametrize("problem", [False, True])
def test_unhandled_exception_is_a_500_without_stack_trace(
    start_sandbox, problem: bool, http_client: httpx.Client
) -> None:
    sb = start_sandbox()

    def explode(params: object) -> dict:
        raise RuntimeError("secret internals /home/x/app.py line 3")

    sb.admin.listings.search = explode
    response = http_client.get(
        f"{sb.url}/v1/listings", headers=_headers(PROBLEM if problem else None)
    )
    assert_error(response, 500, problem, sb.url)
    assert "secret internals" not in response.text
    assert http_client.get(f"{sb.url}/v1/me").status_code == 200  # the server keeps serving


def test_success_answers_carry_every_header(sandbox_url: str, http_client: httpx.Client) -> None:
    for path in (
        "/",
        "/v1",
        "/v1/listings",
        "/v1/analytics",
        "/v1/contacts",
        "/v1/me",
        "/openapi.json",
        "/docs",
        "/_sandbox/clock",
    ):
        response = http_client.get(sandbox_url + path)
        assert response.status_code == 200, path
        assert_rate_headers(response)


def test_open_mode_quota_is_generous(sandbox_url: str, http_client: httpx.Client) -> None:
    response = http_client.get(f"{sandbox_url}/v1/me")
    assert int(response.headers["X-RateLimit-Limit"]) >= 10_000


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        (None, "application/json"),
        ("", "application/json"),
        ("text/html", "application/json"),
        ("application/*", "application/json"),
        (PROBLEM, PROBLEM),
        (f"{PROBLEM}, application/json", PROBLEM),
        (f"application/json, {PROBLEM}", "application/json"),
        (f"application/*;q=0.9, {PROBLEM}", PROBLEM),
        (f"{PROBLEM};q=0", "application/json"),
        (f"{PROBLEM};q=bogus, application/json;q=0.1", "application/json"),
        (f"*/*;q=0.8, {PROBLEM};q=0.9", PROBLEM),
    ],
)
def test_negotiate(accept: str | None, expected: str) -> None:
    assert negotiate(accept, ["application/json", PROBLEM]) == expected


TRAILING_SLASH = ["/v1/listings/", "/v1/me/", "/v1/listings/changes/", "/v1/contacts/", "/v1/"]


@pytest.mark.parametrize("path", TRAILING_SLASH)
@pytest.mark.parametrize(("label", "accept", "problem"), [ACCEPTS[0], ACCEPTS[3]])
def test_trailing_slash_is_404_not_a_redirect(
    sandbox_url: str,
    protected_sandbox_url: str,
    path: str,
    label: str,
    accept: str | None,
    problem: bool,
    http_client: httpx.Client,
) -> None:
    # Open mode, with a parameter that would be a 400 on the real operation: still a 404.
    response = http_client.get(
        f"{sandbox_url}{path}", params={"Limit": "999"}, headers=_headers(accept)
    )
    assert "location" not in response.headers
    assert_error(response, 404, problem, sandbox_url)
    detail = response.json()["detail" if problem else "error"]
    assert path in (detail if problem else detail["message"])
    # Protected mode without a credential: the path is unknown before any auth check.
    response = http_client.get(f"{protected_sandbox_url}{path}", headers=_headers(accept))
    assert "location" not in response.headers
    assert_error(response, 404, problem, protected_sandbox_url)
    # The operation without the slash answers as usual (changes needs Since and ListingIds).
    expected = 400 if path == "/v1/listings/changes/" else 200
    assert http_client.get(f"{sandbox_url}{path.rstrip('/')}").status_code == expected
