"""``rf.Client``: the public face of the toolkit (hosts, credentials, cache settings).

>>> import realtyframes as rf
>>> client = rf.Client()            # no credentials: the embedded sandbox  # doctest: +SKIP
>>> client.me()["plan"]  # doctest: +SKIP
'standard'

Extension point for the loaders: a ``Client`` holds ``self._api`` (the
:class:`~realtyframes.api.ApiClient`, all HTTP goes through it) and ``self._settings`` (a
:class:`ClientSettings`: cache_dir, cache, ttl, progress). Loader methods read both.
"""

from __future__ import annotations

import atexit
import logging
import math
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx

from realtyframes.api._constants import (
    DEFAULT_API_KEY_HEADER,
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT,
)
from realtyframes.api._http import ApiClient, ErrorFormat
from realtyframes.api._ratelimit import RateLimitState
from realtyframes.api._retry import RetryPolicy
from realtyframes.errors import QueryError
from realtyframes.oauth import Token

logger = logging.getLogger("realtyframes")

#: Environment variables read by :meth:`Client.from_env`.
ENV_VARS: dict[str, str] = {
    "base_url": "REALTYFRAMES_BASE_URL",
    "token": "REALTYFRAMES_TOKEN",
    "api_key": "REALTYFRAMES_API_KEY",
    "legacy_url": "REALTYFRAMES_LEGACY_URL",
    "auth_url": "REALTYFRAMES_AUTH_URL",
    "cache_dir": "REALTYFRAMES_CACHE_DIR",
}

TTL = float | timedelta | None


@dataclass(frozen=True)
class ClientSettings:
    """Settings of the loaders: where and whether to cache, how long entries live, progress bars.

    ``cache_dir`` None: the cache layer's default (``REALTYFRAMES_CACHE_DIR``, else the user cache
    directory). ``ttl``: seconds or a timedelta for every resource, or a mapping resource -> ttl;
    None: the cache layer's defaults. ``progress`` None: on in notebooks and terminals.
    """

    cache_dir: Path | None = None
    cache: bool = True
    ttl: TTL | Mapping[str, TTL] = None
    progress: bool | None = None


def _check_ttl(name: str, value: Any) -> None:
    if value is None or isinstance(value, timedelta):
        if isinstance(value, timedelta) and value.total_seconds() < 0:
            raise QueryError(name, "negative", "seconds >= 0, a timedelta, or None")
        return
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
    ):
        raise QueryError(name, f"{value!r} is not a duration", "seconds >= 0, a timedelta, or None")


def _settings(cache_dir: Any, cache: Any, ttl: Any, progress: Any) -> ClientSettings:
    if cache_dir is not None and not isinstance(cache_dir, str | os.PathLike):
        raise QueryError(
            "cache_dir", f"expected a path, got {type(cache_dir).__name__}", "a path or None"
        )
    if not isinstance(cache, bool):
        raise QueryError("cache", f"expected True or False, got {cache!r}", "True, False")
    if isinstance(ttl, Mapping):
        for key, value in ttl.items():
            if not isinstance(key, str):
                raise QueryError(
                    "ttl", f"keys must be resource names, got {key!r}", "a str -> duration mapping"
                )
            _check_ttl(f"ttl[{key!r}]", value)
        ttl = dict(ttl)
    else:
        _check_ttl("ttl", ttl)
    if progress is not None and not isinstance(progress, bool):
        raise QueryError(
            "progress", f"expected True, False or None, got {progress!r}", "True, False, None"
        )
    return ClientSettings(
        cache_dir=Path(cache_dir).expanduser() if cache_dir is not None else None,
        cache=cache,
        ttl=ttl,
        progress=progress,
    )


# -- the embedded sandbox: started once per process, lazily -----------------------------------------
_embedded_lock = threading.Lock()
_embedded: dict[str, Any] = {}


def _embedded_sandbox_url() -> str:
    """Start the embedded sandbox once for this process (on first use) and return its URL."""
    with _embedded_lock:
        if "url" not in _embedded:
            from realtyframes.sandbox import serve  # the one place the client side touches it

            context = serve()
            url = context.__enter__()
            _embedded["url"], _embedded["context"] = url, context
            atexit.register(context.__exit__, None, None, None)
            logger.info(
                "no base_url and no credentials: started the embedded sandbox at %s "
                "(synthetic data; kept for the life of this process)",
                url,
            )
        return str(_embedded["url"])


