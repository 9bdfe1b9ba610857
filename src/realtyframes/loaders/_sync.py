"""Incremental market sync: the whole market of a scope kept current with the fewest requests.

``sync_listings(session, scope)`` keeps one cache entry per scope and account (resource
``market``): the market (one row per ListingId, every status), its ``media``, ``quarantine`` and
``history`` of every change seen, the sync state in its metadata. What is synced is declared once
(``ENDPOINTS["listings"].sync``) and run by one runner (:mod:`._sync_steps`): a first sync (or
``refresh=True``) loads every status and backfills the history from the change feed, resumable
from a checkpoint; a later sync reads the new listings per status, the change feed since the
watermark and the closings. ``plan_sync`` is the same runner with a counting reader. One sync of a
scope at a time, across processes (``_sync_entry.scope_lock``). See ``docs/sync.md``.

>>> market = sync_listings(client.session, {"City": "Miami"}).frame  # doctest: +SKIP
>>> history = listing_history(client.session, {"City": "Miami"})  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import Mapping
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from realtyframes._changes import sync_changes
from realtyframes.cache import Checkpoint, Entry
from realtyframes.errors import QueryError
from realtyframes.loaders._base import LoadResult, Session, parquet_safe
from realtyframes.loaders._checks import check_count, check_flag
from realtyframes.loaders._load import recorded
from realtyframes.loaders._page_info import PAGE_SIZE
from realtyframes.loaders._resume import (
    RESUME_WITHIN,
    Resumed,
    data_moved,
    run_resumable,
    saved_data_time,
)
from realtyframes.loaders._sync_apply import iso, stamp
from realtyframes.loaders._sync_entry import (
    RESOURCE,
    SYNC_REFUSED,
    SYNC_WAIT,
    cached_scope,
    changes_between,
    check_wait,
    describe_scope,
    identity,
    listing_history,
    scope_key,
    scope_lock,
    sync_scope,
    sync_state,
    synced_market,
    usable,
    write_sync,
)
from realtyframes.loaders._sync_fetch import Fetching
from realtyframes.loaders._sync_steps import (
    STATE_VERSION,
    Counts,
    Reader,
    SyncResult,
    SyncRun,
    queries,
    run_first,
    run_later,
)
from realtyframes.loaders.endpoints import ENDPOINTS
from realtyframes.schemas import SCHEMA_VERSION, OnInvalid

__all__ = [
    "RESOURCE",
    "SYNC_REFUSED",
    "SYNC_WAIT",
    "listing_history",
    "plan_scope",
    "sync_listings",
    "sync_lock",
    "sync_scope",
    "sync_state",
    "synced_market",
]

#: The endpoint whose declared sync (``ENDPOINTS["listings"].sync``) the runner runs.
_MARKET = ENDPOINTS["listings"]
assert _MARKET.sync is not None
_SYNC = _MARKET.sync

logger = logging.getLogger("realtyframes.sync")

#: ``history_since=``: a date or timestamp, None (from the oldest listing's entry) or False (none).
HistorySince = date | datetime | str | Literal[False] | None


@dataclasses.dataclass(frozen=True)
class _Asked:
    """A sync's arguments, checked before any request (QueryError)."""

    params: dict[str, str]
    refresh: bool
    since: pd.Timestamp | Literal[False] | None
    chunk: int
    progress: bool | None


def _asked(
    scope: Mapping[str, Any], refresh: Any, history_since: Any, chunk_size: Any = None,
    progress: bool | None = None,
) -> _Asked:  # fmt: skip
    params, refresh = sync_scope(scope), check_flag("refresh", refresh)
    chunk = check_count("chunk_size", chunk_size) or _SYNC.chunk
    return _Asked(params, refresh, _history_since(history_since), chunk, progress)


# -- public calls ------------------------------------------------------------------------------------


