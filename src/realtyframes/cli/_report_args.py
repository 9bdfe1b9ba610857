"""The arguments of ``realtyframes report market`` and ``report brokerage`` (argparse only).

>>> import argparse
>>> kinds = argparse.ArgumentParser().add_subparsers()
>>> market_parser(kinds).parse_args(["--city", "Miami"]).city
['Miami']
"""

from __future__ import annotations

import argparse
import datetime as dt
from typing import Any

from realtyframes.cli._report_pdf import add_pdf_arguments
from realtyframes.cli.config import add_arguments, add_source_argument, checked

__all__ = ["brokerage_parser", "market_parser", "report_kinds"]


def _report_date(text: str) -> dt.date:
    """A report date: YYYY-MM-DD."""
    try:
        return dt.date.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date (YYYY-MM-DD)") from None


_days = checked(
    float,
    "a number of days",
    lambda v: 0 < v <= 3650,
    lambda t, v: f"{v:g} is not within (0, 3650] days",
)


_seconds = checked(
    float, "a number of seconds", lambda v: 0 <= v < 1e7, lambda t, v: f"{t} must be >= 0"
)


_areas = checked(
    int, "a number of areas", lambda v: 0 <= v <= 50, lambda t, v: f"{v} is not 0 to 50"
)


def _logo(text: str) -> Any:
    """A --brand-logo: a PNG, JPEG or SVG file (checked by its first bytes, before any load)."""
    from realtyframes.errors import QueryError
    from realtyframes.report.brand import check_logo

    try:
        return check_logo(text)
    except QueryError as error:
        raise argparse.ArgumentTypeError(str(error.problem)) from None


