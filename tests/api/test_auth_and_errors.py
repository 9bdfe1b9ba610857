"""Against the protected sandbox: each auth mode, scope rules, each error code in both shapes,
the legacy host's errors and deprecation notices."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from realtyframes import Client
from realtyframes.api import ApiClient, RetryPolicy
from realtyframes.errors import (
    ApiDeprecationWarning,
    ApiError,
    BadRequestError,
    InsufficientScopeError,
    InvalidTokenError,
    NotFoundError,
    QueryError,
    RateLimitError,
    ServerError,
)
from realtyframes.loaders import prepare
from realtyframes.sandbox import DEMO, Faults

NO_RETRY = RetryPolicy(max_retries=0)


def mint(url: str, scopes: list[str], ttl_seconds: float = 600) -> str:
    """A Bearer token from the sandbox's admin route."""
    response = httpx.post(
        f"{url}/_sandbox/tokens",
        json={"scopes": scopes, "ttl_seconds": ttl_seconds},
        headers={"X-Sandbox-Admin": DEMO.admin_secret},
    )
    response.raise_for_status()
    return str(response.json()["access_token"])


# -- auth modes ------------------------------------------------------------------------------------
def test_bearer_token_scopes(protected_sandbox_url: str) -> None:
    url = protected_sandbox_url
    sent: list[httpx.Request] = []
    token = mint(url, ["listings"])
    with ApiClient(
        url, token=token, event_hooks={"request": [sent.append]}, prepare=prepare
    ) as api:
        assert api.call("listings", {"Limit": 1})["limit"] == 1
        assert api.call("me")["scopes"] == ["listings"]
        with pytest.raises(InsufficientScopeError) as caught:
            api.call("analytics")
        assert caught.value.code == "insufficient_scope" and caught.value.status == 403
        with pytest.raises(InsufficientScopeError):
            api.call("contacts")
    assert sent[0].headers["Authorization"] == f"Bearer {token}"
    assert sent[0].headers["Service-Api-Version"] == "1"
    assert (
        sent[0].headers["User-Agent"].startswith("realtyframes/")
        and " httpx/" in sent[0].headers["User-Agent"]
    )

    full = mint(url, ["listings", "contacts", "analytics"])
    with Client(base_url=url, token=full) as client:
        contacts = client.api.call("contacts", {"Limit": 5})
        first = contacts["contacts"][0]["id"]
        assert client.api.call("contact", {"contactId": first})["id"] == first
        assert client.api.call("contact_activity", {"contactId": first})["contactId"] == first
        assert client.api.call("analytics", {"Period": "24h"})["period"] == "24h"
        assert client.me()["email"] == DEMO.email


def test_expired_and_unknown_tokens(start_sandbox: Callable[..., Any]) -> None:
    url = (sb := start_sandbox(protected=True)).url
    now = [time.time()]
    sb.admin.auth.clock = lambda: now[0]  # the sandbox's expiry clock, moved by hand: no sleep
    short = mint(url, ["listings"], ttl_seconds=300)
    with ApiClient(url, token=short, prepare=prepare) as api:
        assert api.call("me")["email"] == DEMO.email  # the control: valid for its five minutes
    now[0] += 301
    for token in (short, "not-a-token"):
        with (
            ApiClient(url, token=token, prepare=prepare) as api,
            pytest.raises(InvalidTokenError) as caught,
        ):
            api.call("me")
        assert (caught.value.status, caught.value.code) == (401, "invalid_token")
    with ApiClient(url, prepare=prepare) as anonymous, pytest.raises(InvalidTokenError):
        anonymous.call("listings")


def test_api_key_header_and_scopes(protected_sandbox_url: str) -> None:
    sent: list[httpx.Request] = []
    with Client(
        base_url=protected_sandbox_url, api_key=DEMO.api_key, event_hooks={"request": [sent.append]}
    ) as client:
        assert client.api.call("listings", {"Limit": 2})["limit"] == 2
        assert client.api.call("analytics")["period"] == "30d"
        assert client.me()["plan"] == "standard"
        with pytest.raises(InsufficientScopeError) as caught:
            client.api.call("contacts")
        assert "contacts" in caught.value.message
    assert sent[0].headers["X-API-Key"] == DEMO.api_key and "Authorization" not in sent[0].headers
    with Client(
        base_url=protected_sandbox_url, api_key=DEMO.premium_api_key, api_key_header="Authorization"
    ) as client:
        assert client.me()["plan"] == "premium"


