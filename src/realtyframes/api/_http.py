"""``ApiClient``: hosts, auth, retries, pacing, concurrency, deprecation and masked logging.

Each GET (``get_json``, ``get_bytes``, ``get_many``, ``get_pages``; and MCP's ``post``) is planned
here for the transports (:mod:`._transports`: retry, pace, count, bound); a failure becomes its
typed error (:func:`~._errors.error_for`).

>>> from realtyframes.sandbox import serve  # doctest: +SKIP
>>> with serve() as url, ApiClient(url) as api:  # doctest: +SKIP
...     api.get_json("/v1/listings", {"Limit": "1"})["limit"]
1
"""

from __future__ import annotations

import random
import threading
import weakref
from collections.abc import Callable, Generator, Mapping, Sequence
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

import httpx

from realtyframes.api._auth import (
    ApiKeyAuth,
    BearerAuth,
    LegacyKeyAuth,
    ShownURL,
    fingerprint,
    install_log_filter,
    mask_text,
)
from realtyframes.api._clock import Clock
from realtyframes.api._constants import (
    DEFAULT_API_KEY_HEADER,
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_TIMEOUT,
    HOSTS,
    JSON,
    PROBLEM_JSON,
    Host,
)
from realtyframes.api._engine import (
    Notices,
    Params,
    Pool,
    acceptor,
    checked_settings,
    close_unclosed,
    normalise_url,
    run_many,
)
from realtyframes.api._errors import error_for
from realtyframes.api._pacer import Pacer
from realtyframes.api._ratelimit import RateLimitState
from realtyframes.api._retry import RetryBudget, RetryPolicy
from realtyframes.api._transports import (
    KEY,
    DeadlinePassed,
    Exchange,
    RequestCounts,
    TransientAnswer,
)
from realtyframes.errors import QueryError

T = TypeVar("T")
ErrorFormat = Literal["json", "problem"]
_SETTINGS = ("timeout", "max_retries", "max_concurrency", "retry", "pace", "error_format")


