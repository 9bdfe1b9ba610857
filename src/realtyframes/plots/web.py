"""Website traffic and lead charts."""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from realtyframes._deprecation import renamed
from realtyframes.analysis import (
    LeadFunnel,
    TrafficSummary,
    traffic_summary,
)
from realtyframes.analysis import lead_funnel as _lead_funnel
from realtyframes.plots._base import (
    PALETTE,
    _axes,
    _barh,
    _done,
    _fmt,
    _no_data,
    _short,
    _style,
    _title,
)

# ----------------------------------------------------------------------------- traffic


def _traffic(analytics: Any, top_n: int) -> TrafficSummary:
    if isinstance(analytics, TrafficSummary):
        return analytics
    return traffic_summary(analytics, top_n=top_n)


def traffic_timeline(analytics: Any, *, ax: Axes | None = None) -> Figure | Axes:
    """Visitors and pageviews per day (lines), conversions per day (bars, right axis).

    ``analytics``: an ``rf.Analytics`` or a :class:`~realtyframes.analysis.TrafficSummary`.

    >>> rf.plot.traffic_timeline(client.analytics(period="30d"))  # doctest: +SKIP
    """
    timeline = _traffic(analytics, 10).timeline
    fig, ax = _axes(ax)
    title = "Website traffic per day"
    shown = [m for m in ("visitors", "pageviews") if m in timeline.columns]
    if timeline.empty or not shown:
        _no_data(ax, title)
        return _done(fig, ax)
    x = timeline.index.tz_convert(None).to_numpy()
    handles: list[Any] = []
    if "conversions" in timeline.columns:
        ax2 = ax.twinx()
        bars = ax2.bar(
            x,
            timeline["conversions"].fillna(0).to_numpy(),
            width=np.timedelta64(17, "h"),  # datetime x: the width must be a duration
            color=PALETTE[2],
            alpha=0.45,
            label="Conversions",
        )
        ax2.set_ylabel("Conversions per day (count)")
        ax2.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax2.spines["top"].set_visible(False)
        ax.set_zorder(ax2.get_zorder() + 1)
        ax.patch.set_visible(False)
        handles.append(bars)
    for i, metric in enumerate(shown):
        (line,) = ax.plot(
            x, timeline[metric].to_numpy(), color=PALETTE[i], linewidth=2, label=metric.title()
        )
        handles.insert(i, line)
    _title(ax, title)
    ax.set_xlabel("Date (UTC)")
    ax.set_ylabel("Visitors / pageviews per day (count)")
    ax.set_ylim(bottom=0)
    ax.yaxis.set_major_formatter(_fmt("count"))
    locator = AutoDateLocator()
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))
    ax.legend(handles=handles, frameon=False, fontsize=8, loc="upper left")
    ax.grid(axis="y", color="0.85", linewidth=0.8)
    ax.spines["top"].set_visible(False)
    return _done(fig, ax)


def _breakdown_chart(
    analytics: Any, name: str, top_n: int, title: str, ax: Axes | None, *, as_share: bool = False
) -> Figure | Axes:
    table = _traffic(analytics, top_n).breakdowns.get(name)
    if table is None:
        raise ValueError(f"plot: the analytics given have no `{name}` breakdown")
    table = table.head(top_n)
    fig, ax = _axes(ax, (8.0, max(3.0, 0.35 * len(table) + 1.2)))
    if table.empty:
        _no_data(ax, title)
        return _done(fig, ax)
    labels = [_short(v, 40) for v in table["name"]]
    if as_share:
        _barh(ax, labels, [("Share of visitors", table["share"].to_numpy())], "percent")
        ax.set_xlabel("Share of visitors (%)")
    else:
        texts = [
            f"{v:,.0f} ({s:.0%})" for v, s in zip(table["visitors"], table["share"], strict=True)
        ]
        _barh(ax, labels, [("Visitors", table["visitors"].to_numpy())], "count", [texts])
        ax.set_xlabel("Visitors (count; share of all visitors in brackets)")
    _title(ax, title)
    return _done(fig, ax)


