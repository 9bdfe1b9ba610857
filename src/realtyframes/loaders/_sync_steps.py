"""The sync runner: one loop over the sync an endpoint declares (:class:`~realtyframes.loaders.
_base.Sync`, the listings row's ``sync``), reading the server through a :class:`Reader`.

- :func:`run_first`: one search per partition value (each status) -> the market; then, unless
  the history is kept already, the change feed over every key since the oldest entry (the
  history backfill).
- :func:`run_later`: the new records per partition value since the entry watermark; the change
  feed over the keys not terminal since the change watermark, applied by the declared ``apply``
  step; the detail of each record it closed.

:class:`Fetching` reads for real (pages saved in a load's checkpoint, feed chunks of the
declared 100 ids split once on a 400/414, every request in the client's one pool);
``realtyframes.loaders._plan`` runs the same two functions with a counting reader, so a plan
walks the requests the sync makes.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, fields
from typing import Any, Protocol, TypeVar

import pandas as pd

from realtyframes._changes import sync_changes
from realtyframes.api import ApiClient
from realtyframes.cache import Checkpoint
from realtyframes.errors import ApiError, NotFoundError
from realtyframes.loaders._answers import check_echo
from realtyframes.loaders._base import Endpoint, Sync, ids_in
from realtyframes.loaders._page_info import _Bar, progress_enabled
from realtyframes.loaders._paging import PAGE_SIZE, fetch_pages, fetch_pages_many
from realtyframes.loaders._sync_apply import (
    append_history,
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
    wall_clock,
    watermarks,
)
from realtyframes.schemas import OnInvalid, empty_frame, validate

__all__ = [
    "STATE_VERSION",
    "Counts",
    "Fed",
    "Fetching",
    "Found",
    "Reader",
    "SyncResult",
    "chunks",
    "pages_of",
    "run_first",
    "run_later",
    "too_many",
]

logger = logging.getLogger("realtyframes.sync")
T = TypeVar("T")
R = TypeVar("R")

#: Version of the sync state kept in the entry's metadata; another version means a full load.
STATE_VERSION = 1


@dataclass
class Counts:
    """Requests of one sync, by kind; ``floor``: what it had to ask for (docs/sync.md)."""

    search: int = 0
    feed: int = 0
    details: int = 0
    backfill: int = 0  # change-feed requests of a first sync's history
    rejected: int = 0  # change-feed requests refused for too many ids (before splitting)
    floor: int = 0

    def as_dict(self) -> dict[str, int]:
        counted = {f.name: getattr(self, f.name) for f in fields(self)}
        counted["total"] = sum(v for k, v in counted.items() if k != "floor")
        return counted


@dataclass
class Found:
    """A paged search: its bodies, the requests it took and the server's total."""

    pages: list[bytes]
    requests: int
    total: int


@dataclass
class Fed:
    """The change feed over some ids: its bodies, requests, refusals and floor."""

    pages: list[bytes] = field(default_factory=list)
    requests: int = 0
    rejected: int = 0
    floor: int = 0


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

    def search(self, queries: Sequence[Mapping[str, str]]) -> list[Found]: ...
    def keys(self, market: pd.DataFrame, found: Sequence[Found]) -> list[str]: ...
    def feed(self, ids: Sequence[str], since: str, chunk: int) -> Fed: ...
    def details(self, ids: Sequence[str]) -> tuple[list[bytes], list[str], int]: ...


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


def _queries(sync: Sync, params: Mapping[str, str], since: str | None) -> list[dict[str, str]]:
    """One search per partition value (each status), in the declared static order."""
    name, values = sync.partition
    search = {**params, "Sort": sync.sort, **({"Since": since} if since is not None else {})}
    return [{**search, name: value} for value in values]


def _searched(
    endpoint: Endpoint, reader: Reader, queries: list[dict[str, str]], counts: Counts,
    on_invalid: OnInvalid,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, list[Found]]:  # fmt: skip
    """The searches read, shaped and validated: (valid, invalid, media, what was found)."""
    found = reader.search(queries)
    counts.search += sum(f.requests for f in found)
    counts.floor += sum(pages_of(f.total) for f in found)
    assert endpoint.shape is not None
    shaped = endpoint.shape([body for f in found for body in f.pages])
    valid, bad = validate(shaped.frame, endpoint.model, on_invalid=on_invalid)
    media = shaped.media if shaped.media is not None else shaped.frame.iloc[:0]
    return valid, bad, media, found


def _fed(sync: Sync, fed: Fed, on_invalid: OnInvalid) -> pd.DataFrame:
    """The feed's records, validated (invalid records are quarantined with a warning)."""
    if not fed.pages:
        return empty_frame(sync.feed.model)
    assert sync.feed.shape is not None
    changes, _ = validate(
        sync.feed.shape(fed.pages).frame,
        sync.feed.model,
        on_invalid="raise" if on_invalid == "raise" else "quarantine",
    )
    return changes


