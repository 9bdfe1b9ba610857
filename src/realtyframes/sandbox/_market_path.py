"""The sandbox market's path through time: its history's length, its season and its price level.

Pure functions of time (epoch seconds, vectorised with numpy), the same for every seed: the
generator (:mod:`~realtyframes.sandbox._history`, :mod:`~realtyframes.sandbox._pricing`) draws
from them, and they are published (:func:`price_path`, :func:`price_level`,
:func:`seasonal_factor`) so that what is computed from the data (a price index, a seasonal
adjustment) can be checked against the truth.

- **Season**: listings enter with an intensity ``1 + 0.2 cos(2 pi (y - PEAK))`` (``y`` in years,
  ``PEAK`` mid-May): about 27 % more entries in spring (March-May) than in winter (December-
  February); homes listed in spring also go under contract faster, so sales peak from May to August.
- **Price level**: every list price (and rent) is the price of its home at ``as_of`` times
  ``price_level(entry) = I(entry) / I(as_of)``, with ``log I(y) = 0.05 y + 0.03 sin(2 pi y / 7)``:
  a constant-quality appreciation of about 5 % a year with a mild 7-year cycle (from about 2 % to
  8 % a year), anchored to the calendar (2020-01-01), so ``I(t2) / I(t1)`` does not depend on the
  sandbox's ``as_of``. A sale closes at its listing's level (the level of its entry).

>>> from datetime import UTC, datetime
>>> as_of = datetime(2026, 6, 30, tzinfo=UTC)
>>> round(price_level(as_of, as_of), 6)
1.0
>>> 0.9 < price_level(datetime(2025, 6, 30, tzinfo=UTC), as_of) < 0.97
True
"""

from __future__ import annotations

import datetime as dt
import math
from typing import overload

import numpy as np

__all__ = [
    "APPRECIATION",
    "CYCLE_AMPLITUDE",
    "CYCLE_YEARS",
    "DEFAULT_HISTORY_YEARS",
    "HISTORY_YEARS_RANGE",
    "SEASON_AMPLITUDE",
    "SEASON_PEAK",
    "check_history_years",
    "history_days",
    "level_at",
    "price_level",
    "price_path",
    "season_wave",
    "seasonal_factor",
]

#: Years of history before ``as_of`` by default, and the allowed range.
DEFAULT_HISTORY_YEARS = 3
HISTORY_YEARS_RANGE = (1, 10)
#: Amplitude of the seasonal entry intensity and its peak (a fraction of the year: mid-May).
SEASON_AMPLITUDE = 0.20
SEASON_PEAK = 134.5 / 365.2425
#: Days to a contract shrink by this share at the season's peak (and grow at its trough).
SEASON_SPEED = 0.15
#: The price level: trend (log per year), cycle amplitude (log) and cycle length (years).
APPRECIATION = 0.05
CYCLE_AMPLITUDE = 0.03
CYCLE_YEARS = 7.0

_YEAR_S = 365.2425 * 86_400
_EPOCH_S = 1_577_836_800  # 2020-01-01T00:00:00Z: the calendar anchor of the season and cycle


def check_history_years(value: object) -> int:
    """``value`` if it is a whole number of years within :data:`HISTORY_YEARS_RANGE`.

    >>> check_history_years(3)
    3
    >>> check_history_years(12)
    Traceback (most recent call last):
    ...
    ValueError: history_years: must be a whole number of years from 1 to 10, got 12
    """
    low, high = HISTORY_YEARS_RANGE
    if (
        isinstance(value, bool)
        or not isinstance(value, int | np.integer)
        or not low <= value <= high
    ):
        raise ValueError(
            f"history_years: must be a whole number of years from {low} to {high}, got {value!r}"
        )
    return int(value)


def history_days(years: int) -> int:
    """Days of history before ``as_of`` for ``years`` years (whole days, leap days counted).

    >>> history_days(1), history_days(3)
    (365, 1096)
    """
    return round(check_history_years(years) * 365.2425)


def _years(ts: np.ndarray | float) -> np.ndarray:
    """Years since the calendar anchor (2020-01-01) of epoch seconds."""
    return (np.asarray(ts, dtype=np.float64) - _EPOCH_S) / _YEAR_S


