"""Charts for the analysis results (``rf.plot``): matplotlib Figures, never pyplot global state.

Every chart function takes ``ax=None``: without it a new :class:`matplotlib.figure.Figure` is
built (not registered with pyplot) and returned; with it the chart is drawn on that Axes, which is
returned (``market_metrics``, several charts on one Figure, always returns a new Figure). Axes are labelled with units; prices are formatted as currency, fractions as percents.
No function changes ``matplotlib.rcParams`` or imports pyplot.

>>> import realtyframes as rf                                         # doctest: +SKIP
>>> fig = rf.plot.market_metric(rf.market_summary(listings), "median_sale_price")  # doctest: +SKIP
>>> fig.savefig("median_sale_price.png", dpi=150)                     # doctest: +SKIP
"""

from __future__ import annotations

import textwrap
from collections.abc import Hashable, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator, PercentFormatter

from realtyframes.analysis import (
    MARKET_METRICS,
    LeadFunnel,
    MissingColumnsError,
    TrafficSummary,
    ppsf_values,
    traffic_summary,
)
from realtyframes.analysis import lead_funnel as _lead_funnel

__all__ = [
    "METRIC_LABELS",
    "countries",
    "devices",
    "lead_funnel",
    "leads_per_week",
    "market_metric",
    "market_metrics",
    "ppsf_boxplot",
    "price_drop_distribution",
    "top_pages",
    "top_price_drops",
    "top_sources",
    "traffic_timeline",
]

#: Colours used by every chart (current value first, comparison second).
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
}


# ----------------------------------------------------------------------------- helpers


def money(x: float, _pos: object = None) -> str:
    """Compact US dollars: $950, $12.5K, $1.25M."""
    if x is None or not np.isfinite(x):
        return ""
    a = abs(x)
    sign = "-" if x < 0 else ""
    if a >= 1e6:
        return f"{sign}${a / 1e6:.2f}M".replace(".00M", "M")
    if a >= 1e4:
        return f"{sign}${a / 1e3:.0f}K"
    if a >= 1e3:
        return f"{sign}${a / 1e3:.1f}K".replace(".0K", "K")
    return f"{sign}${a:,.0f}"


def _fmt(kind: str) -> Any:
    if kind == "money":
        return FuncFormatter(money)
    if kind == "percent":
        return PercentFormatter(xmax=1.0, decimals=0)
    return FuncFormatter(lambda x, _p: f"{x:,.0f}" if float(x).is_integer() else f"{x:,.1f}")


def _label(value: float, kind: str) -> str:
    if value is None or not np.isfinite(value):
        return "n/a"
    if kind == "money":
        return money(value)
    if kind == "percent":
        return f"{value:.1%}"
    if kind == "count" or float(value).is_integer():
        return f"{value:,.0f}"
    return f"{value:,.1f}"


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
        # Below the axis label: long bars leave no free corner inside the plot.
        ax.legend(
            frameon=False, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncols=2
        )


# ----------------------------------------------------------------------------- price drops


def price_drop_distribution(
    drops: pd.DataFrame, *, bins: int = 20, ax: Axes | None = None
) -> Figure | Axes:
    """Histogram of the cut (``drop_pct``) across listings, with the median marked.

    >>> rf.plot.price_drop_distribution(rf.price_drops(listings))  # doctest: +SKIP
    """
    _need(drops, ["drop_pct"], "drops", "price_drop_distribution")
    fig, ax = _axes(ax)
    pct = pd.to_numeric(drops["drop_pct"], errors="raise").astype("float64").dropna()
    title = f"Distribution of price cuts ({len(pct):,} listings)"
    if pct.empty:
        _no_data(ax, title)
        return _done(fig, ax)
    ax.hist(pct.to_numpy(), bins=bins, color=PALETTE[0], edgecolor="white", label="Listings")
    median = float(pct.median())
    ax.axvline(
        median, color=PALETTE[1], linestyle="--", linewidth=1.5, label=f"Median {median:.1%}"
    )
    _title(ax, title)
    ax.set_xlabel("Price cut (% of previous list price)")
    ax.set_ylabel("Listings (count)")
    ax.xaxis.set_major_formatter(PercentFormatter(xmax=1.0, decimals=0))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_formatter(_fmt("count"))
    ax.legend(frameon=False, fontsize=8)
    _style(ax, "y")
    return _done(fig, ax)


