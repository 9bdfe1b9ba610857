"""The website traffic and leads sections (pure HTML): of a MarketReport, or of the traffic
summary and lead funnel themselves (the brokerage report, :mod:`realtyframes.report.brokerage`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from realtyframes.report._charts import chart
from realtyframes.report._charts import render_chart as _figure
from realtyframes.report._html import Cell, Section
from realtyframes.report._html import render_table as _table
from realtyframes.report._render_common import frame_table
from realtyframes.report.compute import MarketReport

if TYPE_CHECKING:
    from realtyframes.analysis import LeadFunnel, TrafficSummary

__all__ = ["funnel_section", "leads_section", "traffic_section", "website_section"]


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


def traffic_section(report: MarketReport) -> Section:
    """The market report's website traffic section."""
    return website_section(report.traffic, report.frames.period)


def leads_section(report: MarketReport) -> Section:
    """The market report's leads section."""
    return funnel_section(report.funnel)


def website_section(traffic: TrafficSummary | None, period: str | None) -> Section:
    """Website traffic of the analytics ``period``: headline table, timeline and breakdowns."""
    from realtyframes import plots

    if traffic is None:
        return Section(
            "traffic",
            "Website traffic",
            '<p class="empty">Website analytics were not available to this account.</p>',
        )
    t = traffic
    rows: list[list[Cell | str]] = []
    for metric, value in t.headline["value"].items():
        label, kind = _TRAFFIC_LABELS.get(str(metric), (str(metric), "number"))
        rows.append([label, Cell(value, kind, row=str(metric), col="value")])
    table = _table(
        "traffic",
        ["Metric", "Value"],
        rows,
        caption=f"Website, period {period} (ending at the server's clock). The "
        "analytics API offers no earlier period to compare with. Shares in the charts are of "
        "all the period's visitors.",
        numeric_header=[False, True],
    )
    charts = _figure(
        chart(plots.traffic_timeline, t),
        "Visitors, pageviews and conversions per day",
        "traffic_timeline",
    ) + _figure(
        chart(plots.traffic_panels, t),
        "Top traffic sources, top pages, visitors by device and top countries",
        "traffic_panels",
    )
    return Section("traffic", "Website traffic", table + charts)


def funnel_section(funnel: LeadFunnel | None) -> Section:
    """The lead funnel: contacts by stage and by source, the funnel and new leads per week."""
    from realtyframes import plots

    if funnel is None:
        return Section(
            "leads",
            "Leads",
            '<p class="empty">CRM contacts were not available to this account.</p>',
        )
    f = funnel
    stage_spec = [
        ("contacts", "Contacts", "count"),
        ("share", "Share", "percent"),
        ("reached", "Reached", "count"),
        ("reached_share", "Reached (share of funnel)", "percent"),
    ]
    stage_table = frame_table(
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
    source_table = frame_table(
        "lead_sources",
        "Source",
        f.by_source,
        source_spec,
        "Contacts by lead source; converted = past the first funnel stage.",
    )
    charts = (
        '<div class="grid2">'
        + _figure(chart(plots.lead_funnel, f), "Lead funnel", "lead_funnel")
        + _figure(chart(plots.leads_per_week, f), "New leads per week", "leads_per_week")
        + "</div>"
    )
    return Section("leads", "Leads", stage_table + source_table + charts)
