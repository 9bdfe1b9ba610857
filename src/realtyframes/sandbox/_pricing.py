"""Prices and events of listings: list prices, their rounding, price and status history.

Part of the listing generation (:mod:`realtyframes.sandbox._generate` calls :func:`draw_price` as
its last step, then :func:`draw_history`); the same generator, so the order of draws is fixed.
Event columns hold epoch seconds, ``INF_TS`` for "never"; status codes are positions in the
spec's STATUSES.

>>> round_price(np.array([549_432.0]), np.array([False]), np.random.default_rng(1)).tolist()
[549000.0]
"""

from __future__ import annotations

from collections.abc import Iterable
from types import SimpleNamespace

import numpy as np

from realtyframes.sandbox import _market_data as md
from realtyframes.sandbox._spec import LEASE_TYPES, PROPERTY_TYPES, STATUSES
from realtyframes.sandbox._steps import keep
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
    sale_unit = np.where(p < 1e6, 1000.0, np.where(p < 5e6, 5000.0, 10000.0))
    rent_unit = np.where(p < 3000, 25.0, np.where(p < 10000, 50.0, 100.0))
    unit = np.where(lease, rent_unit, sale_unit)
    out = np.maximum(np.round(p / unit), 1.0) * unit
    charm = (~lease) & (rng.random(p.shape) < 0.35) & (out >= 20000)
    out = out - np.where(charm, np.where(out < 1e6, 100.0, 1000.0), 0.0)
    return out


def price_unit(p: np.ndarray, lease: np.ndarray) -> np.ndarray:
    return np.where(lease, np.where(p < 3000, 25.0, 50.0), np.where(p < 1e6, 1000.0, 5000.0))


def draw_price(rng: np.random.Generator, t: Tables, d: SimpleNamespace) -> None:
    """Value of the property, then the list price (monthly rent for leases)."""
    size_adj = (np.nan_to_num(d.area, nan=1500.0) / 1500.0) ** -0.1
    water_adj = np.where(d.waterfront, np.where(d.unit_sub, 1.3, 1.9), 1.0)
    new_adj = np.where(d.year >= d.as_of_year - 1, 1.2, np.where(d.year < 1980, 0.9, 1.0))
    place = 0.85 * t.city_psf[d.city] * np.where(d.has_sub, t.sub_price[d.sd], 1.0)
    place = place * np.where(d.in_bld, t.bld_price[d.b], 1.0)
    noise = rng.lognormal(0.0, 0.18, d.n)
    value = np.nan_to_num(d.area) * place * d.sp[:, 7] * size_adj * water_adj * new_adj * noise
    land_value = (
        d.lot * t.city_psf[d.city] * 0.12 * d.sp[:, 7] * np.where(d.waterfront, 2.5, 1.0) * noise
    )
    value = np.where(d.ptype == _PT["Land"], land_value, value)
    dock_value = 90_000 * (t.city_psf[d.city] / 500.0) * d.sp[:, 7] * rng.lognormal(0, 0.5, d.n)
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
    price = round_price(price, d.lease, rng)
    keep(d, locals())


def draw_history(
    rng: np.random.Generator, ptype: np.ndarray, entry: np.ndarray, p0: np.ndarray
) -> dict[str, np.ndarray]:
    """Price changes and status changes of each listing as fixed-width event columns.

    ``pc_ts`` (n, 3) and ``prices`` (n, 4: the entry price then each change), ``st_ts`` (n, 4) and
    ``st_code`` (n, 5: Active then each status), ``close_ts`` and ``close_price``. Unused slots hold
    INF_TS; times within a listing strictly increase (each event on a later day).
    """
    n = len(entry)
    lease = LEASE_TYPE[ptype]
    rows = np.arange(n)
    cut_day, d1, k_real, prices = _price_changes(rng, ptype, lease, p0)
    codes, days = _status_paths(rng, lease, d1)

    day0 = entry - entry % DAY
    pc_tod = rng.integers(12 * 3600, 23 * 3600, (n, 3))
    st_tod = rng.integers(12 * 3600, 23 * 3600, (n, 4))
    pc_ts = np.where(cut_day >= NEVER_DAYS, INF_TS, day0[:, None] + cut_day * DAY + pc_tod)
    st_ts = np.where(days >= NEVER_DAYS, INF_TS, day0[:, None] + days * DAY + st_tod)
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


