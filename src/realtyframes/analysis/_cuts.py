"""Price cuts per period for :func:`realtyframes.analysis.trends.market_trends`: the listings cut
in a period (``price_drops``, and those of them Active at its end), and Zillow's share of
listings with a price cut (the listing's price at the period's end below its price at the
period's start, among the listings active at any point in it) with the median cut.

A listing's price at an instant is its list price at entry (the old price of its first price
change, else ListPrice), then the new price of each price change up to that instant. Without a
history the one change known is PreviousListPrice → ListPrice at MajorChangeTimestamp (the
snapshot rule of ``rf.price_drops``).

>>> import numpy as np
>>> prices_at(np.array([0, 0]), np.array([5, 20]), np.array([0]), np.array([10]),
...           np.array([90.0]), np.array([100.0])).tolist()
[100.0, 90.0]
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from realtyframes.analysis._common import safe_div
from realtyframes.analysis._periods import Grid
from realtyframes.analysis._stocks import Intervals, active_at, distinct, event_order
from realtyframes.analysis._trends_kernel import ACTIVE, NAT, History, Listings

__all__ = ["active_during", "active_windows", "cuts_in_periods", "price_cut_share", "prices_at"]


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


def _price_changes(
    listings: Listings, history: History | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The price changes by listing then time (listing row, time, new price) and each
    listing's price at entry (NaN: no change known, so no cut either)."""
    entry = np.full(len(listings), np.nan)
    if history is None:
        with np.errstate(invalid="ignore"):
            moved = (listings.prev_list != listings.list) & (listings.prev_list > 0)
        moved &= (listings.major != NAT) & ~np.isnan(listings.list)
        pos = np.flatnonzero(moved)
        entry[pos] = listings.prev_list[pos]
        return pos, listings.major[pos], listings.list[pos], entry
    pos, at = history.pos[history.is_price], history.at[history.is_price]
    order = event_order(pos, at)
    pos, at = pos[order], at[order]
    old, new = (
        history.old_price[history.is_price][order],
        history.new_price[history.is_price][order],
    )
    first = np.ones(len(pos), dtype=bool)
    first[1:] = pos[1:] != pos[:-1]
    entry[pos[first]] = old[first]
    return pos, at, new, entry


def prices_at(
    pos: np.ndarray,
    when: np.ndarray,
    change_pos: np.ndarray,
    change_at: np.ndarray,
    change_new: np.ndarray,
    entry: np.ndarray,
    strictly: bool = False,
) -> np.ndarray:
    """Each listing ``pos``'s price at the instant ``when``: the new price of its last change at
    or before it (``strictly``: before it), else its price at entry. The changes are by listing
    then time; a listing's few changes are looked at one step per change."""
    per_listing = np.bincount(change_pos, minlength=len(entry))
    first, count = (np.cumsum(per_listing) - per_listing)[pos], per_listing[pos]
    seen = np.zeros(len(pos), dtype="int64")
    for k in range(int(count.max(initial=0))):
        j = np.minimum(first + k, len(change_at) - 1)
        at = change_at[j]
        before = at < when if strictly else at <= when
        seen += (k < count) & before
    price = entry[pos].copy()
    changed = seen > 0
    price[changed] = change_new[first[changed] + seen[changed] - 1]
    return price


def price_cut_share(
    listings: Listings, history: History | None, intervals: Intervals, grid: Grid
) -> tuple[np.ndarray, pd.DataFrame]:
    """The listings active at any point in a period whose price at its end is below their price
    at its start (markets × periods), and the median cut (start − end) / start among them, with
    its count, by flat cell. Only a period holding a price change of the listing can end below
    its start: the (listing, period) pairs are those of the changes, each once."""
    change_pos, change_at, change_new, entry = _price_changes(listings, history)
    rows, cells = grid.pairs(listings.market[change_pos], change_at)
    pairs = distinct(change_pos[rows] * grid.size + cells)
    pos, cell = pairs // grid.size, pairs % grid.size
    window = cell % grid.n_periods
    begin, end = grid.starts[window], grid.ends[window]
    args = (change_pos, change_at, change_new, entry)
    before = prices_at(pos, begin, *args, strictly=True)
    after = prices_at(pos, end, *args)
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
    active = intervals.status == ACTIVE
    a_pos, a_start, a_stop = intervals.pos[active], intervals.start[active], intervals.stop[active]
    per_listing = np.bincount(a_pos, minlength=int(pos.max(initial=-1)) + 1)
    first, count = (np.cumsum(per_listing) - per_listing)[pos], per_listing[pos]
    found = np.zeros(len(pos), dtype=bool)
    for k in range(int(count.max(initial=0))):
        j = np.minimum(first + k, len(a_start) - 1)
        found |= (k < count) & (a_start[j] <= end) & (a_stop[j] > begin)
    return found


def active_windows(
    intervals: Intervals, chosen: np.ndarray, grid: Grid
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``chosen`` (Active) intervals' listing and the windows ``[lo, hi)`` each overlaps, a
    window counted once per listing (a listing Active twice in a window: at the first)."""
    pos = intervals.pos[chosen]
    lo, hi = grid.overlapped(intervals.start[chosen], intervals.stop[chosen])
    if len(pos) > 1:  # the same listing's intervals are in time order: hi never goes back
        same = np.zeros(len(pos), dtype=bool)
        same[1:] = pos[1:] == pos[:-1]
        previous = np.empty_like(hi)
        previous[1:] = hi[:-1]
        lo = np.where(same, np.maximum(lo, previous), lo)
    return pos, lo, np.maximum(hi, lo)
