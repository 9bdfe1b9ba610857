"""``realtyframes sandbox``: serve the embedded sandbox on loopback until Ctrl-C.

>>> main(["sandbox", "--port", "0", "--listings", "500"])  # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from realtyframes._environment import SANDBOX_ADMIN_SECRET_VARIABLE
from realtyframes.cli.config import PROG, checked

if TYPE_CHECKING:
    from realtyframes.sandbox import Faults, SandboxOptions

__all__ = ["ADMIN_SECRET_ENV", "add_sandbox", "run_sandbox"]

#: The environment variable that gives ``sandbox --protected`` its admin secret.
ADMIN_SECRET_ENV = SANDBOX_ADMIN_SECRET_VARIABLE


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
    return checked(
        int,
        "an integer",
        lambda v: v >= minimum,
        lambda t, v: f"{v} is too small; minimum {minimum}",
    )


_port = checked(
    int,
    "a port number",
    lambda v: 0 <= v <= 65535,
    lambda t, v: f"{v} is not within 0..65535 (0 picks a free port)",
)


def _history_years(text: str) -> int:
    from realtyframes.sandbox import HISTORY_YEARS_RANGE

    low, high = HISTORY_YEARS_RANGE
    return checked(
        int,
        "a whole number of years",
        lambda v: low <= v <= high,
        lambda t, v: f"{v} is not within {low}..{high}",
    )(text)


_milliseconds = checked(
    float,
    "a number of milliseconds",
    lambda v: 0 <= v < float("inf"),
    lambda t, v: f"{v} must be >= 0",
)


def _reso_vendor(text: str) -> str:
    from realtyframes.sandbox import RESO_VENDORS

    if text not in RESO_VENDORS:
        raise argparse.ArgumentTypeError(
            f"unknown RESO vendor {text!r}; allowed: {', '.join(RESO_VENDORS)}"
        )
    return text


def _reso_lookups(text: str) -> str:
    from realtyframes.sandbox import RESO_LOOKUPS

    if text not in RESO_LOOKUPS:
        raise argparse.ArgumentTypeError(
            f"unknown lookup mode {text!r}; allowed: {', '.join(RESO_LOOKUPS)}"
        )
    return text


def _secret(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    return text


def _rate_limit(text: str) -> tuple[int, float]:
    from realtyframes.sandbox import parse_rate_limit

    try:
        return parse_rate_limit(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _faults(text: str) -> Faults:
    from realtyframes.sandbox import Faults, validate_faults

    try:
        faults = Faults.parse(text)
        validate_faults(faults)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f"{text!r}: {exc} (expected NAME=VALUE,... e.g. 'error_rate=0.1,drift=2')"
        ) from None
    return faults


def add_sandbox(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sandbox`` and its options."""
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
        "--admin-secret",
        type=_secret,
        metavar="SECRET",
        help="protected mode: the X-Sandbox-Admin secret of the /_sandbox/* admin routes "
        f"(default: ${ADMIN_SECRET_ENV}, else a random one per run, printed at start; "
        "prefer the variable: a command line is visible to other local users)",
    )
    parser.add_argument(
        "--rate-limit",
        type=_rate_limit,
        metavar="N/WINDOW",
        help="quota per credential, e.g. 60/60s (default: generous when open, by plan when protected)",
    )
    parser.add_argument("--listings", type=_count(1), default=5000, help="listings (default 5000)")
    parser.add_argument(
        "--history-years",
        type=_history_years,
        metavar="N",
        help="years of listing history before the clock, 1 to 10 (default 3)",
    )
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
        "--max-listing-ids",
        type=_count(1),
        default=100,
        metavar="N",
        help="most ListingIds the change feed accepts per request (default 100, the spec's)",
    )
    parser.add_argument(
        "--reso-vendor",
        type=_reso_vendor,
        default="generic",
        metavar="VENDOR",
        help="the rules the RESO Web API face (/reso/odata) keeps: generic (default), mlsgrid, "
        "trestle, bridge or spark (page sizes, required filters, budgets; see docs/reso.md)",
    )
    parser.add_argument(
        "--reso-lookups",
        type=_reso_lookups,
        default="string",
        metavar="MODE",
        help="how the RESO face serves lookup values: string (the standard names; default), "
        "enum (EnumTypes in $metadata), lookup (the MLS's own values through /Lookup)",
    )
    parser.add_argument(
        "--faults",
        type=_faults,
        metavar="NAME=VALUE,...",
        help="fault injection, e.g. 'error_rate=0.1,burst_429=3,drift=2'",
    )
    parser.set_defaults(func=run_sandbox)


