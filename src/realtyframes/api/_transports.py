"""Resilient HTTP as httpx transports, each one small named step, composed once per client.

:func:`compose` stacks them over the transport that speaks HTTP (outermost first): retry (429 /
5xx, connect errors, timeouts, :class:`TransientAnswer`; within the deadline and retry budget),
slot (one bounded pool per client and its copies), pacing (the host's
:class:`~._pacer.Pacer`, fed the answer's ``RateLimit`` headers), counting, and the caller's
event hooks. Deprecation notices are a response event hook (:func:`note_deprecation`). Each GET
carries an :class:`Exchange` in ``request.extensions[KEY]``: what the steps read and write back
(so does an MCP session's POST, safe to send again); a request without one (the token exchange's
POST) passes through untouched.

>>> stack = compose(httpx.MockTransport(lambda r: httpx.Response(200)), Pieces())
>>> type(stack).__name__
'RetryTransport'
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import httpx

from realtyframes.api._clock import SYSTEM_CLOCK, Clock
from realtyframes.api._constants import RETRY_STATUSES
from realtyframes.api._deprecation import Deprecation, DeprecationRegistry, parse_deprecation
from realtyframes.api._pacer import Pacer
from realtyframes.api._ratelimit import RateLimitState, parse_rate_limit_headers
from realtyframes.api._retry import RetryBudget, RetryPolicy, retryable

logger = logging.getLogger("realtyframes.api")

#: The request extension holding the :class:`Exchange`.
KEY = "realtyframes.exchange"


class Cancelled(Exception):
    """Raised inside a request of ``get_many`` once another request has failed."""


class DeadlinePassed(Exception):
    """The deadline of the whole call passed before this request was sent."""


class TransientAnswer(Exception):
    """A 2xx answer that is not the one asked for (``cause``: a ``BrokenBody`` or a
    ``ResponseMismatchError``): retried, then mapped by :func:`~._errors.error_for`."""

    def __init__(self, cause: Exception, status: int) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.status = status


@dataclass
class Exchange:
    """What the transports need to know about one request, and what they report back."""

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
    wait: float | None = None  # the last answer's wait before a retry (None: the backoff's)
    method: str = "GET"

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
    """A thread-safe :class:`RequestCounts`: ``counts``, the counts so far."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.counts = RequestCounts()

    def sent(self, status: int | None = None) -> None:
        """One attempt went out; ``status``: its answer's status (None: no answer came)."""
        with self._lock:
            done = self.counts
            self.counts = replace(done, requests=done.requests + 1,
                                  throttled=done.throttled + (status == 429))  # fmt: skip

    def retried(self) -> None:
        """A request is attempted again."""
        with self._lock:
            self.counts = replace(self.counts, retries=self.counts.retries + 1)


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
        """Free a slot: every waiter looks again (a waiter with a smaller limit may not use it)."""
        with self._cond:
            self.busy -= 1
            self._cond.notify_all()


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
    """One step over ``inner``: :meth:`step` runs for planned requests, the others pass."""

    def __init__(self, inner: httpx.BaseTransport, pieces: Pieces) -> None:
        self._inner, self._pieces = inner, pieces

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        ex = Exchange.of(request)
        return self._inner.handle_request(request) if ex is None else self.step(request, ex)

    def step(self, request: httpx.Request, ex: Exchange) -> httpx.Response:
        raise NotImplementedError

    def close(self) -> None:
        self._inner.close()