def report_kinds(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse._SubParsersAction[argparse.ArgumentParser]:
    """Add ``report`` and return its kinds (``market``, ``brokerage``)."""
    report = subparsers.add_parser(
        "report",
        help="write a report (HTML with its data as Parquet and CSV)",
        description="Write a scheduled report: one self-contained HTML file, and next to it "
        "the frames it was computed from as Parquet and CSV.",
    )
    return report.add_subparsers(dest="report", metavar="REPORT", required=True)


def market_parser(
    kinds: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    """Add ``report market`` and its options; return its parser."""
    parser = kinds.add_parser(
        "market",
        help="the market update: client edition (default) or analyst edition",
        description="The market report as one self-contained HTML file (charts embedded, "
        "printable) plus its data. The client edition (default) gives one printed page per area "
        "(the month and the rolling 12 months against a year earlier, prices from a "
        "constant-quality index, a summary, charts, price cuts, a map); --edition analyst gives "
        "every view with the definitions. Neither holds website, lead or contact data. Runs on the embedded sandbox when no host "
        "or credentials are configured. Prints the report's path. Exit codes: 0 done, 1 "
        "failure, 2 bad usage, 3 done but a run was flagged in the run history (see "
        "`realtyframes runs`), 75 another run kept syncing the market past --wait.",
    )
    _add_scope_arguments(parser)
    _add_run_arguments(parser)
    _add_content_arguments(parser)
    _add_brand_arguments(parser)
    parser.add_argument(
        "--xlsx", action="store_true", help="also write one Excel workbook of every frame"
    )
    parser.add_argument(
        "--chart-workers",
        type=int,
        default=None,
        metavar="N",
        help="processes drawing the charts beside this one (0: none; default: the idle cores "
        "besides this process's, at most 3; none for a one-page client edition); the same "
        "report either way",
    )
    _add_notify_arguments(parser)
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print what the report's syncs would cost (requests, time at the rate limit) from "
        "a few cheap requests, and write nothing",
    )
    add_pdf_arguments(parser)
    add_arguments(parser)
    add_source_argument(parser)
    return parser


def _add_scope_arguments(parser: argparse.ArgumentParser) -> None:
    """The market's scope: cities, property types, the dimension, the day and the window."""
    from realtyframes._spec import SALE_SEGMENT as SALE_TYPES
    from realtyframes.report.options import BY_CHOICES

    parser.add_argument(
        "--city",
        action="extend",
        nargs="+",
        metavar="CITY",
        help="limit to these cities (repeatable; default: the whole market)",
    )
    parser.add_argument(
        "--property-type",
        action="extend",
        nargs="+",
        metavar="TYPE",
        help=f"sale property types to load (default Residential; allowed: {', '.join(SALE_TYPES)})",
    )
    parser.add_argument(
        "--by",
        default="City",
        choices=BY_CHOICES,
        help="market dimension (default City)",
    )
    parser.add_argument(
        "--as-of",
        type=_report_date,
        metavar="DATE",
        help="report date YYYY-MM-DD, the end of the window (default: today, UTC)",
    )
    parser.add_argument(
        "--window-days",
        type=_days,
        default=90.0,
        metavar="N",
        help="trailing window of the market metrics and price drops (default 90)",
    )


def _add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """Where the report goes and how the market is loaded."""
    parser.add_argument(
        "--out", default="reports", metavar="DIR", help="output folder (default ./reports)"
    )
    parser.add_argument(
        "--refresh", action="store_true", help="reload the market in full (ignore the cache)"
    )
    parser.add_argument(
        "--wait",
        type=_seconds,
        default=900.0,
        metavar="SECONDS",
        help="wait this long for another run syncing the same market (default 900; 0: do not "
        "wait), then exit 75; a sync it completed meanwhile is used, not repeated",
    )


def _add_content_arguments(parser: argparse.ArgumentParser) -> None:
    """What the report holds: comps, sample floor, the recent view, the edition, the areas."""
    from realtyframes.report.options import EDITIONS, TRENDS_FREQS

    parser.add_argument(
        "--comps",
        action="extend",
        nargs="+",
        default=[],
        metavar="ID",
        help="show the comparable sales of these ListingIds (repeatable)",
    )
    parser.add_argument(
        "--min-sample",
        type=int,
        default=5,
        metavar="N",
        help="medians and ratios on fewer than N listings are shown as '—' (default 5)",
    )
    parser.add_argument(
        "--trends-freq",
        default="4W",
        choices=TRENDS_FREQS,
        help="the Trends section's recent view beside the months: the last 26 rolling 4-week "
        "periods (4W, Redfin's view; default), weeks (W), or none, months only (M)",
    )
    parser.add_argument(
        "--edition",
        default="client",
        choices=EDITIONS,
        help="client (default): one page per area, the market only, to forward to clients; "
        "analyst: every view, the definitions with their formulas, the data files",
    )
    parser.add_argument(
        "--areas",
        type=_areas,
        default=0,
        metavar="N",
        help="client edition: a pack of the N largest markets by --by (a cover, then one page "
        "each); default: the cities given, else the whole market on one page",
    )


def _add_brand_arguments(parser: argparse.ArgumentParser) -> None:
    """The brokerage's brand on each page."""
    parser.add_argument("--brand-name", metavar="TEXT", help="the brokerage's name on each page")
    parser.add_argument(
        "--brand-logo",
        type=_logo,
        metavar="PATH",
        help="a PNG, JPEG or SVG logo, embedded in the page",
    )
    parser.add_argument(
        "--agent", metavar="TEXT", help='the agent on each page: "name, phone, e-mail"'
    )
    parser.add_argument(
        "--disclaimer",
        metavar="TEXT",
        help="the line at the foot of each page (default: the source, its date, and "
        '"deemed reliable, not guaranteed"); all four also from the config file\'s [report] table',
    )


def _add_notify_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--notify`` and ``--notify-file`` to a report's parser."""
    parser.add_argument(
        "--notify",
        action="append",
        default=[],
        metavar="URL",
        help="send the report to this apprise URL (repeatable): e-mail gets the report attached "
        "(its PDF with --pdf, else the HTML; "
        "mailtos://user:pw@smtp.host?to=addr), others a summary with the headline figures "
        "(json://host/path, slack://..., msteams://...); URLs are never shown unmasked",
    )
    parser.add_argument(
        "--notify-file",
        metavar="PATH",
        help="apprise URLs, one a line, from a file of mode 0600 (no URL in the process list)",
    )


def brokerage_parser(
    kinds: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    """Add ``report brokerage`` (the internal report) and its options; return its parser."""
    parser = kinds.add_parser(
        "brokerage",
        help="the brokerage's internal report: website traffic, most viewed listings, leads, CRM",
        description="The brokerage's internal report: website traffic and its sources, the "
        "listings with the most page views (by address), the lead funnel and the CRM, as one "
        "self-contained HTML file plus its data; the files holding contact data are private "
        "(0600). Not for clients: `report market` is. Prints the report's path.",
    )
    parser.add_argument("--as-of", type=_report_date, metavar="DATE",
                        help="report date YYYY-MM-DD (default: today, UTC)")  # fmt: skip
    parser.add_argument("--window-days", type=_days, default=90.0, metavar="N",
                        help="the website period covering these days (default 90)")  # fmt: skip
    parser.add_argument("--top", type=int, default=10, metavar="N",
                        help="most viewed listings shown (default 10)")  # fmt: skip
    parser.add_argument("--out", default="reports", metavar="DIR",
                        help="output folder (default ./reports)")  # fmt: skip
    parser.add_argument("--refresh", action="store_true", help="reload (ignore the cache)")
    _add_notify_arguments(parser)
    add_pdf_arguments(parser)
    add_arguments(parser)
    return parser