class ApiClient:
    """The HTTP layer: one per account, thread-safe, reusable across loads.

    Hosts default to ``base_url`` (the embedded sandbox serves all of them). ``token`` is sent as
    a Bearer token; ``api_key`` in ``api_key_header`` on the main host and as the ``api_key`` query
    parameter on the legacy host. ``error_format="problem"`` asks for ``application/problem+json``
    errors. ``retry`` tunes waits (tests shrink them); ``pace=False`` turns client pacing off.
    ``event_hooks`` run once per attempt on the wire. ``clock``: a test's fake clock (no sleeps).
    ``prepare``: how :meth:`call` validates (the loaders'). Its connection pool is shared with
    its :meth:`with_options` copies.

    >>> api = ApiClient("http://127.0.0.1:9", api_key="k-123")
    >>> api
    ApiClient(base_url='http://127.0.0.1:9', auth='api_key', max_concurrency=4)
    >>> api.close()
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        api_key: str | None = None,
        api_key_header: str = DEFAULT_API_KEY_HEADER,
        legacy_url: str | None = None,
        auth_url: str | None = None,
        docs_url: str | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        max_retries: int | None = None,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
        retry: RetryPolicy | None = None,
        pace: bool = True,
        error_format: ErrorFormat = "json",
        transport: httpx.BaseTransport | None = None,
        event_hooks: Mapping[str, list[Callable[..., Any]]] | None = None,
        rng: random.Random | None = None,
        cache_identity: str | None = None,
        clock: Clock | None = None,
        prepare: Callable[[str, Params], Any] | None = None,
    ) -> None:
        install_log_filter()
        self._prepare = prepare  # the operations' validator (the loaders', above this layer)
        base = normalise_url("base_url", base_url)
        urls = {"auth": auth_url, "legacy": legacy_url, "docs": docs_url}
        self._hosts = {"base": base} | {
            name: normalise_url(f"{name}_url", url) if url else base for name, url in urls.items()
        }
        # a password in a host's URL is a secret like the token (masked in reprs, logs, errors)
        secrets = [p for url in self._hosts.values() if (p := urlsplit(url).password)]
        self._base_auth: httpx.Auth | None = BearerAuth(token) if token is not None else None
        self._legacy_auth: httpx.Auth | None = None
        if api_key is not None:
            key_auth = ApiKeyAuth(api_key, api_key_header)  # checked even beside a token
            self._base_auth = self._base_auth or key_auth
            self._legacy_auth = LegacyKeyAuth(api_key)
        self._secrets = (*secrets, *(s for s in (token, api_key) if s is not None))
        self._auth_kind = "token" if token is not None else "api_key" if api_key else "none"
        # A stable name for caches when the URL is not (the embedded sandbox's port changes).
        self._cache_identity = cache_identity
        self._fingerprint = fingerprint(
            f"{cache_identity or base}|{self._auth_kind}|{token or api_key or ''}"
        )
        self._settings = checked_settings(timeout=timeout, retry=retry or RetryPolicy(),
                                          max_retries=max_retries, max_concurrency=max_concurrency,
                                          pace=pace, error_format=error_format)  # fmt: skip
        self._pool = Pool.make(transport, event_hooks, clock, rng)
        self._owner = True
        # dropped unclosed: closed when collected, with a ResourceWarning (like files)
        weakref.finalize(self._pool, close_unclosed, self._pool.http).atexit = False

    # -- settings and identity -----------------------------------------------------------------
    @property
    def timeout(self) -> float | None:
        """Seconds for connect/read/write/pool of one attempt (None: no limit)."""
        return self._settings["timeout"]  # type: ignore[no-any-return]

    @property
    def retry(self) -> RetryPolicy:
        """The retry policy (waits, retries, deadline)."""
        return self._settings["retry"]  # type: ignore[no-any-return]

    @property
    def max_retries(self) -> int:
        """Retries of one request."""
        return self.retry.max_retries

    @property
    def max_concurrency(self) -> int:
        """Requests of this client in flight at once (its copies and the sync's change feed
        share the same slots)."""
        return self._settings["max_concurrency"]  # type: ignore[no-any-return]

    @property
    def pace(self) -> bool:
        """Whether requests are paced to the server's quota."""
        return self._settings["pace"]  # type: ignore[no-any-return]

    @property
    def error_format(self) -> ErrorFormat:
        """``"json"`` or ``"problem"`` (``application/problem+json`` errors asked for)."""
        return self._settings["error_format"]  # type: ignore[no-any-return]

    @property
    def has_api_key(self) -> bool:
        """True when the client has an API key: the legacy host can be called.

        >>> with ApiClient("http://127.0.0.1:9", token="t") as api:
        ...     api.has_api_key
        False
        """
        return self._legacy_auth is not None

    @property
    def base_url(self) -> str:
        """The main host."""
        return self._hosts["base"]

    @property
    def hosts(self) -> dict[str, str]:
        """All hosts by name (base, auth, legacy, docs)."""
        return dict(self._hosts)

    def cache_host(self, name: Host = "base") -> str:
        """The host's name in cache keys: its URL, or the stable ``cache_identity`` given.

        >>> with ApiClient("https://api.example.com") as api:
        ...     api.cache_host("legacy")
        'https://api.example.com'
        """
        if self._cache_identity is not None:
            return f"{self._cache_identity}#{name}"
        return self._hosts[name]

    @property
    def auth_kind(self) -> str:
        """``"token"``, ``"api_key"`` or ``"none"``."""
        return self._auth_kind

    @property
    def fingerprint(self) -> str:
        """A short label of host + credential, for cache keys; never the secret itself."""
        return self._fingerprint

    @property
    def secrets(self) -> tuple[str, ...]:
        """The texts masked in every message (token, API key, passwords in host URLs)."""
        return self._secrets

    def mask(self, text: str) -> str:
        """``text`` with this client's secrets (and secret query values) masked.

        >>> with ApiClient("http://127.0.0.1:9", api_key="k-123") as api:
        ...     api.mask("key k-123")
        'key ***'
        """
        return mask_text(text, self._secrets)

    # -- the pool, shared with the copies ------------------------------------------------------
    @property
    def http(self) -> httpx.Client:
        """The httpx client (other methods than GET on the same pool: the MCP sessions)."""
        return self._pool.http

    def pacer(self, host: str) -> Pacer:
        """The pacer of ``host``, shared by every thread and copy of the client."""
        return self._pool.pieces.pacer(host)

    def auth_for(self, host: str) -> httpx.Auth | None:
        """How requests to ``host`` are signed in (None: no credentials for it)."""
        return {"base": self._base_auth, "legacy": self._legacy_auth}.get(host)

    def request_counts(self) -> RequestCounts:
        """HTTP requests sent (every attempt), retries and 429 answers since this connection
        pool was made (shared with ``with_options`` copies); a run keeps the difference.

        >>> before = api.request_counts(); api.call("me"); (api.request_counts() - before).requests  # doctest: +SKIP
        1
        """
        return self._pool.pieces.counter.counts

    @property
    def rate_limit(self) -> RateLimitState | None:
        """The latest limit / remaining / reset the main host reported (None before any)."""
        pacer = self._pool.pieces.pacers.get("base")
        return pacer.state if pacer else None

    def with_options(self, **options: Any) -> ApiClient:
        """A copy with other ``timeout``, ``max_retries``, ``max_concurrency``, ``retry``, ``pace``
        or ``error_format``; it shares the connection pool and the rate budget.

        >>> api = ApiClient("http://127.0.0.1:9")
        >>> api.with_options(timeout=5.0).timeout
        5.0
        >>> api.close()
        """
        unknown = sorted(set(options) - set(_SETTINGS))
        if unknown:
            raise QueryError(unknown[0], "not an option of with_options", _SETTINGS)
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__)
        copy._owner = False
        copy._settings = checked_settings(**{"max_retries": None, **self._settings, **options})
        return copy

    def close(self) -> None:
        """Close the connection pool (copies made by ``with_options`` leave it to the original)."""
        if self._owner and not self._pool.http.is_closed:
            self._pool.close()

    def __enter__(self) -> ApiClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return self.mask(
            f"{type(self).__name__}(base_url={self.base_url!r}, auth={self._auth_kind!r}, "
            f"max_concurrency={self.max_concurrency})"
        )

    # -- requests ------------------------------------------------------------------------------
    def get_json(self, path: str, params: Params = None, *, host: Host = "base") -> Any:
        """GET ``path`` on ``host`` and return the decoded JSON body (retried, paced).

        >>> api.get_json("/v1/me")  # doctest: +SKIP
        {'_id': ..., 'plan': 'standard', ...}
        """
        return self.get_one(path, params, host, raw=False)

    def get_bytes(
        self,
        path: str,
        params: Params = None,
        *,
        host: Host = "base",
        check: Callable[[bytes], None] | None = None,
    ) -> bytes:
        """GET ``path`` and return the raw body (checked cheaply to be a whole JSON document).
        ``check(body)`` raises :class:`~realtyframes.errors.ResponseMismatchError` when the body
        answers another request (retried like a broken body, then raised).

        >>> api.get_bytes("/v1/listings", {"Limit": "50"})[:1]  # doctest: +SKIP
        b'{'
        """
        return self.get_one(path, params, host, raw=True, check=check)  # type: ignore[no-any-return]

    def call(self, operation: str, params: Params = None, *, raw: bool = False) -> Any:
        """Validate ``params`` for a spec ``operation`` (``listings``, ``me`` ...) with the
        client's ``prepare`` (QueryError before any request), then GET.

        >>> client.api.call("listings", {"City": "Miami", "Limit": 5})["limit"]  # doctest: +SKIP
        """
        if self._prepare is None:
            raise QueryError("operation", "this ApiClient has no table of operations to check "
                             f"{operation!r} with", "ApiClient(..., prepare=realtyframes.loaders"
                             ".prepare), or the Client's client.api")  # fmt: skip
        prepared = self._prepare(operation, params)
        return self.get_one(prepared.path, prepared.params, prepared.host, raw=raw)

    def get_one(
        self, path: str, params: Params, host: str, *, raw: bool,
        check: Callable[[Any], None] | None = None,
    ) -> Any:  # fmt: skip
        """One GET (decoded JSON, or the raw body with ``raw``), its deprecation notice warned."""
        with self._warning() as notices:
            return self._send(host, path, params, acceptor(raw, None, check), notices)

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
        in the worker (a ``ValueError``: a broken body, retried). All share the client's rate
        budget, slots and one retry budget (``budget``, default ``retry.budget(len(requests))``).
        ``on_result(index, result)`` runs in the calling thread as each arrives; ``deadline``
        (seconds) bounds the whole call; ``check(index, result)`` raises
        :class:`~realtyframes.errors.ResponseMismatchError` for another request's answer
        (retried, then raised). The first failure stops the others and is raised.

        >>> api.get_many([("/v1/listings", {"Offset": "0", "Limit": "50"})])  # doctest: +SKIP
        """
        jobs = list(requests)
        if not jobs:
            return []
        if deadline is not None and not deadline > 0:
            raise QueryError("deadline", f"{deadline!r} is not positive", "seconds > 0, or None")
        budget = budget if budget is not None else self.retry.budget(len(jobs))
        at = None if deadline is None else self._pool.pieces.clock.now() + deadline
        raw = raw or parse is not None
        with self._warning() as notices:

            def send(index: int, path: str, params: Params, stop: threading.Event | None) -> Any:
                bound = None if check is None else lambda result: check(index, result)
                return self._send(host, path, params, acceptor(raw, parse, bound), notices,
                                  budget=budget, stop=stop, load_deadline=at)  # fmt: skip

            return run_many(jobs, send, limit=self.max_concurrency,
                            workers=self._pool.workers, on_result=on_result)  # fmt: skip

    def get_pages(
        self,
        path: str,
        queries: Sequence[Mapping[str, Any]],
        flow: Generator[Sequence[tuple[int, int]], None, None],
        *,
        page_size: int,
        parse: Callable[[bytes], T],
        on_result: Callable[[int, T], None],
        check: Callable[[int, T], None] | None = None,
    ) -> None:
        """The page loop (as httpx runs an auth flow): each batch ``flow`` yields, ``(query
        index, offset)`` pairs, is sent by :meth:`get_many` (one retry budget a batch) as
        ``queries[index]`` with ``Offset`` and ``Limit=page_size``; ``parse``, ``check`` and
        ``on_result`` as there. The flow resumes once its batch is in and plans the next.

        >>> api.get_pages("/v1/listings", [{}], (b for b in [[(0, 0)]]), page_size=50,
        ...               parse=bytes, on_result=print)  # doctest: +SKIP
        """
        size = str(page_size)
        try:
            batch = next(flow)
            while True:
                jobs = [(path, {**queries[i], "Offset": str(o), "Limit": size}) for i, o in batch]
                self.get_many(jobs, parse=parse, on_result=on_result, check=check)
                batch = flow.send(None)
        except StopIteration:
            return
        finally:
            flow.close()

    def new_budget(self, requests: int) -> RetryBudget:
        """A retry budget for a load of ``requests`` requests, to share across ``get_many`` calls."""
        return self.retry.budget(requests)

    def _send(
        self,
        host: str,
        path: str,
        params: Params,
        accept: Callable[[httpx.Response], Any],
        notices: list[Any],
        *,
        budget: RetryBudget | None = None,
        stop: threading.Event | None = None,
        load_deadline: float | None = None,
    ) -> Any:
        """One GET, checked before anything is sent, through the transports: its result, or
        its typed error."""
        if self._pool.http.is_closed:
            raise RuntimeError("this client is closed")
        if host not in HOSTS:
            raise QueryError("host", f"unknown host {host!r}", HOSTS)
        if not isinstance(path, str) or not path.startswith("/"):
            raise QueryError(
                "path", f"{path!r} must start with '/'", "an absolute path such as /v1/me"
            )
        url = self._hosts[host] + path
        ex = self._exchange(host, ShownURL(url, params, self._secrets), load_deadline=load_deadline,
                            budget=budget, stop=stop, accept=accept, path=path, notices=notices)  # fmt: skip
        accepts = f"{PROBLEM_JSON}, {JSON};q=0.9" if self.error_format == "problem" else JSON
        try:
            response = self._pool.http.get(
                url,
                params=dict(params) if params else None,
                headers={"Accept": accepts},
                auth=self.auth_for(host),  # type: ignore[arg-type]
                extensions={KEY: ex},
            )
        except (httpx.HTTPError, TransientAnswer, DeadlinePassed) as exc:
            raise self._error(exc, ex) from None
        if not response.is_success:
            raise self._error(response, ex)
        return ex.result

    def post(self, host: str, url: str, message: Any, **options: Any) -> httpx.Response:
        """POST ``message`` (an MCP session's JSON-RPC, safe to send again) through the transports
        of a GET, paced as ``host``: the last answer (error answers too) or httpx's error."""
        if self._pool.http.is_closed:
            raise RuntimeError("this client is closed")
        ex = self._exchange(host, self.mask(url), method="POST")
        return self._pool.http.post(url, json=message, extensions={KEY: ex}, **options)

    def _exchange(self, host: str, shown: object, **fields: Any) -> Exchange:
        """A request's :class:`Exchange`: this client's pacing, pool, policy and deadlines."""
        deadline_at = load = fields.get("load_deadline")
        if self.retry.deadline is not None:
            at = self._pool.pieces.clock.now() + self.retry.deadline
            deadline_at = at if load is None else min(at, load)
        return Exchange(host=host, shown=shown, pace=self.pace, limit=self.max_concurrency,
                        policy=self.retry, deadline_at=deadline_at, timeout=self.timeout,
                        **fields)  # fmt: skip

    def _error(self, failure: httpx.Response | BaseException, ex: Exchange) -> Exception:
        return error_for(failure, url=str(ex.shown), secrets=self._secrets,
                         auth_kind=self._auth_kind)  # fmt: skip

    def _warning(self) -> Notices:
        return Notices(self._pool.pieces.deprecations.forget)
