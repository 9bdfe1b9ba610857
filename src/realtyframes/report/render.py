"""Rendering a market report: one self-contained HTML document (pure; see :mod:`._html`).

Headline cards, the market comparison, the price drops, the website traffic and the lead funnel,
each a table (exact values in ``data-value``) and its charts (``rf.plot`` figures, embedded PNG).

>>> html = render_market_report(report)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from realtyframes._version import __version__
from realtyframes.analysis import MARKET_METRICS, REFERENCE_LABEL
from realtyframes.report._html import Card, Cell, Section, esc, render_cards, render_page
from realtyframes.report._html import render_figure as _figure
from realtyframes.report._html import render_table as _table
from realtyframes.report._render_changes import changes_section
from realtyframes.report.compute import MarketReport
from realtyframes.report.options import DATA_FILES

__all__ = ["SHORT_LABELS", "TABLE_METRICS", "render_market_report"]

#: Market metrics shown in the comparison table, in order.
TABLE_METRICS: tuple[str, ...] = MARKET_METRICS
#: Row labels of the comparison table.
SHORT_LABELS: dict[str, str] = {
    "active_listings": "Active listings",
    "new_listings": "New listings",
    "pending_sales": "Pending sales",
    "homes_sold": "Homes sold",
    "median_list_price": "Median list price",
    "median_list_ppsf": "Median list $/sq ft",
    "median_sale_price": "Median sale price",
    "median_sale_ppsf": "Median sale $/sq ft",
    "median_dom": "Median days on market",
    "avg_sale_to_list": "Avg sale-to-list",
    "pct_sold_above_list": "Sold above list",
    "months_of_supply": "Months of supply",
    "pct_active_with_price_drop": "Active with a price cut",
}


def _label(key: Any) -> str:
    parts = key if isinstance(key, tuple) else (key,)
    return " / ".join("(missing)" if pd.isna(p) else str(p) for p in parts)


def _frame_table(
    name: str, first: str, frame: pd.DataFrame, spec: Sequence[tuple[str, str, str]], caption: str
) -> str:
    """A table of ``frame`` by its index: one row per label, one column per ``(column, header,
    kind)`` of ``spec``."""
    rows: list[list[Cell | str]] = []
    for key, row in frame.iterrows():
        label = _label(key)
        rows.append([label, *[Cell(row[c], k, row=label, col=c) for c, _, k in spec]])
    return _table(
        name,
        [first, *[h for _, h, _ in spec]],
        rows,
        caption=caption,
        numeric_header=[False] + [True] * len(spec),
    )


def _kind(metric: str) -> str:
    from realtyframes.plots import METRIC_LABELS

    kind = METRIC_LABELS[metric][2]
    return {"count": "count", "money": "money", "percent": "percent"}.get(kind, "number")


def _pct_note(value: Any, label: str) -> str | None:
    if value is None or pd.isna(value):
        return None
    arrow = "▲" if value > 0 else "▼" if value < 0 else "="
    return f"{arrow} {abs(float(value)):.1%} vs {label}"


def _cards(report: MarketReport) -> str:
    h, ref = report.headline, report.comparison[REFERENCE_LABEL]
    days = f"{float(report.options.window_days):g} days"
    prev = f"previous {days}"

    def change(metric: str) -> str | None:
        key = f"{metric}_pct_change"
        return _pct_note(ref[key], prev) if key in ref.index else None

    cards = [
        Card("active_listings", "Active listings", h["active_listings"], "count", "for sale, now"),
        Card(
            "new_listings",
            f"New listings, {days}",
            h["new_listings"],
            "count",
            change("new_listings"),
        ),
        Card("homes_sold", f"Homes sold, {days}", h["homes_sold"], "count", change("homes_sold")),
        Card(
            "median_sale_price",
            "Median sale price",
            h["median_sale_price"],
            "money",
            change("median_sale_price"),
        ),
        Card(
            "median_dom", "Median days on market", h["median_dom"], "number", change("median_dom")
        ),
        Card("months_of_supply", "Months of supply", h["months_of_supply"], "number"),
        Card(
            "price_drops",
            f"Price cuts, {days}",
            h["price_drops"],
            "count",
            None if pd.isna(h["median_drop_pct"]) else f"median cut {h['median_drop_pct']:.1%}",
        ),
    ]
    if "visitors" in h:
        cards.append(
            Card("visitors", f"Website visitors, {report.frames.period}", h["visitors"], "count")
        )
        cards.append(Card("conversion_rate", "Conversion rate", h["conversion_rate"], "percent"))
    if "contacts" in h:
        cards.append(Card("contacts", "CRM contacts", h["contacts"], "count"))
    return render_cards(cards)


def _market_section(report: MarketReport) -> Section:
    from realtyframes import plots

    o = report.options
    comp = report.comparison
    columns = list(comp.columns)
    header = ["Metric", *[_label(c) for c in columns]]
    from realtyframes.plots import METRIC_LABELS

    rows: list[list[Cell | str]] = []
    for metric in TABLE_METRICS:
        cells: list[Cell | str] = [SHORT_LABELS.get(metric, METRIC_LABELS[metric][0])]
        for col in columns:
            cells.append(Cell(comp.loc[metric, col], _kind(metric), row=metric, col=_label(col)))
        rows.append(cells)
    table = _table(
        "comparison",
        header,
        rows,
        caption=f"{', '.join(o.property_types)}; window: the {float(o.window_days):g} days to "
        f"{o.day.isoformat()}. "
        f"'{REFERENCE_LABEL}' is the whole market of the report.",
        numeric_header=[False] + [True] * len(columns),
    )
    shown = report.summary.reindex(pd.Index(report.markets, tupleize_cols=True, name=o.by))
    shown.attrs = dict(report.summary.attrs)
    charts = [
        _figure(
            plots.market_metrics(shown),
            f"Market metrics by {o.by}: median sale price, price per sq ft, homes sold, months of "
            "supply, days on market, share with a price drop",
            "market_metrics",
        ),
        _figure(
            plots.ppsf_boxplot(
                report.frames.listings,
                by=o.by,
                price="sale",
                markets=report.markets,
                as_of=o.day,
                window_days=float(o.window_days),
            ),
            f"Sale price per square foot by {o.by}",
            "ppsf_boxplot",
        ),
    ]
    intro = (
        f"Markets by {o.by}: {len(report.summary):,} in the data, the {len(report.markets)} "
        "largest shown side by side"
        if not (o.cities and o.by == "City")
        else f"Markets by {o.by}: the cities asked for"
    ) + ". Definitions of every metric: docs/metrics.md of realtyframes."
    return Section("markets", "Market comparison", table + "".join(charts), intro)


def _drops_section(report: MarketReport) -> Section:
    from realtyframes import plots

    o = report.options
    ds = report.drop_summary.reindex(pd.Index(report.markets, tupleize_cols=True, name=o.by))
    spec = [
        ("price_drops", "Listings with a cut", "count"),
        ("active_listings", "Active listings", "count"),
        ("active_with_price_drop", "Active with a cut", "count"),
        ("pct_active_with_price_drop", "Share of active", "percent"),
        ("median_drop_pct", "Median cut", "percent"),
        ("median_drop_amount", "Median cut (USD)", "money"),
    ]
    summary_table = _frame_table(
        "drop_summary", o.by, ds, spec, "Price cuts in the window by market (sale segment)."
    )
    top = report.drops.head(o.top_drops)
    top_spec = [
        ("UnparsedAddress", "Address", "text"),
        ("City", "City", "text"),
        ("PropertySubType", "Type", "text"),
        ("previous_price", "Was", "money"),
        ("current_price", "Now", "money"),
        ("drop_pct", "Cut", "percent"),
        ("drop_amount", "Cut (USD)", "money"),
        ("drop_count", "Cuts", "count"),
        ("total_drop_pct", "Total cut", "percent"),
        ("last_drop_at", "Last cut", "date"),
        ("DaysOnMarket", "Days on market", "days"),
    ]
    top_rows: list[list[Cell | str]] = []
    for _, row in top.iterrows():
        lid = str(row["ListingId"])
        top_rows.append([lid, *[Cell(row[c], k, row=lid, col=c) for c, _, k in top_spec]])
    top_table = _table(
        "top_drops",
        ["Listing", *[h for _, h, _ in top_spec]],
        top_rows,
        caption=f"The {len(top)} biggest cuts (by the latest cut's percentage) of active "
        f"for-sale listings since {o.window_start.strftime('%Y-%m-%d')}.",
        numeric_header=[False, False, False, False] + [True] * (len(top_spec) - 3),
    )
    charts = (
        '<div class="grid2">'
        + _figure(
            plots.top_price_drops(report.drops, n=o.top_drops),
            "The biggest price cuts, by percentage",
            "top_price_drops",
        )
        + _figure(
            plots.price_drop_distribution(report.drops),
            "Distribution of price cuts",
            "price_drop_distribution",
        )
        + "</div>"
    )
    intro = (
        f"{len(report.drops):,} active for-sale listings cut their price in the "
        f"{float(o.window_days):g} days to {o.day.isoformat()} (from the listing change feed)."
    )
    return Section("price-drops", "Price drops", summary_table + top_table + charts, intro)


_TRAFFIC_LABELS: dict[str, tuple[str, str]] = {
    "visitors": ("Visitors", "count"),
    "pageviews": ("Pageviews", "count"),
    "sessions": ("Sessions", "count"),
    "views_per_visit": ("Views per visit", "number"),
    "bounce_rate": ("Bounce rate", "percent"),
    "visit_duration_seconds": ("Visit duration (seconds)", "count"),
    "conversions": ("Conversions", "count"),
    "conversion_rate": ("Conversion rate", "percent"),
}


def _traffic_section(report: MarketReport) -> Section:
    from realtyframes import plots

    if report.traffic is None:
        return Section(
            "traffic",
            "Website traffic",
            '<p class="empty">Website analytics were not available to this account.</p>',
        )
    t = report.traffic
    rows: list[list[Cell | str]] = []
    for metric, value in t.headline["value"].items():
        label, kind = _TRAFFIC_LABELS.get(str(metric), (str(metric), "number"))
        rows.append([label, Cell(value, kind, row=str(metric), col="value")])
    table = _table(
        "traffic",
        ["Metric", "Value"],
        rows,
        caption=f"Website, period {report.frames.period} (ending at the server's clock).",
        numeric_header=[False, True],
    )
    charts = (
        _figure(
            plots.traffic_timeline(t),
            "Visitors, pageviews and conversions per day",
            "traffic_timeline",
        )
        + '<div class="grid2">'
        + _figure(plots.top_sources(t), "Top traffic sources", "top_sources")
        + _figure(plots.top_pages(t), "Top pages", "top_pages")
        + _figure(plots.devices(t), "Visitors by device", "devices")
        + _figure(plots.countries(t), "Top countries", "countries")
        + "</div>"
    )
    return Section("traffic", "Website traffic", table + charts)


def _leads_section(report: MarketReport) -> Section:
    from realtyframes import plots

    if report.funnel is None:
        return Section(
            "leads",
            "Leads",
            '<p class="empty">CRM contacts were not available to this account.</p>',
        )
    f = report.funnel
    stage_spec = [
        ("contacts", "Contacts", "count"),
        ("share", "Share", "percent"),
        ("reached", "Reached", "count"),
        ("reached_share", "Reached (share of funnel)", "percent"),
    ]
    stage_table = _frame_table(
        "funnel",
        "Stage",
        f.by_stage,
        stage_spec,
        "Contacts by stage; 'reached' counts contacts at the stage or a later one.",
    )
    source_spec = [
        ("contacts", "Contacts", "count"),
        ("share", "Share", "percent"),
        ("converted", "Converted", "count"),
        ("conversion_rate", "Conversion rate", "percent"),
    ]
    source_table = _frame_table(
        "lead_sources",
        "Source",
        f.by_source,
        source_spec,
        "Contacts by lead source; converted = past the first funnel stage.",
    )
    charts = (
        '<div class="grid2">'
        + _figure(plots.lead_funnel(f), "Lead funnel", "lead_funnel")
        + _figure(plots.leads_per_week(f), "New leads per week", "leads_per_week")
        + "</div>"
    )
    return Section("leads", "Leads", stage_table + source_table + charts)


def render_market_report(report: MarketReport, *, stem: str | None = None) -> str:
    """The report as one self-contained HTML document (see :mod:`realtyframes.report._html`)."""
    o = report.options
    stem = stem or o.stem
    scope = (
        (", ".join(o.cities) if o.cities else "whole market") + " · " + ", ".join(o.property_types)
    )
    title = f"Market report — {o.day.isoformat()}"
    meta = [
        f"As of {o.day.isoformat()}",
        f"window {float(o.window_days):g} days",
        f"markets by {o.by}",
        f"scope: {scope}",
        f"source: {o.source}",
    ]
    notes = "".join(f'<p class="notice">{esc(n)}</p>' for n in report.frames.notes)
    lead = _cards(report) + notes
    sections = [
        changes_section(report),
        _market_section(report),
        _drops_section(report),
        _traffic_section(report),
        _leads_section(report),
    ]
    files = []
    for name, what in DATA_FILES.items():
        if name in report.frames.data_frames():
            links = " · ".join(
                f'<a href="{esc(f"{stem}.{name}.{fmt}")}">{fmt}</a>' for fmt in ("parquet", "csv")
            )
            files.append(f"<li><code>{esc(name)}</code>: {esc(what)} ({links})</li>")
    footer = (
        "<p>The data behind this report, next to this file:</p>"
        f"<ul>{''.join(files)}</ul>"
        f"<p>Made by realtyframes {esc(__version__)}: rf.market_summary, rf.compare_markets, "
        "rf.price_drops, rf.price_drop_summary, rf.traffic_summary and rf.lead_funnel on the "
        "frames above.</p>"
    )
    return render_page(title, sections, meta=meta, lead=lead, footer=footer)
