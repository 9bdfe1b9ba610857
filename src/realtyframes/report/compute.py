"""Computing a market report (pure): the analysis functions on :class:`MarketFrames`.

``rf.market_summary`` / ``compare_markets`` / ``price_drops`` / ``price_drop_summary`` /
``traffic_summary`` / ``lead_funnel`` -> :class:`MarketReport`. No I/O: the same frames and
options give the same report.

>>> report = compute_market_report(frames, MarketReportOptions(as_of="2026-06-30"))  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from realtyframes.analysis import (
    REFERENCE_LABEL,
    SALE_TYPES,
    LeadFunnel,
    TrafficSummary,
    compare_markets,
    lead_funnel,
    market_summary,
    price_drop_summary,
    price_drops,
    traffic_summary,
)
from realtyframes.report.load import MarketFrames
from realtyframes.report.options import MarketReportOptions

__all__ = ["MarketReport", "compute_market_report", "pick_markets"]


@dataclass(frozen=True)
class MarketReport:
    """Everything the report shows, computed by the analysis functions from :class:`MarketFrames`.

    - ``summary``: ``market_summary(listings, by, as_of, window_days, compare_previous=True)``
    - ``comparison``: ``compare_markets(listings, markets, by, as_of, window_days,
      compare_previous=True)`` for the ``markets`` shown (plus "All markets")
    - ``drops``: ``price_drops(listings, changes, since=window_start)``
    - ``drop_summary``: ``price_drop_summary(drops, by, listings=listings)``
    - ``traffic``: ``traffic_summary(analytics)`` (None without analytics)
    - ``funnel``: ``lead_funnel(contacts)`` (None without contacts)
    """

    options: MarketReportOptions
    frames: MarketFrames
    markets: list[Any]
    summary: pd.DataFrame
    comparison: pd.DataFrame
    drops: pd.DataFrame
    drop_summary: pd.DataFrame
    traffic: TrafficSummary | None
    funnel: LeadFunnel | None
    headline: dict[str, Any] = field(default_factory=dict)


def pick_markets(summary: pd.DataFrame, options: MarketReportOptions) -> list[Any]:
    """The markets shown side by side: the given cities (by City), else the largest markets by
    active listings plus homes sold in the window (ties by name), at most ``max_markets``."""
    if options.cities and options.by == "City":
        return list(options.cities)[: options.max_markets]
    if summary.empty:
        return []
    size = (summary["active_listings"] + summary["homes_sold"]).astype("int64")
    order = pd.DataFrame({"size": size.to_numpy(), "name": [str(k) for k in summary.index]})
    order.index = summary.index
    order = order.sort_values(["size", "name"], ascending=[False, True], kind="stable")
    return list(order.index[: options.max_markets])


def _of_active_sales(listings: pd.DataFrame, changes: pd.DataFrame) -> pd.DataFrame:
    """The changes of the active for-sale listings (the price-drop tables' population)."""
    if listings.empty or changes.empty:
        return changes
    active = listings["StandardStatus"].astype("str").to_numpy() == "Active"
    sale = listings["PropertyType"].astype("str").isin(SALE_TYPES).to_numpy()
    ids = listings.loc[active & sale, "ListingId"].astype("str")
    return changes[changes["ListingId"].astype("str").isin(set(ids)).to_numpy()]


def compute_market_report(frames: MarketFrames, options: MarketReportOptions) -> MarketReport:
    """Compute every table of the report with the analysis functions (no I/O).

    >>> report = compute_market_report(frames, MarketReportOptions(as_of="2026-06-30"))  # doctest: +SKIP
    >>> report.comparison.loc["median_sale_price", "All markets"]  # doctest: +SKIP
    """
    as_of = options.day
    days = float(options.window_days)
    listings = frames.listings
    summary = market_summary(
        listings, by=options.by, as_of=as_of, window_days=days, compare_previous=True
    )
    markets = pick_markets(summary, options)
    comparison = compare_markets(
        listings,
        markets=markets,
        by=options.by,
        as_of=as_of,
        window_days=days,
        compare_previous=True,
    )
    drops = price_drops(
        listings, _of_active_sales(listings, frames.changes), since=summary.attrs["window_start"]
    )
    drop_summary = price_drop_summary(drops, by=options.by, listings=listings)
    traffic = traffic_summary(frames.analytics) if frames.analytics is not None else None
    funnel = lead_funnel(frames.contacts) if frames.contacts is not None else None

    ref = comparison[REFERENCE_LABEL]
    headline: dict[str, Any] = {
        "active_listings": ref["active_listings"],
        "new_listings": ref["new_listings"],
        "homes_sold": ref["homes_sold"],
        "median_sale_price": ref["median_sale_price"],
        "median_dom": ref["median_dom"],
        "months_of_supply": ref["months_of_supply"],
        "price_drops": len(drops),
        "median_drop_pct": float(drops["drop_pct"].median()) if len(drops) else np.nan,
    }
    if traffic is not None:
        headline["visitors"] = traffic.headline.loc["visitors", "value"]
        headline["conversion_rate"] = traffic.headline.loc["conversion_rate", "value"]
    if funnel is not None:
        headline["contacts"] = int(funnel.by_stage["contacts"].sum())
        headline["new_leads"] = int(funnel.weekly["new_leads"].sum()) if len(funnel.weekly) else 0
    return MarketReport(
        options=options,
        frames=frames,
        markets=markets,
        summary=summary,
        comparison=comparison,
        drops=drops,
        drop_summary=drop_summary,
        traffic=traffic,
        funnel=funnel,
        headline=headline,
    )
