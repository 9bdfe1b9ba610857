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
from realtyframes.analysis._periods import Grid, expand
from realtyframes.analysis._stocks import Intervals, active_at, distinct, event_order
from realtyframes.analysis._trends_kernel import ACTIVE, NAT, History, Listings

__all__ = ["cuts_in_periods", "price_cut_share", "prices_at"]


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
    first = np.searchsorted(change_pos, pos, side="left")
    last = np.searchsorted(change_pos, pos, side="right")
    seen = np.zeros(len(pos), dtype="int64")
    for k in range(int((last - first).max(initial=0))):
        j = np.minimum(first + k, len(change_at) - 1)
        at = change_at[j]
        before = at < when if strictly else at <= when
        seen += (first + k < last) & before
    price = entry[pos].copy()
    changed = seen > 0
    price[changed] = change_new[first[changed] + seen[changed] - 1]
    return price


def price_cut_share(
    listings: Listings, history: History | None, intervals: Intervals, grid: Grid
) -> tuple[np.ndarray, pd.DataFrame]:
    """The listings active at any point in a period whose price at its end is below their price
    at its start (markets × periods), and the median cut (start − end) / start among them, with
    its count, by flat cell."""
    change_pos, change_at, change_new, entry = _price_changes(listings, history)
    changed = np.zeros(len(listings), dtype=bool)
    changed[change_pos] = True
    active = (intervals.status == ACTIVE) & changed[intervals.pos]
    pos, lo, hi = active_windows(intervals, active, grid)
    which, window = expand(lo, hi)
    pos = pos[which]
    args = (change_pos, change_at, change_new, entry)
    start = prices_at(pos, grid.starts[window], *args, strictly=True)
    end = prices_at(pos, grid.ends[window], *args)
    with np.errstate(invalid="ignore"):
        cut = end < start
    cell = listings.market[pos[cut]] * grid.n_periods + window[cut]
    pct = pd.Series(safe_div(start[cut] - end[cut], start[cut])).groupby(cell, sort=False)
    stats = pd.DataFrame({"median_cut_pct": pct.median(), "median_cut_pct_n": pct.count()})
    return grid.tally(cell), stats


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
