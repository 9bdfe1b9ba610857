"""What :class:`~realtyframes.api._http.ApiClient` runs its GETs on: the :class:`Pool` shared with
its copies, :func:`run_many` (results in order, the first failure stopping the others),
:func:`acceptor` (where a 2xx answer is parsed and checked) and the checks of its settings.

>>> run_many([("/a", None), ("/b", None)], lambda i, path, params, stop: path, limit=1,
...          workers=None)
['/a', '/b']
"""

from __future__ import annotations

import functools
import logging
import math
import os
import queue
import random
import ssl
import sys
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent import futures
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

import httpx

from realtyframes._version import __version__
from realtyframes.api._body import BrokenBody, check_body
from realtyframes.api._clock import SYSTEM_CLOCK, Clock
from realtyframes.api._constants import LOOPBACK_MOUNTS, MAX_CONCURRENCY, SERVICE_API_VERSION
from realtyframes.api._retry import RetryPolicy
from realtyframes.api._transports import Pieces, TransientAnswer, compose_all, note_deprecation
from realtyframes.errors import ApiDeprecationWarning, QueryError, ResponseMismatchError

Params = Mapping[str, Any] | None
#: ``send(index, path, params, stop)``: one request of :func:`run_many`, its result.
Send = Callable[[int, str, Params, "threading.Event | None"], Any]
logger = logging.getLogger("realtyframes.api")
USER_AGENT = f"realtyframes/{__version__} httpx/{httpx.__version__}"
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass
class Pool:
    """What a client shares with its ``with_options`` copies: the httpx client (its transports
    composed over ``pieces``), and the worker threads of ``get_many``."""

    http: httpx.Client
    pieces: Pieces
    _workers: ThreadPoolExecutor | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def make(
        cls,
        transport: httpx.BaseTransport | None,
        event_hooks: Mapping[str, list[Callable[..., Any]]] | None,
        clock: Clock | None,
        rng: random.Random | None,
    ) -> Pool:
        """The client's pool: its httpx client, every transport composed with the steps once."""
        pieces = Pieces(clock=clock or SYSTEM_CLOCK, rng=rng or random.Random(),
                        hooks={k: list(v) for k, v in (event_hooks or {}).items()})  # fmt: skip
        http = httpx.Client(
            headers={"Service-Api-Version": SERVICE_API_VERSION, "User-Agent": USER_AGENT},
            transport=transport,
            verify=_ssl_context() if transport is None else True,
            follow_redirects=False,
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=32),
            event_hooks={"response": [note_deprecation(pieces.deprecations)]},
            trust_env=transport is None,
            mounts=dict(LOOPBACK_MOUNTS) if transport is None else None,
        )
        compose_all(http, pieces)
        return cls(http=http, pieces=pieces)

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
        self.http.close()
        if self._workers is not None:
            self._workers.shutdown(wait=False, cancel_futures=True)


def close_unclosed(http: httpx.Client) -> None:
    """Finalizer of a client's connection pool: close it, warning if nobody did."""
    if not http.is_closed:
        warnings.warn(
            "realtyframes client was not closed: use `with rf.Client() as client:` or "
            "client.close() (its connections are closed now)",
            ResourceWarning,
            stacklevel=2,
        )
        http.close()


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """One verifying SSL context per process (building one costs ~80 ms per client)."""
    return httpx.create_ssl_context()


def caller_level() -> int:
    """The ``stacklevel`` (for a warn in the calling function) of the first frame outside the
    package, so a warning points at the user's code."""
    frame = sys._getframe(2)
    level = 2
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    return level


class Notices:
    """Around a call: its deprecation notices warned (from the calling thread) once per
    operation; on a failed call only logged, the warning left to the next successful call."""

    def __init__(self, forget: Callable[[str], None]) -> None:
        self.notices: list[Any] = []
        self.forget = forget

    def __enter__(self) -> list[Any]:
        return self.notices

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        for key, operation, notice in list(self.notices):
            message = notice.message(operation)
            logger.warning(message)
            if kind is None:
                warnings.warn(message, ApiDeprecationWarning, stacklevel=caller_level())
            else:
                self.forget(key)


def normalise_url(name: str, url: str) -> str:
    """A host's URL as the paths are appended to it (QueryError naming ``name`` if it is not)."""
    if not isinstance(url, str) or not url.strip():
        raise QueryError(name, f"expected a URL string, got {url!r}", "an http(s) URL")
    try:
        parsed = httpx.URL(url.strip())
    except (httpx.InvalidURL, TypeError, ValueError):
        raise QueryError(name, f"{url!r} is not a URL", "an http(s) URL") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise QueryError(name, f"{url!r} is not an http(s) URL", "an http(s) URL")
    if parsed.query or parsed.fragment:
        raise QueryError(
            name, "must not carry a query or fragment", "scheme://host[:port][/prefix]"
        )
    text = str(parsed).rstrip("/")
    return text.removesuffix("/v1")  # the paths carry /v1 themselves


def checked_settings(
    *,
    timeout: float | None,
    retry: RetryPolicy,
    max_retries: int | None,
    max_concurrency: int,
    pace: bool,
    error_format: str,
) -> dict[str, Any]:
    """The client's request settings, each checked (QueryError naming it)."""
    if timeout is not None and (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise QueryError("timeout", f"{timeout!r} is not a positive number", "seconds > 0, or None")
    if (
        isinstance(max_concurrency, bool)
        or not isinstance(max_concurrency, int)
        or not 1 <= max_concurrency <= MAX_CONCURRENCY
    ):
        raise QueryError("max_concurrency", f"{max_concurrency!r} is not allowed",
                         f"an int from 1 to {MAX_CONCURRENCY}")  # fmt: skip
    if max_retries is not None:
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise QueryError("max_retries", f"{max_retries!r} is not allowed", "an int >= 0")
        retry = replace(retry, max_retries=max_retries)
    if error_format not in ("json", "problem"):
        raise QueryError("error_format", f"unknown value {error_format!r}", ["json", "problem"])
    return {"timeout": timeout, "retry": retry, "max_concurrency": max_concurrency,
            "pace": pace, "error_format": error_format}  # fmt: skip


def run_many(
    jobs: Sequence[tuple[str, Params]],
    send: Send,
    *,
    limit: int,
    workers: Callable[[], ThreadPoolExecutor] | None,
    on_result: Callable[[int, Any], None] | None = None,
) -> list[Any]:
    """``send`` each job, up to ``limit`` at once on ``workers``; results in order.

    One at a time runs in the calling thread. Otherwise up to ``limit`` runners take the jobs in
    order from one queue, and results come back through another as each completes
    (``on_result(index, result)`` in the calling thread); the first failure stops the others (at
    their next job, slot, pace or wait: ``send`` gets the ``stop`` event) and is raised once they
    have (a Ctrl-C at once). Threads only: works inside a running event loop.
    """
    results: list[Any] = [None] * len(jobs)
    if min(limit, len(jobs)) <= 1 or workers is None:
        for index, (path, params) in enumerate(jobs):
            results[index] = send(index, path, params, None)
            if on_result is not None:
                on_result(index, results[index])
        return results
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
                result = send(index, path, params, stop)
            except BaseException as exc:  # stops the others, handed to the calling thread
                stop.set()
                done.put((index, None, exc))
                return
            done.put((index, result, None))

    runners = [workers().submit(runner) for _ in range(min(limit, len(jobs)))]
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
    return results


def acceptor(
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
