"""Checks that need no data, run before any load, request or sandbox start.

A command's options that can be found wrong without loading anything (an ``--out`` that is a file
or cannot be written) are checked here first, so a mistake costs a second, not a load: one line
on stderr (``realtyframes report market: error: --out: ...``), exit code 2 (bad usage, as argparse's),
nothing written.

The checks are one table, :data:`CHECKS`: for each command (the name its handler passes to
:func:`preflight`), a tuple of :class:`Check` rows, each the option's flag, its attribute on the
parsed arguments and a function from the given value to the problem (a phrase) or None. A value
that was not given (None) is not checked. To check another option, write its function and add a
row, e.g. for ``report market --edition``::

    def _edition(value: str) -> str | None:
        return None if value in EDITIONS else f"unknown edition {value!r}; allowed: ..."

    CHECKS["report market"] += (Check("--edition", "edition", _edition),)

A check that needs the other options too (a PDF engine only when ``--pdf`` is given) reads them
from the arguments: ``Check("--pdf", "pdf", lambda given: ...)`` gets the value of its own
option; put the condition in that function (the value is None, and the check skipped, when the
option was not given). A command calls :func:`preflight` with one line before anything else::

    return preflight("report market", args) or run_guarded(...)

>>> _folder_problem("/dev/null")
"'/dev/null' is a file, not a folder"
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from realtyframes.cli.config import EXIT_USAGE, PROG

__all__ = ["CHECKS", "Check", "preflight"]


@dataclass(frozen=True)
class Check:
    """One option checked before loading: ``problem(value)`` is None when the value is fine."""

    flag: str
    dest: str
    problem: Callable[[Any], str | None]


def _unwritable(folder: Path) -> str | None:
    """Why nothing can be created in the existing folder ``folder`` (None when it can): tried
    with an unnamed temporary file, so nothing is left behind (and root's read-only mounts count)."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            return None
    except OSError as exc:
        return exc.strerror or type(exc).__name__


def _nearest_existing(path: Path) -> Path:
    """``path`` or its nearest ancestor that exists."""
    path = path.absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _creatable(path: Path, shown: str) -> str | None:
    """Why ``path`` (not there yet, or a folder) cannot be made or written in, else None."""
    existing = _nearest_existing(path)
    if not existing.is_dir():
        return f"{shown!r} cannot be created: {os.fspath(existing)!r} is a file"
    problem = _unwritable(existing)
    if problem is None:
        return None
    if existing == path.absolute():
        return f"cannot write in the folder {os.fspath(existing)!r} ({problem})"
    return f"{shown!r} cannot be created in {os.fspath(existing)!r} ({problem})"


def _folder_problem(value: str | os.PathLike[str]) -> str | None:
    """An output folder: a folder we can write in, or one we can create."""
    path = Path(value).expanduser()
    if path.exists() and not path.is_dir():
        return f"{os.fspath(value)!r} is a file, not a folder"
    return _creatable(path, os.fspath(value))


def _file_problem(value: str | os.PathLike[str]) -> str | None:
    """An output file: not a folder, and its folder writable or creatable."""
    path = Path(value).expanduser()
    shown = os.fspath(value)
    if path.is_dir():
        return f"{shown!r} is a folder; give a file name (e.g. {os.path.join(shown, 'out.csv')})"
    return _creatable(path.absolute().parent, shown)


#: The checks of each command, run in order; the first problem is the one line shown.
CHECKS: dict[str, tuple[Check, ...]] = {
    "report market": (Check("--out", "out", _folder_problem),),
    "report brokerage": (Check("--out", "out", _folder_problem),),
    "fetch": (Check("--out", "out", _file_problem),),
    "mcp call": (Check("--out", "out", _file_problem),),
}


def preflight(command: str, args: argparse.Namespace) -> int | None:
    """Run ``command``'s :data:`CHECKS` on ``args``: None when all pass, else print the first
    problem as one line on stderr and return the exit code 2.

    >>> preflight("fetch", argparse.Namespace(out=None)) is None
    True
    """
    for check in CHECKS.get(command, ()):
        value = getattr(args, check.dest, None)
        if value is None:
            continue
        problem = check.problem(value)
        if problem is not None:
            print(f"{PROG} {command}: error: {check.flag}: {problem}", file=sys.stderr, flush=True)
            return EXIT_USAGE
    return None
