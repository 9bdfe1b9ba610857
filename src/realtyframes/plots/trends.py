"""Trend charts for ``rf.market_trends``: a metric per market over the periods, and inventory."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.dates import AutoDateLocator, ConciseDateFormatter, date2num
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

__all__ = [
    "HIGHLIGHTED",
    "MARGIN",
    "PARTIAL_LABEL",
    "PARTIAL_STYLE",
    "fit_to_data",
    "inventory_trend",
    "market_trend",
]


_LINES = ("-", "--", "-.", ":")  # with the colours, so lines read in black-and-white print


def _dates(ax: Axes) -> None:
    locator = AutoDateLocator()
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))


#: Margin around a time chart's data, as a share of their span (matplotlib's own default).
MARGIN = 0.05


def fit_to_data(ax: Axes, periods: pd.Series, values: pd.Series) -> None:
    """Set ``ax``'s limits from the data alone: the periods' first to last start and the finite
    values' least to greatest, each with :data:`MARGIN` of its span (on x at least half a week;
    for a constant, 5 % of its size, or 0 to 1 for zeros; never below 0 for data that are not).
    A chart never draws axes outside its data: left to matplotlib, one point spans two years each
    side, and one constant ±5.5 % around 0 (a share "below 0 %").

    >>> fit_to_data(ax, trends["period_begin"], trends["homes_sold"])  # doctest: +SKIP
    """
    stamps = pd.to_datetime(periods).dropna()
    if len(stamps):
        first, last = stamps.min(), stamps.max()
        pad = max((last - first) * MARGIN, pd.Timedelta(days=3.5))
        ax.set_xlim(date2num((first - pad).to_pydatetime()), date2num((last + pad).to_pydatetime()))
    numbers = pd.to_numeric(values, errors="coerce").astype("float64").to_numpy()
    finite = numbers[np.isfinite(numbers)]
    if len(finite):
        low, high = float(finite.min()), float(finite.max())
        span = high - low
        pad = span * MARGIN if span > 0 else (abs(high) * MARGIN if high != 0 else 1.0)
        bottom = low - pad if low < 0 else max(low - pad, 0.0)
        ax.set_ylim(bottom, high + pad if span > 0 or high != 0 else 1.0)


def _yoy_text(value: float | None, metric: str) -> str:
    if value is None or not np.isfinite(value):
        return "YoY n/a"
    if metric.startswith("pct_") or metric == "avg_sale_to_list":
        return f"YoY {value * 100:+.1f} pts"
    return f"YoY {value:+.1%}"


#: Markets drawn in colour (with their YoY in the legend); the others are thin grey lines.
HIGHLIGHTED = 4
#: How the partial (current) period is drawn: a hollow marker, reached by a dotted line.
PARTIAL_STYLE: dict[str, Any] = {"markerfacecolor": "white", "linestyle": ":"}
PARTIAL_LABEL = "period so far (not over: hollow, dotted)"


def _split(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Complete periods, and the partial one(s) joined to the last complete period (so the
    dotted line starts where the solid one ends)."""
    if "complete" not in rows.columns or bool(rows["complete"].all()):
        return rows, rows.iloc[0:0]
    done = rows[rows["complete"].astype(bool)]
    partial = rows[~rows["complete"].astype(bool)]
    return done, pd.concat([done.tail(1), partial])


def _size(rows: pd.DataFrame, metric: str) -> float:
    """How much a market weighs when choosing which to highlight: its sample, else its points."""
    n = f"{metric}_n"
    values = rows[n] if n in rows.columns else rows[metric].notna()
    return float(pd.to_numeric(values, errors="coerce").fillna(0).sum())


