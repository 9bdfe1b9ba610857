"""The reports' ``--pdf`` and ``--paper`` options, checked before any load (the report's writer
prints the PDF).

A missing PDF engine is found before the report loads anything: one line naming what to install,
exit code 2, nothing written (:func:`pdf_usage_error`). :func:`pdf_option_problem` is the check as
a pre-load check table takes it (the option's value -> the problem or None), and
:func:`realtyframes.report.pdf_problem` the check itself.

>>> main(["report", "market", "--pdf", "--paper", "a4"])  # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import sys

from realtyframes.cli.config import EXIT_USAGE

__all__ = ["add_pdf_arguments", "pdf_option_problem", "pdf_usage_error"]


def add_pdf_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--pdf`` and ``--paper`` to a report's parser."""
    from realtyframes.report.pdf import PAPERS

    parser.add_argument(
        "--pdf",
        action="store_true",
        help="also write the report as a PDF beside the HTML (Chromium's print of the page; "
        "needs the `pdf` extra and Chromium); --notify then sends the PDF",
    )
    parser.add_argument(
        "--paper",
        default="letter",
        choices=PAPERS,
        help="the PDF's paper size (default letter)",
    )


def pdf_option_problem(given: object) -> str | None:
    """The problem with ``--pdf`` as given (its value: True when given), for a pre-load check
    table: None when it was not given or the engine is there, else what to install."""
    if not given:
        return None
    from realtyframes.report.pdf import pdf_problem

    return pdf_problem()


def pdf_usage_error(args: argparse.Namespace, prog: str) -> int:
    """With ``--pdf`` and no PDF engine: print one line naming what to install, return 2;
    else 0 (so ``pdf_usage_error(args, prog) or run(...)``)."""
    problem = pdf_option_problem(getattr(args, "pdf", False))
    if problem is None:
        return 0
    print(f"{prog}: error: --pdf: {problem}", file=sys.stderr)
    return EXIT_USAGE
