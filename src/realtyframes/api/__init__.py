"""The HTTP layer: hosts, auth, typed errors, retries, rate-limit pacing, parameter validation.

Loaders use :class:`ApiClient` (``get_json``, ``get_bytes``, ``get_many``) and the validators of
:mod:`realtyframes.api._params` (``prepare`` and ``validate_*``); users normally meet it only
through :class:`realtyframes.Client`.
"""

from __future__ import annotations

from realtyframes.api._auth import ApiKeyAuth, BearerAuth, LegacyKeyAuth
from realtyframes.api._counts import RequestCounts
from realtyframes.api._http import ApiClient
from realtyframes.api._params import (
    PreparedRequest,
    prepare,
    validate_analytics,
    validate_listing_changes,
    validate_listing_search,
    validate_paging,
)
from realtyframes.api._ratelimit import RateLimitState
from realtyframes.api._retry import RetryBudget, RetryPolicy

__all__ = [
    "ApiClient",
    "ApiKeyAuth",
    "BearerAuth",
    "LegacyKeyAuth",
    "PreparedRequest",
    "RateLimitState",
    "RequestCounts",
    "RetryBudget",
    "RetryPolicy",
    "prepare",
    "validate_analytics",
    "validate_listing_changes",
    "validate_listing_search",
    "validate_paging",
]