def _groups(
    trends: pd.DataFrame, metric: str, keys: list[str], highlight: int | Sequence[Hashable]
) -> tuple[list[tuple[Any, pd.DataFrame]], dict[int, int]]:
    """The markets' rows (sorted by key), and the colour rank of each highlighted market: the
    ``highlight`` largest by ``metric``'s sample, or the markets named, in that order."""
    rows = trends.sort_values("period_begin", kind="stable")  # each market's rows in order
    rows.attrs = {}  # pandas deep-copies attrs on every step: half of a chart's time
    groups = list(rows.groupby(keys, sort=True)) if keys else [("All", rows)]
    if isinstance(highlight, int):
        ranked = sorted(range(len(groups)), key=lambda i: -_size(groups[i][1], metric))
        return groups, {g: rank for rank, g in enumerate(ranked[:highlight])}
    named = {key: rank for rank, key in enumerate(highlight)}
    plain = [k[0] if isinstance(k, tuple) and len(k) == 1 else k for k, _ in groups]
    return groups, {i: named[key] for i, key in enumerate(plain) if key in named}


def _lines(
    ax: Axes, groups: list[tuple[Any, pd.DataFrame]], colour: dict[int, int], metric: str,
    label: Any,
) -> bool:  # fmt: skip
    """Each market's line on ``ax`` (``label(key, complete rows)`` names a highlighted one; rows
    in period order, as :func:`_groups` gives them); True when a partial period was drawn."""
    partial_seen = False
    for i, (key, rows) in enumerate(groups):
        done, partial = _split(rows)
        style: dict[str, Any]
        if i in colour:
            text = label(key, done)
            style = {"color": PALETTE[colour[i] % len(PALETTE)], "linewidth": 1.8, "zorder": 3}
        else:
            text, style = "_nolegend_", {"color": "0.75", "linewidth": 0.9, "zorder": 2}
        ax.plot(done["period_begin"], done[metric].astype("float64"), marker="o",
                markersize=3, label=text, **style)  # fmt: skip
        if len(partial):
            partial_seen = True
            ax.plot(partial["period_begin"], partial[metric].astype("float64"), marker="o",
                    markersize=4, label="_nolegend_", **{**style, **PARTIAL_STYLE})  # fmt: skip
    return partial_seen


def _keys(trends: pd.DataFrame, by: str | None, metrics: Sequence[str], func: str) -> list[str]:
    for metric in metrics:
        if metric not in TREND_METRICS:
            raise ValueError(
                f"plot.{func}(): `metric` must be one of {', '.join(TREND_METRICS)}, got {metric!r}"
            )
    keys = list(trends.attrs.get("by") or []) if by is None else [by]
    _need(trends, ["period_begin", *metrics, *keys], "trends", func)
    return keys


def _period_word(trends: pd.DataFrame) -> str:
    return {"W": "week", "4W": "4-week period", "M": "month", "Q": "quarter"}.get(
        trends.attrs.get("freq", "M"), "period"
    )


def market_trend(
    trends: pd.DataFrame, metric: str = "median_sale_price", by: str | None = None, *,
    ax: Axes | None = None, highlight: int | Sequence[Hashable] = HIGHLIGHTED,
) -> Figure | Axes:  # fmt: skip
    """One line per market over the periods, each point at its period's start (its own tick
    label), the latest complete period's year-over-year change in the legend; the period not
    over yet is a hollow marker on a dotted line; thin-sample periods are gaps. The ``highlight``
    largest markets (or the markets named, in this order: the same colour for a market on every
    chart) are in colour, the others thin grey lines behind them.

    >>> rf.plot.market_trend(rf.market_trends(market, history, by="City"), "median_sale_price")  # doctest: +SKIP
    """
    keys = _keys(trends, by, [metric], "market_trend")
    title_text, unit, kind = METRIC_LABELS[metric]
    fig, ax = _axes(ax)
    title = f"{title_text} by {_period_word(trends)}" + (f" and {', '.join(keys)}" if keys else "")
    if trends.empty or trends[metric].notna().sum() == 0:
        _no_data(ax, title)
        return _done(fig, ax)
    groups, colour = _groups(trends, metric, keys, highlight)

    def label(key: Any, done: pd.DataFrame) -> str:
        yoy = done[f"{metric}_yoy"].iloc[-1] if f"{metric}_yoy" in done and len(done) else None
        return f"{_market_label(key)} ({_yoy_text(yoy, metric)})"

    partial_seen = _lines(ax, groups, colour, metric, label)
    others = len(groups) - len(colour)
    if others:
        ax.plot([], [], color="0.75", linewidth=0.9, label=f"{others} other markets (grey)")
    if partial_seen:
        ax.plot([], [], color="0.3", marker="o", label=PARTIAL_LABEL, **PARTIAL_STYLE)
    ax.yaxis.set_major_formatter(_fmt(kind))
    ax.set_ylabel(f"{title_text} ({unit})")
    _dates(ax)
    fit_to_data(ax, trends["period_begin"], trends[metric])
    _style(ax, "y")
    _title(ax, title)
    ax.legend(frameon=False, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncols=2)
    return _done(fig, ax)


