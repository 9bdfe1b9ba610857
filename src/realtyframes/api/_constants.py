"""Constants of the HTTP layer, in one place (defaults, limits, header names)."""

from __future__ import annotations

from typing import Literal, get_args

from realtyframes._spec import MAX_LISTING_IDS as MAX_LISTING_IDS
from realtyframes._spec import MAX_PAGE_SIZE as MAX_PAGE_SIZE

#: Value of the ``Service-Api-Version`` request header (spec: Versioning).
SERVICE_API_VERSION = "1"

#: Default seconds for connect/read/write/pool timeouts of one attempt.
DEFAULT_TIMEOUT = 30.0
#: Default retries of one request (attempts = 1 + retries).
DEFAULT_MAX_RETRIES = 5
#: Default number of requests in flight at once in ``get_many``.
DEFAULT_MAX_CONCURRENCY = 4
#: Most requests a client keeps in flight: beyond it a service sees a flood, not a client.
MAX_CONCURRENCY = 32
#: Default overall deadline (seconds) of one request including all its retries and waits.
DEFAULT_DEADLINE = 300.0

#: Backoff: ``uniform(0, min(BACKOFF_CAP, BACKOFF_BASE * 2**attempt))`` (full jitter).
DEFAULT_BACKOFF_BASE = 0.5
DEFAULT_BACKOFF_CAP = 30.0
#: ``Retry-After`` is honoured up to this many seconds ...
DEFAULT_RETRY_AFTER_CAP = 60.0
#: ... and never below this (``Retry-After: 0`` must not hot-loop).
DEFAULT_RETRY_AFTER_FLOOR = 0.1
#: Retries of one load in total: ``max_retries + ceil(requests * ratio)``.
DEFAULT_RETRY_BUDGET_RATIO = 0.5

#: Share of the allowed rate the pacer aims at (the rest absorbs clock and network jitter).
PACING_SAFETY = 0.97

#: HTTP statuses retried on GET (with connect errors, timeouts and broken bodies).
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})

#: Header carrying the personal API key on the main host (design.md; configurable).
DEFAULT_API_KEY_HEADER = "X-API-Key"
#: Query parameter carrying the key on the legacy host (spec).
LEGACY_KEY_PARAM = "api_key"

#: The hosts of the service (design.md): base, auth, legacy and the documentation host.
Host = Literal["base", "auth", "legacy", "docs"]
HOSTS: tuple[str, ...] = get_args(Host)

#: Media types.
JSON = "application/json"
PROBLEM_JSON = "application/problem+json"

#: Characters of a non-JSON error body kept in the exception.
EXCERPT_CHARS = 200

#: Headers that may carry a request id.
REQUEST_ID_HEADERS = ("x-request-id", "request-id", "x-correlation-id", "x-amzn-requestid")

#: Query parameter names whose values are secrets (masked in logs and errors).
SECRET_QUERY_PARAMS = (
    "api_key",
    "apikey",
    "access_token",
    "refresh_token",
    "client_secret",
    "token",
    "code",
    "password",
)

#: Loopback hosts always bypass HTTP(S)_PROXY (httpx applies env proxies to 127.0.0.1 too): the
#: embedded sandbox and the OAuth login listener live there. ``None`` = the direct transport.
LOOPBACK_MOUNTS: dict[str, None] = {
    "all://127.0.0.1": None,
    "all://localhost": None,
    "all://[::1]": None,
}
