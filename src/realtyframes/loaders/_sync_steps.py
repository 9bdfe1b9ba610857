"""The sync runner: one loop over the sync an endpoint declares (the listings row's ``sync``),
reading the server through a :class:`Reader`. :func:`run_first`: a search per status, then the
history backfill from the change feed. :func:`run_later`: the new records since the entry
watermark, the feed since the change watermark applied, the closings' details, the server's clock
for DaysOnMarket. ``_sync_fetch.Fetching`` makes the requests; a plan runs the same two functions
with ``_plan.Counting``, so it walks the requests the sync makes.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Protocol

import pandas as pd

from realtyframes._changes import sync_changes
from realtyframes.errors import ApiError
from realtyframes.loaders._base import Endpoint, Sync, ids_in
from realtyframes.loaders._page_info import PAGE_SIZE, Paged
from realtyframes.loaders._sync_apply import (
    append_history,
    clock_window,
    close_data,
    concat,
    data_time_of,
    grow_days_on_market,
    iso,
    latest,
    max_stamp,
    media_of,
    stamp,
    tidy,
    turning,
    wall_clock,
    watermarks,
)
from realtyframes.schemas import OnInvalid, empty_frame, listings_from_records, validate

__all__ = [
    "NOT_ASKED",
    "STATE_VERSION",
    "Counts",
    "Fed",
    "Reader",
    "SyncResult",
    "SyncRun",
    "chunks",
    "pages_of",
    "queries",
    "run_first",
    "run_later",
    "too_many",
]

logger = logging.getLogger("realtyframes.sync")

#: Version of the sync state kept in the entry's metadata; another version means a full load.
STATE_VERSION = 1
#: What a dry run's reader answers for a detail it does not ask for (:meth:`Reader.detail`).
NOT_ASKED = b""
#: Most detail requests one sync makes to place the server's clock (a binary search needs
#: about log2 of the open listings: 15 for 20,000).
_MAX_PROBES = 40
#: Open records whose day may turn inside the clock's window above which the sync reads one
#: search page of open records first: its 50 records narrow the window about 25-fold for one
#: request, where a detail halves it.
_PAGE_ABOVE = 3


@dataclass
class Counts:
    """Requests of one sync, by kind; ``floor``: what it had to ask for (docs/sync.md)."""

    search: int = 0
    feed: int = 0
    details: int = 0
    backfill: int = 0  # change-feed requests of a first sync's history
    rejected: int = 0  # change-feed requests refused for too many ids (before splitting)
    clock: int = 0  # the requests that placed the server's clock (a search page, details)
    floor: int = 0

    def add(
        self, kind: str, requests: int, floor: int | None = None, *, clock: bool = False
    ) -> None:
        """``requests`` of ``kind``, ``floor`` of them needed (None: all); ``clock``: they placed
        the server's clock."""
        setattr(self, kind, getattr(self, kind) + requests)
        self.floor += requests if floor is None else floor
        self.clock += requests if clock else 0

    def as_dict(self) -> dict[str, int]:
        counted = {f.name: getattr(self, f.name) for f in fields(self)}
        counted["total"] = sum(v for k, v in counted.items() if k not in ("floor", "clock"))
        return counted


@dataclass
class Fed:
    """The change feed over some ids: its bodies, requests, refusals and floor."""

    pages: list[bytes] = field(default_factory=list)
    requests: int = 0
    rejected: int = 0
    floor: int = 0

    def __add__(self, other: Fed) -> Fed:
        return Fed(self.pages + other.pages, self.requests + other.requests,
                   self.rejected + other.rejected, self.floor + other.floor)  # fmt: skip


@dataclass
class SyncResult:
    market: pd.DataFrame
    media: pd.DataFrame
    quarantine: pd.DataFrame
    history: pd.DataFrame
    state: dict[str, Any]
    counts: Counts = field(default_factory=Counts)
    changes: pd.DataFrame | None = None  # what an incremental sync changed (None: a full load)


class Reader(Protocol):
    """How the runner reads the server: for real (:class:`Fetching`) or counting (a plan)."""

    def search(self, queries: Sequence[Mapping[str, str]]) -> list[Paged]: ...
    def keys(self, market: pd.DataFrame, found: Sequence[Paged]) -> list[str]: ...
    def feed(self, ids: Sequence[str], since: str, chunk: int) -> Fed: ...
    def details(self, ids: Sequence[str]) -> tuple[list[bytes], list[str], int]: ...
    def page(self, query: Mapping[str, str]) -> pd.DataFrame:
        """The first page of a search (``query`` with its ``Limit``), shaped."""

    def detail(self, key: str) -> bytes | None:
        """One record's detail; None: gone; :data:`NOT_ASKED`: a dry run (counted instead)."""


