"""The two ways a sync reads the server: a full load (every status, plus the history backfill
of a first sync) and an incremental sync (new listings, the change feed, closings), each giving a
:class:`SyncResult` that :func:`realtyframes.loaders._sync.sync_listings` writes at once.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from realtyframes._changes import sync_changes
from realtyframes.api import ApiClient
from realtyframes.cache import Checkpoint
from realtyframes.loaders._base import ids_in
from realtyframes.loaders._paging import PAGE_SIZE, fetch_pages, fetch_pages_many
from realtyframes.loaders._sync_apply import (
    append_history,
    apply_changes,
    close_listings,
    concat,
    data_time_of,
    grow_days_on_market,
    iso,
    latest,
    max_stamp,
    media_of,
    stamp,
    tidy,
    wall_clock,
    watermarks,
)
from realtyframes.loaders._sync_feed import Counts, feed_pages
from realtyframes.loaders.endpoints import ENDPOINTS
from realtyframes.schemas import (
    STANDARD_STATUSES,
    Listing,
    ListingChange,
    OnInvalid,
    changes_from_pages,
    empty_frame,
    listings_from_pages,
    validate,
)

__all__ = [
    "STATE_VERSION",
    "STATUSES",
    "SyncResult",
    "backfill",
    "first_page",
    "full_load",
    "incremental",
]

logger = logging.getLogger("realtyframes.sync")

#: Version of the sync state kept in the entry's metadata; another version means a full load.
STATE_VERSION = 1
#: The terminal status: a listing in it leaves the change-feed polling set (docs/sync.md).
TERMINAL = "Closed"
#: Statuses a market holds, each loaded by its own search.
STATUSES: tuple[str, ...] = STANDARD_STATUSES

_LISTINGS = ENDPOINTS["listings"].path
_SORT = "-listdate"  # a static order: price changes during paging do not reshuffle pages


@dataclass
class SyncResult:
    market: pd.DataFrame
    media: pd.DataFrame
    quarantine: pd.DataFrame
    history: pd.DataFrame
    state: dict[str, Any]
    counts: Counts = field(default_factory=Counts)
    changes: pd.DataFrame | None = None  # what an incremental sync changed (None: a full load)


# -- full load ---------------------------------------------------------------------------------------


def first_page(params: Mapping[str, str]) -> tuple[str, dict[str, str]]:
    """The path and query of a full load's first request (the first page of its first status)."""
    query = {**params, "Status": STATUSES[0], "Sort": _SORT, "Offset": "0", "Limit": str(PAGE_SIZE)}
    return _LISTINGS, query


def full_load(
    api: ApiClient,
    params: Mapping[str, str],
    *,
    chunk: int,
    progress: bool | None,
    on_invalid: OnInvalid,
    checkpoint: Checkpoint | None = None,
) -> SyncResult:
    """Every status of the scope, one paged search each (pages a ``checkpoint`` holds are taken
    from it)."""
    counts = Counts()
    pages: list[bytes] = []
    for status in STATUSES:
        paged = fetch_pages(
            api,
            _LISTINGS,
            {**params, "Status": status, "Sort": _SORT},
            item_key="listings",
            progress=progress,
            desc=f"market: {status}",
            checkpoint=checkpoint,
        )
        pages += paged.pages
        counts.search += paged.requests
        counts.floor += max(1, math.ceil(paged.total / PAGE_SIZE))
    listings, media = listings_from_pages(pages)
    market, quarantine = validate(listings, Listing, on_invalid=on_invalid)
    market = tidy(market)
    media = media_of(media, market)
    now = wall_clock()
    state = {
        "version": STATE_VERSION,
        "mode": "full",
        "chunk": chunk,
        "syncs": 1,
        "first_sync": now,
        "last_sync": now,
        **watermarks(market, quarantine, None, None),
    }
    data_time = data_time_of(market, None)
    state["data_time"] = iso(data_time)
    return SyncResult(
        market, media, quarantine.reset_index(drop=True), empty_frame(ListingChange), state, counts
    )


def backfill(
    api: ApiClient,
    result: SyncResult,
    since: pd.Timestamp | None,
    *,
    progress: bool | None,
    on_invalid: OnInvalid,
    checkpoint: Checkpoint | None = None,
) -> None:
    """The history of a first sync: the change feed over every id of the market, since
    ``since`` or the oldest OriginalEntryTimestamp in it. Counted as ``backfill`` requests.
    A resumed backfill asks for the same chunks (of ``state["chunk"]`` ids), which its
    ``checkpoint`` holds."""
    market = result.market
    if not len(market):
        return
    oldest = market["OriginalEntryTimestamp"].min()
    start = since if since is not None else None if pd.isna(oldest) else pd.Timestamp(oldest)
    if start is None:
        return
    local = Counts()
    pages = feed_pages(
        api,
        market["ListingId"].tolist(),
        str(iso(start)),
        int(result.state["chunk"]),
        local,
        progress,
        checkpoint=checkpoint,
    )
    result.counts.backfill += local.feed
    result.counts.rejected += local.rejected
    result.counts.floor += local.floor
    result.state["history_since"] = iso(start)
    changes = _feed_changes(pages, on_invalid)
    result.history = append_history(result.history, changes)
    logger.info(
        "sync_listings: backfilled %d changes since %s in %d requests",
        len(result.history),
        iso(start),
        local.feed,
    )


