"""The market report: load the frames, compute with the analysis functions, write HTML + data.

Three steps, each usable alone:

1. :func:`load_market_frames` (I/O, through the client and its cache): the market's listings of
   every status, the change feed of the active for-sale listings, the website analytics of the
   period matching the window, and the CRM contacts -> :class:`MarketFrames`.
2. :func:`compute_market_report` (pure): ``rf.market_summary`` / ``compare_markets`` /
   ``price_drops`` / ``price_drop_summary`` / ``traffic_summary`` / ``lead_funnel`` on those
   frames -> :class:`MarketReport`.
3. :func:`write_market_report`: one self-contained HTML file and, next to it, every frame used as
   Parquet and CSV (dated names). Same frames and options give the same bytes.

>>> import realtyframes as rf                                        # doctest: +SKIP
>>> from realtyframes.report import market_report                   # doctest: +SKIP
>>> market_report(rf.Client(), out_dir="reports").html              # doctest: +SKIP
PosixPath('reports/market-report-2026-06-30.html')
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import re
import secrets
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from realtyframes._version import __version__
from realtyframes.analysis import (
    MARKET_METRICS,
    REFERENCE_LABEL,
    SALE_TYPES,
    LeadFunnel,
    TrafficSummary,
    compare_markets,
    lead_funnel,
    market_summary,
    price_drop_summary,
    price_drops,
    traffic_summary,
)
from realtyframes.errors import InsufficientScopeError, NotFoundError, QueryError
from realtyframes.report._html import Card, Cell, Section, esc, render_cards, render_page
from realtyframes.report._html import render_figure as _figure
from realtyframes.report._html import render_table as _table

if TYPE_CHECKING:
    from realtyframes._client import Client

logger = logging.getLogger("realtyframes.report")

#: Market dimensions the report groups by.
BY_CHOICES: tuple[str, ...] = ("City", "PostalCode", "PropertySubType")
#: Analytics periods of the API and their length in days (the report picks the shortest period
#: covering the window).
PERIOD_DAYS: dict[str, float] = {"24h": 1, "7d": 7, "30d": 30, "90d": 90, "1y": 365}
#: Columns of the contacts written next to the report (what the lead funnel uses; no personal
#: data such as names, e-mails or phones).
CONTACT_COLUMNS: tuple[str, ...] = ("id", "stage", "source", "createdAt")
#: The data files next to the report, in order: name -> what it holds.
DATA_FILES: dict[str, str] = {
    "listings": "the market's listings, every status (one row per ListingId)",
    "changes": "the change feed of the active for-sale listings since the window start",
    "contacts": "CRM contacts: id, stage, source, createdAt",
    "analytics-overview": "website analytics: headline numbers of the period",
    "analytics-timelines": "website analytics: one value per day and metric",
    "analytics-breakdowns": "website analytics: pages, referrers, countries, browsers, os, "
    "devices and UTM items (member, dimension, name, visitors, pageviews, conversions)",
}
_BREAKDOWN_MEMBERS = ("pages", "referrers", "countries", "browsers", "os", "devices")
_BREAKDOWN_COLUMNS = ("member", "dimension", "name", "visitors", "pageviews", "conversions")
#: Market metrics shown in the comparison table, in order.
TABLE_METRICS: tuple[str, ...] = MARKET_METRICS
#: Row labels of the comparison table.
SHORT_LABELS: dict[str, str] = {
    "active_listings": "Active listings",
    "new_listings": "New listings",
    "pending_sales": "Pending sales",
    "homes_sold": "Homes sold",
    "median_list_price": "Median list price",
    "median_list_ppsf": "Median list $/sq ft",
    "median_sale_price": "Median sale price",
    "median_sale_ppsf": "Median sale $/sq ft",
    "median_dom": "Median days on market",
    "avg_sale_to_list": "Avg sale-to-list",
    "pct_sold_above_list": "Sold above list",
    "months_of_supply": "Months of supply",
    "pct_active_with_price_drop": "Active with a price cut",
}


def period_for(window_days: float) -> str:
    """The shortest analytics period that covers ``window_days`` (at most '1y').

    >>> period_for(90), period_for(14), period_for(400)
    ('90d', '30d', '1y')
    """
    for period, days in PERIOD_DAYS.items():
        if window_days <= days:
            return period
    return "1y"


def _utc_midnight(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(0), tzinfo=dt.UTC)


def _parse_day(value: dt.date | str | None) -> dt.date:
    if value is None:
        return dt.datetime.now(dt.UTC).date()
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).date() if value.tzinfo else value.date()
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value).strip()[:10])
    except ValueError:
        raise QueryError("as_of", f"{value!r} is not a date", "YYYY-MM-DD") from None


@dataclass(frozen=True)
class MarketReportOptions:
    """What the report covers.

    - ``as_of``: the report date (its end is the end of the window; None = today, UTC).
    - ``window_days``: the trailing window of the market metrics and the price drops.
    - ``by``: the market dimension (City, PostalCode or PropertySubType).
    - ``cities``: limit the listings to these cities (empty: the whole market).
    - ``property_types``: the sale property types loaded (default Residential).
    - ``max_markets``: markets shown side by side (the given cities, else the largest markets).
    - ``top_drops``: rows of the top-price-drops table and chart.
    - ``source``: how the data source is named in the report (never a credential).

    >>> MarketReportOptions(as_of="2026-06-30").period
    '90d'
    """

    as_of: dt.date | str | None = None
    window_days: float = 90
    by: str = "City"
    cities: tuple[str, ...] = ()
    property_types: tuple[str, ...] = ("Residential",)
    max_markets: int = 8
    top_drops: int = 15
    source: str = "embedded sandbox (synthetic data)"

    def __post_init__(self) -> None:
        object.__setattr__(self, "as_of", _parse_day(self.as_of))
        object.__setattr__(self, "cities", tuple(dict.fromkeys(self.cities)))
        object.__setattr__(self, "property_types", tuple(dict.fromkeys(self.property_types)))
        if not self.property_types:
            raise QueryError("property_types", "empty", SALE_TYPES)
        for kind in self.property_types:
            if kind not in SALE_TYPES:
                raise QueryError(
                    "property_types",
                    f"{kind!r} is not a sale property type (the report covers the sale segment)",
                    SALE_TYPES,
                )
        if self.by not in BY_CHOICES:
            raise QueryError("by", f"unknown market dimension {self.by!r}", BY_CHOICES)
        wd = self.window_days
        if isinstance(wd, bool) or not isinstance(wd, int | float) or not 0 < wd <= 3650:
            raise QueryError(
                "window_days", f"{wd!r} is out of range", "a number of days in (0, 3650]"
            )
        for name in ("max_markets", "top_drops"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 100:
                raise QueryError(name, f"{value!r} is out of range", "an integer from 1 to 100")
        for city in self.cities:
            if not isinstance(city, str) or not city.strip():
                raise QueryError("cities", f"{city!r} is not a city name", "non-empty names")

    @property
    def day(self) -> dt.date:
        """``as_of`` as a date."""
        assert isinstance(self.as_of, dt.date)
        return self.as_of

    @property
    def period(self) -> str:
        """The analytics period used for the traffic section."""
        return period_for(float(self.window_days))

    @property
    def stem(self) -> str:
        """The file-name stem: ``market-report-<date>`` plus the scope when not the default.

        >>> MarketReportOptions(as_of="2026-06-30", cities=("Miami Beach",), by="PostalCode").stem
        'market-report-2026-06-30-miami-beach-by-postalcode'
        """
        parts = [f"market-report-{self.day.isoformat()}"]
        parts += [_slug(c) for c in self.cities]
        if self.property_types != ("Residential",):
            parts += [_slug(t) for t in self.property_types]
        if self.by != "City":
            parts.append(f"by-{self.by.lower()}")
        if float(self.window_days) != 90:
            parts.append(f"{float(self.window_days):g}d")
        return "-".join(p for p in parts if p)

    @property
    def as_of_timestamp(self) -> pd.Timestamp:
        """The end of the window: the last microsecond of ``as_of`` (UTC)."""
        start = pd.Timestamp(self.day.isoformat(), tz="UTC")
        return (start + pd.Timedelta(days=1) - pd.Timedelta(microseconds=1)).as_unit("us")

    @property
    def window_start(self) -> pd.Timestamp:
        """The (exclusive) start of the window."""
        return self.as_of_timestamp - pd.Timedelta(days=float(self.window_days))


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


# -- the frames ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class MarketFrames:
    """The frames a market report is computed from (what is written next to it).

    ``analytics`` maps member names (overview, timelines, pages, referrers, countries, browsers,
    os, devices, utm) to frames, as ``rf.Analytics.frames()``; ``notes`` are short lines on data
    left out (quarantined rows, unavailable sections) shown in the report.
    """

    listings: pd.DataFrame
    changes: pd.DataFrame
    contacts: pd.DataFrame | None
    analytics: Mapping[str, pd.DataFrame] | None
    period: str | None = None
    notes: tuple[str, ...] = ()

    def data_frames(self) -> dict[str, pd.DataFrame]:
        """The frames as written to disk, by file name part (see :data:`DATA_FILES`)."""
        out = {"listings": self.listings, "changes": self.changes}
        if self.contacts is not None:
            out["contacts"] = self.contacts
        if self.analytics is not None:
            out.update(analytics_to_files(self.analytics))
        return {k: _plain(v) for k, v in out.items()}


def _plain(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.reset_index(drop=True)
    out.attrs = {}
    return out


def analytics_to_files(analytics: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Analytics frames as three tables: overview, timelines and one long breakdowns table."""
    parts = []
    for member in (*_BREAKDOWN_MEMBERS, "utm"):
        frame = analytics.get(member)
        if frame is None:
            continue
        part = pd.DataFrame(
            {
                "member": member,
                "dimension": (
                    frame["dimension"].astype("str").to_numpy(dtype=object)
                    if "dimension" in frame.columns
                    else np.full(len(frame), None, dtype=object)
                ),
                "name": frame["name"].astype("str").to_numpy(dtype=object),
            }
        )
        for column in ("visitors", "pageviews", "conversions"):
            part[column] = pd.array(frame[column], dtype="Int64")
        parts.append(part)
    breakdowns = (
        pd.concat(parts, ignore_index=True)
        if parts
        else pd.DataFrame({c: [] for c in _BREAKDOWN_COLUMNS})
    )
    breakdowns = breakdowns.astype({"member": "str", "dimension": "str", "name": "str"})
    timelines = analytics["timelines"].copy()
    timelines["metric"] = timelines["metric"].astype("str")
    return {
        "analytics-overview": analytics["overview"],
        "analytics-timelines": timelines,
        "analytics-breakdowns": breakdowns,
    }


