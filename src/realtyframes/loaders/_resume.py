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

**Identity.** The checkpoint is keyed by host, parameters and account: a server behind the same
URL may meanwhile hold another dataset (a reseeded staging server, a migration). Before the first
page of listings is saved, :func:`note_identity` notes (checkpoint note :data:`IDENTITY_NOTE`)
three of its records (ListingId and OriginalEntryTimestamp, which never changes for a listing) and
the page's data time (:func:`saved_data_time`). On resume, :func:`run_resumable` re-reads those
listings' details (up to 3 requests): one entered at another time, or all of them gone, means
another dataset, and the checkpoint is discarded with a log line. These checks are requests of
the load: :class:`Resumed` counts them (``checks``) and the load adds them to its ``requests``.

>>> result = run_resumable(cache, "listings", key, scope, refresh=False, run=fetch)  # doctest: +SKIP
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Generic, TypeVar

from realtyframes.api import ApiClient
from realtyframes.cache import Checkpoint, ParquetCache
from realtyframes.errors import NotFoundError
from realtyframes.loaders._operations import OPERATIONS
from realtyframes.loaders._page_info import MAX_RESCAN_PAGES, PAGE_SIZE

__all__ = [
    "IDENTITY_NOTE",
    "IDENTITY_RECORDS",
    "RESUME_WITHIN",
    "CheckpointDrift",
    "Resumed",
    "check_identity",
    "data_moved",
    "drift_tolerance",
    "note_identity",
    "run_resumable",
    "saved_data_time",
]

#: The checkpoint note (``Checkpoint.note``) holding the identity of the data it saved:
#: ``{"records": [[ListingId, OriginalEntryTimestamp], ...], "data_time": ISO 8601 | None}``.
IDENTITY_NOTE = "identity"
#: Records of a page noted as the identity (its first, middle and last): a resume re-reads each.
IDENTITY_RECORDS = 3
_DETAIL = OPERATIONS["listing"]
#: How far the server's data may have moved past a resumed sync's saved pages for them to be
#: used: within it, the sync's watermarks go back to the saved pages' data time; beyond it, the
#: checkpoint is discarded (a listing moving back to a status whose pages were saved would be
#: missed: docs/sync.md).
RESUME_WITHIN = timedelta(hours=1)

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


@dataclass(frozen=True)
class Resumed(Generic[T]):
    """What :func:`run_resumable` returns: ``value`` (what ``run`` returned), the checkpoint it
    ran with (None without a cache) and the requests made to check that checkpoint (``checks``:
    the identity's details)."""

    value: T
    checkpoint: Checkpoint | None = None
    checks: int = 0

    @property
    def resumed_from(self) -> datetime | None:
        """When the interrupted load whose answers were reused started (None: not resumed)."""
        checkpoint = self.checkpoint
        return checkpoint.resumed_from if checkpoint is not None else None

    @property
    def reused(self) -> int:
        """Answers taken from the checkpoint instead of being requested again."""
        checkpoint = self.checkpoint
        return checkpoint.reused if checkpoint is not None and self.resumed_from else 0


def run_resumable(
    cache: ParquetCache | None,
    resource: str,
    key: str | None,
    scope: Mapping[str, Any],
    *,
    refresh: bool,
    run: Callable[[Checkpoint | None], T],
    api: ApiClient | None = None,
) -> Resumed[T]:
    """``run(checkpoint)`` with the checkpoint of ``key`` (None without a cache). ``refresh``
    discards an existing one first; so does another dataset behind the URL (the identity the
    checkpoint noted, re-read through ``api``: :func:`check_identity`). When the server's total
    drifted too far from the saved pages, the checkpoint is discarded and ``run`` starts over
    once. The caller removes the checkpoint (``.done()``) once it has stored the result; on an
    error it stays, with every answer received committed."""
    if cache is None or key is None:
        return Resumed(run(None))
    checkpoint = cache.checkpoint(resource, key, scope)
    checks = 0
    if refresh:
        checkpoint.discard("refresh=True")
    elif api is not None and checkpoint.resumed_from is not None:
        changed, checks = check_identity(api, checkpoint)
        if changed is not None:
            checkpoint.discard(f"the data behind {api.cache_host()} changed identity: {changed}")
    try:
        try:
            value = run(checkpoint)
        except CheckpointDrift as drift:
            checkpoint.discard(f"{drift}, beyond what paging mends; loading again from the start")
            value = run(checkpoint)
    except BaseException:
        checkpoint.close()  # every answer received is committed: the next call resumes
        raise
    # all answers are in: the load stores them next, so those the checkpoint's writer has not
    # committed yet are dropped rather than waited for (a kill meanwhile loses them, as any kill)
    checkpoint.close(commit=False)
    return Resumed(value, checkpoint, checks)


# -- identity -----------------------------------------------------------------------------------------


