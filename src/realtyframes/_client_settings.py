"""The Client's settings and where they come from: arguments, ``REALTYFRAMES_*`` and the config
file, else the embedded sandbox (with the synthetic-data warning); checked before anything
starts."""

from __future__ import annotations

import logging
import math
import os
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from realtyframes._config import load_settings
from realtyframes._tuning import KNOBS
from realtyframes.api import ApiClient, RetryPolicy
from realtyframes.errors import ConfigError, QueryError
from realtyframes.loaders import Session, check_flag, check_on_invalid, make_cache
from realtyframes.schemas import OnInvalid

TTL = float | timedelta | None

if TYPE_CHECKING:
    from realtyframes.sandbox import EmbeddedSandbox

logger = logging.getLogger("realtyframes")


@dataclass(frozen=True)
class ClientSettings:
    """Settings of the loaders: where and whether to cache, how long entries live, progress bars.

    ``cache_dir`` None: the cache layer's default (``REALTYFRAMES_CACHE_DIR``, else the user cache
    directory). ``ttl``: seconds or a timedelta for every resource, or a mapping resource -> ttl;
    None: the loaders' defaults (listings 1 h, listing detail 1 day, changes 15 min, contacts
    1 h, analytics 1 h). ``progress`` None: on in notebooks and terminals. ``on_invalid``: what
    loads do with rows that fail validation ("quarantine", "raise", "keep").
    """

    cache_dir: Path | None = None
    cache: bool = True
    ttl: TTL | Mapping[str, TTL] = None
    progress: bool | None = None
    on_invalid: str = "quarantine"


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


def _settings(
    cache_dir: Any, cache: Any, ttl: Any, progress: Any, on_invalid: Any = "quarantine"
) -> ClientSettings:
    if cache_dir is not None and not isinstance(cache_dir, str | os.PathLike):
        raise QueryError(
            "cache_dir", f"expected a path, got {type(cache_dir).__name__}", "a path or None"
        )
    check_flag("cache", cache)
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
    check_flag("progress", progress, allow_none=True)
    for knob in KNOBS.values():  # REALTYFRAMES_DETAIL_BATCH ...: a bad value fails here
        knob.get()
    return ClientSettings(
        cache_dir=Path(cache_dir).expanduser() if cache_dir is not None else None,
        cache=cache,
        ttl=ttl,
        progress=progress,
        on_invalid=check_on_invalid(on_invalid),
    )


#: ``with_options`` arguments that are settings of the loaders (the others are the ApiClient's).
SETTING_NAMES = tuple(f.name for f in fields(ClientSettings))
#: Client options that name the source; a sandbox or RESO client sets them itself.
SOURCE_OPTIONS = ("base_url", "token", "api_key", "legacy_url", "auth_url", "_explicit_sandbox")


