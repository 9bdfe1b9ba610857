"""Incremental market sync: the whole market of a scope kept current with the fewest requests.

``sync_listings(client, scope)`` keeps one cache entry per scope and account (resource
``market``): the market frame (one row per ListingId, every status), its ``media``, its
``quarantine`` and the **history** of every change seen (an extra frame, ``market.history``), with
the sync state in the entry's metadata (member ``sync``). The first sync loads each status once;
later syncs ask only for what moved:

1. new listings: one paged search per status with ``Since`` = the newest OriginalEntryTimestamp
   already cached (the server's data time, never the local clock);
2. the change feed over the known ids (ids in chunks as large as the server accepts: a 400 or 414
   halves the chunk, which is remembered), ``Since`` = the newest ModificationTimestamp /
   ChangeTimestamp already known; the changes are applied to the cached rows in order;
3. a detail request for each listing that closed (ClosePrice, CloseDate and the final
   DaysOnMarket are not in the feed), concurrently;
4. the changes are appended to the history (deduplicated on ListingId, ChangeType,
   ChangeTimestamp), and the whole entry is written at once (atomic).

Requests of a later sync (the floor of this API; see ``docs/sync.md``)::

    sum over id chunks of max(1, ceil(changes in chunk / 50))      # = ceil(ids / chunk) usually
    + sum over the 4 statuses of max(1, ceil(new listings of that status / 50))
    + listings that closed

>>> market = client.sync_listings(City="Miami")  # doctest: +SKIP
>>> history = listing_history(client, {"City": "Miami"})  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar

import numpy as np
import pandas as pd

from realtyframes._spec import LISTING_DEFAULTS
from realtyframes.api import ApiClient, validate_listing_search
from realtyframes.api._params import refuse_none
from realtyframes.cache import ParquetCache
from realtyframes.errors import ApiError, NotFoundError, QueryError
from realtyframes.loaders._base import LoadInfo, ids_in, parquet_safe
from realtyframes.loaders._checks import check_count, check_flag
from realtyframes.loaders._paging import (
    PAGE_SIZE,
    fetch_pages,
    fetch_pages_many,
    progress_enabled,
)
from realtyframes.loaders.endpoints import ENDPOINTS, MARKET
from realtyframes.schemas import (
    SCHEMA_VERSION,
    STANDARD_STATUSES,
    Listing,
    ListingChange,
    OnInvalid,
    changes_from_pages,
    empty_frame,
    listings_from_pages,
    listings_from_records,
    target_dtypes,
    validate,
)

__all__ = [
    "DEFAULT_CHUNK",
    "HISTORY_COLUMNS",
    "RESOURCE",
    "listing_history",
    "sync_listings",
    "sync_scope",
    "sync_state",
]

logger = logging.getLogger("realtyframes.sync")

#: Cache resource of the synced markets (``<cache_dir>/market/<key>.parquet``).
RESOURCE = MARKET
#: Operation name in the cache key and metadata.
OPERATION = "sync_listings"
#: ListingIds per change-feed request to start with (the sandbox's maximum).
DEFAULT_CHUNK = 100
#: Version of the sync state kept in the entry's metadata; another version means a full load.
STATE_VERSION = 1
#: Columns of the history frame (the change feed's records).
HISTORY_COLUMNS: tuple[str, ...] = tuple(target_dtypes(ListingChange))
#: Statuses a market holds, each loaded by its own search.
STATUSES: tuple[str, ...] = STANDARD_STATUSES

_LISTINGS = ENDPOINTS["listings"].path
_CHANGES = ENDPOINTS["listing_changes"].path
_DETAIL = ENDPOINTS["listing"]
_SORT = "-listdate"  # a static order: price changes during paging do not reshuffle pages
_HISTORY_KEY = ["ListingId", "ChangeType", "ChangeTimestamp"]
_DAY = pd.Timedelta(days=1)
_OTHER_FEED_PARAM = re.compile(r"\b(Since|ChangeType|Offset|Limit)\b")
_MOVING = "moves as prices change and days pass, which the change feed does not report"
_REFUSED: dict[str, str] = {
    "Status": "the market keeps every status (Active, Active Under Contract, Pending, Closed); "
    "filter the returned frame instead, e.g. market[market.StandardStatus == 'Active']",
    "Since": "the sync sets Since itself, from the server's own timestamps",
    "Offset": "the sync pages by itself",
    "Limit": "the sync pages by itself",
    "Sort": "the sync chooses the order it pages in",
    "MinListPrice": f"membership {_MOVING}; filter the returned frame instead",
    "MaxListPrice": f"membership {_MOVING}; filter the returned frame instead",
    "MaxDaysOnMarket": f"membership {_MOVING}; filter the returned frame instead",
}


T = TypeVar("T")
R = TypeVar("R")


class _ClientLike(Protocol):
    _api: ApiClient
    _cache: ParquetCache | None
    _settings: Any


# -- scope and keys ----------------------------------------------------------------------------------


def sync_scope(scope: Mapping[str, Any]) -> dict[str, str]:
    """Validate a market scope (listing search filters) and normalise it to query strings.

    Raises :class:`~realtyframes.errors.QueryError` before any request for unknown names, bad
    values, and the parameters the sync manages itself or cannot follow incrementally (Status,
    Since, Offset, Limit, Sort, MinListPrice, MaxListPrice, MaxDaysOnMarket). PropertyType gets
    the service's default (Residential), so ``{}`` and ``{"PropertyType": "Residential"}`` are
    the same market.

    >>> sync_scope({"City": "Miami", "Pool": True})
    {'City': 'Miami', 'Pool': 'true', 'PropertyType': 'Residential'}
    """
    if not isinstance(scope, Mapping):
        raise QueryError(
            "scope", f"expected a mapping of filters, got {type(scope).__name__}", "filters"
        )
    for name in scope:
        if name in _REFUSED:
            allowed = "listing search filters other than " + ", ".join(_REFUSED)
            raise QueryError(name, f"not allowed in a sync scope: {_REFUSED[name]}", allowed)
    refuse_none(scope)
    params = validate_listing_search(scope)
    params.setdefault("PropertyType", LISTING_DEFAULTS["PropertyType"])
    return params


def _key(client: _ClientLike, cache: ParquetCache, params: Mapping[str, str]) -> str:
    api = client._api
    return cache.key(
        host=api.cache_host(), operation=OPERATION, params=params, account=api.fingerprint
    )


# -- the sync state ----------------------------------------------------------------------------------


def _iso(value: pd.Timestamp | datetime | None) -> str | None:
    if value is None or pd.isna(value):
        return None
    return pd.Timestamp(value).tz_convert(UTC).isoformat().replace("+00:00", "Z")


def _stamp(value: str | None) -> pd.Timestamp | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"expected an ISO 8601 string, got {value!r}")
    stamp = pd.Timestamp(value)
    if stamp is pd.NaT or stamp.tzinfo is None:
        raise ValueError(f"{value!r} is not a UTC timestamp")
    return stamp.tz_convert(UTC).as_unit("us")


def _latest(*values: pd.Timestamp | None) -> pd.Timestamp | None:
    known = [v for v in values if v is not None and not pd.isna(v)]
    return max(known) if known else None


@dataclass
class _Counts:
    """Requests of one sync, by kind."""

    search: int = 0
    feed: int = 0
    details: int = 0
    rejected: int = 0  # change-feed requests refused for too many ids (before halving)
    floor: int = 0  # what the sync had to ask for: the formula of docs/sync.md

    def add(self, other: _Counts) -> None:
        self.search += other.search
        self.feed += other.feed
        self.details += other.details
        self.rejected += other.rejected
        self.floor += other.floor

    def as_dict(self) -> dict[str, int]:
        total = self.search + self.feed + self.details + self.rejected
        return {
            "search": self.search,
            "feed": self.feed,
            "details": self.details,
            "rejected": self.rejected,
            "total": total,
            "floor": self.floor,
        }


@dataclass
class _Result:
    market: pd.DataFrame
    media: pd.DataFrame
    quarantine: pd.DataFrame
    history: pd.DataFrame
    state: dict[str, Any]
    counts: _Counts = field(default_factory=_Counts)


# -- public calls ------------------------------------------------------------------------------------


def sync_listings(
    client: _ClientLike,
    scope: Mapping[str, Any],
    *,
    chunk_size: int | None = None,
    refresh: bool = False,
    progress: bool | None = None,
) -> pd.DataFrame:
    """The whole market of ``scope`` (every status), kept current incrementally in the cache.

    ``scope``: listing search filters (``City=``, ``PostalCode=``, ``PropertyType=``,
    ``Subtypes=``, feature flags ...), validated before any request; see :func:`sync_scope` for
    the ones refused. ``chunk_size``: ListingIds per change-feed request to start with (default:
    the size the last sync found the server accepts, else 100). ``refresh=True`` reloads the
    market in full (the history is kept). Returns one row per ListingId, sorted by ListingId;
    the change history is :func:`listing_history`. Without a cache (``Client(cache=False)``)
    every call is a full load and no history is kept.

    >>> market = sync_listings(client, {"City": "Miami"})  # doctest: +SKIP
    >>> market.StandardStatus.value_counts()  # doctest: +SKIP
    """
    params = sync_scope(scope)
    check_flag("refresh", refresh)
    chunk_size = check_count("chunk_size", chunk_size)
    api = client._api
    cache = client._cache
    if progress is None:
        progress = getattr(client._settings, "progress", None)
    on_invalid: OnInvalid = getattr(client._settings, "on_invalid", "quarantine")
    key = _key(client, cache, params) if cache is not None else None
    previous = None
    if cache is not None and key is not None:
        entry = cache.read(RESOURCE, key)
        if entry is not None:
            previous = _usable(entry.frame, entry.extra, entry.meta)
    if previous is None or refresh:
        chunk = chunk_size or (previous.state["chunk"] if previous else DEFAULT_CHUNK)
        result = _full_load(api, params, chunk=chunk, progress=progress, on_invalid=on_invalid)
        if previous is not None:  # refresh: the history so far stays
            result.history = previous.history
            result.state["syncs"] = previous.state.get("syncs", 0) + 1
            result.state["first_sync"] = previous.state.get("first_sync")
    else:
        chunk = chunk_size or int(previous.state["chunk"])
        result = _incremental(
            api, previous, params, chunk=chunk, progress=progress, on_invalid=on_invalid
        )
    result.state["last_requests"] = result.counts.as_dict()
    logger.info(
        "sync_listings %s: %d listings, %d requests (%s)",
        params,
        len(result.market),
        result.counts.as_dict()["total"],
        result.state["mode"],
    )
    result.quarantine = parquet_safe(result.quarantine)
    if cache is not None and key is not None:
        meta = {
            "host": api.cache_host(),
            "operation": OPERATION,
            "params": params,
            "account": api.fingerprint,
            "schema_version": SCHEMA_VERSION,
            "sync": result.state,
        }
        cache.write(
            RESOURCE,
            key,
            result.market,
            meta,
            extra_frames={
                "media": result.media,
                "quarantine": result.quarantine,
                "history": result.history,
            },
        )
    record = getattr(client, "_record", None)
    if callable(record):  # client.last_load: requests, quarantine and media of this sync
        record(
            LoadInfo(
                resource=RESOURCE,
                rows=len(result.market),
                quarantined=len(result.quarantine),
                requests=result.counts.as_dict()["total"],
                from_cache=False,
                fetched_at=datetime.now(UTC),
                quarantine=result.quarantine,
                media=result.media,
                key=key,
            )
        )
    return result.market.copy()


def listing_history(client: _ClientLike, scope: Mapping[str, Any]) -> pd.DataFrame:
    """Every change the syncs of ``scope`` saw: one row per (ListingId, ChangeType, ChangeTimestamp).

    Columns: ListingId, ChangeType, ChangeTimestamp, PreviousListPrice, ListPrice (price
    changes), PreviousStatus, StandardStatus (status changes); sorted by ChangeTimestamp. Read
    from the cache, no request; empty before the second sync (the first sync records the state,
    the changes after it are history).

    >>> drops = listing_history(client, {"City": "Miami"}).query("ListPrice < PreviousListPrice")  # doctest: +SKIP
    """
    params = sync_scope(scope)
    cache = client._cache
    if cache is None:
        return empty_frame(ListingChange)
    entry = cache.read(RESOURCE, _key(client, cache, params))
    if entry is None or "history" not in entry.extra:
        return empty_frame(ListingChange)
    return entry.extra["history"]


def sync_state(client: _ClientLike, scope: Mapping[str, Any]) -> dict[str, Any] | None:
    """The sync state of ``scope`` (watermarks, chunk size, syncs, last sync's requests), or None.

    >>> sync_state(client, {"City": "Miami"})["last_requests"]  # doctest: +SKIP
    {'search': 4, 'feed': 3, 'details': 1, 'rejected': 0, 'total': 8, 'floor': 8}
    """
    params = sync_scope(scope)
    cache = client._cache
    if cache is None:
        return None
    entry = cache.read(RESOURCE, _key(client, cache, params))
    if entry is None or not isinstance(entry.meta.get("sync"), dict):
        return None
    return dict(entry.meta["sync"])


# -- reading a previous sync -------------------------------------------------------------------------


def _usable(
    frame: pd.DataFrame, extra: Mapping[str, pd.DataFrame], meta: Mapping[str, Any]
) -> _Result | None:
    """The cached market as a starting point, or None (another layout: do a full load)."""
    state = meta.get("sync")
    if (
        not isinstance(state, dict)
        or state.get("version") != STATE_VERSION
        or meta.get("schema_version") != SCHEMA_VERSION
        or not isinstance(state.get("chunk"), int)
        or state["chunk"] < 1
    ):
        logger.info("sync_listings: cached market has another layout; loading it in full")
        return None
    try:
        for name in ("entry_watermark", "change_watermark", "data_time"):
            _stamp(state.get(name))
    except (TypeError, ValueError):
        logger.info("sync_listings: cached sync state is not readable; loading it in full")
        return None
    needed = ("ListingId", "OriginalEntryTimestamp", "ModificationTimestamp", "StandardStatus")
    if any(name not in frame.columns for name in needed):
        return None
    history = extra.get("history")
    if history is None:
        history = empty_frame(ListingChange)
    media = extra.get("media")
    quarantine = extra.get("quarantine")
    return _Result(
        market=frame,
        media=media if media is not None else _empty_media(),
        quarantine=quarantine if quarantine is not None else frame.iloc[:0],
        history=history,
        state=dict(state),
    )


def _empty_media() -> pd.DataFrame:
    _, media = listings_from_pages([])
    return media


# -- full load ---------------------------------------------------------------------------------------


def _full_load(
    api: ApiClient,
    params: Mapping[str, str],
    *,
    chunk: int,
    progress: bool | None,
    on_invalid: OnInvalid,
) -> _Result:
    counts = _Counts()
    pages: list[bytes] = []
    for status in STATUSES:
        paged = fetch_pages(
            api,
            _LISTINGS,
            {**params, "Status": status, "Sort": _SORT},
            item_key="listings",
            progress=progress,
            desc=f"market: {status}",
        )
        pages += paged.pages
        counts.search += paged.requests
        counts.floor += max(1, math.ceil(paged.total / PAGE_SIZE))
    listings, media = listings_from_pages(pages)
    market, quarantine = validate(listings, Listing, on_invalid=on_invalid)
    market = _tidy(market)
    media = _media_of(media, market)
    now = _wall_clock()
    state = {
        "version": STATE_VERSION,
        "mode": "full",
        "chunk": int(chunk),
        "syncs": 1,
        "first_sync": now,
        "last_sync": now,
        **_watermarks(market, quarantine, None, None),
    }
    data_time = _data_time(market, None)
    state["data_time"] = _iso(data_time)
    return _Result(
        market, media, quarantine.reset_index(drop=True), empty_frame(ListingChange), state, counts
    )


# -- incremental sync --------------------------------------------------------------------------------


def _incremental(
    api: ApiClient,
    previous: _Result,
    params: Mapping[str, str],
    *,
    chunk: int,
    progress: bool | None,
    on_invalid: OnInvalid,
) -> _Result:
    counts = _Counts()
    state = dict(previous.state)
    market = previous.market
    entry_since = state.get("entry_watermark")
    change_since = state.get("change_watermark")

    # 1. new listings of every status (a new listing may already be Pending or Closed)
    search = {**params, "Sort": _SORT}
    if entry_since is not None:
        search["Since"] = entry_since
    queries = [{**search, "Status": s} for s in STATUSES]
    paged = fetch_pages_many(api, _LISTINGS, queries, item_key="listings", progress=progress)
    pages = [body for p in paged for body in p.pages]
    counts.search += sum(p.requests for p in paged)
    counts.floor += sum(max(1, math.ceil(p.total / PAGE_SIZE)) for p in paged)
    new_rows, new_media = listings_from_pages(pages)
    new_valid, new_bad = validate(new_rows, Listing, on_invalid=on_invalid)
    fresh_ids = set(new_valid["ListingId"]) | set(new_bad["ListingId"].dropna())
    if fresh_ids:  # the fresh copy of a listing wins over a cached one
        market = market[~market["ListingId"].isin(list(fresh_ids))]
    market = _concat([market, new_valid])

    # 2. the change feed over the known ids
    changed_new = new_valid["ModificationTimestamp"] > new_valid["OriginalEntryTimestamp"]
    feed_ids = list(
        dict.fromkeys(
            [*previous.market["ListingId"].tolist(), *new_valid.loc[changed_new, "ListingId"]]
        )
    )
    changes = empty_frame(ListingChange)
    if feed_ids and change_since is not None:
        feed_pages, chunk = _feed(api, feed_ids, change_since, chunk, counts, progress)
        if feed_pages:
            changes, _ = validate(
                changes_from_pages(feed_pages),
                ListingChange,
                on_invalid="raise" if on_invalid == "raise" else "quarantine",
            )
    market, touched, closing = _apply(market, changes)

    # 3. close data of the listings that closed, from their detail
    removed: list[str] = []
    if closing:
        market, removed = _close(api, market, closing, counts)
        if removed:
            touched = [i for i in touched if i not in set(removed)]

    # DaysOnMarket of listings not closed: from the newest server data time known
    data_time = _latest(
        _stamp(state.get("data_time")),
        _data_time(new_valid, changes),
        _max(market["ModificationTimestamp"]),
    )
    market = _days_on_market(market, data_time)

    # rows this sync changed are validated again; invalid ones move to the quarantine
    quarantine = previous.quarantine
    if fresh_ids and len(quarantine):
        quarantine = quarantine[~quarantine["ListingId"].isin(list(fresh_ids))]
    quarantine = _concat([quarantine, new_bad])
    if touched:
        mask = market["ListingId"].isin(touched)
        _, bad = validate(market.loc[mask], Listing, on_invalid=on_invalid)
        if len(bad):
            market = market[~market["ListingId"].isin(bad["ListingId"])]
            quarantine = _concat([quarantine[~quarantine["ListingId"].isin(bad["ListingId"])], bad])
    market = _tidy(market)
    media = _concat(
        [previous.media[~ids_in(previous.media["ListingId"], [*fresh_ids, *removed])], new_media]
    )
    media = _media_of(media, market)
    history = _append_history(previous.history, changes)

    state.update(
        {
            "mode": "incremental",
            "chunk": int(chunk),
            "syncs": int(state.get("syncs", 0)) + 1,
            "last_sync": _wall_clock(),
            "data_time": _iso(data_time),
            **_watermarks(market, quarantine, previous.state, changes),
        }
    )
    return _Result(market, media, quarantine.reset_index(drop=True), history, state, counts)


def _in_threads(
    api: ApiClient,
    work: Callable[[ApiClient, T], R],
    items: Sequence[T],
    on_done: Callable[[], None] | None = None,
) -> list[R]:
    """``work(client, item)`` for each item in threads, results in order. The threads share the
    client's concurrency (each gets ``max_concurrency // threads`` for its own paging); the
    first failure cancels what has not started and is raised."""
    workers = max(1, min(len(items), api.max_concurrency))
    inner = api.with_options(max_concurrency=max(1, api.max_concurrency // workers))
    if workers <= 1:
        results = []
        for item in items:
            results.append(work(inner, item))
            if on_done is not None:
                on_done()
        return results
    pool = ThreadPoolExecutor(workers, thread_name_prefix="realtyframes-sync")
    try:
        futures = [pool.submit(work, inner, item) for item in items]
        for future in as_completed(futures):
            future.result()  # raises the first failure
            if on_done is not None:
                on_done()
        return [future.result() for future in futures]
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _too_many(exc: ApiError) -> bool:
    """A refusal that may mean "too many ids": a 414, or a 400 that does not blame another
    parameter of the feed (a bad ``Since`` is raised at once instead of halving down to 1)."""
    if exc.status == 414:
        return True
    if exc.status != 400:
        return False
    text = exc.message or ""
    return "ListingIds" in text or not _OTHER_FEED_PARAM.search(text)


def _feed(
    api: ApiClient,
    ids: Sequence[str],
    since: str,
    chunk: int,
    counts: _Counts,
    progress: bool | None,
) -> tuple[list[bytes], int]:
    """Change-feed pages of ``ids`` (chunked, each chunk paged); returns them and the chunk size.

    The first chunk probes the size: a 400 or 414 halves it and retries until the server accepts
    one (a refused chunk of one id is a real error: raised). The other chunks then go
    concurrently; one refused among them (a longer URL) is split in halves.
    """

    def attempt(
        client: ApiClient, part: Sequence[str], *, split: bool
    ) -> tuple[list[bytes], int, _Counts]:
        local = _Counts()
        try:
            got = fetch_pages(
                client,
                _CHANGES,
                {"Since": since, "ListingIds": ",".join(part)},
                item_key="changes",
                progress=False,
            )
        except ApiError as exc:
            if not _too_many(exc) or len(part) == 1:
                raise
            if not split:
                raise _Refused(exc.status) from None
            local.rejected += 1
            logger.info("change feed refused %d ids (%s); splitting them", len(part), exc.status)
            half = len(part) // 2
            pages: list[bytes] = []
            accepted = len(part)
            for piece in (part[:half], part[half:]):
                piece_pages, piece_size, piece_counts = attempt(client, piece, split=True)
                pages += piece_pages
                accepted = min(accepted, piece_size)
                local.add(piece_counts)
            return pages, accepted, local
        local.feed += got.requests
        local.floor += max(1, math.ceil(got.total / PAGE_SIZE))
        return got.pages, len(part), local

    # the first chunk alone finds the size the server accepts, for every chunk
    size = min(chunk, len(ids))
    while True:
        try:
            pages, accepted, local = attempt(api, ids[:size], split=False)
            break
        except _Refused as refused:
            counts.rejected += 1
            logger.info("change feed refused %d ids (%s); halving the chunk", size, refused.status)
            size = max(1, size // 2)
            chunk = size
    counts.add(local)
    rest = [ids[i : i + size] for i in range(size, len(ids), size)]
    if not rest:
        return pages, chunk
    bar = _bar(progress, len(rest) + 1, "market: changes")
    try:
        results = _in_threads(
            api,
            lambda client, part: attempt(client, part, split=True),
            rest,
            on_done=None if bar is None else lambda: bar.update(1),
        )
    finally:
        if bar is not None:
            bar.close()
    for part_pages, part_accepted, part_counts in results:
        pages += part_pages
        accepted = min(accepted, part_accepted)
        counts.add(part_counts)
    if any(c.rejected for _, _, c in results):
        chunk = min(chunk, accepted)
    return pages, chunk


class _Refused(Exception):
    """The first chunk was refused for too many ids (the caller halves every chunk)."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def _bar(progress: bool | None, total: int, desc: str) -> Any:
    if total <= 1 or not progress_enabled(progress):
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="chunk", leave=False)


