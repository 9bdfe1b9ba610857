"""Resilient HTTP as httpx transports, each one small named step, composed once per client.

:func:`compose` stacks them over the transport that speaks HTTP (outermost first):

- :class:`RetryTransport` retries a GET on 429 / 5xx, connect errors, timeouts and transient bad
  answers (:class:`TransientAnswer`), waiting the server's ``Retry-After`` or a
  jittered backoff (:meth:`~._retry.RetryPolicy.backoff`), inside the request's deadline and the
  load's retry budget;
- :class:`SlotTransport` holds one of the client's slots while a request is on the wire and its
  body is read: one bounded pool per client, shared by ``with_options`` copies and the sync's feed;
- :class:`PacingTransport` waits for the host's :class:`~._pacer.Pacer` and tells it the
  answer's ``RateLimit`` headers (and a ``Retry-After``, which holds every thread);
- :class:`CountingTransport` counts every attempt (the run history's request counts);
- :class:`HookTransport` runs the caller's httpx event hooks once per attempt.

Deprecation notices are an httpx response event hook (:func:`note_deprecation`). The client puts
an :class:`Exchange` in each GET's extensions (``request.extensions[KEY]``): each step reads what
it needs from it (retry policy and budget, host, deadline, the answer's check) and writes back
what it learned (the parsed result, deprecation notices). Requests without one (the MCP
sessions' POSTs) pass through every step untouched.

>>> stack = compose(httpx.MockTransport(lambda r: httpx.Response(200)), Pieces())
>>> type(stack).__name__
'RetryTransport'
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from realtyframes.api._clock import SYSTEM_CLOCK, Clock
from realtyframes.api._constants import RETRY_STATUSES
from realtyframes.api._deprecation import Deprecation, DeprecationRegistry, parse_deprecation
from realtyframes.api._pacer import Pacer
from realtyframes.api._ratelimit import RateLimitState, parse_rate_limit_headers
from realtyframes.api._retry import IDEMPOTENT_METHODS, RetryBudget, RetryPolicy, retryable

__all__ = [
    "KEY",
    "Cancelled",
    "CountingTransport",
    "DeadlinePassed",
    "Exchange",
    "HookTransport",
    "PacingTransport",
    "Pieces",
    "RequestCounter",
    "RequestCounts",
    "RetryTransport",
    "SlotTransport",
    "Slots",
    "TransientAnswer",
    "compose",
    "compose_all",
    "note_deprecation",
]

logger = logging.getLogger("realtyframes.api")

#: The request extension holding the :class:`Exchange`.
KEY = "realtyframes.exchange"


class Cancelled(Exception):
    """Raised inside a request of ``get_many`` once another request has failed."""


class DeadlinePassed(Exception):
    """The deadline of the whole call passed before this request was sent."""


class TransientAnswer(Exception):
    """A 2xx answer that is not the one asked for: a broken body, or the answer to another
    request (``cause``: a ``BrokenBody`` or a ``ResponseMismatchError``). Raised by the answer's
    check where the body is parsed; the retry step retries it, and once retries are spent it is
    mapped to its typed error by :func:`~realtyframes.api._errors.error_for`."""

    def __init__(self, cause: Exception, status: int) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.status = status


@dataclass
class Exchange:
    """What the transports need to know about one GET, and what they report back."""

    host: str
    shown: object  # the URL with secrets masked (its str()), for logs and errors
    pace: bool
    limit: int  # requests of this client in flight at once (its max_concurrency)
    policy: RetryPolicy
    budget: RetryBudget | None = None
    stop: threading.Event | None = None
    deadline_at: float | None = None  # clock time after which no attempt starts or waits
    load_deadline: float | None = None  # the deadline of the whole call (get_many)
    timeout: float | None = None  # seconds per attempt
    accept: Callable[[httpx.Response], Any] | None = None  # parses a 2xx answer
    result: Any = None
    notices: list[tuple[str, str, Deprecation]] = field(default_factory=list)
    attempt: int = 0
    path: str = ""  # the path asked for (deprecation notices name it)
    retry_after: float | None = None  # the last answer's Retry-After (clamped), read once

    @staticmethod
    def of(request: httpx.Request) -> Exchange | None:
        """The exchange of ``request`` (None for a request the engine did not plan)."""
        found = request.extensions.get(KEY)
        return found if isinstance(found, Exchange) else None

    @property
    def stopped(self) -> bool:
        """True once another request of the same call failed."""
        return self.stop is not None and self.stop.is_set()

    def attempt_timeout(self, now: float) -> dict[str, float | None]:
        """httpx's timeout extension for an attempt starting at ``now`` (capped by the deadline);
        raises :class:`DeadlinePassed` when the whole call's deadline has passed."""
        if self.load_deadline is not None and now >= self.load_deadline:
            raise DeadlinePassed()
        timeout = self.timeout
        if self.deadline_at is not None:
            left = max(0.001, self.deadline_at - now)
            timeout = left if timeout is None else min(timeout, left)
        return httpx.Timeout(timeout).as_dict()


