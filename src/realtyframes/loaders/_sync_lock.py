"""One sync of a scope at a time, whatever the processes: the scope's lock around a sync.

:func:`realtyframes.loaders._sync.sync_listings` holds the scope's lock (``.rf/locks/market.sync/
<key>.lock`` in the cache, an ``flock`` the kernel releases when its process dies, even by
SIGKILL; its holder's PID, host and start are in the cache's ``locks`` table meanwhile) from its
read of the cached market to its write. A second call on the same scope, in
another process or thread, waits for it (``wait`` seconds, then :class:`ScopeBusyError`); when
the entry it read before waiting was replaced meanwhile (another sync completed), it returns
that market from the cache (:func:`changes_between` gives what changed) instead of syncing again.

Lock order (no cycle, so no deadlock): the scope's lock, then the entry's write lock (taken by
``ParquetCache.write`` for the files' replacement only). The checkpoint of an interrupted first
sync is read and written only under the scope's lock, so one process at a time resumes it.

>>> with scope_lock(cache.job_lock("market", key), "City=Miami", wait=900):  # doctest: +SKIP
...     ...  # one sync of City=Miami at a time
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from realtyframes._changes import sync_changes
from realtyframes.cache import hold_scope, is_locked
from realtyframes.errors import CacheLockTimeout, QueryError, ScopeBusyError

__all__ = ["SYNC_WAIT", "changes_between", "check_wait", "describe_scope", "scope_lock"]

logger = logging.getLogger("realtyframes.sync")

#: Seconds a sync waits for another one of the same scope (then ScopeBusyError); None: no limit.
SYNC_WAIT = 900.0
_HISTORY_KEY = ["ListingId", "ChangeType", "ChangeTimestamp"]


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
    """Hold the scope's lock at ``path`` for the block, waiting ``wait`` seconds (None: no
    limit) for another holder; past it, :class:`ScopeBusyError` naming the scope ``shown``."""
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
    removed: Sequence[str] = sorted(known - kept)
    return sync_changes(feed, new, list(removed), before, after)
