"""Prices and events of listings: list prices, their rounding, price and status history.

Part of the listing generation (:mod:`realtyframes.sandbox._generate` calls :func:`draw_price` as
its last step, then :func:`draw_history`); the same generator, so the order of draws is fixed.
Event columns hold epoch seconds, ``INF_TS`` for "never"; status codes are positions in the
spec's STATUSES.

>>> round_price(np.array([549_432.0]), np.array([False]), np.random.default_rng(1)).tolist()
[549000.0]
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from realtyframes.sandbox import _market_data as md
from realtyframes.sandbox._draws import choice
from realtyframes.sandbox._market_path import SEASON_SPEED, season_wave
from realtyframes.sandbox._spec import LEASE_TYPES, PROPERTY_TYPES, STATUSES
from realtyframes.sandbox._tables import Tables

__all__ = ["draw_history", "draw_price", "price_unit", "round_price"]

DAY = 86_400
INF_TS = np.iinfo(np.int64).max  # "never" in the event columns
NEVER_DAYS = 10**9  # "never" as a day offset (still far from overflowing once times DAY)

#: Status codes of the event columns are positions in the spec's STATUSES.
ACTIVE, PENDING, CLOSED, UNDER_CONTRACT = range(len(STATUSES))
PROPERTY_TYPE_CODES = {name: i for i, name in enumerate(PROPERTY_TYPES)}
_PT = PROPERTY_TYPE_CODES
LEASE_TYPE = np.array([t in LEASE_TYPES for t in PROPERTY_TYPES])
#: Median days from entry to a first contract, per property type.
_CONTRACT_DAYS = np.array([md.CONTRACT_DAYS[t] for t in PROPERTY_TYPES], dtype=np.float64)


def round_price(p: np.ndarray, lease: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """List prices as an agent writes them: 549,900 / 1,995,000 for sales, 2,450 for rents."""
    unit = _unit(p, lease, _ROUND_UNITS)
    out = p / unit
    np.maximum(np.round(out, out=out), 1.0, out=out)
    out *= unit
    charm = rng.random(p.shape) < 0.35
    charm &= ~lease
    charm &= out >= 20000
    at = out[charm]
    out[charm] = at - np.where(at < 1e6, 100.0, 1000.0)
    return out


def price_unit(p: np.ndarray, lease: np.ndarray) -> np.ndarray:
    return _unit(p, lease, _STEP_UNITS)


#: Rounding units by price band: sales under 1M, 5M, above; rents under 3,000, 10,000, above.
_ROUND_UNITS = ((1e6, 5e6), (1000.0, 5000.0, 10000.0), (3000.0, 10000.0), (25.0, 50.0, 100.0))
#: The smallest price step: sales under 1M, above; rents under 3,000, above.
_STEP_UNITS = ((1e6,), (1000.0, 5000.0), (3000.0,), (25.0, 50.0))


def _unit(p: np.ndarray, lease: np.ndarray, bands: tuple[tuple[float, ...], ...]) -> np.ndarray:
    """The unit of each price's band: the top band, one down for each edge the price is below.

    (A NaN price is below no edge: the top band, as the ``np.where(p < x, ...)`` chain gave.)
    """
    sale_edges, sale_units, rent_edges, rent_units = bands
    table = np.array(sale_units + rent_units)
    k_sale = np.full(len(p), len(sale_units) - 1, dtype=np.int8)
    for e in sale_edges:
        k_sale -= p < e
    k_rent = np.full(len(p), len(table) - 1, dtype=np.int8)
    for e in rent_edges:
        k_rent -= p < e
    return table[np.where(lease, k_rent, k_sale)]


def draw_price(rng: np.random.Generator, t: Tables, d: SimpleNamespace) -> None:
    """Value of the property, then the list price (monthly rent for leases)."""
    size_adj = (np.nan_to_num(d.area, nan=1500.0) / 1500.0) ** -0.1
    water_adj = np.where(d.waterfront, np.where(d.unit_sub, 1.3, 1.9), 1.0)
    new_adj = np.where(d.year >= d.entry_year - 1, 1.2, np.where(d.year < 1980, 0.9, 1.0))
    place = 0.85 * t.city_psf[d.city] * np.where(d.has_sub, t.sub_price[d.sd], 1.0)
    place = place * np.where(d.in_bld, t.bld_price[d.b], 1.0)
    noise = rng.lognormal(0.0, 0.18, d.n)
    value = np.nan_to_num(d.area) * place * d.value_factor * size_adj * water_adj * new_adj * noise
    land_value = (
        d.lot
        * t.city_psf[d.city]
        * 0.12
        * d.value_factor
        * np.where(d.waterfront, 2.5, 1.0)
        * noise
    )
    value = np.where(d.ptype == _PT["Land"], land_value, value)
    dock_value = 90_000 * (t.city_psf[d.city] / 500.0) * d.value_factor * rng.lognormal(0, 0.5, d.n)
    value = np.where(d.boat, dock_value, value)
    business = 250_000 * rng.lognormal(0, 0.8, d.n) * (t.city_psf[d.city] / 450.0) ** 0.5
    value = np.where(d.ptype == _PT["Business Opportunity"], business, value)
    value = np.maximum(value, 40_000)
    rent = value * 0.005 * (value / 500_000) ** -0.12 * np.where(d.seasonal, 1.7, 1.0)
    com_rent = (
        np.nan_to_num(d.area) * rng.uniform(22, 55, d.n) * (t.city_psf[d.city] / 480) ** 0.5 / 12
    )
    rent = np.where(d.ptype == _PT["Commercial Lease"], com_rent, rent)
    price = np.where(d.lease, np.maximum(rent, 900.0), value)
    if d.level is not None:  # the market's price level at each listing's entry
        price *= d.level
    d.price = round_price(price, d.lease, rng)  # the rest are temporaries, not kept


def draw_history(
    rng: np.random.Generator, ptype: np.ndarray, entry: np.ndarray, p0: np.ndarray
) -> dict[str, np.ndarray]:
    """Price changes and status changes of each listing as fixed-width event columns.

    ``pc_ts`` (n, 3) and ``prices`` (n, 4: the entry price then each change), ``st_ts`` (n, 4) and
    ``st_code`` (n, 5: Active then each status), ``close_ts`` and ``close_price``. Unused slots hold
    INF_TS; times within a listing strictly increase (each event on a later day). Computed one
    slot (column) at a time. A listing entered in the spring goes under contract sooner (the
    season of :mod:`~realtyframes.sandbox._market_path`).
    """
    n = len(entry)
    lease = LEASE_TYPE[ptype]
    rows = np.arange(n)
    speed = season_wave(entry)
    speed *= -SEASON_SPEED
    speed += 1.0
    cut_day, d1, k_real, prices = _price_changes(rng, ptype, lease, p0, speed)
    codes, days = _status_paths(rng, lease, d1)

    day0 = entry - entry % DAY
    pc_ts = _times(day0, cut_day, rng.integers(12 * 3600, 23 * 3600, (n, 3)))
    st_ts = _times(day0, days, rng.integers(12 * 3600, 23 * 3600, (n, 4)))
    st_code = np.concatenate([np.zeros((n, 1), dtype=np.int8), codes], axis=1)

    is_closed = codes == CLOSED
    closes = is_closed.any(axis=1)
    close_ts = np.where(closes, st_ts[rows, np.argmax(is_closed, axis=1)], INF_TS)
    at_close = prices[rows, k_real]
    ratio = np.where(
        lease,
        np.clip(rng.normal(0.99, 0.015, n), 0.93, 1.03),
        np.clip(rng.normal(0.97, 0.03, n), 0.85, 1.10),
    )
    unit = np.where(lease, 5.0, 500.0)
    close_price = np.where(closes, np.round(at_close * ratio / unit) * unit, np.nan)
    return {
        "pc_ts": pc_ts,
        "prices": prices,
        "st_ts": st_ts,
        "st_code": st_code,
        "close_ts": close_ts,
        "close_price": close_price,
    }


def _times(day0: np.ndarray, days: list[np.ndarray], tod: np.ndarray) -> np.ndarray:
    """Event times (n, slots): the day ``days[slot]`` after the entry day at ``tod``, or INF_TS.

    Stored slot by slot (a column-major array: each slot's times are contiguous).
    """
    out = np.empty(tod.shape[::-1], dtype=np.int64)
    for slot, (ts, day) in enumerate(zip(out, days, strict=True)):
        np.multiply(day, DAY, out=ts)
        ts += day0
        ts += tod[:, slot]
        ts[day >= NEVER_DAYS] = INF_TS
    return out.T


def _price_changes(
    rng: np.random.Generator,
    ptype: np.ndarray,
    lease: np.ndarray,
    p0: np.ndarray,
    speed: np.ndarray,
) -> tuple[list[np.ndarray], np.ndarray, np.ndarray, np.ndarray]:
    """Planned price changes: a gap of 10+ days before each; overpriced homes take longer to sell.

    The days of the (up to) three changes come back as one array per change; ``speed`` scales the
    days to a first contract (the season).
    """
    n = len(p0)
    k_plan = choice(rng, [0.58, 0.26, 0.11, 0.05], n)
    gap0 = 14 + rng.exponential(30.0, n)
    gaps = 14 + rng.exponential(30.0, (n, 2))
    total = gap0  # the running sum of the gaps, rounded up to whole days
    cut_day = [np.ceil(total).astype(np.int64)]
    for i in range(2):
        total = total + gaps[:, i]
        cut_day.append(np.ceil(total).astype(np.int64))
    d1 = _CONTRACT_DAYS[ptype] * rng.lognormal(0.0, 0.65, n) * (1 + 0.3 * k_plan)
    d1 *= speed
    d1 = np.maximum(1, np.round(d1)).astype(np.int64)
    d1[rng.random(n) < 0.015] = NEVER_DAYS  # never goes under contract
    k_real = np.zeros(n, dtype=np.int64)
    for i, cut in enumerate(cut_day):
        cut[(k_plan <= i) | (cut >= d1)] = NEVER_DAYS
        k_real += cut < NEVER_DAYS

    prices = np.empty((4, n))  # column-major (n, 4) below: each slot's prices contiguous
    prices[0] = old = p0
    for i in range(3):
        up = rng.random(n) < 0.08
        factor = np.where(up, 1 + rng.uniform(0.02, 0.08, n), 1 - rng.uniform(0.02, 0.10, n))
        new = round_price(old * factor, lease, rng)
        same = np.flatnonzero(new == old)  # a change always moves the price by a unit at least
        at, unit = old[same], price_unit(old[same], lease[same])
        new[same] = np.where(up[same], at + unit, at - unit)
        old = np.where(i < k_real, new, old)
        prices[i + 1] = old
    return cut_day, d1, k_real, prices.T


#: Status paths after a first contract: codes of up to four status changes and the day of each,
#: as the days after entry; slot days are named d1 (the contract), +pend, +auc, back (d1 + fall),
#: again (back + relist). Path 8: never under contract.
_PATHS: tuple[tuple[tuple[int, str], ...], ...] = (
    ((PENDING, "d1"), (CLOSED, "d1+pend")),  # 0 sale, the usual
    ((UNDER_CONTRACT, "d1"), (PENDING, "d1+auc"), (CLOSED, "d1+auc+pend")),  # 1 sale
    ((PENDING, "d1"), (ACTIVE, "back"), (PENDING, "again"), (CLOSED, "again+pend")),  # 2 sale
    ((UNDER_CONTRACT, "d1"), (ACTIVE, "back"), (PENDING, "again"), (CLOSED, "again+pend")),  # 3
    ((PENDING, "d1"), (ACTIVE, "back")),  # 4 sale, back on the market
    ((CLOSED, "d1"),),  # 5 lease, rented straight from Active
    ((PENDING, "d1"), (CLOSED, "d1+pend")),  # 6 lease
    ((PENDING, "d1"), (ACTIVE, "back")),  # 7 lease, back on the market
    (),  # 8 never under contract
)
_PATH_CODES = np.array([[c for c, _ in p] + [-1] * (4 - len(p)) for p in _PATHS], dtype=np.int8)
_NEVER_PATH = len(_PATHS) - 1
#: Per slot: each day name used there and which paths (a mask over path numbers) use it.
_SLOT_DAYS = [
    [
        (name, np.array([len(p) > slot and p[slot][1] == name for p in _PATHS]))
        for name in dict.fromkeys(p[slot][1] for p in _PATHS if len(p) > slot)
    ]
    for slot in range(4)
]
#: Which share of the draw ``r`` takes which path (sales, leases): the path of each band.
_SALE_BANDS = ((0.70, 0.84, 0.91, 0.94, 0.97), (0, 1, 2, 3, 4, 0))
_LEASE_BANDS = ((0.60, 0.95), (5, 6, 7))


def _band(r: np.ndarray, bands: tuple[tuple[float, ...], tuple[int, ...]]) -> np.ndarray:
    edges, paths = bands
    k = np.zeros(len(r), dtype=np.int8)
    for e in edges:
        k += r >= e
    return np.array(paths, dtype=np.int8)[k]


def _status_paths(
    rng: np.random.Generator, lease: np.ndarray, d1: np.ndarray
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Status codes (n, 4) and their days after entry, one array per slot (day ``d1``: contract)."""
    n = len(d1)
    pend = np.where(lease, rng.integers(3, 16, n), rng.integers(20, 56, n))
    auc = rng.integers(5, 21, n)
    fall = rng.integers(7, 31, n)
    relist = 10 + np.round(rng.lognormal(np.log(25.0), 0.6, n)).astype(np.int64)
    r = rng.random(n)
    path = np.where(lease, _band(r, _LEASE_BANDS), _band(r, _SALE_BANDS))
    path[d1 >= NEVER_DAYS] = _NEVER_PATH
    codes = _PATH_CODES[path]
    back = d1 + fall
    again = back + relist
    value = {
        "d1": lambda: d1,
        "d1+pend": lambda: d1 + pend,
        "d1+auc": lambda: d1 + auc,
        "d1+auc+pend": lambda: d1 + auc + pend,
        "back": lambda: back,
        "again": lambda: again,
        "again+pend": lambda: again + pend,
    }
    days = []
    for slot_days in _SLOT_DAYS:
        day = np.full(n, NEVER_DAYS, dtype=np.int64)
        for name, paths in slot_days:
            np.copyto(day, value[name](), where=paths[path])
        days.append(day)
    return codes, days
