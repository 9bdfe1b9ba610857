"""Shared chart helpers: the palette, metric labels, number formats, axes and bar drawing."""

from __future__ import annotations

import textwrap
from collections.abc import Hashable, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, PercentFormatter

from realtyframes.analysis import (
    MissingColumnsError,
)

PALETTE: tuple[str, ...] = ("#1f5f8b", "#e07b39", "#4c9f70", "#c44e52", "#8172b2", "#937860")
_FIGSIZE = (8.0, 4.5)

#: Per market metric: chart title, axis unit, number kind ('count', 'money', 'percent', 'number').
METRIC_LABELS: dict[str, tuple[str, str, str]] = {
    "active_listings": ("Active listings", "listings", "count"),
    "new_listings": ("New listings", "listings", "count"),
    "pending_sales": ("Pending sales", "listings", "count"),
    "homes_sold": ("Homes sold", "homes", "count"),
    "median_list_price": ("Median list price", "USD", "money"),
    "median_list_ppsf": ("Median list price per sq ft", "USD per sq ft", "money"),
    "median_sale_price": ("Median sale price", "USD", "money"),
    "median_sale_ppsf": ("Median sale price per sq ft", "USD per sq ft", "money"),
    "median_dom": ("Median days on market", "days", "number"),
    "avg_sale_to_list": ("Average sale-to-list ratio", "% of list price", "percent"),
    "pct_sold_above_list": ("Homes sold above list price", "% of homes sold", "percent"),
    "months_of_supply": ("Months of supply", "months", "number"),
    "pct_active_with_price_drop": (
        "Active listings with a price drop",
        "% of active listings",
        "percent",
    ),
    # trends only (rf.market_trends)
    "pending_listings": ("Pending listings", "listings", "count"),
    "price_drops": ("Listings with a price cut", "listings", "count"),
    "off_market_in_two_weeks": ("Off market in two weeks", "% of new listings", "percent"),
    "price_cut_share": ("Price-cut share", "% of listings active in the period", "percent"),
}


# ----------------------------------------------------------------------------- helpers


def money(x: float, _pos: object = None) -> str:
    """Compact US dollars: $950, $12.5K, $1.5M, $1.25M.

    >>> money(1_500_000), money(1_000_000), money(12_500)
    ('$1.5M', '$1M', '$12K')
    """
    if x is None or not np.isfinite(x):
        return ""
    a = abs(x)
    sign = "-" if x < 0 else ""
    if a >= 1e6:  # $1M, $1.5M, $1.25M: no trailing zeros
        return f"{sign}${f'{a / 1e6:.2f}'.rstrip('0').rstrip('.')}M"
    if a >= 1e4:
        return f"{sign}${a / 1e3:.0f}K"
    if a >= 1e3:
        return f"{sign}${a / 1e3:.1f}K".replace(".0K", "K")
    return f"{sign}${a:,.0f}"


def _fmt(kind: str) -> Any:
    if kind == "money":
        return FuncFormatter(money)
    if kind == "percent":
        # decimals as the axis needs (1%, 1.5%, 2%), never "2% 2% 2%" on a narrow range
        return PercentFormatter(xmax=1.0, decimals=None)
    return FuncFormatter(lambda x, _p: f"{x:,.0f}" if float(x).is_integer() else f"{x:,.1f}")


def _label(value: float, kind: str) -> str:
    if value is None or not np.isfinite(value):
        return "n/a"
    if kind == "money":
        return money(value)
    if kind == "percent":
        return f"{value:.1%}"
    if kind == "count":
        return f"{value:,.0f}"
    return f"{value:,.1f}"  # one decimal for every measure: 3.0 next to 2.5, never 3 next to 2.5


def _axes(ax: Axes | None, figsize: tuple[float, float] = _FIGSIZE) -> tuple[Figure | None, Axes]:
    if ax is not None:
        if not isinstance(ax, Axes):
            raise TypeError(f"`ax` must be a matplotlib Axes, got {type(ax).__name__}")
        return None, ax
    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()


def _done(fig: Figure | None, ax: Axes) -> Figure | Axes:
    return fig if fig is not None else ax


def _title(ax: Axes, text: str) -> None:
    # Wrapped so a long title never runs past a report-size panel.
    ax.set_title(textwrap.fill(text, 50), loc="left", fontsize=12, fontweight="bold")


def _no_data(ax: Axes, title: str) -> None:
    _title(ax, title)
    ax.text(0.5, 0.5, "No data", ha="center", va="center", transform=ax.transAxes, color="0.4")
    ax.set_xticks([])
    ax.set_yticks([])


def _style(ax: Axes, grid_axis: Literal["x", "y"] = "x") -> None:
    ax.grid(axis=grid_axis, color="0.85", linewidth=0.8)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


def _market_label(key: Hashable) -> str:
    parts = key if isinstance(key, tuple) else (key,)
    return " / ".join("(missing)" if pd.isna(p) else str(p) for p in parts)


def _short(text: object, width: int = 38) -> str:
    s = "(missing)" if text is None or (not isinstance(text, str) and pd.isna(text)) else str(text)
    return s if len(s) <= width else s[: width - 1] + "…"


def _need(frame: pd.DataFrame, columns: Sequence[str], name: str, func: str) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(
            f"{func}(): `{name}` must be a pandas DataFrame, got {type(frame).__name__}"
        )
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise MissingColumnsError(missing, frame=name, func=f"plot.{func}", available=frame.columns)


def _barh(
    ax: Axes,
    labels: Sequence[str],
    series: Sequence[tuple[str, np.ndarray]],
    kind: str,
    bar_labels: Sequence[Sequence[str]] | None = None,
) -> None:
    """Horizontal bars, first label on top; several series are drawn side by side."""
    n = len(labels)
    y = np.arange(n)[::-1].astype(float)
    height = 0.8 / len(series)
    for i, (name, values) in enumerate(series):
        offset = (len(series) - 1) / 2 * height - i * height
        bars = ax.barh(
            y + offset,
            np.nan_to_num(np.asarray(values, dtype=float)),
            height=height * 0.95,
            color=PALETTE[i % len(PALETTE)],
            label=name,
        )
        texts = bar_labels[i] if bar_labels is not None else [_label(v, kind) for v in values]
        ax.bar_label(bars, labels=list(texts), padding=3, fontsize=8, color="0.25")
    ax.set_yticks(y, list(labels))
    ax.xaxis.set_major_formatter(_fmt(kind))
    ax.margins(x=0.15)
    _style(ax, "x")
    if len(series) > 1:
        # Below the axis label, clear of it: long bars leave no free corner inside the plot.
        ax.legend(
            frameon=False, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.3), ncols=2
        )
