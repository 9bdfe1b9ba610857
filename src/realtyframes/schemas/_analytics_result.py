"""The analytics result as DataFrames (``client.analytics(...)`` returns one)."""

from __future__ import annotations

from dataclasses import dataclass, fields

import pandas as pd

from realtyframes._display import bundle_html, bundle_repr
from realtyframes._spec import BREAKDOWNS as BREAKDOWNS  # the spec fact, re-exported


@dataclass(frozen=True)
class Analytics:
    """Website analytics for one period, one DataFrame per member of the API's result.

    - ``overview``: one row; visitors, pageviews, sessions, conversions, conversion_rate,
      bounce_rate, avg_session_seconds (rates are fractions).
    - ``timelines``: long: date (datetime64, UTC midnight), metric (category), value.
    - ``pages`` ... ``devices``: name, visitors, pageviews, conversions; one row per item.
    - ``utm``: long: dimension (source / medium / campaign), name, visitors, pageviews, conversions.

    >>> a = client.analytics(period="7d")          # doctest: +SKIP
    >>> a.overview.loc[0, "visitors"], a.devices   # doctest: +SKIP
    """

    period: str
    overview: pd.DataFrame
    timelines: pd.DataFrame
    pages: pd.DataFrame
    referrers: pd.DataFrame
    countries: pd.DataFrame
    browsers: pd.DataFrame
    os: pd.DataFrame
    devices: pd.DataFrame
    utm: pd.DataFrame

    def frames(self) -> dict[str, pd.DataFrame]:
        """Every member frame by name (for saving or iterating)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "period"}

    def __repr__(self) -> str:
        return bundle_repr("Analytics", self.period, self.frames())

    def _repr_html_(self) -> str:
        return bundle_html("Analytics", self.period, self.frames())
