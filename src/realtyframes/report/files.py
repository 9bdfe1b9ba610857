"""Writing a market report and reading its data back (the files through :mod:`._writers`).

:func:`write_market_report` writes one self-contained HTML file and, next to it, every frame the
report was computed from as Parquet and CSV (dated names; same frames and options, same bytes);
:func:`read_report_data` reads those frames back. :func:`market_report` is load, compute and
write in one call. Every file is written atomically (:mod:`realtyframes._files`).

>>> import realtyframes as rf                                        # doctest: +SKIP
>>> market_report(rf.Client(), out_dir="reports").html              # doctest: +SKIP
PosixPath('reports/market-report-2026-06-30.html')
"""

from __future__ import annotations

import datetime as dt
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from realtyframes._files import atomic_write_text
from realtyframes.report._tables import collecting
from realtyframes.report._writers import is_private, write_frame
from realtyframes.report.brand import Brand
from realtyframes.report.compute import MarketReport, compute_market_report
from realtyframes.report.load import ReportClient, load_market_frames
from realtyframes.report.options import (
    DATA_FILES,
    MARKET_FILES,
    MarketReportOptions,
    data_source,
)
from realtyframes.report.render import render_market_report

__all__ = [
    "ReportFiles",
    "data_paths",
    "market_report",
    "read_report_data",
    "write_market_report",
]

logger = logging.getLogger("realtyframes.report")


@dataclass(frozen=True)
class ReportFiles:
    """Paths written: the HTML, per data frame its Parquet and CSV files, the manifest, the
    workbook and the PDF (None when not written)."""

    html: Path
    data: dict[str, dict[str, Path]]
    manifest: Path | None = None
    workbook: Path | None = None
    pdf: Path | None = None

    def all(self) -> list[Path]:
        """Every path written, HTML first."""
        extra = [p for p in (self.manifest, self.workbook, self.pdf) if p is not None]
        return [self.html, *(p for d in self.data.values() for p in d.values()), *extra]


def data_paths(html: str | os.PathLike[str]) -> dict[str, dict[str, Path]]:
    """The data files next to a report: name -> {"parquet": path, "csv": path}.

    >>> data_paths("reports/r.html")["listings"]["csv"].as_posix()
    'reports/r.listings.csv'
    """
    html = Path(html)
    stem = html.name.removesuffix(".html")
    return {
        name: {fmt: html.with_name(f"{stem}.{name}.{fmt}") for fmt in ("parquet", "csv")}
        for name in DATA_FILES
    }


def read_report_data(html: str | os.PathLike[str]) -> dict[str, pd.DataFrame]:
    """Read the Parquet files written next to a report (the frames it was computed from).

    >>> frames = read_report_data("reports/market-report-2026-06-30.html")  # doctest: +SKIP
    >>> rf.market_summary(frames["listings"], as_of="2026-06-30")  # doctest: +SKIP
    """
    out = {}
    for name, paths in data_paths(html).items():
        if paths["parquet"].exists():
            out[name] = pd.read_parquet(paths["parquet"])
    return out


def write_market_report(
    report: MarketReport,
    out_dir: str | os.PathLike[str] = "reports",
    *,
    xlsx: bool = False,
    workers: int | None = None,
    pdf: bool = False,
    paper: str = "letter",
) -> ReportFiles:
    """Write the HTML report, its data (Parquet + CSV), its manifest (``.report.json``) and,
    with ``xlsx=True``, one Excel workbook of every frame plus a "Definitions" sheet, into
    ``out_dir``; with ``pdf=True`` the page printed to a PDF on ``paper``
    (:func:`realtyframes.report.write_pdf`), listed in the manifest too; returns the paths.
    ``workers``: processes drawing the charts beside this one (see :func:`render_market_report`;
    0: none).

    >>> files = write_market_report(report, "reports")  # doctest: +SKIP
    >>> files.html.name  # doctest: +SKIP
    'market-report-2026-06-30.html'
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stem = report.options.stem
    html_path = out / f"{stem}.html"
    # the market only: never the contacts or the website's analytics, whatever was loaded
    frames = {k: v for k, v in report.frames.data_frames().items() if k in MARKET_FILES}
    paths = {k: v for k, v in data_paths(html_path).items() if k in frames}
    for name, frame in frames.items():
        private = is_private({name: frame})
        source = report.options.source
        parquet, csv = paths[name]["parquet"], paths[name]["csv"]
        write_frame(frame, parquet, csv, private=private, source=source)
    with collecting() as tables:  # the tables the page shows, for the workbook
        page = render_market_report(report, stem=stem, workers=workers)
    atomic_write_text(html_path, page)
    printed = None
    if pdf:
        from realtyframes.report.pdf import write_pdf

        printed = write_pdf(html_path, paper=paper)
    for listing_id, comps in report.comps.items():  # computed, not input: beside the report too
        name = f"comps-{listing_id}"
        paths[name] = {fmt: out / f"{stem}.{name}.{fmt}" for fmt in ("parquet", "csv")}
        write_frame(comps, paths[name]["parquet"], paths[name]["csv"], source=report.options.source)
    from realtyframes.report.manifest import write_manifest

    workbook = None
    if xlsx:
        from realtyframes.report.definitions import market_definitions
        from realtyframes.report.excel import write_workbook

        workbook = write_workbook(
            {**tables, **frames},  # what the page shows, then what it was computed from
            out / f"{stem}.xlsx",
            definitions=market_definitions(),
            private=is_private(frames),
            source=report.options.source,
        )
    return ReportFiles(
        html=html_path,
        data=paths,
        manifest=write_manifest(report, html_path, paths, pdf=printed),
        workbook=workbook,
        pdf=printed,
    )


def market_report(
    client: ReportClient | None = None,
    *,
    as_of: dt.date | str | None = None,
    cities: Sequence[str] = (),
    property_types: Sequence[str] = ("Residential",),
    by: str = "City",
    window_days: float = 90,
    out_dir: str | os.PathLike[str] = "reports",
    refresh: bool = False,
    source: str | None = None,
    edition: str = "client",
    areas: int = 0,
    brand: Brand | None = None,
) -> ReportFiles:
    """Load, compute and write the market report in one call (``rf.Client()`` when no client):
    the ``edition`` "client" (default: one page per area; ``areas``: the largest markets by
    ``by`` as a pack) or "analyst"; one computation, two renderings.

    >>> files = market_report(rf.Client(), cities=["Miami Beach", "Coral Gables"])  # doctest: +SKIP
    >>> files.html  # doctest: +SKIP
    PosixPath('reports/market-report-2026-06-30-miami-beach-coral-gables.html')
    """
    if client is None:
        from realtyframes._client import Client

        with Client() as own:
            return market_report(
                own,
                as_of=as_of,
                cities=cities,
                property_types=property_types,
                by=by,
                window_days=window_days,
                out_dir=out_dir,
                refresh=refresh,
                source=source,
                edition=edition,
                areas=areas,
                brand=brand,
            )
    if source is None:
        source = data_source(client)
    options = MarketReportOptions(
        as_of=as_of,
        window_days=window_days,
        by=by,
        cities=tuple(cities),
        property_types=tuple(property_types),
        source=source,
        edition=edition,
        areas=areas,
        brand=brand or Brand(),
    )
    frames = load_market_frames(client, options, refresh=refresh)
    logger.info("computing the report")
    report = compute_market_report(frames, options)
    return write_market_report(report, out_dir)
