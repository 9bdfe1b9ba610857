"""Competition metrics of :func:`realtyframes.analysis.trends.market_trends` (docs/metrics.md):
``active_listings_any`` (Redfin's active listings), ``age_of_inventory`` (Redfin),
``off_market_in_two_weeks`` (Redfin), ``median_days_to_pending`` and ``median_days_to_close``
(Zillow), from each listing's status intervals (:func:`~._stocks.status_intervals`); and
``pending_ratio`` (Realtor.com) and ``absorption_rate`` from the stocks and flows
(:func:`derive`).

Days are whole UTC calendar days between two dates (the later date minus the earlier one), as
the data centers count them. A listing *went under contract* when its status first became
Pending or Active Under Contract, or Closed without either before (the first such interval of its
timeline); it *goes under contract* in a period when a Pending or Active Under Contract spell
starts there (Active Under Contract then Pending is one spell). The
three contract-date metrics need a history: without one a sold listing's contract date is not
in its record, so they are blank with ``_n`` 0 (:data:`NEEDS_HISTORY`).

>>> import numpy as np
>>> days(np.array([86_400_000_000 * 3 - 1]), np.array([0])).tolist()  # day 2 minus day 0
[2]
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from realtyframes.analysis._common import safe_div
from realtyframes.analysis._cuts import active_windows
from realtyframes.analysis._periods import Grid, expand
from realtyframes.analysis._stocks import Intervals
from realtyframes.analysis._trends_kernel import (
    ACTIVE,
    CLOSED,
    NAT,
    PENDING,
    UNDER_CONTRACT,
    Listings,
)

__all__ = [
    "COMPETITION_COUNTS",
    "COMPETITION_SAMPLED",
    "NEEDS_HISTORY",
    "active_any",
    "contract_stats",
    "days",
    "derive",
    "inventory_age",
    "last_pending",
    "no_contract_stats",
]

_DAY = 86_400_000_000  # microseconds
#: Cells × distinct values up to which a median of whole days is read from a histogram.
_HISTOGRAM_CELLS = 8_000_000
#: Days from listing within which a listing that went under contract counts as off the market
#: in two weeks (Redfin).
TWO_WEEKS = 14
COMPETITION_COUNTS: tuple[str, ...] = ("active_listings_any",)
COMPETITION_SAMPLED: tuple[str, ...] = (
    "off_market_in_two_weeks",
    "median_days_to_pending",
    "median_days_to_close",
    "age_of_inventory",
    "price_cut_share",
    "median_cut_pct",
    "pending_ratio",
    "absorption_rate",
)
#: Metrics blank (``_n`` 0) without a history: they read the date a listing went under contract.
NEEDS_HISTORY: tuple[str, ...] = (
    "off_market_in_two_weeks",
    "median_days_to_pending",
    "median_days_to_close",
)


def days(later: np.ndarray, earlier: np.ndarray) -> np.ndarray:
    """Whole UTC calendar days from ``earlier`` to ``later`` (microseconds, int64)."""
    return later // _DAY - earlier // _DAY


def _by_cell(cells: np.ndarray, values: np.ndarray, name: str, how: str, size: int) -> pd.DataFrame:
    """``how`` ('median' or 'mean') of ``values`` per flat cell (``size`` cells), with the count
    as ``<name>_n``. Means by ``bincount``; medians of whole days from a histogram per cell when
    the table of cells × distinct days is small, else by a group-by."""
    n = np.bincount(cells, minlength=size)
    if how == "mean":
        total = np.bincount(cells, weights=values, minlength=size)
        return pd.DataFrame({name: safe_div(total, n), f"{name}_n": n})
    low = int(values.min()) if len(values) else 0
    span = int(values.max()) - low + 1 if len(values) else 1
    if size * span > _HISTOGRAM_CELLS:
        grouped = pd.Series(values, dtype="float64").groupby(cells, sort=False)
        median = grouped.median().reindex(np.arange(size)).to_numpy()
        return pd.DataFrame({name: median, f"{name}_n": n})
    counts = np.bincount(cells * span + (values - low), minlength=size * span)
    median = _histogram_median(counts.reshape(size, span), n) + low
    return pd.DataFrame({name: median, f"{name}_n": n})


def _histogram_median(counts: np.ndarray, n: np.ndarray) -> np.ndarray:
    """The median value (0 .. columns - 1) of each row of a histogram ``counts`` holding ``n``
    values (NaN where none)."""
    rows, columns = counts.shape
    below = np.cumsum(counts, axis=1)  # values up to each one, per row
    lift = np.cumsum(n + 1) - (n + 1)  # each row lifted above the ones before: one sorted run
    below += lift[:, None]
    flat, first = below.reshape(-1), np.arange(rows) * columns
    middle = [  # the values whose count up to them is at most rank k (0-based), per row
        np.searchsorted(flat, k + lift, side="right") - first for k in ((n - 1) // 2, n // 2)
    ]
    return np.where(n > 0, (middle[0] + middle[1]) / 2, np.nan)


def active_any(intervals: Intervals, grid: Grid) -> dict[str, np.ndarray]:
    """``active_listings_any``: listings Active at any instant of the period, each once (a
    difference array per market over the windows each Active interval overlaps)."""
    _, lo, hi = active_windows(intervals, grid)
    market = intervals.of(ACTIVE).market
    width = grid.n_periods + 1
    size = grid.n_markets * width
    row = market * width  # an interval in no window (hi == lo) adds and takes 1 in one place
    diff = np.bincount(row + lo, minlength=size)
    diff -= np.bincount(row + hi, minlength=size)
    counts = np.cumsum(diff.reshape(grid.n_markets, width), axis=1)[:, : grid.n_periods]
    return {"active_listings_any": counts}


def inventory_age(listings: Listings, intervals: Intervals, grid: Grid, as_of: int) -> pd.DataFrame:
    """``age_of_inventory``: the median days from entry to the period's last day (for the period
    not over at ``as_of``, the data's end) of the listings Active at its end, by flat cell. The median age is the period's last day minus the
    median entry day, read from a histogram of entry days per market and period end (a
    difference array over the period ends each Active interval spans), when that table is
    small; else from the (listing, period end) pairs."""
    active = intervals.of(ACTIVE)
    lo, hi = grid.ends_within(active.start, active.stop)
    pos = active.pos  # a listing's Active intervals are disjoint: once per end
    end_day = np.minimum(grid.ends, as_of) // _DAY  # never a day in the future
    entry_day = (listings.entered // _DAY)[pos]
    some = hi > lo
    counted = entry_day[some]
    low = int(counted.min()) if len(counted) else 0
    span = int(counted.max()) - low + 1 if len(counted) else 1
    width = grid.n_periods + 1
    table = grid.n_markets * width * span
    if table > _HISTOGRAM_CELLS:
        which, window = expand(lo, hi)
        cells = listings.market[pos[which]] * grid.n_periods + window
        age = end_day[window] - entry_day[which]
        return _by_cell(cells, age, "age_of_inventory", "median", grid.size)
    row = (listings.market[pos[some]] * width) * span + (counted - low)
    diff = np.bincount(row + lo[some] * span, minlength=table) - np.bincount(
        row + hi[some] * span, minlength=table
    )
    counts = np.cumsum(diff.reshape(grid.n_markets, width, span), axis=1)[:, : grid.n_periods]
    counts = counts.reshape(grid.size, span)
    n = counts.sum(axis=1)
    median_entry = _histogram_median(counts, n) + low
    age = np.tile(end_day, grid.n_markets) - median_entry
    return pd.DataFrame({"age_of_inventory": age, "age_of_inventory_n": n})


def _contract_at(listings: Listings, intervals: Intervals) -> np.ndarray:
    """When each listing first went under contract (NAT: never)."""
    under = np.flatnonzero(_under(intervals) | (intervals.status == CLOSED))
    pos = intervals.pos[under]
    first = np.ones(len(pos), dtype=bool)
    first[1:] = pos[1:] != pos[:-1]  # by listing, then time
    first = np.flatnonzero(first)
    out = np.full(len(listings), NAT, dtype="int64")
    out[pos[first]] = intervals.start[under[first]]
    return out


def _under(intervals: Intervals) -> np.ndarray:
    """Intervals under contract: Pending or Active Under Contract."""
    return (intervals.status == PENDING) | (intervals.status == UNDER_CONTRACT)


def _spells(intervals: Intervals) -> np.ndarray:
    """The intervals that start a spell under contract: under contract, and not following
    another of the same listing that was (Active Under Contract, then Pending: one spell)."""
    under = _under(intervals)
    after = np.zeros(len(under), dtype=bool)
    after[1:] = under[:-1] & (intervals.pos[1:] == intervals.pos[:-1])
    return under & ~after


def last_pending(intervals: Intervals, listings: Listings) -> np.ndarray:
    """Per listing row, the start of its last Pending interval starting at or before its
    CloseDate (NAT: none). A listing's Pending intervals are in time order, so those starting by
    then come first: the last of them is the one before the first that does not."""
    pending = intervals.of(PENDING)
    by_then = pending.start <= listings.closed_at[pending.pos]
    last = by_then.copy()
    last[:-1] &= ~(by_then[1:] & (pending.pos[1:] == pending.pos[:-1]))
    found = np.full(len(listings), NAT, dtype="int64")
    found[pending.pos[last]] = pending.start[last]
    return found


def contract_stats(
    listings: Listings,
    intervals: Intervals,
    grid: Grid,
    as_of: int,
    placed: tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
    since: np.ndarray,
) -> pd.DataFrame:
    """By flat cell: ``off_market_in_two_weeks`` (share of the listings entered in the period,
    at least 14 days before ``as_of``'s date, that went under contract within 14 days of
    entry), ``median_days_to_pending`` (days from entry of the listings that went under contract
    in the period: a Pending or Active Under Contract spell started there, each once) and ``median_days_to_close`` (days from the last Pending
    to CloseDate of the homes sold in the period that were Pending before), with their counts.
    ``placed``: the (row, flat cell) pairs of the listings' entries and of their sales (Closed,
    by CloseDate), as the flows and medians read them (each period looked up once);
    ``since``: each listing's last Pending start by its CloseDate (:func:`last_pending`)."""
    entered, size = listings.entered, grid.size
    day = entered // _DAY
    contract = _contract_at(listings, intervals)
    rows, cells = placed[0]  # the entries in a window (none at NaT)
    entry_day = day[rows]
    old = as_of // _DAY - entry_day >= TWO_WEEKS  # those 14 days before as_of's date
    cohort, cells, entry_day = rows[old], cells[old], entry_day[old]
    went_at = contract[cohort]
    quick = (went_at != NAT) & (went_at // _DAY - entry_day <= TWO_WEEKS)
    off = _by_cell(cells, quick.astype("float64"), "off_market_in_two_weeks", "mean", size)

    went = np.flatnonzero(_spells(intervals))
    start = intervals.start[went]
    rows, cells = grid.pairs(intervals.market[went], start)
    if len(rows) < len(went) or grid.width > 1:  # else every one, once, in order
        went, start = went[rows], start[rows]
    pos = intervals.pos[went]
    key = pos * grid.size + cells
    if not bool(np.all(key[1:] >= key[:-1])):  # calendar periods: in order already
        order = np.argsort(key, kind="stable")  # by listing and cell, then time: the first
        key, pos, start, cells = key[order], pos[order], start[order], cells[order]
    once = np.ones(len(key), dtype=bool)
    once[1:] = key[1:] != key[:-1]
    to_pending = start[once] // _DAY - day[pos[once]]
    pending = _by_cell(cells[once], to_pending, "median_days_to_pending", "median", size)

    sold, cells = placed[1]  # a sale in a window has a CloseDate
    pending_at, closed_at = since[sold], listings.closed_at[sold]
    known = pending_at != NAT
    if not known.all():
        pending_at, closed_at, cells = pending_at[known], closed_at[known], cells[known]
    close = _by_cell(cells, days(closed_at, pending_at), "median_days_to_close", "median", size)
    return pd.concat([off, pending, close], axis=1)


def no_contract_stats() -> pd.DataFrame:
    """The contract-date metrics without a history: no cell has any."""
    empty = np.array([], dtype="float64")
    return pd.DataFrame({c: empty for m in NEEDS_HISTORY for c in (m, f"{m}_n")})


def derive(out: pd.DataFrame, days_in_period: np.ndarray) -> None:
    """``price_cut_share``, ``pending_ratio`` (Pending and Active Under Contract over Active, at
    the period's end) and ``absorption_rate`` from the counts, with their sample sizes, in place
    (``days_in_period``: per row)."""
    active, anytime = out["active_listings"].to_numpy(), out["active_listings_any"].to_numpy()
    out["price_cut_share"] = safe_div(out.pop("_cut_any").to_numpy(), anytime)
    out["price_cut_share_n"] = out["active_listings_any"]
    under = out["pending_listings"].to_numpy() + out.pop("_under_contract").to_numpy()
    out["pending_ratio"] = safe_div(under, active)
    out["pending_ratio_n"] = out["active_listings"]
    per_month = out["homes_sold"].to_numpy() * 30.0 / days_in_period
    out["absorption_rate"] = safe_div(per_month, active)
    out["absorption_rate_n"] = out["active_listings"]