@renamed(n="top_n")
def top_sources(analytics: Any, top_n: int = 10, *, ax: Axes | None = None) -> Figure | Axes:
    """Top traffic sources (referrers) by visitors, with each one's share
    (``top_n`` rows; ``n=`` is its old name: it still works, with a DeprecationWarning).

    >>> rf.plot.top_sources(client.analytics(period="30d"), top_n=8)  # doctest: +SKIP
    """
    return _breakdown_chart(analytics, "referrers", top_n, "Top traffic sources", ax)


@renamed(n="top_n")
def top_pages(analytics: Any, top_n: int = 10, *, ax: Axes | None = None) -> Figure | Axes:
    """Top pages by visitors, with each one's share
    (``top_n`` rows; ``n=`` is its old name: it still works, with a DeprecationWarning).

    >>> rf.plot.top_pages(client.analytics(period="30d"))  # doctest: +SKIP
    """
    return _breakdown_chart(analytics, "pages", top_n, "Top pages", ax)


@renamed(n="top_n")
def countries(analytics: Any, top_n: int = 10, *, ax: Axes | None = None) -> Figure | Axes:
    """Top visitor countries by visitors, with each one's share
    (``top_n`` rows; ``n=`` is its old name: it still works, with a DeprecationWarning).

    >>> rf.plot.countries(client.analytics(period="30d"))  # doctest: +SKIP
    """
    return _breakdown_chart(analytics, "countries", top_n, "Top countries", ax)


def devices(analytics: Any, *, ax: Axes | None = None) -> Figure | Axes:
    """Share of visitors by device type.

    >>> rf.plot.devices(client.analytics(period="30d"))  # doctest: +SKIP
    """
    return _breakdown_chart(analytics, "devices", 20, "Visitors by device", ax, as_share=True)


# ----------------------------------------------------------------------------- leads


def _funnel(obj: Any) -> LeadFunnel:
    return obj if isinstance(obj, LeadFunnel) else _lead_funnel(obj)


def lead_funnel(funnel: Any, *, ax: Axes | None = None) -> Figure | Axes:
    """Contacts reaching each funnel stage, with the share of the funnel.

    ``funnel``: a :class:`~realtyframes.analysis.LeadFunnel` or a contacts frame.

    >>> rf.plot.lead_funnel(rf.lead_funnel(client.contacts()))  # doctest: +SKIP
    """
    result = _funnel(funnel)
    stages = result.by_stage[result.by_stage["in_funnel"]]
    fig, ax = _axes(ax, (8.0, max(3.0, 0.5 * len(stages) + 1.2)))
    title = "Lead funnel"
    if stages.empty or int(stages["contacts"].sum()) == 0:
        _no_data(ax, title)
        return _done(fig, ax)
    reached = stages["reached"].astype("float64").to_numpy()
    texts = [f"{r:,.0f} ({s:.0%})" for r, s in zip(reached, stages["reached_share"], strict=True)]
    _barh(ax, [str(s) for s in stages.index], [("Reached", reached)], "count", [texts])
    _title(ax, title + " (contacts at or past each stage)")
    ax.set_xlabel("Contacts (count; share of the funnel in brackets)")
    return _done(fig, ax)


def leads_per_week(funnel: Any, *, ax: Axes | None = None) -> Figure | Axes:
    """New leads (contacts created) per week.

    >>> rf.plot.leads_per_week(rf.lead_funnel(client.contacts()))  # doctest: +SKIP
    """
    weekly = _funnel(funnel).weekly
    fig, ax = _axes(ax)
    title = "New leads per week"
    if weekly.empty:
        _no_data(ax, title)
        return _done(fig, ax)
    x = weekly.index.tz_convert(None).to_numpy()
    ax.bar(
        x,
        weekly["new_leads"].to_numpy(),
        width=np.timedelta64(5, "D"),  # datetime x: the width must be a duration
        align="edge",
        color=PALETTE[0],
        label="New leads",
    )
    locator = AutoDateLocator()
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    _title(ax, title)
    ax.set_xlabel("Week (starting Monday, UTC)")
    ax.set_ylabel("New leads (contacts created)")
    _style(ax, "y")
    return _done(fig, ax)