class RetryTransport(_Step):
    """Retries of a planned request (a GET, or a POST its caller planned as safe to send again).
    Gives up by returning the last answer, or raising the last exception, for the engine to map."""

    def step(self, request: httpx.Request, ex: Exchange) -> httpx.Response:
        while True:
            if ex.stopped:
                raise Cancelled()
            ex.attempt += 1
            outcome = self._try(request, ex)
            if isinstance(outcome, httpx.Response) and outcome.is_success:
                return outcome
            if isinstance(outcome, TransientAnswer):
                again, wait_s = True, None
            elif isinstance(outcome, httpx.HTTPError):
                again, wait_s = retryable(outcome), None
            else:
                again, wait_s = outcome.status_code in RETRY_STATUSES, ex.wait
            if not again or ex.attempt > ex.policy.max_retries or not self._wait(ex, wait_s):
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

    def _wait(self, ex: Exchange, wait_s: float | None) -> bool:
        """Wait before the next attempt; False (give up) when the deadline would pass or the
        retry budget is spent; raises :class:`Cancelled` when the call is stopped meanwhile."""
        clock = self._pieces.clock
        wait_s = ex.policy.backoff(ex.attempt - 1, self._pieces.rng) if wait_s is None else wait_s
        if ex.deadline_at is not None and clock.now() + wait_s > ex.deadline_at:
            logger.info("%s %s: giving up, the deadline would pass", ex.method, ex.shown)
            return False
        if ex.budget is not None and not ex.budget.try_spend():
            logger.info("%s %s: giving up, the retry budget (%d) is spent", ex.method, ex.shown,
                        ex.budget.total)  # fmt: skip
            return False
        logger.info("%s %s failed; retry %d/%d in %.2f s", ex.method, ex.shown, ex.attempt,
                    ex.policy.max_retries, wait_s)  # fmt: skip
        if clock.sleep(wait_s, ex.stop):
            raise Cancelled()
        return True


class SlotTransport(_Step):
    """One slot of the client's bounded pool per request on the wire, held until its body is
    read (read here, so a cut body is an httpx error the retry step sees)."""

    def step(self, request: httpx.Request, ex: Exchange) -> httpx.Response:
        slots = self._pieces.slots
        slots.take(ex.limit, ex.stop)
        try:
            response = self._inner.handle_request(request)
            try:
                response.read()
            finally:
                response.close()
            return response
        finally:
            slots.give()


class PacingTransport(_Step):
    """Waits for the host's pacer, sets the attempt's timeout (within the deadline), and tells
    the pacer what the answer said about the quota; notes the server's wait for a retry."""

    def step(self, request: httpx.Request, ex: Exchange) -> httpx.Response:
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
        wait = ex.wait = ex.policy.retry_after(response)
        info = parse_rate_limit_headers(response.headers)
        held = wait if response.status_code in (429, 503) else None
        if held is not None and info is not None:  # a Retry-After wins over remaining and reset
            info = RateLimitState(limit=info.limit, window=info.window, policy=info.policy)
        pacer.release(ticket, info)
        if held is not None:
            pacer.block(held)
        elif response.status_code == 429 and info is not None and info.reset is not None:
            ex.wait = ex.policy.clamp(info.reset)  # no Retry-After: the quota's reset
        return response


class CountingTransport(_Step):
    """Counts every attempt sent (and its status) and logs it at debug level."""

    def step(self, request: httpx.Request, ex: Exchange) -> httpx.Response:
        clock, counter = self._pieces.clock, self._pieces.counter
        sent = clock.now()
        try:
            response = self._inner.handle_request(request)
        except httpx.HTTPError as exc:
            counter.sent()
            logger.debug("%s %s -> %s after %.0f ms (attempt %d)", ex.method, ex.shown,
                         type(exc).__name__, (clock.now() - sent) * 1000, ex.attempt)  # fmt: skip
            raise
        counter.sent(response.status_code)
        logger.debug("%s %s -> %d in %.0f ms (attempt %d)", ex.method, ex.shown, response.status_code,
                     (clock.now() - sent) * 1000, ex.attempt)  # fmt: skip
        return response


class HookTransport(_Step):
    """The caller's httpx event hooks (``request`` / ``response``), once per attempt of every
    request."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        for hook in self._pieces.hooks.get("request", ()):
            hook(request)
        response = self._inner.handle_request(request)
        response.request = request
        for hook in self._pieces.hooks.get("response", ()):
            hook(response)
        return response


def compose(base: httpx.BaseTransport, pieces: Pieces) -> httpx.BaseTransport:
    """The steps over ``base``, the transport that speaks HTTP (outermost first: retry, slot,
    pacing, counting, hooks)."""
    inner = HookTransport(base, pieces) if pieces.hooks else base
    for step in (CountingTransport, PacingTransport, SlotTransport, RetryTransport):
        inner = step(inner, pieces)
    return inner


def compose_all(http: httpx.Client, pieces: Pieces) -> None:
    """Put the steps of :func:`compose` over every transport ``http`` holds (the one made for its
    environment or given, and those mounted). httpx has no public way to wrap them, so this is
    the one place reading its private fields (tests check every transport is composed)."""
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
