"""The periods of :func:`realtyframes.analysis.trends.market_trends`: calendar periods (weeks,
months, quarters) and rolling 4-week windows, and where an event or an interval falls in them.

A :class:`Grid` is markets × periods. Its periods are windows of ``width`` consecutive *base*
periods (weeks ending Sunday, months, quarters): width 1 for ``"W"``, ``"M"``, ``"Q"``; width 4
for ``"4W"`` (a window ends each Sunday and spans the 4 weeks to it, so consecutive windows
overlap by 3 weeks). An event in base period ``b`` falls in the windows ``b - width + 1 .. b``;
:meth:`Grid.pairs` gives those (row, cell) pairs, one per window, so flows and medians over
overlapping windows are the same group-bys as over calendar periods.

>>> import numpy as np
>>> day = 86_400_000_000
>>> grid = Grid(1, np.arange(5) * 7 * day, np.arange(1, 6) * 7 * day - 1, width=4)
>>> grid.n_periods  # 5 weeks: windows ending in the 4th and the 5th
2
>>> grid.pairs(np.array([0]), np.array([3 * 7 * day]))[1].tolist()  # the 4th week: in both
[1, 0]
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from realtyframes.analysis._stocks import period_of

__all__ = [
    "FREQS",
    "PREVIOUS",
    "WIDTHS",
    "YEAR",
    "Grid",
    "base_periods",
    "expand",
    "read_from",
    "spans",
]

#: ``freq`` values: weeks ending Sunday, rolling 4-week windows ending each Sunday, calendar
#: months, calendar quarters (the pandas period code of their base period).
FREQS: dict[str, str] = {"W": "W-SUN", "4W": "W-SUN", "M": "M", "Q": "Q-DEC"}
#: Base periods per window.
WIDTHS: dict[str, int] = {"W": 1, "4W": 4, "M": 1, "Q": 1}
#: Periods in a year (the year-over-year lag) and between a period and the previous one that
#: does not overlap it (the period-over-period lag, ``_mom``), in rows.
YEAR: dict[str, int] = {"W": 52, "4W": 52, "M": 12, "Q": 4}
PREVIOUS: dict[str, int] = {"W": 1, "4W": 4, "M": 1, "Q": 1}


def base_periods(first: pd.Timestamp, last: pd.Timestamp, freq: str) -> pd.PeriodIndex:
    """The base periods from the one holding ``first`` (naive) back ``width - 1`` more, to the
    one holding ``last``."""
    periods = pd.period_range(first, last, freq=FREQS[freq])
    extra = WIDTHS[freq] - 1
    if extra:
        periods = pd.period_range(periods[0] - extra, periods[-1], freq=FREQS[freq])
    return periods


def read_from(
    earliest: pd.Timestamp | None, first: pd.Timestamp, freq: str, lead: str
) -> pd.Timestamp:
    """Where the trends' computed periods begin (UTC): ``first`` moved back a year (``lead=
    "year"``: the changes' lags) or to the data's start (``"all"``: a seasonal fit), but never
    before the data's first whole period (the first that begins at or after ``earliest``, naive
    UTC; with ``"4W"`` the first whole window), nor after ``first``.

    >>> at = pd.Timestamp("2024-01-01", tz="UTC")
    >>> read_from(pd.Timestamp("2022-03-05 12:00"), at, "M", "year").date()
    datetime.date(2023, 1, 1)
    >>> read_from(pd.Timestamp("2022-03-05 12:00"), at, "M", "all").date()
    datetime.date(2022, 4, 1)
    """
    if earliest is None:
        return first
    period = earliest.to_period(FREQS[freq])
    floor = period.start_time if period.start_time == earliest else (period + 1).start_time
    floor = floor.tz_localize("UTC") + pd.Timedelta(weeks=WIDTHS[freq] - 1)  # 4W: whole windows
    back = first - pd.DateOffset(years=1) if lead == "year" else floor
    return min(max(back, floor), first)


def spans(periods: pd.PeriodIndex) -> tuple[np.ndarray, np.ndarray]:
    """Each period's first and last instant (naive UTC microseconds, int64)."""
    starts = periods.start_time.as_unit("us").to_numpy().view("int64")
    ends = periods.end_time.floor("us").as_unit("us").to_numpy().view("int64")
    return starts, ends