def sync_listings(
    session: Session,
    scope: Mapping[str, Any],
    *,
    chunk_size: int | None = None,
    refresh: bool = False,
    history_since: HistorySince = None,
    progress: bool | None = None,
    wait: float | None = SYNC_WAIT,
) -> LoadResult:
    """The whole market of ``scope`` (every status), kept current incrementally in the cache,
    as a :class:`LoadResult` (``frame``: the market; ``changes``, ``quarantine``, ``media``,
    ``requests``, ``from_cache``); one run of the run history.

    ``scope``: listing search filters (``City=``, ``PostalCode=``, ``PropertyType=``,
    ``Subtypes=``, feature flags ...), validated before any request; see :func:`sync_scope` for
    the ones refused. ``chunk_size``: ListingIds per change-feed request (default: the spec's
    100; a chunk refused with a 400 or 414 is split in halves once). ``refresh=True`` reloads the
    market in full (the history is kept and gets the changes since the last sync). Returns one
    row per ListingId, sorted by ListingId; the change history is :func:`listing_history`. Without a cache (``Client(cache=False)``)
    every call is a full load and no history is kept.

    The first sync of a scope also **backfills the history** from the change feed: every change
    since the oldest ``OriginalEntryTimestamp`` in the market, or since ``history_since`` (a date
    or timestamp); ``history_since=False`` skips it. Its requests are counted in
    ``sync_state(...)["last_requests"]["backfill"]``. An incremental sync returns what it
    changed in ``changes`` (kinds: ``CHANGE_KINDS``).

    One sync of a scope at a time, whatever the processes (with a cache): a call while another
    syncs the same scope waits for it, ``wait`` seconds (default :data:`SYNC_WAIT`, 900; None: no
    limit), then raises :class:`~realtyframes.errors.ScopeBusyError`; when that sync completed
    meanwhile, its market is returned from the cache with no request (``from_cache``; see
    ``docs/sync.md``, "Two syncs of one scope").

    >>> market = sync_listings(client.session, {"City": "Miami"}).frame  # doctest: +SKIP
    >>> market.StandardStatus.value_counts()  # doctest: +SKIP
    """
    if session.sync is not None:  # the source's own sync (a RESO source's replication)
        return session.sync(
            scope, chunk_size=chunk_size, refresh=refresh, history_since=history_since,
            progress=progress, wait=wait,
        )  # fmt: skip
    with recorded(session, "sync", RESOURCE, sync_scope(scope)) as record:
        progress = session.progress if progress is None else progress
        asked = _asked(scope, refresh, history_since, chunk_size, progress)
        record.result = result = _sync(session, asked, check_wait(wait))
    return result


def _sync(session: Session, asked: _Asked, wait: float | None) -> LoadResult:
    """:func:`sync_listings` unrecorded: under the scope's lock with a cache."""
    cache = session.cache
    if cache is None:
        return _sync_now(session, asked, None, None)
    key = scope_key(session, cache, asked.params)
    entry = cache.read(RESOURCE, key)  # what this call found: a sync completed later replaces it
    with scope_lock(cache.job_lock(RESOURCE, key), describe_scope(asked.params), wait):
        if cache.generation(RESOURCE, key) != (entry.meta.get("generation") if entry else None):
            newer = cache.read(RESOURCE, key)  # another run synced the scope while this one waited
            taken = _take(key, asked, entry, newer)
            if taken is not None:
                return taken
            entry = newer
        previous = usable(entry)
        if previous is not None and not asked.refresh and session.source_unchanged:
            return _unchanged(key, asked.params, previous)
        return _sync_now(session, asked, key, previous)


def _unchanged(key: str, params: Mapping[str, str], previous: SyncResult) -> LoadResult:
    """The cached sync as this call's answer, no request, when the session's source cannot have
    changed since (the embedded sandbox not started yet in this process, its data fixed by the
    identity the cache key holds): what an incremental sync would find, nothing new."""
    market = previous.market
    result = dataclasses.replace(
        previous, counts=Counts(),
        changes=sync_changes(previous.history.iloc[:0], market.iloc[:0], [], market, market),
    )  # fmt: skip
    return _from_cache(key, params, result, "the embedded sandbox's data as last synced")


