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
from realtyframes.cli._report_args import brokerage_parser, market_parser, report_kinds
from realtyframes.cli._report_pdf import pdf_usage_error
from realtyframes.cli.config import (
    PROG,
    announce_source,
    client_options,
    make_client,
    run_guarded,
)

if TYPE_CHECKING:
    from realtyframes._client import Client
    from realtyframes.report import MarketReportOptions

__all__ = ["add_report", "open_report_client", "run_report"]

logger = logging.getLogger("realtyframes.cli")


def add_report(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``report market`` and ``report brokerage`` with their options."""
    kinds = report_kinds(subparsers)
    market_parser(kinds).set_defaults(func=_run_report)
    brokerage_parser(kinds).set_defaults(func=_run_brokerage)


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