@dataclass(frozen=True)
class RequestCounts:
    """Counts since the client was made: ``requests`` (every attempt that went out, retries
    included), ``retries`` (attempts after the first of a request), ``throttled`` (429 answers).

    >>> RequestCounts(5, 1, 1) - RequestCounts(2, 0, 0)
    RequestCounts(requests=3, retries=1, throttled=1)
    """

    requests: int = 0
    retries: int = 0
    throttled: int = 0

    def __sub__(self, other: RequestCounts) -> RequestCounts:
        return RequestCounts(
            self.requests - other.requests,
            self.retries - other.retries,
            self.throttled - other.throttled,
        )


class RequestCounter:
    """A thread-safe :class:`RequestCounts`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests = self._retries = self._throttled = 0

    def sent(self, status: int | None = None) -> None:
        """One attempt went out; ``status``: its answer's status (None: no answer came)."""
        with self._lock:
            self._requests += 1
            if status == 429:
                self._throttled += 1

    def retried(self) -> None:
        """A request is attempted again."""
        with self._lock:
            self._retries += 1

    def snapshot(self) -> RequestCounts:
        """The counts so far."""
        with self._lock:
            return RequestCounts(self._requests, self._retries, self._throttled)


Outcome = httpx.Response | httpx.HTTPError | TransientAnswer


