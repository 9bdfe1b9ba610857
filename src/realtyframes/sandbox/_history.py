"""The market's history over the years: seasonal entry times and resales of the same homes.

Part of the listing generation (:class:`~realtyframes.sandbox._store.ListingStore` calls
:func:`entry_times` first, then :func:`draw_resales` once every listing and its history are
drawn). The season and the price level are :mod:`~realtyframes.sandbox._market_path`'s.

- :func:`entry_times`: ``n`` entries over the ``years`` before ``as_of`` (so ``n`` listings are
  visible at ``as_of``) and the next year's at the same pace, each day drawn with the seasonal
  intensity, the time of day uniform from 12:00 to 23:00 UTC.
- :func:`draw_resales`: about :data:`RESALE_SHARE` of the Residential listings that enter when an
  earlier Residential sale closed at least :data:`MIN_HOLD_DAYS` before are resales of such a
  home: a new ListingId with the earlier listing's address and attributes
  (:data:`PROPERTY_COLUMNS`), listed at the earlier list price times the change of the price level
  between the two entries times a small noise (the home's own change), with a history drawn anew
  from that price. Each home sells again at most once, and a resale is never the source of another.

>>> rng = np.random.default_rng(1)
>>> ts = entry_times(rng, 1_782_777_600, 100, 3)
>>> len(ts), bool((ts[:-1] <= ts[1:]).all())
(133, True)
"""

from __future__ import annotations

import numpy as np

from realtyframes.sandbox._draws import choice
from realtyframes.sandbox._market_path import SEASON_AMPLITUDE, history_days, season_wave
from realtyframes.sandbox._pricing import (
    DAY,
    INF_TS,
    PROPERTY_TYPE_CODES,
    draw_history,
    round_price,
)

__all__ = [
    "FUTURE_DAYS",
    "MIN_HOLD_DAYS",
    "PROPERTY_COLUMNS",
    "RESALE_SHARE",
    "draw_resales",
    "entry_times",
    "sorted_times",
]

FUTURE_DAYS = 365  # ~12 months generated past as_of
#: Share of the eligible later Residential listings that are resales of an earlier sale.
RESALE_SHARE = 0.12
#: The shortest time from a sale's close to its home's next listing.
MIN_HOLD_DAYS = 365
#: Log-normal sigma of a home's own price change between two sales (beyond the market's).
RESALE_NOISE = 0.05
#: The columns of a home (copied to its resale); the others belong to the listing (agent,
#: condition, furnishing, seasonal lease, price).
PROPERTY_COLUMNS = (
    "sub",
    "city",
    "zip",
    "prefix",
    "street",
    "number",
    "unit",
    "subdiv",
    "building",
    "lat",
    "lng",
    "beds",
    "baths",
    "area",
    "lot",
    "year",
    "hoa",
    "waterfront",
    "pool",
    "penthouse",
    "pets",
    "gated",
    "tennis",
    "golf",
    "boat_dock",
    "senior",
)
_RESIDENTIAL = PROPERTY_TYPE_CODES["Residential"]


def sorted_times(ts: np.ndarray) -> np.ndarray:
    """``np.sort(ts)`` as int64, sorted as offsets from the earliest (int32 sorts faster).

    >>> sorted_times(np.array([1_800_000_300, 1_800_000_000, 1_800_000_100])).tolist()
    [1800000000, 1800000100, 1800000300]
    """
    if len(ts) == 0:
        return ts.astype(np.int64)
    start = int(ts.min())
    if int(ts.max()) - start >= 2**31:
        return np.sort(ts).astype(np.int64)
    return np.sort((ts - start).astype(np.int32)).astype(np.int64) + start


def _days(rng: np.random.Generator, first_day: int, days: int, count: int) -> np.ndarray:
    """``count`` days (epoch seconds of their 00:00) from ``days`` days after ``first_day``, each
    day as likely as its seasonal intensity."""
    day = first_day + DAY * np.arange(days, dtype=np.int64)
    weight = season_wave(day + DAY // 2)
    weight *= SEASON_AMPLITUDE
    weight += 1.0
    return day[choice(rng, weight, count)]


def entry_times(rng: np.random.Generator, as_of_s: int, n: int, years: int) -> np.ndarray:
    """Sorted entry times: ``n`` over the ``years`` before ``as_of_s`` and the next year's."""
    past_days = history_days(years)
    m = round(n * FUTURE_DAYS / past_days)
    day_now = as_of_s - as_of_s % DAY
    past = _days(rng, day_now - (past_days - 1) * DAY, past_days, n)
    past += rng.integers(12 * 3600, 23 * 3600, n)
    np.minimum(past, as_of_s, out=past)
    future = _days(rng, day_now, FUTURE_DAYS + 1, m)
    future += rng.integers(12 * 3600, 23 * 3600, m)
    future[future <= as_of_s] += DAY
    return sorted_times(np.concatenate([past, future]))


def _pairs(rng: np.random.Generator, cols: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Rows of the resales and of the earlier listings of their homes (both sorted by the first)."""
    entry, close_ts = cols["entry"], cols["close_ts"]
    residential = cols["ptype"] == _RESIDENTIAL
    asked = residential & (rng.random(len(entry)) < RESALE_SHARE)
    sources = np.flatnonzero(residential & ~asked & (close_ts < INF_TS))
    sources = sources[np.argsort(close_ts[sources], kind="stable")]
    rows = np.flatnonzero(asked)
    # the sources closed at least MIN_HOLD_DAYS before the entry: the first `eligible` of them
    eligible = np.searchsorted(close_ts[sources], entry[rows] - MIN_HOLD_DAYS * DAY, side="right")
    pick = (rng.random(len(rows)) * eligible).astype(np.int64)
    has = eligible > 0
    rows, source = rows[has], sources[pick[has]]
    _, first = np.unique(source, return_index=True)  # a home sells again at most once
    first.sort()
    return rows[first], source[first]


def draw_resales(
    rng: np.random.Generator, cols: dict[str, np.ndarray], level: np.ndarray
) -> np.ndarray:
    """Turn a share of later Residential listings into resales of earlier ones (in place).

    ``cols`` holds every listing and its history, ``level`` each listing's price level; sets
    ``prop`` (the ListingId number of each home's first listing) and returns the resales' rows.
    """
    rows, source = _pairs(rng, cols)
    for name in PROPERTY_COLUMNS:
        cols[name][rows] = cols[name][source]
    price = cols["p0"][source] * (level[rows] / level[source])
    price *= rng.lognormal(0.0, RESALE_NOISE, len(rows))
    p0 = round_price(price, np.zeros(len(rows), dtype=bool), rng)
    cols["p0"][rows] = p0
    history = draw_history(rng, cols["ptype"][rows], cols["entry"][rows], p0)
    for name, values in history.items():
        cols[name][rows] = values
    prop = cols["id"].copy()
    prop[rows] = cols["id"][source]
    cols["prop"] = prop
    return rows
