"""The change feed of a sync: ids in chunks as large as the server accepts, paged, in threads.

``feed_pages`` asks ``GET /v1/listings/changes`` for every id and counts its requests in a
:class:`Counts`, the figures ``sync_state(...)["last_requests"]`` reports. The chunk of ids per
request is learned (:class:`ChunkSize`): it starts at the spec's known-good 100, doubles while the
server accepts it and ids are left to send, halves on a 400 or 414, and is remembered per host
(:func:`read_host_chunk`, :func:`write_host_chunk`).
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from realtyframes._files import PRIVATE_MODE, atomic_write_text
from realtyframes.api import ApiClient
from realtyframes.cache import Checkpoint
from realtyframes.errors import ApiError
from realtyframes.loaders._paging import PAGE_SIZE, fetch_pages, progress_enabled
from realtyframes.loaders.endpoints import ENDPOINTS

__all__ = [
    "DEFAULT_CHUNK",
    "MAX_CHUNK",
    "ChunkSize",
    "Counts",
    "feed_pages",
    "in_threads",
    "read_host_chunk",
    "too_many",
    "write_host_chunk",
]

logger = logging.getLogger("realtyframes.sync")

_CHANGES = ENDPOINTS["listing_changes"].path
#: ListingIds per change-feed request where nothing is known of the host: the spec's known-good
#: size (its ``ListingIds`` "at most 100").
DEFAULT_CHUNK = 100
#: The largest chunk a sync tries: about 16 kB of URL with 10-character ids, the request-line
#: limit of common servers and proxies.
MAX_CHUNK = 1600
#: The file in the cache folder that remembers each host's chunk size.
HOST_CHUNKS_FILE = "feed-chunks.json"
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


@dataclass(frozen=True)
class ChunkSize:
    """ListingIds per change-feed request: ``size`` to send, ``refused`` the smallest size the
    server refused (None: none yet). The size doubles while ``next_size()`` allows it.

    >>> ChunkSize(100).next_size(), ChunkSize(100, refused=200).next_size()
    (200, None)
    """

    size: int = DEFAULT_CHUNK
    refused: int | None = None

    def next_size(self) -> int | None:
        """The size to try next, or None when the server refused it or it is over MAX_CHUNK."""
        grown = self.size * 2
        if grown > MAX_CHUNK or (self.refused is not None and grown >= self.refused):
            return None
        return grown

    def after_refusal(self, size: int) -> ChunkSize:
        """The chunk after ``size`` ids were refused: half of it."""
        refused = size if self.refused is None else min(self.refused, size)
        return ChunkSize(max(1, min(self.size, size // 2)), refused)

    def as_state(self) -> dict[str, int | None]:
        """The members of the sync state (``chunk``, ``chunk_refused``)."""
        return {"chunk": self.size, "chunk_refused": self.refused}

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> ChunkSize:
        """Read back :meth:`as_state` (a state without ``chunk_refused``: None)."""
        refused = state.get("chunk_refused")
        return cls(int(state["chunk"]), int(refused) if isinstance(refused, int) else None)


def read_host_chunk(root: Path | None, host: str) -> ChunkSize | None:
    """The chunk size a sync learned for ``host``, from the cache folder ``root`` (None: none)."""
    if root is None:
        return None
    try:
        known = json.loads((root / HOST_CHUNKS_FILE).read_text(encoding="utf-8"))
        return ChunkSize.from_state(known[host])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_host_chunk(root: Path | None, host: str, chunk: ChunkSize) -> None:
    """Remember ``chunk`` for ``host`` in the cache folder ``root`` (atomic; hosts only, no
    credentials)."""
    if root is None:
        return
    path = root / HOST_CHUNKS_FILE
    try:
        known = json.loads(path.read_text(encoding="utf-8"))
        known = known if isinstance(known, dict) else {}
    except (OSError, ValueError):
        known = {}
    known[host] = chunk.as_state()
    root.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(known, indent=1, sort_keys=True), mode=PRIVATE_MODE)


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
    chunk: ChunkSize,
    counts: Counts,
    progress: bool | None,
    checkpoint: Checkpoint | None = None,
) -> tuple[list[bytes], ChunkSize]:
    """Change-feed pages of ``ids`` (chunked, each chunk paged); returns them and the chunk size
    learned.

    The first chunks go one at a time and probe the size: a 400 or 414 halves it and retries
    until the server accepts one (a refused chunk of one id is a real error: raised); an
    accepted chunk doubles the next one while a whole larger chunk of ids is left
    (:meth:`ChunkSize.next_size`). The other chunks then go concurrently; one refused
    among them (a longer URL) is split in halves. With a ``checkpoint``, pages it holds are
    not asked for again, pages fetched and the chunk size learned are saved in it.
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
                checkpoint=checkpoint,
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

    learn = None if checkpoint is None else lambda c: checkpoint.note("chunk", c.as_state())
    send = lambda part: attempt(api, part, split=False)  # noqa: E731
    pages, done, chunk = _probe(send, ids, chunk, counts, learn)
    rest = [ids[i : i + chunk.size] for i in range(done, len(ids), chunk.size)]
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


def _probe(
    send: Callable[[Sequence[str]], tuple[list[bytes], int, Counts]],
    ids: Sequence[str],
    chunk: ChunkSize,
    counts: Counts,
    learn: Callable[[ChunkSize], None] | None = None,
) -> tuple[list[bytes], int, ChunkSize]:
    """The first chunks, one at a time: halve on a refusal until one is accepted, then double
    while the server accepts and a whole grown chunk of ids is left (a refused probe costs one
    request, once per host: the size is remembered). Returns the pages, how many ids they cover
    and the chunk learned. ``learn`` is told each refusal (a resumed sync starts from it)."""
    pages: list[bytes] = []
    done, size = 0, chunk.size
    while done < len(ids):
        part = ids[done : done + size]
        try:
            got, _, local = send(part)
        except _Refused as refused:
            counts.rejected += 1
            logger.info("change feed refused %d ids (%s); halving the chunk", size, refused.status)
            chunk = chunk.after_refusal(len(part))
            size = chunk.size
            if learn is not None:
                learn(chunk)
            continue
        pages += got
        counts.add(local)
        done += len(part)
        if len(part) < chunk.size:  # a short last chunk teaches nothing
            break
        chunk = ChunkSize(len(part), chunk.refused)
        grown = chunk.next_size()
        if grown is None or len(ids) - done < grown:
            break
        size = grown
    return pages, done, chunk


def _learned(chunk: ChunkSize, results: Sequence[tuple[list[bytes], int, Counts]]) -> ChunkSize:
    """The chunk size after the concurrent chunks: what the halves of a refused one were (a short
    last chunk that went through teaches nothing)."""
    halves = [size for _, size, c in results if c.rejected]
    if not halves:
        return chunk
    smallest = min(halves)
    return ChunkSize(min(chunk.size, smallest), min(chunk.refused or 2 * smallest, 2 * smallest))


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