def _options(args: argparse.Namespace) -> SandboxOptions:
    from realtyframes.sandbox import SandboxOptions

    fields: dict[str, object] = {
        "seed": args.seed,
        "listings": args.listings,
        "contacts": args.contacts,
        "protected": args.protected,
        "rate_limit": args.rate_limit,
        "latency_ms": args.latency_ms,
        "max_listing_ids": args.max_listing_ids,
        "reso_vendor": args.reso_vendor,
        "reso_lookups": args.reso_lookups,
    }
    if args.as_of is not None:
        fields["as_of"] = args.as_of
    if args.history_years is not None:
        fields["history_years"] = args.history_years
    if args.faults is not None:
        fields["faults"] = args.faults
    given = args.admin_secret or os.environ.get(ADMIN_SECRET_ENV, "").strip()
    if given or args.protected:  # never the documented demo secret: a fresh one per run
        fields["admin_secret"] = given or secrets.token_urlsafe(24)
    return SandboxOptions(**fields)  # type: ignore[arg-type]


def _admin_secret_line(options: SandboxOptions, args: argparse.Namespace) -> str:
    """The admin secret as announced: a generated one is printed, a given one is not echoed."""
    if args.admin_secret:
        return "(as given by --admin-secret)"
    if os.environ.get(ADMIN_SECRET_ENV, "").strip():
        return f"(as given by ${ADMIN_SECRET_ENV})"
    return f"{options.admin_secret}   (random, this run only)"


def _announce(options: SandboxOptions, url: str, admin_secret: str = "") -> None:
    """What is served, the demo credentials when protected, and a first request to try."""
    from realtyframes.sandbox import DEMO

    mode = "protected" if options.protected else "open"
    print(
        f"realtyframes sandbox serving {url} ({mode} mode, seed {options.seed}, "
        f"{options.listings} listings over {options.history_years} years, "
        f"clock {options.as_of.isoformat()})"
    )
    print(f"RESO Web API (OData v4, {options.reso_vendor} rules): {url}/reso/odata")
    sample = f"curl -s '{url}/v1/listings?PropertyType=Residential&Limit=2'"
    if options.protected:
        print("Demo credentials (documented, not secret):")
        print(f"  API key (standard plan):  {DEMO.api_key}   (header X-API-Key)")
        print(f"  API key (premium plan):   {DEMO.premium_api_key}")
        print(f"  OAuth client_id:          {DEMO.client_id}")
        print(f"  OAuth client_secret:      {DEMO.client_secret}")
        print(f"  OAuth redirect_uri:       {DEMO.redirect_uri}   (any loopback port)")
        print("Admin routes /_sandbox/* (header X-Sandbox-Admin):")
        print(f"  Admin secret:             {admin_secret}")
        sample = sample.replace("curl -s", f"curl -s -H 'X-API-Key: {DEMO.api_key}'")
    print(f"Try: {sample}")
    print("Press Ctrl-C to stop.", flush=True)


def run_sandbox(args: argparse.Namespace) -> int:
    """The ``sandbox`` command: serve until Ctrl-C (exit 0), or 1 when the port cannot be used."""
    from realtyframes.sandbox import EXPOSED, is_loopback, run_forever

    options = _options(args)
    if not is_loopback(args.host):
        print(f"{PROG} sandbox: warning: {EXPOSED % args.host}", file=sys.stderr)
    try:
        run_forever(
            options,
            host=args.host,
            port=args.port,
            on_ready=lambda url: _announce(options, url, _admin_secret_line(options, args)),
        )
    except OSError as exc:
        print(f"{PROG} sandbox: cannot serve on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    print("sandbox stopped", flush=True)
    return 0