def inventory_trend(trends: pd.DataFrame, *, ax: Axes | None = None) -> Figure | Axes:
    """Active and pending listings at each period's end (lines) with new listings and homes
    sold in the period (bars), each period drawn at its start (its own tick label); several
    markets are added up. The period not over yet has pale bars and hollow markers ("so far").

    >>> rf.plot.inventory_trend(rf.market_trends(market, history))  # doctest: +SKIP
    """
    columns = ["period_begin", "active_listings", "pending_listings", "new_listings", "homes_sold"]
    _need(trends, columns, "trends", "inventory_trend")
    fig, ax = _axes(ax)
    title = "Inventory: listings at each period's end, and the period's flows"
    if trends.empty:
        _no_data(ax, title)
        return _done(fig, ax)
    total = trends.groupby("period_begin", sort=True)[columns[1:]].sum()
    if "complete" in trends.columns:
        total["complete"] = trends.groupby("period_begin", sort=True)["complete"].all()
    x = total.index
    width = (x[1] - x[0]) * 0.35 if len(x) > 1 else pd.Timedelta(days=10)
    done, partial = _split(total.reset_index())
    last = partial.iloc[1:]  # the partial periods alone (the bars)
    for column, offset, colour, hatch, text in (
        ("new_listings", -0.5, PALETTE[2], None, "New listings (in the period)"),
        ("homes_sold", 0.5, PALETTE[3], "//", "Homes sold (in the period)"),
    ):
        ax.bar(done["period_begin"] + width * offset, done[column], width=width, color=colour,
               hatch=hatch, label=text)  # fmt: skip
        if len(last):
            ax.bar(last["period_begin"] + width * offset, last[column], width=width, color=colour,
                   hatch=hatch, alpha=0.35, label="_nolegend_")  # fmt: skip
    for column, colour, line, marker, text in (
        ("active_listings", PALETTE[0], "-", "o", "Active listings (at the end)"),
        ("pending_listings", PALETTE[1], "--", "s", "Pending listings (at the end)"),
    ):
        ax.plot(done["period_begin"], done[column], color=colour, linestyle=line, marker=marker,
                markersize=3, label=text)  # fmt: skip
        if len(partial):
            ax.plot(partial["period_begin"], partial[column], color=colour, marker=marker,
                    markersize=4, label="_nolegend_", **PARTIAL_STYLE)  # fmt: skip
    if len(partial):
        ax.plot(
            [], [], color="0.3", marker="o", label=PARTIAL_LABEL + "; pale bars", **PARTIAL_STYLE
        )
    ax.yaxis.set_major_formatter(_fmt("count"))
    ax.set_ylabel("Listings (count)")
    _dates(ax)
    _style(ax, "y")
    _title(ax, title)
    ax.legend(frameon=False, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncols=2)
    return _done(fig, ax)
