"""The brokerage's internal report: website traffic, its sources, the most viewed listings (by
address), the lead funnel and the CRM; one self-contained HTML file plus its data.

``realtyframes report brokerage`` on the command line. The market report is for clients; this one
is for the brokerage itself. The website's listing pages (``/listings/<ListingId>``) are joined to
the MLS listings they show (``client.listing``), so the table names each listing by its address,
never by a bare id. The files holding contact data (the contacts' Parquet and CSV, and the page
itself, whose funnel is computed from them) are created ``0600``.

>>> import realtyframes as rf                                                  # doctest: +SKIP
>>> files = brokerage_report(rf.Client(), window_days=30, out_dir="internal")  # doctest: +SKIP
>>> files.html                                                                 # doctest: +SKIP
PosixPath('internal/brokerage-report-2026-06-30-30d.html')
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from realtyframes._files import PRIVATE_MODE, atomic_write_text
from realtyframes._version import __version__
from realtyframes.analysis import LeadFunnel, TrafficSummary, lead_funnel, traffic_summary
from realtyframes.errors import InsufficientScopeError, NotFoundError, QueryError
from realtyframes.report._charts import deferred_charts
from realtyframes.report._html import Card, Cell, Section, esc, render_cards, render_page
from realtyframes.report._html import render_table as _table
from realtyframes.report._render_web import funnel_section, website_section
from realtyframes.report._writers import is_private, write_frame
from realtyframes.report.load import _load_analytics, _load_contacts, analytics_to_files
from realtyframes.report.manifest import write_manifest
from realtyframes.report.options import DATA_FILES, data_source, period_for

__all__ = [
    "BROKERAGE_FILES",
    "BrokerageClient",
    "BrokerageFiles",
    "BrokerageReport",
    "brokerage_report",
    "compute_brokerage_report",
    "headline_figures",
    "listing_pages",
    "load_brokerage_report",
    "render_brokerage_report",
    "top_listings",
    "write_brokerage_report",
]

logger = logging.getLogger("realtyframes.report")

#: A website page showing one MLS listing: ``/listings/<ListingId>``.
LISTING_PAGE = re.compile(r"^/listings/([A-Za-z0-9_-]+)/?$")
#: The data files beside the brokerage report, in order: name -> what it holds.
BROKERAGE_FILES: dict[str, str] = {
    "top-listings": "the website's most viewed listing pages joined to their MLS listings "
    "(ListingId, address, city, property type, status, list price, page views, visitors, "
    "conversions)",
    "contacts": DATA_FILES["contacts"],
    "analytics-overview": DATA_FILES["analytics-overview"],
    "analytics-timelines": DATA_FILES["analytics-timelines"],
    "analytics-breakdowns": DATA_FILES["analytics-breakdowns"],
}
#: The columns of :func:`top_listings`, in order.
TOP_COLUMNS = ("ListingId", "Address", "City", "PropertyType", "StandardStatus", "ListPrice",
               "pageviews", "visitors", "conversions")  # fmt: skip


class BrokerageClient(Protocol):
    """The client calls the brokerage report makes (``rf.Client`` has them all)."""

    @property
    def embedded(self) -> bool: ...

    @property
    def base_url(self) -> str: ...

    def listing(self, listing_id: str, *, refresh: bool = False) -> pd.DataFrame: ...

    def contacts(self, *, refresh: bool = False) -> pd.DataFrame: ...

    def legacy_contacts(self, *, refresh: bool = False) -> pd.DataFrame: ...

    def analytics(self, period: str = "30d", *, refresh: bool = False, **filters: Any) -> Any: ...


@dataclass(frozen=True)
class BrokerageReport:
    """What the brokerage report shows: ``traffic`` (``rf.traffic_summary``; None without
    analytics), ``funnel`` (``rf.lead_funnel``; None without contacts), ``listings`` (the most
    viewed listing pages, :func:`top_listings`) and ``frames``, the data written beside it."""

    day: dt.date
    window_days: float
    source: str
    traffic: TrafficSummary | None
    funnel: LeadFunnel | None
    listings: pd.DataFrame
    frames: dict[str, pd.DataFrame] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def period(self) -> str:
        """The analytics period that covers the window ('90d' ...)."""
        return period_for(float(self.window_days))

    @property
    def stem(self) -> str:
        """The file-name stem: ``brokerage-report-<date>`` (plus the window when not 90 days)."""
        days = float(self.window_days)
        return f"brokerage-report-{self.day.isoformat()}" + ("" if days == 90 else f"-{days:g}d")

    @property
    def private(self) -> bool:
        """Whether the page holds data about contacts (its files are then ``0600``)."""
        return self.funnel is not None


@dataclass(frozen=True)
class BrokerageFiles:
    """Paths written: the HTML, per data frame its Parquet and CSV files, the manifest
    (``.report.json``) and the PDF (if any)."""

    html: Path
    data: dict[str, dict[str, Path]]
    pdf: Path | None = None
    manifest: Path | None = None

    def all(self) -> list[Path]:
        """Every path written, HTML first."""
        extra = [p for p in (self.manifest, self.pdf) if p is not None]
        return [self.html, *(p for d in self.data.values() for p in d.values()), *extra]


def listing_pages(pages: pd.DataFrame, top: int = 10) -> pd.DataFrame:
    """The website's listing pages (``/listings/<ListingId>``) with the most page views: ListingId,
    pageviews, visitors, conversions; most page views first (ties by ListingId).

    >>> pages = pd.DataFrame({"name": ["/listings/A1", "/blog/x", "/listings/A2"],
    ...     "visitors": [5, 50, 9], "pageviews": [7, 60, 12], "conversions": [0, 1, 2]})
    >>> listing_pages(pages)["ListingId"].tolist()
    ['A2', 'A1']
    """
    ids = pages["name"].astype("str").str.extract(LISTING_PAGE, expand=False)
    found = pages[ids.notna().to_numpy()]
    out = pd.DataFrame({"ListingId": ids[ids.notna()].to_numpy(dtype=object)})
    for column in ("pageviews", "visitors", "conversions"):
        out[column] = pd.to_numeric(found[column]).to_numpy()
    out = out.groupby("ListingId", as_index=False, sort=True).sum()
    out = out.sort_values(["pageviews", "ListingId"], ascending=[False, True], kind="stable")
    return out.head(top).reset_index(drop=True)


def _address(row: pd.Series) -> str | None:
    text = row.get("UnparsedAddress")
    if isinstance(text, str) and text.strip():
        return text.strip()
    parts = [row.get(c) for c in ("StreetNumber", "StreetName", "UnitNumber")]
    words = [str(p) for p in parts if isinstance(p, str | int | float) and not pd.isna(p)]
    return " ".join(words) or None


def top_listings(pages: pd.DataFrame, listings: pd.DataFrame) -> pd.DataFrame:
    """The most viewed listing pages (:func:`listing_pages`) joined to their MLS ``listings`` by
    ListingId: the :data:`TOP_COLUMNS`; a page whose listing is not in ``listings`` (withdrawn
    from the MLS) keeps its views with no address.

    >>> pages = pd.DataFrame({"ListingId": ["A1"], "pageviews": [7], "visitors": [5],
    ...                       "conversions": [0]})
    >>> mls = pd.DataFrame({"ListingId": ["A1"], "UnparsedAddress": ["1 Ocean Dr"],
    ...     "City": ["Miami"], "StandardStatus": ["Active"], "ListPrice": [500000.0]})
    >>> top_listings(pages, mls)[["Address", "pageviews"]].values.tolist()
    [['1 Ocean Dr', 7]]
    """
    known = listings.drop_duplicates("ListingId").set_index("ListingId", drop=False)
    rows = []
    for _, page in pages.iterrows():
        lid = str(page["ListingId"])
        mls = known.loc[lid] if lid in known.index else pd.Series(dtype=object)
        rows.append(
            {
                "ListingId": lid,
                "Address": _address(mls) if len(mls) else None,
                "City": mls.get("City"),
                "PropertyType": mls.get("PropertyType"),
                "StandardStatus": mls.get("StandardStatus"),
                "ListPrice": pd.to_numeric(mls.get("ListPrice"), errors="coerce"),
                **{c: page[c] for c in ("pageviews", "visitors", "conversions")},
            }
        )
    out = pd.DataFrame(rows, columns=list(TOP_COLUMNS))
    return out.astype({"ListPrice": "float64"})


def _listing_details(
    client: BrokerageClient, ids: list[str], refresh: bool
) -> tuple[pd.DataFrame, list[str]]:
    """The MLS listings of ``ids`` (one detail request each, cached); those the MLS does not
    have (withdrawn, or out of the credential's reach) are left out, with a note."""
    found, missing = [], []
    for lid in ids:
        try:
            found.append(client.listing(lid, refresh=refresh))
        except (NotFoundError, InsufficientScopeError):
            missing.append(lid)
    notes = []
    if missing:
        notes.append(f"{len(missing)} of the most viewed listing pages show a listing the MLS "
                     "no longer has; their address is unknown.")  # fmt: skip
    frame = pd.concat(found, ignore_index=True) if found else pd.DataFrame(columns=["ListingId"])
    return frame, notes


def load_brokerage_report(
    client: BrokerageClient,
    *,
    as_of: dt.date | str | None = None,
    window_days: float = 90,
    refresh: bool = False,
    source: str | None = None,
    top: int = 10,
) -> BrokerageReport:
    """Load the website analytics of the period covering ``window_days``, the CRM contacts and
    the MLS listings of the ``top`` most viewed listing pages, and compute the report.

    >>> report = load_brokerage_report(rf.Client(), window_days=30)  # doctest: +SKIP
    """
    if isinstance(window_days, bool) or not isinstance(window_days, int | float):
        raise QueryError("window_days", f"{window_days!r} is not a number", "days in (0, 3650]")
    if not 0 < window_days <= 3650:
        raise QueryError("window_days", f"{window_days!r} is out of range", "days in (0, 3650]")
    if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= 100:
        raise QueryError("top", f"{top!r} is out of range", "an integer from 1 to 100")
    from realtyframes.report.options import _parse_day

    day = _parse_day(as_of)
    period = period_for(float(window_days))
    logger.info("loading website analytics (period %s)", period)
    analytics, note = _load_analytics(client, period, refresh)  # type: ignore[arg-type]
    notes = [note] if note else []
    logger.info("loading contacts")
    contacts, note = _load_contacts(client, refresh)  # type: ignore[arg-type]
    notes += [note] if note else []
    pages = listing_pages(analytics["pages"], top) if analytics is not None else None
    details = pd.DataFrame(columns=["ListingId"])
    if pages is not None and len(pages):
        logger.info("loading the %d most viewed listings", len(pages))
        details, more = _listing_details(client, pages["ListingId"].tolist(), refresh)
        notes += more
    return compute_brokerage_report(
        analytics,
        contacts,
        pages,
        details,
        day=day,
        window_days=float(window_days),
        source=source if source is not None else data_source(client),
        notes=notes,
    )


def compute_brokerage_report(
    analytics: dict[str, pd.DataFrame] | None,
    contacts: pd.DataFrame | None,
    pages: pd.DataFrame | None,
    listings: pd.DataFrame,
    *,
    day: dt.date,
    window_days: float,
    source: str,
    notes: list[str] | tuple[str, ...] = (),
) -> BrokerageReport:
    """The report from its frames (pure): the traffic summary, the lead funnel and the most
    viewed listings (``pages`` joined to ``listings``, :func:`top_listings`)."""
    frames: dict[str, pd.DataFrame] = {}
    top = top_listings(pages, listings) if pages is not None else pd.DataFrame(columns=TOP_COLUMNS)
    if pages is not None:
        frames["top-listings"] = top
    if contacts is not None:
        frames["contacts"] = contacts
    if analytics is not None:
        frames.update(analytics_to_files(analytics))
    return BrokerageReport(
        day=day,
        window_days=window_days,
        source=source,
        traffic=traffic_summary(analytics) if analytics is not None else None,
        funnel=lead_funnel(contacts) if contacts is not None else None,
        listings=top,
        frames=frames,
        notes=tuple(notes),
    )


def _listings_section(report: BrokerageReport) -> Section:
    rows: list[list[Cell | str]] = []
    for _, r in report.listings.iterrows():
        where = r["Address"] if isinstance(r["Address"], str) else "(no longer on the MLS)"
        rows.append([where, Cell(r["City"], "text"), Cell(r["PropertyType"], "text"),
                     Cell(r["StandardStatus"], "text"),
                     Cell(r["ListPrice"], "money", row=where, col="ListPrice"),
                     *[Cell(r[c], "count", row=where, col=c)
                       for c in ("pageviews", "visitors", "conversions")]])  # fmt: skip
    if not rows:
        body = '<p class="empty">No listing pages in the website analytics of this period.</p>'
    else:
        body = _table(
            "top_listings",
            [
                "Address",
                "City",
                "Type",
                "Status",
                "List price",
                "Page views",
                "Visitors",
                "Conversions",
            ],
            rows,
            caption=f"The website's listing pages with the most page views, period "
            f"{report.period}, joined to their MLS listing (status and price today).",
            numeric_header=[False] * 4 + [True] * 4,
        )
    return Section("listings", "Most viewed listings", body)


def _sources_section(report: BrokerageReport) -> Section | None:
    """Where the visitors came from: the referrers' table (the traffic section charts them)."""
    if report.traffic is None or "referrers" not in report.traffic.breakdowns:
        return None
    from realtyframes.report._render_common import frame_table

    spec = [("visitors", "Visitors", "count"), ("share", "Share of visitors", "percent"),
            ("conversions", "Conversions", "count"),
            ("conversion_rate", "Conversion rate", "percent")]  # fmt: skip
    table = frame_table(
        "traffic_sources",
        "Source",
        report.traffic["referrers"].set_index("name"),
        spec,
        f"Top referrers of the website, period {report.period}; shares of all the period's "
        "visitors, conversion rate = conversions / the source's visitors.",
    )
    return Section("sources", "Traffic sources", table)


def headline_figures(report: BrokerageReport) -> list[tuple[str, str, Any, str]]:
    """The page's headline figures: (key, label, value, kind of number), the website's then the
    CRM's counts (aggregates only: no contact's data); the cards and the notification show them."""
    figures: list[tuple[str, str, Any, str]] = []
    if report.traffic is not None:
        value = report.traffic.headline["value"]
        for key, text, kind in (("visitors", "Website visitors", "count"),
                                ("pageviews", "Page views", "count"),
                                ("conversion_rate", "Conversion rate", "percent")):  # fmt: skip
            figures.append((key, f"{text}, {report.period}", value[key], kind))
    if report.funnel is not None:
        f = report.funnel
        figures.append(("contacts", "CRM contacts", int(f.by_stage["contacts"].sum()), "count"))
        new = int(f.weekly["new_leads"].sum()) if len(f.weekly) else 0
        figures.append(("new_leads", "New leads, all weeks", new, "count"))
    return figures


def _cards(report: BrokerageReport) -> str:
    cards = [Card(*figure) for figure in headline_figures(report)]
    return render_cards(cards) if cards else ""


def render_brokerage_report(report: BrokerageReport, *, workers: int | None = None) -> str:
    """The report as one self-contained HTML document (the market report's look and print CSS).

    >>> html = render_brokerage_report(report)  # doctest: +SKIP
    """
    with deferred_charts() as charts:
        maybe = [
            website_section(report.traffic, report.period),
            _sources_section(report),
            _listings_section(report),
            funnel_section(report.funnel),
        ]
        sections = [s for s in maybe if s is not None]
        notes = "".join(f'<p class="notice">{esc(n)}</p>' for n in report.notes)
        links = "".join(
            f"<li><code>{esc(name)}</code>: {esc(BROKERAGE_FILES[name])} ("
            + " · ".join(f'<a href="{esc(f"{report.stem}.{name}.{x}")}">{x}</a>'
                         for x in ("parquet", "csv"))
            + ")</li>"
            for name in report.frames
        )  # fmt: skip
        page = render_page(
            f"Brokerage report — {report.day.isoformat()}",
            sections,
            meta=[
                f"As of {report.day.isoformat()}",
                f"website period {report.period}",
                f"source: {report.source}",
                "internal: not for clients",
            ],
            lead=_cards(report) + notes,
            footer=f"<p>The data behind this report, next to this file:</p><ul>{links}</ul>"
            f"<p>Made by realtyframes {esc(__version__)}.</p>",
        )
    return charts.fill(page, workers=workers)


def write_brokerage_report(
    report: BrokerageReport,
    out_dir: str | os.PathLike[str] = "reports",
    *,
    workers: int | None = None,
    pdf: bool = False,
    paper: str = "letter",
) -> BrokerageFiles:
    """Write the HTML report, its data (Parquet + CSV) and its manifest into ``out_dir``, and
    with ``pdf`` its PDF on ``paper`` (:func:`realtyframes.report.write_pdf`); the contacts'
    files, the page, its manifest and PDF ``0600`` (:attr:`BrokerageReport.private`).

    >>> write_brokerage_report(report, "internal", pdf=True).pdf  # doctest: +SKIP
    PosixPath('internal/brokerage-report-2026-06-30.pdf')
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths: dict[str, dict[str, Path]] = {}
    for name, frame in report.frames.items():
        paths[name] = {x: out / f"{report.stem}.{name}.{x}" for x in ("parquet", "csv")}
        write_frame(frame, paths[name]["parquet"], paths[name]["csv"],
                    private=is_private({name: frame}), source=report.source)  # fmt: skip
    html = out / f"{report.stem}.html"
    page = render_brokerage_report(report, workers=workers)
    atomic_write_text(html, page, mode=PRIVATE_MODE if report.private else None)
    printed = None
    if pdf:
        from realtyframes.report.pdf import write_pdf

        printed = write_pdf(html, paper=paper, private=report.private)
    mode = PRIVATE_MODE if report.private else None
    manifest = write_manifest(report, html, paths, pdf=printed, mode=mode)
    return BrokerageFiles(html=html, data=paths, pdf=printed, manifest=manifest)


def brokerage_report(
    client: BrokerageClient | None = None,
    *,
    as_of: dt.date | str | None = None,
    window_days: float = 90,
    out_dir: str | os.PathLike[str] = "reports",
    refresh: bool = False,
    pdf: bool = False,
    paper: str = "letter",
    top: int = 10,
) -> BrokerageFiles:
    """Load, compute and write the brokerage report in one call (``rf.Client()`` when no client);
    ``pdf=True``: its PDF too, on ``paper`` ("letter" or "a4").

    >>> files = brokerage_report(rf.Client(), window_days=30, pdf=True)  # doctest: +SKIP
    >>> files.html, files.pdf  # doctest: +SKIP
    """
    if pdf:  # before any request
        from realtyframes.errors import ConfigError
        from realtyframes.report.pdf import PAPERS, pdf_problem

        if paper not in PAPERS:
            raise QueryError("paper", f"unknown paper size {paper!r}", PAPERS)
        problem = pdf_problem()
        if problem is not None:
            raise ConfigError("pdf", problem)
    if client is None:
        from realtyframes._client import Client

        with Client() as own:
            return brokerage_report(own, as_of=as_of, window_days=window_days, out_dir=out_dir,
                                    refresh=refresh, pdf=pdf, paper=paper, top=top)  # fmt: skip
    report = load_brokerage_report(client, as_of=as_of, window_days=window_days,
                                   refresh=refresh, top=top)  # fmt: skip
    return write_brokerage_report(report, out_dir, pdf=pdf, paper=paper)