def _price_changes(
    rng: np.random.Generator, ptype: np.ndarray, lease: np.ndarray, p0: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Planned price changes: a gap of 10+ days before each; overpriced homes take longer to sell."""
    n = len(p0)
    k_plan = rng.choice(4, n, p=[0.58, 0.26, 0.11, 0.05])
    gaps = np.empty((n, 3))
    gaps[:, 0] = 14 + rng.exponential(30.0, n)
    gaps[:, 1:] = 14 + rng.exponential(30.0, (n, 2))
    cut_day = np.ceil(np.cumsum(gaps, axis=1)).astype(np.int64)
    cut_day[np.arange(3)[None, :] >= k_plan[:, None]] = NEVER_DAYS
    d1 = _CONTRACT_DAYS[ptype] * rng.lognormal(0.0, 0.65, n) * (1 + 0.3 * k_plan)
    d1 = np.maximum(1, np.round(d1)).astype(np.int64)
    d1[rng.random(n) < 0.015] = NEVER_DAYS  # never goes under contract
    cut_day[cut_day >= d1[:, None]] = NEVER_DAYS
    k_real = (cut_day < NEVER_DAYS).sum(axis=1)

    prices = np.empty((n, 4))
    prices[:, 0] = p0
    for i in range(3):
        old = prices[:, i]
        up = rng.random(n) < 0.08
        factor = np.where(up, 1 + rng.uniform(0.02, 0.08, n), 1 - rng.uniform(0.02, 0.10, n))
        new = round_price(old * factor, lease, rng)
        unit = price_unit(old, lease)
        new = np.where(new == old, np.where(up, old + unit, old - unit), new)
        prices[:, i + 1] = np.where(i < k_real, new, old)
    return cut_day, d1, k_real, prices


def _status_paths(
    rng: np.random.Generator, lease: np.ndarray, d1: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Status codes and their days after the first contract (day ``d1``)."""
    n = len(d1)
    pend = np.where(lease, rng.integers(3, 16, n), rng.integers(20, 56, n))
    auc = rng.integers(5, 21, n)
    fall = rng.integers(7, 31, n)
    relist = 10 + np.round(rng.lognormal(np.log(25.0), 0.6, n)).astype(np.int64)
    r = rng.random(n)
    codes = np.full((n, 4), -1, dtype=np.int8)
    days = np.full((n, 4), NEVER_DAYS, dtype=np.int64)

    def path(m: np.ndarray, seq: Iterable[tuple[int, np.ndarray]]) -> None:
        for slot, (code, day) in enumerate(seq):
            codes[m, slot] = code
            days[m, slot] = day[m]

    s = ~lease
    path(s & ((r < 0.70) | (r >= 0.97)), [(PENDING, d1), (CLOSED, d1 + pend)])
    path(
        s & (r >= 0.70) & (r < 0.84),
        [(UNDER_CONTRACT, d1), (PENDING, d1 + auc), (CLOSED, d1 + auc + pend)],
    )
    back = d1 + fall
    again = back + relist
    path(
        s & (r >= 0.84) & (r < 0.91),
        [(PENDING, d1), (ACTIVE, back), (PENDING, again), (CLOSED, again + pend)],
    )
    path(
        s & (r >= 0.91) & (r < 0.94),
        [(UNDER_CONTRACT, d1), (ACTIVE, back), (PENDING, again), (CLOSED, again + pend)],
    )
    path(s & (r >= 0.94) & (r < 0.97), [(PENDING, d1), (ACTIVE, back)])
    path(lease & (r < 0.60), [(CLOSED, d1)])  # rented straight from Active
    path(lease & (r >= 0.60) & (r < 0.95), [(PENDING, d1), (CLOSED, d1 + pend)])
    path(lease & (r >= 0.95), [(PENDING, d1), (ACTIVE, back)])
    never = d1 >= NEVER_DAYS
    codes[never] = -1
    days[never] = NEVER_DAYS
    return codes, days