def _take(key: str, asked: _Asked, before: Entry | None, after: Entry | None) -> LoadResult | None:
    """The market another run's sync just wrote, as this call's answer (no request), or None
    when there is none to take (cleared meanwhile; another layout; ``refresh=True`` and that
    sync was incremental); with the changes of that sync (None when it was a full load)."""
    taken = usable(after)
    if taken is None or (asked.refresh and taken.state.get("mode") != "full"):
        return None
    start = usable(before)
    if start is not None and taken.state.get("mode") != "full":
        taken.changes = changes_between(
            start.market, taken.market, start.history, taken.history, taken.quarantine
        )
    return _from_cache(key, asked.params, taken, "another run synced it meanwhile")


def _from_cache(key: str, params: Mapping[str, str], result: SyncResult, why: str) -> LoadResult:
    logger.info("sync_listings %s: %s; %d listings from the cache, no request",
                describe_scope(params), why, len(result.market))  # fmt: skip
    return _result(key, result, None, from_cache=True)


def sync_lock(session: Session, scope: Mapping[str, Any]) -> Path | None:
    """The lock file :func:`sync_listings` holds while it syncs ``scope`` (None without a
    cache). Holding it yourself (``realtyframes.cache.file_lock``) makes the syncs of that scope
    wait, in every process, this one included (the lock is not re-entrant).

    >>> sync_lock(client.session, {"City": "Miami"}).name  # doctest: +SKIP
    '3f2c...e1.lock'
    """
    found = cached_scope(session, scope)
    return None if found is None else found[0].job_lock(RESOURCE, found[1])


def _sync_now(
    session: Session, asked: _Asked, key: str | None, previous: SyncResult | None
) -> LoadResult:
    """The sync itself: the runner's first sync, or a later one from ``previous``; written to
    the cache and returned."""
    resumed: Resumed[SyncResult] | None = None
    if previous is None or asked.refresh:
        result, resumed = _first(session, asked, key, previous)
    else:
        reader = Fetching(session.api, _MARKET, asked.progress)
        result = run_sync(asked, reader, previous, cached=True, on_invalid=session.on_invalid)
    result.state["last_requests"] = counted = result.counts.as_dict()
    logger.info("sync_listings %s: %d listings, %d requests (%s)", asked.params,
                len(result.market), counted["total"], result.state["mode"])  # fmt: skip
    result.quarantine = parquet_safe(result.quarantine)
    if session.cache is not None and key is not None:
        write_sync(session.cache, key, session.api, asked.params, result)
    if resumed is not None and resumed.checkpoint is not None:
        resumed.checkpoint.done()
    return _result(key, result, resumed)


def plan_scope(
    session: Session, scope: Mapping[str, Any], *, refresh: Any, history_since: Any
) -> tuple[_Asked, SyncResult | None]:
    """What a plan of a sync of ``scope`` starts from, checked as the sync checks it (QueryError
    before any request): the sync's arguments and the cached sync (None: a first sync)."""
    asked = _asked(scope, refresh, history_since)
    found = cached_scope(session, scope)
    return asked, None if found is None else usable(found[0].read(RESOURCE, found[1]))


def run_sync(
    asked: _Asked, reader: Reader, previous: SyncResult | None, *, cached: bool,
    on_invalid: OnInvalid,
) -> SyncResult:  # fmt: skip
    """The declared sync run through ``reader`` (the sync's and its plan's one path): a first
    sync (nothing cached, or a refresh keeping ``previous``'s history, backfilled only with a
    cache) or a later one from ``previous``."""
    run = SyncRun(_MARKET, reader, asked.chunk, on_invalid)
    if previous is not None and not asked.refresh:
        return run_later(run, previous, asked.params)
    since = None if asked.since is False else asked.since
    backfill = asked.since is not False and cached
    return run_first(run, asked.params, previous, since=since, backfill=backfill)


