"""Retries: what is retried, the waits (Retry-After in both forms, backoff), budget and deadline.

What the sandbox can answer is tested against it (4xx statuses, 429 bursts with any Retry-After),
counting the attempts on the wire with httpx event hooks (:class:`Wire`). Fake servers (small
callable classes given to ``httpx.MockTransport``) remain only for scripted faults the sandbox
cannot produce: HTTP-date Retry-After, 504, exact interleavings, transport errors on cue.
The sandbox's own faults against whole loads are exercised in test_faults.py.

Every client here keeps a :class:`fakeclock.FakeClock`: waits move it on at once, times
are read from it, so nothing sleeps and nothing is bounded by the wall clock.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx
import pytest

from fakeclock import FakeClock
from realtyframes import oauth
from realtyframes.api import ApiClient, RetryBudget, RetryPolicy
from realtyframes.api._retry import parse_retry_after, retryable
from realtyframes.api._transports import Exchange
from realtyframes.errors import (
    ApiError,
    BadRequestError,
    BadResponseError,
    ConnectError,
    InsufficientScopeError,
    InvalidTokenError,
    NotFoundError,
    RateLimitError,
    RequestTimeoutError,
    ServerError,
)
from realtyframes.sandbox import DEMO, Faults

FAST = RetryPolicy(
    max_retries=3,
    backoff_base=0.001,
    backoff_cap=0.005,
    retry_after_cap=0.05,
    retry_after_floor=0.01,
    deadline=10.0,
)
OK_BODY = {"total": 1, "listings": [{"ListingId": "A1"}]}

Answer = httpx.Response | Exception | Callable[[httpx.Request], httpx.Response]


def _error(status: int, code: str, **headers: str) -> Callable[[httpx.Request], httpx.Response]:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            status,
            json={"error": {"code": code, "message": code, "status": status}},
            headers=headers,
        )

    return answer


def _ok(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, json=OK_BODY)


class Script:
    """A fake server answering from a script (the last answer repeats); records request times."""

    def __init__(self, *answers: Answer, clock: FakeClock | None = None) -> None:
        self.clock = clock or FakeClock()
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []
        self.times: list[float] = []
        self._lock = threading.Lock()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        with self._lock:
            self.requests.append(request)
            self.times.append(self.clock.now())
            answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, httpx.Response):
            return answer
        return answer(request)


def _client(script: Script, policy: RetryPolicy = FAST, **options: Any) -> ApiClient:
    return ApiClient(
        "http://api.test",
        transport=httpx.MockTransport(script),
        retry=policy,
        clock=script.clock,
        **options,
    )


# -- the named pieces -------------------------------------------------------------------------------
@pytest.mark.parametrize("status", [429, 500, 502, 503, 504])
def test_these_statuses_are_retried(status: int) -> None:
    script = Script(_error(status, "x"), _ok)
    with _client(script) as api:
        assert api.get_json("/v1/listings") == OK_BODY
    assert len(script.requests) == 2


@pytest.mark.parametrize("status", [400, 401, 403, 404, 405, 409, 413, 414, 422, 501])
def test_never_retry_other_statuses(status: int) -> None:
    script = Script(_error(status, "x"), _ok)
    with _client(script) as api, pytest.raises(ApiError) as caught:
        api.get_json("/v1/listings")
    assert caught.value.status == status and len(script.requests) == 1


def test_a_post_on_the_clients_pool_is_never_retried() -> None:
    script = Script(_error(503, "server_error"), _ok)
    with _client(script) as api:
        assert api.http.post("http://api.test/token").status_code == 503
    assert len(script.requests) == 1


def test_should_retry_transport_exceptions() -> None:
    assert retryable(httpx.ConnectError("refused"))
    assert retryable(httpx.ReadTimeout("slow"))
    assert retryable(httpx.RemoteProtocolError("dropped"))
    assert retryable(httpx.DecodingError("bad gzip"))
    assert not retryable(httpx.UnsupportedProtocol("ftp"))


def test_backoff_full_jitter_capped_and_pinnable() -> None:
    policy = RetryPolicy(backoff_base=0.5, backoff_cap=4.0)
    first = [policy.backoff(n, rng=random.Random(42)) for n in range(10)]
    again = [policy.backoff(n, rng=random.Random(42)) for n in range(10)]
    assert first == again
    rng = random.Random(1)
    for attempt in range(12):
        ceiling = min(4.0, 0.5 * 2**attempt)
        draws = [policy.backoff(attempt, rng=rng) for _ in range(200)]
        assert all(0.0 <= d <= ceiling for d in draws)
        assert max(draws) > ceiling * 0.8  # full jitter spreads over the whole range
    assert RetryPolicy(backoff_base=1.0, backoff_cap=2.0).backoff(10_000, random.Random(0)) <= 2.0


def test_retry_after_seconds_date_cap_and_floor() -> None:
    now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    assert parse_retry_after("120") == 120.0
    assert (
        parse_retry_after(format_datetime(now + timedelta(seconds=30), usegmt=True), now=now)
        == 30.0
    )
    assert (
        parse_retry_after(format_datetime(now - timedelta(seconds=30), usegmt=True), now=now) == 0.0
    )
    assert parse_retry_after("-3") == 0.0
    for bad in ("", "soon", "1e9999", "Thu, 99 Foo 2026", "９"):
        assert parse_retry_after(bad) is None
    policy = RetryPolicy(retry_after_floor=0.1, retry_after_cap=60.0)
    assert policy.retry_after(httpx.Response(429, headers={"Retry-After": "0"})) == 0.1
    assert policy.retry_after(httpx.Response(429, headers={"Retry-After": "86400"})) == 60.0
    assert policy.retry_after(httpx.Response(429)) is None


def test_retry_budget_is_shared_and_thread_safe() -> None:
    budget = RetryBudget(100)
    results: list[bool] = []

    def spend() -> None:
        results.extend(budget.try_spend() for _ in range(30))

    threads = [threading.Thread(target=spend) for _ in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results.count(True) == 100 and budget.remaining == 0
    assert RetryPolicy(max_retries=2, budget_ratio=0.5).budget(10).total == 7


def test_policy_validation() -> None:
    with pytest.raises(ValueError, match="max_retries"):
        RetryPolicy(max_retries=-1)
    with pytest.raises(ValueError, match="retry_after_floor"):
        RetryPolicy(retry_after_floor=5, retry_after_cap=1)


# -- the engine against scripted servers ------------------------------------------------------------
def test_transient_5xx_then_success_returns_the_data() -> None:
    script = Script(
        _error(503, "server_error"), _error(502, "server_error"), _error(504, "server_error"), _ok
    )
    with _client(script) as api:
        assert api.get_json("/v1/listings") == OK_BODY
    assert len(script.requests) == 4


class Wire:
    """httpx event hooks recording what reaches the wire: one entry per attempt, not per call."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.times: list[float] = []
        self.statuses: list[int] = []
        self._lock = threading.Lock()

    def _request(self, request: httpx.Request) -> None:
        with self._lock:
            self.times.append(self.clock.now())

    def _response(self, response: httpx.Response) -> None:
        with self._lock:
            self.statuses.append(response.status_code)

    @property
    def hooks(self) -> dict[str, list[Callable[..., Any]]]:
        return {"request": [self._request], "response": [self._response]}


