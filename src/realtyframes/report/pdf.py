"""A report as a PDF: Chromium's print of the report's HTML page, Letter or A4, beside it.

The HTML stays the one self-contained file; the PDF is printed from it by headless Chromium
(driven through playwright's Python package, the ``pdf`` extra, with the system's Chromium: no
browser download), so it honours the page's print CSS (one area per page where the page asks for
it) and looks as the page does in a browser. :func:`pdf_problem` says, without starting anything,
why no PDF can be made here (the command line checks it before loading any data).

>>> pdf_path("reports/market-report-2026-06-30.html").as_posix()
'reports/market-report-2026-06-30.pdf'
>>> write_pdf("reports/market-report-2026-06-30.html", paper="a4")  # doctest: +SKIP
PosixPath('reports/market-report-2026-06-30.pdf')
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

from realtyframes._files import PRIVATE_MODE, atomic_path
from realtyframes.errors import ConfigError, QueryError

__all__ = ["PAPERS", "PDF_INSTALL", "chromium_path", "pdf_path", "pdf_problem", "write_pdf"]

#: Paper sizes of :func:`write_pdf` (Chromium's names: "letter" -> Letter, "a4" -> A4).
PAPERS: tuple[str, ...] = ("letter", "a4")
#: What to install for :func:`write_pdf`: the Python package, and Chromium from the system.
PDF_INSTALL = "pip install 'realtyframes[pdf]' and Chromium (Debian: apt-get install chromium)"
#: The commands a system Chromium goes by, in the order they are looked for on the PATH.
CHROMIUM_COMMANDS: tuple[str, ...] = (
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
)
#: How long Chromium may take to start, load the page or print it (a busy machine is slow).
TIMEOUT_MS = 180_000
#: Chromium's flags for an offline print: no first-run, sync, extensions or background traffic.
_FLAGS = (
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
)


def chromium_path() -> str | None:
    """The system's Chromium (the first of :data:`CHROMIUM_COMMANDS` on the PATH), or None.

    >>> chromium_path()  # doctest: +SKIP
    '/usr/bin/chromium'
    """
    for command in CHROMIUM_COMMANDS:
        found = shutil.which(command)
        if found is not None:
            return found
    return None


def pdf_problem() -> str | None:
    """Why :func:`write_pdf` cannot run here (one line naming what to install), or None; looks
    for the package and the browser only, starts nothing (fast enough to check before a load).

    >>> pdf_problem()  # doctest: +SKIP
    "the PDF engine is not installed (Python package 'playwright'): pip install 'realtyframes[pdf]' ..."
    """
    try:
        found = importlib.util.find_spec("playwright") is not None
    except (ImportError, ValueError):  # a broken or blocked install: not usable either
        found = False
    if not found:
        return f"the PDF engine is not installed (Python package 'playwright'): {PDF_INSTALL}"
    if chromium_path() is None:
        commands = ", ".join(CHROMIUM_COMMANDS)
        return f"no Chromium for the PDF (none of {commands} on the PATH): {PDF_INSTALL}"
    return None


def pdf_path(html: str | os.PathLike[str]) -> Path:
    """Where the PDF of a report goes: beside its HTML, ``.pdf`` for ``.html``.

    >>> pdf_path("out/brokerage-report-2026-06-30.html").name
    'brokerage-report-2026-06-30.pdf'
    """
    return Path(html).with_suffix(".pdf")


def write_pdf(
    html: str | os.PathLike[str],
    pdf: str | os.PathLike[str] | None = None,
    *,
    paper: str = "letter",
    private: bool = False,
) -> Path:
    """Print the report ``html`` to ``pdf`` (default: beside it, :func:`pdf_path`) on ``paper``
    (one of :data:`PAPERS`); returns the PDF's path. The file is written atomically, ``0600``
    when ``private`` (a report with contact data). The page may load nothing from the network
    (a self-contained report needs nothing): any such request is refused.

    Raises :class:`~realtyframes.QueryError` for an unknown paper and
    :class:`~realtyframes.ConfigError` when the engine is missing (:func:`pdf_problem`).

    >>> write_pdf("reports/market-report-2026-06-30.html", paper="a4")  # doctest: +SKIP
    PosixPath('reports/market-report-2026-06-30.pdf')
    """
    if paper not in PAPERS:
        raise QueryError("paper", f"unknown paper size {paper!r}", PAPERS)
    problem = pdf_problem()
    if problem is not None:
        raise ConfigError("--pdf", problem)
    source = Path(html).resolve()
    target = pdf_path(html) if pdf is None else Path(pdf)
    data = _print(source, paper)
    with atomic_path(target, mode=PRIVATE_MODE if private else None) as tmp, open(tmp, "wb") as f:
        f.write(data)
    return target


def _print(source: Path, paper: str) -> bytes:
    """The PDF bytes of the page at ``source``, printed by headless Chromium."""
    from playwright.sync_api import Route, sync_playwright

    def refuse(route: Route) -> None:
        route.abort()

    with sync_playwright() as driver:
        browser = driver.chromium.launch(
            executable_path=chromium_path(), args=list(_FLAGS), timeout=TIMEOUT_MS
        )
        try:
            page = browser.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            page.route("http*://**", refuse)  # nothing from the network
            page.goto(source.as_uri(), wait_until="load")
            return page.pdf(
                format="Letter" if paper == "letter" else "A4",
                print_background=True,
                prefer_css_page_size=False,  # the paper asked for, whatever the page's @page says
            )
        finally:
            browser.close()
