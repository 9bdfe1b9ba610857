"""The ``realtyframes`` command line (``realtyframes = "realtyframes.cli:main"``).

One module per command, each with an ``add_<command>(subparsers)`` that registers it and sets
``func`` to a handler taking the parsed arguments and returning the exit code:
``sandbox`` (:mod:`.sandbox`), ``report`` (:mod:`.report`), ``fetch`` (:mod:`.fetch`), ``cache``
(:mod:`.cache`); :mod:`.config` holds what they share (connection flags, the client, logging to
stderr, one-line errors, exit codes). Only this package writes to stdout and stderr.

>>> main(["sandbox", "--port", "0", "--listings", "500"])  # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from realtyframes.cli.cache import add_cache
from realtyframes.cli.config import PROG
from realtyframes.cli.fetch import add_fetch
from realtyframes.cli.report import add_report
from realtyframes.cli.sandbox import add_sandbox

__all__ = ["PROG", "build_parser", "main"]


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
    add_sandbox(subparsers)
    add_report(subparsers)
    add_fetch(subparsers)
    add_cache(subparsers)
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
