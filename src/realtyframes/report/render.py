"""Rendering a market report: one self-contained HTML document (pure; see :mod:`._html`).

Headline cards (each with its change against the previous window and a year earlier, and its n),
then the sections in order: what changed since the last report, trends, the market comparison
(and the largest subtypes), price drops, a map of the market, comps (``--comps``), website traffic
and leads; each a table (exact values in ``data-value``) and its charts (``rf.plot`` figures,
embedded PNG). Sections live in ``_render_changes``, ``_render_comps``, ``_render_market``,
``_render_trends`` and ``_render_web``.

>>> html = render_market_report(report)  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from realtyframes._version import __version__
from realtyframes.analysis import REFERENCE_LABEL, SAMPLE_SIZE_OF
from realtyframes.report._charts import deferred_charts
from realtyframes.report._html import Card, Section, esc, render_cards, render_page
from realtyframes.report._render_changes import changes_section, drops_section
from realtyframes.report._render_comps import comps_section
from realtyframes.report._render_market import (
    SHORT_LABELS,
    TABLE_METRICS,
    maps_section,
    market_section,
)
from realtyframes.report._render_trends import trends_section
from realtyframes.report._render_web import leads_section, traffic_section
from realtyframes.report.compute import COVERAGE_DAYS, MarketReport
from realtyframes.report.options import DATA_FILES

__all__ = ["HEADLINE", "SHORT_LABELS", "TABLE_METRICS", "render_market_report"]


def _pct_note(value: Any, label: str) -> str | None:
    if value is None or pd.isna(value):
        return None
    arrow = "▲" if value > 0 else "▼" if value < 0 else "="
    return f"{arrow} {abs(float(value)):.1%} vs {label}"


#: The headline cards: metric, label (``{days}``: the window), number kind.
HEADLINE: tuple[tuple[str, str, str], ...] = (
    ("active_listings", "Active listings", "count"),
    ("new_listings", "New listings, {days}", "count"),
    ("homes_sold", "Homes sold, {days}", "count"),
    ("median_sale_price", "Median sale price, {days}", "money"),
    ("median_dom", "Median days on market, {days}", "number"),
    ("months_of_supply", "Months of supply", "number"),
)


def _card(report: MarketReport, metric: str, text: str, kind: str) -> Card:
    """A headline number with its change against the previous window and a year earlier, and
    its n; below the minimum sample it is not shown (its n is)."""
    ref = report.comparison[REFERENCE_LABEL]
    days = f"{float(report.options.window_days):g} days"
    value = ref[metric]
    notes = []
    n_of = SAMPLE_SIZE_OF.get(metric)
    n = ref[n_of] if n_of else value
    thin_sample = n_of is not None and (pd.isna(n) or n < report.options.min_sample)
    if thin_sample:
        value = None
    else:
        previous = report.options.window_start - pd.Timedelta(
            days=float(report.options.window_days)
        )
        if report.covers(previous):  # the one coverage rule: the whole earlier window in the data
            notes.append(_pct_note(ref.get(f"{metric}_pct_change"), f"previous {days}"))
        if report.year_ago is not None and metric in report.year_ago.index:
            before = report.year_ago.loc[metric, REFERENCE_LABEL]
            if not pd.isna(before) and before and not pd.isna(value):
                notes.append(_pct_note(float(value) / float(before) - 1, "a year earlier"))
    notes.append(f"n={int(n):,}" if not pd.isna(n) else None)
    note = " · ".join(x for x in notes if x)
    return Card(metric, text.format(days=days), value, kind, note or None)


def _cards(report: MarketReport) -> str:
    h = report.headline
    days = f"{float(report.options.window_days):g} days"
    cards = [_card(report, metric, text, kind) for metric, text, kind in HEADLINE]
    cards.append(
        Card(
            "price_drops",
            f"Price cuts, {days}",
            h["price_drops"],
            "count",
            None if pd.isna(h["median_drop_pct"]) else f"median cut {h['median_drop_pct']:.1%}",
        )
    )
    if "visitors" in h:
        cards.append(
            Card("visitors", f"Website visitors, {report.frames.period}", h["visitors"], "count")
        )
        cards.append(Card("conversion_rate", "Conversion rate", h["conversion_rate"], "percent"))
    if "contacts" in h:
        cards.append(Card("contacts", "CRM contacts", h["contacts"], "count"))
    return render_cards(cards) + coverage_note(report)


def coverage_note(report: MarketReport) -> str:
    """Why a change against the past is not shown: the data do not cover the earlier period."""
    o = report.options
    days = float(o.window_days)
    previous = o.window_start - pd.Timedelta(days=days)
    year_earlier = o.window_start - pd.Timedelta(days=365)
    missing = [
        label
        for label, start in (
            (f"the previous {days:g} days", previous),
            ("a year earlier", year_earlier),
        )
        if not report.covers(start)
    ]
    if not missing:
        return ""
    since = report.covered_from.date().isoformat() if report.covered_from is not None else "never"
    return (
        f'<p class="notice">No change against {" or ".join(missing)}: the data cover this market '
        f"from {since} on ({COVERAGE_DAYS} days after its oldest listing entered; before that, "
        "listings that entered earlier are missing), and a comparison is shown only where the "
        "data cover the whole earlier period.</p>"
    )


def definitions_section() -> Section:
    """Every metric's definition (docs/metrics.md, as plain text), so the page carries its own
    glossary: a reader of a forwarded report has no docs folder."""
    from realtyframes.report.definitions import metric_definitions

    defs = metric_definitions()
    parts = []
    for section, rows in defs.groupby("section", sort=False):
        items = "".join(
            f'<dt id="def-{esc(m)}"><code>{esc(m)}</code></dt><dd>{esc(d)}</dd>'
            for m, d in zip(rows["metric"], rows["definition"], strict=True)
        )
        parts.append(f"<h3>{esc(section)}</h3><dl>{items}</dl>")
    intro = (
        "How each figure is computed: one definition per metric, the same as realtyframes' "
        "docs/metrics.md (with Redfin's or Zillow's definition beside ours there)."
    )
    return Section("definitions", "Definitions", "".join(parts), intro)


def render_market_report(
    report: MarketReport, *, stem: str | None = None, workers: int | None = None
) -> str:
    """The report as one self-contained HTML document (see :mod:`realtyframes.report._html`).

    Its charts are drawn once the page is laid out, by this process and ``workers`` worker
    processes together (default: as many as the cores allow, see ``_charts``; 0: this process
    alone); the same bytes either way.
    """
    with deferred_charts() as charts:
        page = _page(report, stem)
    return charts.fill(page, workers=workers)


def _page(report: MarketReport, stem: str | None) -> str:
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
    notes = "".join(
        f'<p class="notice">{esc(n)}</p>' for n in (*report.frames.notes, *report.notes)
    )
    lead = _cards(report) + notes
    maybe = [
        changes_section(report),
        trends_section(report),
        market_section(report),
        drops_section(report),
        maps_section(report),
        comps_section(report),
        traffic_section(report),
        leads_section(report),
    ]
    sections = [s for s in maybe if s is not None]
    sections.append(definitions_section())
    files = []
    for name, what in DATA_FILES.items():
        if name in report.frames.data_frames():
            links = " · ".join(
                f'<a href="{esc(f"{stem}.{name}.{fmt}")}">{fmt}</a>' for fmt in ("parquet", "csv")
            )
            files.append(f"<li><code>{esc(name)}</code>: {esc(what)} ({links})</li>")
    for listing_id in report.comps:
        name = f"comps-{listing_id}"
        links = " · ".join(
            f'<a href="{esc(f"{stem}.{name}.{fmt}")}">{fmt}</a>' for fmt in ("parquet", "csv")
        )
        files.append(f"<li><code>{esc(name)}</code>: the comparable sales of {esc(listing_id)} "
                     f"shown above ({links})</li>")  # fmt: skip
    footer = (
        "<p>The data behind this report, next to this file:</p>"
        f"<ul>{''.join(files)}</ul>"
        f"<p>Made by realtyframes {esc(__version__)}: rf.market_summary, rf.compare_markets, "
        "rf.price_drops, rf.price_drop_summary, rf.traffic_summary and rf.lead_funnel on the "
        "frames above.</p>"
    )
    return render_page(title, sections, meta=meta, lead=lead, footer=footer)
