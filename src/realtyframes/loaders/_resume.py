"""Loads that resume: how the loaders use the cache's checkpoints
(:class:`realtyframes.cache.Checkpoint`).

A long load (a search of many pages, ``details=True``, the contacts, the change feed, a first
sync and its history backfill) saves each answer in a checkpoint as it arrives; the next identical
call serves those answers from it and asks the server only for the rest. The answers are named by
their request (path and query), so a resumed load reads exactly the pages, details and feed
chunks it would have read. Only when the load is stored in the cache is the checkpoint removed.

A resumed search compares the server's total on the pages it fetches now with the total the
saved pages were read under: moved by more than :func:`drift_tolerance`, the saved pages are
too far from today's data for the drift re-reads of paging to mend, so the checkpoint is discarded
and the load starts over (:class:`CheckpointDrift`, caught by :func:`run_resumable`).

>>> result = run_resumable(cache, "listings", key, scope, refresh=False, run=fetch)  # doctest: +SKIP
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from realtyframes.cache import Checkpoint, ParquetCache
from realtyframes.loaders._page_info import MAX_RESCAN_PAGES, PAGE_SIZE

__all__ = ["CheckpointDrift", "drift_tolerance", "page_name", "run_resumable"]

logger = logging.getLogger("realtyframes.loaders")

T = TypeVar("T")


class CheckpointDrift(Exception):
    """The server's total moved too far since the checkpoint's pages were read."""

    def __init__(self, saved: int, now: int) -> None:
        super().__init__(f"the server's total moved from {saved} to {now} since it was saved")
        self.saved, self.now = saved, now


def drift_tolerance(total: int) -> int:
    """Records the total of a query may move by between the saved pages and a resumed read:
    a page, or 5 % of the total, but never more than one drift sweep re-reads (40 pages).

    >>> drift_tolerance(400), drift_tolerance(20_000), drift_tolerance(1_000_000)
    (50, 1000, 2000)
    """
    return max(PAGE_SIZE, min(MAX_RESCAN_PAGES * PAGE_SIZE, total // 20))


def page_name(path: str, query: Mapping[str, Any] | None) -> str:
    """The name of an answer in a checkpoint: its path and sorted query (hashed by the
    checkpoint, never written as it is).

    >>> page_name("/v1/listings", {"Offset": "50", "City": "Miami"})
    '/v1/listings?City=Miami&Offset=50'
    """
    items = sorted((query or {}).items())
    return path + ("?" + "&".join(f"{k}={v}" for k, v in items) if items else "")


def run_resumable(
    cache: ParquetCache | None,
    resource: str,
    key: str | None,
    scope: Mapping[str, Any],
    *,
    refresh: bool,
    run: Callable[[Checkpoint | None], T],
) -> tuple[T, Checkpoint | None]:
    """``run(checkpoint)`` with the checkpoint of ``key`` (None without a cache). ``refresh``
    discards an existing one first. When the server's total drifted too far from the saved
    pages, the checkpoint is discarded and ``run`` starts over once. The caller removes the
    checkpoint (``.done()``) once it has stored the result; on an error it stays."""
    if cache is None or key is None:
        return run(None), None
    checkpoint = cache.checkpoint(resource, key, scope)
    if refresh:
        checkpoint.discard("refresh=True")
    try:
        return run(checkpoint), checkpoint
    except CheckpointDrift as drift:
        checkpoint.discard(f"{drift}, beyond what paging mends; loading again from the start")
        return run(checkpoint), checkpoint
    finally:
        checkpoint.close()
