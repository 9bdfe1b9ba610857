"""The request engine that :class:`~realtyframes.api._http.ApiClient` holds: one GET with pacing,
retries, deadlines and typed errors (``_send``, ``get_one``), many of them on a thread pool fed
back through a completion queue (``get_many``), bodies checked inside the retry loop
(:mod:`._body`), deprecation notices. An :class:`Engine` owns its settings (hosts, auth, retry
policy, pacing, timeout, concurrency, error format) and uses the connection pool it is given
(:class:`_Shared`, owned by the client and shared with its ``with_options`` copies).

>>> engine = api.engine  # doctest: +SKIP
>>> engine.get_one("/v1/me", None, "base", raw=False)  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import os
import random
import sys
import threading
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import httpx

from realtyframes.api._auth import ShownURL, mask_text
from realtyframes.api._body import BrokenBody, check_body
from realtyframes.api._constants import (
    HOSTS,
    JSON,
    PROBLEM_JSON,
)
from realtyframes.api._counts import RequestCounter
from realtyframes.api._deprecation import Deprecation, DeprecationRegistry, parse_deprecation
from realtyframes.api._errors import error_from_response, explain_401
from realtyframes.api._pacer import Pacer
from realtyframes.api._ratelimit import RateLimitInfo, parse_rate_limit_headers
from realtyframes.api._retry import RetryBudget, RetryPolicy, _should_retry
from realtyframes.errors import (
    ApiDeprecationWarning,
    ApiError,
    BadResponseError,
    ConnectError,
    QueryError,
    RealtyFramesError,
    RequestTimeoutError,
    ResponseMismatchError,
    TransportError,
)

logger = logging.getLogger("realtyframes.api")

T = TypeVar("T")
#: The hosts of the service (design.md): base, auth, legacy and the documentation host.
Host = Literal["base", "auth", "legacy", "docs"]
Params = Mapping[str, Any] | None


class _Cancelled(Exception):
    """Raised inside a worker of ``get_many`` once another request has failed."""


@dataclass
class _Shared:
    """State shared by an ``ApiClient`` and its ``with_options`` copies."""

    http: httpx.Client
    pacers: dict[str, Pacer] = field(default_factory=dict)
    deprecations: DeprecationRegistry = field(default_factory=DeprecationRegistry)
    lock: threading.Lock = field(default_factory=threading.Lock)
    closed: bool = False
    counter: RequestCounter = field(default_factory=RequestCounter)  # for the run history


def _caller_level() -> int:
    """The ``stacklevel`` (for a warn in the calling function) of the first frame outside the
    package, so a warning points at the user's code."""
    frame = sys._getframe(2)
    level = 2
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    return level


def _short(error: Exception) -> str:
    if isinstance(error, ApiError):
        return f"{error.status} {error.code}"
    return type(error).__name__