# -- applying changes --------------------------------------------------------------------------------


def _apply(
    market: pd.DataFrame, changes: pd.DataFrame
) -> tuple[pd.DataFrame, list[str], list[str]]:
    """Apply the feed's changes to the rows, in order; returns (market, touched ids, closing ids).

    A change is applied only when it is newer than the row's MajorChangeTimestamp (else the row,
    fetched after it, already shows it), so applying a change twice changes nothing.
    """
    if not len(changes) or not len(market):
        return market, [], []
    market = market.reset_index(drop=True).copy()
    changes = changes.sort_values(
        ["ChangeTimestamp", "ListingId", "ChangeType"], kind="stable"
    ).reset_index(drop=True)
    rows = pd.Index(market["ListingId"]).get_indexer(changes["ListingId"])
    known = rows >= 0
    base = market["MajorChangeTimestamp"].fillna(market["ModificationTimestamp"])
    base_at = pd.Series(pd.NaT, index=changes.index, dtype=base.dtype)
    base_at[known] = base.to_numpy()[rows[known]]
    newer = known & (base_at.isna() | (changes["ChangeTimestamp"] > base_at)).to_numpy()
    todo = changes[newer].assign(_row=rows[newer])
    if not len(todo):
        return market, [], []
    col = market.columns.get_loc
    prices = todo[todo["ChangeType"] == "price_change"].drop_duplicates("_row", keep="last")
    if len(prices):
        at = prices["_row"].to_numpy()
        market.iloc[at, col("ListPrice")] = prices["ListPrice"].to_numpy(dtype="float64")
        market.iloc[at, col("PreviousListPrice")] = prices["PreviousListPrice"].to_numpy(
            dtype="float64"
        )
    statuses = todo[todo["ChangeType"] == "status_change"].drop_duplicates("_row", keep="last")
    closing: list[str] = []
    if len(statuses):
        at = statuses["_row"].to_numpy()
        was_closed = (market["StandardStatus"] == "Closed").to_numpy()[at]
        new_status = statuses["StandardStatus"].astype(object).to_numpy()
        market.iloc[at, col("StandardStatus")] = new_status
        now_closed = new_status == "Closed"
        reopened = at[~now_closed]  # close data belongs to Closed listings only
        market.iloc[reopened, col("ClosePrice")] = np.nan
        market.iloc[reopened, col("CloseDate")] = pd.NaT
        close_rows = at[now_closed & ~was_closed]
        missing = at[now_closed & was_closed]
        missing = missing[market["ClosePrice"].isna().to_numpy()[missing]]
        closing = market["ListingId"].iloc[np.concatenate([close_rows, missing])].tolist()
    last = todo.groupby("_row", sort=False)["ChangeTimestamp"].max()
    at = last.index.to_numpy()
    for name in ("ModificationTimestamp", "MajorChangeTimestamp"):
        market.iloc[at, col(name)] = last.to_numpy()
    touched = market["ListingId"].iloc[at].tolist()
    return market, touched, closing