def run_first(
    endpoint: Endpoint,
    reader: Reader,
    params: Mapping[str, str],
    *,
    chunk: int,
    previous: SyncResult | None,
    since: pd.Timestamp | None,
    backfill: bool,
    on_invalid: OnInvalid,
) -> SyncResult:
    """A full load (every partition value) and, with ``backfill`` and no history kept yet
    (``previous``: a refresh keeps its history), the change feed over every key since ``since``
    or the oldest entry: the history."""
    sync = endpoint.sync
    assert sync is not None
    counts = Counts()
    valid, bad, media, found = _searched(
        endpoint, reader, _queries(sync, params, None), counts, on_invalid
    )
    market = tidy(valid)
    now = wall_clock()
    state: dict[str, Any] = {
        "version": STATE_VERSION, "mode": "full", "chunk": chunk, "syncs": 1,
        "first_sync": now, "last_sync": now, **watermarks(market, bad, None, None),
        "data_time": iso(data_time_of(market, None)),
    }  # fmt: skip
    history = empty_frame(sync.feed.model)
    if previous is not None:  # refresh: the history so far stays
        history = previous.history
        state["syncs"] = previous.state.get("syncs", 0) + 1
        state["first_sync"] = previous.state.get("first_sync")
    result = SyncResult(
        market, media_of(media, market), bad.reset_index(drop=True), history, state, counts
    )
    oldest = market[sync.cursor[0]].min() if len(market) else None
    start = since if since is not None else None if pd.isna(oldest) else pd.Timestamp(oldest)
    if backfill and not len(history) and len(market) and start is not None:
        fed = reader.feed(reader.keys(market, found), str(iso(start)), chunk)
        counts.backfill += fed.requests
        counts.rejected += fed.rejected
        counts.floor += fed.floor
        state["history_since"] = iso(start)
        result.history = append_history(history, _fed(sync, fed, on_invalid))
        logger.info("sync_listings: backfilled %d changes since %s in %d requests",
                    len(result.history), iso(start), fed.requests)  # fmt: skip
    return result