@pytest.mark.parametrize(
    ("status", "cls", "api_key", "path", "params"),
    [
        (400, BadRequestError, DEMO.api_key, "/v1/listings", {"Limit": "999"}),
        (401, InvalidTokenError, "rfk_not_a_registered_key", "/v1/listings", None),
        (403, InsufficientScopeError, DEMO.api_key, "/v1/contacts", None),  # keys lack contacts
        (404, NotFoundError, DEMO.api_key, "/v1/listings/A99999999", None),
    ],
    ids=["400", "401", "403", "404"],
)
def test_other_4xx_are_never_retried(
    protected_sandbox_url: str,
    status: int,
    cls: type[Exception],
    api_key: str,
    path: str,
    params: dict[str, str] | None,
) -> None:
    wire = Wire(clock := FakeClock())
    with (
        ApiClient(
            protected_sandbox_url,
            api_key=api_key,
            retry=FAST,
            event_hooks=wire.hooks,
            clock=clock,
        ) as api,
        pytest.raises(cls) as caught,
    ):
        api.get_json(path, params)  # get_json: no client-side validation, the server answers
    assert caught.value.status == status  # type: ignore[attr-defined]
    assert wire.statuses == [status] and len(wire.times) == 1


@pytest.mark.parametrize(
    ("status", "code", "cls"),
    [
        (429, "rate_limit_exceeded", RateLimitError),
        (500, "server_error", ServerError),
        (502, "server_error", ServerError),
        (503, "server_error", ServerError),
        (504, "server_error", ServerError),
    ],
)
def test_retryable_status_raises_its_typed_error_when_retries_are_spent(
    status: int, code: str, cls: type[Exception]
) -> None:
    script = Script(_error(status, code, **({"Retry-After": "2"} if status == 429 else {})))
    with _client(script) as api, pytest.raises(cls) as caught:
        api.get_json("/v1/listings")
    assert len(script.requests) == 1 + FAST.max_retries
    assert caught.value.status == status  # type: ignore[attr-defined]
    if status == 429:
        assert caught.value.retry_after == 2.0  # type: ignore[attr-defined]