def note_identity(checkpoint: Checkpoint, body: bytes, item_key: str = "listings") -> None:
    """Note the identity of the data (:data:`IDENTITY_NOTE`) from ``body``, a page of listings
    about to be saved, unless one is noted: the ListingId and OriginalEntryTimestamp of its
    first, middle and last records, and its data time (:func:`_page_data_time`). A page without
    such records notes nothing (the next one may)."""
    if item_key != "listings" or checkpoint.noted(IDENTITY_NOTE) is not None:
        return
    try:
        records = json.loads(body).get(item_key)
    except (ValueError, AttributeError):
        return
    if not isinstance(records, list):
        return
    keyed = [
        r for r in records
        if isinstance(r, dict) and isinstance(r.get("ListingId"), str)
        and isinstance(r.get("OriginalEntryTimestamp"), str)
    ]  # fmt: skip
    if not keyed:
        return
    last = len(keyed) - 1
    picked = dict.fromkeys(sorted({0, last // 2, last})[:IDENTITY_RECORDS])
    identity = {
        "records": [[keyed[i]["ListingId"], keyed[i]["OriginalEntryTimestamp"]] for i in picked],
        "data_time": _page_data_time(records),
    }
    checkpoint.note(IDENTITY_NOTE, identity)


def check_identity(api: ApiClient, checkpoint: Checkpoint) -> tuple[str | None, int]:
    """Whether the server still holds the data the checkpoint's pages came from: each noted
    listing's detail is read again (one request each, 3 at most). Returns what differs (a
    listing entered at another time, or all of them gone; None: the same data, or no identity
    noted) and the requests made."""
    identity = checkpoint.noted(IDENTITY_NOTE)
    records = identity.get("records") if isinstance(identity, dict) else None
    if not isinstance(records, list) or not records:
        return None, 0
    gone: list[str] = []
    requests = 0
    for listing_id, entered in records:
        requests += 1
        try:
            now = json.loads(api.get_bytes(_DETAIL.at(str(listing_id)))).get(
                "OriginalEntryTimestamp"
            )
        except NotFoundError:
            gone.append(str(listing_id))
            continue
        if _instant(now) != _instant(entered):
            return f"listing {listing_id} entered {entered} in the saved pages, {now} now", requests
    if len(gone) == len(records):
        return f"listings {', '.join(gone)} of the saved pages are gone", requests
    return None, requests


def data_moved(
    api: ApiClient, checkpoint: Checkpoint, path: str, query: Mapping[str, str]
) -> timedelta | None:
    """How far the server's data moved since the checkpoint's first page of listings was read:
    the data time of that page read again now (``path`` and ``query``: its request; one
    request, counted by the caller whenever a data time was noted: :func:`saved_data_time`) less
    the one noted. None when either has no data time."""
    saved = _instant(saved_data_time(checkpoint))
    if saved is None:
        return None
    try:
        records = json.loads(api.get_bytes(path, dict(query))).get("listings")
    except (ValueError, AttributeError):
        return None
    now = _instant(_page_data_time(records if isinstance(records, list) else []))
    return None if now is None else now - saved


def saved_data_time(checkpoint: Checkpoint) -> str | None:
    """A lower bound of the server's clock when the checkpoint's first page of listings was
    read (ISO 8601), or None: what a resumed sync's watermarks must not pass (``docs/sync.md``).
    """
    identity = checkpoint.noted(IDENTITY_NOTE)
    value = identity.get("data_time") if isinstance(identity, dict) else None
    return value if isinstance(value, str) else None


def _page_data_time(records: Sequence[Any]) -> str | None:
    """A lower bound of the server's clock from a page of listings: their newest
    ModificationTimestamp, and ``OriginalEntryTimestamp + DaysOnMarket`` days of the ones not
    closed (as ``_sync_apply.data_time_of`` reads a frame).

    >>> _page_data_time([{"ModificationTimestamp": "2026-01-02T00:00:00Z"},
    ...                  {"OriginalEntryTimestamp": "2026-01-01T00:00:00Z", "DaysOnMarket": 3,
    ...                   "StandardStatus": "Active"}])
    '2026-01-04T00:00:00+00:00'
    """
    stamps: list[datetime] = []
    for record in records:
        if not isinstance(record, dict):
            continue
        modified = _instant(record.get("ModificationTimestamp"))
        if modified is not None:
            stamps.append(modified)
        entered, days = _instant(record.get("OriginalEntryTimestamp")), record.get("DaysOnMarket")
        if (
            entered is not None
            and isinstance(days, int)
            and record.get("StandardStatus") != "Closed"
        ):
            stamps.append(entered + timedelta(days=days))
    return max(stamps).isoformat() if stamps else None


def _instant(value: Any) -> datetime | None:
    """An ISO 8601 timestamp with its zone, else None."""
    if not isinstance(value, str):
        return None
    try:
        stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return stamp if stamp.tzinfo is not None else None
