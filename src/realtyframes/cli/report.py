"""``realtyframes report market``: load, compute and write the market report; print its path.

The command provides the client (the report never starts one): the settings' service, else the
embedded sandbox; for a date other than today on the embedded sandbox, a sandbox whose clock is
that date, so a report of any day is reproducible.

>>> main(["report", "market", "--city", "Miami", "--out", "reports"])  # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from realtyframes._config import Settings
from realtyframes.cli._preflight import preflight
from realtyframes.cli._report_pdf import add_pdf_arguments, pdf_usage_error
from realtyframes.cli.config import (
    PROG,
    add_arguments,
    add_source_argument,
    announce_source,
    checked,
    client_options,
    make_client,
    run_guarded,
)

if TYPE_CHECKING:
    from realtyframes._client import Client
    from realtyframes.report import MarketReportOptions

__all__ = ["add_report", "open_report_client", "run_report"]

logger = logging.getLogger("realtyframes.cli")


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


def add_report(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``report market`` and its options."""
    from realtyframes._spec import SALE_SEGMENT as SALE_TYPES
    from realtyframes.report.options import BY_CHOICES, EDITIONS, TRENDS_FREQS

    report = subparsers.add_parser(
        "report",
        help="write a report (HTML with its data as Parquet and CSV)",
        description="Write a scheduled report: one self-contained HTML file, and next to it "
        "the frames it was computed from as Parquet and CSV.",
    )
    kinds = report.add_subparsers(dest="report", metavar="REPORT", required=True)
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
    parser.set_defaults(func=_run_report)
    _add_brokerage(kinds)


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


