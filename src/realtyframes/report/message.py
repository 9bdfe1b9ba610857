"""The notification of a report: its headline figures as a summary, the report attached (its PDF
when one was printed, else the HTML file; e-mail only; a webhook or chat gets the summary).
:func:`report_message` is the market report's, :func:`brokerage_message` the brokerage report's
(its headline counts only: no contact's data in the body).

>>> report = compute_market_report(frames, options)  # doctest: +SKIP
>>> report_message(report, files.html).title  # doctest: +SKIP
'realtyframes market report 2026-03-02 (Miami): 412 active, 96 sold in 90 days'
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from realtyframes.notify import Message, table
from realtyframes.report.render import HEADLINE

if TYPE_CHECKING:
    from realtyframes.report.brokerage import BrokerageReport
    from realtyframes.report.compute import MarketReport

__all__ = ["brokerage_message", "report_message"]

#: Headline figures in the message: the report's headline cards, then the price cuts and the web
#: figures: key, label (``{days}``: the window), kind of number.
FIGURES: tuple[tuple[str, str, str], ...] = (
    *HEADLINE,
    ("price_drops", "Price cuts, {days}", "count"),
    ("median_drop_pct", "Median price cut", "percent"),
    ("visitors", "Website visitors", "count"),
    ("conversion_rate", "Conversion rate", "percent"),
    ("new_leads", "New leads", "count"),
)


def _figure(value: Any, kind: str) -> str:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return "—"
    if math.isnan(number):
        return "—"
    if kind == "money":
        return f"${number:,.0f}"
    if kind == "percent":
        return f"{number:.1%}"
    if kind == "count":
        return f"{number:,.0f}"
    return f"{number:,.1f}"


def report_message(
    report: MarketReport,
    html_file: Path | str | None = None,
    *,
    pdf_file: Path | str | None = None,
) -> Message:
    """The message of ``report``: a title with the main figures, a table of the headline
    figures, and the written report attached for e-mail targets: ``pdf_file`` (its PDF) when
    given, else ``html_file``."""
    options = report.options
    days = f"{float(options.window_days):g} days"
    where = ", ".join(options.cities) if options.cities else "all markets"
    h = report.headline
    rows = [
        [label.format(days=days), _figure(h[key], kind)] for key, label, kind in FIGURES if key in h
    ]
    title = (
        f"realtyframes market report {options.day.isoformat()} ({where}): "
        f"{_figure(h.get('active_listings'), 'count')} active, "
        f"{_figure(h.get('homes_sold'), 'count')} sold in {days}"
    )
    intro = f"Market report of {options.day.isoformat()} for {where} (source: {options.source})."
    return _message(title, intro, rows, html_file, pdf_file)


def _message(
    title: str,
    intro: str,
    rows: list[list[str]],
    html_file: Path | str | None,
    pdf_file: Path | str | None,
) -> Message:
    attach = pdf_file if pdf_file is not None else html_file
    attached = " The full report is attached." if attach is not None else ""
    text, md, html = table(["Figure", "Value"], rows)
    return Message(
        title,
        text=f"{intro}\n\n{text}",
        markdown=f"{intro}\n\n{md}",
        html=f"<p>{intro}{attached}</p>{html}",
        attach=(Path(attach),) if attach is not None else (),
    )


def brokerage_message(
    report: BrokerageReport,
    html_file: Path | str | None = None,
    *,
    pdf_file: Path | str | None = None,
) -> Message:
    """The message of the brokerage ``report``: a title, the page's headline figures (website
    and CRM counts, never a contact's name, e-mail or phone) and the report attached for e-mail
    targets (``pdf_file`` when given, else ``html_file``).

    >>> brokerage_message(report, files.html).title  # doctest: +SKIP
    'realtyframes brokerage report 2026-03-02 (internal): website period 90d'
    """
    from realtyframes.report.brokerage import headline_figures

    day = report.day.isoformat()
    rows = [[label, _figure(value, kind)] for _, label, value, kind in headline_figures(report)]
    title = f"realtyframes brokerage report {day} (internal): website period {report.period}"
    intro = f"Brokerage report of {day}, internal, not for clients (source: {report.source})." + (
        "".join(f" {note}" for note in report.notes)
    )
    return _message(title, intro, rows, html_file, pdf_file)