def _close(
    api: ApiClient, market: pd.DataFrame, ids: Sequence[str], counts: _Counts
) -> tuple[pd.DataFrame, list[str]]:
    """ClosePrice, CloseDate and DaysOnMarket of listings that closed, from their details."""
    requests = [(_DETAIL.at(str(i)), None) for i in ids]
    removed: list[str] = []
    counts.floor += len(ids)
    try:
        bodies = api.get_many(requests, raw=True)
        counts.details += len(ids)
    except NotFoundError:
        # one of them is gone: ask one by one, and drop those the server no longer has
        counts.details += len(ids)
        bodies = []
        for (path, _), listing_id in zip(requests, ids, strict=True):
            try:
                bodies.append(api.get_bytes(path))
            except NotFoundError:
                removed.append(listing_id)
            counts.details += 1
    if removed:
        logger.warning(
            "sync_listings: %d listings are gone from the server: %s", len(removed), removed
        )
        market = market[~market["ListingId"].isin(removed)].reset_index(drop=True)
    if not bodies:
        return market, removed
    details, _ = listings_from_records(bodies, detail=False)
    details = details[details["StandardStatus"] == "Closed"].drop_duplicates(
        "ListingId", keep="last"
    )
    rows = pd.Index(market["ListingId"]).get_indexer(details["ListingId"])
    ok = rows >= 0
    at = rows[ok]
    market = market.copy()
    col = market.columns.get_loc
    for name in ("ClosePrice", "CloseDate", "DaysOnMarket"):
        values = details[name][ok]
        if values.dtype != market[name].dtype:
            values = values.astype(market[name].dtype)
        market.iloc[at, col(name)] = values.to_numpy()
    return market, removed


