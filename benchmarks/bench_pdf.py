"""Printing a report to PDF: ``realtyframes.report.write_pdf`` (Chromium through playwright) on the
client edition of a two-city pack, against Chromium's own headless print of the same file
(``chromium --headless --print-to-pdf``, the baseline: the browser alone, no Python driver), and
WeasyPrint where it is installed (the engine not taken; see docs/decisions.md). The pack is written
once from the embedded sandbox (outside the timing). Median of 3 each; pages counted with pypdf.
Command: ``.venv/bin/python benchmarks/run_all.py pdf``
"""

from __future__ import annotations

import importlib.util
import subprocess
import tempfile
from pathlib import Path

import pypdf
from _util import median, table, timed

import realtyframes as rf
from realtyframes.report import market_report, write_pdf
from realtyframes.report.pdf import chromium_path

CITIES = ("Miami Beach", "Coral Gables")
AS_OF = "2026-06-30"
REPEAT = 3


def _chromium_print(html: Path, out: Path, profile: Path) -> None:
    command = [str(chromium_path()), "--headless", "--no-sandbox", "--disable-gpu",
               "--no-first-run", f"--user-data-dir={profile}", "--no-pdf-header-footer",
               f"--print-to-pdf={out}", html.as_uri()]  # fmt: skip
    subprocess.run(command, check=True, capture_output=True, timeout=300)


def _weasyprint(html: Path, out: Path) -> None:
    import weasyprint

    style = weasyprint.CSS(string="@page { size: letter; }")
    weasyprint.HTML(filename=str(html)).write_pdf(str(out), stylesheets=[style])


def _pages(pdf: Path) -> int:
    return len(pypdf.PdfReader(pdf).pages)


def run() -> str:
    work = Path(tempfile.mkdtemp(prefix="bench-pdf-"))
    with rf.Client(cache_dir=work / "cache", progress=False) as client:
        html = market_report(client, as_of=AS_OF, cities=CITIES, out_dir=work).html
    ours, chromium, weasy = work / "ours.pdf", work / "chromium.pdf", work / "weasy.pdf"
    base = median(timed(lambda: _chromium_print(html, chromium, work / "profile"), REPEAT))
    mine = median(timed(lambda: write_pdf(html, ours, paper="letter"), REPEAT))
    rows = [
        ["`chromium --headless --print-to-pdf` (baseline)", f"{base:.2f} s", "1.00×",
         _pages(chromium)],
        ["`write_pdf(html, paper='letter')`: playwright driving the same Chromium",
         f"{mine:.2f} s", f"{mine / base:.2f}×", _pages(ours)],
    ]  # fmt: skip
    if importlib.util.find_spec("weasyprint") is not None:
        other = median(timed(lambda: _weasyprint(html, weasy), REPEAT))
        rows.append(["WeasyPrint (not taken; import included in the first run only)",
                     f"{other:.2f} s", f"{other / base:.2f}×", _pages(weasy)])  # fmt: skip
    size = html.stat().st_size / 1e6
    return "\n".join(
        [
            "## Printing the client edition to PDF",
            "",
            "Command: `.venv/bin/python benchmarks/run_all.py pdf`. The client edition of "
            f"{' and '.join(CITIES)} as of {AS_OF} on the embedded sandbox ({size:.1f} MB of "
            f"HTML: a cover and one page per area), printed on Letter. Median of {REPEAT}; the "
            "baseline, Chromium's own headless print of the same file, in the same run. "
            "`write_pdf` starts playwright's driver and the browser on every call.",
            "",
            table(["print", "median", "vs baseline", "pages"], rows),
            "",
        ]
    )
