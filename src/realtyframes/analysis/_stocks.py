"""Point-in-time stocks for :func:`realtyframes.analysis.trends.market_trends`.

Each listing's status is a timeline: Active from its ``OriginalEntryTimestamp``, then each
``status_change`` of the history at its ``ChangeTimestamp`` (and Closed at ``CloseDate`` when the
history has no closing). A listing counts as Active (Pending) at a period's end when its status at
that instant is Active (Pending): it entered before, and had not gone Pending or Closed by then.
Without a history the timeline is estimated: Active from entry, the current status from
``MajorChangeTimestamp`` (``CloseDate`` for Closed listings).

Listings are numbered by their row in :class:`~._trends_kernel.Listings` (``pos``) and times are
naive UTC microseconds (int64), so nothing compares strings or timezone-aware objects per row.
Events are put in order per listing by one sort of a single integer key (:func:`event_order`);
stocks are counted with a difference array per market over the period ends (:func:`period_of`
+ ``cumsum``): the cost grows with the number of status intervals, not listings × periods.

>>> import numpy as np
>>> event_order(np.array([1, 0, 1]), np.array([5, 9, 2])).tolist()  # by listing, then time
[1, 2, 0]
"""

from __future__ import annotations

import threading

import numpy as np

from realtyframes.analysis._order import radix_order
from realtyframes.analysis._trends_kernel import (
    ACTIVE,
    CLOSED,
    NAT,
    PENDING,
    UNDER_CONTRACT,
    History,
    Listings,
)

__all__ = [
    "Intervals",
    "Spans",
    "active_at",
    "distinct",
    "event_order",
    "period_of",
    "status_intervals",
    "stocks_at",
]

#: The end of an interval that has not ended (microseconds of 9999-12-31).
NEVER = np.datetime64("9999-12-31T00:00:00", "us").view("int64")
_LIMIT = 2**62
_DAY = 86_400_000_000  # microseconds