def split_options(options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``with_options`` arguments as (the ApiClient's, the settings' changes)."""
    api_options = {k: v for k, v in options.items() if k not in SETTING_NAMES}
    return api_options, {k: v for k, v in options.items() if k in SETTING_NAMES}


def refuse_source_options(options: Mapping[str, Any], client: str, allowed: str) -> None:
    """A QueryError naming the first of :data:`SOURCE_OPTIONS` in ``options``."""
    for name in SOURCE_OPTIONS:
        if name in options:
            raise QueryError(name, f"not an option of {client}", allowed)


def with_request_hook(
    event_hooks: Mapping[str, list[Any]] | None, hook: Callable[[Any], None]
) -> dict[str, list[Any]]:
    """A copy of ``event_hooks`` with ``hook`` the first of its ``request`` hooks."""
    hooks = {k: list(v) for k, v in (event_hooks or {}).items()}
    hooks["request"] = [hook, *hooks.get("request", [])]
    return hooks


def session_of(api: ApiClient, settings: ClientSettings, unchanged: Callable[[], bool]) -> Session:
    """The session a Client's loads take: ``api``, the cache its settings ask for, progress and
    ``on_invalid``; ``unchanged`` says whether its source can have changed since last synced."""
    cache = make_cache(settings.cache_dir, settings.ttl) if settings.cache else None
    mode = cast(OnInvalid, settings.on_invalid)
    return Session(api, cache, settings.progress, mode, unchanged)


def require_api_key(api: ApiClient, operation: str) -> None:
    """A QueryError before any request when ``operation`` (of the legacy host) has no API key."""
    if not api.has_api_key:
        raise QueryError(
            "api_key",
            f"{operation} uses the legacy host, which needs an API key",
            "an API key: the Client's api_key argument, REALTYFRAMES_API_KEY, or --api-key on "
            "the command line",
        )


# -- the embedded sandbox: started once per process, lazily -----------------------------------------
def _embedded_sandbox() -> EmbeddedSandbox:
    """A reference to the process's embedded sandbox, held for good: its port is reserved now,
    the server starts before the first request (:func:`start_before_requests`), so a run the cache
    answers alone starts none."""
    from realtyframes.sandbox import embedded  # the one place the client side touches it

    def started(sandbox: EmbeddedSandbox) -> None:
        logger.info(
            "no base_url and no credentials: started the embedded sandbox at %s "
            "(synthetic data; kept for the life of this process)",
            sandbox.url,
        )

    return embedded(on_start=started, lazy=True)


def unchanged_while_idle(sandbox: EmbeddedSandbox | None) -> Callable[[], bool]:
    """Whether a client's source is unchanged since last synced: True while its embedded sandbox
    has not started in this process (its data are then those its identity names, as a cached
    sync saw them: the sync answers from the cache, and no server starts); False for a service.
    """
    if sandbox is None:
        return lambda: False
    return lambda: not sandbox.started


def start_before_requests(
    sandbox: EmbeddedSandbox, event_hooks: Mapping[str, list[Any]] | None
) -> dict[str, list[Any]]:
    """``event_hooks`` with a first request hook that starts the embedded sandbox (once; then a
    check of a flag): every request of the client, MCP sessions' included, goes through it."""

    def start(_request: Any) -> None:
        if not sandbox.started:
            sandbox.ensure_started()

    return with_request_hook(event_hooks, start)


#: Said once per process (Python's default warning filter) when ``Client()`` finds nothing
#: configured: a scheduled job must not analyse synthetic data without being told.
_SYNTHETIC = (
    "no REALTYFRAMES_BASE_URL, credentials or config file: rf.Client() uses the embedded sandbox "
    "(synthetic data). Configure a service, or say rf.Client.sandbox() to mean it."
)


def _check_credentials(
    access_token: Any, api_key: Any, retry: RetryPolicy | None, max_retries: int | None
) -> None:
    """Credentials and retry settings checked before anything starts."""
    if access_token is not None and (not isinstance(access_token, str) or not access_token.strip()):
        raise QueryError("token", "expected a non-empty string or an oauth.Token", "a token")
    if api_key is not None and (not isinstance(api_key, str) or not api_key.strip()):
        raise QueryError("api_key", "expected a non-empty string", "an API key")
    if retry is not None and max_retries is not None and retry.max_retries != max_retries:
        raise QueryError(
            "max_retries",
            f"{max_retries} disagrees with retry.max_retries={retry.max_retries}",
            "one of them, or the same value in both",
        )


def _configured(
    access_token: str | None,
    api_key: str | None,
    legacy_url: str | None,
    auth_url: str | None,
    cache_dir: str | os.PathLike[str] | None,
) -> tuple[Any, ...]:
    """What the call did not say, from ``REALTYFRAMES_*`` and the config file (the ecosystem's
    convention: openai, stripe, boto3); warns when nothing is configured (the sandbox's turn)."""
    given = {"token": access_token, "api_key": api_key, "legacy_url": legacy_url,
             "auth_url": auth_url}  # fmt: skip
    found = load_settings({k: v for k, v in given.items() if v is not None})
    if found.base_url is None and (found.token is not None or found.api_key is not None):
        raise ConfigError(
            "base_url",
            "credentials were given without the host they are for",
            "the service's base URL: base_url=, REALTYFRAMES_BASE_URL or the config file",
        )
    if found.base_url is None:
        warnings.warn(_SYNTHETIC, UserWarning, stacklevel=3)  # the line calling Client()
    return (
        found.base_url,
        found.token,
        found.api_key,
        found.legacy_url,
        found.auth_url,
        cache_dir if cache_dir is not None else found.cache_dir,
    )