def season_wave(ts: np.ndarray) -> np.ndarray:
    """``cos(2 pi (y - SEASON_PEAK))`` at epoch seconds ``ts``: 1 at the peak, -1 at the trough."""
    y = _years(ts)
    y -= SEASON_PEAK
    y *= 2 * math.pi
    return np.cos(y, out=y)


def level_at(ts: np.ndarray, as_of_s: float) -> np.ndarray:
    """``I(ts) / I(as_of)`` at epoch seconds (the generator's vectorised :func:`price_level`)."""
    y = _years(ts)
    y0 = float(_years(as_of_s))
    cycle = np.sin(y * (2 * math.pi / CYCLE_YEARS))
    cycle -= math.sin(y0 * 2 * math.pi / CYCLE_YEARS)
    cycle *= CYCLE_AMPLITUDE
    y -= y0
    y *= APPRECIATION
    y += cycle
    return np.exp(y, out=y)


def _seconds(when: dt.datetime | dt.date) -> float:
    if isinstance(when, dt.datetime):
        if when.tzinfo is None or when.utcoffset() is None:
            raise ValueError(f"needs a time zone (e.g. tzinfo=UTC), got {when!r}")
        return when.timestamp()
    return dt.datetime(when.year, when.month, when.day, tzinfo=dt.UTC).timestamp()


@overload
def price_level(when: dt.datetime | dt.date, as_of: dt.datetime) -> float: ...
@overload
def price_level(when: list[dt.datetime] | list[dt.date], as_of: dt.datetime) -> list[float]: ...
def price_level(
    when: dt.datetime | dt.date | list[dt.datetime] | list[dt.date], as_of: dt.datetime
) -> float | list[float]:
    """The sandbox's true constant-quality price level at ``when``, relative to ``as_of`` (1.0).

    A listing entered at ``when`` is priced at its home's ``as_of`` price times this level (a
    date is read as 00:00 UTC). The same for every seed and listing count.

    >>> from datetime import UTC, datetime
    >>> as_of = datetime(2026, 6, 30, tzinfo=UTC)
    >>> [round(x, 3) for x in price_level([datetime(2024, 6, 30, tzinfo=UTC), as_of], as_of)]
    [0.896, 1.0]
    """
    as_of_s = _seconds(as_of)
    if isinstance(when, list):
        ts = np.array([_seconds(w) for w in when], dtype=np.float64)
        return [float(x) for x in level_at(ts, as_of_s)]
    return float(level_at(np.array([_seconds(when)]), as_of_s)[0])


def seasonal_factor(when: dt.datetime | dt.date) -> float:
    """The relative intensity of new listings at ``when`` (1.2 at the mid-May peak, 0.8 at the
    mid-November trough; its mean over a year is 1).

    >>> from datetime import date
    >>> round(seasonal_factor(date(2026, 5, 15)), 2), round(seasonal_factor(date(2026, 11, 14)), 2)
    (1.2, 0.8)
    """
    return 1.0 + SEASON_AMPLITUDE * float(season_wave(np.array([_seconds(when)]))[0])


def price_path(
    as_of: dt.datetime, years: int = DEFAULT_HISTORY_YEARS
) -> list[tuple[dt.date, float]]:
    """The true price level by month over a sandbox's history: ``(month start, level)``.

    One row per calendar month from the month of the oldest possible listing (``years`` before
    ``as_of``) to ``as_of``'s month; ``level`` is the mean of :func:`price_level` over the month's
    days (relative to ``as_of``), i.e. what a constant-quality monthly index of listings entered
    in that month should find. Rebase it (divide by a month's level) to compare with an index.

    >>> from datetime import UTC, datetime
    >>> path = price_path(datetime(2026, 6, 30, tzinfo=UTC), years=1)
    >>> path[0][0], path[-1][0], len(path)
    (datetime.date(2025, 6, 1), datetime.date(2026, 6, 1), 13)
    """
    days = history_days(years)
    as_of_s = _seconds(as_of)
    end = dt.datetime.fromtimestamp(as_of_s, dt.UTC).date()
    first = end - dt.timedelta(days=days)
    out = []
    month = dt.date(first.year, first.month, 1)
    while month <= end:
        following = dt.date(month.year + month.month // 12, month.month % 12 + 1, 1)
        n_days = (following - month).days
        noon = _seconds(month) + 43_200 + 86_400 * np.arange(n_days)
        out.append((month, float(level_at(noon, as_of_s).mean())))
        month = following
    return out
