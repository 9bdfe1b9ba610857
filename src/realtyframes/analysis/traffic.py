"""Website traffic: headline numbers, change against a previous period, top-N breakdowns."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from realtyframes._display import bundle_html, bundle_repr
from realtyframes._spec import OVERVIEW_METRICS
from realtyframes.analysis._common import (
    AnalysisInputError,
    check_columns,
    check_frame,
    safe_div,
    to_float,
    to_utc,
)
from realtyframes.schemas import BREAKDOWNS

#: Headline metrics of :class:`TrafficSummary`, in order.
TRAFFIC_METRICS: tuple[str, ...] = (
    "visitors",
    "pageviews",
    "sessions",
    "views_per_visit",
    "bounce_rate",
    "visit_duration_seconds",
    "conversions",
    "conversion_rate",
)
#: Headline metrics that are fractions (their ``change`` is in fraction points).
TRAFFIC_RATES: tuple[str, ...] = ("bounce_rate", "conversion_rate")

_BREAKDOWN_COLUMNS = ("name", "visitors", "pageviews", "conversions")
_UTM_DIMENSIONS = ("source", "medium", "campaign")


@dataclass(frozen=True)
class TrafficSummary:
    """What :func:`traffic_summary` returns.

    - ``period``: the analytics period ('30d' ...), None if unknown.
    - ``headline``: indexed by metric (visitors, pageviews, sessions, views_per_visit, bounce_rate,
      visit_duration_seconds, conversions, conversion_rate); column ``value``, and with a previous
      period ``previous``, ``change`` (value - previous) and ``pct_change`` (value / previous - 1).
    - ``timeline``: one row per day (index ``date``, UTC), one column per timeline metric.
    - ``breakdowns``: per breakdown (pages, referrers, countries, browsers, os, devices) its top-N
      rows: name, visitors, pageviews, conversions, ``share`` (of all the period's visitors, the
      overview's ``visitors``), ``conversion_rate`` (conversions / visitors); most visitors first.
    - ``utm``: the same per UTM dimension (source, medium, campaign), long, with ``dimension``.
    """

    period: str | None
    headline: pd.DataFrame
    timeline: pd.DataFrame
    breakdowns: dict[str, pd.DataFrame] = field(default_factory=dict)
    utm: pd.DataFrame = field(default_factory=pd.DataFrame)

    def __getitem__(self, name: str) -> pd.DataFrame:
        """A breakdown's top-N table by name (``summary["referrers"]``)."""
        return self.breakdowns[name]

    def _members(self) -> dict[str, pd.DataFrame]:
        return {"headline": self.headline, "timeline": self.timeline, **self.breakdowns,
                "utm": self.utm}  # fmt: skip

    def __repr__(self) -> str:
        return bundle_repr("TrafficSummary", self.period, self._members())

    def _repr_html_(self) -> str:
        return bundle_html("TrafficSummary", self.period, self._members())


def _member(analytics: Any, name: str) -> Any:
    if isinstance(analytics, Mapping):
        return analytics.get(name)
    return getattr(analytics, name, None)


def _headline_values(analytics: Any, arg: str, func: str) -> pd.Series:
    overview = _member(analytics, "overview")
    if overview is None:
        raise AnalysisInputError(f"{func}(): `{arg}` has no `overview` frame")
    overview = check_frame(overview, f"{arg}.overview", func)
    check_columns(overview, OVERVIEW_METRICS, f"{arg}.overview", func)
    if len(overview) != 1:
        raise AnalysisInputError(
            f"{func}(): `{arg}.overview` must have exactly one row, has {len(overview)}"
        )
    v = {c: float(to_float(overview[c], c, func).iloc[0]) for c in OVERVIEW_METRICS}
    return pd.Series(
        {
            "visitors": v["visitors"],
            "pageviews": v["pageviews"],
            "sessions": v["sessions"],
            "views_per_visit": float(safe_div(v["pageviews"], v["sessions"])),
            "bounce_rate": v["bounce_rate"],
            "visit_duration_seconds": v["avg_session_seconds"],
            "conversions": v["conversions"],
            "conversion_rate": v["conversion_rate"],
        },
        dtype="float64",
    )


def _counts(values: pd.Series | pd.DataFrame) -> pd.Series | pd.DataFrame:
    """Counts as nullable integers when every known value is whole (they are counts), else as
    they came (a fractional "count" is kept visible rather than rounded)."""
    numbers = values.to_numpy(dtype="float64", na_value=np.nan)
    known = numbers[~np.isnan(numbers)]
    if known.size and not np.all(known == np.round(known)):
        return values
    return values.astype("Int64")


def _top(frame: pd.DataFrame, top_n: int, total: float, label: str, func: str) -> pd.DataFrame:
    frame = check_frame(frame, label, func)
    check_columns(frame, _BREAKDOWN_COLUMNS, label, func)
    out = pd.DataFrame({"name": frame["name"].astype("str").to_numpy()})
    for c in ("visitors", "pageviews", "conversions"):
        out[c] = to_float(frame[c], c, func).to_numpy()
    out["share"] = safe_div(out["visitors"], total)  # of all visitors: the stated denominator
    out["conversion_rate"] = safe_div(out["conversions"], out["visitors"])
    out = out.sort_values(["visitors", "name"], ascending=[False, True], kind="stable")
    out = out.head(top_n).reset_index(drop=True)
    for c in ("visitors", "pageviews", "conversions"):
        out[c] = _counts(out[c])
    return out


def traffic_summary(analytics: Any, previous: Any = None, top_n: int = 10) -> TrafficSummary:
    """Headline traffic numbers, their change against ``previous``, and top-N tables.

    ``analytics`` (and ``previous``) is an ``rf.Analytics`` (or any object / mapping with its
    frames: ``overview`` required; ``timelines``, breakdowns and ``utm`` used when present).
    Views per visit = pageviews / sessions; bounce rate, visit duration (avg_session_seconds) and
    conversion rate are taken from the overview as reported. Returns a :class:`TrafficSummary`.

    >>> s = rf.traffic_summary(client.analytics(period="30d"), top_n=5)  # doctest: +SKIP
    >>> s.headline, s.breakdowns["referrers"]  # doctest: +SKIP
    """
    func = "traffic_summary"
    if not isinstance(top_n, int) or isinstance(top_n, bool) or top_n < 1:
        raise AnalysisInputError(f"{func}(): `top_n` must be a positive integer, got {top_n!r}")
    current = _headline_values(analytics, "analytics", func)
    headline = pd.DataFrame({"value": current})
    if previous is not None:
        before = _headline_values(previous, "previous", func)
        headline["previous"] = before
        headline["change"] = current - before
        headline["pct_change"] = safe_div(current - before, before)
    headline.index.name = "metric"

    timeline = pd.DataFrame(index=pd.DatetimeIndex([], tz="UTC", name="date"))
    timelines = _member(analytics, "timelines")
    if timelines is not None:
        label = "analytics.timelines"
        check_frame(timelines, label, func)
        check_columns(timelines, ["date", "metric", "value"], label, func)
        long = pd.DataFrame(
            {
                "date": to_utc(timelines["date"], "date", func).to_numpy(),
                "metric": timelines["metric"].astype("str").to_numpy(),
                "value": to_float(timelines["value"], "value", func).to_numpy(),
            }
        )
        timeline = long.groupby(["date", "metric"], sort=True)["value"].sum().unstack("metric")
        timeline.columns.name = None
        timeline.index = pd.DatetimeIndex(timeline.index, name="date")

    visitors = float(current["visitors"])  # the denominator of every share
    breakdowns = {}
    for name in BREAKDOWNS:
        frame = _member(analytics, name)
        if frame is not None:
            breakdowns[name] = _top(frame, top_n, visitors, f"analytics.{name}", func)

    utm_parts = []
    utm = _member(analytics, "utm")
    if utm is not None:
        check_frame(utm, "analytics.utm", func)
        check_columns(utm, ["dimension", *_BREAKDOWN_COLUMNS], "analytics.utm", func)
        dims = utm["dimension"].astype("str")
        order = [d for d in _UTM_DIMENSIONS if d in set(dims)]
        order += sorted(set(dims) - set(order))
        for dim in order:
            part = _top(utm[(dims == dim).to_numpy()], top_n, visitors, "analytics.utm", func)
            part.insert(0, "dimension", dim)
            utm_parts.append(part)
    columns = ["dimension", *_BREAKDOWN_COLUMNS, "share", "conversion_rate"]
    utm_top = (
        pd.concat(utm_parts, ignore_index=True) if utm_parts else pd.DataFrame(columns=columns)
    )
    period = _member(analytics, "period")
    return TrafficSummary(
        period=None if period is None else str(period),
        headline=headline,
        timeline=timeline.apply(_counts),
        breakdowns=breakdowns,
        utm=utm_top.astype({"share": "float64", "conversion_rate": "float64"}).assign(
            **{c: _counts(utm_top[c]) for c in _BREAKDOWN_COLUMNS[1:]}
        ),
    )
