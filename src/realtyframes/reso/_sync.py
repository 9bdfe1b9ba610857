"""Replication of a RESO source: ``sync_listings`` and ``listing_history`` on ``Client.reso``.

One cache entry per scope and account in the platform sync's folder (``market``): the market
frame (one row per ListingId, every status, the platform's columns), its ``history`` (the
platform's change columns plus ``HistorySource``) and ``quarantine``; the sync state in the
entry's metadata (member ``sync``: the watermarks).

- The first sync reads the scope's Property records in ``ModificationTimestamp,ListingKey``
  order, following ``@odata.nextLink`` (with the vendor's initial filter: MLS Grid's
  ``MlgCanView eq true``).
- A later sync asks for ``ModificationTimestamp ge <watermark>`` in the same order and replaces
  rows by key: ``ge`` re-reads the records at the watermark, the key de-duplicates them, so a
  block sharing one timestamp across a page boundary (or a run's end) loses nothing.
- Records whose vendor delete flag is false (``MlgCanView = false``) leave the market and are
  written to the history as removals (``HistorySource`` ``removed: MlgCanView false``).
- A key reconcile (a read of the scope's keys alone, ``$select=ListingKey,ListingId``) finds
  the listings a feed without such a flag deleted: every :data:`RECONCILE_EVERY` th
  incremental sync of such a feed, or when ``reconcile=True``; they leave the market as
  removals (``HistorySource`` :data:`RECONCILE_SOURCE`) at the sync's data time.
- An incremental sync's ``changes`` are the platform sync's frame (new listings, each new
  history record, removals as ``removed``).
- One sync of a scope at a time, whatever the processes: the platform sync's scope lock
  (``loaders.scope_lock``); a call that waited for another one's sync takes its market from
  the cache, no request.
- History: from the server's ``HistoryTransactional`` when its ``$metadata`` has it (the
  first sync backfills since the oldest listing's entry, as the platform's change feed does);
  else synthesised from successive versions of each record (price and status), and said so
  in ``HistorySource``.

>>> market = client.sync_listings(City="Miami")  # doctest: +SKIP
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from realtyframes.cache import Checkpoint, Entry, ParquetCache
from realtyframes.errors import QueryError
from realtyframes.loaders import (
    SYNC_WAIT,
    append_history,
    check_flag,
    check_wait,
    describe_scope,
    scope_lock,
    sync_scope,
)
from realtyframes.reso._history import (
    HISTORY_SOURCE,
    change,
    history_frame,
    merge_versions,
    number,
    removals,
    sync_changes_of,
    synthesised,
)
from realtyframes.reso._pages import iter_pages
from realtyframes.reso._query import property_filter
from realtyframes.reso._source import ResoSource, listing_objects
from realtyframes.schemas import (
    Listing,
    listings_from_pages,
    validate,
)

__all__ = [
    "HISTORY",
    "HISTORY_SOURCE",
    "RECONCILE_EVERY",
    "RECONCILE_SOURCE",
    "RESOURCE",
    "ResoSync",
    "check_reconcile",
    "merge_versions",
    "reconcile_due",
    "reso_history",
    "reso_sync",
    "reso_sync_state",
    "scope_entry",
    "stamp",
    "sync_changes_of",
]

RESOURCE = "market"
OPERATION = "reso_sync"
HISTORY = "HistoryTransactional"
_ORDER = "ModificationTimestamp asc,ListingKey asc"
_KEY_ORDER = "ListingKey asc"
_KEYS = "ListingKey,ListingId"
#: A feed without a delete flag reconciles its keys every this many incremental syncs (a week of
#: daily syncs); ``reconcile=True`` / ``False`` forces or skips it.
RECONCILE_EVERY = 7
#: The ``HistorySource`` of a removal found by the key reconcile.
RECONCILE_SOURCE = "removed: missing from the server (key reconcile)"
_HISTORY_ORDER = "ModificationTimestamp asc,HistoryTransactionalKey asc"


@dataclass
class ResoSync:
    """What one sync did: the market, its history, the requests, the rows removed, what
    changed."""

    market: pd.DataFrame
    history: pd.DataFrame
    requests: int
    removed: int
    quarantine: pd.DataFrame
    incremental: bool
    #: what an incremental sync changed (the platform sync's ``changes`` frame); None: a full load
    changes: pd.DataFrame | None = None
    #: another run's sync, taken from the cache while this one waited for the scope's lock
    from_cache: bool = False


def scope_entry(
    source: ResoSource, cache: ParquetCache | None, params: Mapping[str, str]
) -> Entry | None:
    """The cached sync of a checked scope (None: none, or no cache)."""
    return None if cache is None else cache.read(RESOURCE, _key(source, cache, params))


def _key(source: ResoSource, cache: ParquetCache, params: Mapping[str, str]) -> str:
    api = source.api
    return cache.key(
        host=api.cache_host(), operation=OPERATION, params=dict(params), account=api.fingerprint
    )


def stamp(text: str) -> str:
    """A DateTimeOffset literal of the watermark (UTC, ``Z``)."""
    when = pd.Timestamp(text)
    when = when.tz_localize("UTC") if when.tzinfo is None else when.tz_convert("UTC")
    return when.strftime("%Y-%m-%dT%H:%M:%S") + (
        f".{when.microsecond:06d}Z" if when.microsecond else "Z"
    )


@dataclass
class _Reader:
    """Reads queries of one sync, each under its own checkpoint (the resume point of a run
    stopped by a budget, a suspension or a kill), removed once the sync is stored."""

    source: ResoSource
    cache: ParquetCache | None
    key: str | None
    opened: list[Checkpoint]

    def read(
        self, path: str, expression: str, order: str, *, select: str | None = None,
        name: str = "",
    ) -> tuple[list[dict[str, Any]], int]:  # fmt: skip
        """Every record of a query (``select``: those fields only), following next links:
        (records, requests sent). ``name``: its checkpoint's, when one path has two queries."""
        query = {"$filter": expression, "$orderby": order, **self.source.paging()}
        if select is not None:
            query["$select"] = select
        checkpoint = None
        if self.cache is not None and self.key is not None:
            scope = {"operation": OPERATION, "path": path, **query}
            name = f"{self.key}{path.replace('/', '.')}" + (f".{name}" if name else "")
            checkpoint = Checkpoint.open(self.cache.root, RESOURCE, name, scope)
            self.opened.append(checkpoint)
        records: list[dict[str, Any]] = []
        pages = 0
        for page in iter_pages(
            self.source.api,
            path,
            query,
            page_size=self.source.settings.page_size,
            full_pages=True,
            checkpoint=checkpoint,
            budgets=self.source.budgets,
        ):
            pages += 1
            records.extend(self.source.lookups().decode(path.strip("/"), page.records))
        reused = checkpoint.reused if checkpoint is not None else 0
        return records, pages - reused

    def done(self) -> None:
        for checkpoint in self.opened:
            checkpoint.done()