def run_later(
    endpoint: Endpoint,
    reader: Reader,
    previous: SyncResult,
    params: Mapping[str, str],
    *,
    chunk: int,
    on_invalid: OnInvalid,
) -> SyncResult:
    """An incremental sync from ``previous``: new records, the change feed applied, closings."""
    sync = endpoint.sync
    assert sync is not None
    counts = Counts()
    state = dict(previous.state)
    state.pop("chunk_refused", None)  # what earlier releases learned: no longer kept
    queries = _queries(sync, params, state.get("entry_watermark"))
    new_valid, new_bad, new_media, _ = _searched(endpoint, reader, queries, counts, on_invalid)
    fresh = set(new_valid[sync.key]) | set(new_bad[sync.key].dropna())
    market = previous.market
    if fresh:  # the fresh copy of a record wins over a cached one
        market = market[~market[sync.key].isin(list(fresh))]
    market = concat([market, new_valid])

    changes = empty_frame(sync.feed.model)
    ids = _feed_ids(sync, previous.market, new_valid)
    if ids and state.get("change_watermark") is not None:
        fed = reader.feed(ids, state["change_watermark"], chunk)
        counts.feed += fed.requests
        counts.rejected += fed.rejected
        counts.floor += fed.floor
        changes = _fed(sync, fed, on_invalid)
    market, touched, closing = sync.apply(market, changes)

    removed: list[str] = []
    if closing:
        bodies, removed, asked = reader.details(closing)
        counts.details += asked
        counts.floor += len(closing)
        market = close_data(market, bodies, removed)
        touched = [i for i in touched if i not in set(removed)]

    data_time = latest(
        stamp(state.get("data_time")),
        data_time_of(new_valid, changes),
        max_stamp(market[sync.cursor[1]]),
    )
    market = grow_days_on_market(market, data_time)
    quarantine = previous.quarantine
    if fresh and len(quarantine):
        quarantine = quarantine[~quarantine[sync.key].isin(list(fresh))]
    market, quarantine = _revalidate(
        endpoint, market, concat([quarantine, new_bad]), touched, on_invalid
    )
    old_media = previous.media[~ids_in(previous.media[sync.key], [*fresh, *removed])]
    state.update(
        {
            "mode": "incremental", "chunk": chunk, "syncs": int(state.get("syncs", 0)) + 1,
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


def _revalidate(
    endpoint: Endpoint,
    market: pd.DataFrame,
    quarantine: pd.DataFrame,
    touched: list[str],
    on_invalid: OnInvalid,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Rows the changes touched, validated again: invalid ones move to the quarantine."""
    key = endpoint.sync.key if endpoint.sync is not None else "ListingId"
    if touched:
        rows = market.loc[market[key].isin(touched)]
        _, bad = validate(rows, endpoint.model, on_invalid=on_invalid)
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


# -- reading for real --------------------------------------------------------------------------------


class Fetching:
    """The runner's :class:`Reader` that makes the requests, through ``api``'s one bounded pool.
    With a ``checkpoint``, pages it holds are not asked for again and pages fetched are saved."""

    def __init__(
        self,
        api: ApiClient,
        endpoint: Endpoint,
        progress: bool | None,
        checkpoint: Checkpoint | None = None,
    ) -> None:
        assert endpoint.sync is not None and endpoint.details is not None
        self.api, self.endpoint, self.sync = api, endpoint, endpoint.sync
        self.progress, self.checkpoint = progress, checkpoint

    def search(self, queries: Sequence[Mapping[str, str]]) -> list[Found]:
        """Each query paged; one after the other when saved in a checkpoint (its first page notes
        the data's identity), else all at once."""
        item = str(self.endpoint.item_key)
        name = self.sync.partition[0]
        if self.checkpoint is None:
            paged = fetch_pages_many(self.api, self.endpoint.path, queries, item_key=item,
                                     progress=self.progress, desc="market")  # fmt: skip
        else:
            paged = [
                fetch_pages(self.api, self.endpoint.path, q, item_key=item, progress=self.progress,
                            desc=f"market: {q[name]}", checkpoint=self.checkpoint)
                for q in queries
            ]  # fmt: skip
        return [Found(p.pages, p.requests, p.total) for p in paged]

    def keys(self, market: pd.DataFrame, found: Sequence[Found]) -> list[str]:
        return market[self.sync.key].tolist()

    def feed(self, ids: Sequence[str], since: str, chunk: int) -> Fed:
        """Change-feed pages of ``ids`` in chunks of ``chunk`` ids (each chunk paged),
        concurrently; a chunk refused for too many ids (:func:`too_many`) is split in halves
        once, a half refused again (or any other error) is raised."""
        feed = self.sync.feed

        def attempt(part: Sequence[str], split: bool = True) -> Fed:
            query = {"Since": since, self.sync.feed_ids: ",".join(part)}
            try:
                got = fetch_pages(self.api, feed.path, query, item_key=str(feed.item_key),
                                  progress=False, checkpoint=self.checkpoint)  # fmt: skip
            except ApiError as exc:
                if not split or len(part) == 1 or not too_many(exc):
                    raise
                logger.info(
                    "change feed refused %d ids (%s); splitting them", len(part), exc.status
                )
                half = (len(part) + 1) // 2
                a, b = attempt(part[:half], False), attempt(part[half:], False)
                return Fed(a.pages + b.pages, a.requests + b.requests, 1, a.floor + b.floor)
            return Fed(got.pages, got.requests, 0, pages_of(got.total))

        parts = chunks(ids, chunk)
        bar = _Bar(progress_enabled(self.progress), "market: changes")
        bar.plan(len(parts))
        fed = Fed()
        for part in in_threads(self.api, attempt, parts, bar):
            fed.pages += part.pages
            fed.requests += part.requests
            fed.rejected += part.rejected
            fed.floor += part.floor
        return fed

    def details(self, ids: Sequence[str]) -> tuple[list[bytes], list[str], int]:
        """The details of ``ids``, concurrently (a detail of another record than the one asked
        for is retried, then raised); on a 404, one by one, dropping those gone: (bodies, gone,
        requests)."""
        detail = self.endpoint.details
        assert detail is not None
        requests = [(detail.at(str(i)), None) for i in ids]
        try:
            bodies = self.api.get_many(requests, raw=True,
                                       check=lambda n, body: check_echo(body, self.sync.key,
                                                                        str(ids[n])))  # fmt: skip
            return list(bodies), [], len(ids)
        except NotFoundError:
            pass
        found: list[bytes] = []
        gone: list[str] = []
        for (path, _), key in zip(requests, ids, strict=True):
            try:
                found.append(self.api.get_bytes(path, check=_echo(self.sync.key, str(key))))
            except NotFoundError:
                gone.append(key)
        return found, gone, 2 * len(ids)


def _echo(field: str, asked: str) -> Callable[[bytes], None]:
    return lambda body: check_echo(body, field, asked)


def in_threads(
    api: ApiClient, work: Callable[[T], R], items: Sequence[T], bar: _Bar | None = None
) -> list[R]:
    """``work(item)`` for each item in threads, results in order. The threads only coordinate:
    every request goes through ``api``'s one bounded pool (``max_concurrency``); the first
    failure cancels what has not started and is raised."""
    workers = max(1, min(len(items), api.max_concurrency))
    pool = ThreadPoolExecutor(workers, thread_name_prefix="realtyframes-sync")
    try:
        futures = [pool.submit(work, item) for item in items]
        for future in as_completed(futures):
            future.result()  # raises the first failure
            if bar is not None:
                bar.update()
        return [future.result() for future in futures]
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        if bar is not None:
            bar.close()
