"""Rate-limit header parsing (examples and fuzzing) and the pacer (unit and against the sandbox)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakeclock import FakeClock as EngineClock
from realtyframes.api import (
    ApiClient,
    RateLimitState,
    RetryPolicy,
    error_from_response,
    parse_rate_limit_headers,
)
from realtyframes.api._deprecation import parse_deprecation
from realtyframes.api._pacer import Pacer
from realtyframes.api._retry import parse_retry_after
from realtyframes.errors import ApiError
from realtyframes.sandbox._limits import RateLimiter

# -- parsers: the forms ----------------------------------------------------------------------------


def test_spec_dictionary_form_and_plain_policy() -> None:
    info = parse_rate_limit_headers(
        {"RateLimit": "limit=60, remaining=59, reset=30", "RateLimit-Policy": "60;w=60"}
    )
    assert info == RateLimitState(limit=60, remaining=59, reset=30.0, window=60.0, policy="60;w=60")


def test_structured_list_form_with_named_policy() -> None:
    info = parse_rate_limit_headers(
        {"RateLimit": '"default";r=50;t=30', "RateLimit-Policy": '"default";q=100;w=60'}
    )
    assert info is not None
    assert (info.limit, info.remaining, info.reset, info.window) == (100, 50, 30.0, 60.0)


def test_structured_list_picks_the_most_constrained_policy() -> None:
    info = parse_rate_limit_headers(
        {
            "RateLimit": '"burst";r=90;t=1, "daily";r=3;t=3600',
            "RateLimit-Policy": '"burst";q=100;w=1, "daily";q=1000;w=86400',
        }
    )
    assert info is not None
    assert (info.limit, info.remaining, info.reset, info.window) == (1000, 3, 3600.0, 86400.0)


def test_policy_list_takes_the_slowest_rate() -> None:
    info = parse_rate_limit_headers({"RateLimit-Policy": "10;w=1, 50;w=60"})
    assert info is not None and (info.limit, info.window) == (50, 60.0)


def test_separate_headers_and_epoch_reset() -> None:
    now = 1_750_000_000.0
    info = parse_rate_limit_headers(
        {
            "X-RateLimit-Limit": "300",
            "X-RateLimit-Remaining": "12",
            "X-RateLimit-Reset": str(int(now) + 45),
        },
        now=now,
    )
    assert info is not None and (info.limit, info.remaining, info.reset) == (300, 12, 45.0)
    older = parse_rate_limit_headers(
        {"RateLimit-Limit": "100, 100;w=60", "RateLimit-Remaining": "7", "RateLimit-Reset": "9"}
    )
    assert older is not None and (older.limit, older.remaining, older.reset, older.window) == (
        100,
        7,
        9.0,
        60.0,
    )


def test_the_combined_field_wins_over_separate_headers() -> None:
    info = parse_rate_limit_headers(
        {
            "RateLimit": "limit=60, remaining=10, reset=5",
            "X-RateLimit-Limit": "999",
            "X-RateLimit-Remaining": "999",
            "X-RateLimit-Reset": "999",
        }
    )
    assert info is not None and (info.limit, info.remaining, info.reset) == (60, 10, 5.0)


@pytest.mark.parametrize(
    "headers",
    [
        {"RateLimit": "limit=sixty, remaining=-1, reset=soon"},
        {"RateLimit": '"unterminated;r=5'},
        {"RateLimit-Policy": "0;w=0"},
        {"X-RateLimit-Remaining": "1e3", "X-RateLimit-Limit": "-5"},
        {"RateLimit": "remaining=" + "9" * 400},
        {},
    ],
)
def test_malformed_values_are_ignored(headers: dict[str, str]) -> None:
    info = parse_rate_limit_headers(headers)
    assert info is None or (info.remaining is None or info.remaining >= 0)


def test_malformed_member_does_not_hide_the_good_ones() -> None:
    info = parse_rate_limit_headers(
        {"RateLimit": "limit=abc, remaining=4, reset=2", "RateLimit-Policy": "junk;w=x, 60;w=60"}
    )
    assert info is not None and (info.limit, info.remaining, info.reset, info.window) == (
        60,
        4,
        2.0,
        60.0,
    )


# -- parsers: fuzzing (they never raise) ------------------------------------------------------------
FIELD_CHARS = st.text(alphabet='"=;, 0123456789.-+@abcdeglimnorqstuwxyz\\\t', max_size=80)
ANY_TEXT = st.one_of(FIELD_CHARS, st.text(max_size=80))
HEADER_NAMES = st.sampled_from(
    [
        "RateLimit",
        "RateLimit-Policy",
        "RateLimit-Limit",
        "RateLimit-Remaining",
        "RateLimit-Reset",
        "X-RateLimit-Limit",
        "X-RateLimit-Remaining",
        "X-RateLimit-Reset",
        "Retry-After",
        "Deprecation",
        "Sunset",
        "Link",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(HEADER_NAMES, ANY_TEXT, max_size=8))
def test_fuzz_rate_limit_headers_never_raise(headers: dict[str, str]) -> None:
    info = parse_rate_limit_headers(headers)
    if info is not None:
        assert info.remaining is None or info.remaining >= 0
        assert info.reset is None or info.reset >= 0
        assert info.limit is None or info.limit > 0
        assert info.window is None or info.window > 0


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(HEADER_NAMES, ANY_TEXT, max_size=8))
def test_fuzz_with_httpx_headers(headers: dict[str, str]) -> None:
    try:
        real = httpx.Headers(headers)
    except Exception:  # httpx refuses some characters in header values itself
        return
    parse_rate_limit_headers(real)
    parse_deprecation(real)


@settings(max_examples=300, deadline=None)
@given(ANY_TEXT)
def test_fuzz_retry_after_never_raises(value: str) -> None:
    seconds = parse_retry_after(value)
    assert seconds is None or seconds >= 0


@settings(max_examples=300, deadline=None)
@given(ANY_TEXT, ANY_TEXT, ANY_TEXT)
def test_fuzz_deprecation_never_raises(deprecation: str, sunset: str, link: str) -> None:
    notice = parse_deprecation({"Deprecation": deprecation, "Sunset": sunset, "Link": link})
    if notice is not None:
        assert isinstance(notice.message("GET /x"), str)


@settings(max_examples=300, deadline=None)
@given(
    st.integers(400, 599),
    st.binary(max_size=200),
    st.dictionaries(HEADER_NAMES, FIELD_CHARS, max_size=3),
)
def test_fuzz_error_mapping_always_gives_an_api_error(
    status: int, body: bytes, headers: dict[str, str]
) -> None:
    exc = error_from_response(httpx.Response(status, content=body, headers=headers))
    assert (
        isinstance(exc, ApiError)
        and exc.status == status
        and exc.code
        and isinstance(str(exc), str)
    )


@settings(max_examples=200, deadline=None)
@given(
    st.integers(400, 599),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=20),
        lambda children: (
            st.lists(children, max_size=3)
            | st.dictionaries(
                st.sampled_from(["error", "code", "message", "type", "title", "detail", "status"]),
                children,
                max_size=5,
            )
        ),
        max_leaves=10,
    ),
)
def test_fuzz_error_mapping_json_shapes(status: int, body: Any) -> None:
    exc = error_from_response(httpx.Response(status, json=body))
    assert isinstance(exc, ApiError) and exc.status == status and exc.code


# -- the pacer -------------------------------------------------------------------------------------
def _info(
    remaining: int, reset: float, limit: int = 100_000, window: float = 1.0
) -> RateLimitState:
    return RateLimitState(limit=limit, remaining=remaining, reset=reset, window=window)


class FakeClock:
    """Time the pacer keeps, moved on only by its waits: pacing checked without sleeping.

    ``during`` holds what other threads do while this one waits: each wait runs the next one (a
    release, as an answer arriving) before the time moves on."""

    def __init__(self) -> None:
        self.time = 1000.0
        self.waits: list[float] = []
        self.during: list[Callable[[], object]] = []

    def __call__(self) -> float:
        return self.time

    def now(self) -> float:
        return self.time

    def sleep(self, seconds: float, stop: threading.Event | None = None) -> bool:
        raise AssertionError("the pacer waits on its condition, it never sleeps")

    def wait(self, _condition: threading.Condition, seconds: float) -> None:
        self.waits.append(seconds)
        if self.during:
            self.during.pop(0)()
        self.time += seconds

    def pacer(self, **options: Any) -> Pacer:
        return Pacer(clock=self, **options)


def test_pacer_spaces_requests_at_the_policy_rate() -> None:
    clock = FakeClock()
    pacer = clock.pacer(safety=1.0)
    pacer.release(pacer.acquire(), _info(99, 10.0, limit=20, window=1.0))  # 20 per second
    started = clock()
    sent = []
    for _ in range(6):
        sent.append(clock())
        pacer.release(pacer.acquire(), None)
    assert pacer.interval == pytest.approx(0.05)
    assert clock() - started == pytest.approx(5 * 0.05)  # six starts, five gaps of 1/20 s
    assert pacer.waited == pytest.approx(5 * 0.05)


def test_quota_the_pace_cannot_use_before_the_reset_goes_at_once() -> None:
    """A short load need not wait: with 50 requests left and 1 s to the reset at 1 per second,
    the pace would use one of them; the rest may go straight away."""
    clock = FakeClock()
    pacer = clock.pacer(safety=1.0)
    pacer.release(pacer.acquire(), _info(50, 1.0, limit=60, window=60.0))
    for _ in range(10):
        pacer.release(pacer.acquire(), None)
    assert clock.waits == []  # no wait at all
    clock = FakeClock()  # the control: two left and 30 s to go, so the pace holds them back
    pacer = clock.pacer(safety=1.0)
    pacer.release(pacer.acquire(), _info(2, 30.0, limit=60, window=60.0))
    for _ in range(2):
        pacer.release(pacer.acquire(), None)
    assert sum(clock.waits) == pytest.approx(1.0)  # the second one waits its 1 s slot


def test_pacer_waits_for_the_reset_when_remaining_is_zero() -> None:
    clock = FakeClock()
    pacer = clock.pacer()
    pacer.release(pacer.acquire(), _info(0, 0.3))
    started = clock()
    pacer.release(pacer.acquire(), _info(999, 1000.0))
    assert clock() - started == pytest.approx(0.3)  # exactly the reset, in steps of <= 0.25 s
    assert max(clock.waits) <= 0.25


def test_pacer_counts_requests_in_flight() -> None:
    clock = FakeClock()
    pacer = clock.pacer()
    pacer.release(pacer.acquire(), _info(3, 60.0))  # three left in this window
    in_flight = [pacer.acquire() for _ in range(3)]
    before = len(clock.waits)  # (the pace's steps of 1/100000 s between sends)
    remaining: list[int | None] = []
    clock.during = [  # while the fourth waits: three are in flight against three remaining
        lambda: pacer.release(in_flight[0], _info(2, 60.0)),  # consistent: still none left
        lambda: remaining.append(pacer.state.remaining if pacer.state else None),
        lambda: pacer.release(in_flight[1], _info(900, 60.0)),  # a fresh window: it jumped up
    ]
    assert pacer.acquire() == 5
    assert remaining == [2]  # the first answer was taken, and the fourth still waited
    assert clock.waits[before:] == [0.25] * 3  # it went on at the fresh window, not the reset


def test_pacer_waits_out_the_reset_when_requests_in_flight_use_the_quota() -> None:
    """The control of the test above: with no answer the fourth waits until the reset."""
    clock = FakeClock()
    pacer = clock.pacer()
    pacer.release(pacer.acquire(), _info(3, 60.0))
    for _ in range(3):
        pacer.acquire()
    started = clock()
    pacer.acquire()
    assert clock() - started == pytest.approx(60.0)


def test_pacer_ignores_answers_from_an_ended_window() -> None:
    clock = FakeClock()
    pacer = clock.pacer()
    early = pacer.acquire()
    pacer.release(pacer.acquire(), _info(5, 0.15))
    clock.time += 0.2  # the window ended; "early" was sent in it
    pacer.release(early, _info(0, 30.0))  # stale: must not stop everything for 30 s
    pacer.acquire()
    assert clock.waits == []
    # the control: the same answer to a request sent in the new window stops until its reset
    late = pacer.acquire()
    pacer.release(late, _info(0, 30.0))
    started = clock()
    pacer.acquire()
    assert clock() - started == pytest.approx(30.0)


def test_pacer_block_and_disabled_pacing() -> None:
    clock = FakeClock()
    pacer = clock.pacer()
    pacer.release(pacer.acquire(pace=False), _info(0, 30.0, limit=1, window=60.0))
    started = clock()
    for _ in range(5):
        pacer.release(pacer.acquire(pace=False), None)
    assert clock() == started  # not paced: paced, it would wait out the 30 s reset
    pacer.block(0.2)
    pacer.acquire(pace=False)
    assert clock() - started == pytest.approx(0.2)  # Retry-After is honoured even so


# -- pacing against the sandbox --------------------------------------------------------------------
def _statuses(api_hooks: list[int]) -> dict[str, list[Callable[[httpx.Response], None]]]:
    return {"response": [lambda response: api_hooks.append(response.status_code)]}


def _one_clock(sandbox: Any) -> EngineClock:
    """One fake clock for the client and the sandbox's quota windows: the client's pacing waits
    move both on at once, so the quota is kept on the wire without any real wait."""
    clock = EngineClock()
    sandbox.admin.limiter = RateLimiter(sandbox.admin.options.effective_rate_limit, clock.now)
    return clock


def test_steady_load_gets_no_429_and_learns_the_policy(start_sandbox: Callable[..., Any]) -> None:
    """Paced by the policy the server states, 51 requests at 20 per second get no 429. The pace
    against the policy is checked on the fake clock above; the rate achieved on the wire is
    measured in ``benchmarks/bench_client.py`` (no timed assertion here)."""
    sandbox = start_sandbox(rate_limit=(20, 1.0))
    clock = _one_clock(sandbox)
    statuses: list[int] = []
    policy = RetryPolicy(max_retries=0)
    with ApiClient(
        sandbox.url, max_concurrency=4, retry=policy, event_hooks=_statuses(statuses), clock=clock
    ) as api:
        api.get_json("/v1/listings", {"Limit": "1"})
        pages = api.get_many(
            [("/v1/listings", {"Limit": "5", "Offset": str(5 * i)}) for i in range(50)]
        )
        state = api.rate_limit
    assert statuses.count(429) == 0 and len(statuses) == 51
    assert [p["offset"] for p in pages] == [5 * i for i in range(50)]
    assert state is not None and (state.limit, state.window) == (20, 1.0)


def test_quota_used_by_someone_else_is_respected(start_sandbox: Callable[..., Any]) -> None:
    sandbox = start_sandbox(rate_limit=(12, 2.0))
    clock = _one_clock(sandbox)
    with httpx.Client() as other:  # another consumer of the same (anonymous, per host) quota
        for _ in range(9):
            other.get(f"{sandbox.url}/v1/me")
    statuses: list[int] = []
    with ApiClient(
        sandbox.url,
        max_concurrency=3,
        retry=RetryPolicy(max_retries=0),
        event_hooks=_statuses(statuses),
        clock=clock,
    ) as api:
        api.get_json("/v1/me")
        pages = api.get_many(
            [("/v1/listings", {"Limit": "1", "Offset": str(i)}) for i in range(12)]
        )
    assert statuses.count(429) == 0
    assert [p["offset"] for p in pages] == list(range(12))


def test_the_same_load_unpaced_gets_429(start_sandbox: Callable[..., Any]) -> None:
    """The control of the test above: on the same fake clock, without pacing, the quota left by
    the other consumer is overrun (so no 429 there is the pacer's doing)."""
    sandbox = start_sandbox(rate_limit=(12, 2.0))
    clock = _one_clock(sandbox)
    with httpx.Client() as other:
        for _ in range(9):
            other.get(f"{sandbox.url}/v1/me")
    statuses: list[int] = []
    policy = RetryPolicy(max_retries=0)
    hooks = _statuses(statuses)
    with ApiClient(
        sandbox.url, max_concurrency=3, retry=policy, event_hooks=hooks, clock=clock, pace=False
    ) as api:
        api.get_json("/v1/me")
        with pytest.raises(ApiError) as caught:
            api.get_many([("/v1/listings", {"Limit": "1", "Offset": str(i)}) for i in range(12)])
    assert caught.value.status == 429 and statuses.count(429) >= 1
