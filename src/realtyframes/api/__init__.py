"""The HTTP layer: hosts, auth, typed errors, retries, rate-limit pacing, parameter validation.

Loaders use :class:`ApiClient` (``get_json``, ``get_bytes``, ``get_many``), the table of the
spec's operations (:data:`OPERATIONS`: name, host, path, path parameter, validator) and the
validators (``prepare`` and ``validate_*``); users normally meet it only through
:class:`realtyframes.Client`. Everything another package uses is exported here (its front door):
the parameter tables the CLI and the MCP server describe, the constants, the error mapping, the
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
from realtyframes.api._checkers import PreparedRequest, refuse_none
from realtyframes.api._constants import (
    DEFAULT_API_KEY_HEADER,
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT,
    JSON,
    MAX_LISTING_IDS,
    MAX_PAGE_SIZE,
    SERVICE_API_VERSION,
)
from realtyframes.api._engine import Host, caller_level
from realtyframes.api._errors import error_from_response
from realtyframes.api._http import USER_AGENT, ApiClient, Engine, ErrorFormat
from realtyframes.api._operations import (
    ANALYTICS,
    CONTACTS,
    LISTING_CHANGES,
    LISTING_DEFAULTS,
    LISTING_SEARCH,
    OPERATIONS,
    PAGING_PARAMETERS,
    RANGE_PAIRS,
    SUBTYPES,
    Operation,
    prepare,
    validate_analytics,
    validate_listing_changes,
    validate_listing_search,
    validate_paging,
)
from realtyframes.api._ratelimit import RateLimitState, parse_rate_limit_headers
from realtyframes.api._retry import RetryBudget, RetryPolicy
from realtyframes.api._transports import RequestCounts

__all__ = [
    "ANALYTICS",
    "CONTACTS",
    "DEFAULT_API_KEY_HEADER",
    "DEFAULT_MAX_CONCURRENCY",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_TIMEOUT",
    "JSON",
    "LISTING_CHANGES",
    "LISTING_DEFAULTS",
    "LISTING_SEARCH",
    "MAX_LISTING_IDS",
    "MAX_PAGE_SIZE",
    "OPERATIONS",
    "PAGING_PARAMETERS",
    "RANGE_PAIRS",
    "SERVICE_API_VERSION",
    "SUBTYPES",
    "USER_AGENT",
    "ApiClient",
    "ApiKeyAuth",
    "BearerAuth",
    "Engine",
    "ErrorFormat",
    "Host",
    "LegacyKeyAuth",
    "Operation",
    "PreparedRequest",
    "RateLimitState",
    "RequestCounts",
    "RetryBudget",
    "RetryPolicy",
    "SecretMaskingFilter",
    "caller_level",
    "error_from_response",
    "mask_text",
    "parse_rate_limit_headers",
    "prepare",
    "refuse_none",
    "validate_analytics",
    "validate_listing_changes",
    "validate_listing_search",
    "validate_paging",
]