class Grid:
    """Markets × periods (windows of ``width`` base periods): where a (market, time) pair
    falls, and tallies over the grid. ``starts`` / ``ends``: each window's first and last
    instant (microseconds)."""

    def __init__(
        self, n_markets: int, base_starts: np.ndarray, base_ends: np.ndarray, width: int = 1
    ) -> None:
        self.n_markets, self.width = n_markets, width
        self.base_starts, self.base_ends = base_starts, base_ends
        self.n_periods = len(base_ends) - width + 1
        self.starts, self.ends = base_starts[: self.n_periods], base_ends[width - 1 :]

    @property
    def size(self) -> int:
        return self.n_markets * self.n_periods

    def pairs(self, market: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The (row, flat cell) pairs of the times ``at`` (microseconds) of rows in ``market``:
        one per window the time falls in (none outside every window). Calendar periods (width 1)
        give the rows in order, each once."""
        base = period_of(at, self.base_starts, self.base_ends)
        inside = base < len(self.base_ends)
        inside &= at >= self.base_starts[0]  # NaT: the smallest int64
        if inside.all():
            rows = np.arange(len(at))
        else:
            rows = np.flatnonzero(inside)
            base, market = base[inside], market[inside]
        if self.width == 1:
            cells = market * self.n_periods
            cells += base
            return rows, cells
        got_rows, got_cells = [], []
        for k in range(self.width):
            window = base - k
            ok = (window >= 0) & (window < self.n_periods)
            got_rows.append(rows[ok])
            got_cells.append(market[ok] * self.n_periods + window[ok])
        return np.concatenate(got_rows), np.concatenate(got_cells)

    def tally(self, cells: np.ndarray) -> np.ndarray:
        """How many of ``cells`` (flat; negative ones left out) fall in each, as markets ×
        periods."""
        cells = cells[cells >= 0]
        counts = np.bincount(cells, minlength=self.size)
        return counts.reshape(self.n_markets, self.n_periods)

    def window_of(self, at: np.ndarray) -> np.ndarray:
        """The first window whose end is at or after each time (``np.searchsorted(ends, at)``),
        from the base period holding it (:func:`~._stocks.period_of`'s day table)."""
        base = period_of(at, self.base_starts, self.base_ends)
        return np.maximum(base - (self.width - 1), 0) if self.width > 1 else base

    def starts_before(self, at: np.ndarray) -> np.ndarray:
        """How many windows start before each time (``np.searchsorted(starts, at)``): the
        base periods are contiguous, so those up to the one holding ``at - 1``."""
        base = period_of(at - 1, self.base_starts, self.base_ends)
        return np.where(at - 1 >= self.base_starts[0], np.minimum(base + 1, self.n_periods), 0)

    def ends_within(self, start: np.ndarray, stop: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For intervals ``[start, stop)``: the first and one past the last window whose end
        lies inside (the windows the interval is in at their end)."""
        return self.window_of(start), self.window_of(stop)

    def overlapped(self, start: np.ndarray, stop: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For intervals ``[start, stop)``: the first and one past the last window they overlap
        (window end at or after ``start``, window start before ``stop``)."""
        return self.window_of(start), self.starts_before(stop)


def expand(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For ranges ``[lo, hi)``: each range's index repeated once per member, and the members
    (``hi <= lo``: none)."""
    length = np.maximum(hi - lo, 0)
    which = np.repeat(np.arange(len(lo)), length)
    offset = np.arange(len(which)) - np.repeat(np.cumsum(length) - length, length)
    return which, lo[which] + offset
