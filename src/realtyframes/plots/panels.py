"""Small multiples: several charts in one Figure, laid out with fixed margins (no layout engine,
so the Figure is drawn once: a report draws these instead of one Figure per chart)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from realtyframes._deprecation import renamed
from realtyframes.plots._base import METRIC_LABELS, PALETTE, _fmt, _market_label, _no_data, _style
from realtyframes.plots.trends import (
    HIGHLIGHTED,
    PARTIAL_LABEL,
    PARTIAL_STYLE,
    _dates,
    _groups,
    _keys,
    _lines,
    _period_word,
    _split,
    fit_to_data,
)
from realtyframes.plots.web import countries, devices, top_pages, top_sources

__all__ = ["seasonal_panels", "traffic_panels", "trend_panels"]


def _margins(fig: Figure, *, left: float, right: float, top: float, bottom: float,
             wspace: float, hspace: float) -> None:  # fmt: skip
    """Margins in inches, whatever the Figure's size."""
    width, height = fig.get_size_inches()
    fig.subplots_adjust(left=left / width, right=1 - right / width, top=1 - top / height,
                        bottom=bottom / height, wspace=wspace, hspace=hspace)  # fmt: skip


def _panel_title(title: str, unit: str, ncols: int) -> str:
    """A panel's title and unit, the unit on a line of its own when the one line would run
    into the next panel's title (about 90 characters across the figure's width)."""
    text = f"{title} ({unit})"
    return text if len(text) * max(ncols, 1) <= 90 else f"{title}\n({unit})"


def _period_name(when: Any, freq: str) -> str:
    stamp = pd.Timestamp(when)
    if freq == "Q":
        return f"{stamp.year} Q{stamp.quarter}"
    if freq == "W":
        return f"week of {stamp:%Y-%m-%d}"
    if freq == "4W":
        return f"4 weeks from {stamp:%Y-%m-%d}"
    return f"{stamp:%b %Y}"