class Engine:
    """GETs with pacing, retries and typed errors over the connection pool ``shared``.

    ``hosts``: URL by host name; ``base_auth`` / ``legacy_auth``: how the main and the legacy
    host are signed in to; ``secrets``: the texts masked everywhere; ``auth_kind``: what a 401
    means. The settings (``timeout``, ``retry``, ``max_concurrency``, ``pace``,
    ``error_format``) are checked by the client; :meth:`configured` gives a copy with others.
    """

    def __init__(
        self,
        shared: _Shared,
        hosts: Mapping[str, str],
        *,
        base_auth: httpx.Auth | None,
        legacy_auth: httpx.Auth | None,
        secrets: tuple[str, ...],
        auth_kind: str,
        rng: random.Random,
        timeout: float | None,
        retry: RetryPolicy,
        max_concurrency: int,
        pace: bool,
        error_format: str,
    ) -> None:
        self._shared = shared
        self._hosts = dict(hosts)
        self._base_auth, self._legacy_auth = base_auth, legacy_auth
        self._secrets, self._auth_kind, self._rng = secrets, auth_kind, rng
        self.timeout, self.retry, self.max_concurrency = timeout, retry, max_concurrency
        self.pace, self.error_format = pace, error_format

    def configured(self, **settings: Any) -> Engine:
        """A copy on the same pool with other settings (``timeout``, ``retry`` ...)."""
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__)
        for name, value in settings.items():
            if name not in ("timeout", "retry", "max_concurrency", "pace", "error_format"):
                raise TypeError(f"not a setting of the engine: {name}")
            setattr(copy, name, value)
        return copy

    @property
    def http(self) -> httpx.Client:
        """The connection pool (other methods than GET: the MCP sessions)."""
        return self._shared.http

    @property
    def closed(self) -> bool:
        """True once the client owning the pool closed it."""
        return self._shared.closed

    @property
    def secrets(self) -> tuple[str, ...]:
        """The texts masked in every message (token, API key, passwords in host URLs)."""
        return self._secrets

    def mask(self, text: str) -> str:
        """``text`` with this client's secrets (and secret query values) masked."""
        return mask_text(text, self._secrets)

    def get_many(
        self,
        requests: Sequence[tuple[str, Params]],
        *,
        raw: bool = False,
        host: Host = "base",
        parse: Callable[[bytes], T] | None = None,
        budget: RetryBudget | None = None,
        on_result: Callable[[int, Any], None] | None = None,
        deadline: float | None = None,
        check: Callable[[int, Any], None] | None = None,
    ) -> list[Any]:
        """GET many ``(path, params)`` concurrently (up to ``max_concurrency``); results in order.

        ``raw=True`` gives bodies as bytes; ``parse`` (implies raw) turns each body into a result
        in the worker thread, and a ``ValueError`` it raises counts as a broken body (retried).
        All requests share the client's rate budget and one retry budget (``budget``, by default
        ``retry.budget(len(requests))``). ``on_result(index, result)`` runs in the calling thread
        as each one arrives (progress bars). ``deadline`` (seconds) bounds the whole call: no
        attempt starts and no retry waits past it. ``check(index, result)`` runs in the worker
        after ``parse`` and raises :class:`~realtyframes.errors.ResponseMismatchError` when the
        answer is not one to request ``index`` (an echoed offset, a detail's id): retried like a
        broken body, then raised. The first request that fails for good stops the others and
        its typed error is raised. Threads only: works inside a running event loop.

        >>> api.get_many([("/v1/listings", {"Offset": str(o), "Limit": "50"}) for o in (0, 50)])  # doctest: +SKIP
        [{...}, {...}]
        """
        jobs = [(path, params) for path, params in requests]
        if not jobs:
            return []
        budget = budget if budget is not None else self.retry.budget(len(jobs))
        if deadline is not None and not deadline > 0:
            raise QueryError("deadline", f"{deadline!r} is not positive", "seconds > 0, or None")
        load_deadline = time.monotonic() + deadline if deadline is not None else None
        raw = raw or parse is not None
        notices: list[tuple[str, str, Deprecation]] = []
        results: list[Any] = [None] * len(jobs)
        workers = min(self.max_concurrency, len(jobs))
        if workers == 1:
            try:
                for index, (path, params) in enumerate(jobs):
                    results[index] = self._send(
                        path, params, host,
                        raw=raw, parse=parse, budget=budget, stop=None, notices=notices,
                        load_deadline=load_deadline, check=_bound(check, index),
                    )  # fmt: skip
                    if on_result is not None:
                        on_result(index, results[index])
            except BaseException:
                self._emit(notices, warn=False)
                raise
            self._emit(notices)
            return results

        try:
            self._many_in_threads(jobs, workers, results, on_result, check, host=host, raw=raw,
                                  parse=parse, budget=budget, notices=notices,
                                  load_deadline=load_deadline)  # fmt: skip
        except BaseException:
            self._emit(notices, warn=False)
            raise
        self._emit(notices)
        return results

    def get_one(
        self,
        path: str,
        params: Params,
        host: str,
        *,
        raw: bool,
        check: Callable[[Any], None] | None = None,
    ) -> Any:
        """One GET (decoded JSON, or the raw body with ``raw``), its deprecation notice warned."""
        notices: list[tuple[str, str, Deprecation]] = []
        try:
            result = self._send(
                path, params, host, raw=raw, parse=None, budget=None, stop=None, notices=notices,
                check=check,
            )  # fmt: skip
        except BaseException:
            self._emit(notices, warn=False)
            raise
        self._emit(notices)
        return result

    def _many_in_threads(
        self,
        jobs: Sequence[tuple[str, Params]],
        workers: int,
        results: list[Any],
        on_result: Callable[[int, Any], None] | None,
        check: Callable[[int, Any], None] | None,
        **send: Any,
    ) -> None:
        """``get_many``'s pool: results land in ``results`` as each completes (a completion queue,
        ``as_completed``: no rescan of the pending set per answer); the first failure stops the
        others and is raised."""
        stop = threading.Event()
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="realtyframes-api")
        try:
            futures = {
                pool.submit(
                    self._send, path, params, stop=stop, check=_bound(check, index), **send
                ): index
                for index, (path, params) in enumerate(jobs)
            }
            for future in as_completed(futures):
                error = future.exception()
                if error is not None:
                    stop.set()
                    raise error
                index = futures[future]
                results[index] = future.result()
                if on_result is not None:
                    on_result(index, results[index])
        except BaseException:
            stop.set()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)

    # -- the request engine --------------------------------------------------------------------
    def pacer(self, host: str) -> Pacer:
        """The pacer of ``host``, shared by every thread and copy of the client."""
        pacer = self._shared.pacers.get(host)
        if pacer is None:
            with self._shared.lock:
                pacer = self._shared.pacers.setdefault(host, Pacer())
        return pacer

    def auth_for(self, host: str) -> httpx.Auth | None:
        """How requests to ``host`` are signed in (None: no credentials for it)."""
        if host == "base":
            return self._base_auth
        if host == "legacy":
            return self._legacy_auth
        return None

    def _headers(self) -> dict[str, str]:
        if self.error_format == "problem":
            return {"Accept": f"{PROBLEM_JSON}, {JSON};q=0.9"}
        return {"Accept": JSON}

    def _url(self, host: str, path: str) -> str:
        if host not in HOSTS:
            raise QueryError("host", f"unknown host {host!r}", HOSTS)
        if not isinstance(path, str) or not path.startswith("/"):
            raise QueryError(
                "path", f"{path!r} must start with '/'", "an absolute path such as /v1/me"
            )
        return self._hosts[host] + path

    def _shown_url(self, url: str, params: Params) -> ShownURL:
        return ShownURL(url, params, self._secrets)

    def _send(
        self,
        path: str,
        params: Params,
        host: str,
        *,
        raw: bool,
        parse: Callable[[bytes], Any] | None,
        budget: RetryBudget | None,
        stop: threading.Event | None,
        notices: list[tuple[str, str, Deprecation]],
        load_deadline: float | None = None,
        check: Callable[[Any], None] | None = None,
    ) -> Any:
        if self._shared.closed:
            raise RuntimeError("this client is closed")
        url = self._url(host, path)
        shown = self._shown_url(url, params)
        query = dict(params) if params else None
        policy = self.retry
        pacer = self.pacer(host)
        auth = self.auth_for(host)
        started = time.monotonic()
        deadline_at = started + policy.deadline if policy.deadline is not None else None
        if load_deadline is not None:
            deadline_at = load_deadline if deadline_at is None else min(deadline_at, load_deadline)
        attempt = 0
        while True:
            if stop is not None and stop.is_set():
                raise _Cancelled()
            ticket = pacer.acquire(stop, pace=self.pace)
            if stop is not None and stop.is_set():
                pacer.cancel(ticket)
                raise _Cancelled()
            if load_deadline is not None and time.monotonic() >= load_deadline:
                pacer.cancel(ticket)
                raise RequestTimeoutError(
                    "the deadline of the whole call passed before this request was sent",
                    method="GET",
                    url=str(shown),
                )
            timeout = self.timeout
            if deadline_at is not None:
                left = max(0.001, deadline_at - time.monotonic())
                timeout = left if timeout is None else min(timeout, left)
            sent = time.monotonic()
            error: RealtyFramesError
            wait_s: float | None = None
            try:
                response = self._shared.http.get(
                    url, params=query, headers=self._headers(), auth=auth, timeout=timeout
                )
            except httpx.HTTPError as exc:
                self._shared.counter.sent()
                pacer.cancel(ticket)
                error = self._transport_error(exc, str(shown))
                retryable = _should_retry("GET", exc=exc) or isinstance(exc, httpx.DecodingError)
                logger.debug("GET %s -> %s after %.0f ms (attempt %d)", shown, type(exc).__name__,
                             (time.monotonic() - sent) * 1000, attempt + 1)  # fmt: skip
            else:
                self._shared.counter.sent(response.status_code)
                pacer.release(ticket, self._rate_info(response))
                self._note_deprecation(response, host, path, notices)
                logger.debug("GET %s -> %d in %.0f ms (attempt %d)", shown, response.status_code,
                             (time.monotonic() - sent) * 1000, attempt + 1)  # fmt: skip
                if 200 <= response.status_code < 300:
                    try:
                        result = check_body(response.content, raw=raw, parse=parse)
                        if check is not None:
                            check(result)
                        return result
                    except BrokenBody as exc:
                        error = BadResponseError(
                            self.mask(f"{response.status_code} answer with a broken body: {exc}"),
                            method="GET",
                            url=str(shown),
                        )
                        retryable = True
                    except ResponseMismatchError as exc:  # another request's answer: retried
                        error = exc.at("GET", str(shown), self.mask(exc.message))
                        retryable = True
                else:
                    error, retryable, wait_s = self._refused(response, shown, pacer)
            if not retryable or attempt >= policy.max_retries:
                raise error
            attempt += 1
            self._before_retry(error, attempt, wait_s, deadline_at, budget, shown, stop)
            self._shared.counter.retried()

    def _before_retry(
        self,
        error: RealtyFramesError,
        attempt: int,
        wait_s: float | None,
        deadline_at: float | None,
        budget: RetryBudget | None,
        shown: ShownURL,
        stop: threading.Event | None,
    ) -> None:
        """Wait before retry ``attempt`` (the server's wait, else the backoff), or raise
        ``error`` when the deadline would pass or the retry budget is spent."""
        policy = self.retry
        if wait_s is None:
            wait_s = policy.backoff(attempt - 1, self._rng)
        if deadline_at is not None and time.monotonic() + wait_s > deadline_at:
            logger.info(
                "GET %s: giving up, the deadline of %g s would pass", shown, policy.deadline
            )
            raise error
        if budget is not None and not budget.try_spend():
            logger.info("GET %s: giving up, the retry budget (%d) is spent", shown, budget.total)
            raise error
        logger.info("GET %s failed (%s); retry %d/%d in %.2f s", shown, _short(error),
                    attempt, policy.max_retries, wait_s)  # fmt: skip
        if stop is not None:
            if stop.wait(wait_s):
                raise _Cancelled()
        elif wait_s > 0:
            time.sleep(wait_s)

    def _rate_info(self, response: httpx.Response) -> RateLimitInfo | None:
        """The answer's quota headers for the pacer; a Retry-After on a 429 / 503 wins over the
        quota headers of the same answer (its remaining count and reset are dropped)."""
        info = parse_rate_limit_headers(response.headers)
        retry_after = self.retry.retry_after(response)
        if retry_after is not None and response.status_code in (429, 503) and info is not None:
            info = RateLimitInfo(limit=info.limit, window=info.window, policy=info.policy)
        return info

    def _refused(
        self, response: httpx.Response, shown: ShownURL, pacer: Pacer
    ) -> tuple[RealtyFramesError, bool, float | None]:
        """A non-2xx answer: its typed error, whether to retry, and how long to wait first
        (Retry-After, or the quota's reset on a 429; the pacer is blocked meanwhile)."""
        status = response.status_code
        policy = self.retry
        error = explain_401(
            error_from_response(response, method="GET", url=str(shown), secrets=self._secrets),
            self._auth_kind,
        )
        retry_after = policy.retry_after(response)
        info = parse_rate_limit_headers(response.headers)
        wait_s: float | None = None
        if retry_after is not None:
            wait_s = retry_after
            if status in (429, 503):
                pacer.block(retry_after)
        elif status == 429 and info is not None and info.reset is not None:
            wait_s = min(policy.retry_after_cap, max(policy.retry_after_floor, info.reset))
        return error, _should_retry("GET", status), wait_s

    def _transport_error(self, exc: httpx.HTTPError, shown: str) -> TransportError:
        text = self.mask(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
        if isinstance(exc, httpx.TimeoutException):
            return RequestTimeoutError(f"timed out ({text})", method="GET", url=shown)
        if isinstance(exc, httpx.NetworkError | httpx.RemoteProtocolError):
            return ConnectError(f"connection failed ({text})", method="GET", url=shown)
        if isinstance(exc, httpx.DecodingError):
            return BadResponseError(f"undecodable body ({text})", method="GET", url=shown)
        return TransportError(text, method="GET", url=shown)

    def _note_deprecation(
        self,
        response: httpx.Response,
        host: str,
        path: str,
        notices: list[tuple[str, str, Deprecation]],
    ) -> None:
        if "deprecation" not in response.headers:
            return
        notice = parse_deprecation(response.headers)
        operation = f"GET {path}" if host == "base" else f"GET {path} ({host} host)"
        key = f"{host} {path}"
        if notice is not None and self._shared.deprecations.first_time(key):
            notices.append((key, operation, notice))

    def _emit(self, notices: list[tuple[str, str, Deprecation]], *, warn: bool = True) -> None:
        """Warn (from the calling thread) once per operation; on a failed call only log, and
        leave the warning to the next successful call."""
        for key, operation, notice in list(notices):
            message = notice.message(operation)
            logger.warning(message)
            if warn:
                warnings.warn(message, ApiDeprecationWarning, stacklevel=_caller_level())
            else:
                self._shared.deprecations.forget(key)


def _bound(check: Callable[[int, Any], None] | None, index: int) -> Callable[[Any], None] | None:
    """``check`` of request ``index`` (``get_many``'s per-request answer check)."""
    if check is None:
        return None
    return lambda result: check(index, result)


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
