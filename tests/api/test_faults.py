"""The sandbox's faults: each call returns exactly the right data, or the right typed error once
the retry budget is spent."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from fakeclock import FakeClock
from realtyframes.api import ApiClient, RetryPolicy
from realtyframes.errors import (
    BadResponseError,
    ConnectError,
    RateLimitError,
    RequestTimeoutError,
    ServerError,
)
from realtyframes.sandbox import Faults

FAST = RetryPolicy(
    max_retries=12,
    backoff_base=0.002,
    backoff_cap=0.01,
    retry_after_cap=0.02,
    retry_after_floor=0.005,
    deadline=30.0,
    budget_ratio=5.0,  # these faults are far heavier than any real service's
)
SPENT = RetryPolicy(
    max_retries=2,
    backoff_base=0.001,
    backoff_cap=0.002,
    retry_after_cap=0.01,
    retry_after_floor=0.001,
)
Pages = list[tuple[str, dict[str, str]]]


def _plan(url: str) -> Pages:
    """Every page of 2 of the default search, from its total."""
    with ApiClient(url) as api:
        total = api.get_json("/v1/listings", {"Limit": "1"})["total"]
    return [
        ("/v1/listings", {"Limit": "2", "Offset": str(offset), "Sort": "listprice"})
        for offset in range(0, total, 2)
    ]


def _pages(url: str, pages: Pages, *, raw: bool = False) -> list[Any]:
    with ApiClient(url, retry=FAST, max_concurrency=4, clock=FakeClock()) as api:
        return api.get_many(pages, raw=raw)


def test_mixed_faults_give_exactly_the_clean_data(start_sandbox: Callable[..., Any]) -> None:
    clean_url = start_sandbox().url
    pages = _plan(clean_url)
    clean = _pages(clean_url, pages)
    assert len(pages) >= 6
    ids = [item["ListingId"] for page in clean for item in page["listings"]]
    assert len(ids) == len(set(ids)) == clean[0]["total"]

    faults = Faults(
        error_rate=0.1,
        drop_rate=0.15,
        truncate_rate=0.1,
        nonjson_rate=0.1,
        burst_429=2,
        burst_every=11,
        retry_after=1,
    )
    faulty = start_sandbox(faults=faults)
    assert _pages(faulty.url, pages) == clean
    assert [json.loads(body) for body in _pages(faulty.url, pages, raw=True)] == clean
    counts = faulty.admin.faults
    assert counts.burst_429 > 0 and counts.drops > 0 and counts.truncated > 0
    assert counts.nonjson > 0 and sum(counts.errors.values()) > 0


@pytest.mark.parametrize(
    ("faults", "error", "check"),
    [
        (
            Faults(error_rate=1.0),
            ServerError,
            lambda e: e.status in (500, 502, 503) and e.code == "server_error",
        ),
        (
            Faults(nonjson_rate=1.0),
            ServerError,
            lambda e: e.status == 502 and "502 Bad Gateway" in e.message,
        ),
        (Faults(drop_rate=1.0), ConnectError, lambda e: "/v1/listings" in str(e)),
        (Faults(truncate_rate=1.0), BadResponseError, lambda e: "broken body" in str(e)),
        (
            Faults(burst_429=5, burst_every=5, retry_after=1),
            RateLimitError,
            lambda e: e.retry_after == 1.0,
        ),
    ],
    ids=["5xx", "html-502", "drop", "truncate", "429-burst"],
)
def test_typed_error_once_the_budget_is_spent(
    start_sandbox: Callable[..., Any],
    faults: Faults,
    error: type[Exception],
    check: Callable[[Any], bool],
) -> None:
    sandbox = start_sandbox(listings=100, contacts=10, faults=faults)
    with (
        ApiClient(sandbox.url, retry=SPENT, clock=FakeClock()) as api,
        pytest.raises(error) as caught,
    ):
        api.get_json("/v1/listings", {"Limit": "5"})
    assert check(caught.value), caught.value
    assert sandbox.admin.faults.requests == 1 + SPENT.max_retries


def test_latency_beyond_the_timeout_is_a_timeout_error(start_sandbox: Callable[..., Any]) -> None:
    sandbox = start_sandbox(listings=100, contacts=10, latency_ms=400)
    with ApiClient(sandbox.url, timeout=0.1, retry=SPENT, clock=FakeClock()) as api:
        with pytest.raises(RequestTimeoutError) as caught:
            api.get_json("/v1/me")
        assert isinstance(caught.value, TimeoutError)
        assert api.with_options(timeout=5.0).get_json("/v1/me")["plan"] == "standard"