def _first(
    session: Session, asked: _Asked, key: str | None, previous: SyncResult | None
) -> tuple[SyncResult, Resumed[SyncResult]]:
    """The runner's first sync, resumed from the checkpoint of an interrupted identical one
    (``loaders._resume``): discarded when the server's data moved more than
    :data:`RESUME_WITHIN` since; when used, the watermarks go back to its pages' data time.
    The requests that checked the checkpoint count as the search's."""
    api, cache, since = session.api, session.cache, asked.since
    checked = 0

    def run(checkpoint: Checkpoint | None) -> SyncResult:
        nonlocal checked
        if checkpoint is not None and checkpoint.resumed_from is not None:
            checked += saved_data_time(checkpoint) is not None  # data_moved's request
            first = queries(_SYNC, asked.params, None)[0] | {"Offset": "0", "Limit": str(PAGE_SIZE)}
            moved = data_moved(api, checkpoint, _MARKET.path, first)
            if moved is not None and moved > RESUME_WITHIN:
                checkpoint.discard(
                    f"the server's data moved {moved} since its pages were read (more than "
                    f"{RESUME_WITHIN}); loading again from the start"
                )
        reader = Fetching(api, _MARKET, asked.progress, checkpoint)
        return run_sync(asked, reader, previous, cached=cache is not None,
                        on_invalid=session.on_invalid)  # fmt: skip

    scope = {
        **identity(api, asked.params),
        "history_since": "none" if since is False else iso(since) if since is not None else None,
        "refresh": previous is not None,
        "state_version": STATE_VERSION,
        "schema_version": SCHEMA_VERSION,
    }  # what the checkpoint must match beyond the cache key
    resumed = run_resumable(cache, RESOURCE, key, scope, refresh=asked.refresh, run=run, api=api)
    result, checkpoint = resumed.value, resumed.checkpoint
    result.counts.search += checked + resumed.checks
    if checkpoint is not None and checkpoint.resumed_from is not None and checkpoint.reused:
        _resumed_watermarks(result.state, saved_data_time(checkpoint))
    return result, resumed


def _resumed_watermarks(state: dict[str, Any], saved: str | None) -> None:
    """A resumed first sync mixes pages saved before the interruption with pages read after it,
    maybe days later: its watermarks go back to the saved pages' data time, so the next sync
    asks for everything since the oldest page it holds (applying a change is idempotent)."""
    since = stamp(saved) if saved is not None else None
    if since is None:
        return
    for name in ("entry_watermark", "change_watermark"):
        mark = stamp(state.get(name))
        if mark is None or since < mark:
            state[name] = iso(since)
    logger.info(
        "sync_listings: resumed from pages read at %s; the next sync asks for what changed since",
        iso(since),
    )


def _result(
    key: str | None,
    result: SyncResult,
    resumed: Resumed[SyncResult] | None,
    *,
    from_cache: bool = False,
) -> LoadResult:
    """What a sync returns: its market (a copy) with its requests, quarantine, media and
    changes."""
    return LoadResult(
        resource=RESOURCE,
        rows=len(result.market),
        quarantined=len(result.quarantine),
        requests=result.counts.as_dict()["total"],
        from_cache=from_cache,
        fetched_at=datetime.now(UTC),
        quarantine=result.quarantine,
        media=result.media,
        key=key,
        changes=result.changes,
        resumed_requests=0 if resumed is None else resumed.reused,
        resumed_from=None if resumed is None else resumed.resumed_from,
        frame=result.market.copy(),
    )


def _history_since(value: HistorySince) -> pd.Timestamp | Literal[False] | None:
    """``history_since=`` checked before any request: a UTC timestamp, None or False."""
    if value is None or value is False:
        return value
    allowed = "a date or ISO 8601 timestamp (e.g. '2025-06-01'), None or False"
    when: Any = pd.NaT
    if isinstance(value, date | datetime | str):  # not True: a bool is none of them
        with contextlib.suppress(TypeError, ValueError):
            when = pd.Timestamp(value)
    if when is pd.NaT:
        raise QueryError("history_since", f"{value!r} is not a date", allowed)
    when = when.tz_localize(UTC) if when.tzinfo is None else when.tz_convert(UTC)
    if when > pd.Timestamp.now(UTC) + pd.Timedelta(days=1):
        raise QueryError("history_since", f"{value!r} is in the future", allowed)
    return when
