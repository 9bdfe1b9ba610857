"""The ``realtyframes`` command line.

Subcommands register themselves in :func:`build_parser` (one ``_add_<name>`` function each, with
``func`` set to a handler taking the parsed arguments and returning an exit code).

>>> main(["sandbox", "--port", "0", "--listings", "500"])  # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from realtyframes.sandbox._options import Faults

PROG = "realtyframes"


def _as_of(text: str) -> datetime:
    """An ISO 8601 date or timestamp; a date or naive time is read as UTC."""
    try:
        value = datetime.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an ISO 8601 date or timestamp (e.g. 2026-06-30 or 2026-06-30T12:00:00Z)"
        ) from None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _count(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value} is too small; minimum {minimum}")
        return value

    return parse


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is not within 0..65535 (0 picks a free port)")
    return value


def _milliseconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of milliseconds") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"{value} must be >= 0")
    return value


def _rate_limit(text: str) -> tuple[int, float]:
    from realtyframes.sandbox._limits import parse_rate_limit

    try:
        return parse_rate_limit(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _faults(text: str) -> Faults:
    from realtyframes.sandbox._faults import validate_faults
    from realtyframes.sandbox._options import Faults

    try:
        faults = Faults.parse(text)
        validate_faults(faults)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f"{text!r}: {exc} (expected NAME=VALUE,... e.g. 'error_rate=0.1,drift=2')"
        ) from None
    return faults


def _add_sandbox(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "sandbox",
        help="serve the embedded sandbox until stopped (Ctrl-C)",
        description="Serve the embedded sandbox of the listings, contacts and analytics API "
        "on loopback until stopped with Ctrl-C.",
    )
    parser.add_argument(
        "--port", type=_port, default=8642, help="TCP port (default 8642; 0 = free)"
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument(
        "--protected", action="store_true", help="require API keys / OAuth tokens and scopes"
    )
    parser.add_argument(
        "--rate-limit",
        type=_rate_limit,
        metavar="N/WINDOW",
        help="quota per credential, e.g. 60/60s (default: generous when open, by plan when protected)",
    )
    parser.add_argument("--listings", type=_count(1), default=5000, help="listings (default 5000)")
    parser.add_argument(
        "--contacts", type=_count(0), default=500, help="CRM contacts (default 500)"
    )
    parser.add_argument("--seed", type=_count(0), default=7, help="data seed (default 7)")
    parser.add_argument(
        "--as-of",
        type=_as_of,
        metavar="ISO",
        help="the sandbox clock at start (default: today 00:00 UTC)",
    )
    parser.add_argument(
        "--latency-ms", type=_milliseconds, default=0.0, help="latency added to every answer"
    )
    parser.add_argument(
        "--faults",
        type=_faults,
        metavar="NAME=VALUE,...",
        help="fault injection, e.g. 'error_rate=0.1,burst_429=3,drift=2'",
    )
    parser.set_defaults(func=_run_sandbox)


def _run_sandbox(args: argparse.Namespace) -> int:
    from realtyframes.sandbox._options import DEMO, SandboxOptions
    from realtyframes.sandbox._server import run_forever

    fields: dict[str, object] = {
        "seed": args.seed,
        "listings": args.listings,
        "contacts": args.contacts,
        "protected": args.protected,
        "rate_limit": args.rate_limit,
        "latency_ms": args.latency_ms,
    }
    if args.as_of is not None:
        fields["as_of"] = args.as_of
    if args.faults is not None:
        fields["faults"] = args.faults
    options = SandboxOptions(**fields)  # type: ignore[arg-type]

    def ready(url: str) -> None:
        mode = "protected" if options.protected else "open"
        print(
            f"realtyframes sandbox serving {url} ({mode} mode, seed {options.seed}, "
            f"{options.listings} listings, clock {options.as_of.isoformat()})"
        )
        sample = f"curl -s '{url}/v1/listings?PropertyType=Residential&Limit=2'"
        if options.protected:
            print("Demo credentials (documented, not secret):")
            print(f"  API key (standard plan):  {DEMO.api_key}   (header X-API-Key)")
            print(f"  API key (premium plan):   {DEMO.premium_api_key}")
            print(f"  OAuth client_id:          {DEMO.client_id}")
            print(f"  OAuth client_secret:      {DEMO.client_secret}")
            print(f"  OAuth redirect_uri:       {DEMO.redirect_uri}   (any loopback port)")
            sample = sample.replace("curl -s", f"curl -s -H 'X-API-Key: {DEMO.api_key}'")
        print(f"Try: {sample}")
        print("Press Ctrl-C to stop.", flush=True)

    try:
        run_forever(options, host=args.host, port=args.port, on_ready=ready)
    except OSError as exc:
        print(f"{PROG} sandbox: cannot serve on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    print("sandbox stopped", flush=True)
    return 0


def _report_date(text: str) -> date:
    """A report date: YYYY-MM-DD."""
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date (YYYY-MM-DD)") from None


def _days(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of days") from None
    if not 0 < value <= 3650:
        raise argparse.ArgumentTypeError(f"{value:g} is not within (0, 3650] days")
    return value


def _add_report(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from realtyframes._config import add_arguments
    from realtyframes.analysis import SALE_TYPES
    from realtyframes.report._market import BY_CHOICES

    report = subparsers.add_parser(
        "report",
        help="write a report (HTML with its data as Parquet and CSV)",
        description="Write a scheduled report: one self-contained HTML file, and next to it "
        "the frames it was computed from as Parquet and CSV.",
    )
    kinds = report.add_subparsers(dest="report", metavar="REPORT", required=True)
    parser = kinds.add_parser(
        "market",
        help="market comparison, price drops, website traffic and leads",
        description="The market report: headline numbers, the market comparison, the top price "
        "drops, the website's traffic and the lead funnel, as one self-contained HTML file "
        "(charts embedded, printable) plus its data. Runs on the embedded sandbox when no host "
        "or credentials are configured. Prints the report's path.",
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
    add_arguments(parser)
    parser.set_defaults(func=_run_report)


def _run_report(args: argparse.Namespace) -> int:
    from realtyframes._config import run_guarded
    from realtyframes.report._market import run_report

    return run_guarded(f"{PROG} report", args, lambda settings: run_report(args, settings))


def _add_fetch(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from realtyframes._config import add_arguments
    from realtyframes.report._fetch import add_fetch_parsers

    fetch = subparsers.add_parser(
        "fetch",
        help="fetch listings, changes, contacts, activity or analytics into a file",
        description="Fetch one resource into a Parquet, CSV or JSON file (for shell pipelines "
        "and other data tools). Options use the spec's parameter names; see "
        "`realtyframes fetch RESOURCE --help` for each one's allowed values.",
    )
    add_fetch_parsers(fetch, add_arguments, _run_fetch)


def _run_fetch(args: argparse.Namespace) -> int:
    from realtyframes._config import run_guarded
    from realtyframes.report._fetch import run_fetch

    return run_guarded(f"{PROG} fetch", args, lambda settings: run_fetch(args, settings))


def _add_cache(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "cache",
        help="list or clear the Parquet cache",
        description="List the entries of the Parquet cache, or remove them. The cache folder is "
        "--cache-dir, else REALTYFRAMES_CACHE_DIR, else the user cache directory.",
    )
    actions = parser.add_subparsers(dest="cache_action", metavar="ACTION", required=True)
    for name, text in (("list", "print every cache entry"), ("clear", "remove cache entries")):
        action = actions.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
        action.add_argument("--cache-dir", metavar="DIR", help="the cache folder")
        if name == "clear":
            action.add_argument(
                "--resource",
                metavar="R",
                help="only this resource (listings, changes, contacts, analytics, ...)",
            )
    parser.set_defaults(func=_run_cache)


def _run_cache(args: argparse.Namespace) -> int:
    from pathlib import Path

    from realtyframes.cache import ParquetCache
    from realtyframes.loaders import default_cache_dir

    root = Path(args.cache_dir).expanduser() if args.cache_dir else default_cache_dir()
    cache = ParquetCache(root)
    if args.cache_action == "clear":
        try:
            removed = cache.clear(args.resource)
        except ValueError as exc:
            print(f"{PROG} cache clear: --resource: {exc}", file=sys.stderr)
            return 2
        what = f"{args.resource} entries" if args.resource else "entries"
        print(f"removed {removed} {what} from {root}")
        return 0
    entries = cache.list()
    if entries.empty:
        print(f"no cache entries in {root}")
        return 0
    shown = entries[["resource", "rows", "quarantined", "fetched_at", "size", "key", "params"]]
    shown = shown.assign(
        fetched_at=shown["fetched_at"].dt.strftime("%Y-%m-%d %H:%M:%SZ"),
        quarantined=shown["quarantined"].fillna(0),
        params=shown["params"].str.slice(0, 60),
    )
    print(f"{len(entries)} entries in {root} ({int(entries['size'].sum())} bytes)")
    print(shown.to_string(index=False))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand.

    >>> build_parser().parse_args(["sandbox", "--port", "0"]).port
    0
    """
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Listings, contacts and analytics as validated pandas DataFrames.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_sandbox(subparsers)
    _add_report(subparsers)
    _add_fetch(subparsers)
    _add_cache(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (bad options exit 2 via argparse).

    >>> main(["--help"])  # doctest: +SKIP
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stderr)
        return 2
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