def period_of(at: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The first period whose end is at or after each time: ``np.searchsorted(ends, at)``, for
    times in microseconds (NaT included). Periods of whole days that follow each other without
    gaps (weeks, months, quarters) are looked up by day in a table, 4x faster than a binary
    search; other periods are searched."""
    span = int(ends[-1]) + 1 - int(starts[0]) if len(ends) else -1
    days, rest = divmod(span, _DAY)
    aligned = bool(np.all(starts % _DAY == 0)) and bool(np.all(ends[:-1] + 1 == starts[1:]))
    if span <= 0 or rest or not aligned or days > 1_000_000:
        return np.searchsorted(ends, at, side="left")
    last_instant = starts[0] + _DAY * np.arange(1, days + 1) - 1  # of each day
    table = np.concatenate([[0], np.searchsorted(ends, last_instant), [len(ends)]])
    day = np.maximum(at, starts[0] - _DAY)  # one temporary, worked on in place
    day -= starts[0] - _DAY
    day //= _DAY  # 0 before the first period
    np.minimum(day, days + 1, out=day)
    return table.take(day, out=day, mode="clip")  # in range: no check, no buffer


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values, sorted (one sort, none when they come in order; numpy's hash-based
    ``unique`` is slower here)."""
    ordered = values if bool(np.all(values[1:] >= values[:-1])) else np.sort(values)
    keep = np.ones(len(ordered), dtype=bool)
    keep[1:] = ordered[1:] != ordered[:-1]
    return ordered[keep]


def event_order(pos: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The stable order of events by listing, then time (as ``np.lexsort((at, pos))``).

    A history sorted by time (as the sync keeps it) needs only a stable sort by listing, and so
    does one whose records of each listing come in time order (records appended by kind, for
    instance: checked after the sort); else listing and time are one integer key (in
    microseconds, or a coarser unit when the product would not fit, checked afterwards: an
    order a coarser unit cannot tell falls back to ``lexsort``)."""
    if len(pos) < 2:
        return np.arange(len(pos))
    if bool(np.all(at[1:] >= at[:-1])):
        return radix_order(pos)
    if _few_runs(pos):  # listings in a few runs: the merge sort by listing costs little
        order = np.argsort(pos, kind="stable")
        if _in_time_order(pos[order], at[order]):
            return order
    low = int(at.min())
    span, rows = int(at.max()) - low, int(pos.max()) + 1
    unit = next((u for u in (1, 1_000, 1_000_000) if rows * (span // u + 1) < _LIMIT), 0)
    if not unit:
        return np.lexsort((at, pos))
    order = np.argsort(pos * (span // unit + 1) + (at - low) // unit, kind="stable")
    if unit > 1 and not _in_time_order(pos[order], at[order]):
        return np.lexsort((at, pos))
    return order


def _few_runs(values: np.ndarray) -> bool:
    """Whether ``values`` descend at most once per 1,024 (a few ascending runs)."""
    return int(np.count_nonzero(values[1:] < values[:-1])) <= len(values) // 1024


def _in_time_order(pos: np.ndarray, at: np.ndarray) -> bool:
    """Whether the events ordered by listing ``pos`` are in time order within each listing."""
    return not bool(np.any((at[1:] < at[:-1]) & (pos[1:] == pos[:-1])))


class Spans:
    """The status intervals of one status (:meth:`Intervals.of`), by listing then start: the
    listing's row ``pos``, its ``market``, ``start`` and ``stop``."""

    def __init__(self, pos: np.ndarray, market: np.ndarray, start: np.ndarray, stop: np.ndarray,
                 n_listings: int) -> None:  # fmt: skip
        self.pos, self.market, self.start, self.stop = pos, market, start, stop
        self.n_listings = n_listings
        self._runs: tuple[np.ndarray, np.ndarray] | None = None
        self._lock = threading.Lock()

    def lookup(self, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where each listing ``pos``'s run of intervals starts and its length (``searchsorted``
        of ``pos`` on both sides; the runs of every listing counted once, as int32, on the first
        call)."""
        with self._lock:
            if self._runs is None:
                count = np.bincount(self.pos, minlength=self.n_listings).astype("int32")
                before = np.cumsum(count, dtype="int32")
                before -= count
                self._runs = before, count
        before, count = self._runs
        return before[pos], count[pos]


class Intervals:
    """Status intervals ``[start, stop)``, sorted by listing then start: the listing's row
    ``pos``, its ``market`` code, the ``status`` code, ``start`` and ``stop`` (microseconds).
    :meth:`of` gives those of one status, gathered once for every metric that reads them."""

    def __init__(
        self,
        pos: np.ndarray,
        market: np.ndarray,
        status: np.ndarray,
        start: np.ndarray,
        stop: np.ndarray,
        n_listings: int = 0,
    ) -> None:
        self.pos, self.market, self.status, self.start, self.stop = pos, market, status, start, stop
        self.n_listings = max(n_listings, int(pos[-1]) + 1 if len(pos) else 0)
        self._spans: dict[int, Spans] = {}
        self._lock = threading.Lock()  # the metrics' two threads ask for the same spans

    def __len__(self) -> int:
        return len(self.pos)

    def release(self, code: int) -> None:
        """Forget the intervals of status ``code`` (memory back for the metrics after them; a
        later :meth:`of` gathers them again)."""
        with self._lock:
            self._spans.pop(code, None)

    def of(self, code: int) -> Spans:
        """The intervals of status ``code`` (computed once, then shared)."""
        with self._lock:
            spans = self._spans.get(code)
            if spans is None:
                chosen = np.flatnonzero(self.status == code)
                pos, market = self.pos[chosen], self.market[chosen]
                start, stop = self.start[chosen], self.stop[chosen]
                spans = self._spans[code] = Spans(pos, market, start, stop, self.n_listings)
            return spans


def _events(listings: Listings, history: History | None) -> tuple[np.ndarray, ...]:
    """The status events after entry (listing row, time, new status), not yet in order."""
    status, closed_at = listings.status, listings.closed_at
    has_close = (status == CLOSED) & (closed_at != NAT)
    if history is None:  # estimated: the current status since its last major change
        moved = status != ACTIVE
        at = np.where(has_close, closed_at, listings.major)
        pos, times, codes = np.flatnonzero(moved), at[moved], status[moved]
    else:
        s = history.is_status
        closing_seen = np.zeros(len(listings), dtype=bool)
        closing_seen[history.pos[s & (history.status == CLOSED)]] = True
        extra = has_close & ~closing_seen  # a closing the history does not show
        pos, times, codes = history.pos[s], history.at[s], history.status[s]
        if extra.any():
            pos = np.concatenate([pos, np.flatnonzero(extra)])
            times = np.concatenate([times, closed_at[extra]])
            codes = np.concatenate([codes, np.full(int(extra.sum()), CLOSED, "int8")])
    entered = listings.entered[pos]
    ok = times >= entered  # nothing before the entry (a NaT time is the smallest int64) ...
    ok &= entered != NAT  # ... and nothing without one
    if ok.all():
        return pos, times, codes.astype("int8", copy=False)
    return pos[ok], times[ok], codes[ok].astype("int8", copy=False)


def status_intervals(listings: Listings, history: History | None) -> Intervals:
    """Each listing's status intervals: Active from entry, then each event in time order (at
    the same instant the entry first, then the events in the history's order).

    The entries and the events are merged by listing without a sort: each listing's run in the
    merged arrays holds its entry, then its events (in :func:`event_order`), so every run's
    place follows from the counts per listing."""
    pos, times, codes = _events(listings, history)
    order = event_order(pos, times)
    times, codes = times[order], codes[order]
    per_listing = np.bincount(pos, minlength=len(listings))
    del pos, order
    has_entry = listings.entered != NAT  # every listing with an event has an entry
    per_listing += has_entry
    run_end = np.cumsum(per_listing)  # one past each run's last place
    total = int(run_end[-1]) if len(run_end) else 0
    run_start = run_end - per_listing
    every = bool(has_entry.all())
    entry_at = run_start if every else run_start[has_entry]  # a run's first place: its entry
    all_at = np.empty(total, dtype="int64")
    all_code = np.empty(total, dtype="int8")
    event = np.ones(total, dtype=bool)
    event[entry_at] = False
    all_at[entry_at] = listings.entered if every else listings.entered[has_entry]
    all_code[entry_at] = ACTIVE
    all_at[event], all_code[event] = times, codes
    del times, codes, event, entry_at, run_start
    stop = np.empty_like(all_at)
    stop[:-1] = all_at[1:]
    run_end -= 1  # each run's last interval
    stop[run_end if every else run_end[per_listing > 0]] = NEVER
    del run_end
    keep = stop > all_at
    all_pos = np.repeat(np.arange(len(listings)), per_listing)
    market = np.repeat(listings.market, per_listing)
    if not keep.all():  # an event at the same instant as the next one of its listing
        all_pos, market, all_code = all_pos[keep], market[keep], all_code[keep]
        all_at, stop = all_at[keep], stop[keep]
    return Intervals(all_pos, market, all_code, all_at, stop, len(listings))


def stocks_at(
    intervals: Intervals, starts: np.ndarray, ends: np.ndarray, n_markets: int
) -> dict[str, np.ndarray]:
    """Active, Pending and Active Under Contract listings at each period end: (markets × periods)
    count arrays, from one difference array over (status, market, period end); the last as
    ``_under_contract`` (read by ``pending_ratio``, not a column)."""
    width = len(ends) + 1
    layers = np.full(UNDER_CONTRACT + 1, 3, dtype="int64")  # layer 3: not counted, dropped
    layers[[ACTIVE, PENDING, UNDER_CONTRACT]] = (0, 1, 2)
    row = layers[intervals.status]  # every interval (no selection: fewer passes)
    row *= n_markets
    row += intervals.market
    row *= width
    lo = period_of(intervals.start, starts, ends)
    lo += row
    hi = period_of(intervals.stop, starts, ends)
    hi += row
    del row
    size = 4 * n_markets * width
    diff = np.bincount(lo, minlength=size)
    diff -= np.bincount(hi, minlength=size)
    diff = diff[: 3 * n_markets * width]
    counts = np.cumsum(diff.reshape(3, n_markets, width), axis=2)[:, :, : len(ends)]
    return {
        "active_listings": counts[0],
        "pending_listings": counts[1],
        "_under_contract": counts[2],
    }


def active_at(intervals: Intervals, pos: np.ndarray, when: np.ndarray) -> np.ndarray:
    """Whether each listing ``pos`` is Active at the instant ``when`` (its few Active intervals
    looked up by listing)."""
    active = intervals.of(ACTIVE)
    first, count = active.lookup(pos)
    still = np.zeros(len(pos), dtype=bool)
    for k in range(int(count.max(initial=0))):
        j = np.minimum(first + k, len(active.start) - 1)
        has = k < count
        still |= has & (active.start[j] <= when) & (when < active.stop[j])
    return still
