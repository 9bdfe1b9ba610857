"""The ``realtyframes`` command line (``realtyframes = "realtyframes.cli:main"``).

One module per command, each with an ``add_<command>(subparsers)`` that registers it and sets
``func`` to a handler taking the parsed arguments and returning the exit code:
``sandbox`` (:mod:`.sandbox`), ``report`` (:mod:`.report`), ``fetch`` (:mod:`.fetch`), ``cache``
(:mod:`.cache`), ``mcp`` (:mod:`.mcp`), ``watch`` (:mod:`.watch`), ``runs`` (:mod:`.runs`); :mod:`.config` holds what they share (connection flags,
the client, logging to stderr, one-line errors, exit codes). Only this package writes to stdout and stderr.

>>> main(["sandbox", "--port", "0", "--listings", "500"])  # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
import warnings
from collections.abc import Sequence
from typing import NoReturn

from realtyframes.cli.cache import add_cache
from realtyframes.cli.config import EXIT_CLOSED_PIPE, PROG
from realtyframes.cli.fetch import add_fetch
from realtyframes.cli.mcp import add_mcp
from realtyframes.cli.report import add_report
from realtyframes.cli.runs import add_runs
from realtyframes.cli.sandbox import add_sandbox
from realtyframes.cli.watch import add_watch

__all__ = ["PROG", "build_parser", "main"]


class _Parser(argparse.ArgumentParser):
    """An argument parser whose "unrecognized arguments" error suggests the nearest option of any
    command, like the Python API's "did you mean" (``--Cty`` -> ``--City``)."""

    def error(self, message: str) -> NoReturn:
        if message.startswith("unrecognized arguments:"):
            message += _suggestion(message.partition(":")[2].split(), _options(self))
        super().error(message)


def _options(parser: argparse.ArgumentParser) -> list[str]:
    """Every ``--option`` of ``parser`` and of its subcommands, recursively."""
    found: list[str] = []
    for action in parser._actions:
        found += [s for s in action.option_strings if s.startswith("--")]
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found += _options(sub)
    return list(dict.fromkeys(found))


def _suggestion(given: list[str], options: list[str]) -> str:
    """``"; did you mean --City?"`` for the first unknown option that is near a known one."""
    lowered = {o.lower(): o for o in options}
    for token in given:
        name = token.split("=", 1)[0]
        if not name.startswith("-"):
            continue
        near = [lowered[name.lower()]] if name.lower() in lowered else []
        near = near or difflib.get_close_matches(name, options, n=1, cutoff=0.75)
        if near:
            return f"; did you mean {near[0]}?"
    return ""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand.

    >>> build_parser().parse_args(["sandbox", "--port", "0"]).port
    0
    """
    parser: argparse.ArgumentParser = _Parser(
        prog=PROG,
        description="Listings, contacts and analytics as validated pandas DataFrames.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    add_sandbox(subparsers)
    add_report(subparsers)
    add_fetch(subparsers)
    add_cache(subparsers)
    add_mcp(subparsers)
    add_watch(subparsers)
    add_runs(subparsers)
    return parser


def _closed_pipe() -> int:
    """stdout's reader is gone: point stdout at /dev/null (so the flush at exit cannot fail
    again) and return :data:`EXIT_CLOSED_PIPE`."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout has no file descriptor (captured): nothing to point
        pass
    return EXIT_CLOSED_PIPE


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (bad options exit 2 via argparse; a reader
    that closed stdout early, :data:`EXIT_CLOSED_PIPE`, without a traceback).

    >>> main(["--help"])  # doctest: +SKIP
    """
    # with the `spark` extra, pandera tries PySpark's pandas API on each schema it builds; under
    # pandas 3 that import warns (then fails, and pandera carries on): not about this command
    warnings.filterwarnings(
        "ignore", message="PySpark does not yet fully support pandas", category=FutureWarning
    )
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        code = int(args.func(args))
        sys.stdout.flush()  # here, not at exit: a closed pipe is seen while it can be handled
    except BrokenPipeError:
        return _closed_pipe()
    return code
