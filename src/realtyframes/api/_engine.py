"""The request engine that :class:`~realtyframes.api._http.ApiClient` holds: it plans each GET
(URL, headers, sign-in, deadline, how its answer is parsed), hands it to the client's httpx
client, whose transports (:mod:`._transports`) retry, pace, count and bound it, and maps a failure
to its typed error (:func:`~._errors.error_for`). ``get_many`` runs many GETs on the client's one
worker pool, results in order. An :class:`Engine` owns its settings (hosts, auth, retry policy,
pacing, timeout, concurrency, error format) and shares its :class:`Pool` (the httpx client,
pacers, slots, counters, workers) with its ``with_options`` copies.

>>> engine = api.engine  # doctest: +SKIP
>>> engine.get_one("/v1/me", None, "base", raw=False)  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import os
import queue
import sys
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent import futures
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import httpx

from realtyframes.api._auth import ShownURL, mask_text
from realtyframes.api._body import BrokenBody, check_body
from realtyframes.api._constants import HOSTS, JSON, MAX_CONCURRENCY, PROBLEM_JSON
from realtyframes.api._deprecation import Deprecation
from realtyframes.api._errors import error_for
from realtyframes.api._exchange import KEY, Cancelled, DeadlinePassed, Exchange, TransientAnswer
from realtyframes.api._pacer import Pacer
from realtyframes.api._retry import RetryBudget, RetryPolicy
from realtyframes.api._transports import Pieces
from realtyframes.errors import ApiDeprecationWarning, QueryError, ResponseMismatchError

logger = logging.getLogger("realtyframes.api")

T = TypeVar("T")
#: The hosts of the service (design.md): base, auth, legacy and the documentation host.
Host = Literal["base", "auth", "legacy", "docs"]
Params = Mapping[str, Any] | None
Notices = list[tuple[str, str, Deprecation]]


@dataclass
class Pool:
    """What a client shares with its ``with_options`` copies: the httpx client (its transports
    composed over ``pieces``), and the worker threads of ``get_many``."""

    http: httpx.Client
    pieces: Pieces
    closed: bool = False
    _workers: ThreadPoolExecutor | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def workers(self) -> ThreadPoolExecutor:
        """The client's worker threads (made on first use; requests in flight are bounded by
        the slots, whatever the threads)."""
        with self._lock:
            if self._workers is None:
                self._workers = ThreadPoolExecutor(
                    MAX_CONCURRENCY, thread_name_prefix="realtyframes-api"
                )
            return self._workers

    def close(self) -> None:
        self.closed = True
        self.http.close()
        if self._workers is not None:
            self._workers.shutdown(wait=False, cancel_futures=True)


def _caller_level() -> int:
    """The ``stacklevel`` (for a warn in the calling function) of the first frame outside the
    package, so a warning points at the user's code."""
    frame = sys._getframe(2)
    level = 2
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    return level