def top_price_drops(drops: pd.DataFrame, n: int = 10, *, ax: Axes | None = None) -> Figure | Axes:
    """The ``n`` biggest cuts by ``drop_pct``, labelled by address, with the amount cut.

    >>> rf.plot.top_price_drops(rf.price_drops(listings, changes), n=15)  # doctest: +SKIP
    """
    _need(drops, ["ListingId", "drop_pct", "drop_amount"], "drops", "top_price_drops")
    fig, ax = _axes(ax, (8.0, max(3.0, 0.35 * min(n, max(len(drops), 1)) + 1.2)))
    top = drops.assign(_pct=pd.to_numeric(drops["drop_pct"]).astype("float64"))
    top = top.sort_values("_pct", ascending=False, kind="stable").head(n)
    title = f"Top {len(top)} price cuts"
    if top.empty:
        _no_data(ax, "Top price cuts")
        return _done(fig, ax)
    ids = top["ListingId"].astype("str")
    address = top["UnparsedAddress"].astype(object) if "UnparsedAddress" in top else ids
    labels = [
        _short(a if isinstance(a, str) and a.strip() else i)
        for a, i in zip(address, ids, strict=True)
    ]
    amounts = pd.to_numeric(top["drop_amount"]).astype("float64").to_numpy()
    pct = top["_pct"].to_numpy()
    texts = [f"{_label(p, 'percent')} ({money(a)})" for p, a in zip(pct, amounts, strict=True)]
    _barh(ax, labels, [("Price cut", pct)], "percent", [texts])
    _title(ax, title)
    ax.set_xlabel("Price cut (% of previous list price)")
    return _done(fig, ax)


# ----------------------------------------------------------------------------- markets


def _by_name(summary: pd.DataFrame) -> str:
    names = [n for n in summary.index.names if n is not None]
    return " / ".join(str(n) for n in names) or "market"


def market_metric(
    summary: pd.DataFrame, metric: str = "median_sale_price", *, ax: Axes | None = None
) -> Figure | Axes:
    """One market metric across markets (a row per market of ``market_summary``), as bars.

    With ``compare_previous=True`` columns present, the previous window is a second series.

    >>> rf.plot.market_metric(rf.market_summary(listings, by="City"), "months_of_supply")  # doctest: +SKIP
    """
    if metric not in METRIC_LABELS:
        raise ValueError(
            f"plot.market_metric(): `metric` must be one of {', '.join(MARKET_METRICS)}, "
            f"got {metric!r}"
        )
    _need(summary, [metric], "summary", "market_metric")
    title_text, unit, kind = METRIC_LABELS[metric]
    data = summary.sort_values(metric, ascending=False, kind="stable", na_position="last")
    fig, ax = _axes(ax, (8.0, max(3.0, 0.4 * len(data) + 1.2)))
    title = f"{title_text} by {_by_name(summary)}"
    if data.empty:
        _no_data(ax, title)
        return _done(fig, ax)
    labels = [_market_label(k) for k in data.index]
    series = [("Current window", data[metric].astype("float64").to_numpy())]
    prev = f"{metric}_prev"
    if prev in data.columns and data[prev].notna().any():
        series.append(("Previous window", data[prev].astype("float64").to_numpy()))
    _barh(ax, labels, series, kind)
    window = summary.attrs.get("window_days")
    windowed = metric not in ("active_listings", "median_list_price", "median_list_ppsf")
    suffix = f", last {window:g} days" if window and windowed else ""
    _title(ax, title + suffix)
    ax.set_xlabel(f"{title_text} ({unit})")
    return _done(fig, ax)


