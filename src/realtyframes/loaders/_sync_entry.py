"""The cache entry of a synced market: the scope and its key, reading the last complete sync
(the starting point of the next one, :func:`listing_history`, :func:`synced_market`,
:func:`sync_state`) and writing a sync's result (market, media, quarantine, history and state in
one atomic write). See :mod:`realtyframes.loaders._sync`.

>>> sync_state(client.session, {"City": "Miami"})["syncs"]  # doctest: +SKIP
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import pandas as pd

from realtyframes._spec import LISTING_DEFAULTS
from realtyframes.api import ApiClient
from realtyframes.cache import ParquetCache
from realtyframes.errors import QueryError
from realtyframes.loaders._base import Session
from realtyframes.loaders._checkers import refuse_none
from realtyframes.loaders._operations import validate_listing_search
from realtyframes.loaders._sync_apply import stamp
from realtyframes.loaders._sync_steps import STATE_VERSION, SyncResult
from realtyframes.loaders.endpoints import MARKET
from realtyframes.schemas import SCHEMA_VERSION, ListingChange, empty_frame, listings_from_pages

__all__ = [
    "OPERATION",
    "RESOURCE",
    "listing_history",
    "previous_sync",
    "sync_scope",
    "sync_state",
    "synced_market",
    "usable",
    "write_sync",
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


def scope_key(session: Session, cache: ParquetCache, params: Mapping[str, str]) -> str:
    """The cache key of the market of ``params`` (a checked scope) in ``cache``."""
    api = session.api
    return cache.key(
        host=api.cache_host(), operation=OPERATION, params=params, account=api.fingerprint
    )


def previous_sync(cache: ParquetCache | None, key: str | None) -> SyncResult | None:
    """The cached market of the scope as a starting point, or None."""
    if cache is None or key is None:
        return None
    entry = cache.read(RESOURCE, key)
    return None if entry is None else usable(entry.frame, entry.extra, entry.meta)


def write_sync(
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


def listing_history(session: Session, scope: Mapping[str, Any]) -> pd.DataFrame:
    """Every change the syncs of ``scope`` saw: one row per (ListingId, ChangeType, ChangeTimestamp).

    Columns: ListingId, ChangeType, ChangeTimestamp, PreviousListPrice, ListPrice (price
    changes), PreviousStatus, StandardStatus (status changes); sorted by ChangeTimestamp. Read
    from the cache, no request. The first sync backfills it from the change feed (unless
    ``history_since=False``); each later sync appends the changes it saw. While another process
    syncs the scope, the history of the last complete sync (never an empty or partial one; see
    ``docs/cache.md``); empty only for a scope never synced.

    >>> drops = listing_history(client.session, {"City": "Miami"}).query("ListPrice < PreviousListPrice")  # doctest: +SKIP
    """
    entry = _synced_entry(session, scope)
    if entry is None or "history" not in entry.extra:
        return empty_frame(ListingChange)
    return entry.extra["history"]


def synced_market(session: Session, scope: Mapping[str, Any]) -> pd.DataFrame | None:
    """The market of the last complete sync of ``scope``, read from the cache (no request), or
    None when the scope was never synced (or the client keeps no cache). A watch run that waited
    for another process's sync of the same scope reads it instead of syncing again.

    >>> synced_market(client.session, {"City": "Miami"}).StandardStatus.value_counts()  # doctest: +SKIP
    """
    entry = _synced_entry(session, scope)
    return None if entry is None else entry.frame.copy()


def sync_state(session: Session, scope: Mapping[str, Any]) -> dict[str, Any] | None:
    """The sync state of ``scope`` (watermarks, chunk size, syncs, last sync's requests), or None,
    read from the cache's state database alone (no Parquet file is read).

    >>> sync_state(client.session, {"City": "Miami"})["last_requests"]  # doctest: +SKIP
    {'search': 4, 'feed': 3, 'details': 1, 'rejected': 0, 'total': 8, 'floor': 8}
    """
    params = sync_scope(scope)
    cache = session.cache
    if cache is None:
        return None
    return cache.sync_state(RESOURCE, scope_key(session, cache, params))  # no Parquet read


def _synced_entry(session: Session, scope: Mapping[str, Any]) -> Any:
    """The cache entry of the last complete sync of ``scope``, or None (never synced, no cache)."""
    params = sync_scope(scope)
    cache = session.cache
    if cache is None:
        return None
    entry = cache.read(RESOURCE, scope_key(session, cache, params))
    if entry is None or not isinstance(entry.meta.get("sync"), dict):
        return None
    return entry


# -- reading a previous sync -------------------------------------------------------------------------


def usable(
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
