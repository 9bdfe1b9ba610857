"""The client edition's charts: small, a fixed layout (no constrained layout's measuring pass),
each titled with its period and population.

Module-level functions of plain frames (a chart worker finds them by name):
:func:`price_chart` (quarterly: the constant-quality price with its band, the median with its n),
:func:`sales_chart` (monthly closed sales and new listings), :func:`supply_chart` (month-end
inventory and months supply).

>>> fig = sales_chart(months, "Miami")  # doctest: +SKIP
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

__all__ = ["FIGSIZE", "price_chart", "sales_chart", "span", "supply_chart"]

#: Every chart's size in inches (drawn at 100 dpi: 560 x 300 pixels).
FIGSIZE = (5.6, 3.0)
_BLUE, _ORANGE, _GREY = "#1f5f8b", "#e07b39", "#8a96a3"
_MARGINS = {"left": 0.12, "right": 0.88, "top": 0.76, "bottom": 0.12}
#: The legend sits in one row between the title and the axes (never over the data).
_LEGEND = {"fontsize": 7, "frameon": False, "loc": "lower left", "bbox_to_anchor": (0.0, 1.0),
           "borderaxespad": 0.2}  # fmt: skip


def span(periods: pd.Series, freq: str) -> str:
    """A chart's period in words: "Jul 2024 – Jun 2026" (months) or "2024 Q3 – 2026 Q2".

    >>> span(pd.Series(pd.to_datetime(["2024-07-01", "2026-06-01"])), "M")
    'Jul 2024 – Jun 2026'
    """
    first, last = pd.Timestamp(periods.min()), pd.Timestamp(periods.max())
    if freq == "Q":
        return f"{first.year} Q{first.quarter} – {last.year} Q{last.quarter}"
    return f"{first.strftime('%b %Y')} – {last.strftime('%b %Y')}"


def _figure(title: str) -> tuple[Figure, object]:
    fig = Figure(figsize=FIGSIZE, dpi=100)
    fig.subplots_adjust(**_MARGINS)
    ax = fig.add_subplot()
    longest = max(len(line) for line in title.splitlines())  # 10 pt bold fits ~60 characters
    size = 10.0 if longest <= 60 else max(8.0, 10.0 * 60 / longest)
    fig.suptitle(title, x=0.02, y=0.97, ha="left", va="top", fontsize=size, fontweight="bold")
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.tick_params(labelsize=8)
    return fig, ax


def _money(x: float, _pos: object = None) -> str:
    return f"${x / 1e6:.2f}M" if abs(x) >= 1e6 else f"${x / 1e3:.0f}K"


def _month_ticks(ax: object, when: pd.DatetimeIndex) -> None:
    ticks = np.arange(len(when))[:: max(1, len(when) // 6)]
    ax.set_xticks(ticks)  # type: ignore[attr-defined]
    ax.set_xticklabels([when[i].strftime("%b %y") for i in ticks])  # type: ignore[attr-defined]


def price_chart(quarters: pd.DataFrame, title: str) -> Figure:
    """Quarterly prices: the median sale price (dots, n under each) and the constant-quality
    price (the index times the base quarter's median) with its 95 % band. Columns:
    ``period_begin``, ``median``, ``median_n``, ``level``, ``low``, ``high``."""
    fig, ax = _figure(title)
    x = np.arange(len(quarters))
    labels = [f"{t.year} Q{t.quarter}" for t in pd.to_datetime(quarters["period_begin"])]
    low, high = quarters["low"].to_numpy(float), quarters["high"].to_numpy(float)
    ax.fill_between(x, low, high, color=_BLUE, alpha=0.15, linewidth=0,  # type: ignore[attr-defined]
                    label="95 % band")  # fmt: skip
    ax.plot(x, quarters["level"].to_numpy(float), color=_BLUE, marker="o", markersize=3,  # type: ignore[attr-defined]
            label="Constant-quality price")  # fmt: skip
    median = quarters["median"].to_numpy(float)
    ax.plot(x, median, linestyle="none", marker="D", markersize=4, color=_ORANGE,  # type: ignore[attr-defined]
            label="Median sale price")  # fmt: skip
    for i, (m, n) in enumerate(zip(median, quarters["median_n"], strict=True)):
        if np.isfinite(m):
            ax.annotate(f"n={int(n)}", (i, m), textcoords="offset points", xytext=(0, -11),  # type: ignore[attr-defined]
                        ha="center", fontsize=6.5, color=_GREY)  # fmt: skip
    ax.set_xticks(x)  # type: ignore[attr-defined]
    ax.set_xticklabels(labels, fontsize=7)  # type: ignore[attr-defined]
    ax.yaxis.set_major_formatter(FuncFormatter(_money))  # type: ignore[attr-defined]
    finite = np.concatenate([v[np.isfinite(v)] for v in (low, high, median)] or [np.array([])])
    if len(finite):
        pad = 0.08 * (finite.max() - finite.min() or finite.max())
        ax.set_ylim(finite.min() - pad, finite.max() + pad)  # type: ignore[attr-defined]
    ax.legend(ncols=3, **_LEGEND)  # type: ignore[attr-defined]
    return fig


def sales_chart(months: pd.DataFrame, title: str) -> Figure:
    """Monthly closed sales (bars) and new listings (line). Columns: ``period_begin``,
    ``homes_sold``, ``new_listings``."""
    fig, ax = _figure(title)
    when = pd.DatetimeIndex(pd.to_datetime(months["period_begin"]))
    x = np.arange(len(when))
    ax.bar(x, months["homes_sold"].to_numpy(float), color=_BLUE, width=0.7,  # type: ignore[attr-defined]
           label="Closed sales")  # fmt: skip
    ax.plot(x, months["new_listings"].to_numpy(float), color=_ORANGE, marker="o",  # type: ignore[attr-defined]
            markersize=2.5, label="New listings")  # fmt: skip
    _month_ticks(ax, when)
    ax.set_ylabel("homes per month", fontsize=8)  # type: ignore[attr-defined]
    ax.set_ylim(bottom=0)  # type: ignore[attr-defined]
    ax.legend(ncols=2, **_LEGEND)  # type: ignore[attr-defined]
    return fig


def supply_chart(months: pd.DataFrame, title: str) -> Figure:
    """Month-end inventory (bars, left axis) and months supply (line, right axis). Columns:
    ``period_begin``, ``active_listings``, ``months_of_supply``."""
    fig, ax = _figure(title)
    when = pd.DatetimeIndex(pd.to_datetime(months["period_begin"]))
    x = np.arange(len(when))
    ax.bar(x, months["active_listings"].to_numpy(float), color="#cfe0ee", width=0.7,  # type: ignore[attr-defined]
           label="Inventory (left)")  # fmt: skip
    ax.set_ylabel("homes for sale", fontsize=8)  # type: ignore[attr-defined]
    ax.set_ylim(bottom=0)  # type: ignore[attr-defined]
    right = ax.twinx()  # type: ignore[attr-defined]
    supply = months["months_of_supply"].to_numpy(float)
    right.plot(x, supply, color=_ORANGE, marker="o", markersize=2.5, label="Months supply (right)")
    right.set_ylabel("months", fontsize=8)
    right.tick_params(labelsize=8)
    right.spines["top"].set_visible(False)
    if np.isfinite(supply).any():
        right.set_ylim(0, float(np.nanmax(supply)) * 1.25)
    _month_ticks(ax, when)
    handles = ax.get_legend_handles_labels()[0] + right.get_legend_handles_labels()[0]  # type: ignore[attr-defined]
    ax.legend(handles=handles, ncols=2, **_LEGEND)  # type: ignore[attr-defined]
    return fig
