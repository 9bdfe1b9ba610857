"""Point-in-time stocks and price cuts for :func:`realtyframes.analysis.trends.market_trends`.

Each listing's status is a timeline: Active from its ``OriginalEntryTimestamp``, then each
``status_change`` of the history at its ``ChangeTimestamp`` (and Closed at ``CloseDate`` when the
history has no closing). A listing counts as Active (Pending) at a period's end when its status at
that instant is Active (Pending): it entered before, and had not gone Pending or Closed by then.
Without a history the timeline is estimated: Active from entry, the current status from
``MajorChangeTimestamp`` (``CloseDate`` for Closed listings).

Listings are numbered by their row in the listing table (``pos``) and times are naive UTC
``datetime64[us]`` arrays, so nothing compares strings or timezone-aware objects per row. Stocks
are counted with a difference array per market over the period ends (``searchsorted`` +
``cumsum``): the cost grows with the number of status intervals, not listings × periods.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["History", "cuts_in_periods", "history_of", "status_intervals", "stocks_at"]

_NEVER = np.datetime64("9999-12-31T00:00:00", "us")
_STATUS = {"Active": 0, "Pending": 1, "Closed": 2}
_OTHER = 3  # Active Under Contract and any other status: neither active nor pending


def _codes(status: pd.Series) -> np.ndarray:
    return status.astype("string").map(_STATUS).fillna(_OTHER).to_numpy(dtype="int8")


def _times(values: pd.Series) -> np.ndarray:
    return pd.to_datetime(values, utc=True).dt.tz_convert(None).to_numpy(dtype="datetime64[us]")


class History:
    """A history's records as arrays: listing position, time, and for status changes the new
    status code, for price changes the old and new prices."""

    def __init__(self, history: pd.DataFrame, ids: np.ndarray) -> None:
        # one hash pass over both id columns: each history record's listing row (-1: none)
        codes, uniques = pd.factorize(
            np.concatenate([ids, history["ListingId"].to_numpy(dtype=object)])
        )
        row_of = np.full(len(uniques), -1)
        row_of[codes[: len(ids)]] = np.arange(len(ids))
        pos = row_of[codes[len(ids) :]]
        known = pos >= 0
        kind = history["ChangeType"].astype("string").to_numpy()
        self.pos = pos[known]
        self.at = _times(history["ChangeTimestamp"])[known]
        self.is_status = (kind == "status_change")[known]
        self.status = _codes(history["StandardStatus"])[known]
        old = pd.to_numeric(history["PreviousListPrice"], errors="coerce").to_numpy(dtype="float64")
        new = pd.to_numeric(history["ListPrice"], errors="coerce").to_numpy(dtype="float64")
        with np.errstate(invalid="ignore"):
            self.is_cut = ((kind == "price_change") & (new < old))[known]
        self.old_price = old[known]
        self.is_price = (kind == "price_change")[known]


def history_of(history: pd.DataFrame | None, ids: np.ndarray) -> History | None:
    """The history as arrays, or None when there is none to use (absent or empty)."""
    if history is None or len(history) == 0:
        return None
    for column in ("PreviousListPrice", "ListPrice", "StandardStatus"):
        if column not in history.columns:
            history = history.assign(**{column: pd.NA})
    return History(history, ids)


def status_intervals(listing: pd.DataFrame, history: History | None) -> pd.DataFrame:
    """Each listing's status intervals ``[start, stop)`` with its market code:
    columns pos, market, status (code), start, stop (naive UTC)."""
    n = len(listing)
    entered = listing["entered"].to_numpy()
    status = listing["status_code"].to_numpy()
    closed_at = listing["closed_at"].to_numpy()
    has_close = (status == _STATUS["Closed"]) & ~np.isnat(closed_at)
    if history is None:  # estimated: the current status since its last major change
        moved = status != _STATUS["Active"]
        at = np.where(has_close, closed_at, listing["major"].to_numpy())
        pos, times, codes = np.flatnonzero(moved), at[moved], status[moved]
    else:
        s = history.is_status
        closing_seen = np.zeros(n, dtype=bool)
        closing_seen[history.pos[s & (history.status == _STATUS["Closed"])]] = True
        extra = has_close & ~closing_seen  # a closing the history does not show
        pos = np.concatenate([history.pos[s], np.flatnonzero(extra)])
        times = np.concatenate([history.at[s], closed_at[extra]])
        codes = np.concatenate([history.status[s], np.full(int(extra.sum()), _STATUS["Closed"])])
    all_pos = np.concatenate([np.arange(n), pos])
    all_at = np.concatenate([entered, times])
    all_code = np.concatenate([np.zeros(n, dtype="int8"), codes.astype("int8")])
    order_key = np.concatenate([np.zeros(n, dtype="int8"), np.ones(len(pos), dtype="int8")])
    ok = ~np.isnat(all_at) & ~np.isnat(entered[all_pos])
    ok &= all_at >= entered[all_pos]  # nothing before the listing's entry
    all_pos, all_at, all_code, order_key = all_pos[ok], all_at[ok], all_code[ok], order_key[ok]
    order = np.lexsort((order_key, all_at, all_pos))
    all_pos, all_at, all_code = all_pos[order], all_at[order], all_code[order]
    stop = np.empty_like(all_at)
    stop[:-1] = all_at[1:]
    last = np.ones(len(all_pos), dtype=bool)
    last[:-1] = all_pos[1:] != all_pos[:-1]
    stop[last] = _NEVER
    keep = stop > all_at
    return pd.DataFrame(
        {
            "pos": all_pos[keep],
            "market": listing["market_code"].to_numpy()[all_pos[keep]],
            "status": all_code[keep],
            "start": all_at[keep],
            "stop": stop[keep],
        }
    )


def stocks_at(intervals: pd.DataFrame, ends: np.ndarray, n_markets: int) -> dict[str, np.ndarray]:
    """Active and Pending listings at each period end: (markets × periods) count arrays."""
    out = {}
    for code, name in (
        (_STATUS["Active"], "active_listings"),
        (_STATUS["Pending"], "pending_listings"),
    ):
        part = intervals[(intervals["status"] == code).to_numpy()]
        lo = np.searchsorted(ends, part["start"].to_numpy(), side="left")
        hi = np.searchsorted(ends, part["stop"].to_numpy(), side="left")
        market = part["market"].to_numpy()
        diff = np.zeros((n_markets, len(ends) + 1), dtype="int64")
        np.add.at(diff, (market, lo), 1)
        np.add.at(diff, (market, hi), -1)
        out[name] = np.cumsum(diff, axis=1)[:, : len(ends)]
    return out


def cuts_in_periods(
    listing: pd.DataFrame,
    history: History | None,
    intervals: pd.DataFrame,
    starts: np.ndarray,
    ends: np.ndarray,
    n_markets: int,
) -> dict[str, np.ndarray]:
    """``price_drops`` (listings cut in the period) and the listings Active at the period's end
    that were cut in it, as (markets × periods) arrays. A cut is a price change down in the
    history; without one (estimated), PreviousListPrice above ListPrice at MajorChangeTimestamp."""
    if history is None:
        cut = (listing["prev_list"] > listing["list"]).to_numpy()
        pos, at = np.flatnonzero(cut), listing["major"].to_numpy()[cut]
    else:
        pos, at = history.pos[history.is_cut], history.at[history.is_cut]
    period = np.searchsorted(ends, at, side="left")  # the period whose end is at or after
    inside = ~np.isnat(at) & (period < len(ends))
    inside[inside] &= at[inside] >= starts[period[inside]]
    pairs = np.unique(np.stack([pos[inside], period[inside]]), axis=1)
    market = listing["market_code"].to_numpy()[pairs[0]]
    drops = np.zeros((n_markets, len(ends)), dtype="int64")
    np.add.at(drops, (market, pairs[1]), 1)
    # of those, the listings whose status at the period's end is Active
    active = intervals[(intervals["status"] == _STATUS["Active"]).to_numpy()]
    first = np.searchsorted(active["pos"].to_numpy(), pairs[0], side="left")
    last = np.searchsorted(active["pos"].to_numpy(), pairs[0], side="right")
    end_at = ends[pairs[1]]
    a_start, a_stop = active["start"].to_numpy(), active["stop"].to_numpy()
    still = np.zeros(pairs.shape[1], dtype=bool)
    for k in range(int((last - first).max(initial=0))):  # a listing's few Active intervals
        j = np.minimum(first + k, len(a_start) - 1)
        has = first + k < last
        still |= has & (a_start[j] <= end_at) & (end_at < a_stop[j])
    active_cut = np.zeros((n_markets, len(ends)), dtype="int64")
    np.add.at(active_cut, (market[still], pairs[1][still]), 1)
    return {"price_drops": drops, "_active_cut": active_cut}
