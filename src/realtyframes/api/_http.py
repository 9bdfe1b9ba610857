"""``ApiClient``: hosts, auth, retries, pacing, concurrency, deprecation and masked logging.

Every loader goes through three calls: :meth:`ApiClient.get_json`, :meth:`ApiClient.get_bytes`
(the raw body, for pyarrow) and :meth:`ApiClient.get_many` (pages fetched concurrently, in order,
inside the client's rate budget and one retry budget).

>>> from realtyframes.sandbox import serve  # doctest: +SKIP
>>> with serve() as url, ApiClient(url) as api:  # doctest: +SKIP
...     api.get_json("/v1/listings", {"Limit": "1"})["limit"]
1
"""

from __future__ import annotations

import functools
import logging
import math
import random
import ssl
import warnings
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

import httpx

from realtyframes._version import __version__
from realtyframes.api._auth import (
    ApiKeyAuth,
    BearerAuth,
    LegacyKeyAuth,
    fingerprint,
    install_log_filter,
)
from realtyframes.api._clock import SYSTEM_CLOCK, Clock
from realtyframes.api._constants import (
    DEFAULT_API_KEY_HEADER,
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_TIMEOUT,
    LOOPBACK_MOUNTS,
    MAX_CONCURRENCY,
    SERVICE_API_VERSION,
)
from realtyframes.api._counts import RequestCounts
from realtyframes.api._engine import Engine, Host, Pool
from realtyframes.api._operations import prepare
from realtyframes.api._ratelimit import (
    RateLimitState,
)
from realtyframes.api._retry import RetryBudget, RetryPolicy
from realtyframes.api._transports import Pieces, compose_all, note_deprecation
from realtyframes.errors import (
    QueryError,
)

logger = logging.getLogger("realtyframes.api")

T = TypeVar("T")
ErrorFormat = Literal["json", "problem"]
Params = Mapping[str, Any] | None

USER_AGENT = f"realtyframes/{__version__} httpx/{httpx.__version__}"


def _close_unclosed(http: httpx.Client) -> None:
    """Finalizer of a client's connection pool: close it, warning if nobody did."""
    if not http.is_closed:
        warnings.warn(
            "realtyframes client was not closed: use `with rf.Client() as client:` or "
            "client.close() (its connections are closed now)",
            ResourceWarning,
            stacklevel=2,
        )
        http.close()


def _normalise_url(name: str, url: str) -> str:
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
    if text.endswith("/v1"):  # the paths carry /v1 themselves
        text = text[: -len("/v1")]
    return text


def _checked_settings(
    *,
    timeout: float | None,
    retry: RetryPolicy,
    max_retries: int | None,
    max_concurrency: int,
    pace: bool,
    error_format: ErrorFormat,
) -> dict[str, Any]:
    """The engine's settings, each checked (QueryError naming it)."""
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
        raise QueryError(
            "max_concurrency",
            f"{max_concurrency!r} is not allowed",
            f"an int from 1 to {MAX_CONCURRENCY}",
        )
    if max_retries is not None:
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise QueryError("max_retries", f"{max_retries!r} is not allowed", "an int >= 0")
        retry = replace(retry, max_retries=max_retries)
    if error_format not in ("json", "problem"):
        raise QueryError("error_format", f"unknown value {error_format!r}", ["json", "problem"])
    return {
        "timeout": timeout,
        "retry": retry,
        "max_concurrency": max_concurrency,
        "pace": pace,
        "error_format": error_format,
    }


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """One verifying SSL context per process (building one costs ~80 ms per client)."""
    return httpx.create_ssl_context()


def _pool(
    transport: httpx.BaseTransport | None,
    event_hooks: Mapping[str, list[Callable[..., Any]]] | None,
    clock: Clock | None,
    rng: random.Random | None,
) -> Pool:
    """The client's pool: its httpx client, every transport composed with the steps once."""
    pieces = Pieces(
        clock=clock or SYSTEM_CLOCK,
        rng=rng or random.Random(),
        hooks={k: list(v) for k, v in (event_hooks or {}).items()},
    )
    headers = {"Service-Api-Version": SERVICE_API_VERSION, "User-Agent": USER_AGENT}
    http = httpx.Client(
        headers=headers,
        transport=transport,
        verify=_ssl_context() if transport is None else True,
        follow_redirects=False,
        limits=httpx.Limits(max_connections=None, max_keepalive_connections=32),
        event_hooks={"response": [note_deprecation(pieces.deprecations)]},
        trust_env=transport is None,
        mounts=dict(LOOPBACK_MOUNTS) if transport is None else None,
    )
    compose_all(http, pieces)
    return Pool(http=http, pieces=pieces)


