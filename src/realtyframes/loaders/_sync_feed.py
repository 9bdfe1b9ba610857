"""The change feed of a sync: ids in chunks as large as the server accepts, paged, in threads.

``feed_pages`` asks ``GET /v1/listings/changes`` for every id (a 400 or 414 on the first chunk
halves the chunk until the server accepts one; one refused among the others is split in halves)
and counts its requests in a :class:`Counts`, the figures ``sync_state(...)["last_requests"]``
reports.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any, TypeVar

from realtyframes.api import ApiClient
from realtyframes.errors import ApiError
from realtyframes.loaders._paging import PAGE_SIZE, fetch_pages, progress_enabled
from realtyframes.loaders.endpoints import ENDPOINTS

__all__ = ["Counts", "feed_pages", "in_threads", "too_many"]

logger = logging.getLogger("realtyframes.sync")

_CHANGES = ENDPOINTS["listing_changes"].path
_OTHER_FEED_PARAM = re.compile(r"\b(Since|ChangeType|Offset|Limit)\b")

T = TypeVar("T")
R = TypeVar("R")


@dataclass
class Counts:
    """Requests of one sync, by kind."""

    search: int = 0
    feed: int = 0
    details: int = 0
    backfill: int = 0  # change-feed requests of a first sync's history
    rejected: int = 0  # change-feed requests refused for too many ids (before halving)
    floor: int = 0  # what the sync had to ask for: the formula of docs/sync.md

    def add(self, other: Counts) -> None:
        self.search += other.search
        self.feed += other.feed
        self.details += other.details
        self.backfill += other.backfill
        self.rejected += other.rejected
        self.floor += other.floor

    def as_dict(self) -> dict[str, int]:
        total = self.search + self.feed + self.details + self.backfill + self.rejected
        return {
            "search": self.search,
            "feed": self.feed,
            "details": self.details,
            "backfill": self.backfill,
            "rejected": self.rejected,
            "total": total,
            "floor": self.floor,
        }


def in_threads(
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


def too_many(exc: ApiError) -> bool:
    """A refusal that may mean "too many ids": a 414, or a 400 that does not blame another
    parameter of the feed (a bad ``Since`` is raised at once instead of halving down to 1)."""
    if exc.status == 414:
        return True
    if exc.status != 400:
        return False
    text = exc.message or ""
    return "ListingIds" in text or not _OTHER_FEED_PARAM.search(text)


def feed_pages(
    api: ApiClient,
    ids: Sequence[str],
    since: str,
    chunk: int,
    counts: Counts,
    progress: bool | None,
) -> tuple[list[bytes], int]:
    """Change-feed pages of ``ids`` (chunked, each chunk paged); returns them and the chunk size.

    The first chunk probes the size: a 400 or 414 halves it and retries until the server accepts
    one (a refused chunk of one id is a real error: raised). The other chunks then go
    concurrently; one refused among them (a longer URL) is split in halves.
    """

    def attempt(
        client: ApiClient, part: Sequence[str], *, split: bool
    ) -> tuple[list[bytes], int, Counts]:
        local = Counts()
        try:
            got = fetch_pages(
                client,
                _CHANGES,
                {"Since": since, "ListingIds": ",".join(part)},
                item_key="changes",
                progress=False,
            )
        except ApiError as exc:
            if not too_many(exc) or len(part) == 1:
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
            pages, _, local = attempt(api, ids[:size], split=False)
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
        results = in_threads(
            api,
            lambda client, part: attempt(client, part, split=True),
            rest,
            on_done=None if bar is None else lambda: bar.update(1),
        )
    finally:
        if bar is not None:
            bar.close()
    for part_pages, _, part_counts in results:
        pages += part_pages
        counts.add(part_counts)
    return pages, _learned(chunk, results)


def _learned(chunk: int, results: Sequence[tuple[list[bytes], int, Counts]]) -> int:
    """The chunk size after the concurrent chunks: what the halves of a refused one were (a short
    last chunk that went through teaches nothing)."""
    halves = [size for _, size, c in results if c.rejected]
    return min(chunk, *halves) if halves else chunk


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
