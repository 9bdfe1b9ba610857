"""Quotas per credential over a window: headers counting down, 429 with Retry-After, reset."""

from __future__ import annotations

import httpx
import pytest

from realtyframes.sandbox import DEMO, parse_rate_limit
from realtyframes.sandbox._limits import Quota, RateLimiter


def _state(response: httpx.Response) -> tuple[int, int, int]:
    h = response.headers
    return int(h["X-RateLimit-Limit"]), int(h["X-RateLimit-Remaining"]), int(h["X-RateLimit-Reset"])


def test_quota_counts_down_then_429(start_sandbox) -> None:
    # A 30 s window: the 8 requests below fit in it even on a loaded machine.
    sb = start_sandbox(rate_limit=(5, 30))
    with httpx.Client(base_url=sb.url) as http:
        remaining = [_state(http.get("/v1/listings", params={"Limit": 1}))[1] for _ in range(5)]
        assert remaining == [4, 3, 2, 1, 0]
        refused = http.get("/v1/listings")
        assert refused.status_code == 429
        assert refused.json()["error"]["code"] == "rate_limit_exceeded"
        retry = int(refused.headers["Retry-After"])
        assert 1 <= retry <= 30
        assert _state(refused)[:2] == (5, 0)
        assert refused.headers["RateLimit"] == f"limit=5, remaining=0, reset={_state(refused)[2]}"
        assert refused.headers["RateLimit-Policy"] == "5;w=30"
        # every route of the host is refused alike for this caller
        legacy = http.get("/api/me")
        assert legacy.status_code == 429 and legacy.json()["error"] == "TooManyRequests"
        assert http.post("/api/oauth/token").status_code == 429


def test_quota_resets_when_its_window_ends(start_sandbox) -> None:
    # The server's limiter on a clock the test moves: the window ends exactly when it says.
    sb = start_sandbox(rate_limit=(3, 30))
    now = [1000.0]
    sb.admin.limiter = RateLimiter(sb.admin.options.effective_rate_limit, lambda: now[0])
    with httpx.Client(base_url=sb.url) as http:
        assert [http.get("/v1/me").status_code for _ in range(4)] == [200, 200, 200, 429]
        now[0] += 10
        refused = http.get("/v1/me")
        assert refused.status_code == 429 and refused.headers["Retry-After"] == "20"
        assert _state(refused) == (3, 0, 20)
        now[0] += 19.5  # still inside the window: half a second left, announced as 1
        refused = http.get("/v1/me")
        assert refused.status_code == 429 and refused.headers["Retry-After"] == "1"
        now[0] += 0.5  # the window has ended: a fresh quota
        again = http.get("/v1/listings", params={"Limit": 1})
        assert again.status_code == 200 and _state(again) == (3, 2, 30)


def test_quota_is_per_credential(start_sandbox, http_client: httpx.Client) -> None:
    sb = start_sandbox(protected=True, rate_limit=(2, 60))
    token = http_client.post(
        f"{sb.url}/_sandbox/tokens",
        json={"scopes": ["listings"]},
        headers={"X-Sandbox-Admin": DEMO.admin_secret},
    ).json()["access_token"]
    key = {"X-API-Key": DEMO.api_key}
    bearer = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=sb.url) as http:
        assert [http.get("/v1/me", headers=key).status_code for _ in range(3)] == [200, 200, 429]
        assert http.get("/v1/me", headers=bearer).status_code == 200  # its own window
        # the same key as Bearer is the same credential
        assert (
            http.get("/v1/me", headers={"Authorization": f"Bearer {DEMO.api_key}"}).status_code
            == 429
        )
        # the legacy api_key is counted per key; a different key has its own quota
        legacy = [http.get("/api/me", params={"api_key": DEMO.premium_api_key}) for _ in range(3)]
        assert [r.status_code for r in legacy] == [200, 200, 429]
        assert legacy[-1].json()["error"] == "TooManyRequests"  # the legacy body on the legacy host
        assert legacy[-1].headers["Deprecation"] == "true"


def test_anonymous_quota_is_per_client_host(start_sandbox) -> None:
    sb = start_sandbox(rate_limit=(3, 60))
    with httpx.Client(base_url=sb.url) as http:
        answers = [http.get(p) for p in ("/openapi.json", "/nowhere", "/authorize", "/v1")]
    assert [r.status_code for r in answers] == [200, 404, 400, 429]
    assert [_state(r)[1] for r in answers] == [2, 1, 0, 0]


def test_limiter_windows_with_a_fake_clock() -> None:
    now = [100.0]
    limiter = RateLimiter(
        lambda plan: (2, 10.0) if plan == "standard" else (4, 10.0), lambda: now[0]
    )
    first = limiter.hit("a")
    assert (first.remaining, first.reset, first.allowed) == (1, 10, True)
    now[0] += 3.5
    second, third = limiter.hit("a"), limiter.hit("a")
    assert (second.remaining, second.allowed, third.allowed) == (0, True, False)
    assert third.reset == 7 and third.retry_after == 7
    assert limiter.hit("b", "premium").remaining == 3
    now[0] += 6.6  # past the end of the window of "a"
    assert limiter.hit("a").remaining == 1


def test_quota_headers_format() -> None:
    quota = Quota(limit=60, remaining=0, reset=1, window=60.0, allowed=False)
    assert quota.headers() == {
        "RateLimit": "limit=60, remaining=0, reset=1",
        "RateLimit-Policy": "60;w=60",
        "X-RateLimit-Limit": "60",
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset": "1",
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [("60/60s", (60, 60.0)), ("300/1m", (300, 60.0)), ("10/30", (10, 30.0)), ("5/500ms", (5, 0.5))],
)
def test_parse_rate_limit(text: str, expected: tuple[int, float]) -> None:
    assert parse_rate_limit(text) == expected


@pytest.mark.parametrize("text", ["60", "x/60s", "60/xs", "0/60s", "60/0s", "60/-1s", "60/infs"])
def test_parse_rate_limit_refuses(text: str) -> None:
    with pytest.raises(ValueError, match="REQUESTS/WINDOW"):
        parse_rate_limit(text)