class Client:
    """The realtyframes client: one account on one service (or the embedded sandbox).

    With no ``base_url`` and no credentials it starts the embedded sandbox (once per process).
    ``token`` (an OAuth access token or :class:`~realtyframes.oauth.Token`) is sent as Bearer;
    ``api_key`` as ``X-API-Key`` on the main host and as ``api_key`` on the legacy host.
    ``legacy_url`` and ``auth_url`` default to ``base_url``. Loader settings (``cache_dir``,
    ``cache``, ``ttl``, ``progress``) are kept in :attr:`settings`. Keyword-only extras:
    ``api_key_header``, ``docs_url``, ``error_format`` ("json" or "problem"), ``retry``
    (:class:`~realtyframes.api.RetryPolicy`), ``pace``, ``transport`` and ``event_hooks`` (httpx).

    >>> with Client() as client:  # doctest: +SKIP
    ...     client.me()["email"]
    'demo@demo-realty.example'
    """

    def __init__(
        self,
        base_url: str | None = None,
        token: str | Token | None = None,
        api_key: str | None = None,
        legacy_url: str | None = None,
        auth_url: str | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        cache: bool = True,
        ttl: TTL | Mapping[str, TTL] = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
        progress: bool | None = None,
        *,
        api_key_header: str = DEFAULT_API_KEY_HEADER,
        docs_url: str | None = None,
        error_format: ErrorFormat = "json",
        retry: RetryPolicy | None = None,
        pace: bool = True,
        transport: httpx.BaseTransport | None = None,
        event_hooks: Mapping[str, list[Callable[..., Any]]] | None = None,
    ) -> None:
        access_token = token.access_token if isinstance(token, Token) else token
        if access_token is not None and (
            not isinstance(access_token, str) or not access_token.strip()
        ):
            raise QueryError("token", "expected a non-empty string or an oauth.Token", "a token")
        if api_key is not None and (not isinstance(api_key, str) or not api_key.strip()):
            raise QueryError("api_key", "expected a non-empty string", "an API key")
        self._embedded = False
        if base_url is None:
            if access_token is not None or api_key is not None:
                raise QueryError(
                    "base_url",
                    "credentials were given without the host they are for",
                    "the service's base URL (or set REALTYFRAMES_BASE_URL and use Client.from_env())",
                )
            base_url = _embedded_sandbox_url()
            self._embedded = True
        self._settings = _settings(cache_dir, cache, ttl, progress)
        self._api = ApiClient(
            base_url,
            token=access_token,
            api_key=api_key,
            api_key_header=api_key_header,
            legacy_url=legacy_url,
            auth_url=auth_url,
            docs_url=docs_url,
            timeout=timeout,
            max_retries=max_retries,
            max_concurrency=max_concurrency,
            retry=retry,
            pace=pace,
            error_format=error_format,
            transport=transport,
            event_hooks=event_hooks,
        )

    @classmethod
    def from_env(cls, **overrides: Any) -> Client:
        """A client configured from ``REALTYFRAMES_BASE_URL``, ``_TOKEN``, ``_API_KEY``,
        ``_LEGACY_URL``, ``_AUTH_URL`` and ``_CACHE_DIR``; keyword arguments win over them.

        >>> client = Client.from_env(max_concurrency=8)  # doctest: +SKIP
        """
        values: dict[str, Any] = {}
        for name, variable in ENV_VARS.items():
            value = os.environ.get(variable, "").strip()
            if value:
                values[name] = value
        values.update(overrides)
        return cls(**values)

    # -- properties ----------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        """The main host in use (the embedded sandbox's URL when none was given)."""
        return self._api.base_url

    @property
    def embedded(self) -> bool:
        """True when this client talks to the embedded sandbox started for this process."""
        return self._embedded

    @property
    def settings(self) -> ClientSettings:
        """Loader settings: cache_dir, cache, ttl, progress."""
        return self._settings

    @property
    def api(self) -> ApiClient:
        """The HTTP layer (advanced use: raw JSON, custom paging)."""
        return self._api

    @property
    def rate_limit(self) -> RateLimitState | None:
        """The latest limit / remaining / reset seen (None before the first answer).

        >>> client.rate_limit.remaining  # doctest: +SKIP
        59
        """
        return self._api.rate_limit

    # -- operations of this layer --------------------------------------------------------------
    def me(self) -> dict[str, Any]:
        """The current user (``GET /v1/me``): the legacy user fields plus plan and scopes.

        >>> client.me()["plan"]  # doctest: +SKIP
        'standard'
        """
        return self._api.call("me")  # type: ignore[no-any-return]

    def legacy_me(self) -> dict[str, Any]:
        """The current user from the legacy host (``GET /api/me?api_key=...``; deprecated there).

        >>> client.legacy_me()["domain"]  # doctest: +SKIP
        'demo-realty.example'
        """
        self._require_api_key("legacy_me")
        return self._api.call("legacy_me")  # type: ignore[no-any-return]

    def _require_api_key(self, operation: str) -> None:
        if self._api._legacy_auth is None:
            raise QueryError(
                "api_key",
                f"{operation} uses the legacy host, which needs an API key",
                "Client(api_key=...)",
            )

    # -- copies and lifetime -------------------------------------------------------------------
    def with_options(self, **options: Any) -> Client:
        """A copy with other ``timeout``, ``max_retries``, ``max_concurrency``, ``retry``, ``pace``,
        ``error_format``, ``cache``, ``cache_dir``, ``ttl`` or ``progress``; it shares the
        connection pool and the rate budget.

        >>> fast = client.with_options(max_concurrency=8, cache=False)  # doctest: +SKIP
        """
        setting_names = ("cache_dir", "cache", "ttl", "progress")
        api_options = {k: v for k, v in options.items() if k not in setting_names}
        changes = {k: v for k, v in options.items() if k in setting_names}
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__)
        copy._api = self._api.with_options(**api_options)
        if changes:
            merged = {**self._settings.__dict__, **changes}
            copy._settings = _settings(**merged)
        else:
            copy._settings = replace(self._settings)
        return copy

    def close(self) -> None:
        """Close the connection pool (the embedded sandbox keeps running for the process)."""
        self._api.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        where = "embedded sandbox" if self._embedded else self.base_url
        return (
            f"Client(base_url={where!r}, auth={self._api.auth_kind!r}, "
            f"cache={self._settings.cache})"
        )
