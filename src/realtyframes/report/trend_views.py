"""The Trends section's further views (pure): the recent weeks, the seasonally adjusted months
and the price tiers of the whole market, from ``rf.market_trends`` and ``rf.seasonally_adjust``.

- :func:`weekly_view`: the last :data:`WEEKS_SHOWN` weekly or rolling 4-week periods (Redfin's
  4-week view), each starting on or after the day the data cover the market.
- :func:`seasonal_view`: the covered months, with ``<metric>_sa`` for :data:`SA_COLUMNS`; or the
  reason it cannot be adjusted (a one-line notice: the error's text).
- :func:`tier_view`: the three price tiers of the latest complete quarter, their YoY blanked
  unless the year-earlier quarter is covered and both quarters have ``min_sample`` sales.

>>> weekly_view(frames, options, covered)  # doctest: +SKIP
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from realtyframes.analysis import market_trends, seasonally_adjust
from realtyframes.errors import AnalysisInputError

if TYPE_CHECKING:
    from realtyframes.report.load import MarketFrames
    from realtyframes.report.options import MarketReportOptions

__all__ = ["SA_COLUMNS", "TIER_COLUMNS", "WEEKS_SHOWN", "seasonal_view", "tier_view", "weekly_view"]

#: Periods of the weekly view (half a year).
WEEKS_SHOWN = 26
#: The monthly series shown seasonally adjusted beside the raw ones.
SA_COLUMNS: tuple[str, ...] = ("homes_sold", "new_listings", "median_sale_price")
#: The columns of the tier table that carry a YoY (blanked by :func:`tier_view`'s rule).
TIER_COLUMNS: tuple[str, ...] = ("homes_sold", "median_sale_price")


def _history(frames: MarketFrames) -> pd.DataFrame | None:
    return frames.history if len(frames.history) else None


def _start(begin: pd.Timestamp, covered: pd.Timestamp | None, offset: pd.DateOffset) -> dt.date:
    """The first period start on or after ``begin`` and ``covered`` (a day, UTC)."""
    if covered is not None:
        begin = max(begin, covered.tz_convert(None).ceil("D"))
    return pd.Timestamp(offset.rollforward(begin)).date()


def weekly_view(
    frames: MarketFrames, options: MarketReportOptions, covered: pd.Timestamp | None
) -> pd.DataFrame | None:
    """The whole market's last :data:`WEEKS_SHOWN` periods at ``options.trends_freq`` ("W" or
    "4W"; None for "M" or without listings), each period starting on or after ``covered``."""
    freq = options.trends_freq
    if freq == "M" or frames.listings.empty:
        return None
    day = pd.Timestamp(options.day)
    begin = day - pd.Timedelta(weeks=WEEKS_SHOWN + 4)
    start = _start(begin, covered, pd.offsets.Week(weekday=0))
    if start > options.day:
        return None
    weeks = market_trends(frames.listings, _history(frames), freq=freq, start=start,
                          end=options.day, min_sample=options.min_sample)  # fmt: skip
    shown = weeks.tail(WEEKS_SHOWN).reset_index(drop=True)
    shown.attrs = dict(weeks.attrs)
    return shown


def seasonal_view(
    frames: MarketFrames, options: MarketReportOptions, covered: pd.Timestamp | None
) -> tuple[pd.DataFrame | None, str | None]:
    """The whole market by month from the first whole covered month, with ``<metric>_sa`` of
    :data:`SA_COLUMNS`; or (None, why not): the covered months and the
    :class:`AnalysisInputError`'s text when they are too few for a seasonal adjustment (3
    years). Only covered months go in: a month in the data's build-up (listings entered before
    the data began are missing) would bend the seasonal pattern of its month of the year."""
    if frames.listings.empty:
        return None, None
    entered = pd.to_datetime(frames.listings["OriginalEntryTimestamp"], utc=True).min()
    start = _start(entered.tz_convert(None), covered, pd.offsets.MonthBegin())
    months = market_trends(frames.listings, _history(frames), freq="M", start=start,
                           end=options.day, min_sample=options.min_sample)  # fmt: skip
    try:
        return seasonally_adjust(months, list(SA_COLUMNS)), None
    except AnalysisInputError as error:
        done = months[months["complete"].astype(bool).to_numpy()]
        span = (
            f" ({pd.Timestamp(done['period_begin'].min()):%b %Y} to "
            f"{pd.Timestamp(done['period_begin'].max()):%b %Y})"
            if len(done)
            else ""
        )
        return None, (
            f"the data cover {len(done)} complete months{span}, from 180 days after the oldest "
            f"listing's entry; the analysis says: {error}"
        )


def tier_view(
    frames: MarketFrames, options: MarketReportOptions, covered: pd.Timestamp | None
) -> pd.DataFrame | None:
    """The bottom, middle and top tiers of the latest complete quarter (rows in that order; the
    sale band edges, n and YoY of :data:`TIER_COLUMNS`); a YoY only where the year-earlier
    quarter starts on or after ``covered`` and both quarters have ``min_sample`` sales."""
    if frames.listings.empty:
        return None
    quarter = pd.offsets.QuarterBegin(startingMonth=1)
    day = pd.Timestamp(options.day)
    begin = quarter.rollback(day - pd.DateOffset(months=18))
    start = _start(begin, covered, quarter)
    quarters = market_trends(frames.listings, _history(frames), freq="Q", start=start,
                             end=options.day, min_sample=options.min_sample, tiers=True)  # fmt: skip
    done = quarters[quarters["complete"].astype(bool).to_numpy()]
    if done.empty:
        return None
    latest = done[done["period_begin"] == done["period_begin"].max()]
    order = {"bottom": 0, "middle": 1, "top": 2}
    shown = latest.sort_values("tier", key=lambda s: s.map(order)).reset_index(drop=True).copy()
    year_ago = pd.Timestamp(shown["period_begin"].iloc[0]) - pd.DateOffset(years=1)
    earlier = quarters[(quarters["period_begin"] == year_ago).to_numpy()].set_index("tier")
    for column in TIER_COLUMNS:
        n_now = shown["median_sale_price_n"].to_numpy(dtype="float64")
        n_then = earlier["median_sale_price_n"].reindex(shown["tier"]).to_numpy(dtype="float64")
        ok = (n_now >= options.min_sample) & (n_then >= options.min_sample)
        ok &= covered is not None and year_ago >= covered.tz_convert(None)
        shown[f"{column}_yoy"] = np.where(
            ok, shown[f"{column}_yoy"].to_numpy(dtype="float64"), np.nan
        )
    shown.attrs = dict(quarters.attrs)
    return shown


def trend_views(
    frames: MarketFrames, options: MarketReportOptions, covered: pd.Timestamp | None
) -> dict[str, Any]:
    """The fields of :class:`MarketReport` these views fill."""
    seasonal, notice = seasonal_view(frames, options, covered)
    return {
        "weekly": weekly_view(frames, options, covered),
        "seasonal": seasonal,
        "seasonal_notice": notice,
        "tiers": tier_view(frames, options, covered),
    }
