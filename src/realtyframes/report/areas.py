"""The client edition's areas: which areas a report covers and, per area, what its page shows.

:func:`client_areas` picks the areas (the cities asked for; else the ``areas`` largest markets
by ``by``; else the whole market) and computes each one's :class:`AreaUpdate`: its Local Market
Update table, price change, summary sentences, the months and quarters its charts draw, its
biggest price cuts and its active listings (for the map). Pure: no I/O.

>>> areas = client_areas(listings, history, drops, markets, options, covered)  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from realtyframes.analysis import REFERENCE_LABEL, market_trends
from realtyframes.report.local import PriceChange, latest_month, local_update, price_change
from realtyframes.report.options import MarketReportOptions
from realtyframes.report.summary import plain_summary

__all__ = ["TOP_CUTS", "AreaUpdate", "area_keys", "client_areas"]

#: Price cuts listed per area page.
TOP_CUTS = 5


@dataclass(frozen=True)
class AreaUpdate:
    """One area's page: ``name``; ``table`` (:func:`~realtyframes.report.local.local_update`);
    ``change`` (:func:`~realtyframes.report.local.price_change`); ``summary`` (sentences);
    ``months`` (``rf.market_trends(freq="M")``, the 24 months to the latest whole month) and
    ``quarters`` (``freq="Q"``, the 8 quarters to the latest whole one); ``cuts`` (the biggest
    cuts of its active listings in the window); ``active`` (its active listings)."""

    name: str
    table: pd.DataFrame
    change: PriceChange
    summary: list[str]
    months: pd.DataFrame
    quarters: pd.DataFrame
    cuts: pd.DataFrame = field(repr=False)
    active: pd.DataFrame = field(repr=False)


def area_keys(markets: list[Any], options: MarketReportOptions) -> list[Any] | None:
    """The areas of a client edition: the cities asked for (by City), else with ``areas`` the
    markets compared (the ``areas`` largest by ``by``), else None (the whole market)."""
    if options.cities and options.by == "City":
        return list(options.cities)
    if options.areas:
        return list(markets)
    return None


def _part(frame: pd.DataFrame, by: str | None, key: Any) -> pd.DataFrame:
    if by is None or frame.empty or by not in frame.columns:
        return frame
    return frame[(frame[by].astype("str") == str(key)).to_numpy()].reset_index(drop=True)


def client_areas(
    listings: pd.DataFrame,
    history: pd.DataFrame | None,
    drops: pd.DataFrame,
    markets: list[Any],
    options: MarketReportOptions,
    covered_from: pd.Timestamp | None,
) -> dict[str, AreaUpdate]:
    """Each area's :class:`AreaUpdate`, in page order (see the module)."""
    keys = area_keys(markets, options)
    by = options.by if keys is not None else None
    month = latest_month(options.day)
    months = market_trends(listings, history, freq="M", by=by,
                           start=(month - pd.DateOffset(months=23)).date(),
                           end=(month + pd.offsets.MonthEnd(0)).date(),
                           min_sample=options.min_sample)  # fmt: skip
    tables = local_update(listings, history, as_of=options.day, by=by, areas=keys,
                          min_sample=options.min_sample, covered_from=covered_from,
                          months=months)  # fmt: skip
    quarter = (pd.Timestamp(options.day) + pd.Timedelta(days=1)).to_period("Q") - 1
    q_start = (quarter - 7).start_time.date()
    quarters = market_trends(listings, history, freq="Q", by=by, start=q_start,
                             end=quarter.end_time.date(), min_sample=options.min_sample)  # fmt: skip
    status = listings["StandardStatus"].astype("str").to_numpy() if len(listings) else []
    active_all = listings[status == "Active"] if len(listings) else listings
    out = {}
    for key, table in tables.items():
        area = _part(listings, by, key)
        change = price_change(area, as_of=options.day, min_sample=options.min_sample)
        cuts = _part(drops, by, key).sort_values("drop_pct", ascending=False, kind="stable")
        name = str(key) if key != "All markets" else REFERENCE_LABEL
        out[name] = AreaUpdate(
            name=name,
            table=table,
            change=change,
            summary=plain_summary(table, change),
            months=_part(months, by, key),
            quarters=_part(quarters, by, key),
            cuts=cuts.head(TOP_CUTS).reset_index(drop=True),
            active=_part(active_all, by, key),
        )
    return out
