"""realtyframes: a real-estate platform's REST API as validated pandas DataFrames cached as Parquet.

>>> import realtyframes as rf
>>> client = rf.Client()            # no credentials: the embedded sandbox  # doctest: +SKIP
>>> client.me()["domain"]                                                     # doctest: +SKIP
'demo-realty.example'

One public surface: everything users call is re-exported here (``__all__`` is tested).
"""

from typing import TYPE_CHECKING, Any

from realtyframes import oauth
from realtyframes._client import Client, ClientSettings
from realtyframes._version import __version__
from realtyframes.analysis import (
    AnalysisInputError,
    ColumnTypeError,
    LeadFunnel,
    MissingColumnsError,
    TrafficSummary,
    compare_markets,
    lead_funnel,
    market_summary,
    price_drop_summary,
    price_drops,
    traffic_summary,
)
from realtyframes.api import RetryPolicy
from realtyframes.errors import (
    ApiDeprecationWarning,
    ApiError,
    BadRequestError,
    BadResponseError,
    CacheLockTimeout,
    CacheWarning,
    ConfigError,
    ConnectError,
    DataQualityWarning,
    DriftWarning,
    InsufficientScopeError,
    InvalidTokenError,
    NotFoundError,
    OAuthError,
    QueryError,
    RateLimitError,
    RealtyFramesError,
    RequestTimeoutError,
    SchemaDriftWarning,
    SchemaValidationError,
    ServerError,
    TransportError,
)
from realtyframes.loaders import LoadInfo
from realtyframes.schemas import Analytics

if TYPE_CHECKING:
    from realtyframes import plots as plot
    from realtyframes import sandbox

_LAZY = {"plot": "realtyframes.plots", "sandbox": "realtyframes.sandbox"}


def __getattr__(name: str) -> Any:
    """Load ``rf.plot`` (matplotlib) and ``rf.sandbox`` (starlette, uvicorn) on first use."""
    if name in _LAZY:
        import importlib

        module = importlib.import_module(_LAZY[name])
        globals()[name] = module
        return module
    raise AttributeError(f"module 'realtyframes' has no attribute {name!r}")


__all__ = [
    "AnalysisInputError",
    "Analytics",
    "ApiDeprecationWarning",
    "ApiError",
    "BadRequestError",
    "BadResponseError",
    "CacheLockTimeout",
    "CacheWarning",
    "Client",
    "ClientSettings",
    "ColumnTypeError",
    "ConfigError",
    "ConnectError",
    "DataQualityWarning",
    "DriftWarning",
    "InsufficientScopeError",
    "InvalidTokenError",
    "LeadFunnel",
    "LoadInfo",
    "MissingColumnsError",
    "NotFoundError",
    "OAuthError",
    "QueryError",
    "RateLimitError",
    "RealtyFramesError",
    "RequestTimeoutError",
    "RetryPolicy",
    "SchemaDriftWarning",
    "SchemaValidationError",
    "ServerError",
    "TrafficSummary",
    "TransportError",
    "__version__",
    "compare_markets",
    "lead_funnel",
    "market_summary",
    "oauth",
    "plot",
    "price_drop_summary",
    "price_drops",
    "sandbox",
    "traffic_summary",
]
