"""Price cuts per period for :func:`realtyframes.analysis.trends.market_trends`: the listings cut
in a period (``price_drops``, and those of them Active at its end), and Zillow's share of
listings with a price cut (the listing's price at the period's end below its price at the
period's start, among the listings active at any point in it) with the median cut.

A listing's price at an instant is its list price at entry (the old price of its first price
change, else ListPrice), then the new price of each price change up to that instant. Without a
history the one change known is PreviousListPrice → ListPrice at MajorChangeTimestamp (the
snapshot rule of ``rf.price_drops``).

>>> import numpy as np
>>> one = PriceChanges(np.array([0]), np.array([10]), np.array([90.0]), np.array([100.0]),
...                    np.array([0]), np.array([1]))  # listing 0: 100 at entry, 90 at time 10
>>> prices_at(np.array([0, 0]), np.array([5, 20]), one).tolist()
[100.0, 90.0]
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from realtyframes.analysis._common import safe_div
from realtyframes.analysis._periods import Grid
from realtyframes.analysis._stocks import Intervals, active_at, distinct, event_order
from realtyframes.analysis._trends_kernel import ACTIVE, NAT, History, Listings

__all__ = [
    "PriceChanges",
    "active_during",
    "active_windows",
    "cuts_in_periods",
    "price_changes",
    "price_cut_share",
    "prices_at",
]


def cuts_in_periods(
    listings: Listings, history: History | None, intervals: Intervals, grid: Grid
) -> dict[str, np.ndarray]:
    """``price_drops`` (listings cut in the period) and the listings Active at the period's end
    that were cut in it, as (markets × periods) arrays. A cut is a price change down in the
    history; without one (estimated), PreviousListPrice above ListPrice at MajorChangeTimestamp."""
    if history is None:
        with np.errstate(invalid="ignore"):
            cut = listings.prev_list > listings.list
        pos, at = np.flatnonzero(cut), listings.major[cut]
    else:
        pos, at = history.pos[history.is_cut], history.at[history.is_cut]
    rows, cells = grid.pairs(listings.market[pos], at)
    pairs = distinct(pos[rows] * grid.size + cells)  # each listing once per period
    cut_pos, cell = pairs // grid.size, pairs % grid.size
    still = active_at(intervals, cut_pos, grid.ends[cell % grid.n_periods])
    return {"price_drops": grid.tally(cell), "_active_cut": grid.tally(cell[still])}


class PriceChanges(NamedTuple):
    """The price changes by listing then time: the listing's row ``pos``, the time ``at``, the
    ``new`` price; per listing row its price at ``entry`` (NaN: no change known, so no cut
    either) and where its changes start (``before``) and how many they are (``length``)."""

    pos: np.ndarray
    at: np.ndarray
    new: np.ndarray
    entry: np.ndarray
    before: np.ndarray
    length: np.ndarray


def price_changes(listings: Listings, history: History | None) -> PriceChanges:
    """The listings' price changes (from the history; without one, PreviousListPrice →
    ListPrice at MajorChangeTimestamp), put in order once for every metric that reads them."""
    entry = np.full(len(listings), np.nan)
    if history is None:
        with np.errstate(invalid="ignore"):
            moved = (listings.prev_list != listings.list) & (listings.prev_list > 0)
        moved &= (listings.major != NAT) & ~np.isnan(listings.list)
        pos = np.flatnonzero(moved)
        entry[pos] = listings.prev_list[pos]
        at, new = listings.major[pos], listings.list[pos]
    else:
        chosen = np.flatnonzero(history.is_price)
        order = chosen[event_order(history.pos[chosen], history.at[chosen])]
        pos, at = history.pos[order], history.at[order]
        old, new = history.old_price[order], history.new_price[order]
        first = np.ones(len(pos), dtype=bool)
        first[1:] = pos[1:] != pos[:-1]
        entry[pos[first]] = old[first]
    count = np.bincount(pos, minlength=len(entry)).astype("int32")
    before = np.cumsum(count, dtype="int32")
    before -= count
    return PriceChanges(pos, at, new, entry, before, count)


def prices_at(
    pos: np.ndarray, when: np.ndarray, changes: PriceChanges, strictly: bool = False
) -> np.ndarray:
    """Each listing ``pos``'s price at the instant ``when``: the new price of its last change at
    or before it (``strictly``: before it), else its price at entry. A listing's few changes are
    looked at one step per change."""
    return _prices_at(pos, [(when, strictly)], changes)[0]


def _prices_at(
    pos: np.ndarray, instants: list[tuple[np.ndarray, bool]], changes: PriceChanges
) -> list[np.ndarray]:
    """:func:`prices_at` of the same listings at several instants ``(when, strictly)``, their
    runs of changes looked up once."""
    first, count = changes.before[pos], changes.length[pos]
    seen = [np.zeros(len(pos), dtype="int64") for _ in instants]
    for k in range(int(count.max(initial=0))):
        j = np.minimum(first + k, len(changes.at) - 1)
        at, has = changes.at[j], k < count
        for (when, strictly), counted in zip(instants, seen, strict=True):
            counted += has & ((at < when) if strictly else (at <= when))
    prices = []
    for counted in seen:
        price = changes.entry[pos]
        changed = counted > 0
        price[changed] = changes.new[first[changed] + counted[changed] - 1]
        prices.append(price)
    return prices


def price_cut_share(
    listings: Listings, changes: PriceChanges, intervals: Intervals, grid: Grid
) -> tuple[np.ndarray, pd.DataFrame]:
    """The listings active at any point in a period whose price at its end is below their price
    at its start (markets × periods), and the median cut (start − end) / start among them, with
    its count, by flat cell. Only a period holding a price change of the listing can end below
    its start: the (listing, period) pairs are those of the changes, each once.
    ``changes``: :func:`price_changes`."""
    rows, cells = grid.pairs(listings.market[changes.pos], changes.at)
    pairs = distinct(changes.pos[rows] * grid.size + cells)
    pos, cell = pairs // grid.size, pairs % grid.size
    window = cell % grid.n_periods
    begin, end = grid.starts[window], grid.ends[window]
    before, after = _prices_at(pos, [(begin, True), (end, False)], changes)
    with np.errstate(invalid="ignore"):
        cut = after < before
    cut[cut] = active_during(intervals, pos[cut], begin[cut], end[cut])
    cell = cell[cut]
    pct = pd.Series(safe_div(before[cut] - after[cut], before[cut])).groupby(cell, sort=False)
    stats = pd.DataFrame({"median_cut_pct": pct.median(), "median_cut_pct_n": pct.count()})
    return grid.tally(cell), stats


def active_during(
    intervals: Intervals, pos: np.ndarray, begin: np.ndarray, end: np.ndarray
) -> np.ndarray:
    """Whether each listing ``pos`` is Active at some instant of ``[begin, end]`` (its few
    Active intervals looked at one step per interval)."""
    active = intervals.of(ACTIVE)
    first, count = active.lookup(pos)
    found = np.zeros(len(pos), dtype=bool)
    for k in range(int(count.max(initial=0))):
        j = np.minimum(first + k, len(active.start) - 1)
        found |= (k < count) & (active.start[j] <= end) & (active.stop[j] > begin)
    return found


def active_windows(intervals: Intervals, grid: Grid) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The Active intervals' listing and the windows ``[lo, hi)`` each overlaps, a window
    counted once per listing (a listing Active twice in a window: at the first)."""
    active = intervals.of(ACTIVE)
    pos = active.pos
    lo, hi = grid.overlapped(active.start, active.stop)
    if len(pos) > 1:  # the same listing's intervals are in time order: hi never goes back
        same = np.zeros(len(pos), dtype=bool)
        same[1:] = pos[1:] == pos[:-1]
        if same.any():
            previous = np.empty_like(hi)
            previous[1:] = hi[:-1]
            lo = np.where(same, np.maximum(lo, previous), lo)
    return pos, lo, np.maximum(hi, lo)
