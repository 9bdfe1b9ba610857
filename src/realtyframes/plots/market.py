"""Market charts: price drops, market metrics, price per square foot."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator, PercentFormatter

from realtyframes._deprecation import renamed
from realtyframes.analysis import (
    MARKET_METRICS,
    ppsf_values,
)
from realtyframes.plots._base import (
    METRIC_LABELS,
    PALETTE,
    _axes,
    _barh,
    _done,
    _fmt,
    _label,
    _market_label,
    _need,
    _no_data,
    _short,
    _style,
    _title,
    money,
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


@renamed(n="top_n")
def top_price_drops(
    drops: pd.DataFrame, top_n: int = 10, *, ax: Axes | None = None
) -> Figure | Axes:
    """The ``top_n`` biggest cuts by ``drop_pct``, labelled by address, with the amount cut
    (``n=`` is the old name of ``top_n``: it still works, with a DeprecationWarning).

    >>> rf.plot.top_price_drops(rf.price_drops(listings, history), top_n=15)  # doctest: +SKIP
    """
    _need(drops, ["ListingId", "drop_pct", "drop_amount"], "drops", "top_price_drops")
    fig, ax = _axes(ax, (8.0, max(3.0, 0.35 * min(top_n, max(len(drops), 1)) + 1.2)))
    top = drops.assign(_pct=pd.to_numeric(drops["drop_pct"]).astype("float64"))
    top = top.sort_values("_pct", ascending=False, kind="stable").head(top_n)
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
    # stocks as of the date (the price-drop share counts a cut at any time, not in the window)
    stocks = ("active_listings", "median_list_price", "median_list_ppsf",
              "pct_active_with_price_drop")  # fmt: skip
    windowed = metric not in stocks
    suffix = f", last {window:g} days" if window and windowed else ""
    if metric == "pct_active_with_price_drop":
        suffix = " (last price change a cut, any time)"
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


@renamed(listings="market")
def ppsf_boxplot(
    market: pd.DataFrame,
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
    ``market`` as :func:`realtyframes.analysis.ppsf_values` takes it (``listings=`` is its old
    name: it still works, with a DeprecationWarning).

    >>> rf.plot.ppsf_boxplot(market, by="City", price="sale")  # doctest: +SKIP
    """
    if not isinstance(by, str) or segment not in ("sale", "rent"):
        raise ValueError(
            "plot.ppsf_boxplot(): `by` must be one column name and `segment` 'sale' or 'rent' "
            f"(sale and rent prices are not drawn together), got by={by!r}, segment={segment!r}"
        )
    values = ppsf_values(market, by, price, as_of=as_of, window_days=window_days, segment=segment)
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