def queries(sync: Sync, params: Mapping[str, str], since: str | None) -> list[dict[str, str]]:
    """One search per partition value (each status), in the declared static order."""
    name, values = sync.partition
    search = {**params, "Sort": sync.sort, **({"Since": since} if since is not None else {})}
    return [{**search, name: value} for value in values]


def pages_of(total: int) -> int:
    """Requests a paged read of ``total`` records takes at least (the first page always).

    >>> pages_of(0), pages_of(50), pages_of(51)
    (1, 1, 2)
    """
    return max(1, math.ceil(total / PAGE_SIZE))


def chunks(ids: Sequence[str], chunk: int) -> list[Sequence[str]]:
    """The id lists of the change feed's requests: ``chunk`` ids each, the last one short.

    >>> [len(c) for c in chunks([str(i) for i in range(350)], 100)]
    [100, 100, 100, 50]
    """
    return [ids[i : i + chunk] for i in range(0, len(ids), chunk)]


def too_many(exc: ApiError) -> bool:
    """A refusal that may mean "too many ids", read from the error's type and attributes (never
    its message): a 414, or a 400 ``bad_request``. The chunk is split once; a half refused again
    is raised.

    >>> from realtyframes.errors import BadRequestError
    >>> too_many(BadRequestError("Invalid", status=400, code="bad_request"))
    True
    """
    return exc.status == 414 or (exc.status == 400 and exc.code == "bad_request")


# -- the runner --------------------------------------------------------------------------------------


@dataclass
class SyncRun:
    """One run: the declared endpoint, its reader and options, and the requests it counts."""

    endpoint: Endpoint
    reader: Reader
    chunk: int
    on_invalid: OnInvalid
    counts: Counts = field(default_factory=Counts)

    @property
    def sync(self) -> Sync:
        assert self.endpoint.sync is not None
        return self.endpoint.sync

    def search(
        self, queries: list[dict[str, str]]
    ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, list[Paged]]:
        """The searches read, shaped and validated: (valid, invalid, media, what was found)."""
        found = self.reader.search(queries)
        self.counts.add("search", sum(f.requests for f in found),
                        sum(pages_of(f.total) for f in found))  # fmt: skip
        assert self.endpoint.shape is not None
        shaped = self.endpoint.shape([body for f in found for body in f.pages])
        valid, bad = validate(shaped.frame, self.endpoint.model, on_invalid=self.on_invalid)
        media = shaped.media if shaped.media is not None else shaped.frame.iloc[:0]
        return valid, bad, media, found

    def feed(self, ids: Sequence[str], since: str, kind: str) -> pd.DataFrame:
        """The change feed of ``ids`` since ``since`` (requests counted as ``kind``), validated:
        invalid records are quarantined with a warning."""
        feed = self.sync.feed
        fed = self.reader.feed(ids, since, self.chunk)
        self.counts.add(kind, fed.requests, fed.floor)
        self.counts.rejected += fed.rejected
        if not fed.pages:
            return empty_frame(feed.model)
        assert feed.shape is not None
        mode: OnInvalid = "raise" if self.on_invalid == "raise" else "quarantine"
        return validate(feed.shape(fed.pages).frame, feed.model, on_invalid=mode)[0]