def analytics_from_files(files: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The inverse of :func:`analytics_to_files`: member name -> frame (for ``traffic_summary``).

    >>> analytics = analytics_from_files(read_report_data("reports/market-report-2026-06-30.html"))  # doctest: +SKIP
    >>> rf.traffic_summary(analytics)  # doctest: +SKIP
    """
    out = {
        "overview": files["analytics-overview"],
        "timelines": files["analytics-timelines"],
    }
    long = files["analytics-breakdowns"]
    member = long["member"].astype("str")
    for name in _BREAKDOWN_MEMBERS:
        part = long[(member == name).to_numpy()]
        out[name] = part[["name", "visitors", "pageviews", "conversions"]].reset_index(drop=True)
    utm = long[(member == "utm").to_numpy()]
    out["utm"] = utm[["dimension", "name", "visitors", "pageviews", "conversions"]].reset_index(
        drop=True
    )
    return out


def data_paths(html: str | os.PathLike[str]) -> dict[str, dict[str, Path]]:
    """The data files next to a report: name -> {"parquet": path, "csv": path}."""
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


# -- loading (I/O) -------------------------------------------------------------------------------


def _quarantine_note(client: Any, what: str) -> str | None:
    load = getattr(client, "last_load", None)
    quarantine = getattr(load, "quarantine", None)
    if isinstance(quarantine, pd.DataFrame) and len(quarantine):
        return f"{len(quarantine):,} {what} failed validation and were left out (quarantined)."
    return None


def _load_listings(
    client: Any, options: MarketReportOptions, refresh: bool
) -> tuple[pd.DataFrame, list[str]]:
    places: list[dict[str, Any]] = [{"City": c} for c in options.cities] or [{}]
    scopes = [{**p, "PropertyType": t} for p in places for t in options.property_types]
    parts, notes = [], []
    for scope in scopes:
        if refresh:  # reload the market in full (the sync keeps its history)
            from realtyframes.loaders._sync import sync_listings

            frame = sync_listings(client, scope, refresh=True)
        else:
            frame = client.sync_listings(**scope)
        if frame.empty and "City" in scope:
            logger.warning("no %s listings in %r", scope["PropertyType"], scope["City"])
            notes.append(f"No {scope['PropertyType']} listings found in {scope['City']!r}.")
        note = _quarantine_note(client, "listing records")
        if note:
            notes.append(note)
        parts.append(frame)
    listings = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    if "ListingId" in listings.columns:
        listings = listings.drop_duplicates("ListingId", keep="last")
        listings = listings.sort_values("ListingId", kind="stable")
    return listings.reset_index(drop=True), notes


def _active_sale_ids(listings: pd.DataFrame) -> list[str]:
    if listings.empty:
        return []
    active = listings["StandardStatus"].astype("str").to_numpy() == "Active"
    sale = listings["PropertyType"].astype("str").isin(SALE_TYPES).to_numpy()
    return sorted(listings.loc[active & sale, "ListingId"].astype("str").unique())


def _load_changes(
    client: Any, ids: Sequence[str], since: pd.Timestamp, refresh: bool
) -> pd.DataFrame:
    if not ids:
        from realtyframes.schemas import ListingChange, empty_frame

        return empty_frame(ListingChange, optional=True)
    changes = client.listing_changes(list(ids), since=since.to_pydatetime(), refresh=refresh)
    keep = changes["ListingId"].astype("str").isin(set(ids)).to_numpy()
    changes = changes[keep]
    order = [c for c in ("ListingId", "ChangeTimestamp", "ChangeType") if c in changes.columns]
    return changes.sort_values(order, kind="stable").reset_index(drop=True)


def _load_contacts(client: Any, refresh: bool) -> tuple[pd.DataFrame | None, str | None]:
    try:
        contacts = client.contacts(refresh=refresh)
    except (InsufficientScopeError, NotFoundError) as exc:
        legacy = getattr(client, "legacy_contacts", None)
        if legacy is not None and getattr(client.api, "auth_kind", None) == "api_key":
            try:
                contacts = legacy(refresh=refresh)
            except (InsufficientScopeError, NotFoundError):
                contacts = None
        else:
            contacts = None
        if contacts is None:
            logger.warning("contacts not available (%s); the leads section is left out", exc.code)
            return None, f"Contacts not available ({exc.code}): the leads section is left out."
    columns = [c for c in CONTACT_COLUMNS if c in contacts.columns]
    out = contacts[columns]
    if "id" in out.columns:
        out = out.sort_values("id", kind="stable")
    return out.reset_index(drop=True), None


def _load_analytics(
    client: Any, period: str, refresh: bool
) -> tuple[dict[str, pd.DataFrame] | None, str | None]:
    try:
        analytics = client.analytics(period=period, refresh=refresh)
    except (InsufficientScopeError, NotFoundError) as exc:
        logger.warning("analytics not available (%s); the traffic section is left out", exc.code)
        return (
            None,
            f"Website analytics not available ({exc.code}): the traffic section is left out.",
        )
    frames = analytics.frames() if hasattr(analytics, "frames") else dict(analytics)
    return frames, None


def load_market_frames(
    client: Client, options: MarketReportOptions, *, refresh: bool = False
) -> MarketFrames:
    """Load what the report needs through ``client`` (and its cache).

    Listings: ``client.sync_listings`` per city (the whole market without cities): every status.
    Changes: the change feed of the active for-sale listings since the window start. Analytics:
    the period covering the window. Contacts: ``client.contacts()`` (activity is not loaded: one
    request per contact). A section whose data the credential may not read (403, 404) is left
    out with a note; every other error is raised.

    >>> frames = load_market_frames(rf.Client(), MarketReportOptions())  # doctest: +SKIP
    """
    notes: list[str] = []
    logger.info(
        "loading listings: %s, %s",
        ", ".join(options.property_types),
        ", ".join(options.cities) or "whole market",
    )
    listings, listing_notes = _load_listings(client, options, refresh)
    notes += listing_notes
    ids = _active_sale_ids(listings)
    logger.info("loading the change feed of %d active for-sale listings", len(ids))
    changes = _load_changes(client, ids, options.window_start, refresh)
    logger.info("loading website analytics (period %s)", options.period)
    analytics, note = _load_analytics(client, options.period, refresh)
    notes += [note] if note else []
    logger.info("loading contacts")
    contacts, note = _load_contacts(client, refresh)
    notes += [note] if note else []
    return MarketFrames(
        listings=listings,
        changes=changes,
        contacts=contacts,
        analytics=analytics,
        period=options.period if analytics is not None else None,
        notes=tuple(notes),
    )


# -- computing (pure) ----------------------------------------------------------------------------


@dataclass(frozen=True)
class MarketReport:
    """Everything the report shows, computed by the analysis functions from :class:`MarketFrames`.

    - ``summary``: ``market_summary(listings, by, as_of, window_days, compare_previous=True)``
    - ``comparison``: ``compare_markets(listings, markets, by, as_of, window_days,
      compare_previous=True)`` for the ``markets`` shown (plus "All markets")
    - ``drops``: ``price_drops(listings, changes, since=window_start)``
    - ``drop_summary``: ``price_drop_summary(drops, by, listings=listings)``
    - ``traffic``: ``traffic_summary(analytics)`` (None without analytics)
    - ``funnel``: ``lead_funnel(contacts)`` (None without contacts)
    """

    options: MarketReportOptions
    frames: MarketFrames
    markets: list[Any]
    summary: pd.DataFrame
    comparison: pd.DataFrame
    drops: pd.DataFrame
    drop_summary: pd.DataFrame
    traffic: TrafficSummary | None
    funnel: LeadFunnel | None
    headline: dict[str, Any] = field(default_factory=dict)


def pick_markets(summary: pd.DataFrame, options: MarketReportOptions) -> list[Any]:
    """The markets shown side by side: the given cities (by City), else the largest markets by
    active listings plus homes sold in the window (ties by name), at most ``max_markets``."""
    if options.cities and options.by == "City":
        return list(options.cities)[: options.max_markets]
    if summary.empty:
        return []
    size = (summary["active_listings"] + summary["homes_sold"]).astype("int64")
    order = pd.DataFrame({"size": size.to_numpy(), "name": [str(k) for k in summary.index]})
    order.index = summary.index
    order = order.sort_values(["size", "name"], ascending=[False, True], kind="stable")
    return list(order.index[: options.max_markets])


def compute_market_report(frames: MarketFrames, options: MarketReportOptions) -> MarketReport:
    """Compute every table of the report with the analysis functions (no I/O).

    >>> report = compute_market_report(frames, MarketReportOptions(as_of="2026-06-30"))  # doctest: +SKIP
    >>> report.comparison.loc["median_sale_price", "All markets"]  # doctest: +SKIP
    """
    as_of = options.day
    days = float(options.window_days)
    listings = frames.listings
    summary = market_summary(
        listings, by=options.by, as_of=as_of, window_days=days, compare_previous=True
    )
    markets = pick_markets(summary, options)
    comparison = compare_markets(
        listings,
        markets=markets,
        by=options.by,
        as_of=as_of,
        window_days=days,
        compare_previous=True,
    )
    drops = price_drops(listings, frames.changes, since=summary.attrs["window_start"])
    drop_summary = price_drop_summary(drops, by=options.by, listings=listings)
    traffic = traffic_summary(frames.analytics) if frames.analytics is not None else None
    funnel = lead_funnel(frames.contacts) if frames.contacts is not None else None

    ref = comparison[REFERENCE_LABEL]
    headline: dict[str, Any] = {
        "active_listings": ref["active_listings"],
        "new_listings": ref["new_listings"],
        "homes_sold": ref["homes_sold"],
        "median_sale_price": ref["median_sale_price"],
        "median_dom": ref["median_dom"],
        "months_of_supply": ref["months_of_supply"],
        "price_drops": len(drops),
        "median_drop_pct": float(drops["drop_pct"].median()) if len(drops) else np.nan,
    }
    if traffic is not None:
        headline["visitors"] = traffic.headline.loc["visitors", "value"]
        headline["conversion_rate"] = traffic.headline.loc["conversion_rate", "value"]
    if funnel is not None:
        headline["contacts"] = int(funnel.by_stage["contacts"].sum())
        headline["new_leads"] = int(funnel.weekly["new_leads"].sum()) if len(funnel.weekly) else 0
    return MarketReport(
        options=options,
        frames=frames,
        markets=markets,
        summary=summary,
        comparison=comparison,
        drops=drops,
        drop_summary=drop_summary,
        traffic=traffic,
        funnel=funnel,
        headline=headline,
    )


# -- rendering -----------------------------------------------------------------------------------


def _label(key: Any) -> str:
    parts = key if isinstance(key, tuple) else (key,)
    return " / ".join("(missing)" if pd.isna(p) else str(p) for p in parts)


def _frame_table(
    name: str, first: str, frame: pd.DataFrame, spec: Sequence[tuple[str, str, str]], caption: str
) -> str:
    """A table of ``frame`` by its index: one row per label, one column per ``(column, header,
    kind)`` of ``spec``."""
    rows: list[list[Cell | str]] = []
    for key, row in frame.iterrows():
        label = _label(key)
        rows.append([label, *[Cell(row[c], k, row=label, col=c) for c, _, k in spec]])
    return _table(
        name,
        [first, *[h for _, h, _ in spec]],
        rows,
        caption=caption,
        numeric_header=[False] + [True] * len(spec),
    )


def _kind(metric: str) -> str:
    from realtyframes.plots import METRIC_LABELS

    kind = METRIC_LABELS[metric][2]
    return {"count": "count", "money": "money", "percent": "percent"}.get(kind, "number")


def _pct_note(value: Any, label: str) -> str | None:
    if value is None or pd.isna(value):
        return None
    arrow = "▲" if value > 0 else "▼" if value < 0 else "="
    return f"{arrow} {abs(float(value)):.1%} vs {label}"


def _cards(report: MarketReport) -> str:
    h, ref = report.headline, report.comparison[REFERENCE_LABEL]
    days = f"{float(report.options.window_days):g} days"
    prev = f"previous {days}"

    def change(metric: str) -> str | None:
        key = f"{metric}_pct_change"
        return _pct_note(ref[key], prev) if key in ref.index else None

    cards = [
        Card("active_listings", "Active listings", h["active_listings"], "count", "for sale, now"),
        Card(
            "new_listings",
            f"New listings, {days}",
            h["new_listings"],
            "count",
            change("new_listings"),
        ),
        Card("homes_sold", f"Homes sold, {days}", h["homes_sold"], "count", change("homes_sold")),
        Card(
            "median_sale_price",
            "Median sale price",
            h["median_sale_price"],
            "money",
            change("median_sale_price"),
        ),
        Card(
            "median_dom", "Median days on market", h["median_dom"], "number", change("median_dom")
        ),
        Card("months_of_supply", "Months of supply", h["months_of_supply"], "number"),
        Card(
            "price_drops",
            f"Price cuts, {days}",
            h["price_drops"],
            "count",
            None if pd.isna(h["median_drop_pct"]) else f"median cut {h['median_drop_pct']:.1%}",
        ),
    ]
    if "visitors" in h:
        cards.append(
            Card("visitors", f"Website visitors, {report.frames.period}", h["visitors"], "count")
        )
        cards.append(Card("conversion_rate", "Conversion rate", h["conversion_rate"], "percent"))
    if "contacts" in h:
        cards.append(Card("contacts", "CRM contacts", h["contacts"], "count"))
    return render_cards(cards)


def _market_section(report: MarketReport) -> Section:
    from realtyframes import plots

    o = report.options
    comp = report.comparison
    columns = list(comp.columns)
    header = ["Metric", *[_label(c) for c in columns]]
    from realtyframes.plots import METRIC_LABELS

    rows: list[list[Cell | str]] = []
    for metric in TABLE_METRICS:
        cells: list[Cell | str] = [SHORT_LABELS.get(metric, METRIC_LABELS[metric][0])]
        for col in columns:
            cells.append(Cell(comp.loc[metric, col], _kind(metric), row=metric, col=_label(col)))
        rows.append(cells)
    table = _table(
        "comparison",
        header,
        rows,
        caption=f"{', '.join(o.property_types)}; window: the {float(o.window_days):g} days to "
        f"{o.day.isoformat()}. "
        f"'{REFERENCE_LABEL}' is the whole market of the report.",
        numeric_header=[False] + [True] * len(columns),
    )
    shown = report.summary.reindex(pd.Index(report.markets, tupleize_cols=True, name=o.by))
    shown.attrs = dict(report.summary.attrs)
    charts = [
        _figure(
            plots.market_metrics(shown),
            f"Market metrics by {o.by}: median sale price, price per sq ft, homes sold, months of "
            "supply, days on market, share with a price drop",
            "market_metrics",
        ),
        _figure(
            plots.ppsf_boxplot(
                report.frames.listings,
                by=o.by,
                price="sale",
                markets=report.markets,
                as_of=o.day,
                window_days=float(o.window_days),
            ),
            f"Sale price per square foot by {o.by}",
            "ppsf_boxplot",
        ),
    ]
    intro = (
        f"Markets by {o.by}: {len(report.summary):,} in the data, the {len(report.markets)} "
        "largest shown side by side"
        if not (o.cities and o.by == "City")
        else f"Markets by {o.by}: the cities asked for"
    ) + ". Definitions of every metric: docs/metrics.md of realtyframes."
    return Section("markets", "Market comparison", table + "".join(charts), intro)


def _drops_section(report: MarketReport) -> Section:
    from realtyframes import plots

    o = report.options
    ds = report.drop_summary.reindex(pd.Index(report.markets, tupleize_cols=True, name=o.by))
    spec = [
        ("price_drops", "Listings with a cut", "count"),
        ("active_listings", "Active listings", "count"),
        ("active_with_price_drop", "Active with a cut", "count"),
        ("pct_active_with_price_drop", "Share of active", "percent"),
        ("median_drop_pct", "Median cut", "percent"),
        ("median_drop_amount", "Median cut (USD)", "money"),
    ]
    summary_table = _frame_table(
        "drop_summary", o.by, ds, spec, "Price cuts in the window by market (sale segment)."
    )
    top = report.drops.head(o.top_drops)
    top_spec = [
        ("UnparsedAddress", "Address", "text"),
        ("City", "City", "text"),
        ("PropertySubType", "Type", "text"),
        ("previous_price", "Was", "money"),
        ("current_price", "Now", "money"),
        ("drop_pct", "Cut", "percent"),
        ("drop_amount", "Cut (USD)", "money"),
        ("drop_count", "Cuts", "count"),
        ("total_drop_pct", "Total cut", "percent"),
        ("last_drop_at", "Last cut", "date"),
        ("DaysOnMarket", "Days on market", "days"),
    ]
    top_rows: list[list[Cell | str]] = []
    for _, row in top.iterrows():
        lid = str(row["ListingId"])
        top_rows.append([lid, *[Cell(row[c], k, row=lid, col=c) for c, _, k in top_spec]])
    top_table = _table(
        "top_drops",
        ["Listing", *[h for _, h, _ in top_spec]],
        top_rows,
        caption=f"The {len(top)} biggest cuts (by the latest cut's percentage) of active "
        f"for-sale listings since {o.window_start.strftime('%Y-%m-%d')}.",
        numeric_header=[False, False, False, False] + [True] * (len(top_spec) - 3),
    )
    charts = (
        '<div class="grid2">'
        + _figure(
            plots.top_price_drops(report.drops, n=o.top_drops),
            "The biggest price cuts, by percentage",
            "top_price_drops",
        )
        + _figure(
            plots.price_drop_distribution(report.drops),
            "Distribution of price cuts",
            "price_drop_distribution",
        )
        + "</div>"
    )
    intro = (
        f"{len(report.drops):,} active for-sale listings cut their price in the "
        f"{float(o.window_days):g} days to {o.day.isoformat()} (from the listing change feed)."
    )
    return Section("price-drops", "Price drops", summary_table + top_table + charts, intro)


_TRAFFIC_LABELS: dict[str, tuple[str, str]] = {
    "visitors": ("Visitors", "count"),
    "pageviews": ("Pageviews", "count"),
    "sessions": ("Sessions", "count"),
    "views_per_visit": ("Views per visit", "number"),
    "bounce_rate": ("Bounce rate", "percent"),
    "visit_duration_seconds": ("Visit duration (seconds)", "count"),
    "conversions": ("Conversions", "count"),
    "conversion_rate": ("Conversion rate", "percent"),
}


def _traffic_section(report: MarketReport) -> Section:
    from realtyframes import plots

    if report.traffic is None:
        return Section(
            "traffic",
            "Website traffic",
            '<p class="empty">Website analytics were not available to this account.</p>',
        )
    t = report.traffic
    rows: list[list[Cell | str]] = []
    for metric, value in t.headline["value"].items():
        label, kind = _TRAFFIC_LABELS.get(str(metric), (str(metric), "number"))
        rows.append([label, Cell(value, kind, row=str(metric), col="value")])
    table = _table(
        "traffic",
        ["Metric", "Value"],
        rows,
        caption=f"Website, period {report.frames.period} (ending at the server's clock).",
        numeric_header=[False, True],
    )
    charts = (
        _figure(
            plots.traffic_timeline(t),
            "Visitors, pageviews and conversions per day",
            "traffic_timeline",
        )
        + '<div class="grid2">'
        + _figure(plots.top_sources(t), "Top traffic sources", "top_sources")
        + _figure(plots.top_pages(t), "Top pages", "top_pages")
        + _figure(plots.devices(t), "Visitors by device", "devices")
        + _figure(plots.countries(t), "Top countries", "countries")
        + "</div>"
    )
    return Section("traffic", "Website traffic", table + charts)


def _leads_section(report: MarketReport) -> Section:
    from realtyframes import plots

    if report.funnel is None:
        return Section(
            "leads",
            "Leads",
            '<p class="empty">CRM contacts were not available to this account.</p>',
        )
    f = report.funnel
    stage_spec = [
        ("contacts", "Contacts", "count"),
        ("share", "Share", "percent"),
        ("reached", "Reached", "count"),
        ("reached_share", "Reached (share of funnel)", "percent"),
    ]
    stage_table = _frame_table(
        "funnel",
        "Stage",
        f.by_stage,
        stage_spec,
        "Contacts by stage; 'reached' counts contacts at the stage or a later one.",
    )
    source_spec = [
        ("contacts", "Contacts", "count"),
        ("share", "Share", "percent"),
        ("converted", "Converted", "count"),
        ("conversion_rate", "Conversion rate", "percent"),
    ]
    source_table = _frame_table(
        "lead_sources",
        "Source",
        f.by_source,
        source_spec,
        "Contacts by lead source; converted = past the first funnel stage.",
    )
    charts = (
        '<div class="grid2">'
        + _figure(plots.lead_funnel(f), "Lead funnel", "lead_funnel")
        + _figure(plots.leads_per_week(f), "New leads per week", "leads_per_week")
        + "</div>"
    )
    return Section("leads", "Leads", stage_table + source_table + charts)


def render_market_report(report: MarketReport, *, stem: str | None = None) -> str:
    """The report as one self-contained HTML document (see :mod:`realtyframes.report._html`)."""
    o = report.options
    stem = stem or o.stem
    scope = (
        (", ".join(o.cities) if o.cities else "whole market") + " · " + ", ".join(o.property_types)
    )
    title = f"Market report — {o.day.isoformat()}"
    meta = [
        f"As of {o.day.isoformat()}",
        f"window {float(o.window_days):g} days",
        f"markets by {o.by}",
        f"scope: {scope}",
        f"source: {o.source}",
    ]
    notes = "".join(f'<p class="notice">{esc(n)}</p>' for n in report.frames.notes)
    lead = _cards(report) + notes
    sections = [
        _market_section(report),
        _drops_section(report),
        _traffic_section(report),
        _leads_section(report),
    ]
    files = []
    for name, what in DATA_FILES.items():
        if name in report.frames.data_frames():
            links = " · ".join(
                f'<a href="{esc(f"{stem}.{name}.{fmt}")}">{fmt}</a>' for fmt in ("parquet", "csv")
            )
            files.append(f"<li><code>{esc(name)}</code>: {esc(what)} ({links})</li>")
    footer = (
        "<p>The data behind this report, next to this file:</p>"
        f"<ul>{''.join(files)}</ul>"
        f"<p>Made by realtyframes {esc(__version__)}: rf.market_summary, rf.compare_markets, "
        "rf.price_drops, rf.price_drop_summary, rf.traffic_summary and rf.lead_funnel on the "
        "frames above.</p>"
    )
    return render_page(title, sections, meta=meta, lead=lead, footer=footer)


# -- writing -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReportFiles:
    """Paths written: the HTML and, per data frame, its Parquet and CSV files."""

    html: Path
    data: dict[str, dict[str, Path]]

    def all(self) -> list[Path]:
        """Every path written, HTML first."""
        return [self.html, *(p for d in self.data.values() for p in d.values())]


@contextmanager
def _atomic(path: Path) -> Iterator[Path]:
    """A temporary name next to ``path``, renamed onto it when the block succeeds."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def csv_ready(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy whose list values (phones, languages ...) are JSON arrays: CSV has no lists."""
    import json

    def encode(value: Any) -> Any:
        if isinstance(value, np.ndarray):
            value = value.tolist()
        return json.dumps(list(value)) if isinstance(value, list | tuple) else value

    text = frame.copy()
    for column in text.columns:
        if text[column].dtype == object:
            text[column] = text[column].map(encode)
    return text


def write_frame(frame: pd.DataFrame, parquet: Path, csv: Path) -> None:
    """Write one frame as Parquet and CSV (atomically; no index; deterministic bytes)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    frame = _plain(frame)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    with _atomic(parquet) as tmp:
        pq.write_table(table, tmp, compression="zstd")
    text = csv_ready(frame)
    with _atomic(csv) as tmp:
        text.to_csv(tmp, index=False, lineterminator="\n")


def write_market_report(
    report: MarketReport, out_dir: str | os.PathLike[str] = "reports"
) -> ReportFiles:
    """Write the HTML report and its data (Parquet + CSV) into ``out_dir``; returns the paths.

    >>> files = write_market_report(report, "reports")  # doctest: +SKIP
    >>> files.html.name  # doctest: +SKIP
    'market-report-2026-06-30.html'
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stem = report.options.stem
    html_path = out / f"{stem}.html"
    frames = report.frames.data_frames()
    paths = {k: v for k, v in data_paths(html_path).items() if k in frames}
    for name, frame in frames.items():
        write_frame(frame, paths[name]["parquet"], paths[name]["csv"])
    text = render_market_report(report, stem=stem)
    with _atomic(html_path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return ReportFiles(html=html_path, data=paths)


def market_report(
    client: Client | None = None,
    *,
    as_of: dt.date | str | None = None,
    cities: Sequence[str] = (),
    property_types: Sequence[str] = ("Residential",),
    by: str = "City",
    window_days: float = 90,
    out_dir: str | os.PathLike[str] = "reports",
    refresh: bool = False,
    source: str | None = None,
) -> ReportFiles:
    """Load, compute and write the market report in one call (``rf.Client()`` when no client).

    >>> files = market_report(rf.Client(), cities=["Miami Beach", "Coral Gables"])  # doctest: +SKIP
    >>> files.html  # doctest: +SKIP
    PosixPath('reports/market-report-2026-06-30-miami-beach-coral-gables.html')
    """
    if client is None:
        from realtyframes._client import Client

        client = Client()
    if source is None:
        source = (
            "embedded sandbox (synthetic data)"
            if getattr(client, "embedded", False)
            else describe_host(client.base_url)
        )
    options = MarketReportOptions(
        as_of=as_of,
        window_days=window_days,
        by=by,
        cities=tuple(cities),
        property_types=tuple(property_types),
        source=source,
    )
    frames = load_market_frames(client, options, refresh=refresh)
    logger.info("computing the report")
    report = compute_market_report(frames, options)
    return write_market_report(report, out_dir)


def describe_host(url: str) -> str:
    """A URL reduced to scheme://host[:port] (no user info, path or query: nothing secret).

    >>> describe_host("https://user:pw@api.example.com/v1?api_key=x")
    'https://api.example.com'
    """
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}" if parts.scheme else host


# -- the command ---------------------------------------------------------------------------------

#: How the embedded sandbox is named in the report (its port changes from run to run).
EMBEDDED_SOURCE = "embedded sandbox (synthetic data)"


@contextmanager
def open_report_client(
    settings: Any,
    day: dt.date,
    *,
    explicit_date: bool,
    progress: bool | None = None,
    **client_options: Any,
) -> Iterator[tuple[Client, str]]:
    """A client for the report and the source's name in it.

    With no host and no credentials: the embedded sandbox; when a date other than today is asked
    for, a sandbox whose clock is that date (so a report of any day is reproducible).
    """
    from realtyframes._client import Client
    from realtyframes._config import make_client

    if settings.embedded and explicit_date and day != dt.datetime.now(dt.UTC).date():
        from realtyframes.sandbox import serve

        with (
            serve(as_of=_utc_midnight(day)) as url,
            Client(
                base_url=url, cache_dir=settings.cache_dir, progress=progress, **client_options
            ) as client,
        ):
            logger.info("embedded sandbox with its clock at %s 00:00 UTC", day.isoformat())
            yield client, EMBEDDED_SOURCE
        return
    with make_client(settings, progress=progress, **client_options) as client:
        source = EMBEDDED_SOURCE if client.embedded else describe_host(client.base_url)
        yield client, source


def run_report(args: Any, settings: Any) -> int:
    """The ``report market`` command: load, compute, write; print the HTML path (stdout)."""
    import dataclasses

    from realtyframes._config import client_options

    options = MarketReportOptions(
        as_of=args.as_of,
        window_days=args.window_days,
        by=args.by,
        cities=tuple(args.city or ()),
        property_types=tuple(args.property_type or ("Residential",)),
    )
    quiet = bool(getattr(args, "quiet", False))
    with open_report_client(
        settings,
        options.day,
        explicit_date=args.as_of is not None,
        progress=False if quiet else None,
        **client_options(args),
    ) as (client, source):
        options = dataclasses.replace(options, source=source)
        frames = load_market_frames(client, options, refresh=bool(args.refresh))
    logger.info("computing the report (%d listings)", len(frames.listings))
    report = compute_market_report(frames, options)
    files = write_market_report(report, args.out)
    logger.info("wrote %s and %d data files", files.html, len(files.all()) - 1)
    print(os.fspath(files.html), flush=True)
    return 0
