"""realtyframes: a real-estate platform's REST API as validated pandas DataFrames cached as Parquet.

>>> import realtyframes as rf
>>> client = rf.Client()            # no credentials: the embedded sandbox  # doctest: +SKIP
>>> client.me()["domain"]                                                     # doctest: +SKIP
'demo-realty.example'

One public surface: everything users call is re-exported here (``__all__`` is tested). The errors
are imported at once; every other name is imported on first use (:data:`_LAZY`), so ``import
realtyframes`` and ``realtyframes --help`` do not load pandas, pandera, httpx or matplotlib.
"""

from typing import TYPE_CHECKING

from realtyframes._lazy import lazy
from realtyframes._version import __version__
from realtyframes.errors import (
    ApiDeprecationWarning,
    ApiError,
    BadRequestError,
    BadResponseError,
    CacheLockTimeout,
    CacheReadTimeout,
    CacheWarning,
    ConfigError,
    ConnectError,
    DataQualityWarning,
    DriftWarning,
    InsufficientScopeError,
    InvalidTokenError,
    NotFoundError,
    NotificationError,
    OAuthError,
    QueryError,
    RateLimitError,
    RealtyFramesError,
    RequestTimeoutError,
    ResponseMismatchError,
    RunAnomalyWarning,
    SchemaDriftWarning,
    SchemaValidationError,
    ScopeBusyError,
    ServerError,
    TransportError,
)

if TYPE_CHECKING:  # the lazy names, for type checkers and editors
    from realtyframes import oauth, sandbox
    from realtyframes import plots as plot
    from realtyframes._client import Client, ClientSettings
    from realtyframes.analysis import (
        AnalysisInputError,
        ColumnTypeError,
        LeadFunnel,
        MissingColumnsError,
        TrafficSummary,
        compare_markets,
        comps,
        lead_funnel,
        market_changes,
        market_summary,
        market_trends,
        price_drop_summary,
        price_drops,
        price_index,
        seasonally_adjust,
        traffic_summary,
    )
    from realtyframes.api import RetryPolicy
    from realtyframes.loaders import LoadInfo, Plan
    from realtyframes.schemas import Analytics
    from realtyframes.watch import Watches, WatchResult

#: Names imported on first use: name -> module (a module itself when the name is the module's).
_LAZY: dict[str, str] = {
    "Client": "realtyframes._client",
    "ClientSettings": "realtyframes._client",
    "AnalysisInputError": "realtyframes.analysis",
    "ColumnTypeError": "realtyframes.analysis",
    "LeadFunnel": "realtyframes.analysis",
    "MissingColumnsError": "realtyframes.analysis",
    "TrafficSummary": "realtyframes.analysis",
    "compare_markets": "realtyframes.analysis",
    "comps": "realtyframes.analysis",
    "lead_funnel": "realtyframes.analysis",
    "market_changes": "realtyframes.analysis",
    "market_summary": "realtyframes.analysis",
    "market_trends": "realtyframes.analysis",
    "price_drop_summary": "realtyframes.analysis",
    "price_drops": "realtyframes.analysis",
    "price_index": "realtyframes.analysis",
    "seasonally_adjust": "realtyframes.analysis",
    "traffic_summary": "realtyframes.analysis",
    "RetryPolicy": "realtyframes.api",
    "LoadInfo": "realtyframes.loaders",
    "Plan": "realtyframes.loaders",
    "Analytics": "realtyframes.schemas",
    "Watches": "realtyframes.watch",
    "WatchResult": "realtyframes.watch",
    "oauth": "realtyframes.oauth",
    "plot": "realtyframes.plots",
    "sandbox": "realtyframes.sandbox",
}
_MODULES = frozenset({"oauth", "plot", "sandbox"})


__all__ = [
    "AnalysisInputError",
    "Analytics",
    "ApiDeprecationWarning",
    "ApiError",
    "BadRequestError",
    "BadResponseError",
    "CacheLockTimeout",
    "CacheReadTimeout",
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
    "NotificationError",
    "OAuthError",
    "Plan",
    "QueryError",
    "RateLimitError",
    "RealtyFramesError",
    "RequestTimeoutError",
    "ResponseMismatchError",
    "RetryPolicy",
    "RunAnomalyWarning",
    "SchemaDriftWarning",
    "SchemaValidationError",
    "ScopeBusyError",
    "ServerError",
    "TrafficSummary",
    "TransportError",
    "WatchResult",
    "Watches",
    "__version__",
    "compare_markets",
    "comps",
    "lead_funnel",
    "market_changes",
    "market_summary",
    "market_trends",
    "oauth",
    "plot",
    "price_drop_summary",
    "price_drops",
    "price_index",
    "sandbox",
    "seasonally_adjust",
    "traffic_summary",
]

__getattr__, __dir__ = lazy(__name__, _LAZY, globals(), __all__, modules=_MODULES)