class ApiClient:
    """The HTTP layer: one per account, thread-safe, reusable across loads.

    Hosts default to ``base_url`` (the embedded sandbox serves all of them). ``token`` is sent as
    a Bearer token; ``api_key`` in ``api_key_header`` on the main host and as the ``api_key`` query
    parameter on the legacy host. ``error_format="problem"`` asks for ``application/problem+json``
    errors. ``retry`` tunes waits (tests shrink them); ``pace=False`` turns client pacing off.
    ``event_hooks`` run once per attempt on the wire. ``clock`` (internal, a test seam): the
    :class:`~realtyframes.api._clock.Clock` of deadlines, waits and pacing; tests pass a fake
    one so no test sleeps.
    It owns the connection pool and holds its request :class:`~realtyframes.api._engine.Engine`
    (:attr:`engine`), which every request goes through.

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
    ) -> None:
        install_log_filter()
        base = _normalise_url("base_url", base_url)
        self._hosts: dict[str, str] = {
            "base": base,
            "auth": _normalise_url("auth_url", auth_url) if auth_url else base,
            "legacy": _normalise_url("legacy_url", legacy_url) if legacy_url else base,
            "docs": _normalise_url("docs_url", docs_url) if docs_url else base,
        }
        base_auth: httpx.Auth | None = None
        legacy_auth: httpx.Auth | None = None
        # a password in a host's URL is a secret like the token (masked in reprs, logs, errors)
        self._secrets: tuple[str, ...] = tuple(
            p for url in self._hosts.values() if (p := urlsplit(url).password)
        )
        if token is not None:
            base_auth = BearerAuth(token)
            self._secrets += (token,)
        if api_key is not None:
            key_auth = ApiKeyAuth(api_key, api_key_header)
            legacy_auth = LegacyKeyAuth(api_key)
            base_auth = base_auth or key_auth
            self._secrets += (api_key,)
        self._has_api_key = api_key is not None
        self._auth_kind = "token" if token is not None else "api_key" if api_key else "none"
        # A stable name for caches when the URL is not (the embedded sandbox's port changes).
        self._cache_identity = cache_identity
        self._fingerprint = fingerprint(
            f"{cache_identity or base}|{self._auth_kind}|{token or api_key or ''}"
        )
        settings = _checked_settings(
            timeout=timeout,
            retry=retry or RetryPolicy(),
            max_retries=max_retries,
            max_concurrency=max_concurrency,
            pace=pace,
            error_format=error_format,
        )
        self._pool = _pool(transport, event_hooks, clock, rng)
        self._owner = True
        self._engine = Engine(
            self._pool,
            self._hosts,
            base_auth=base_auth,
            legacy_auth=legacy_auth,
            secrets=self._secrets,
            auth_kind=self._auth_kind,
            **settings,
        )
        # A client dropped without close() (or `with`) closes its sockets when collected, with a
        # ResourceWarning, like files; not at interpreter exit, where the OS closes them anyway.
        weakref.finalize(self._pool, _close_unclosed, self._pool.http).atexit = False

    # -- public properties ---------------------------------------------------------------------
    @property
    def engine(self) -> Engine:
        """The request engine every request goes through (advanced: other methods than GET on
        the same pool, pacing and sign-in, as the MCP sessions use them)."""
        return self._engine

    @property
    def timeout(self) -> float | None:
        """Seconds for connect/read/write/pool of one attempt (None: no limit)."""
        return self._engine.timeout

    @property
    def retry(self) -> RetryPolicy:
        """The retry policy (waits, retries, deadline)."""
        return self._engine.retry

    @property
    def max_concurrency(self) -> int:
        """Requests of this client in flight at once (its copies and the sync's change feed
        share the same slots)."""
        return self._engine.max_concurrency

    @property
    def pace(self) -> bool:
        """Whether requests are paced to the server's quota."""
        return self._engine.pace

    @property
    def error_format(self) -> ErrorFormat:
        """``"json"`` or ``"problem"`` (``application/problem+json`` errors asked for)."""
        return self._engine.error_format  # type: ignore[return-value]

    @property
    def has_api_key(self) -> bool:
        """True when the client has an API key: the legacy host can be called.

        >>> with ApiClient("http://127.0.0.1:9", token="t") as api:
        ...     api.has_api_key
        False
        """
        return self._has_api_key

    @property
    def base_url(self) -> str:
        """The main host."""
        return self._hosts["base"]

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
    def hosts(self) -> dict[str, str]:
        """All hosts by name (base, auth, legacy, docs)."""
        return dict(self._hosts)

    @property
    def max_retries(self) -> int:
        """Retries of one request."""
        return self.retry.max_retries

    @property
    def auth_kind(self) -> str:
        """``"token"``, ``"api_key"`` or ``"none"``."""
        return self._auth_kind

    @property
    def fingerprint(self) -> str:
        """A short label of host + credential, for cache keys; never the secret itself."""
        return self._fingerprint

    def request_counts(self) -> RequestCounts:
        """HTTP requests sent (every attempt), retries and 429 answers since this connection
        pool was made (shared with ``with_options`` copies); a run keeps the difference.

        >>> before = api.request_counts(); api.call("me"); (api.request_counts() - before).requests  # doctest: +SKIP
        1
        """
        return self._pool.pieces.counter.snapshot()

    @property
    def rate_limit(self) -> RateLimitState | None:
        """The latest limit / remaining / reset the main host reported (None before any)."""
        pacer = self._pool.pieces.pacers.get("base")
        return pacer.state if pacer else None

    # -- copies and lifetime -------------------------------------------------------------------
    def with_options(self, **options: Any) -> ApiClient:
        """A copy with other ``timeout``, ``max_retries``, ``max_concurrency``, ``retry``, ``pace``
        or ``error_format``; it shares the connection pool and the rate budget.

        >>> api = ApiClient("http://127.0.0.1:9")
        >>> api.with_options(timeout=5.0).timeout
        5.0
        >>> api.close()
        """
        allowed = ("timeout", "max_retries", "max_concurrency", "retry", "pace", "error_format")
        unknown = sorted(set(options) - set(allowed))
        if unknown:
            raise QueryError(unknown[0], "not an option of with_options", allowed)
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__)
        copy._owner = False
        copy._engine = self._engine.configured(
            **_checked_settings(
                timeout=options.get("timeout", self.timeout),
                retry=options.get("retry", self.retry),
                max_retries=options.get("max_retries"),
                max_concurrency=options.get("max_concurrency", self.max_concurrency),
                pace=options.get("pace", self.pace),
                error_format=options.get("error_format", self.error_format),
            )
        )
        return copy

    def close(self) -> None:
        """Close the connection pool (copies made by ``with_options`` leave it to the original)."""
        if self._owner and not self._pool.closed:
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
        return self._engine.get_one(path, params, host, raw=False)

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
        return self._engine.get_one(path, params, host, raw=True, check=check)  # type: ignore[no-any-return]

    def call(self, operation: str, params: Params = None, *, raw: bool = False) -> Any:
        """Validate ``params`` for a spec ``operation`` (QueryError before any request), then GET.

        Operations: the names of :data:`realtyframes.api.OPERATIONS` (``listings``, ``listing``,
        ``listing_changes``, ``analytics``, ``contacts``, ``me`` ...).

        >>> api.call("listings", {"City": "Miami", "Limit": 5})["limit"]  # doctest: +SKIP
        5
        """
        prepared = prepare(operation, params)
        host: Host = prepared.host  # type: ignore[assignment]
        if raw:
            return self.get_bytes(prepared.path, prepared.params, host=host)
        return self.get_json(prepared.path, prepared.params, host=host)

    def mask(self, text: str) -> str:
        """``text`` with this client's secrets (and secret query values) masked.

        >>> with ApiClient("http://127.0.0.1:9", api_key="k-123") as api:
        ...     api.mask("key k-123")
        'key ***'
        """
        return self._engine.mask(text)

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
        What each option does: :meth:`Engine.get_many <realtyframes.api._engine.Engine.get_many>`.

        >>> api.get_many([("/v1/listings", {"Offset": str(o), "Limit": "50"}) for o in (0, 50)])  # doctest: +SKIP
        [{...}, {...}]
        """
        return self._engine.get_many(
            requests,
            raw=raw,
            host=host,
            parse=parse,
            budget=budget,
            on_result=on_result,
            deadline=deadline,
            check=check,
        )

    def new_budget(self, requests: int) -> RetryBudget:
        """A retry budget for a load of ``requests`` requests, to share across ``get_many`` calls."""
        return self.retry.budget(requests)


__all__ = ["ApiClient", "RateLimitState"]
