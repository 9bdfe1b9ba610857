"""``market_trends`` computed locally (a pandas frame): the listings and the history as numpy
arrays (:mod:`._trends_kernel`), the status timelines (:mod:`._stocks`), the flows and medians
here, the cuts (:mod:`._cuts`) and the competition columns (:mod:`._competition`).
:class:`LocalTrends` has the interface of :class:`~._trends_engine.EngineTrends`: ``markets``,
``history``, :meth:`~LocalTrends.bounds` and :meth:`~LocalTrends.cells`.

>>> import pandas as pd
>>> frame = pd.DataFrame({"ListingId": ["a"], "PropertyType": ["Residential"],
...     "StandardStatus": ["Active"], "ListPrice": [1.0], "PreviousListPrice": [None],
...     "ClosePrice": [None], "LivingArea": [1.0], "DaysOnMarket": [1],
...     "OriginalEntryTimestamp": pd.to_datetime(["2024-01-02"], utc=True),
...     "MajorChangeTimestamp": pd.to_datetime(["2024-01-02"], utc=True),
...     "CloseDate": pd.to_datetime([None], utc=True)})
>>> from realtyframes.analysis._kernel import frame_of
>>> LocalTrends(frame_of(frame, list(frame.columns), "market", "f"), None, [], "sale").markets
Index(['All'], dtype='object')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any

import numpy as np
import pandas as pd

from realtyframes.analysis._common import safe_div
from realtyframes.analysis._competition import (
    active_any,
    contract_stats,
    inventory_age,
    last_pending,
    no_contract_stats,
)
from realtyframes.analysis._cuts import (
    PriceChanges,
    cuts_in_periods,
    price_changes,
    price_cut_share,
)
from realtyframes.analysis._definitions import Prices
from realtyframes.analysis._drops_kernel import is_empty
from realtyframes.analysis._kernel import concurrently, in_background
from realtyframes.analysis._periods import Grid
from realtyframes.analysis._stocks import (
    Intervals,
    distinct,
    status_intervals,
    stocks_at,
)
from realtyframes.analysis._trends_kernel import (
    ACTIVE,
    CLOSED,
    NAT,
    PENDING,
    Changes,
    History,
    Listings,
    history_rows,
    listing_rows,
)
from realtyframes.analysis.market import SALE_TO_LIST_RANGE

__all__ = ["LocalTrends"]

_DAY = 86_400_000_000  # microseconds


class LocalTrends:
    """A pandas market frame (and its history, both narwhals frames from ``frame_of``) as
    arrays: the listings read on a second thread while the history is."""

    def __init__(self, frame: Any, changes: Any | None, keys: Sequence[str], segment: str):
        job = in_background(frame, _listings, frame, list(keys), segment, changes is not None)
        try:
            records = _records(changes)  # while the listings are read
        finally:
            self.listings = job.result()  # the market's error first, as on one thread
        self.markets = self.listings.markets
        self.history = None if records is None else History(records, self.listings)

    def bounds(self) -> tuple[int | None, int | None]:
        """The earliest and the newest time of the listings (microseconds), None if none."""
        lows, highs = [], []
        for times in (self.listings.entered, self.listings.major, self.listings.closed_at):
            high = int(times.max(initial=NAT))  # NaT is the smallest int64: the max is a time
            if high != NAT:  # unless every one is NaT
                lows.append(int(times.min(where=times != NAT, initial=high)))
                highs.append(high)
        return (min(lows) if lows else None, max(highs) if highs else None)

    def cells(
        self, grid: Grid, freq: str, as_of: int, definitions: str
    ) -> tuple[dict[str, np.ndarray], pd.DataFrame]:
        """The counts (markets × periods) and the medians (by flat cell)."""
        return _cells(self.listings, self.history, grid, as_of, definitions)


def _listings(frame: Any, keys: list[str], segment: str, matched: bool) -> Listings:
    """The market's listings as arrays; their ids ordered for the history's match if
    ``matched``."""
    listings = Listings(listing_rows(frame, keys, segment), keys)
    if matched:
        listings.ids.ordered()
    return listings


def _records(changes: Any) -> Changes | None:
    """The history's status and price changes as arrays, or None when there is none to use
    (absent or empty)."""
    if changes is None:
        return None
    rows = history_rows(changes)
    if len(rows) == 0 and is_empty(changes):
        return None
    return Changes(rows)


def _cells(
    listings: Listings, past: History | None, grid: Grid, as_of: int, definitions: str
) -> tuple[dict[str, np.ndarray], pd.DataFrame]:
    """The counts (markets × periods arrays) and the medians (by flat cell), on two threads in a
    big market, three steps: the status intervals, then the pending sales and each listing's
    last Pending (the Pending intervals' readers), the stocks, active listings at any point and
    age of inventory; the entries' and sales' periods (found once), the new listings, homes
    sold and medians; the cuts (the Active intervals' last readers) and the contract-date
    metrics, which wait for the other two."""
    shared: Future[tuple[Intervals, np.ndarray | None]] = Future()
    found: Future[tuple[_Pairs, _Pairs]] = Future()
    changes = [price_changes(listings, past)]  # in order once: the entry prices and the cuts
    prices = Prices(definitions, _entry_prices(listings, past, changes[0]), listings.list)

    def flows() -> tuple[dict[str, np.ndarray], list[pd.DataFrame]]:
        try:
            entries, closings = _placed(listings, grid)  # each listing's period found once
        except BaseException as exc:  # the third step waits for them: it raises it too
            found.set_exception(exc)
            raise
        found.set_result((entries, closings))
        counts = {"new_listings": grid.tally(entries[1]), "homes_sold": grid.tally(closings[1])}
        return counts, [_medians(listings, prices, grid, entries, closings)]

    def timelines() -> tuple[dict[str, np.ndarray], list[pd.DataFrame]]:
        try:
            intervals = status_intervals(listings, past)
            since = None if past is None else last_pending(intervals, listings)
            pending = _pending_sales(listings, intervals, grid, prices.pending_days)
        except BaseException as exc:  # the third step waits for them: it raises it too
            shared.set_exception(exc)
            raise
        intervals.release(PENDING)  # read by those two only
        shared.set_result((intervals, since))
        base = grid.width - 1  # the stocks at the windows' ends: the base periods ending there
        counts = {
            **stocks_at(intervals, grid.base_starts[base:], grid.ends, grid.n_markets),
            "pending_sales": pending,
            **active_any(intervals, grid),
        }
        return counts, [inventory_age(listings, intervals, grid, as_of)]

    def cuts() -> tuple[dict[str, np.ndarray], list[pd.DataFrame]]:
        intervals, since = shared.result()
        cut_any, cut_pct = price_cut_share(listings, changes.pop(), intervals, grid)  # then gone
        counts = {**cuts_in_periods(listings, past, intervals, grid), "_cut_any": cut_any}
        intervals.release(ACTIVE)  # read by the cuts last (on one thread): memory back
        contracts = (
            no_contract_stats()
            if since is None
            else contract_stats(listings, intervals, grid, as_of, found.result(), since)
        )
        return counts, [cut_pct, contracts]

    # in this order on one thread: the intervals' temporaries leave the room the others reuse
    # (run later, they grow the heap anew: twice the page faults)
    steps: list[Callable[[], Any]] = [timelines, flows, cuts]
    done = concurrently(steps, len(listings))
    counts = {name: table for step_counts, _ in done for name, table in step_counts.items()}
    return counts, pd.concat([frame for _, frames in done for frame in frames], axis=1)


_Pairs = tuple[np.ndarray, np.ndarray]


def _placed(listings: Listings, grid: Grid) -> tuple[_Pairs, _Pairs]:
    """The (row, flat cell) pairs of the listings' entries and of their sales (Closed, by
    CloseDate; the rows those of the listings), each looked up once for the flows
    (new_listings and homes_sold: market_summary's definitions with the period as the window)
    and the medians."""
    entries = grid.pairs(listings.market, listings.entered)
    sold = np.flatnonzero(listings.status == CLOSED)
    rows, cells = grid.pairs(listings.market[sold], listings.closed_at[sold])
    return entries, (sold[rows], cells)


def _pending_sales(
    listings: Listings, intervals: Any, grid: Grid, pending_days: int | None
) -> np.ndarray:
    """pending_sales per cell: listings whose status became Pending in the period (from the
    history; without one, market_summary's estimate: Pending now, MajorChangeTimestamp in it),
    with ``pending_days`` only those that became Pending within that many days of entry."""
    went = intervals.of(PENDING)
    pos, market, start = went.pos, went.market, went.start
    if pending_days is not None:
        quick = start // _DAY - listings.entered[pos] // _DAY <= pending_days
        pos, market, start = pos[quick], market[quick], start[quick]
    rows, cells = grid.pairs(market, start)
    key = pos[rows]
    key *= grid.size
    key += cells
    once = distinct(key) % grid.size  # per listing
    return grid.tally(once)


def _entry_prices(listings: Listings, history: History | None, changes: PriceChanges) -> np.ndarray:
    """Each listing's list price when it entered: the old price of its first price change in the
    history, else its ListPrice (no change seen, or no history). ``changes``:
    :func:`~._cuts.price_changes`."""
    if history is None:
        return listings.list.copy()
    return np.where(np.isnan(changes.entry), listings.list, changes.entry)


def _medians(
    listings: Listings, prices: Prices, grid: Grid, entries: _Pairs, closings: _Pairs
) -> pd.DataFrame:
    """Medians and ratios of each cell's sales (by CloseDate) and new listings (by entry), with
    their sample sizes, indexed by flat cell; the list prices as ``prices`` define them.
    ``entries`` / ``closings``: :func:`_placed`."""
    sold, cell = closings
    close = listings.close[sold]
    lo, hi = SALE_TO_LIST_RANGE

    def in_range(ratio: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            return (ratio >= lo) & (ratio <= hi)

    ratio = safe_div(close, prices.against[sold])
    ratio_in = in_range(ratio)
    if prices.against is listings.list:  # the default: one ratio for both
        above, above_range = ratio, ratio_in
    else:
        above = safe_div(close, listings.list[sold])
        above_range = in_range(above)
    sales = pd.DataFrame(
        {
            "median_sale_price": close,
            "median_sale_ppsf": safe_div(close, listings.area[sold]),
            "median_dom": listings.dom[sold],
            "avg_sale_to_list": np.where(ratio_in, ratio, np.nan),
            "pct_sold_above_list": np.where(above_range, (above > 1.0).astype("float64"), np.nan),
        },
        copy=False,
    )
    grouped = sales.groupby(cell, sort=False)
    medians = grouped[["median_sale_price", "median_sale_ppsf", "median_dom"]].median()
    means = grouped[["avg_sale_to_list", "pct_sold_above_list"]].mean()
    counts = grouped.count().add_suffix("_n")
    rows, entered = entries
    listed = pd.Series(prices.listed[rows]).groupby(entered, sort=False)
    stats = pd.DataFrame(
        {"median_list_price": listed.median(), "median_list_price_n": listed.count()}
    )
    return pd.concat([medians, means, counts, stats], axis=1)
