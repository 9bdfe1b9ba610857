"""Loading what a market report needs, through any client that has the calls it makes.

:func:`load_market_frames` (I/O, through the client and its cache) -> :class:`MarketFrames`: the
market's listings of every status, the change feed of the active for-sale listings, the website
analytics of the period matching the window and the CRM contacts. The client is anything with the
methods of :class:`ReportClient` (``rf.Client`` has them); the caller provides it, already open.

>>> import realtyframes as rf                                               # doctest: +SKIP
>>> with rf.Client() as client:                                             # doctest: +SKIP
...     frames = load_market_frames(client, MarketReportOptions(cities=("Miami",)))
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pandas as pd

from realtyframes.analysis import SALE_TYPES
from realtyframes.errors import InsufficientScopeError, NotFoundError
from realtyframes.report.options import CONTACT_COLUMNS, MarketReportOptions
from realtyframes.schemas import BREAKDOWNS

if TYPE_CHECKING:
    from realtyframes.loaders import LoadInfo
    from realtyframes.schemas import Analytics

__all__ = [
    "MarketFrames",
    "ReportClient",
    "analytics_from_files",
    "analytics_to_files",
    "load_market_frames",
    "plain_frame",
]

logger = logging.getLogger("realtyframes.report")


class _HasAuthKind(Protocol):
    @property
    def auth_kind(self) -> str: ...


class ReportClient(Protocol):
    """The client calls the report makes (``rf.Client`` has them all)."""

    @property
    def embedded(self) -> bool: ...

    @property
    def base_url(self) -> str: ...

    @property
    def api(self) -> _HasAuthKind: ...

    @property
    def last_load(self) -> LoadInfo | None: ...

    def sync_listings(self, *, refresh: bool = False, **scope: Any) -> pd.DataFrame: ...

    def listing_changes(
        self,
        listing_ids: str | Iterable[str],
        since: str | dt.date | dt.datetime,
        change_type: str | None = None,
        *,
        refresh: bool = False,
    ) -> pd.DataFrame: ...

    def contacts(self, *, refresh: bool = False) -> pd.DataFrame: ...

    def legacy_contacts(self, *, refresh: bool = False) -> pd.DataFrame: ...

    def analytics(
        self, period: str = "30d", *, refresh: bool = False, **filters: Any
    ) -> Analytics: ...


_BREAKDOWN_COLUMNS = ("member", "dimension", "name", "visitors", "pageviews", "conversions")


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
        return {k: plain_frame(v) for k, v in out.items()}


def plain_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy with a RangeIndex and no ``attrs`` (what is written to files)."""
    out = frame.reset_index(drop=True)
    out.attrs = {}
    return out


def analytics_to_files(analytics: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Analytics frames as three tables: overview, timelines and one long breakdowns table."""
    parts = []
    for member in (*BREAKDOWNS, "utm"):
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

    >>> from realtyframes.report import read_report_data  # doctest: +SKIP
    >>> analytics = analytics_from_files(read_report_data("reports/market-report-2026-06-30.html"))  # doctest: +SKIP
    >>> rf.traffic_summary(analytics)  # doctest: +SKIP
    """
    out = {
        "overview": files["analytics-overview"],
        "timelines": files["analytics-timelines"],
    }
    long = files["analytics-breakdowns"]
    member = long["member"].astype("str")
    for name in BREAKDOWNS:
        part = long[(member == name).to_numpy()]
        out[name] = part[["name", "visitors", "pageviews", "conversions"]].reset_index(drop=True)
    utm = long[(member == "utm").to_numpy()]
    out["utm"] = utm[["dimension", "name", "visitors", "pageviews", "conversions"]].reset_index(
        drop=True
    )
    return out


def _quarantine_note(client: ReportClient, what: str) -> str | None:
    load = client.last_load
    quarantine = load.quarantine if load is not None else None
    if isinstance(quarantine, pd.DataFrame) and len(quarantine):
        return f"{len(quarantine):,} {what} failed validation and were left out (quarantined)."
    return None


def _load_listings(
    client: ReportClient, options: MarketReportOptions, refresh: bool
) -> tuple[pd.DataFrame, list[str]]:
    places: list[dict[str, Any]] = [{"City": c} for c in options.cities] or [{}]
    scopes = [{**p, "PropertyType": t} for p in places for t in options.property_types]
    parts, notes = [], []
    for scope in scopes:
        # refresh: reload the market in full (the sync keeps its history)
        frame = client.sync_listings(refresh=refresh, **scope)
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
    client: ReportClient, ids: Sequence[str], since: pd.Timestamp, refresh: bool
) -> pd.DataFrame:
    if not ids:
        from realtyframes.schemas import ListingChange, empty_frame

        return empty_frame(ListingChange, optional=True)
    changes = client.listing_changes(list(ids), since=since.to_pydatetime(), refresh=refresh)
    keep = changes["ListingId"].astype("str").isin(set(ids)).to_numpy()
    changes = changes[keep]
    order = [c for c in ("ListingId", "ChangeTimestamp", "ChangeType") if c in changes.columns]
    return changes.sort_values(order, kind="stable").reset_index(drop=True)


def _load_contacts(client: ReportClient, refresh: bool) -> tuple[pd.DataFrame | None, str | None]:
    try:
        contacts = client.contacts(refresh=refresh)
    except (InsufficientScopeError, NotFoundError) as exc:
        if client.api.auth_kind == "api_key":
            try:
                contacts = client.legacy_contacts(refresh=refresh)
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
    client: ReportClient, period: str, refresh: bool
) -> tuple[dict[str, pd.DataFrame] | None, str | None]:
    try:
        analytics = client.analytics(period=period, refresh=refresh)
    except (InsufficientScopeError, NotFoundError) as exc:
        logger.warning("analytics not available (%s); the traffic section is left out", exc.code)
        return (
            None,
            f"Website analytics not available ({exc.code}): the traffic section is left out.",
        )
    return analytics.frames(), None


def load_market_frames(
    client: ReportClient, options: MarketReportOptions, *, refresh: bool = False
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
