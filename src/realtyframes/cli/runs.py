"""``realtyframes runs [--last N] [--failed]``: the run history of the cache, one line per run.

Every load, sync and report (and watch run) appends a record to ``<cache>/runs``; this prints
them, oldest first: when, what, the requests (retries, 429s), rows, quarantine, changes, the
outcome and why a run was flagged.

>>> main(["runs", "--last", "5", "--failed"])  # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from realtyframes.cli.config import PROG

__all__ = ["add_runs", "run_runs"]

#: The columns printed, in order (the rest is in ``client.runs()`` and the Parquet files).
SHOWN = (
    "started",
    "kind",
    "resource",
    "scope",
    "requests",
    "retries",
    "throttled",
    "rows",
    "quarantined",
    "new",
    "changed",
    "removed",
    "outcome",
    "error_code",
    "anomaly",
)


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is too small (at least 1)")
    return value


def add_runs(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``runs``."""
    parser = subparsers.add_parser(
        "runs",
        help="print the run history (loads, syncs, reports, watches)",
        description="Print the run history kept in the cache folder (--cache-dir, else "
        "REALTYFRAMES_CACHE_DIR, else the user cache directory), oldest first: one line per "
        "load, sync, report or watch run with its requests, rows, changes, outcome and anomaly.",
    )
    parser.add_argument("--last", type=_count, metavar="N", help="only the N latest runs")
    parser.add_argument("--failed", action="store_true", help="only failed runs")
    parser.add_argument("--cache-dir", metavar="DIR", help="the cache folder")
    parser.set_defaults(func=run_runs)


def run_runs(args: argparse.Namespace) -> int:
    """The ``runs`` command: print the chosen records (stdout); exit 0."""
    from realtyframes.cache import read_runs
    from realtyframes.loaders import default_cache_dir

    root = Path(args.cache_dir).expanduser() if args.cache_dir else default_cache_dir()
    runs = read_runs(root)
    if args.failed:
        runs = runs[runs["outcome"] == "failed"]
    if args.last is not None:
        runs = runs.iloc[max(0, len(runs) - args.last) :]
    if runs.empty:
        what = "failed runs" if args.failed else "runs"
        print(f"no {what} recorded in {root / 'runs'}")
        return 0
    shown = runs[list(SHOWN)].assign(
        started=runs["started"].dt.strftime("%Y-%m-%d %H:%M:%SZ"),
        scope=runs["scope"].str.slice(0, 50),
    )
    shown = shown.astype(object).where(shown.notna(), "")
    print(f"{len(runs)} runs in {root / 'runs'}", file=sys.stderr)
    print(shown.to_string(index=False))
    flagged = int(runs["anomaly"].notna().sum())
    if flagged:
        print(f"{PROG} runs: {flagged} flagged (column anomaly)", file=sys.stderr)
    return 0
