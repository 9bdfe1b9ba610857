"""Incremental market sync: the whole market of a scope kept current with the fewest requests.

``sync_listings(client, scope)`` keeps one cache entry per scope and account (resource
``market``): the market frame (one row per ListingId, every status), its ``media``, its
``quarantine`` and the **history** of every change seen (an extra frame, ``market.history``), with
the sync state in the entry's metadata (member ``sync``). The first sync loads each status once
and backfills the history from the change feed (since the oldest listing's entry, or
``history_since``); later syncs ask only for what moved:

1. new listings: one paged search per status with ``Since`` = the newest OriginalEntryTimestamp
   already cached (the server's data time, never the local clock);
2. the change feed over the open ids (Closed is terminal; ids in chunks as large as the server
   accepts: 100 to start, doubled while accepted, halved on a 400 or 414, remembered per host),
   ``Since`` = the newest ModificationTimestamp /
   ChangeTimestamp already known; the changes are applied to the cached rows in order;
3. a detail request for each listing that closed (ClosePrice, CloseDate and the final
   DaysOnMarket are not in the feed), concurrently;
4. the changes are appended to the history (deduplicated on ListingId, ChangeType,
   ChangeTimestamp), and the whole entry is written at once (atomic).

Requests of a later sync (the floor of this API; see ``docs/sync.md``)::

    sum over open-id chunks of max(1, ceil(changes in chunk / 50))  # ceil(open ids / chunk) usually
    + sum over the 4 statuses of max(1, ceil(new listings of that status / 50))
    + listings that closed

Modules: this one holds the public calls and the cache entry; ``_sync_steps`` the full load,
backfill and incremental sync; ``_sync_feed`` the chunked change feed; ``_sync_apply`` the pure
steps (apply changes, closings, DaysOnMarket, watermarks); ``realtyframes._changes`` what a sync changed.

>>> market = client.sync_listings(City="Miami")  # doctest: +SKIP
>>> history = listing_history(client, {"City": "Miami"})  # doctest: +SKIP
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import UTC, date, datetime
from typing import Any, Literal, Protocol

import pandas as pd

from realtyframes._changes import CHANGE_COLUMNS
from realtyframes._spec import LISTING_DEFAULTS
from realtyframes.api import ApiClient, refuse_none, validate_listing_search
from realtyframes.cache import Checkpoint, ParquetCache
from realtyframes.errors import QueryError
from realtyframes.loaders._base import LoadInfo, parquet_safe
from realtyframes.loaders._checks import check_count, check_flag
from realtyframes.loaders._plan import Plan, plan_sync_requests
from realtyframes.loaders._resume import run_resumable
from realtyframes.loaders._sync_apply import (
    HISTORY_COLUMNS,
    iso,
    stamp,
)
from realtyframes.loaders._sync_feed import (
    DEFAULT_CHUNK,
    ChunkSize,
    read_host_chunk,
    too_many,
    write_host_chunk,
)
from realtyframes.loaders._sync_steps import (
    STATE_VERSION,
    STATUSES,
    SyncResult,
    backfill,
    full_load,
    incremental,
)
from realtyframes.loaders.endpoints import MARKET
from realtyframes.schemas import (
    SCHEMA_VERSION,
    ListingChange,
    OnInvalid,
    empty_frame,
    listings_from_pages,
)

__all__ = [
    "CHANGE_COLUMNS",
    "DEFAULT_CHUNK",
    "HISTORY_COLUMNS",
    "RESOURCE",
    "STATUSES",
    "listing_history",
    "plan_sync",
    "sync_listings",
    "sync_scope",
    "sync_state",
    "too_many",
]

logger = logging.getLogger("realtyframes.sync")

#: Cache resource of the synced markets (the dataset ``<cache_dir>/market``, one scope per market).
RESOURCE = MARKET
#: Operation name in the cache key and metadata.
OPERATION = "sync_listings"
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


#: ``history_since=``: a date or timestamp, None (from the oldest listing's entry) or False (none).
HistorySince = date | datetime | str | Literal[False] | None


# -- public calls ------------------------------------------------------------------------------------


def sync_listings(
    client: _ClientLike,
    scope: Mapping[str, Any],
    *,
    chunk_size: int | None = None,
    refresh: bool = False,
    history_since: HistorySince = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """The whole market of ``scope`` (every status), kept current incrementally in the cache.

    ``scope``: listing search filters (``City=``, ``PostalCode=``, ``PropertyType=``,
    ``Subtypes=``, feature flags ...), validated before any request; see :func:`sync_scope` for
    the ones refused. ``chunk_size``: ListingIds per change-feed request to start with (default:
    the size the last sync on this host learned, else 100; the size grows while the server
    accepts it and halves on a 400 or 414). ``refresh=True`` reloads the
    market in full (the history is kept). Returns one row per ListingId, sorted by ListingId;
    the change history is :func:`listing_history`. Without a cache (``Client(cache=False)``)
    every call is a full load and no history is kept.

    The first sync of a scope also **backfills the history** from the change feed: every change
    since the oldest ``OriginalEntryTimestamp`` in the market, or since ``history_since`` (a date
    or timestamp); ``history_since=False`` skips it. Its requests are counted in
    ``sync_state(...)["last_requests"]["backfill"]``. An incremental sync records what it
    changed in ``client.last_load.changes`` (kinds: ``CHANGE_KINDS``).

    >>> market = sync_listings(client, {"City": "Miami"})  # doctest: +SKIP
    >>> market.StandardStatus.value_counts()  # doctest: +SKIP
    """
    params = sync_scope(scope)
    check_flag("refresh", refresh)
    chunk_size = check_count("chunk_size", chunk_size)
    since = _history_since(history_since)
    api, cache = client._api, client._cache
    if progress is None:
        progress = getattr(client._settings, "progress", None)
    on_invalid: OnInvalid = getattr(client._settings, "on_invalid", "quarantine")
    key = _key(client, cache, params) if cache is not None else None
    previous = _previous(cache, key)
    root = cache.root if cache is not None else None
    chunk = _start_chunk(chunk_size, read_host_chunk(root, api.cache_host()), previous)
    checkpoint: Checkpoint | None = None
    if previous is None or refresh:
        result, checkpoint = _full_sync(
            api, cache, key, params, previous, since, chunk=chunk, refresh=refresh,
            progress=progress, on_invalid=on_invalid,
        )  # fmt: skip
    else:
        result = incremental(
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
        _write(cache, key, api, params, result)
        write_host_chunk(root, api.cache_host(), ChunkSize.from_state(result.state))
    if checkpoint is not None:
        checkpoint.done()
    _record(client, key, result, checkpoint)
    return result.market.copy()


def plan_sync(
    client: _ClientLike,
    scope: Mapping[str, Any],
    *,
    refresh: bool = False,
    history_since: HistorySince = None,
) -> Plan:
    """What :func:`sync_listings` of ``scope`` will cost, from a few cheap requests: a first sync
    (or ``refresh=True``) one page of each status and one ``Limit=1`` change-feed request per
    status (the backfill's sample), a later sync a ``Limit=1`` search per status since the
    watermark and one feed request. Validates like the sync (QueryError before any request).

    >>> plan_sync(client, {"City": "Miami"}).requests  # doctest: +SKIP
    642
    """
    params = sync_scope(scope)
    check_flag("refresh", refresh)
    since = _history_since(history_since)
    cache = client._cache
    key = _key(client, cache, params) if cache is not None else None
    previous = _previous(cache, key)
    root = cache.root if cache is not None else None
    host_chunk = read_host_chunk(root, client._api.cache_host())
    backfill = since is not False and cache is not None
    if refresh and previous is not None:  # a full load that keeps the history it has
        backfill = backfill and not len(previous.history)
        previous = None
    return plan_sync_requests(
        client._api,
        params,
        previous=previous,
        host_chunk=host_chunk,
        history_since=None if since is None or since is False else str(iso(since)),
        backfill=backfill,
    )


def _full_sync(
    api: ApiClient,
    cache: ParquetCache | None,
    key: str | None,
    params: Mapping[str, str],
    previous: SyncResult | None,
    since: pd.Timestamp | Literal[False] | None,
    *,
    chunk: ChunkSize,
    refresh: bool,
    progress: bool | None,
    on_invalid: OnInvalid,
) -> tuple[SyncResult, Checkpoint | None]:
    """A full load (every status) and, when no history is kept yet, the backfill; resumed from
    the checkpoint of an interrupted identical one (``loaders._resume``)."""

    def run(checkpoint: Checkpoint | None) -> SyncResult:
        result = full_load(
            api, params, chunk=chunk, progress=progress, on_invalid=on_invalid,
            checkpoint=checkpoint,
        )  # fmt: skip
        if previous is not None:  # refresh: the history so far stays
            result.history = previous.history
            result.state["syncs"] = previous.state.get("syncs", 0) + 1
            result.state["first_sync"] = previous.state.get("first_sync")
        if since is not False and cache is not None and not len(result.history):
            backfill(
                api, result, since, progress=progress, on_invalid=on_invalid,
                checkpoint=checkpoint,
            )  # fmt: skip
        return result

    scope = _checkpoint_scope(api, params, since, previous is not None)
    return run_resumable(cache, RESOURCE, key, scope, refresh=refresh, run=run)


def _checkpoint_scope(
    api: ApiClient, params: Mapping[str, str], since: Any, refreshing: bool
) -> dict[str, Any]:
    """What a full load's checkpoint must match: the scope, the history's start and the
    layouts of the state and frames (all but the scope are outside the cache key)."""
    return {
        "host": api.cache_host(),
        "operation": OPERATION,
        "params": dict(params),
        "account": api.fingerprint,
        "history_since": "none" if since is False else iso(since) if since is not None else None,
        "refresh": refreshing,
        "state_version": STATE_VERSION,
        "schema_version": SCHEMA_VERSION,
    }


def _record(
    client: _ClientLike, key: str | None, result: SyncResult, checkpoint: Checkpoint | None
) -> None:
    """``client.last_load``: the requests, quarantine, media and changes of this sync."""
    record = getattr(client, "_record", None)
    resumed = checkpoint.resumed_from if checkpoint is not None else None
    if callable(record):
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
                changes=result.changes,
                resumed_requests=checkpoint.reused if checkpoint and resumed else 0,
                resumed_from=resumed,
            )
        )


def _start_chunk(
    chunk_size: int | None, host: ChunkSize | None, previous: SyncResult | None
) -> ChunkSize:
    """The chunk a sync starts with: ``chunk_size`` if given, else what the last sync on this
    host learned, else this scope's last size, else the spec's 100."""
    known = host or (ChunkSize.from_state(previous.state) if previous is not None else None)
    if chunk_size is not None:
        return ChunkSize(chunk_size, known.refused if known is not None else None)
    return known or ChunkSize(DEFAULT_CHUNK)


def _history_since(value: HistorySince) -> pd.Timestamp | Literal[False] | None:
    """``history_since=`` checked before any request: a UTC timestamp, None or False."""
    if value is None or value is False:
        return value
    allowed = "a date or ISO 8601 timestamp (e.g. '2025-06-01'), None or False"
    if value is True or not isinstance(value, date | datetime | str):
        raise QueryError("history_since", f"{value!r} is not a date", allowed)
    try:
        when = pd.Timestamp(value)
    except (TypeError, ValueError):
        raise QueryError("history_since", f"{value!r} is not a date", allowed) from None
    if when is pd.NaT:
        raise QueryError("history_since", f"{value!r} is not a date", allowed)
    when = when.tz_localize(UTC) if when.tzinfo is None else when.tz_convert(UTC)
    if when > pd.Timestamp.now(UTC) + pd.Timedelta(days=1):
        raise QueryError("history_since", f"{value!r} is in the future", allowed)
    return when


def _previous(cache: ParquetCache | None, key: str | None) -> SyncResult | None:
    """The cached market of the scope as a starting point, or None."""
    if cache is None or key is None:
        return None
    entry = cache.read(RESOURCE, key)
    return None if entry is None else _usable(entry.frame, entry.extra, entry.meta)


def _write(
    cache: ParquetCache, key: str, api: ApiClient, params: Mapping[str, str], result: SyncResult
) -> None:
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


def listing_history(client: _ClientLike, scope: Mapping[str, Any]) -> pd.DataFrame:
    """Every change the syncs of ``scope`` saw: one row per (ListingId, ChangeType, ChangeTimestamp).

    Columns: ListingId, ChangeType, ChangeTimestamp, PreviousListPrice, ListPrice (price
    changes), PreviousStatus, StandardStatus (status changes); sorted by ChangeTimestamp. Read
    from the cache, no request. The first sync backfills it from the change feed (unless
    ``history_since=False``); each later sync appends the changes it saw. While another process
    syncs the scope, the history of the last complete sync (never an empty or partial one; see
    ``docs/cache.md``); empty only for a scope never synced.

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


def synced_market(client: _ClientLike, scope: Mapping[str, Any]) -> pd.DataFrame | None:
    """The market of the last complete sync of ``scope``, read from the cache (no request), or
    None when the scope was never synced (or the client keeps no cache). A watch run that waited
    for another process's sync of the same scope reads it instead of syncing again.

    >>> synced_market(client, {"City": "Miami"}).StandardStatus.value_counts()  # doctest: +SKIP
    """
    params = sync_scope(scope)
    cache = client._cache
    if cache is None:
        return None
    entry = cache.read(RESOURCE, _key(client, cache, params))
    if entry is None or not isinstance(entry.meta.get("sync"), dict):
        return None
    return entry.frame.copy()


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
) -> SyncResult | None:
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
            stamp(state.get(name))
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
    return SyncResult(
        market=frame,
        media=media if media is not None else _empty_media(),
        quarantine=quarantine if quarantine is not None else frame.iloc[:0],
        history=history,
        state=dict(state),
    )


def _empty_media() -> pd.DataFrame:
    _, media = listings_from_pages([])
    return media
