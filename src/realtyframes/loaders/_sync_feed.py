"""The change feed of a sync: ids in chunks of the spec's 100, paged, in threads.

``feed_pages`` asks ``GET /v1/listings/changes`` for every id and counts its requests in a
:class:`Counts`, the figures ``sync_state(...)["last_requests"]`` reports. A chunk holds the
spec's ``MAX_LISTING_IDS`` ids (100, :data:`DEFAULT_CHUNK`), so a sync against a server that
follows the spec gets no 400; a chunk refused with a 400 or 414 (a server, or a proxy's URL limit,
stricter than the spec) is split in halves once, and a half refused again is raised. Nothing is
learned or remembered between syncs.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any, TypeVar

from realtyframes.api import MAX_LISTING_IDS, ApiClient
from realtyframes.cache import Checkpoint
from realtyframes.errors import ApiError
from realtyframes.loaders._paging import PAGE_SIZE, fetch_pages, progress_enabled
from realtyframes.loaders.endpoints import ENDPOINTS

__all__ = ["DEFAULT_CHUNK", "Counts", "feed_pages", "in_threads", "too_many"]

logger = logging.getLogger("realtyframes.sync")

_CHANGES = ENDPOINTS["listing_changes"].path
#: ListingIds per change-feed request: the spec's ``ListingIds`` "at most 100".
DEFAULT_CHUNK = MAX_LISTING_IDS

T = TypeVar("T")
R = TypeVar("R")


@dataclass
class Counts:
    """Requests of one sync, by kind."""

    search: int = 0
    feed: int = 0
    details: int = 0
    backfill: int = 0  # change-feed requests of a first sync's history
    rejected: int = 0  # change-feed requests refused for too many ids (before splitting)
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
    """``work(api, item)`` for each item in threads, results in order. The threads only
    coordinate: every request they make goes through ``api``'s one bounded pool, so the chunks
    of the change feed and their pages share the client's ``max_concurrency`` with each other
    (no copies of the client, no pool of its own); the first failure cancels what has not
    started and is raised."""
    workers = max(1, min(len(items), api.max_concurrency))
    if workers <= 1:
        results = []
        for item in items:
            results.append(work(api, item))
            if on_done is not None:
                on_done()
        return results
    pool = ThreadPoolExecutor(workers, thread_name_prefix="realtyframes-sync")
    try:
        futures = [pool.submit(work, api, item) for item in items]
        for future in as_completed(futures):
            future.result()  # raises the first failure
            if on_done is not None:
                on_done()
        return [future.result() for future in futures]
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def too_many(exc: ApiError) -> bool:
    """A refusal that may mean "too many ids", read from the error's type and attributes (never
    its message): a 414, or a 400 ``bad_request``. The chunk is split once; a half refused again
    is raised, so a 400 about another parameter costs two more requests, then surfaces.

    >>> from realtyframes.errors import BadRequestError
    >>> too_many(BadRequestError("Invalid", status=400, code="bad_request"))
    True
    """
    return exc.status == 414 or (exc.status == 400 and exc.code == "bad_request")


def feed_pages(
    api: ApiClient,
    ids: Sequence[str],
    since: str,
    chunk: int,
    counts: Counts,
    progress: bool | None,
    checkpoint: Checkpoint | None = None,
) -> list[bytes]:
    """Change-feed pages of ``ids`` in chunks of ``chunk`` ids (each chunk paged), concurrently.
    A chunk refused for too many ids (:func:`too_many`) is split in halves once (counted in
    ``counts.rejected``); a half refused again, or any other error, is raised. With a
    ``checkpoint``, pages it holds are not asked for again and pages fetched are saved in it.
    """

    def attempt(
        client: ApiClient, part: Sequence[str], split: bool = True
    ) -> tuple[list[bytes], Counts]:
        local = Counts()
        try:
            got = fetch_pages(
                client,
                _CHANGES,
                {"Since": since, "ListingIds": ",".join(part)},
                item_key="changes",
                progress=False,
                checkpoint=checkpoint,
            )
        except ApiError as exc:
            if not split or len(part) == 1 or not too_many(exc):
                raise
            local.rejected += 1
            logger.info("change feed refused %d ids (%s); splitting them", len(part), exc.status)
            half = (len(part) + 1) // 2
            pages: list[bytes] = []
            for piece in (part[:half], part[half:]):
                piece_pages, piece_counts = attempt(client, piece, split=False)
                pages += piece_pages
                local.add(piece_counts)
            return pages, local
        local.feed += got.requests
        local.floor += max(1, math.ceil(got.total / PAGE_SIZE))
        return got.pages, local

    parts = [ids[i : i + chunk] for i in range(0, len(ids), chunk)]
    if not parts:
        return []
    bar = _bar(progress, len(parts), "market: changes")
    try:
        results = in_threads(
            api, attempt, parts, on_done=None if bar is None else lambda: bar.update(1)
        )
    finally:
        if bar is not None:
            bar.close()
    pages: list[bytes] = []
    for part_pages, part_counts in results:
        pages += part_pages
        counts.add(part_counts)
    return pages


def _bar(progress: bool | None, total: int, desc: str) -> Any:
    if total <= 1 or not progress_enabled(progress):
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="chunk", leave=False)
