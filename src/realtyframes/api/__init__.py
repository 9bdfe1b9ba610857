"""The HTTP layer: hosts, auth, typed errors, retries, rate-limit pacing, paging, deprecation.

Loaders use :class:`ApiClient` (``get_json``, ``get_bytes``, ``get_many``, ``get_pages``: the page
loop); the spec's operations and their validation stand above, in the loaders (#33). Everything
another package uses is exported here (its front door): the constants, the error mapping, the
secret masking, :func:`caller_level` for warnings that point at the user's code.
"""

from __future__ import annotations

from realtyframes.api._auth import (
    ApiKeyAuth,
    BearerAuth,
    LegacyKeyAuth,
    SecretMaskingFilter,
    mask_text,
)
from realtyframes.api._constants import (
    DEFAULT_API_KEY_HEADER,
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT,
    JSON,
    MAX_LISTING_IDS,
    MAX_PAGE_SIZE,
    SERVICE_API_VERSION,
    Host,
)
from realtyframes.api._engine import USER_AGENT, caller_level
from realtyframes.api._errors import error_from_response
from realtyframes.api._http import ApiClient, ErrorFormat
from realtyframes.api._ratelimit import RateLimitState, parse_rate_limit_headers
from realtyframes.api._retry import RetryBudget, RetryPolicy
from realtyframes.api._transports import RequestCounts

__all__ = [
    "DEFAULT_API_KEY_HEADER",
    "DEFAULT_MAX_CONCURRENCY",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_TIMEOUT",
    "JSON",
    "MAX_LISTING_IDS",
    "MAX_PAGE_SIZE",
    "SERVICE_API_VERSION",
    "USER_AGENT",
    "ApiClient",
    "ApiKeyAuth",
    "BearerAuth",
    "ErrorFormat",
    "Host",
    "LegacyKeyAuth",
    "RateLimitState",
    "RequestCounts",
    "RetryBudget",
    "RetryPolicy",
    "SecretMaskingFilter",
    "caller_level",
    "error_from_response",
    "mask_text",
    "parse_rate_limit_headers",
]