def test_504_html_page_from_a_proxy_is_a_server_error() -> None:
    page = "<html><head><title>504 Gateway Time-out</title></head><body>upstream</body></html>"
    script = Script(httpx.Response(504, text=page, headers={"Content-Type": "text/html"}))
    with _client(script, max_retries=0) as api, pytest.raises(ServerError) as caught:
        api.get_json("/v1/listings")
    assert caught.value.status == 504 and "504 Gateway Time-out" in caught.value.message


def test_retry_after_http_date_is_honoured() -> None:
    # Dates far from now on either side of the policy's bounds, so the waits do not depend on
    # how long this test takes: a date 2 minutes ahead waits the cap, one in the past the floor.
    policy = RetryPolicy(
        max_retries=2, retry_after_cap=5.0, retry_after_floor=0.01, backoff_base=0.001
    )
    for offset, wait in ((120, 5.0), (-120, 0.01)):
        date = format_datetime(datetime.now(UTC) + timedelta(seconds=offset), usegmt=True)
        script = Script(_error(429, "rate_limit_exceeded", **{"Retry-After": date}), _ok)
        with _client(script, policy) as api:
            assert api.get_json("/v1/listings") == OK_BODY
        assert script.clock.sleeps == [wait]
        assert script.times[1] - script.times[0] == pytest.approx(wait)  # on the fake clock


def test_retry_after_is_capped_and_zero_still_waits(start_sandbox: Callable[..., Any]) -> None:
    # burst_429=1 every 2 requests: the 2nd request of a server is a 429 with this Retry-After.
    policy = RetryPolicy(max_retries=1, retry_after_cap=0.2, retry_after_floor=0.05)
    waits = {}
    for retry_after in (3600, 0):
        sb = start_sandbox(faults=Faults(burst_429=1, burst_every=2, retry_after=retry_after))
        wire = Wire(clock := FakeClock())
        with ApiClient(sb.url, retry=policy, event_hooks=wire.hooks, clock=clock) as api:
            assert api.get_json("/v1/me")["email"] == DEMO.email
            assert api.get_json("/v1/me")["email"] == DEMO.email  # 429, then the retry
        assert wire.statuses == [200, 429, 200] and sb.admin.faults.burst_429 == 1
        waits[retry_after] = wire.times[2] - wire.times[1]
    assert waits[3600] == pytest.approx(0.2), waits  # capped at 0.2 s, nowhere near an hour
    assert waits[0] == pytest.approx(0.05), waits  # "0" still waits the floor (0.05 s)


class HeldClock(FakeClock):
    """A fake clock whose retry waits first wait (on an event, not a sleep) for ``release``."""

    def __init__(self, release: threading.Event) -> None:
        super().__init__()
        self.release = release

    def sleep(self, seconds: float, stop: threading.Event | None = None) -> bool:
        assert self.release.wait(timeout=30), "the other requests were never sent"
        return super().sleep(seconds, stop)


def test_retry_after_holds_every_thread_of_the_client() -> None:
    lock = threading.Lock()
    first = {"done": False}
    blocked, all_sent = threading.Event(), threading.Event()

    def answer(request: httpx.Request) -> httpx.Response:
        with lock:
            refuse, first["done"] = not first["done"], True
            if len(script.requests) == 8:
                all_sent.set()
        if refuse:
            return httpx.Response(429, json={}, headers={"Retry-After": "1"})
        # those in flight with the refused one answer once its Retry-After holds the client
        assert blocked.wait(timeout=30)
        return httpx.Response(200, json={"offset": request.url.params["Offset"]})

    # The refused request's own wait starts only once the 8 requests were sent: had the
    # Retry-After not held the other threads, they would have been sent at the refusal's time.
    script = Script(answer, clock=HeldClock(all_sent))
    cap = 0.5
    policy = RetryPolicy(max_retries=2, retry_after_cap=cap, retry_after_floor=0.01)
    with _client(script, policy, max_concurrency=4) as api:
        pacer = api.pacer("base")
        block = pacer.block

        def block_and_tell(seconds: float) -> None:
            block(seconds)
            blocked.set()

        pacer.block = block_and_tell  # type: ignore[method-assign]
        results = api.get_many([("/v1/listings", {"Offset": str(i)}) for i in range(8)])
    assert [r["offset"] for r in results] == [str(i) for i in range(8)]
    # 8 requests plus the retry of the refused one; the first 4 went out together before the
    # 429. Every later request, from any thread, waited for the end of the (capped) Retry-After
    # counted from the refusal.
    assert len(script.times) == 9
    refused_at = script.times[0]
    later = script.times[4:]
    assert all(t >= refused_at + cap for t in later), [t - refused_at for t in later]


