"""Analytics frame models: overview (one row), timelines (long), breakdowns, utm (long).

Members per design.md: overview ``visitors, pageviews, sessions, conversions, conversion_rate,
bounce_rate, avg_session_seconds`` (rates are fractions); timelines ``metric -> [{date, value}]``;
a breakdown item ``name, visitors, pageviews, conversions``; utm ``source|medium|campaign ->
breakdown items``.

>>> AnalyticsUtm.to_schema().columns["dimension"].metadata["categories"]
('source', 'medium', 'campaign')
"""

from __future__ import annotations

from functools import partial

import pandas as pd
import pandera.pandas as pa
from pandera.typing import Series

from realtyframes._spec import OVERVIEW_METRICS
from realtyframes.schemas._listing import Count, Enum, Stamp, Str, Text, UtcStamp

__all__ = [
    "ANALYTICS_MODELS",
    "OVERVIEW_METRICS",
    "UTM_DIMENSIONS",
    "AnalyticsBreakdown",
    "AnalyticsOverview",
    "AnalyticsTimeline",
    "AnalyticsUtm",
]

#: Members of the ``utm`` object.
UTM_DIMENSIONS: tuple[str, ...] = ("source", "medium", "campaign")

Rate = partial(pa.Field, nullable=True, in_range={"min_value": 0, "max_value": 1})


class AnalyticsOverview(pa.DataFrameModel):
    """The period's summary metrics, one row. Counts >= 0; rates are fractions in [0, 1]."""

    visitors: Series[pd.Int64Dtype] = Count()
    pageviews: Series[pd.Int64Dtype] = Count()
    sessions: Series[pd.Int64Dtype] = Count()
    conversions: Series[pd.Int64Dtype] = Count()
    conversion_rate: Series[float] = Rate()
    bounce_rate: Series[float] = Rate()
    avg_session_seconds: Series[float] = Count()

    class Config:
        strict = False
        coerce = False


class AnalyticsTimeline(pa.DataFrameModel):
    """Per-day series, long: one row per (metric, date).

    ``metric`` is categorical: the overview metrics first, then any metric the server adds (an
    added metric is kept, not quarantined).
    """

    date: Series[UtcStamp] = Stamp(nullable=False)
    metric: Series[pd.CategoricalDtype] = pa.Field(
        nullable=False, metadata={"categories": OVERVIEW_METRICS, "open": True}
    )
    value: Series[float] = pa.Field(nullable=True)

    class Config:
        strict = False
        coerce = False


class AnalyticsBreakdown(pa.DataFrameModel):
    """One breakdown (pages, referrers, countries, browsers, os, devices): one row per item."""

    name: Series[Str] = Text()
    visitors: Series[pd.Int64Dtype] = Count()
    pageviews: Series[pd.Int64Dtype] = Count()
    conversions: Series[pd.Int64Dtype] = Count()

    class Config:
        strict = False
        coerce = False


class AnalyticsUtm(pa.DataFrameModel):
    """UTM breakdown, long: one row per (dimension, name)."""

    dimension: Series[pd.CategoricalDtype] = Enum(UTM_DIMENSIONS, nullable=False)
    name: Series[Str] = Text()
    visitors: Series[pd.Int64Dtype] = Count()
    pageviews: Series[pd.Int64Dtype] = Count()
    conversions: Series[pd.Int64Dtype] = Count()

    class Config:
        strict = False
        coerce = False


#: The model of each member frame of :class:`~realtyframes.schemas.Analytics`.
ANALYTICS_MODELS: dict[str, type[pa.DataFrameModel]] = {
    "overview": AnalyticsOverview,
    "timelines": AnalyticsTimeline,
    "pages": AnalyticsBreakdown,
    "referrers": AnalyticsBreakdown,
    "countries": AnalyticsBreakdown,
    "browsers": AnalyticsBreakdown,
    "os": AnalyticsBreakdown,
    "devices": AnalyticsBreakdown,
    "utm": AnalyticsUtm,
}
