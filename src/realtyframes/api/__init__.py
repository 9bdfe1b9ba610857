"""The HTTP layer: hosts, auth, typed errors, retries, rate-limit pacing, parameter validation.

Loaders use :class:`ApiClient` (``get_json``, ``get_bytes``, ``get_many``), the table of the
spec's operations (:data:`OPERATIONS`: name, host, path, path parameter, validator) and the
validators (``prepare`` and ``validate_*``); users normally meet it only through
:class:`realtyframes.Client`.
"""

from __future__ import annotations

from realtyframes.api._auth import ApiKeyAuth, BearerAuth, LegacyKeyAuth
from realtyframes.api._engine import Host
from realtyframes.api._http import ApiClient
from realtyframes.api._operations import OPERATIONS, Operation, prepare
from realtyframes.api._params import (
    PreparedRequest,
    validate_analytics,
    validate_listing_changes,
    validate_listing_search,
    validate_paging,
)
from realtyframes.api._ratelimit import RateLimitState
from realtyframes.api._retry import RetryBudget, RetryPolicy

__all__ = [
    "OPERATIONS",
    "ApiClient",
    "ApiKeyAuth",
    "BearerAuth",
    "Host",
    "LegacyKeyAuth",
    "Operation",
    "PreparedRequest",
    "RateLimitState",
    "RetryBudget",
    "RetryPolicy",
    "prepare",
    "validate_analytics",
    "validate_listing_changes",
    "validate_listing_search",
    "validate_paging",
]