def market_metrics(
    summary: pd.DataFrame, metrics: Sequence[str] | None = None, *, ncols: int = 2
) -> Figure:
    """One bar chart per metric across markets, on one Figure (default: the headline metrics).

    >>> rf.plot.market_metrics(rf.market_summary(listings), ["median_sale_price", "homes_sold"])  # doctest: +SKIP
    """
    chosen = list(
        metrics
        or (
            "median_sale_price",
            "median_sale_ppsf",
            "homes_sold",
            "months_of_supply",
            "median_dom",
            "pct_active_with_price_drop",
        )
    )
    rows = -(-len(chosen) // ncols)
    height = max(3.0, 0.35 * len(summary) + 1.2)
    fig = Figure(figsize=(6.0 * ncols, height * rows), layout="constrained")
    axes = fig.subplots(rows, ncols, squeeze=False).ravel()
    for ax, metric in zip(axes, chosen, strict=False):
        market_metric(summary, metric, ax=ax)
    for ax in axes[len(chosen) :]:
        ax.set_visible(False)
    return fig


def ppsf_boxplot(
    listings: pd.DataFrame,
    by: str = "City",
    price: str = "list",
    *,
    markets: Sequence[Hashable] | None = None,
    max_markets: int = 12,
    segment: str = "sale",
    as_of: Any = None,
    window_days: float = 90,
    ax: Axes | None = None,
) -> Figure | Axes:
    """Box plot of price per square foot by market (``price='list'``: active listings;
    ``'sale'``: homes sold in the window). Without ``markets`` the ``max_markets`` markets with
    most listings are shown, highest median first. Whiskers at 1.5 IQR, outliers not drawn.

    >>> rf.plot.ppsf_boxplot(listings, by="City", price="sale")  # doctest: +SKIP
    """
    if not isinstance(by, str) or segment not in ("sale", "rent"):
        raise ValueError(
            "plot.ppsf_boxplot(): `by` must be one column name and `segment` 'sale' or 'rent' "
            f"(sale and rent prices are not drawn together), got by={by!r}, segment={segment!r}"
        )
    values = ppsf_values(listings, by, price, as_of=as_of, window_days=window_days, segment=segment)
    groups = {
        k: g.to_numpy()
        for k, g in values["ppsf"].groupby(values[by].to_numpy(), dropna=False, sort=True)
    }
    if markets is None:
        chosen = sorted(groups, key=lambda k: -len(groups[k]))[:max_markets]
    else:
        chosen = list(markets)
    series = {k: groups[k] for k in chosen if k in groups}
    order = sorted(series, key=lambda k: -float(np.median(series[k])))
    which = "List price" if price == "list" else "Sale price"
    population = "active listings" if price == "list" else f"homes sold, last {window_days:g} days"
    fig, ax = _axes(ax, (8.0, max(3.0, 0.45 * len(order) + 1.3)))
    title = f"{which} per sq ft by {by} ({population})"
    if not order:
        _no_data(ax, title)
        return _done(fig, ax)
    ax.boxplot(
        [series[k] for k in order][::-1],
        orientation="horizontal",
        tick_labels=[_market_label(k) for k in order][::-1],
        showfliers=False,
        patch_artist=True,
        widths=0.6,
        boxprops={"facecolor": "#cfe0ee", "edgecolor": PALETTE[0]},
        medianprops={"color": PALETTE[1], "linewidth": 2},
        whiskerprops={"color": PALETTE[0]},
        capprops={"color": PALETTE[0]},
    )
    _title(ax, title)
    ax.set_xlabel(f"{which} per sq ft (USD per sq ft)")
    ax.xaxis.set_major_formatter(FuncFormatter(money))
    _style(ax, "x")
    return _done(fig, ax)


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
    analytics: Any, name: str, n: int, title: str, ax: Axes | None, *, as_share: bool = False
) -> Figure | Axes:
    table = _traffic(analytics, n).breakdowns.get(name)
    if table is None:
        raise ValueError(f"plot: the analytics given have no `{name}` breakdown")
    table = table.head(n)
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


def top_sources(analytics: Any, n: int = 10, *, ax: Axes | None = None) -> Figure | Axes:
    """Top traffic sources (referrers) by visitors, with each one's share.

    >>> rf.plot.top_sources(client.analytics(period="30d"), n=8)  # doctest: +SKIP
    """
    return _breakdown_chart(analytics, "referrers", n, "Top traffic sources", ax)


def top_pages(analytics: Any, n: int = 10, *, ax: Axes | None = None) -> Figure | Axes:
    """Top pages by visitors, with each one's share.

    >>> rf.plot.top_pages(client.analytics(period="30d"))  # doctest: +SKIP
    """
    return _breakdown_chart(analytics, "pages", n, "Top pages", ax)


def countries(analytics: Any, n: int = 10, *, ax: Axes | None = None) -> Figure | Axes:
    """Top visitor countries by visitors, with each one's share.

    >>> rf.plot.countries(client.analytics(period="30d"))  # doctest: +SKIP
    """
    return _breakdown_chart(analytics, "countries", n, "Top countries", ax)


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
