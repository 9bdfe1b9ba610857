"""The cache entry of a synced market: the scope and its key, the last complete sync read back
(the next one's start, :func:`listing_history`, :func:`synced_market`, :func:`sync_state`), a
sync's result written in one atomic write, and the scope's lock (:func:`scope_lock`): one sync of
a scope at a time, whatever the processes.

>>> sync_state(client.session, {"City": "Miami"})["syncs"]  # doctest: +SKIP
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from realtyframes._changes import sync_changes
from realtyframes._spec import LISTING_DEFAULTS
from realtyframes.api import ApiClient
from realtyframes.cache import Entry, ParquetCache, hold_scope, is_locked
from realtyframes.errors import CacheLockTimeout, QueryError, ScopeBusyError
from realtyframes.loaders._base import Session
from realtyframes.loaders._checkers import refuse_none
from realtyframes.loaders._operations import validate_listing_search
from realtyframes.loaders._sync_apply import _HISTORY_KEY, stamp
from realtyframes.loaders._sync_steps import STATE_VERSION, SyncResult
from realtyframes.loaders.endpoints import MARKET
from realtyframes.schemas import SCHEMA_VERSION, ListingChange, empty_frame, listings_from_pages

__all__ = [
    "RESOURCE",
    "SYNC_REFUSED",
    "SYNC_WAIT",
    "cached_scope",
    "changes_between",
    "check_wait",
    "describe_scope",
    "identity",
    "listing_history",
    "scope_lock",
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
#: Seconds a sync waits for another one of the same scope (then ScopeBusyError); None: no limit.
SYNC_WAIT = 900.0
_MOVING = "moves as prices change and days pass, which the change feed does not report"
#: Parameters a sync scope refuses, with why (:func:`sync_scope`).
SYNC_REFUSED: dict[str, str] = {
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
        if name in SYNC_REFUSED:
            allowed = "listing search filters other than " + ", ".join(SYNC_REFUSED)
            raise QueryError(name, f"not allowed in a sync scope: {SYNC_REFUSED[name]}", allowed)
    refuse_none(scope)
    params = validate_listing_search(scope)
    params.setdefault("PropertyType", LISTING_DEFAULTS["PropertyType"])
    return params


def identity(api: ApiClient, params: Mapping[str, str]) -> dict[str, Any]:
    """What names the market of ``params`` (a checked scope): host, operation, scope, account."""
    return {"host": api.cache_host(), "operation": OPERATION, "params": dict(params),
            "account": api.fingerprint}  # fmt: skip


def scope_key(session: Session, cache: ParquetCache, params: Mapping[str, str]) -> str:
    """The cache key of the market of ``params`` (a checked scope) in ``cache``."""
    return cache.key(**identity(session.api, params))


def write_sync(
    cache: ParquetCache, key: str, api: ApiClient, params: Mapping[str, str], result: SyncResult
) -> None:
    meta = {**identity(api, params), "schema_version": SCHEMA_VERSION, "sync": result.state}
    extra = {"media": result.media, "quarantine": result.quarantine, "history": result.history}
    cache.write(RESOURCE, key, result.market, meta, extra_frames=extra)


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
    found = cached_scope(session, scope)
    return None if found is None else found[0].sync_state(RESOURCE, found[1])  # no Parquet read


def cached_scope(session: Session, scope: Mapping[str, Any]) -> tuple[ParquetCache, str] | None:
    """The session's cache and the key of ``scope`` (checked) in it; None without a cache."""
    params = sync_scope(scope)
    cache = session.cache
    return None if cache is None else (cache, scope_key(session, cache, params))


def _synced_entry(session: Session, scope: Mapping[str, Any]) -> Entry | None:
    """The cache entry of the last complete sync of ``scope``, or None (never synced, no cache)."""
    found = cached_scope(session, scope)
    entry = None if found is None else found[0].read(RESOURCE, found[1])
    return entry if entry is not None and isinstance(entry.meta.get("sync"), dict) else None