def _add_brokerage(kinds: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``report brokerage`` (the internal report) and its options."""
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
    parser.set_defaults(func=_run_brokerage)


def _run_brokerage(args: argparse.Namespace) -> int:
    prog = f"{PROG} report brokerage"
    return (
        preflight("report brokerage", args)
        or pdf_usage_error(args, prog)
        or run_guarded(prog, args, lambda settings: run_brokerage(args, settings))
    )


def _print_paths(html: Path, pdf: Path | None) -> None:
    """Print the report's path, then its PDF's when one was printed (stdout)."""
    for path in (html, pdf):
        if path is not None:
            print(os.fspath(path), flush=True)


def _notify_targets(args: argparse.Namespace) -> list[Any]:
    """The ``--notify`` and ``--notify-file`` targets, checked before any request."""
    from realtyframes.notify import parse_targets, read_targets_file

    targets = parse_targets(args.notify)
    if args.notify_file:
        targets += read_targets_file(args.notify_file)
    return targets


def run_brokerage(args: argparse.Namespace, settings: Settings) -> int:
    """The ``report brokerage`` command: load, compute, write; print the HTML path (stdout) and
    the PDF's (``--pdf``); send it to the ``--notify`` targets."""
    from realtyframes.notify import raise_for_failures, send
    from realtyframes.report import brokerage_message, load_brokerage_report, write_brokerage_report

    targets = _notify_targets(args)
    day = args.as_of or dt.datetime.now(dt.UTC).date()
    quiet = bool(getattr(args, "quiet", False))
    with open_report_client(
        settings,
        day,
        explicit_date=args.as_of is not None,
        progress=False if quiet else None,
        **client_options(args),
    ) as (client, source):
        report = load_brokerage_report(client, as_of=day, window_days=args.window_days,
                                       refresh=bool(args.refresh), source=source, top=args.top)  # fmt: skip
    files = write_brokerage_report(report, args.out, pdf=bool(args.pdf), paper=args.paper)
    _print_paths(files.html, files.pdf)
    if targets:
        message = brokerage_message(report, files.html, pdf_file=files.pdf)
        raise_for_failures(send(targets, message), "the brokerage report")
    return 0


def _run_report(args: argparse.Namespace) -> int:
    return (
        preflight("report market", args)
        or pdf_usage_error(args, f"{PROG} report market")
        or run_guarded(f"{PROG} report", args, lambda settings: run_report(args, settings))
    )


def _utc_midnight(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(0), tzinfo=dt.UTC)


@contextmanager
def open_report_client(
    settings: Settings,
    day: dt.date,
    *,
    explicit_date: bool,
    progress: bool | None = None,
    source: str = "platform",
    **options: Any,
) -> Iterator[tuple[Client, str]]:
    """A client for the report and the source's name in it.

    With no host and no credentials: the embedded sandbox; when a date other than today is asked
    for, a sandbox whose clock is that date (so a report of any day is reproducible).
    ``source="reso"``: the config file's RESO source.
    """
    from realtyframes._client import Client
    from realtyframes.report.options import EMBEDDED_SOURCE, data_source

    embedded = settings.embedded and source == "platform"
    if embedded and explicit_date and day != dt.datetime.now(dt.UTC).date():
        from realtyframes.sandbox import serve

        announce_source(settings)

        with (
            serve(as_of=_utc_midnight(day)) as url,
            Client(
                base_url=url, cache_dir=settings.cache_dir, progress=progress, **options
            ) as client,
        ):
            logger.info("embedded sandbox with its clock at %s 00:00 UTC", day.isoformat())
            yield client, EMBEDDED_SOURCE
        return
    with make_client(settings, source, progress=progress, **options) as client:
        yield client, data_source(client)


def _dry_run(args: argparse.Namespace, settings: Settings, options: Any) -> int:
    """``report market --dry-run``: each sync's plan, then the total (stdout)."""
    from realtyframes.loaders import duration

    with open_report_client(
        settings,
        options.day,
        explicit_date=args.as_of is not None,
        progress=False,
        source=args.source,
        **client_options(args),
    ) as (client, _):
        plans = [client.plan_sync(refresh=bool(args.refresh), **s) for s in options.scopes]
    for plan in plans:
        print(repr(plan))
    requests = sum(p.requests for p in plans)
    seconds = [p.seconds for p in plans]
    time = (
        f", {duration(sum(s for s in seconds if s is not None))} at the rate limit"
        if None not in seconds
        else ""
    )
    print(f"total: {requests:,} requests for {len(plans)} syncs{time}; the contacts and "
          "analytics add a few", flush=True)  # fmt: skip
    return 0


def _scope(options: Any) -> dict[str, Any]:
    """What makes two reports "the same" in the run history (not the date: one a day)."""
    return {
        "City": list(options.cities),
        "PropertyType": list(options.property_types),
        "by": options.by,
        "window_days": options.window_days,
    }


def chart_worker_count(requested: int | None, options: MarketReportOptions) -> int | None:
    """The chart workers ``report market`` asks for: ``--chart-workers`` when given; none for a
    one-page client edition (4 charts: a worker's imports cost more than it saves,
    docs/benchmarks.md); else None (the idle cores).

    >>> from realtyframes.report import MarketReportOptions as Options
    >>> chart_worker_count(None, Options()), chart_worker_count(None, Options(areas=3))
    (0, None)
    """
    if requested is None and options.edition == "client" and not options.areas:
        return 0
    return requested


def run_report(args: argparse.Namespace, settings: Settings) -> int:
    """The ``report market`` command: load, compute, write; print the HTML path (stdout)."""
    from realtyframes.loaders import recorded
    from realtyframes.notify import raise_for_failures, send
    from realtyframes.report import (
        MarketReportOptions,
        chart_workers,
        compute_market_report,
        load_market_frames,
        report_message,
        write_market_report,
    )

    targets = _notify_targets(args)  # checked before any request
    from realtyframes.report.brand import brand_from_config

    brand = brand_from_config(
        settings.config_path,
        brand_name=getattr(args, "brand_name", None),
        brand_logo=getattr(args, "brand_logo", None),
        agent=getattr(args, "agent", None),
        disclaimer=getattr(args, "disclaimer", None),
    )  # checked (a logo that is not an image) before any load
    options = MarketReportOptions(
        edition=getattr(args, "edition", "client"),
        areas=getattr(args, "areas", 0),
        brand=brand,
        as_of=args.as_of,
        window_days=args.window_days,
        by=args.by,
        cities=tuple(args.city or ()),
        property_types=tuple(args.property_type or ("Residential",)),
        comps=tuple(args.comps),
        min_sample=args.min_sample,
        trends_freq=args.trends_freq,
    )
    quiet = bool(getattr(args, "quiet", False))
    if getattr(args, "dry_run", False):
        return _dry_run(args, settings, options)
    workers = chart_worker_count(args.chart_workers, options)
    # the chart workers (started first) import matplotlib and pandas while the data loads; the
    # report is one record in the run history (its syncs and loads keep their own)
    with (
        chart_workers(workers),
        open_report_client(
            settings,
            options.day,
            explicit_date=args.as_of is not None,
            progress=False if quiet else None,
            source=args.source,
            **client_options(args),
        ) as (client, source),
        recorded(client.session, "report", "report", _scope(options)) as run,
    ):
        options = dataclasses.replace(options, source=source)
        frames = load_market_frames(
            client, options, refresh=bool(args.refresh), wait=getattr(args, "wait", None)
        )
        run.rows = len(frames.listings)
        logger.info("computing the report (%d listings)", len(frames.listings))
        report = compute_market_report(frames, options)
        files = write_market_report(
            report,
            args.out,
            xlsx=bool(args.xlsx),
            workers=workers,
            pdf=bool(getattr(args, "pdf", False)),
            paper=getattr(args, "paper", "letter"),
        )
    logger.info("wrote %s and %d other files", files.html, len(files.all()) - 1)
    _print_paths(files.html, files.pdf)
    if targets:
        message = report_message(report, files.html, pdf_file=files.pdf)
        raise_for_failures(send(targets, message), "the report")
    return 0