def _data_time(fresh: pd.DataFrame, changes: pd.DataFrame | None) -> pd.Timestamp | None:
    """A lower bound of the server's clock from data it just sent: the newest timestamp, and
    ``OriginalEntryTimestamp + DaysOnMarket`` days of listings not closed."""
    stamps: list[pd.Timestamp | None] = []
    if len(fresh):
        stamps.append(_max(fresh["ModificationTimestamp"]))
        open_ = fresh[fresh["StandardStatus"] != "Closed"]
        days = pd.to_timedelta(open_["DaysOnMarket"].astype("float64"), unit="D")
        stamps.append(_max(open_["OriginalEntryTimestamp"] + days))
    if changes is not None and len(changes):
        stamps.append(_max(changes["ChangeTimestamp"]))
    return _latest(*stamps)


def _days_on_market(market: pd.DataFrame, data_time: pd.Timestamp | None) -> pd.DataFrame:
    """DaysOnMarket of listings not closed, from ``data_time`` (a lower bound of the server's
    clock): it grows with the clock and no feed event says so. Never lowered."""
    if data_time is None or not len(market):
        return market
    elapsed = (data_time - market["OriginalEntryTimestamp"]) // _DAY
    current = market["DaysOnMarket"].to_numpy(dtype="float64", na_value=np.nan)
    grown = np.fmax(current, elapsed.to_numpy(dtype="float64", na_value=np.nan))
    update = (market["StandardStatus"] != "Closed").to_numpy() & ~np.isnan(grown)
    update &= grown != current
    if not update.any():
        return market
    days = market["DaysOnMarket"].copy()
    days[update] = grown[update].astype("int64")
    return market.assign(DaysOnMarket=days)