class Engine:
    """GETs planned for the transports of the pool ``pool``, failures mapped to typed errors.

    ``hosts``: URL by host name; ``base_auth`` / ``legacy_auth``: how the main and the legacy
    host are signed in to; ``secrets``: the texts masked everywhere; ``auth_kind``: what a 401
    means. The settings (``timeout``, ``retry``, ``max_concurrency``, ``pace``,
    ``error_format``) are checked by the client; :meth:`configured` gives a copy with others.
    """

    def __init__(
        self,
        pool: Pool,
        hosts: Mapping[str, str],
        *,
        base_auth: httpx.Auth | None,
        legacy_auth: httpx.Auth | None,
        secrets: tuple[str, ...],
        auth_kind: str,
        timeout: float | None,
        retry: RetryPolicy,
        max_concurrency: int,
        pace: bool,
        error_format: str,
    ) -> None:
        self._pool = pool
        self._hosts = dict(hosts)
        self._base_auth, self._legacy_auth = base_auth, legacy_auth
        self._secrets, self._auth_kind = secrets, auth_kind
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
        """The httpx client (other methods than GET: the MCP sessions)."""
        return self._pool.http

    @property
    def closed(self) -> bool:
        """True once the client owning the pool closed it."""
        return self._pool.closed

    @property
    def secrets(self) -> tuple[str, ...]:
        """The texts masked in every message (token, API key, passwords in host URLs)."""
        return self._secrets

    def mask(self, text: str) -> str:
        """``text`` with this client's secrets (and secret query values) masked."""
        return mask_text(text, self._secrets)

    def pacer(self, host: str) -> Pacer:
        """The pacer of ``host``, shared by every thread and copy of the client."""
        return self._pool.pieces.pacer(host)

    def auth_for(self, host: str) -> httpx.Auth | None:
        """How requests to ``host`` are signed in (None: no credentials for it)."""
        if host == "base":
            return self._base_auth
        if host == "legacy":
            return self._legacy_auth
        return None

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
        notices: Notices = []
        try:
            result = self._send(path, params, host, raw=raw, parse=None, budget=None, stop=None,
                                notices=notices, check=check)  # fmt: skip
        except BaseException:
            self._emit(notices, warn=False)
            raise
        self._emit(notices)
        return result

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
        All requests share the client's rate budget, its slots (one bounded pool per client,
        shared with its copies and the sync's change feed) and one retry budget (``budget``, by
        default ``retry.budget(len(requests))``). ``on_result(index, result)`` runs in the calling
        thread as each one arrives (progress bars). ``deadline`` (seconds) bounds the whole call:
        no attempt starts and no retry waits past it. ``check(index, result)`` runs in the worker
        after ``parse`` and raises :class:`~realtyframes.errors.ResponseMismatchError` when the
        answer is not one to request ``index`` (an echoed offset, a detail's id): retried like a
        broken body, then raised. The first request that fails for good stops the others and
        its typed error is raised. Threads only: works inside a running event loop.

        >>> api.get_many([("/v1/listings", {"Offset": str(o), "Limit": "50"}) for o in (0, 50)])  # doctest: +SKIP
        [{...}, {...}]
        """
        jobs = list(requests)
        if not jobs:
            return []
        if deadline is not None and not deadline > 0:
            raise QueryError("deadline", f"{deadline!r} is not positive", "seconds > 0, or None")
        notices: Notices = []
        send: dict[str, Any] = {
            "host": host,
            "raw": raw or parse is not None,
            "parse": parse,
            "budget": budget if budget is not None else self.retry.budget(len(jobs)),
            "notices": notices,
            "load_deadline": None if deadline is None else self._pool.pieces.clock.now() + deadline,
        }
        results: list[Any] = [None] * len(jobs)
        try:
            if min(self.max_concurrency, len(jobs)) == 1:
                for index, (path, params) in enumerate(jobs):
                    results[index] = self._send(path, params, stop=None,
                                                check=_bound(check, index), **send)  # fmt: skip
                    if on_result is not None:
                        on_result(index, results[index])
            else:
                self._in_workers(jobs, results, on_result, check, send)
        except BaseException:
            self._emit(notices, warn=False)
            raise
        self._emit(notices)
        return results

    def _in_workers(
        self,
        jobs: Sequence[tuple[str, Params]],
        results: list[Any],
        on_result: Callable[[int, Any], None] | None,
        check: Callable[[int, Any], None] | None,
        send: dict[str, Any],
    ) -> None:
        """``get_many`` on the pool's workers: up to ``max_concurrency`` runners take the jobs in
        order from one queue; results come back through another as each completes; the first
        failure stops the others (at their next job, slot, pace or wait) and is raised once
        they have (a Ctrl-C is raised at once)."""
        stop = threading.Event()
        todo = iter(enumerate(jobs))
        take = threading.Lock()
        done: queue.SimpleQueue[tuple[int, Any, BaseException | None]] = queue.SimpleQueue()

        def runner() -> None:
            while not stop.is_set():
                with take:
                    job = next(todo, None)
                if job is None:
                    return
                index, (path, params) = job
                try:
                    result = self._send(path, params, stop=stop, check=_bound(check, index),
                                        **send)  # fmt: skip
                except BaseException as exc:  # stops the others, handed to the calling thread
                    stop.set()
                    done.put((index, None, exc))
                    return
                done.put((index, result, None))

        workers = self._pool.workers()
        runners = [workers.submit(runner) for _ in range(min(self.max_concurrency, len(jobs)))]
        try:
            for _ in range(len(jobs)):
                index, result, error = done.get()
                if error is not None:
                    raise error
                results[index] = result
                if on_result is not None:
                    on_result(index, result)
        except Exception:
            stop.set()  # the runners stop at their next job, slot, pace or wait
            for future in runners:
                future.cancel()
            futures.wait(runners)  # nothing of a failed call outlives it
            raise
        finally:
            stop.set()

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
        notices: Notices,
        load_deadline: float | None = None,
        check: Callable[[Any], None] | None = None,
    ) -> Any:
        """One planned GET through the transports; its result, or its typed error."""
        if self._pool.closed:
            raise RuntimeError("this client is closed")
        url = self._url(host, path)
        shown = str(ShownURL(url, params, self._secrets))
        ex = self._plan(host, path, shown, budget, stop, load_deadline)
        ex.accept = _acceptor(raw, parse, check)
        try:
            response = self._pool.http.get(
                url,
                params=dict(params) if params else None,
                headers=self._headers(),
                auth=self.auth_for(host),  # type: ignore[arg-type]
                extensions={KEY: ex},
            )
        except (httpx.HTTPError, TransientAnswer, DeadlinePassed) as exc:
            raise self._error(exc, shown) from None
        finally:
            notices.extend(ex.notices)
        if not response.is_success:
            raise self._error(response, shown)
        return ex.result

    def _plan(
        self,
        host: str,
        path: str,
        shown: str,
        budget: RetryBudget | None,
        stop: threading.Event | None,
        load_deadline: float | None,
    ) -> Exchange:
        deadline_at = None
        if self.retry.deadline is not None:
            deadline_at = self._pool.pieces.clock.now() + self.retry.deadline
        if load_deadline is not None:
            deadline_at = load_deadline if deadline_at is None else min(deadline_at, load_deadline)
        return Exchange(host=host, shown=shown, pace=self.pace, limit=self.max_concurrency,
                        policy=self.retry, budget=budget, stop=stop, deadline_at=deadline_at,
                        load_deadline=load_deadline, timeout=self.timeout, path=path)  # fmt: skip

    def _error(self, failure: httpx.Response | BaseException, shown: str) -> Exception:
        return error_for(failure, url=shown, secrets=self._secrets, auth_kind=self._auth_kind)

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

    def _emit(self, notices: Notices, *, warn: bool = True) -> None:
        """Warn (from the calling thread) once per operation; on a failed call only log, and
        leave the warning to the next successful call."""
        for key, operation, notice in list(notices):
            message = notice.message(operation)
            logger.warning(message)
            if warn:
                warnings.warn(message, ApiDeprecationWarning, stacklevel=_caller_level())
            else:
                self._pool.pieces.deprecations.forget(key)


def _acceptor(
    raw: bool, parse: Callable[[bytes], Any] | None, check: Callable[[Any], None] | None
) -> Callable[[httpx.Response], Any]:
    """Where a 2xx answer is parsed and checked: its result, or :class:`TransientAnswer` for a
    broken body or another request's answer (the retry step retries it)."""

    def accept(response: httpx.Response) -> Any:
        try:
            result = check_body(response.content, raw=raw, parse=parse)
            if check is not None:
                check(result)
            return result
        except (BrokenBody, ResponseMismatchError) as exc:
            raise TransientAnswer(exc, response.status_code) from None

    return accept


def _bound(check: Callable[[int, Any], None] | None, index: int) -> Callable[[Any], None] | None:
    """``check`` of request ``index`` (``get_many``'s per-request answer check)."""
    if check is None:
        return None
    return lambda result: check(index, result)


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
__all__ = ["Cancelled", "Engine", "Host", "Pool"]