def test_legacy_key_and_its_errors(protected_sandbox_url: str) -> None:
    sent: list[httpx.Request] = []
    with Client(
        base_url=protected_sandbox_url, api_key=DEMO.api_key, event_hooks={"request": [sent.append]}
    ) as client:
        with pytest.warns(ApiDeprecationWarning) as caught:
            me = client.legacy_me()
            again = client.legacy_me()
        assert me == again and me["domain"] == DEMO.domain and "plan" not in me
        assert len(caught) == 1  # once per operation
        contacts = pytest.warns(ApiDeprecationWarning)
        with contacts:
            rows = client.api.call("legacy_contacts")
        assert isinstance(rows, list) and rows and {"id", "email", "stage"} <= set(rows[0])
    assert sent[0].url.params["api_key"] == DEMO.api_key and "X-API-Key" not in sent[0].headers

    with ApiClient(protected_sandbox_url, api_key=DEMO.empty_api_key, prepare=prepare) as empty:
        with pytest.raises(NotFoundError) as not_found, warnings.catch_warnings():
            warnings.simplefilter("error")
            empty.call("legacy_contacts")
        assert (not_found.value.status, not_found.value.code) == (404, "not_found")
        assert not_found.value.body["error"] == "NotFoundError"
        with pytest.warns(ApiDeprecationWarning):  # the failed call left the warning for this one
            assert empty.call("legacy_me")["domain"] != DEMO.domain
    with (
        ApiClient(protected_sandbox_url, api_key="rfk_wrong_key", prepare=prepare) as wrong,
        pytest.raises(InvalidTokenError) as bad,
    ):
        wrong.call("legacy_me")
    assert bad.value.body["error"] == "Unauthorized" and bad.value.code == "invalid_token"
    with (
        Client(base_url=protected_sandbox_url) as keyless,
        pytest.raises(QueryError, match="api_key"),
    ):
        keyless.legacy_me()


# -- each error code in both shapes ----------------------------------------------------------------
def _check_shape(exc: ApiError, error_format: str, code: str, status: int) -> None:
    assert (exc.status, exc.code) == (status, code)
    if error_format == "problem":
        assert exc.body["code"] == code and exc.body["type"].endswith(f"#{code}")
        assert exc.body["title"] == code.replace("_", " ") and exc.message == exc.body["detail"]
    else:
        assert exc.body["error"]["code"] == code and exc.message == exc.body["error"]["message"]


@pytest.mark.parametrize("error_format", ["json", "problem"])
def test_4xx_codes_in_both_shapes(protected_sandbox_url: str, error_format: str) -> None:
    url = protected_sandbox_url
    with ApiClient(
        url, api_key=DEMO.api_key, error_format=error_format, retry=NO_RETRY, prepare=prepare
    ) as api:  # type: ignore[arg-type]
        with pytest.raises(BadRequestError) as bad:
            api.get_json("/v1/listings", {"Status": "Sold"})  # raw: the client check is bypassed
        _check_shape(bad.value, error_format, "bad_request", 400)
        assert "Status" in bad.value.message
        with pytest.raises(InsufficientScopeError) as scope:
            api.call("contacts")
        _check_shape(scope.value, error_format, "insufficient_scope", 403)
        with pytest.raises(NotFoundError) as missing:
            api.call("listing", {"ListingId": "NO-SUCH-LISTING"})
        _check_shape(missing.value, error_format, "not_found", 404)
        with pytest.raises(NotFoundError) as no_route:
            api.get_json("/v1/nothing-here")
        _check_shape(no_route.value, error_format, "not_found", 404)
    with ApiClient(
        url, token="expired-or-invented", error_format=error_format, prepare=prepare
    ) as api:  # type: ignore[arg-type]
        with pytest.raises(InvalidTokenError) as invalid:
            api.call("listings")
        _check_shape(invalid.value, error_format, "invalid_token", 401)


def test_429_in_both_shapes(start_sandbox: Callable[..., Any]) -> None:
    sandbox = start_sandbox(protected=True, rate_limit=(2, 60.0))
    for key, error_format in ((DEMO.api_key, "json"), (DEMO.premium_api_key, "problem")):
        with ApiClient(
            sandbox.url,
            api_key=key,
            error_format=error_format,
            retry=NO_RETRY,
            pace=False,
            prepare=prepare,
        ) as api:  # type: ignore[arg-type]
            api.call("me")
            api.call("me")
            with pytest.raises(RateLimitError) as caught:
                api.call("me")
            _check_shape(caught.value, error_format, "rate_limit_exceeded", 429)
            assert caught.value.retry_after is not None and 1 <= caught.value.retry_after <= 60
            state = api.rate_limit
            assert state is not None and (state.limit, state.window) == (2, 60.0)


def test_5xx_in_both_shapes(start_sandbox: Callable[..., Any]) -> None:
    sandbox = start_sandbox(faults=Faults(error_rate=1.0))
    for error_format in ("json", "problem"):
        seen: set[int] = set()
        with ApiClient(
            sandbox.url, error_format=error_format, retry=NO_RETRY, prepare=prepare
        ) as api:  # type: ignore[arg-type]
            for _ in range(30):
                with pytest.raises(ServerError) as caught:
                    api.call("me")
                _check_shape(caught.value, error_format, "server_error", caught.value.status)
                seen.add(caught.value.status)
        assert 500 in seen and seen <= {500, 502, 503}