class Slots:
    """Requests of one client in flight at once; each caller passes its own limit (a copy with a
    smaller ``max_concurrency`` uses fewer of the same slots)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.busy = 0

    def take(self, limit: int, stop: threading.Event | None) -> None:
        """Wait for a free slot; raises :class:`Cancelled` when ``stop`` is set meanwhile."""
        with self._cond:
            while self.busy >= max(1, limit):
                if stop is not None and stop.is_set():
                    raise Cancelled()
                self._cond.wait(timeout=0.05 if stop is not None else None)
            self.busy += 1

    def give(self) -> None:
        with self._cond:
            self.busy -= 1
            self._cond.notify()


@dataclass
class Pieces:
    """What the steps share across a client and its copies: clock, pacers, slots, counter."""

    clock: Clock = SYSTEM_CLOCK
    rng: random.Random = field(default_factory=random.Random)
    counter: RequestCounter = field(default_factory=RequestCounter)
    pacers: dict[str, Pacer] = field(default_factory=dict)
    slots: Slots = field(default_factory=Slots)
    hooks: Mapping[str, list[Callable[..., Any]]] = field(default_factory=dict)
    deprecations: DeprecationRegistry = field(default_factory=DeprecationRegistry)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def pacer(self, host: str) -> Pacer:
        """The pacer of ``host``, shared by every thread and copy of the client."""
        pacer = self.pacers.get(host)
        if pacer is None:
            with self.lock:
                pacer = self.pacers.setdefault(host, Pacer(clock=self.clock))
        return pacer


class _Step(httpx.BaseTransport):
    def __init__(self, inner: httpx.BaseTransport) -> None:
        self._inner = inner

    def close(self) -> None:
        self._inner.close()


class RetryTransport(_Step):
    """Retries of a planned GET: what is retried, how long to wait, when to give up. Gives up by
    returning the last answer, or raising the last exception, for the engine to map."""

    def __init__(self, inner: httpx.BaseTransport, pieces: Pieces) -> None:
        super().__init__(inner)
        self._pieces = pieces

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        ex = Exchange.of(request)
        if ex is None or request.method not in IDEMPOTENT_METHODS:
            return self._inner.handle_request(request)
        while True:
            if ex.stopped:
                raise Cancelled()
            ex.attempt += 1
            outcome = self._try(request, ex)
            if isinstance(outcome, httpx.Response) and outcome.is_success:
                return outcome
            retryable, wait_s = self.judge(outcome, ex)
            if not retryable or ex.attempt > ex.policy.max_retries or not self._wait(ex, wait_s):
                if isinstance(outcome, httpx.Response):
                    return outcome
                raise outcome
            self._pieces.counter.retried()

    def _try(self, request: httpx.Request, ex: Exchange) -> Outcome:
        try:
            response = self._inner.handle_request(request)
        except httpx.HTTPError as exc:
            return exc
        if response.is_success and ex.accept is not None:
            try:
                ex.result = ex.accept(response)
            except TransientAnswer as exc:
                return exc
        return response

    def judge(self, outcome: Outcome, ex: Exchange) -> tuple[bool, float | None]:
        """Whether ``outcome`` is retried, and the server's wait (None: the backoff's)."""
        if isinstance(outcome, TransientAnswer):
            return True, None
        if isinstance(outcome, httpx.HTTPError):
            return retryable(outcome), None
        status, policy = outcome.status_code, ex.policy
        wait_s = ex.retry_after  # read once, when the answer came (the pacer's hold is the same)
        info = parse_rate_limit_headers(outcome.headers)
        if wait_s is None and status == 429 and info is not None and info.reset is not None:
            wait_s = min(policy.retry_after_cap, max(policy.retry_after_floor, info.reset))
        return status in RETRY_STATUSES, wait_s

    def _wait(self, ex: Exchange, wait_s: float | None) -> bool:
        """Wait before the next attempt; False (give up) when the deadline would pass or the
        retry budget is spent; raises :class:`Cancelled` when the call is stopped meanwhile."""
        clock = self._pieces.clock
        wait_s = ex.policy.backoff(ex.attempt - 1, self._pieces.rng) if wait_s is None else wait_s
        if ex.deadline_at is not None and clock.now() + wait_s > ex.deadline_at:
            logger.info("GET %s: giving up, the deadline would pass", ex.shown)
            return False
        if ex.budget is not None and not ex.budget.try_spend():
            logger.info("GET %s: giving up, the retry budget (%d) is spent", ex.shown,
                        ex.budget.total)  # fmt: skip
            return False
        logger.info("GET %s failed; retry %d/%d in %.2f s", ex.shown, ex.attempt,
                    ex.policy.max_retries, wait_s)  # fmt: skip
        if clock.sleep(wait_s, ex.stop):
            raise Cancelled()
        return True


class SlotTransport(_Step):
    """One slot of the client's bounded pool per request on the wire, held until its body is
    read (the body read here, so a cut body is an httpx error the retry step sees)."""

    def __init__(self, inner: httpx.BaseTransport, slots: Slots) -> None:
        super().__init__(inner)
        self._slots = slots

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        ex = Exchange.of(request)
        if ex is None:
            return self._inner.handle_request(request)
        self._slots.take(ex.limit, ex.stop)
        try:
            response = self._inner.handle_request(request)
            try:
                response.read()
            finally:
                response.close()
            return response
        finally:
            self._slots.give()


class PacingTransport(_Step):
    """Waits for the host's pacer, sets the attempt's timeout (within the deadline), and tells
    the pacer what the answer said about the quota."""

    def __init__(self, inner: httpx.BaseTransport, pieces: Pieces) -> None:
        super().__init__(inner)
        self._pieces = pieces

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        ex = Exchange.of(request)
        if ex is None:
            return self._inner.handle_request(request)
        pacer = self._pieces.pacer(ex.host)
        ticket = pacer.acquire(ex.stop, pace=ex.pace)
        try:
            if ex.stopped:
                raise Cancelled()
            request.extensions["timeout"] = ex.attempt_timeout(self._pieces.clock.now())
            response = self._inner.handle_request(request)
        except BaseException:
            pacer.cancel(ticket)
            raise
        retry_after = ex.retry_after = ex.policy.retry_after(response)
        pacer.release(ticket, _rate_info(response, retry_after))
        if retry_after is not None and response.status_code in (429, 503):
            pacer.block(retry_after)
        return response


def _rate_info(response: httpx.Response, retry_after: float | None) -> RateLimitState | None:
    """The answer's quota headers for the pacer; a Retry-After on a 429 / 503 wins over the quota
    headers of the same answer (its remaining count and reset are dropped)."""
    info = parse_rate_limit_headers(response.headers)
    if retry_after is not None and response.status_code in (429, 503) and info is not None:
        info = RateLimitState(limit=info.limit, window=info.window, policy=info.policy)
    return info


class CountingTransport(_Step):
    """Counts every attempt sent (and its status) and logs it at debug level."""

    def __init__(self, inner: httpx.BaseTransport, pieces: Pieces) -> None:
        super().__init__(inner)
        self._pieces = pieces

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        ex = Exchange.of(request)
        if ex is None:
            return self._inner.handle_request(request)
        clock, counter = self._pieces.clock, self._pieces.counter
        sent = clock.now()
        try:
            response = self._inner.handle_request(request)
        except httpx.HTTPError as exc:
            counter.sent()
            logger.debug("GET %s -> %s after %.0f ms (attempt %d)", ex.shown,
                         type(exc).__name__, (clock.now() - sent) * 1000, ex.attempt)  # fmt: skip
            raise
        counter.sent(response.status_code)
        logger.debug("GET %s -> %d in %.0f ms (attempt %d)", ex.shown, response.status_code,
                     (clock.now() - sent) * 1000, ex.attempt)  # fmt: skip
        return response


class HookTransport(_Step):
    """The caller's httpx event hooks (``request`` / ``response``), once per attempt."""

    def __init__(
        self, inner: httpx.BaseTransport, hooks: Mapping[str, list[Callable[..., Any]]]
    ) -> None:
        super().__init__(inner)
        self._hooks = hooks

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        for hook in self._hooks.get("request", ()):
            hook(request)
        response = self._inner.handle_request(request)
        response.request = request
        for hook in self._hooks.get("response", ()):
            hook(response)
        return response


