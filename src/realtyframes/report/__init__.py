"""Scheduled reports: the market report as one self-contained HTML file plus its data.

``realtyframes report market`` on the command line (the client edition: one page per area;
``--edition analyst``: every view and the data files); in Python:

>>> import realtyframes as rf                                           # doctest: +SKIP
>>> from realtyframes.report import market_report                      # doctest: +SKIP
>>> files = market_report(rf.Client(), cities=["Miami Beach"], window_days=90)  # doctest: +SKIP
>>> files.html, sorted(files.data)                                     # doctest: +SKIP

``realtyframes report brokerage`` (:func:`brokerage_report`) is the brokerage's internal report:
website traffic, the most viewed listings by address, the lead funnel and the CRM. ``--pdf``
(:func:`write_pdf`) prints a report to a PDF beside its HTML (the ``pdf`` extra).

Steps on their own: :func:`load_market_frames` (I/O) -> :func:`compute_market_report` (pure) ->
:func:`write_market_report` (HTML, Parquet, CSV); :func:`read_report_data` reads the frames back.

Modules: ``options`` (what a report covers, the names it uses) < ``load`` (the client calls,
typed by :class:`ReportClient`; the frames) < ``compute`` (pure) < ``render`` (HTML, with
``_html``) < ``files`` (writing, reading back). The general writers (Parquet, CSV, JSON, Excel:
``_writers`` over ``_plain`` and ``excel``) are what ``realtyframes fetch`` shares. The
report never starts a sandbox: the caller gives the client (``rf.Client()`` falls back to the
embedded sandbox by itself). The charts are drawn by this process and worker processes
together (``_charts``); :func:`chart_workers` starts the workers early, to import while the data
loads.
"""

from typing import TYPE_CHECKING

from realtyframes._lazy import lazy

if TYPE_CHECKING:
    from realtyframes.report._charts import chart_workers
    from realtyframes.report._writers import is_private, output_format, write_frame, write_output
    from realtyframes.report.brand import Brand
    from realtyframes.report.brokerage import (
        BrokerageFiles,
        BrokerageReport,
        brokerage_report,
        compute_brokerage_report,
        load_brokerage_report,
        render_brokerage_report,
        write_brokerage_report,
    )
    from realtyframes.report.compute import MarketReport, compute_market_report
    from realtyframes.report.files import (
        ReportFiles,
        data_paths,
        market_report,
        read_report_data,
        write_market_report,
    )
    from realtyframes.report.load import (
        MarketFrames,
        ReportClient,
        analytics_from_files,
        analytics_to_files,
        load_market_frames,
    )
    from realtyframes.report.message import brokerage_message, report_message
    from realtyframes.report.options import (
        BY_CHOICES,
        DATA_FILES,
        EDITIONS,
        TRENDS_FREQS,
        MarketReportOptions,
        period_for,
    )
    from realtyframes.report.pdf import PAPERS, pdf_problem, write_pdf
    from realtyframes.report.render import render_market_report

#: Every public name, imported on first use (``realtyframes report --help`` stays fast).
_LAZY: dict[str, str] = {
    "BY_CHOICES": "realtyframes.report.options",
    "BrokerageFiles": "realtyframes.report.brokerage",
    "BrokerageReport": "realtyframes.report.brokerage",
    "PAPERS": "realtyframes.report.pdf",
    "brokerage_report": "realtyframes.report.brokerage",
    "compute_brokerage_report": "realtyframes.report.brokerage",
    "load_brokerage_report": "realtyframes.report.brokerage",
    "pdf_problem": "realtyframes.report.pdf",
    "render_brokerage_report": "realtyframes.report.brokerage",
    "write_brokerage_report": "realtyframes.report.brokerage",
    "write_pdf": "realtyframes.report.pdf",
    "Brand": "realtyframes.report.brand",
    "EDITIONS": "realtyframes.report.options",
    "DATA_FILES": "realtyframes.report.options",
    "TRENDS_FREQS": "realtyframes.report.options",
    "MarketFrames": "realtyframes.report.load",
    "MarketReport": "realtyframes.report.compute",
    "MarketReportOptions": "realtyframes.report.options",
    "ReportClient": "realtyframes.report.load",
    "ReportFiles": "realtyframes.report.files",
    "analytics_from_files": "realtyframes.report.load",
    "analytics_to_files": "realtyframes.report.load",
    "chart_workers": "realtyframes.report._charts",
    "compute_market_report": "realtyframes.report.compute",
    "data_paths": "realtyframes.report.files",
    "is_private": "realtyframes.report._writers",
    "load_market_frames": "realtyframes.report.load",
    "market_report": "realtyframes.report.files",
    "output_format": "realtyframes.report._writers",
    "period_for": "realtyframes.report.options",
    "read_report_data": "realtyframes.report.files",
    "render_market_report": "realtyframes.report.render",
    "brokerage_message": "realtyframes.report.message",
    "report_message": "realtyframes.report.message",
    "write_frame": "realtyframes.report._writers",
    "write_market_report": "realtyframes.report.files",
    "write_output": "realtyframes.report._writers",
}

__all__ = [
    "BY_CHOICES",
    "DATA_FILES",
    "EDITIONS",
    "PAPERS",
    "TRENDS_FREQS",
    "Brand",
    "BrokerageFiles",
    "BrokerageReport",
    "MarketFrames",
    "MarketReport",
    "MarketReportOptions",
    "ReportClient",
    "ReportFiles",
    "analytics_from_files",
    "analytics_to_files",
    "brokerage_message",
    "brokerage_report",
    "chart_workers",
    "compute_brokerage_report",
    "compute_market_report",
    "data_paths",
    "is_private",
    "load_brokerage_report",
    "load_market_frames",
    "market_report",
    "output_format",
    "pdf_problem",
    "period_for",
    "read_report_data",
    "render_brokerage_report",
    "render_market_report",
    "report_message",
    "write_brokerage_report",
    "write_frame",
    "write_market_report",
    "write_output",
    "write_pdf",
]

__getattr__, __dir__ = lazy(__name__, _LAZY, globals(), __all__)
