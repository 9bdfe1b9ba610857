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
from typing import Any

import pandas as pd

from realtyframes.cache import Checkpoint, ParquetCache
from realtyframes.loaders import data_time_of, grow_days_on_market, sync_scope
from realtyframes.reso._pages import iter_pages
from realtyframes.reso._query import property_filter
from realtyframes.reso._source import ResoSource, listing_objects
from realtyframes.schemas import (
    Listing,
    ListingChange,
    changes_from_pages,
    empty_frame,
    listings_from_pages,
    validate,
)

__all__ = ["HISTORY_SOURCE", "ResoSync", "merge_versions", "reso_history", "reso_sync"]

RESOURCE = "market"
OPERATION = "reso_sync"
HISTORY = "HistoryTransactional"
#: The history column saying where each change comes from.
HISTORY_SOURCE = "HistorySource"
_ORDER = "ModificationTimestamp asc,ListingKey asc"
_HISTORY_ORDER = "ModificationTimestamp asc,HistoryTransactionalKey asc"
_HISTORY_KEY = ["ListingId", "ChangeType", "ChangeTimestamp"]


@dataclass
class ResoSync:
    """What one sync did: the market, its history, the requests, the rows removed."""

    market: pd.DataFrame
    history: pd.DataFrame
    requests: int
    removed: int
    quarantine: pd.DataFrame
    incremental: bool


def _key(source: ResoSource, cache: ParquetCache, params: Mapping[str, str]) -> str:
    api = source.api
    return cache.key(
        host=api.cache_host(), operation=OPERATION, params=dict(params), account=api.fingerprint
    )


def _stamp(text: str) -> str:
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

    def read(self, path: str, expression: str, order: str) -> tuple[list[dict[str, Any]], int]:
        """Every record of a query, following next links: (records, requests sent)."""
        query = {"$filter": expression, "$orderby": order, **self.source.paging()}
        checkpoint = None
        if self.cache is not None and self.key is not None:
            scope = {"operation": OPERATION, "path": path, **query}
            name = f"{self.key}{path.replace('/', '.')}"
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


def _history_frame(changes: list[dict[str, Any]], provenance: list[str]) -> pd.DataFrame:
    frame = changes_from_pages([json.dumps({"changes": changes}).encode()])
    if not len(frame):
        frame = empty_frame(ListingChange)
    return frame.assign(**{HISTORY_SOURCE: pd.Series(provenance, dtype="str", index=frame.index)})


def _number(text: Any) -> float | None:
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def _transactional(
    reader: _Reader, since: str, op: str, keys: set[str]
) -> tuple[pd.DataFrame, int, str | None]:
    """The server's HistoryTransactional price and status changes of ``keys`` after ``since``:
    (history rows, requests, the newest ModificationTimestamp seen)."""
    expression = reader.source.scoped(
        f"ResourceName eq 'Property' and ModificationTimestamp {op} {_stamp(since)}",
        initial=False,
    )
    records, requests = reader.read("/" + HISTORY, expression, _HISTORY_ORDER)
    changes = []
    for r in records:
        lid = r.get("ResourceRecordID") or r.get("ResourceRecordKey")
        if lid not in keys:
            continue
        when = r.get("ModificationTimestamp")
        if r.get("FieldName") == "ListPrice":
            changes.append({"ListingId": lid, "ChangeType": "price_change", "ChangeTimestamp": when,
                            "PreviousListPrice": _number(r.get("PreviousValue")),
                            "ListPrice": _number(r.get("NewValue"))})  # fmt: skip
        elif r.get("FieldName") == "StandardStatus":
            changes.append({"ListingId": lid, "ChangeType": "status_change", "ChangeTimestamp": when,
                            "PreviousStatus": r.get("PreviousValue"),
                            "StandardStatus": r.get("NewValue")})  # fmt: skip
    newest = max((str(r["ModificationTimestamp"]) for r in records), default=None)
    return _history_frame(changes, [HISTORY] * len(changes)), requests, newest