@pytest.mark.parametrize(
    ("exc", "cls"),
    [
        (httpx.ConnectError("connection refused"), ConnectError),
        (httpx.ReadTimeout("read timed out"), RequestTimeoutError),
        (httpx.ConnectTimeout("connect timed out"), RequestTimeoutError),
        (httpx.RemoteProtocolError("peer closed connection"), ConnectError),
        (httpx.ReadError("reset by peer"), ConnectError),
    ],
)
def test_transport_errors_retried_then_typed(exc: Exception, cls: type[Exception]) -> None:
    recovering = Script(exc, exc, _ok)
    with _client(recovering) as api:
        assert api.get_json("/v1/listings") == OK_BODY
    assert len(recovering.requests) == 3
    failing = Script(exc)
    with _client(failing) as api, pytest.raises(cls) as caught:
        api.get_json("/v1/listings")
    assert len(failing.requests) == 1 + FAST.max_retries
    assert "/v1/listings" in str(caught.value)


def test_truncated_or_html_200_bodies_are_retried_then_bad_response() -> None:
    truncated = httpx.Response(200, content=b'{"total": 1, "listings": [{"ListingId": "A1"}')
    html_200 = httpx.Response(200, text="<html>maintenance</html>")
    script = Script(truncated, html_200, _ok)
    with _client(script) as api:
        assert api.get_json("/v1/listings") == OK_BODY
    raw = Script(
        lambda r: httpx.Response(200, content=b'{"listings": [{"ListingId": "A1"}, {"Li'), _ok
    )
    with _client(raw) as api:
        assert api.get_bytes("/v1/listings") == httpx.Response(200, json=OK_BODY).content
    assert len(raw.requests) == 2
    always = Script(lambda r: httpx.Response(200, content=b'{"total": 1, "listi'))
    with _client(always) as api, pytest.raises(BadResponseError, match="broken body"):
        api.get_bytes("/v1/listings")


def test_raw_body_cut_after_an_inner_brace_is_retried_then_names_the_request() -> None:
    """A raw body (pages, details) cut right after an inner ``}`` ends with ``}`` like a whole one:
    it is still a broken body, retried, and the final error names the request, never a secret."""
    cut = b'{"total": 2, "listings": [{"ListingId": "A1", "Media": [{"Order": 1}]}'
    recovering = Script(lambda r: httpx.Response(200, content=cut), _ok)
    with _client(recovering) as api:
        assert api.get_bytes("/v1/listings/A1") == httpx.Response(200, json=OK_BODY).content
    assert len(recovering.requests) == 2
    always = Script(lambda r: httpx.Response(200, content=cut))
    with (
        _client(always, api_key="sk-secret-123") as api,
        pytest.raises(BadResponseError, match="broken body") as caught,
    ):
        api.get_many([("/v1/listings/A1", {})], raw=True)
    assert "/v1/listings/A1" in str(caught.value)
    assert "sk-secret-123" not in str(caught.value) and "sk-secret-123" not in repr(caught.value)


def test_parse_errors_count_as_broken_bodies() -> None:
    script = Script(_ok)
    seen: list[int] = []

    def parse(body: bytes) -> int:
        seen.append(len(body))
        if len(seen) == 1:
            raise ValueError("cannot parse")
        return len(body)

    with _client(script) as api:
        assert api.get_many([("/v1/listings", None)], parse=parse) == [seen[-1]]
    assert len(script.requests) == 2


def test_retry_budget_of_a_load_is_shared() -> None:
    script = Script(_error(503, "server_error"))
    budget = RetryBudget(5)
    policy = RetryPolicy(max_retries=10, backoff_base=0.001, backoff_cap=0.002)
    with _client(script, policy, max_concurrency=3) as api, pytest.raises(ServerError):
        api.get_many([("/v1/listings", {"Offset": str(i)}) for i in range(6)], budget=budget)
    assert budget.spent == 5
    assert len(script.requests) <= 6 + 5


