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
import difflib
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pandas as pd

from realtyframes._deprecation import renamed, renamed_attribute
from realtyframes.errors import InsufficientScopeError, NotFoundError, QueryError
from realtyframes.loaders import sync_listings
from realtyframes.report._plain import plain_frame
from realtyframes.report.options import CONTACT_COLUMNS, MarketReportOptions
from realtyframes.schemas import BREAKDOWNS

if TYPE_CHECKING:
    from realtyframes.loaders import LoadInfo, Session
    from realtyframes.schemas import Analytics

__all__ = [
    "MarketFrames",
    "ReportClient",
    "analytics_from_files",
    "analytics_to_files",
    "load_market_frames",
]

logger = logging.getLogger("realtyframes.report")

#: Listings read (four pages) to find the cities a misspelt ``--city`` most likely meant.
SAMPLE_ROWS = 200


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
    def session(self) -> Session: ...

    def sync_listings(
        self, *, refresh: bool = False, wait: float | None = ..., **scope: Any
    ) -> pd.DataFrame: ...
    def listings(self, *, max_results: int | None = None, **filters: Any) -> pd.DataFrame: ...
    def listing_history(self, **scope: Any) -> pd.DataFrame: ...

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

    ``history`` is the market's price and status history (``client.listing_history``: backfilled
    by the first sync, extended by each later one; written as the data file ``changes``).
    ``changes`` is its old name (a keyword and an attribute that still work, with a
    DeprecationWarning). ``since_last`` is what the syncs of this run
    changed since the previous sync of the same market (the syncs' ``changes``), None on a
    first run. ``analytics`` maps member names (overview, timelines, pages, referrers, countries,
    browsers, os, devices, utm) to frames, as ``rf.Analytics.frames()``; ``notes`` are short
    lines on data left out (quarantined rows, unavailable sections) shown in the report.
    """

    listings: pd.DataFrame
    history: pd.DataFrame
    contacts: pd.DataFrame | None
    analytics: Mapping[str, pd.DataFrame] | None
    period: str | None = None
    notes: tuple[str, ...] = ()
    since_last: pd.DataFrame | None = None
    quarantined: Mapping[str, int] = field(default_factory=dict)

    def data_frames(self) -> dict[str, pd.DataFrame]:
        """The frames as written to disk, by file name part (see :data:`DATA_FILES`)."""
        out = {"listings": self.listings, "changes": self.history}
        if self.since_last is not None:
            out["since-last"] = self.since_last
        if self.contacts is not None:
            out["contacts"] = self.contacts
        if self.analytics is not None:
            out.update(analytics_to_files(self.analytics))
        return {k: plain_frame(v) for k, v in out.items()}

    changes = renamed_attribute("changes", "history")


MarketFrames.__init__ = renamed(changes="history")(MarketFrames.__init__)  # type: ignore[method-assign]


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


def _quarantine_note(load: LoadInfo, what: str) -> str | None:
    quarantine = load.quarantine
    if isinstance(quarantine, pd.DataFrame) and len(quarantine):
        return f"{len(quarantine):,} {what} failed validation and were left out (quarantined)."
    return None


@dataclass
class _Market:
    """The listings, history and changes-since-last-sync of the scopes of one report."""

    listings: pd.DataFrame
    history: pd.DataFrame
    since_last: pd.DataFrame | None
    notes: list[str]
    quarantined: int = 0


def _concat_unique(parts: Sequence[pd.DataFrame], key: list[str]) -> pd.DataFrame:
    frame = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    if len(frame) and all(k in frame.columns for k in key):
        frame = frame.drop_duplicates(key, keep="last").sort_values(key, kind="stable")
    return frame.reset_index(drop=True)


def _load_listings(
    client: ReportClient, options: MarketReportOptions, refresh: bool, wait: float | None
) -> _Market:
    scopes = options.scopes
    waiting: dict[str, Any] = {} if wait is None else {"wait": wait}  # None: the sync's default
    parts, histories, changed, notes, empty = [], [], [], [], []
    first, quarantined = False, 0
    for scope in scopes:
        # refresh: reload the market in full (the sync keeps its history)
        load = sync_listings(client.session, scope, refresh=refresh, **waiting)
        frame, since = load.frame, load.changes
        first = first or since is None
        if since is not None:
            changed.append(since)
        histories.append(client.listing_history(**scope))
        if frame.empty and "City" in scope:
            empty.append(scope)
        quarantined += len(load.quarantine)
        note = _quarantine_note(load, "listing records")
        if note:
            notes.append(note)
        parts.append(frame)
    if empty:
        raise _no_listings(client, empty, parts)
    return _Market(
        listings=_concat_unique(parts, ["ListingId"]),
        history=_concat_unique(histories, ["ListingId", "ChangeTimestamp", "ChangeType"]),
        since_last=None if first else _concat_unique(changed, ["ListingId", "change"]),
        notes=notes,
        quarantined=quarantined,
    )


def _no_listings(
    client: ReportClient, empty: Sequence[Mapping[str, Any]], loaded: Sequence[pd.DataFrame]
) -> QueryError:
    """The error for asked-for cities without listings (a misspelt city must not make a report
    of nothing that exits 0): a did-you-mean against the cities seen in the market, from the
    other scopes and one page of each property type's search."""
    seen = {str(c) for frame in loaded if "City" in frame.columns for c in frame["City"].dropna()}
    for kind in dict.fromkeys(str(scope["PropertyType"]) for scope in empty):
        sample = client.listings(PropertyType=kind, max_results=SAMPLE_ROWS)
        seen.update(str(c) for c in sample.get("City", pd.Series(dtype="str")).dropna())
    scope = empty[0]
    city = str(scope["City"])
    by_lower = {c.lower(): c for c in seen}
    near = difflib.get_close_matches(city.lower(), list(by_lower), n=1, cutoff=0.6)
    hint = f"; did you mean {by_lower[near[0]]!r}?" if near else ""
    problem = f"no {scope['PropertyType']} listings in {city!r}{hint}"
    if len(empty) > 1:
        others = ", ".join(repr(str(s["City"])) for s in empty[1:])
        problem += f" (none in {others} either)"
    allowed = f"a city with listings (seen: {', '.join(sorted(seen))})" if seen else "a city"
    return QueryError("--city", problem, allowed)


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
    client: ReportClient,
    options: MarketReportOptions,
    *,
    refresh: bool = False,
    wait: float | None = None,
    web: bool = False,
) -> MarketFrames:
    """Load what the report needs through ``client`` (and its cache).

    Listings: ``client.sync_listings`` per city (the whole market without cities): every status;
    its history (``client.listing_history``) and what the sync changed since the previous one.
    ``wait``: seconds a sync waits for another run syncing the same scope (None: the sync's
    default, 900), then :class:`~realtyframes.errors.ScopeBusyError`.
    Analytics:
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
    market = _load_listings(client, options, refresh, wait)
    notes += market.notes
    analytics: dict[str, pd.DataFrame] | None = None
    contacts: pd.DataFrame | None = None
    if web:
        logger.info("loading website analytics (period %s)", options.period)
        analytics, note = _load_analytics(client, options.period, refresh)
        notes += [note] if note else []
        logger.info("loading contacts")
        contacts, note = _load_contacts(client, refresh)
        notes += [note] if note else []
    return MarketFrames(
        listings=market.listings,
        history=market.history,
        since_last=market.since_last,
        quarantined={"listings": market.quarantined},
        contacts=contacts,
        analytics=analytics,
        period=options.period if analytics is not None else None,
        notes=tuple(notes),
    )