def _synthesised(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """Price and status changes between two versions of the same listings."""
    old = before.set_index("ListingId")
    changes, provenance = [], []
    for row in after.itertuples(index=False):
        lid = row.ListingId
        if lid not in old.index:
            continue
        prev = old.loc[lid]
        when = row.ModificationTimestamp.isoformat().replace("+00:00", "Z")
        if pd.notna(row.ListPrice) and prev["ListPrice"] != row.ListPrice:
            changes.append({"ListingId": lid, "ChangeType": "price_change", "ChangeTimestamp": when,
                            "PreviousListPrice": float(prev["ListPrice"]),
                            "ListPrice": float(row.ListPrice)})  # fmt: skip
            provenance.append("synthesised")
        if str(prev["StandardStatus"]) != str(row.StandardStatus):
            changes.append({"ListingId": lid, "ChangeType": "status_change", "ChangeTimestamp": when,
                            "PreviousStatus": str(prev["StandardStatus"]),
                            "StandardStatus": str(row.StandardStatus)})  # fmt: skip
            provenance.append("synthesised")
    return _history_frame(changes, provenance)


def _removals(market: pd.DataFrame, hidden: dict[str, str], flag: str) -> pd.DataFrame:
    """Removal records of the market's listings the server marked for deletion."""
    gone = market[market["ListingId"].isin(list(hidden))]
    changes = [
        {"ListingId": lid, "ChangeType": "status_change", "ChangeTimestamp": hidden[lid],
         "PreviousStatus": str(status), "StandardStatus": None}
        for lid, status in zip(gone["ListingId"], gone["StandardStatus"], strict=True)
    ]  # fmt: skip
    return _history_frame(changes, [f"removed: {flag} false"] * len(changes))


def _appended(history: pd.DataFrame, added: pd.DataFrame) -> pd.DataFrame:
    parts = [f for f in (history, added) if len(f)]
    if not parts:
        return history
    out = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    out = out.drop_duplicates(_HISTORY_KEY, keep="first")
    return out.sort_values(
        ["ChangeTimestamp", "ListingId", "ChangeType"], kind="stable"
    ).reset_index(drop=True)


def merge_versions(
    market: pd.DataFrame,
    history: pd.DataFrame,
    fresh: pd.DataFrame,
    hidden: Mapping[str, str],
    changes: pd.DataFrame,
    flag: str = "MlgCanView",
) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """An incremental sync's step: ``fresh`` rows replace the market's by ListingId, ``hidden``
    ones ({ListingId: ModificationTimestamp}, flagged for deletion) leave it and are written to
    the history as removals, ``changes`` are appended. Returns (market, history, rows removed).
    DaysOnMarket of open listings grows with the server's clock (the platform sync's rule)."""
    gone = market["ListingId"].isin(list(hidden))
    history = _appended(history, _appended(changes, _removals(market, dict(hidden), flag)))
    drop = gone | market["ListingId"].isin(list(fresh["ListingId"]))
    parts = [f for f in (market[~drop], fresh) if len(f)]
    if not parts:
        return market.iloc[:0], history, int(gone.sum())
    merged = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    merged = merged.sort_values("ListingId").reset_index(drop=True)
    merged = grow_days_on_market(merged, data_time_of(fresh, changes))
    return merged, history, int(gone.sum())


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
    return _stamp(str(max(stamps))) if stamps else None


def reso_sync(
    source: ResoSource,
    cache: ParquetCache | None,
    scope: Mapping[str, Any],
    *,
    refresh: bool = False,
    history_since: Any = None,
) -> ResoSync:
    """Sync the scope's market from ``source`` (see the module); stored in ``cache``."""
    params = sync_scope(scope)
    expression, _ = property_filter(params, fields=None, every_status=True, lookups=source.lookups)
    key = _key(source, cache, params) if cache is not None else None
    entry = cache.read(RESOURCE, key) if cache is not None and key is not None else None
    if entry is not None and (refresh or "sync" not in entry.meta):
        entry = None
    has_history = source.settings.history == "auto" and HISTORY in source.metadata()
    flag = source.profile.delete_flag
    reader = _Reader(source, cache, key, [])
    if entry is None:
        records, requests = reader.read(
            "/Property", source.scoped(expression, initial=True), _ORDER
        )
        keep, _ = _split(records, flag)
        market, bad = _market(keep)
        state: dict[str, Any] = {"watermark": _newest(records, None), "syncs": 0}
        history = _history_frame([], [])
        if has_history and history_since is not False and len(market):
            since = history_since or market["OriginalEntryTimestamp"].min()
            added, more, newest = _transactional(
                reader, str(pd.Timestamp(since)), "gt", set(market["ListingId"])
            )
            history, requests = _appended(history, added), requests + more
            state["history_watermark"] = newest
        removed, incremental = 0, False
    else:
        market, history = entry.frame, entry.extra.get("history", _history_frame([], []))
        state = dict(entry.meta["sync"])
        ranged = f"({expression}) and ModificationTimestamp ge {state['watermark']}"
        records, requests = reader.read("/Property", source.scoped(ranged, initial=False), _ORDER)
        keep, hidden = _split(records, flag)
        fresh, bad = _market(keep)
        if has_history and state.get("history_watermark"):
            keys = set(market["ListingId"]) | set(fresh["ListingId"])
            added, more, newest = _transactional(reader, state["history_watermark"], "ge", keys)
            requests += more
            state["history_watermark"] = newest or state["history_watermark"]
        else:
            added = _synthesised(market, fresh)
        market, history, removed = merge_versions(market, history, fresh, hidden, added, str(flag))
        state["watermark"] = _newest(records, state["watermark"])
        incremental = True
    state["syncs"] = int(state.get("syncs", 0)) + 1
    state["last_requests"] = requests
    state["history_from"] = HISTORY if has_history else "synthesised"
    if cache is not None and key is not None:
        meta = {"host": source.api.cache_host(), "operation": OPERATION, "params": dict(params),
                "account": source.api.fingerprint, "fetched_at": datetime.now(UTC),
                "sync": state}  # fmt: skip
        cache.write(RESOURCE, key, market, meta, extra_frames={"history": history})
    reader.done()
    return ResoSync(market, history, requests, removed, bad, incremental)


def reso_history(
    source: ResoSource, cache: ParquetCache | None, scope: Mapping[str, Any]
) -> pd.DataFrame:
    """The history the syncs of ``scope`` recorded (from the cache; no request)."""
    params = sync_scope(scope)
    if cache is None:
        return _history_frame([], [])
    entry = cache.read(RESOURCE, _key(source, cache, params))
    if entry is None or "history" not in entry.extra:
        return _history_frame([], [])
    return entry.extra["history"]