def test_deadline_stops_retrying() -> None:
    script = Script(_error(503, "server_error"))
    policy = RetryPolicy(max_retries=50, backoff_base=0.1, backoff_cap=0.1, deadline=0.5)
    with _client(script, policy, rng=random.Random(3)) as api, pytest.raises(ServerError):
        api.get_json("/v1/listings")
    assert 2 <= len(script.requests) < 50  # stopped by the deadline, long before max_retries
    assert sum(script.clock.sleeps) <= 0.5  # no wait went past it
    assert len(script.clock.sleeps) == len(script.requests) - 1


def test_max_retries_zero_means_one_attempt() -> None:
    script = Script(_error(500, "server_error"), _ok)
    with _client(script, max_retries=0) as api, pytest.raises(ServerError):
        api.get_json("/v1/listings")
    assert len(script.requests) == 1


def test_token_exchange_is_never_retried() -> None:
    script = Script(_error(503, "server_error"), _ok)
    with pytest.raises(ServerError):
        oauth.exchange_code(
            "code-1",
            client_id="app",
            client_secret="secret",
            redirect_uri="http://127.0.0.1:1/callback",
            state="s",
            expected_state="s",
            auth_url="http://auth.test",
            transport=httpx.MockTransport(script),
        )
    assert len(script.requests) == 1
    failing = Script(httpx.ConnectError("refused"))
    with pytest.raises(ConnectError):
        oauth.exchange_code(
            "code-1",
            client_id="app",
            client_secret="secret",
            redirect_uri="http://127.0.0.1:1/callback",
            state="s",
            expected_state="s",
            auth_url="http://auth.test",
            transport=httpx.MockTransport(failing),
        )
    assert len(failing.requests) == 1


def test_get_many_keeps_order_and_stops_on_first_final_error() -> None:
    answered = [threading.Event() for _ in range(41)]
    failed = threading.Event()

    def answer(request: httpx.Request) -> httpx.Response:
        index = int(request.url.params["Offset"])
        if index % 2 == 0 and "fail" not in request.url.params:
            assert answered[index + 1].wait(timeout=30)  # each odd request answers first
        answered[index].set()
        if index == 7 and request.url.params.get("fail") == "1":
            failed.set()
            return httpx.Response(404, json={"error": {"code": "not_found", "message": "gone"}})
        if failed.is_set():  # those in flight with the 404 answer once it has stopped the call
            exchange = Exchange.of(request)
            assert exchange is not None and exchange.stop is not None
            assert exchange.stop.wait(timeout=30)
        return httpx.Response(200, json={"i": index})

    script = Script(answer)
    seen: list[int] = []
    with _client(script, max_concurrency=4) as api:
        results = api.get_many(
            [("/v1/listings", {"Offset": str(i)}) for i in range(10)],
            on_result=lambda index, result: seen.append(index),
        )
        assert [r["i"] for r in results] == list(range(10))
        assert sorted(seen) == list(range(10)) and seen != list(range(10))
        script.requests.clear()
        with pytest.raises(NotFoundError):
            api.get_many([("/v1/listings", {"Offset": str(i), "fail": "1"}) for i in range(40)])
    assert len(script.requests) <= 8 + 3  # up to the 404, and those in flight with it


def test_structured_list_headers_pause_until_reset() -> None:
    def limited(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200,
            json={},
            headers={
                "RateLimit": '"default";r=0;t=0.4',
                "RateLimit-Policy": '"default";q=100;w=60',
            },
        )

    script = Script(limited)
    with _client(script) as api:
        api.get_json("/v1/listings")
        api.get_json("/v1/listings")
        state = api.rate_limit
    assert script.times[1] - script.times[0] >= 0.4 - 1e-9  # the reset, on the fake clock
    assert state is not None and (state.limit, state.remaining, state.window) == (100, 0, 60.0)


def test_one_deadline_for_a_whole_get_many() -> None:
    def slow(request: httpx.Request) -> httpx.Response:
        script.clock.advance(0.05)  # each answer takes 50 ms of the fake clock
        return httpx.Response(200, json={})

    script = Script(slow)
    with (
        _client(script, max_concurrency=2) as api,
        pytest.raises(RequestTimeoutError, match="deadline"),
    ):
        api.get_many([("/v1/listings", {"Offset": str(i)}) for i in range(100)], deadline=0.3)
    assert 4 <= len(script.requests) < 20  # one deadline for all: most pages never sent
