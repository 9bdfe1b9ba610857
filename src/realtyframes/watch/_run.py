"""A watch run: sync the scope (once, whatever the processes), compare with the last run, notify.

:func:`run_watches` syncs each distinct scope once (the watches of one scope share it) through
the loaders' ``sync_listings`` on ``client.session``, which holds the scope's lock: a second process syncing the same scope
(a watch run, a report, any ``sync_listings``) waits for the first (``wait`` seconds, then
:class:`~realtyframes.errors.ScopeBusyError`), and when the first completed a sync while it
waited, takes that market from the cache instead of syncing again. Each watch then compares the
scope's listings with its snapshot of the last run through ``rf.market_changes`` and keeps the
rows of the listings its filters choose before or after; :func:`finish_run` is where a run ends,
the one place that returns its :class:`WatchResult`.

>>> results = run_watches(client, store, [watch])  # doctest: +SKIP
>>> results[0].counts["price_cut"]  # doctest: +SKIP
3
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import pandas as pd

from realtyframes._changes import CHANGE_KINDS
from realtyframes.analysis import market_changes
from realtyframes.errors import NotificationTimeout, ScopeBusyError
from realtyframes.loaders import SYNC_WAIT, Run, recorded, sync_listings
from realtyframes.notify import NOTIFY_DEADLINE, Delivery, send
from realtyframes.watch._message import watch_message
from realtyframes.watch._store import SNAPSHOT_COLUMNS, Watch, WatchStore

if TYPE_CHECKING:
    from realtyframes._client import Client

__all__ = ["DEFAULT_WAIT", "WatchResult", "finish_run", "matching", "run_watches", "scope_id"]

logger = logging.getLogger("realtyframes.watch")

#: Seconds a run waits for another process syncing the same scope (then ScopeBusyError): the
#: sync's own default (``loaders.SYNC_WAIT``), whose lock it is.
DEFAULT_WAIT = SYNC_WAIT


@dataclass(frozen=True, eq=False)
class WatchResult:
    """What one watch run did: the changes since the watch's last run (``rf.market_changes``
    rows of its listings), their ``counts`` by kind (every kind of ``CHANGE_KINDS``, 0 when
    none), how many listings match now, whether this process synced the scope (False: another
    run synced it while this one waited) and each notification's :class:`Delivery`.

    ``first_run``: the run only recorded where the watch starts (no changes to report yet).
    ``busy``: another process kept syncing the scope past the wait; this run synced and
    compared nothing (``error`` says so, as the :class:`~realtyframes.errors.ScopeBusyError`
    line). ``ok`` is False when busy or when a notification was not delivered (the next run
    reports these changes again: the watch's snapshot stays where it was).
    """

    name: str
    scope: dict[str, str]
    filters: dict[str, str]
    started: pd.Timestamp
    finished: pd.Timestamp
    first_run: bool
    synced: bool
    matches: int
    changes: pd.DataFrame = field(repr=False)
    counts: dict[str, int]
    deliveries: tuple[Delivery, ...] = ()
    busy: bool = False
    error: str | None = None

    @property
    def total(self) -> int:
        """Changes reported (rows of ``changes``)."""
        return len(self.changes)

    @property
    def sent(self) -> bool:
        """Whether a message was delivered to at least one target."""
        return any(d.ok for d in self.deliveries)

    @property
    def failed(self) -> tuple[str, ...]:
        """The targets (masked) the message did not reach."""
        return tuple(d.target for d in self.deliveries if not d.ok)

    @property
    def ok(self) -> bool:
        return not self.failed and not self.busy


def scope_id(client: Client, scope: Mapping[str, str]) -> str:
    """A stable name of (host, account, scope): the watches of one scope share its sync."""
    api = client.api
    text = json.dumps([api.cache_host(), api.fingerprint, sorted(scope.items())])
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def matching(frame: pd.DataFrame, filters: Mapping[str, str]) -> pd.Series:
    """Which rows of a market frame a watch's filters (Status, Min/MaxListPrice,
    MaxDaysOnMarket) choose; a missing value never matches a bound.

    >>> f = pd.DataFrame({"ListPrice": [5e5, 1e6, None], "StandardStatus": ["Active"] * 3})
    >>> matching(f, {"MaxListPrice": "900000"}).tolist()
    [True, False, False]
    """
    keep = pd.Series(True, index=frame.index)
    if "Status" in filters:
        keep &= (frame["StandardStatus"].astype("string") == filters["Status"]).fillna(False)
    price = pd.to_numeric(frame["ListPrice"], errors="coerce").astype("float64")
    if "MinListPrice" in filters:
        keep &= (price >= float(filters["MinListPrice"])).fillna(False)
    if "MaxListPrice" in filters:
        keep &= (price <= float(filters["MaxListPrice"])).fillna(False)
    if "MaxDaysOnMarket" in filters:
        days = pd.to_numeric(frame["DaysOnMarket"], errors="coerce").astype("float64")
        keep &= (days <= float(filters["MaxDaysOnMarket"])).fillna(False)
    return keep.astype(bool)


def _sync(client: Client, watch: Watch, wait: float) -> tuple[pd.DataFrame, bool]:
    """The scope's market now, and whether this process synced it: the sync holds the scope's
    lock, waits ``wait`` seconds for another run's sync of the scope and takes its market from
    the cache (``from_cache``), or raises ScopeBusyError."""
    synced = sync_listings(client.session, dict(watch.scope), wait=wait)
    return synced.frame, not synced.from_cache


def run_watches(
    client: Client,
    store: WatchStore,
    watches: Sequence[Watch],
    *,
    always: bool = False,
    wait: float = DEFAULT_WAIT,
    deadline: float = NOTIFY_DEADLINE,
) -> list[WatchResult]:
    """Run ``watches`` in order; each distinct scope is synced once. ``always``: notify even when
    nothing changed (and on a first run); ``deadline``: seconds each notification target has in
    all (``notify.NOTIFY_DEADLINE``; past it, not delivered: ``NotificationTimeout``)."""
    markets: dict[str, tuple[pd.DataFrame, bool] | ScopeBusyError] = {}
    results = []
    for watch in watches:
        # one record in the run history per watch run (the sync keeps its own record)
        with recorded(client.session, "watch", watch.name, {**watch.scope, **watch.filters}) as run:
            started = pd.Timestamp.now(tz="UTC")
            key = scope_id(client, watch.scope)
            if key not in markets:
                try:
                    markets[key] = _sync(client, watch, wait)
                except ScopeBusyError as busy:  # the other scopes' watches still run
                    logger.info("watch %s: %s", watch.name, busy)  # in its result, for the caller
                    markets[key] = busy
            found = markets[key]
            if isinstance(found, ScopeBusyError):
                result = finish_run(store, watch, None, None, started=started, busy=found)
            else:
                market, synced = found
                result = _compare(
                    store, watch, market, synced, started, always=always, deadline=deadline
                )
            _note(run, result)
        results.append(result)
    return results


def _note(run: Run, result: WatchResult) -> None:
    """The watch's counts in its run record: rows = listings matching, new / removed, changed =
    the other kinds; a busy scope or an undelivered message is a failed run."""
    run.rows = result.matches
    run.counts = {
        "new": result.counts["new"],
        "removed": result.counts["removed"],
        "changed": sum(n for kind, n in result.counts.items() if kind not in ("new", "removed")),
    }
    if result.busy:
        run.failure = "ScopeBusyError"
    elif any(isinstance(d.error, NotificationTimeout) for d in result.deliveries):
        run.failure = "NotificationTimeout"
    elif result.failed:
        run.failure = "NotificationError"


def _compare(
    store: WatchStore,
    watch: Watch,
    market: pd.DataFrame,
    synced: bool,
    started: pd.Timestamp,
    *,
    always: bool,
    deadline: float = NOTIFY_DEADLINE,
) -> WatchResult:
    now = market[[c for c in SNAPSHOT_COLUMNS if c in market.columns]].reset_index(drop=True)
    before = store.read_snapshot(watch.name)
    first = before is None
    chosen = matching(now, watch.filters)
    if before is None:
        changes = market_changes(now, now)  # none: the typed empty frame
    else:
        changes = market_changes(before, now)
        if watch.filters:
            ids = set(now.loc[chosen, "ListingId"]) | set(
                before.loc[matching(before, watch.filters), "ListingId"]
            )
            changes = changes[changes["ListingId"].isin(ids)].reset_index(drop=True)
    deliveries: tuple[Delivery, ...] = ()
    if watch.notify and (always or len(changes)):
        message = watch_message(watch, changes, int(chosen.sum()), first_run=first)
        deliveries = tuple(send(list(watch.notify), message, deadline=deadline))
    return finish_run(
        store,
        watch,
        now,
        changes,
        started=started,
        first_run=first,
        synced=synced,
        matches=int(chosen.sum()),
        deliveries=deliveries,
    )


_EMPTY_MARKET: dict[str, list[Any]] = {"ListingId": [], "ListPrice": [], "StandardStatus": []}


def finish_run(
    store: WatchStore,
    watch: Watch,
    market: pd.DataFrame | None,
    changes: pd.DataFrame | None,
    *,
    started: pd.Timestamp,
    first_run: bool = False,
    synced: bool = False,
    matches: int = 0,
    deliveries: tuple[Delivery, ...] = (),
    busy: ScopeBusyError | None = None,
) -> WatchResult:
    """Where every watch run ends, whatever its outcome: the snapshot advances (unless the scope
    was busy or a notification failed, so the next run reports these changes), ``last_run`` is
    recorded, the result is returned."""
    if changes is None:  # busy: nothing compared
        empty = pd.DataFrame(_EMPTY_MARKET).astype({"ListingId": "string"})
        changes = market_changes(empty, empty)
    result = WatchResult(
        name=watch.name,
        scope=dict(watch.scope),
        filters=dict(watch.filters),
        started=started,
        finished=pd.Timestamp.now(tz="UTC"),
        first_run=first_run,
        synced=synced,
        matches=matches,
        changes=changes,
        counts=_counts(changes),
        deliveries=deliveries,
        busy=busy is not None,
        error=_error(busy, deliveries),
    )
    if result.ok and market is not None:
        store.write_snapshot(watch.name, market)
        with store.editing() as watches:
            if watch.name in watches:
                watches[watch.name] = replace(
                    watches[watch.name], last_run=result.finished.isoformat()
                )
    logger.info(
        "watch %s: %d listings match, %d changes (%s)%s",
        watch.name,
        matches,
        result.total,
        ", ".join(f"{k} {v}" for k, v in result.counts.items() if v) or "none",
        f"; not delivered to {', '.join(result.failed)}" if result.failed else "",
    )
    return result


def _error(busy: ScopeBusyError | None, deliveries: Sequence[Delivery]) -> str | None:
    """A run's error line: the busy scope, else the first typed failure of a delivery."""
    if busy is not None:
        return f"{type(busy).__name__}: {busy}"
    late = next((d.error for d in deliveries if d.error is not None), None)
    return None if late is None else f"{type(late).__name__}: {late}"


def _counts(changes: pd.DataFrame) -> dict[str, int]:
    found: Any = changes["change"].astype("string").value_counts()
    return {kind: int(found.get(kind, 0)) for kind in CHANGE_KINDS}