def run_first(
    run: SyncRun,
    params: Mapping[str, str],
    previous: SyncResult | None,
    *,
    since: pd.Timestamp | None,
    backfill: bool,
) -> SyncResult:
    """A full load (every partition value) and, with ``backfill`` and no history kept yet,
    the change feed over every key since ``since`` or the oldest entry: the history. A refresh
    (``previous``) keeps its history and adds the feed since its change watermark to it."""
    sync = run.sync
    valid, bad, media, found = run.search(queries(sync, params, None))
    market = tidy(valid)
    now = wall_clock()
    state: dict[str, Any] = {
        "version": STATE_VERSION, "mode": "full", "chunk": run.chunk, "syncs": 1,
        "first_sync": now, "last_sync": now, **watermarks(market, bad, None, None),
        "data_time": iso(data_time_of(market, None)),
    }  # fmt: skip
    history = empty_frame(sync.feed.model)
    if previous is not None:  # refresh: the history so far stays
        history = previous.history
        state["syncs"] = previous.state.get("syncs", 0) + 1
        state["first_sync"] = previous.state.get("first_sync")
        if "history_since" in previous.state:
            state["history_since"] = previous.state["history_since"]
    result = SyncResult(market, media_of(media, market), bad.reset_index(drop=True), history,
                        state, run.counts)  # fmt: skip
    if previous is not None and len(history) and len(market):
        result.history = _since_kept(run, result, found, previous)
        return result
    oldest = market[sync.cursor[0]].min() if len(market) else None
    start = since if since is not None else None if pd.isna(oldest) else pd.Timestamp(oldest)
    if backfill and not len(history) and len(market) and start is not None:
        changes = run.feed(run.reader.keys(market, found), str(iso(start)), "backfill")
        state["history_since"] = iso(start)
        result.history = append_history(history, changes)
        logger.info("sync_listings: backfilled %d changes since %s in %d requests",
                    len(result.history), iso(start), run.counts.backfill)  # fmt: skip
    return result


def _since_kept(
    run: SyncRun, result: SyncResult, found: Sequence[Paged], previous: SyncResult
) -> pd.DataFrame:
    """A refresh's history: the one kept plus the change feed since the last sync's change
    watermark, over the reloaded keys not terminal then (a terminal record never changes again)."""
    since = previous.state.get("change_watermark") or result.state.get("history_since")
    if since is None:
        return previous.history
    old, sync = previous.market, run.sync
    terminal = set(old.loc[old[sync.status].astype("str") == sync.terminal, sync.key])
    ids = [k for k in run.reader.keys(result.market, found) if k not in terminal]
    if not ids:
        return previous.history
    changes = run.feed(ids, str(since), "feed")
    logger.info("sync_listings: refresh; %d changes since the last sync (%s) added to the history",
                len(changes), since)  # fmt: skip
    return append_history(previous.history, changes)


def run_later(run: SyncRun, previous: SyncResult, params: Mapping[str, str]) -> SyncResult:
    """An incremental sync from ``previous``: new records, the change feed applied, closings."""
    sync, counts = run.sync, run.counts
    state = dict(previous.state)
    state.pop("chunk_refused", None)  # what earlier releases learned: no longer kept
    searches = queries(sync, params, state.get("entry_watermark"))
    new_valid, new_bad, new_media, _ = run.search(searches)
    fresh = set(new_valid[sync.key]) | set(new_bad[sync.key].dropna())
    market = previous.market
    if fresh:  # the fresh copy of a record wins over a cached one
        market = market[~market[sync.key].isin(list(fresh))]
    market = concat([market, new_valid])

    changes = empty_frame(sync.feed.model)
    ids = _feed_ids(sync, previous.market, new_valid)
    if ids and state.get("change_watermark") is not None:
        changes = run.feed(ids, state["change_watermark"], "feed")
    market, touched, closing = sync.apply(market, changes)

    removed: list[str] = []
    if closing:
        bodies, removed, asked = run.reader.details(closing)
        counts.add("details", asked, len(closing))
        market = close_data(market, bodies, removed)
        touched = [i for i in touched if i not in set(removed)]

    data_time = latest(
        stamp(state.get("data_time")),
        data_time_of(new_valid, changes),
        max_stamp(market[sync.cursor[1]]),
    )
    open_pages = {q[sync.partition[0]]: q for q in queries(sync, params, None)}
    lower, upper = clock_window(new_valid, data_time)
    data_time = server_clock(run, market, lower, upper, open_pages)
    market = grow_days_on_market(market, data_time)
    quarantine = previous.quarantine
    if fresh and len(quarantine):
        quarantine = quarantine[~quarantine[sync.key].isin(list(fresh))]
    market, quarantine = _revalidate(run, market, concat([quarantine, new_bad]), touched)
    old_media = previous.media[~ids_in(previous.media[sync.key], [*fresh, *removed])]
    state.update(
        {
            "mode": "incremental", "chunk": run.chunk, "syncs": int(state.get("syncs", 0)) + 1,
            "last_sync": wall_clock(), "data_time": iso(data_time),
            **watermarks(market, quarantine, previous.state, changes),
        }
    )  # fmt: skip
    result = SyncResult(
        market,
        media_of(concat([old_media, new_media]), market),
        quarantine.reset_index(drop=True),
        append_history(previous.history, changes),
        state,
        counts,
    )
    new = new_valid[~ids_in(new_valid[sync.key], previous.market[sync.key])]
    result.changes = sync_changes(changes, new, removed, previous.market, market)
    return result