def _feed_changes(pages: list[bytes], on_invalid: OnInvalid) -> pd.DataFrame:
    """The feed's records, validated (invalid records are quarantined with a warning)."""
    if not pages:
        return empty_frame(ListingChange)
    changes, _ = validate(
        changes_from_pages(pages),
        ListingChange,
        on_invalid="raise" if on_invalid == "raise" else "quarantine",
    )
    return changes


# -- incremental sync --------------------------------------------------------------------------------


def incremental(
    api: ApiClient,
    previous: SyncResult,
    params: Mapping[str, str],
    *,
    chunk: int,
    progress: bool | None,
    on_invalid: OnInvalid,
) -> SyncResult:
    counts = Counts()
    state = dict(previous.state)
    state.pop("chunk_refused", None)  # what earlier releases learned: no longer kept
    market = previous.market
    entry_since = state.get("entry_watermark")
    change_since = state.get("change_watermark")

    # 1. new listings of every status (a new listing may already be Pending or Closed)
    new_valid, new_bad, new_media = _new_listings(
        api, params, entry_since, counts, progress=progress, on_invalid=on_invalid
    )
    fresh_ids = set(new_valid["ListingId"]) | set(new_bad["ListingId"].dropna())
    if fresh_ids:  # the fresh copy of a listing wins over a cached one
        market = market[~market["ListingId"].isin(list(fresh_ids))]
    market = concat([market, new_valid])

    # 2. the change feed over the open listings (Closed is terminal: see _feed_ids)
    feed_ids = _feed_ids(previous.market, new_valid)
    changes = empty_frame(ListingChange)
    if feed_ids and change_since is not None:
        pages = feed_pages(api, feed_ids, change_since, chunk, counts, progress)
        changes = _feed_changes(pages, on_invalid)
    market, touched, closing = apply_changes(market, changes)

    # 3. close data of the listings that closed, from their detail
    removed: list[str] = []
    if closing:
        market, removed = close_listings(api, market, closing, counts)
        if removed:
            touched = [i for i in touched if i not in set(removed)]

    # DaysOnMarket of listings not closed: from the newest server data time known
    data_time = latest(
        stamp(state.get("data_time")),
        data_time_of(new_valid, changes),
        max_stamp(market["ModificationTimestamp"]),
    )
    market = grow_days_on_market(market, data_time)

    # rows this sync changed are validated again; invalid ones move to the quarantine
    quarantine = previous.quarantine
    if fresh_ids and len(quarantine):
        quarantine = quarantine[~quarantine["ListingId"].isin(list(fresh_ids))]
    market, quarantine = _revalidate(market, concat([quarantine, new_bad]), touched, on_invalid)
    media = concat(
        [previous.media[~ids_in(previous.media["ListingId"], [*fresh_ids, *removed])], new_media]
    )
    media = media_of(media, market)
    history = append_history(previous.history, changes)

    state.update(
        {
            "mode": "incremental",
            "chunk": chunk,
            "syncs": int(state.get("syncs", 0)) + 1,
            "last_sync": wall_clock(),
            "data_time": iso(data_time),
            **watermarks(market, quarantine, previous.state, changes),
        }
    )
    result = SyncResult(market, media, quarantine.reset_index(drop=True), history, state, counts)
    known = previous.market["ListingId"]
    result.changes = sync_changes(
        changes, new_valid[~ids_in(new_valid["ListingId"], known)], removed, previous.market, market
    )
    return result


def _new_listings(
    api: ApiClient,
    params: Mapping[str, str],
    entry_since: str | None,
    counts: Counts,
    *,
    progress: bool | None,
    on_invalid: OnInvalid,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Listings entered since ``entry_since``, one search per status: (valid, invalid, media)."""
    search = {**params, "Sort": _SORT}
    if entry_since is not None:
        search["Since"] = entry_since
    queries = [{**search, "Status": s} for s in STATUSES]
    paged = fetch_pages_many(api, _LISTINGS, queries, item_key="listings", progress=progress)
    counts.search += sum(p.requests for p in paged)
    counts.floor += sum(max(1, math.ceil(p.total / PAGE_SIZE)) for p in paged)
    rows, media = listings_from_pages([body for p in paged for body in p.pages])
    valid, bad = validate(rows, Listing, on_invalid=on_invalid)
    return valid, bad, media


def _revalidate(
    market: pd.DataFrame, quarantine: pd.DataFrame, touched: list[str], on_invalid: OnInvalid
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Rows the changes touched, validated again: invalid ones move to the quarantine."""
    if touched:
        _, bad = validate(
            market.loc[market["ListingId"].isin(touched)], Listing, on_invalid=on_invalid
        )
        if len(bad):
            market = market[~market["ListingId"].isin(bad["ListingId"])]
            quarantine = concat([quarantine[~quarantine["ListingId"].isin(bad["ListingId"])], bad])
    return tidy(market), quarantine


def _feed_ids(cached: pd.DataFrame, new: pd.DataFrame) -> list[str]:
    """The ids the change feed is asked about. Closed is terminal (a relisting gets a new
    ListingId), so a listing closed at the last sync is never polled again (``refresh=True``
    reloads everything); a new listing that changed since its entry is asked about once, closed
    or not, so the changes before its closing reach the history."""
    still_open = cached["StandardStatus"].astype("str") != TERMINAL
    changed_new = new["ModificationTimestamp"] > new["OriginalEntryTimestamp"]
    ids = [*cached.loc[still_open, "ListingId"].tolist(), *new.loc[changed_new, "ListingId"]]
    return list(dict.fromkeys(ids))