def trend_panels(
    trends: pd.DataFrame,
    metrics: Sequence[str],
    by: str | None = None,
    *,
    highlight: int | Sequence[Hashable] = HIGHLIGHTED,
    sample: str = "median_sale_price",
    ncols: int = 2,
) -> Figure:
    """One panel per metric of ``rf.market_trends`` (``metrics``), a line per market in each, the
    same colours in every panel, with one legend under them naming each coloured market and the
    sales behind its latest complete period (``sample``'s n). Points at each period's start; the
    period not over is a hollow point on a dotted line; thin-sample periods are gaps.

    >>> rf.plot.trend_panels(rf.market_trends(market, history, by="City", freq="Q"),
    ...                      ["median_sale_price", "homes_sold"])  # doctest: +SKIP
    """
    if not metrics:
        raise ValueError("plot.trend_panels(): `metrics` must name at least one metric")
    keys = _keys(trends, by, metrics, "trend_panels")
    freq = str(trends.attrs.get("freq", "M"))
    rows = -(-len(metrics) // ncols)
    titles = [_panel_title(*METRIC_LABELS[m][:2], ncols) for m in metrics]
    wrapped = any("\n" in t for t in titles[ncols:])  # a second row's title on two lines
    fig = Figure(figsize=(11.0, 2.6 * rows + 1.6 + (0.3 * (rows - 1) if wrapped else 0)))
    _margins(fig, left=0.85, right=0.25, top=0.75, bottom=1.0, wspace=0.28,
             hspace=0.6 if wrapped else 0.42)  # fmt: skip
    axes = [fig.add_subplot(rows, ncols, i + 1) for i in range(len(metrics))]
    word = _period_word(trends)
    where = f" and {', '.join(keys)}" if keys else ""
    fig.suptitle(f"By {word}{where}", x=0.85 / 11.0, ha="left", fontsize=12, fontweight="bold")
    if trends.empty:
        for ax, metric in zip(axes, metrics, strict=True):
            _no_data(ax, METRIC_LABELS[metric][0])
        return fig
    groups, colour = _groups(trends, sample if sample in trends else metrics[0], keys, highlight)
    n_col = f"{sample}_n"

    def label(key: Any, done: pd.DataFrame) -> str:
        if n_col not in done or not len(done):
            return _market_label(key)
        last = done.iloc[-1]
        return (f"{_market_label(key)}: n={int(last[n_col]):,} sales in "
                f"{_period_name(last['period_begin'], freq)}")  # fmt: skip

    partial_seen = False
    for ax, metric, text in zip(axes, metrics, titles, strict=True):
        kind = METRIC_LABELS[metric][2]
        ax.set_title(text, loc="left", fontsize=10, fontweight="bold")
        if trends[metric].notna().sum() == 0:
            ax.text(0.5, 0.5, "No data", ha="center", va="center", transform=ax.transAxes)
            continue
        partial_seen |= _lines(ax, groups, colour, metric, label)
        ax.yaxis.set_major_formatter(_fmt(kind))
        ax.tick_params(labelsize=8)
        _dates(ax)
        fit_to_data(ax, trends["period_begin"], trends[metric])  # every panel: the same periods
        _style(ax, "y")
    handles, labels = axes[0].get_legend_handles_labels()
    others = len(groups) - len(colour)
    extra: list[tuple[dict[str, Any], str]] = []
    if others:
        extra.append(({"color": "0.75", "linewidth": 0.9}, f"{others} other markets (grey)"))
    if partial_seen:
        extra.append(({"color": "0.3", "marker": "o", **PARTIAL_STYLE}, PARTIAL_LABEL))
    for style, text in extra:  # legend entries only, on no panel
        handles.append(Line2D([], [], **style))
        labels.append(text)
    fig.legend(handles, labels, loc="lower left", bbox_to_anchor=(0.85 / 11.0, 0.02),
               ncols=2, frameon=False, fontsize=8)  # fmt: skip
    return fig


def seasonal_panels(trends: pd.DataFrame, metrics: Sequence[str], *, ncols: int = 3) -> Figure:
    """One panel per metric of ``rf.seasonally_adjust``'s result: the raw series (solid, points
    at each period's start; the period not over a hollow point on a dotted line) and
    ``<metric>_sa`` (dashed) beside it, for the whole market.

    >>> rf.plot.seasonal_panels(rf.seasonally_adjust(trends, ["homes_sold"]), ["homes_sold"])  # doctest: +SKIP
    """
    if not metrics:
        raise ValueError("plot.seasonal_panels(): `metrics` must name at least one metric")
    _keys(trends, None, metrics, "seasonal_panels")
    missing = [f"{m}_sa" for m in metrics if f"{m}_sa" not in trends.columns]
    if missing:
        raise ValueError(f"plot.seasonal_panels(): `trends` has no {', '.join(missing)}: "
                         "adjust it first (rf.seasonally_adjust)")  # fmt: skip
    rows = -(-len(metrics) // ncols)
    cols = min(ncols, len(metrics))
    fig = Figure(figsize=(11.0, 2.6 * rows + 1.4))
    _margins(fig, left=0.85, right=0.25, top=0.75, bottom=0.85, wspace=0.32, hspace=0.42)
    axes = [fig.add_subplot(rows, cols, i + 1) for i in range(len(metrics))]
    fig.suptitle(f"By {_period_word(trends)}: as counted, and seasonally adjusted",
                 x=0.85 / 11.0, ha="left", fontsize=12, fontweight="bold")  # fmt: skip
    ordered = trends.sort_values("period_begin", kind="stable")
    ordered.attrs = {}
    done, partial = _split(ordered)
    for ax, metric in zip(axes, metrics, strict=True):
        title, unit, kind = METRIC_LABELS[metric]
        ax.set_title(_panel_title(title, unit, cols), loc="left", fontsize=10, fontweight="bold")
        if ordered.empty or ordered[metric].notna().sum() == 0:
            ax.text(0.5, 0.5, "No data", ha="center", va="center", transform=ax.transAxes)
            continue
        ax.plot(done["period_begin"], done[metric].astype("float64"), color=PALETTE[0],
                marker="o", markersize=3, linewidth=1.4, label="As counted")  # fmt: skip
        if len(partial):
            ax.plot(partial["period_begin"], partial[metric].astype("float64"), color=PALETTE[0],
                    marker="o", markersize=4, label="_nolegend_", **PARTIAL_STYLE)  # fmt: skip
        ax.plot(ordered["period_begin"], ordered[f"{metric}_sa"].astype("float64"),
                color=PALETTE[1], linestyle="--", linewidth=1.8,
                label="Seasonally adjusted (dashed)")  # fmt: skip
        ax.yaxis.set_major_formatter(_fmt(kind))
        ax.tick_params(labelsize=8)
        _dates(ax)
        fit_to_data(ax, trends["period_begin"], trends[metric])  # every panel: the same periods
        _style(ax, "y")
    handles, labels = axes[0].get_legend_handles_labels()
    if len(partial):
        handles.append(Line2D([], [], color="0.3", marker="o", **PARTIAL_STYLE))
        labels.append(PARTIAL_LABEL)
    fig.legend(handles, labels, loc="lower left", bbox_to_anchor=(0.85 / 11.0, 0.02),
               ncols=3, frameon=False, fontsize=8)  # fmt: skip
    return fig


_TRAFFIC: tuple[Callable[..., Any], ...] = (top_sources, top_pages, devices, countries)


@renamed(n="top_n")
def traffic_panels(analytics: Any, top_n: int = 8) -> Figure:
    """The website's top sources, top pages, devices and top countries (``top_n`` each) as four
    panels of one Figure (``rf.traffic_summary`` or the analytics frames, as each chart takes).
    ``n=`` is the old name of ``top_n``: it still works, with a DeprecationWarning.

    >>> rf.plot.traffic_panels(rf.traffic_summary(analytics))  # doctest: +SKIP
    """
    fig = Figure(figsize=(12.0, 0.28 * top_n * 2 + 2.6), layout="constrained")
    axes: list[Axes] = [fig.add_subplot(2, 2, i + 1) for i in range(4)]
    for ax, draw in zip(axes, _TRAFFIC, strict=True):
        if draw is devices:
            draw(analytics, ax=ax)
        else:
            draw(analytics, top_n, ax=ax)
    return fig