# -- one sync of a scope at a time ---------------------------------------------------------------


def check_wait(wait: Any) -> float | None:
    """``wait=`` checked before any request: seconds >= 0, or None (as long as it takes).

    >>> check_wait(0), check_wait(None)
    (0.0, None)
    """
    if wait is None:
        return None
    if isinstance(wait, bool) or not isinstance(wait, int | float) or not 0 <= wait < 1e7:
        raise QueryError("wait", f"expected seconds, got {wait!r}", "a number >= 0, or None")
    return float(wait)


def describe_scope(params: Mapping[str, str]) -> str:
    """``City=Miami, PropertyType=Residential``: a scope as error and log lines show it.

    >>> describe_scope({"City": "Miami", "PropertyType": "Residential"})
    'City=Miami, PropertyType=Residential'
    """
    return ", ".join(f"{name}={value}" for name, value in params.items())


@contextmanager
def scope_lock(path: Path, shown: str, wait: float | None) -> Iterator[None]:
    """Hold the scope's lock at ``path`` (an ``flock`` the kernel releases when its process dies;
    its holder in the cache's ``locks`` table) for the block, waiting ``wait`` seconds (None: no
    limit) for another holder; past it, :class:`ScopeBusyError` naming the scope ``shown``. Held
    from the read of the cached market to its write, and around a first sync's checkpoint. Lock
    order: the scope's, then the entry's write lock (no cycle).

    >>> with scope_lock(cache.job_lock("market", key), "City=Miami", wait=900):  # doctest: +SKIP
    ...     ...  # one sync of City=Miami at a time
    """
    if is_locked(path):
        limit = "as long as it takes" if wait is None else f"up to {wait:g} s"
        logger.info("another run is syncing %s; waiting %s", shown, limit)
    with ExitStack() as stack:
        try:
            stack.enter_context(hold_scope(path, shown, timeout=wait))
        except CacheLockTimeout:
            raise ScopeBusyError(
                f"another run kept syncing {shown} for over {wait:g} s; this run synced nothing "
                "(run it again later, or give a longer wait: --wait, wait=)"
            ) from None
        yield


def changes_between(
    before: pd.DataFrame,
    after: pd.DataFrame,
    history_before: pd.DataFrame,
    history_after: pd.DataFrame,
    quarantine: pd.DataFrame,
) -> pd.DataFrame:
    """What a sync another run completed changed (``client.last_load.changes``' rows): its
    history's new records, the listings new to the market, and the ones it dropped (but not
    into the quarantine), from the markets and histories before and after it."""
    seen = pd.MultiIndex.from_frame(history_before[_HISTORY_KEY].astype("string"))
    now = pd.MultiIndex.from_frame(history_after[_HISTORY_KEY].astype("string"))
    feed = history_after[~now.isin(seen)].reset_index(drop=True)
    known = set(before["ListingId"].astype("string"))
    new = after[~after["ListingId"].astype("string").isin(known)]
    kept = set(after["ListingId"].astype("string")) | set(
        quarantine["ListingId"].dropna().astype("string") if "ListingId" in quarantine else ()
    )
    return sync_changes(feed, new, sorted(known - kept), before, after)


# -- reading a previous sync -------------------------------------------------------------------------


def usable(entry: Entry | None) -> SyncResult | None:
    """The cached market as a starting point, or None (none, or another layout: a full load)."""
    if entry is None:
        return None
    frame, extra, meta = entry.frame, entry.extra, entry.meta
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
    history, media, quarantine = (extra.get(n) for n in ("history", "media", "quarantine"))
    return SyncResult(
        market=frame,
        media=media if media is not None else listings_from_pages([])[1],
        quarantine=quarantine if quarantine is not None else frame.iloc[:0],
        history=history if history is not None else empty_frame(ListingChange),
        state=dict(state),
    )
