"""Trend charts for ``rf.market_trends``: a metric per market over the periods, and inventory."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
from matplotlib.figure import Figure

from realtyframes.analysis import TREND_METRICS
from realtyframes.plots._base import (
    METRIC_LABELS,
    PALETTE,
    _axes,
    _done,
    _fmt,
    _market_label,
    _need,
    _no_data,
    _style,
    _title,
)

__all__ = ["inventory_trend", "market_trend"]

_LINES = ("-", "--", "-.", ":")  # with the colours, so lines read in black-and-white print


def _dates(ax: Axes) -> None:
    locator = AutoDateLocator()
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))


def _yoy_text(value: float | None, metric: str) -> str:
    if value is None or not np.isfinite(value):
        return "YoY n/a"
    if metric.startswith("pct_") or metric == "avg_sale_to_list":
        return f"YoY {value * 100:+.1f} pts"
    return f"YoY {value:+.1%}"


def market_trend(
    trends: pd.DataFrame, metric: str = "median_sale_price", by: str | None = None, *,
    ax: Axes | None = None,
) -> Figure | Axes:  # fmt: skip
    """One line per market over the periods, the latest complete period's year-over-year change
    in the legend; blanked (thin-sample) periods are gaps.

    >>> rf.plot.market_trend(rf.market_trends(market, history, by="City"), "median_sale_price")  # doctest: +SKIP
    """
    if metric not in TREND_METRICS:
        raise ValueError(
            f"plot.market_trend(): `metric` must be one of {', '.join(TREND_METRICS)}, "
            f"got {metric!r}"
        )
    keys = list(trends.attrs.get("by") or []) if by is None else [by]
    _need(trends, ["period_end", metric, *keys], "trends", "market_trend")
    title_text, unit, kind = METRIC_LABELS[metric]
    fig, ax = _axes(ax)
    freq = {"W": "week", "M": "month", "Q": "quarter"}.get(trends.attrs.get("freq", "M"), "period")
    title = f"{title_text} by {freq}" + (f" and {', '.join(keys)}" if keys else "")
    if trends.empty or trends[metric].notna().sum() == 0:
        _no_data(ax, title)
        return _done(fig, ax)
    groups = trends.groupby(keys, sort=True) if keys else [("All", trends)]
    for i, (key, rows) in enumerate(groups):
        rows = rows.sort_values("period_end")
        complete = rows[rows["complete"]] if "complete" in rows.columns else rows
        yoy = (
            complete[f"{metric}_yoy"].iloc[-1]
            if f"{metric}_yoy" in rows and len(complete)
            else None
        )
        ax.plot(
            rows["period_end"],
            rows[metric].astype("float64"),
            color=PALETTE[i % len(PALETTE)],
            linestyle=_LINES[(i // len(PALETTE)) % len(_LINES)],
            marker="o",
            markersize=3,
            label=f"{_market_label(key)} ({_yoy_text(yoy, metric)})",
        )
    ax.yaxis.set_major_formatter(_fmt(kind))
    ax.set_ylabel(f"{title_text} ({unit})")
    _dates(ax)
    _style(ax, "y")
    _title(ax, title)
    ax.legend(frameon=False, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncols=2)
    return _done(fig, ax)


def inventory_trend(trends: pd.DataFrame, *, ax: Axes | None = None) -> Figure | Axes:
    """Active and pending listings at each period's end (lines) with new listings and homes
    sold in the period (bars); several markets are added up.

    >>> rf.plot.inventory_trend(rf.market_trends(market, history))  # doctest: +SKIP
    """
    columns = ["period_end", "active_listings", "pending_listings", "new_listings", "homes_sold"]
    _need(trends, columns, "trends", "inventory_trend")
    fig, ax = _axes(ax)
    title = "Inventory: listings at each period's end, and the period's flows"
    if trends.empty:
        _no_data(ax, title)
        return _done(fig, ax)
    total = trends.groupby("period_end", sort=True)[columns[1:]].sum()
    x = total.index
    width = (x[1] - x[0]) * 0.35 if len(x) > 1 else pd.Timedelta(days=10)
    ax.bar(
        x - width / 2,
        total["new_listings"],
        width=width,
        color=PALETTE[2],
        label="New listings (in the period)",
    )
    ax.bar(x + width / 2, total["homes_sold"], width=width, color=PALETTE[3], hatch="//",
           label="Homes sold (in the period)")  # fmt: skip
    ax.plot(x, total["active_listings"], color=PALETTE[0], marker="o", markersize=3,
            label="Active listings (at the end)")  # fmt: skip
    ax.plot(x, total["pending_listings"], color=PALETTE[1], linestyle="--", marker="s",
            markersize=3, label="Pending listings (at the end)")  # fmt: skip
    ax.yaxis.set_major_formatter(_fmt("count"))
    ax.set_ylabel("Listings (count)")
    _dates(ax)
    _style(ax, "y")
    _title(ax, title)
    ax.legend(frameon=False, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncols=2)
    return _done(fig, ax)