def server_clock(
    run: SyncRun,
    market: pd.DataFrame,
    lower: pd.Timestamp | None,
    upper: pd.Timestamp | None,
    pages: Mapping[str, Mapping[str, str]],
) -> pd.Timestamp | None:
    """The server's clock to the precision DaysOnMarket needs: ``lower``, raised by a binary
    search of details over the listings whose day turns inside ``[lower, upper)`` (at most
    ``log2(open listings) + 1`` requests, none when the listings read already say it). While more
    than :data:`_PAGE_ABOVE` turn inside it, a search page of the status most of them have
    (``pages``, each status once) narrows it first. A probe that cannot say or contradicts the
    others ends it at the lower bound known; a dry run counts the search (docs/sync.md)."""
    if lower is None:
        return None
    low, high = lower, upper
    read: set[str] = set()
    while True:
        turns = turning(market, low, high)
        if len(turns) <= _PAGE_ABOVE:
            break
        status = market.loc[market["ListingId"].isin(list(turns.index)), "StandardStatus"]
        status = status.astype("str")
        status = status[status.isin([s for s in pages if s not in read])]
        if not len(status):
            break
        most = str(status.value_counts().idxmax())
        read.add(most)
        run.counts.add("search", 1, clock=True)
        at, before = clock_window(run.reader.page({**pages[most], "Limit": str(PAGE_SIZE)}), low)
        high = before if high is None or before is None else min(high, before)
        if at is None or (high is not None and at >= high):
            return _contradicted(lower, most)
        low = at
    return _bisect(run, market, low, high, lower)


def _contradicted(lower: pd.Timestamp, what: str) -> pd.Timestamp:
    logger.warning("sync_listings: the server's DaysOnMarket of %s contradicts the others'; "
                   "DaysOnMarket is a lower bound this time", what)  # fmt: skip
    return lower


def _bisect(
    run: SyncRun, market: pd.DataFrame, low: pd.Timestamp, high: pd.Timestamp | None,
    lower: pd.Timestamp,
) -> pd.Timestamp:  # fmt: skip
    """:func:`server_clock`'s binary search of details over ``[low, high)``."""
    skip: set[str] = set()
    for _ in range(_MAX_PROBES):
        turns = turning(market, low, high)
        turns = turns[~turns.index.isin(list(skip))]
        if not len(turns):
            return low
        key = str(turns.index[len(turns) // 2])
        body = run.reader.detail(key)
        if body is NOT_ASKED:  # a dry run: a binary search over these (one more to start)
            run.counts.add("details", len(turns).bit_length() + (high is None), clock=True)
            break
        run.counts.add("details", 1, clock=True)
        if body is None:
            break
        found, _ = listings_from_records([body], detail=False)
        at, before = clock_window(found, low)
        if before is None:  # closed meanwhile: its days say nothing of the clock
            skip.add(key)
            continue
        high = before if high is None else min(high, before)
        if at is None or at >= high:
            return _contradicted(lower, key)
        low = at
    return low


def _revalidate(
    run: SyncRun, market: pd.DataFrame, quarantine: pd.DataFrame, touched: list[str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Rows the changes touched, validated again: invalid ones move to the quarantine."""
    key = run.sync.key
    if touched:
        rows = market.loc[market[key].isin(touched)]
        _, bad = validate(rows, run.endpoint.model, on_invalid=run.on_invalid)
        if len(bad):
            market = market[~market[key].isin(bad[key])]
            quarantine = concat([quarantine[~quarantine[key].isin(bad[key])], bad])
    return tidy(market), quarantine


def _feed_ids(sync: Sync, cached: pd.DataFrame, new: pd.DataFrame) -> list[str]:
    """The keys the change feed is asked about. The terminal status never changes again (a
    relisting gets a new ListingId), so a record terminal at the last sync is never polled again
    (``refresh=True`` reloads everything); a new record that changed since its entry is asked
    about once, terminal or not, so the changes before it reach the history."""
    still_open = cached[sync.status].astype("str") != sync.terminal
    entered, modified = sync.cursor
    changed_new = new[modified] > new[entered]
    ids = [*cached.loc[still_open, sync.key].tolist(), *new.loc[changed_new, sync.key]]
    return list(dict.fromkeys(ids))