def compose(base: httpx.BaseTransport, pieces: Pieces) -> httpx.BaseTransport:
    """The steps over ``base``, the transport that speaks HTTP (outermost first: retry, slot,
    pacing, counting, hooks)."""
    inner: httpx.BaseTransport = base
    if pieces.hooks:
        inner = HookTransport(inner, pieces.hooks)
    inner = CountingTransport(inner, pieces)
    inner = PacingTransport(inner, pieces)
    inner = SlotTransport(inner, pieces.slots)
    return RetryTransport(inner, pieces)


def compose_all(http: httpx.Client, pieces: Pieces) -> None:
    """Put the steps of :func:`compose` over every transport ``http`` holds: the
    one it made for its environment (proxies, certificates) or was given, and those mounted (no
    proxy for loopback). httpx has no public way to wrap the transports it builds from its
    environment, so this is the one place reading its private fields (tests check every
    transport of a client is composed)."""
    http._transport = compose(http._transport, pieces)
    http._mounts = {
        pattern: None if mounted is None else compose(mounted, pieces)
        for pattern, mounted in http._mounts.items()
    }


def note_deprecation(registry: DeprecationRegistry) -> Callable[[httpx.Response], None]:
    """An httpx response event hook noting an answer's ``Deprecation`` header in its exchange,
    once per operation and client (the engine warns from the calling thread)."""

    def hook(response: httpx.Response) -> None:
        ex = Exchange.of(response.request)
        if ex is None or "deprecation" not in response.headers:
            return
        notice = parse_deprecation(response.headers)
        path = ex.path or response.request.url.path
        operation = f"GET {path}" if ex.host == "base" else f"GET {path} ({ex.host} host)"
        key = f"{ex.host} {path}"
        if notice is not None and registry.first_time(key):
            ex.notices.append((key, operation, notice))

    return hook