def _market(records: list[dict[str, Any]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Property records -> (the platform's validated market frame by ListingId, quarantine)."""
    body = json.dumps({"listings": listing_objects(records)}).encode()
    frame, _ = listings_from_pages([body])
    valid, bad = validate(frame, Listing)
    return valid.sort_values("ListingId").reset_index(drop=True), bad


def _transactional(
    reader: _Reader, since: str, op: str, keys: set[str]
) -> tuple[pd.DataFrame, int, str | None]:
    """The server's HistoryTransactional price and status changes of ``keys`` after ``since``:
    (history rows, requests, the newest ModificationTimestamp seen)."""
    expression = reader.source.scoped(
        f"ResourceName eq 'Property' and ModificationTimestamp {op} {stamp(since)}",
        initial=False,
    )
    records, requests = reader.read("/" + HISTORY, expression, _HISTORY_ORDER)
    changes = []
    for r in records:
        lid = r.get("ResourceRecordID") or r.get("ResourceRecordKey")
        if lid not in keys:
            continue
        when, old, new = r.get("ModificationTimestamp"), r.get("PreviousValue"), r.get("NewValue")
        if r.get("FieldName") == "ListPrice":
            changes.append(change(lid, "price_change", when, number(old), number(new)))
        elif r.get("FieldName") == "StandardStatus":
            changes.append(change(lid, "status_change", when, old, new))
    newest = max((str(r["ModificationTimestamp"]) for r in records), default=None)
    return history_frame(changes, [HISTORY] * len(changes)), requests, newest


def _split(records: list[dict[str, Any]], flag: str | None) -> tuple[list[Any], dict[str, str]]:
    """(records to keep, {ListingId: ModificationTimestamp} of those flagged for deletion);
    a key seen twice keeps its last version (records come in modification order)."""
    latest: dict[str, dict[str, Any]] = {}
    for r in records:
        latest[r.get("ListingId") or r["ListingKey"]] = r
    keep = [r for r in latest.values() if flag is None or r.get(flag) is not False]
    hidden = {
        lid: str(r.get("ModificationTimestamp"))
        for lid, r in latest.items()
        if flag is not None and r.get(flag) is False
    }
    return keep, hidden


def _newest(records: list[dict[str, Any]], previous: str | None) -> str | None:
    stamps = [pd.Timestamp(r["ModificationTimestamp"]) for r in records]
    if previous is not None:
        stamps.append(pd.Timestamp(previous))
    return stamp(str(max(stamps))) if stamps else None


def reconcile_due(state: Mapping[str, Any], reconcile: bool | None, flag: str | None) -> bool:
    """Whether this incremental sync reconciles the keys: ``reconcile`` when given, else on a
    feed without a delete flag every :data:`RECONCILE_EVERY` th incremental sync."""
    if reconcile is not None:
        return reconcile
    return flag is None and int(state.get("since_reconcile", 0)) + 1 >= RECONCILE_EVERY


def _reconciled(
    reader: _Reader, expression: str, market: pd.DataFrame, history: pd.DataFrame, when: str
) -> tuple[pd.DataFrame, pd.DataFrame, int, int]:
    """The key reconcile: the scope's keys read from the server (``$select`` of the keys only);
    the market's listings the server no longer has leave it and are written to the history as
    removals at ``when`` (the data time). (market, history, rows removed, requests)."""
    query = reader.source.scoped(expression, initial=True)
    records, requests = reader.read("/Property", query, _KEY_ORDER, select=_KEYS, name="keys")
    present = {r.get("ListingId") or r.get("ListingKey") for r in records}
    missing = ~market["ListingId"].isin(list(present))
    gone = dict.fromkeys(market.loc[missing, "ListingId"].tolist(), when)
    history = append_history(history, removals(market, gone, RECONCILE_SOURCE))
    return market[~missing].reset_index(drop=True), history, len(gone), requests


def _first(
    reader: _Reader, expression: str, has_history: bool, history_since: Any
) -> tuple[ResoSync, dict[str, Any]]:
    """A first sync (or ``refresh=True``): every record of the scope, the history backfilled."""
    source = reader.source
    records, requests = reader.read("/Property", source.scoped(expression, initial=True), _ORDER)
    keep, _ = _split(records, source.profile.delete_flag)
    market, bad = _market(keep)
    state: dict[str, Any] = {"watermark": _newest(records, None), "syncs": 0, "mode": "full"}
    history = history_frame([], [])
    if has_history and history_since is not False and len(market):
        since = history_since or market["OriginalEntryTimestamp"].min()
        added, more, newest = _transactional(
            reader, str(pd.Timestamp(since)), "gt", set(market["ListingId"])
        )
        history, requests = append_history(history, added), requests + more
        state["history_watermark"] = newest
    return ResoSync(market, history, requests, 0, bad, False), state


def _later(
    reader: _Reader, expression: str, entry: Any, has_history: bool, reconcile: bool | None
) -> tuple[ResoSync, dict[str, Any]]:
    """An incremental sync from the cached ``entry``: the records modified since the watermark
    replace theirs, flagged ones and (when due) keys the server lost leave as removals."""
    source, flag = reader.source, reader.source.profile.delete_flag
    before, history_before = entry.frame, entry.extra.get("history", history_frame([], []))
    state = dict(entry.meta["sync"])
    ranged = f"({expression}) and ModificationTimestamp ge {state['watermark']}"
    records, requests = reader.read("/Property", source.scoped(ranged, initial=False), _ORDER)
    keep, hidden = _split(records, flag)
    fresh, bad = _market(keep)
    if has_history and state.get("history_watermark"):
        keys = set(before["ListingId"]) | set(fresh["ListingId"])
        added, more, newest = _transactional(reader, state["history_watermark"], "ge", keys)
        requests += more
        state["history_watermark"] = newest or state["history_watermark"]
    else:
        added = synthesised(before, fresh)
    market, history, removed = merge_versions(before, history_before, fresh, hidden, added,
                                              str(flag))  # fmt: skip
    state["watermark"] = _newest(records, state["watermark"])
    state["mode"] = "incremental"
    if reconcile_due(state, reconcile, flag):
        market, history, lost, more = _reconciled(
            reader, expression, market, history, state["watermark"]
        )
        removed, requests = removed + lost, requests + more
        state["since_reconcile"], state["reconciled_at"] = 0, state["watermark"]
    else:
        state["since_reconcile"] = int(state.get("since_reconcile", 0)) + 1
    changes = sync_changes_of(before, market, history_before, history, bad)
    return ResoSync(market, history, requests, removed, bad, True, changes), state


def _taken(before: Any, after: Any, refresh: bool) -> ResoSync | None:
    """The market another run's sync wrote while this one waited for the scope's lock, as this
    call's answer (no request), or None when there is none to take (cleared meanwhile, or
    ``refresh=True`` and that sync was incremental)."""
    if after is None or "sync" not in after.meta:
        return None
    mode = after.meta["sync"].get("mode", "full")
    if refresh and mode != "full":
        return None
    history = after.extra.get("history", history_frame([], []))
    changes = None
    if mode == "incremental" and before is not None and "sync" in before.meta:
        old_history = before.extra.get("history", history_frame([], []))
        changes = sync_changes_of(before.frame, after.frame, old_history, history, pd.DataFrame())
    return ResoSync(after.frame, history, 0, 0, pd.DataFrame(), mode == "incremental", changes,
                    from_cache=True)  # fmt: skip


def check_reconcile(reconcile: Any) -> bool | None:
    """``reconcile=`` checked before any request: True, False or None."""
    if reconcile is not None and not isinstance(reconcile, bool):
        raise QueryError("reconcile", f"expected True, False or None, got {reconcile!r}",
                         (True, False, None))  # fmt: skip
    return reconcile


def reso_sync(
    source: ResoSource,
    cache: ParquetCache | None,
    scope: Mapping[str, Any],
    *,
    refresh: bool = False,
    history_since: Any = None,
    reconcile: bool | None = None,
    lock: Path | None = None,
    wait: float | None = SYNC_WAIT,
) -> ResoSync:
    """Sync the scope's market from ``source`` (see the module); stored in ``cache``, under the
    scope's lock (``lock``: its file, by default the entry's job lock; ``wait`` seconds for
    another holder, then :class:`~realtyframes.errors.ScopeBusyError`). ``reconcile``: True or
    False to force or skip the key reconcile of an incremental sync; None: when due."""
    params = sync_scope(scope)
    check_flag("refresh", refresh)
    reconcile, wait = check_reconcile(reconcile), check_wait(wait)
    if cache is None:
        return _run(source, None, None, params, None, refresh, history_since, reconcile)
    key = _key(source, cache, params)
    entry = cache.read(RESOURCE, key)  # what this call found: a sync completed later replaces it
    lock = lock if lock is not None else cache.job_lock(RESOURCE, key)
    with scope_lock(lock, describe_scope(params), wait):
        if cache.generation(RESOURCE, key) != (entry.meta.get("generation") if entry else None):
            newer = cache.read(RESOURCE, key)  # another run synced the scope while this waited
            taken = _taken(entry, newer, refresh)
            if taken is not None:
                return taken
            entry = newer
        return _run(source, cache, key, params, entry, refresh, history_since, reconcile)


def _run(
    source: ResoSource, cache: ParquetCache | None, key: str | None, params: dict[str, str],
    entry: Any, refresh: bool, history_since: Any, reconcile: bool | None,
) -> ResoSync:  # fmt: skip
    """The sync itself (under the scope's lock with a cache), written to the cache."""
    before = source.has_metadata, source.has_lookups
    expression, _ = property_filter(params, fields=None, every_status=True, lookups=source.lookups)
    if entry is not None and (refresh or "sync" not in entry.meta):
        entry = None
    has_history = source.settings.history == "auto" and HISTORY in source.metadata()
    reader = _Reader(source, cache, key, [])
    if entry is None:
        done, state = _first(reader, expression, has_history, history_since)
    else:
        done, state = _later(reader, expression, entry, has_history, reconcile)
    done.requests += source.requests_since(before)  # $metadata and Lookup, when it read them
    state["syncs"] = int(state.get("syncs", 0)) + 1
    state["last_requests"] = done.requests
    state["history_from"] = HISTORY if has_history else "synthesised"
    if cache is not None and key is not None:
        meta = {"host": source.api.cache_host(), "operation": OPERATION, "params": dict(params),
                "account": source.api.fingerprint, "fetched_at": datetime.now(UTC),
                "sync": state}  # fmt: skip
        cache.write(RESOURCE, key, done.market, meta, extra_frames={"history": done.history})
    reader.done()
    return done


def reso_sync_state(
    source: ResoSource, cache: ParquetCache | None, scope: Mapping[str, Any]
) -> dict[str, Any] | None:
    """The sync state of ``scope`` on this RESO source (watermark, syncs, last requests), or None
    when it was never synced here (from the cache's state database; no request, no Parquet read).
    """
    params = sync_scope(scope)
    return None if cache is None else cache.sync_state(RESOURCE, _key(source, cache, params))


def reso_history(
    source: ResoSource, cache: ParquetCache | None, scope: Mapping[str, Any]
) -> pd.DataFrame:
    """The history the syncs of ``scope`` recorded (from the cache; no request)."""
    params = sync_scope(scope)
    if cache is None:
        return history_frame([], [])
    entry = cache.read(RESOURCE, _key(source, cache, params))
    if entry is None or "history" not in entry.extra:
        return history_frame([], [])
    return entry.extra["history"]
