"""Pure analysis helpers: DataFrame in, DataFrame out (no HTTP).

Price drops, market metrics, a constant-quality price index, traffic and lead summaries; every metric is defined in
docs/metrics.md. A needed column that is absent raises :class:`MissingColumnsError` naming it;
numbers and timestamps given as text (CSV) are read, and unreadable values raise
:class:`ColumnTypeError`.

>>> import realtyframes as rf                                   # doctest: +SKIP
>>> rf.market_summary(market, by="City", window_days=90)        # doctest: +SKIP
"""

from realtyframes.analysis._common import (
    RENT_TYPES,
    SALE_TYPES,
    SEGMENTS,
    AnalysisInputError,
    ColumnTypeError,
    MissingColumnsError,
)
from realtyframes.analysis.asof import market_at
from realtyframes.analysis.changes import CHANGE_COLUMNS, CHANGE_KINDS, market_changes
from realtyframes.analysis.comps import COMP_COLUMNS, comps, haversine_km, neighbourhood
from realtyframes.analysis.leads import DEFAULT_STAGES, LeadFunnel, lead_funnel
from realtyframes.analysis.market import (
    MARKET_METRICS,
    REFERENCE_LABEL,
    SAMPLE_SIZE_OF,
    compare_markets,
    market_summary,
    ppsf_values,
)
from realtyframes.analysis.price_drops import (
    PRICE_DROP_COLUMNS,
    PRICE_DROP_SUMMARY_COLUMNS,
    price_drop_summary,
    price_drops,
)
from realtyframes.analysis.price_index import (
    INDEX_COLUMNS,
    INDEX_FREQS,
    INDEX_LOCATIONS,
    INDEX_METHODS,
    INDEX_WEIGHTS,
    price_index,
)
from realtyframes.analysis.seasonal import SEASONAL_FREQS, SEASONAL_MODELS, seasonally_adjust
from realtyframes.analysis.tiers import TIER_BANDS, TIERS
from realtyframes.analysis.traffic import TRAFFIC_METRICS, TrafficSummary, traffic_summary
from realtyframes.analysis.trends import FREQS, TREND_METRICS, market_trends

__all__ = [
    "CHANGE_COLUMNS",
    "CHANGE_KINDS",
    "COMP_COLUMNS",
    "DEFAULT_STAGES",
    "FREQS",
    "INDEX_COLUMNS",
    "INDEX_FREQS",
    "INDEX_LOCATIONS",
    "INDEX_METHODS",
    "INDEX_WEIGHTS",
    "MARKET_METRICS",
    "PRICE_DROP_COLUMNS",
    "PRICE_DROP_SUMMARY_COLUMNS",
    "REFERENCE_LABEL",
    "RENT_TYPES",
    "SALE_TYPES",
    "SAMPLE_SIZE_OF",
    "SEASONAL_FREQS",
    "SEASONAL_MODELS",
    "SEGMENTS",
    "TIERS",
    "TIER_BANDS",
    "TRAFFIC_METRICS",
    "TREND_METRICS",
    "AnalysisInputError",
    "ColumnTypeError",
    "LeadFunnel",
    "MissingColumnsError",
    "TrafficSummary",
    "compare_markets",
    "comps",
    "haversine_km",
    "lead_funnel",
    "market_at",
    "market_changes",
    "market_summary",
    "market_trends",
    "neighbourhood",
    "ppsf_values",
    "price_drop_summary",
    "price_drops",
    "price_index",
    "seasonally_adjust",
    "traffic_summary",
]