def _append_history(history: pd.DataFrame, changes: pd.DataFrame) -> pd.DataFrame:
    if not len(changes):
        return history
    added = changes[[c for c in HISTORY_COLUMNS if c in changes.columns]]
    out = _concat([history, added])
    out = out.drop_duplicates(_HISTORY_KEY, keep="first")
    return out.sort_values(
        ["ChangeTimestamp", "ListingId", "ChangeType"], kind="stable"
    ).reset_index(drop=True)


def _watermarks(
    market: pd.DataFrame,
    quarantine: pd.DataFrame,
    previous: Mapping[str, Any] | None,
    changes: pd.DataFrame | None,
) -> dict[str, str | None]:
    """``entry_watermark``: newest OriginalEntryTimestamp known (the next new-listing search's
    Since); ``change_watermark``: newest ModificationTimestamp / ChangeTimestamp known (the next
    change feed's Since). Both are server times and never move back."""
    previous = previous or {}
    entries = [_stamp(previous.get("entry_watermark")), _max(market["OriginalEntryTimestamp"])]
    if "OriginalEntryTimestamp" in quarantine.columns:
        entries.append(_max(quarantine["OriginalEntryTimestamp"]))
    changed = [
        _stamp(previous.get("change_watermark")),
        _max(market["ModificationTimestamp"]),
        _max(market["MajorChangeTimestamp"]),
    ]
    if changes is not None and len(changes):
        changed.append(_max(changes["ChangeTimestamp"]))
    return {
        "entry_watermark": _iso(_latest(*entries)),
        "change_watermark": _iso(_latest(*changed)),
    }


# -- small helpers -----------------------------------------------------------------------------------


def _max(series: pd.Series) -> pd.Timestamp | None:
    if not isinstance(series.dtype, pd.DatetimeTZDtype):
        series = pd.to_datetime(series.astype(object), utc=True, errors="coerce", format="ISO8601")
    value = series.max()
    return None if pd.isna(value) else pd.Timestamp(value)


def _concat(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    parts = [f for f in frames if len(f)]
    if not parts:
        return frames[0].iloc[:0] if frames else pd.DataFrame()
    if len(parts) == 1:
        return parts[0]
    return pd.concat(parts, ignore_index=True)


def _tidy(market: pd.DataFrame) -> pd.DataFrame:
    return market.sort_values("ListingId", kind="stable").reset_index(drop=True)


def _media_of(media: pd.DataFrame, market: pd.DataFrame) -> pd.DataFrame:
    if not len(media):
        return media.reset_index(drop=True)
    return media[ids_in(media["ListingId"], market["ListingId"])].reset_index(drop=True)


def _wall_clock() -> str:
    """Local time of the sync, for people reading the state (never used as a watermark)."""
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")
