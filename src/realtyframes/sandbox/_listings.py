"""The sandbox's listings: a deterministic synthetic market, its search, detail and change feed.

:class:`ListingStore` generates ``n`` listings visible at ``as_of`` (plus the ones entered over the
following ~12 months) from a seed, with a history of price changes and status changes kept in
fixed-width event columns. The state at the sandbox clock (ListPrice, StandardStatus, DaysOnMarket,
...) is computed from those columns with numpy, and again whenever the clock moves. No HTTP here:
the starlette app calls this class and renders its :class:`~realtyframes.sandbox._errors.SandboxError`.

>>> from datetime import UTC, datetime
>>> store = ListingStore(n=200, seed=7, as_of=datetime(2026, 5, 1, tzinfo=UTC))
>>> page = store.search({"City": "Miami", "Limit": "5"})
>>> page["limit"], len(page["listings"]) <= 5
(5, True)
"""

from __future__ import annotations

import math
import random
import re
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np

from realtyframes.sandbox import _market_data as md
from realtyframes.sandbox._errors import SandboxError, bad_param

__all__ = ["ListingStore"]

DAY = 86_400
INF_TS = np.iinfo(np.int64).max  # "never" in the event columns
NEVER_DAYS = 10**9  # "never" as a day offset (still far from overflowing once times DAY)
HISTORY_DAYS = 548  # ~18 months of history before as_of
FUTURE_DAYS = 365  # ~12 months generated past as_of

SORTS: tuple[str, ...] = ("-listprice", "listprice", "-listdate", "beds", "baths")
CHANGE_TYPES: tuple[str, ...] = ("price_change", "status_change")
MAX_LIMIT = 50
DEFAULT_LIMIT = 20
MAX_LISTING_IDS = 100

ACTIVE, UNDER_CONTRACT, PENDING, CLOSED = 0, 1, 2, 3
PREFIXES: tuple[str, ...] = ("", "N", "S", "E", "W", "NE", "NW", "SE", "SW")
SUBTYPES: tuple[str, ...] = tuple(dict.fromkeys(s for w in md.SUBTYPE_WEIGHTS.values() for s in w))
_SUB = {name: i for i, name in enumerate(SUBTYPES)}
_PT = {name: i for i, name in enumerate(md.PROPERTY_TYPES)}
_ST = {name: i for i, name in enumerate(md.STATUSES)}
FURNISHED_VALUES = ("Unfurnished", "Furnished")  # codes 0, 1; -1 = null
PETS_VALUES = ("No", *md.PETS_YES)  # codes 0..3; -1 = null
CONDITIONS = ("Standard", md.CONDITION_SHORT_SALE, *md.CONDITIONS_OTHER)  # codes 0..3

# Per-subtype generation parameters: area median / sigma / min / max (sqft; 0 = no living area),
# sqft per bedroom, min and max bedrooms (-1 = not applicable), price factor.
_SUBTYPE_PARAMS: dict[str, tuple[float, float, float, float, float, int, int, float]] = {
    "Single Family Residence": (2300, 0.35, 900, 12000, 650, 2, 7, 1.00),
    "Condominium": (1150, 0.40, 400, 6000, 600, 0, 5, 0.92),
    "Townhouse": (1600, 0.25, 900, 3500, 600, 2, 4, 0.78),
    "Villa": (1400, 0.25, 800, 3000, 620, 2, 3, 0.72),
    "Condo - Hotel": (550, 0.30, 300, 1500, 700, 0, 1, 1.05),
    "1/2 Duplex": (1300, 0.25, 700, 2500, 600, 2, 3, 0.68),
    "Mobile Home": (1000, 0.20, 500, 1800, 450, 2, 3, 0.30),
    "Apartment": (950, 0.30, 450, 2200, 550, 0, 3, 0.85),
    "Efficiency": (420, 0.15, 250, 600, 10**6, 0, 0, 0.80),
    "Duplex": (2200, 0.25, 1200, 4000, 550, 4, 6, 0.62),
    "Triplex": (3300, 0.25, 1800, 5500, 550, 5, 9, 0.58),
    "Quadruplex": (4200, 0.25, 2400, 7000, 550, 6, 12, 0.55),
    "Multi Family": (7000, 0.40, 3500, 30000, 600, 8, 40, 0.50),
    "Residential Lot": (0, 0, 0, 0, 0, -1, -1, 1.0),
    "Commercial Land": (0, 0, 0, 0, 0, -1, -1, 1.5),
    "Acreage": (0, 0, 0, 0, 0, -1, -1, 0.4),
    "Boat Dock": (0, 0, 0, 0, 0, -1, -1, 1.0),
    "Boat Slip": (0, 0, 0, 0, 0, -1, -1, 0.7),
    "Office": (3500, 0.80, 800, 60000, 0, -1, -1, 0.75),
    "Retail": (3000, 0.70, 600, 40000, 0, -1, -1, 0.80),
    "Industrial": (12000, 0.70, 2000, 120000, 0, -1, -1, 0.35),
    "Warehouse": (15000, 0.70, 2000, 150000, 0, -1, -1, 0.30),
    "Mixed Use": (6000, 0.60, 1500, 50000, 0, -1, -1, 0.70),
    "Restaurant": (2500, 0.40, 800, 9000, 0, -1, -1, 1.0),
    "Service": (1500, 0.40, 500, 6000, 0, -1, -1, 1.0),
    "Franchise": (2000, 0.40, 600, 6000, 0, -1, -1, 1.0),
}
_SP = np.array([_SUBTYPE_PARAMS[s] for s in SUBTYPES], dtype=np.float64)

#: Median days from entry to a first contract, per property type.
_CONTRACT_DAYS = np.array([50, 75, 110, 80, 130, 140, 24, 85], dtype=np.float64)
_LEASE_TYPE = np.array([t in md.LEASE_TYPES for t in md.PROPERTY_TYPES])
_RESIDENTIAL = np.array([t in ("Residential", "Residential Lease") for t in md.PROPERTY_TYPES])
_HOUSE_SUBS = np.array(
    [s in ("Single Family Residence", "Townhouse", "Villa", "1/2 Duplex") for s in SUBTYPES]
)
_UNIT_SUBS = np.array([s in md.UNIT_SUBTYPES for s in SUBTYPES])

# Summary fields of a search result, in output order (detail adds the rest).
_SUMMARY_KEYS = (
    "ListingId",
    "ListPrice",
    "PreviousListPrice",
    "ClosePrice",
    "StandardStatus",
    "PropertyType",
    "PropertySubType",
    "UnparsedAddress",
    "StreetNumber",
    "StreetDirPrefix",
    "StreetName",
    "UnitNumber",
    "City",
    "StateOrProvince",
    "PostalCode",
    "CountyOrParish",
    "SubdivisionName",
    "BuildingName",
    "BedroomsTotal",
    "BathroomsTotalInteger",
    "LivingArea",
    "LotSizeSquareFeet",
    "YearBuilt",
    "DaysOnMarket",
    "AssociationFee",
    "WaterfrontYN",
    "PoolPrivateYN",
    "SeniorCommunityYN",
    "coordinates",
    "OriginalEntryTimestamp",
    "ModificationTimestamp",
    "MajorChangeTimestamp",
    "CloseDate",
    "ListAgentMlsId",
    "ListOfficeMlsId",
    "ListOfficeName",
)


# ----------------------------------------------------------------------------------------------
# small helpers


def _iso(ts: int) -> str:
    """Seconds since the epoch as ISO 8601 UTC with 'Z'."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def _date(ts: int) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(ts))


def _num(x: float) -> int | None:
    """A whole number for JSON, or None for NaN."""
    return None if x != x else int(x)


def _listing_id(num: int) -> str:
    return f"A{num:08d}"


def _utc_seconds(dt: datetime, name: str) -> int:
    if dt.tzinfo is None or dt.utcoffset() is None:
        raise ValueError(f"{name} must be timezone-aware (UTC), got {dt!r}")
    return int(dt.timestamp() // 1)


def _round_price(p: np.ndarray, lease: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """List prices as an agent writes them: 549,900 / 1,995,000 for sales, 2,450 for rents."""
    sale_unit = np.where(p < 1e6, 1000.0, np.where(p < 5e6, 5000.0, 10000.0))
    rent_unit = np.where(p < 3000, 25.0, np.where(p < 10000, 50.0, 100.0))
    unit = np.where(lease, rent_unit, sale_unit)
    out = np.maximum(np.round(p / unit), 1.0) * unit
    charm = (~lease) & (rng.random(p.shape) < 0.35) & (out >= 20000)
    out = out - np.where(charm, np.where(out < 1e6, 100.0, 1000.0), 0.0)
    return out


def _price_unit(p: np.ndarray, lease: np.ndarray) -> np.ndarray:
    return np.where(lease, np.where(p < 3000, 25.0, 50.0), np.where(p < 1e6, 1000.0, 5000.0))


# ----------------------------------------------------------------------------------------------
# lookup tables (cities, streets, subdivisions, buildings, brokers)


class _Tables:
    """Categorical lookups shared by all listings; deterministic from the seed and size."""

    def __init__(self, seed: int, n: int, as_of_year: int) -> None:
        rng = np.random.default_rng([seed, 0])
        cities = md.CITIES
        self.city_names = [c.name for c in cities]
        self.city_county = [c.county for c in cities]
        self.city_weights = np.array([c.weight for c in cities]) / sum(c.weight for c in cities)
        self.city_lat = np.array([c.lat for c in cities])
        self.city_lng = np.array([c.lng for c in cities])
        self.city_psf = np.array([c.psf for c in cities])
        self.zips: list[str] = []
        self.city_zips: list[np.ndarray] = []
        for c in cities:
            start = len(self.zips)
            self.zips.extend(c.zips)
            self.city_zips.append(np.arange(start, len(self.zips)))

        # streets: (prefix code, street name code) pools per city
        names: dict[str, int] = {}
        suffixes = ("St", "Ave", "Ter", "Ct", "Pl", "Dr", "Way", "Rd")
        self.city_streets: list[tuple[np.ndarray, np.ndarray]] = []
        for c in cities:
            pool: list[tuple[int, str]] = [(0, s) for s in c.streets]
            numbers = rng.choice(np.arange(1, 200), 24, replace=False)
            for num in numbers.tolist():
                prefix = c.prefixes[int(rng.integers(len(c.prefixes)))]
                suffix = suffixes[int(rng.integers(len(suffixes)))]
                pool.append((PREFIXES.index(prefix), f"{_ordinal(num)} {suffix}"))
            pref = np.array([p for p, _ in pool], dtype=np.int8)
            codes = np.array([names.setdefault(s, len(names)) for _, s in pool], dtype=np.int16)
            self.city_streets.append((pref, codes))
        self.streets = list(names)

        # subdivisions
        self.subdivisions: list[md.Subdivision] = []
        self.sub_city: list[int] = []
        sub_zip, sub_lat, sub_lng = [], [], []
        self.city_subs: list[np.ndarray] = []
        for ci, c in enumerate(cities):
            start = len(self.subdivisions)
            for s in c.subdivisions:
                self.subdivisions.append(s)
                self.sub_city.append(ci)
                sub_zip.append(int(rng.choice(self.city_zips[ci])))
                sub_lat.append(c.lat + rng.uniform(-0.035, 0.035))
                sub_lng.append(c.lng + rng.uniform(-0.03, 0.03))
            self.city_subs.append(np.arange(start, len(self.subdivisions)))
        subs = self.subdivisions
        self.sub_names = [s.name for s in subs]
        self.sub_zip = np.array(sub_zip, dtype=np.int16)
        self.sub_lat = np.array(sub_lat)
        self.sub_lng = np.array(sub_lng)
        self.sub_price = np.array([s.price for s in subs])
        self.sub_water = np.array([s.waterfront for s in subs])
        self.sub_gated = np.array([s.gated for s in subs])
        self.sub_golf = np.array([s.golf for s in subs])
        self.sub_tennis = np.array([s.tennis for s in subs])
        self.sub_senior = np.array([s.senior for s in subs])
        self.sub_hoa = np.array([s.hoa for s in subs])

        # condo buildings: a fixed address, neighbourhood, height, age, HOA rate
        b_names: list[str] = []
        b_city, b_sub, b_zip, b_pref, b_street, b_num, b_floors = ([] for _ in range(7))
        b_lat: list[float] = []
        b_lng: list[float] = []
        b_hoa: list[float] = []
        b_price: list[float] = []
        b_water: list[bool] = []
        b_tennis: list[bool] = []
        b_year: list[int] = []
        self.city_buildings: list[np.ndarray] = []
        for ci, c in enumerate(cities):
            start = len(b_names)
            plain = [i for i in self.city_subs[ci].tolist() if not subs[i].senior]
            pref, codes = self.city_streets[ci]
            for name in c.buildings:
                si = int(rng.choice(plain))
                k = int(rng.integers(min(len(c.streets), len(codes))))
                b_names.append(name)
                b_city.append(ci)
                b_sub.append(si)
                b_zip.append(int(self.sub_zip[si]))
                b_pref.append(int(pref[k]))
                b_street.append(int(codes[k]))
                b_num.append(int(rng.integers(100, 9999)))
                b_floors.append(int(rng.integers(6, 61)))
                b_lat.append(self.sub_lat[si] + rng.normal(0, 0.004))
                b_lng.append(self.sub_lng[si] + rng.normal(0, 0.004))
                b_water.append(bool(rng.random() < 0.55))
                b_year.append(int(max(1965, as_of_year - rng.gamma(2.0, 10.0))))
                b_hoa.append(rng.uniform(0.55, 1.3))
                b_price.append(rng.uniform(0.85, 1.35))
                b_tennis.append(bool(rng.random() < 0.2))
            self.city_buildings.append(np.arange(start, len(b_names)))
        self.buildings = b_names
        self.bld_city = np.array(b_city, dtype=np.int8)
        self.bld_sub = np.array(b_sub, dtype=np.int16)
        self.bld_zip = np.array(b_zip, dtype=np.int16)
        self.bld_pref = np.array(b_pref, dtype=np.int8)
        self.bld_street = np.array(b_street, dtype=np.int16)
        self.bld_num = np.array(b_num, dtype=np.int32)
        self.bld_floors = np.array(b_floors, dtype=np.int16)
        self.bld_lat = np.array(b_lat)
        self.bld_lng = np.array(b_lng)
        self.bld_water = np.array(b_water)
        self.bld_year = np.array(b_year, dtype=np.float64)
        self.bld_hoa = np.array(b_hoa)
        self.bld_price = np.array(b_price)
        self.bld_tennis = np.array(b_tennis)

        # brokers (offices) and their agents; activity is skewed like a real MLS
        n_off = int(np.clip(round(n / 150), 12, 800))
        combos = [
            f"{w} {s}" + (f" of {c}" if k else "")
            for k, c in enumerate(["", *self.city_names])
            for w in md.OFFICE_WORDS
            for s in md.OFFICE_SUFFIXES
        ]
        picks = rng.choice(len(combos), n_off, replace=False)
        self.office_names = [combos[i] for i in picks.tolist()]
        off_nums = np.sort(rng.choice(np.arange(10_000, 100_000), n_off, replace=False))
        self.office_ids = [f"O{x:05d}" for x in off_nums.tolist()]
        n_ag = n_off * 7
        ag_nums = np.sort(rng.choice(np.arange(100_000, 1_000_000), n_ag, replace=False))
        self.agent_ids = [f"3{x:06d}" for x in ag_nums.tolist()]
        self.agent_office = rng.integers(0, n_off, n_ag).astype(np.int32)
        w = rng.lognormal(0.0, 1.0, n_ag)
        self.agent_weights = w / w.sum()

        # case-insensitive lookups for the exact-match filters
        self.city_lookup = {s.lower(): i for i, s in enumerate(self.city_names)}
        self.zip_lookup = {s: i for i, s in enumerate(self.zips)}
        self.street_lookup = {s.lower(): i for i, s in enumerate(self.streets)}
        self.sub_lookup: dict[str, list[int]] = {}
        for i, name in enumerate(self.sub_names):
            self.sub_lookup.setdefault(name.lower(), []).append(i)
        self.agent_lookup = {s.upper(): i for i, s in enumerate(self.agent_ids)}
        self.office_lookup = {s.upper(): i for i, s in enumerate(self.office_ids)}


def _ordinal(k: int) -> str:
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


# ----------------------------------------------------------------------------------------------
# generation of listings (attributes, prices, history)


def _draw_listings(
    rng: np.random.Generator,
    t: _Tables,
    entry: np.ndarray,
    as_of_year: int,
    ptype: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Attributes of ``len(entry)`` listings (everything but the event history)."""
    n = len(entry)
    if ptype is None:
        w = np.array([md.PROPERTY_TYPE_WEIGHTS[p] for p in md.PROPERTY_TYPES])
        ptype = rng.choice(len(w), n, p=w / w.sum()).astype(np.int8)
    sub = np.zeros(n, dtype=np.int16)
    for ti, tname in enumerate(md.PROPERTY_TYPES):
        m = ptype == ti
        weights = md.SUBTYPE_WEIGHTS[tname]
        codes = np.array([_SUB[s] for s in weights], dtype=np.int16)
        p = np.array(list(weights.values()))
        sub[m] = codes[rng.choice(len(codes), int(m.sum()), p=p / p.sum())]
    lease = _LEASE_TYPE[ptype]
    residential = _RESIDENTIAL[ptype]
    commercial = np.isin(ptype, [_PT["Commercial Sale"], _PT["Business Opportunity"]]) | (
        ptype == _PT["Commercial Lease"]
    )
    is_land = np.isin(ptype, [_PT["Land"], _PT["Land/Boat Docks"]])
    boat = ptype == _PT["Land/Boat Docks"]
    house = _HOUSE_SUBS[sub] & residential
    unit_sub = _UNIT_SUBS[sub]
    sfr = sub == _SUB["Single Family Residence"]

    city = rng.choice(len(t.city_names), n, p=t.city_weights).astype(np.int8)
    subdiv = np.full(n, -1, dtype=np.int16)
    building = np.full(n, -1, dtype=np.int16)
    u_sub, u_bld, u_unit, u_str = rng.random(n), rng.random(n), rng.random(n), rng.random(n)
    for ci in range(len(t.city_names)):
        m = city == ci
        subs = t.city_subs[ci]
        subdiv[m] = subs[(u_sub[m] * len(subs)).astype(np.int64)]
        blds = t.city_buildings[ci]
        mb = m & unit_sub & (u_bld < np.where(sub == _SUB["Condo - Hotel"], 1.0, 0.8))
        building[mb] = blds[(u_unit[mb] * len(blds)).astype(np.int64)]
    subdiv[commercial] = -1
    in_bld = building >= 0
    subdiv[in_bld] = t.bld_sub[building[in_bld]]
    has_sub = subdiv >= 0
    sd = np.where(has_sub, subdiv, 0)

    # address
    zip_ = np.zeros(n, dtype=np.int16)
    prefix = np.zeros(n, dtype=np.int8)
    street = np.zeros(n, dtype=np.int16)
    for ci in range(len(t.city_names)):
        m = city == ci
        pref, codes = t.city_streets[ci]
        k = (u_str[m] * len(codes)).astype(np.int64)
        prefix[m] = pref[k]
        street[m] = codes[k]
        zips = t.city_zips[ci]
        zip_[m] = zips[rng.integers(0, len(zips), int(m.sum()))]
    zip_[has_sub] = t.sub_zip[subdiv[has_sub]]
    number = rng.integers(100, 22000, n).astype(np.int32)
    b = np.where(in_bld, building, 0)
    zip_[in_bld] = t.bld_zip[b[in_bld]]
    prefix[in_bld] = t.bld_pref[b[in_bld]]
    street[in_bld] = t.bld_street[b[in_bld]]
    number[in_bld] = t.bld_num[b[in_bld]]

    lat = np.where(has_sub, t.sub_lat[sd], t.city_lat[city]) + rng.normal(0, 0.006, n)
    lng = np.where(has_sub, t.sub_lng[sd], t.city_lng[city]) + rng.normal(0, 0.006, n)
    lat[in_bld] = t.bld_lat[b[in_bld]]
    lng[in_bld] = t.bld_lng[b[in_bld]]

    # waterfront, units, penthouses
    water_p = np.where(has_sub, t.sub_water[sd], 0.05)
    waterfront = np.where(in_bld, t.bld_water[b], rng.random(n) < water_p) | boat
    waterfront &= ~np.isin(ptype, [_PT["Business Opportunity"]])
    floors = np.where(in_bld, t.bld_floors[b], 4).astype(np.int64)
    penthouse = in_bld & (rng.random(n) < 0.03)
    floor_no = rng.integers(1, np.maximum(floors, 2))
    apt = rng.integers(1, 13, n)
    ph_no = rng.integers(1, 7, n)
    unit = np.where(unit_sub, (floor_no * 100 + apt).astype("U6"), "")
    th_unit = (sub == _SUB["Townhouse"]) | (sub == _SUB["Villa"])
    th_unit &= rng.random(n) < 0.4
    unit = np.where(th_unit, rng.integers(1, 41, n).astype("U6"), unit)
    unit = np.where(penthouse, np.char.add("PH", ph_no.astype("U2")), unit)

    # size, rooms, lot, age
    sp = _SP[sub]
    area = np.exp(np.log(np.maximum(sp[:, 0], 1.0)) + sp[:, 1] * rng.standard_normal(n))
    area = np.where(waterfront & house, area * 1.3, area)
    area = np.round(np.clip(area, sp[:, 2], sp[:, 3]))
    area = np.where(sp[:, 0] > 0, area, np.nan)
    beds = np.clip(
        np.round(area / np.maximum(sp[:, 4], 1) + rng.normal(0, 0.6, n)), sp[:, 5], sp[:, 6]
    )
    beds = np.where(sp[:, 5] >= 0, beds, np.nan)
    baths = np.clip(np.round(beds * 0.8 + rng.normal(0.4, 0.5, n)), 1, np.maximum(beds, 0) + 2)
    com_baths = np.clip(np.round(np.nan_to_num(area) / 2500 + rng.random(n)), 1, 8)
    baths = np.where(commercial, com_baths, baths)
    baths = np.where(is_land, np.nan, baths)
    lot = np.full(n, np.nan)
    lot = np.where(house, area * rng.uniform(2.5, 5.0, n), lot)
    lot = np.where(sub == _SUB["Townhouse"], rng.uniform(1500, 3500, n), lot)
    lot = np.where(sub == _SUB["Villa"], rng.uniform(3000, 6000, n), lot)
    lot = np.where(sub == _SUB["Mobile Home"], rng.uniform(2500, 5000, n), lot)
    lot = np.where(ptype == _PT["Residential Income"], rng.uniform(6000, 16000, n), lot)
    land_med = np.where(
        sub == _SUB["Acreage"], 90000.0, np.where(sub == _SUB["Commercial Land"], 25000.0, 8000.0)
    )
    lot = np.where(ptype == _PT["Land"], land_med * rng.lognormal(0, 0.5, n), lot)
    lot = np.where(boat, rng.uniform(300, 1500, n), lot)
    lot = np.where(
        np.isin(ptype, [_PT["Commercial Sale"], _PT["Commercial Lease"]]),
        np.nan_to_num(area) * rng.uniform(1.5, 3.0, n),
        lot,
    )
    lot = np.where(waterfront & sfr, lot * 1.3, lot)
    lot = np.round(lot)
    age = np.where(unit_sub, rng.gamma(2.0, 12.0, n), rng.gamma(2.0, 16.0, n))
    year = np.clip(np.floor(as_of_year + 1 - age), 1920, as_of_year + 1)
    year = np.where(in_bld, t.bld_year[b], year)
    year = np.where(is_land, np.nan, year)

    # HOA (sales of units, attached homes and HOA communities; leases carry none)
    hoa = np.full(n, np.nan)
    unit_rate = np.where(in_bld, t.bld_hoa[b], rng.uniform(0.35, 0.8, n))
    unit_rate = np.where(sub == _SUB["Condo - Hotel"], unit_rate * 1.4, unit_rate)
    hoa = np.where(unit_sub, area * unit_rate, hoa)
    hoa = np.where(
        th_unit | (sub == _SUB["Townhouse"]) | (sub == _SUB["Villa"]), rng.uniform(150, 550, n), hoa
    )
    hoa = np.where(sfr & has_sub & t.sub_hoa[sd], rng.uniform(100, 900, n), hoa)
    hoa = np.where(sub == _SUB["Mobile Home"], rng.uniform(50, 350, n), hoa)
    hoa = np.where(lease | ~residential, np.nan, hoa)
    hoa = np.round(hoa)

    # community and features
    senior = residential & has_sub & t.sub_senior[sd]
    gated = (~commercial) & has_sub & (rng.random(n) < np.where(has_sub, t.sub_gated[sd], 0))
    golf = (~commercial) & has_sub & t.sub_golf[sd] & (rng.random(n) < 0.9)
    tennis = (~commercial) & has_sub & t.sub_tennis[sd] & (rng.random(n) < 0.9)
    tennis |= in_bld & t.bld_tennis[b]
    pool_p = np.where(sfr, 0.30 + 0.30 * waterfront, 0.0)
    pool_p = np.where(sub == _SUB["Villa"], 0.15, pool_p)
    pool_p = np.where(sub == _SUB["Townhouse"], 0.08, pool_p)
    pool_p = np.where(sub == _SUB["1/2 Duplex"], 0.10, pool_p)
    pool_p = np.where(ptype == _PT["Residential Income"], 0.10, pool_p)
    pool_p = np.where(unit_sub, np.where(penthouse, 0.3, 0.004), pool_p)
    pool = rng.random(n) < pool_p
    dock_ok = house | (sub == _SUB["Residential Lot"]) | (ptype == _PT["Residential Income"])
    boat_dock = (waterfront & dock_ok & (rng.random(n) < 0.55)) | boat
    seasonal_p = np.where(np.isin(city, _beach_cities(t)), 0.2, 0.1)
    seasonal = (ptype == _PT["Residential Lease"]) & (rng.random(n) < seasonal_p)
    cond_r = rng.random(n)
    condition = np.where(
        cond_r < 0.02, 1, np.where(cond_r < 0.04, 2, np.where(cond_r < 0.05, 3, 0))
    )
    condition = np.where(lease, 0, condition).astype(np.int8)

    fr = rng.random(n)
    furn_p = np.where(seasonal, 0.95, np.where(unit_sub, 0.4, 0.15))
    furn_lease = (fr < furn_p).astype(np.int8)
    furn_sale = np.where(
        sub == _SUB["Condo - Hotel"],
        (fr < 0.9).astype(np.int8),
        np.where(
            unit_sub,
            np.where(fr < 0.2, 1, np.where(fr < 0.7, 0, -1)),
            np.where(fr < 0.05, 1, np.where(fr < 0.65, 0, -1)),
        ),
    )
    furnished = np.where(ptype == _PT["Residential Lease"], furn_lease, furn_sale)
    furnished = np.where(residential, furnished, -1).astype(np.int8)
    pr = rng.random(n)
    pets_units = np.where(pr < 0.35, 1, np.where(pr < 0.55, 2, np.where(pr < 0.75, 3, 0)))
    pets_house = np.where(pr < 0.55, 1, np.where(pr < 0.7, 2, np.where(pr < 0.8, 0, -1)))
    pets = np.where(unit_sub | (ptype == _PT["Residential Lease"]), pets_units, pets_house)
    pets = np.where(senior & (pets > 0), 3, pets)
    pets = np.where(residential | (ptype == _PT["Residential Income"]), pets, -1).astype(np.int8)

    agent = rng.choice(len(t.agent_ids), n, p=t.agent_weights).astype(np.int32)

    # value of the property, then the list price (monthly rent for leases)
    size_adj = (np.nan_to_num(area, nan=1500.0) / 1500.0) ** -0.1
    water_adj = np.where(waterfront, np.where(unit_sub, 1.3, 1.9), 1.0)
    new_adj = np.where(year >= as_of_year - 1, 1.2, np.where(year < 1980, 0.9, 1.0))
    place = 0.85 * t.city_psf[city] * np.where(has_sub, t.sub_price[sd], 1.0)
    place = place * np.where(in_bld, t.bld_price[b], 1.0)
    noise = rng.lognormal(0.0, 0.18, n)
    value = np.nan_to_num(area) * place * sp[:, 7] * size_adj * water_adj * new_adj * noise
    land_value = lot * t.city_psf[city] * 0.12 * sp[:, 7] * np.where(waterfront, 2.5, 1.0) * noise
    value = np.where(ptype == _PT["Land"], land_value, value)
    dock_value = 90_000 * (t.city_psf[city] / 500.0) * sp[:, 7] * rng.lognormal(0, 0.5, n)
    value = np.where(boat, dock_value, value)
    business = 250_000 * rng.lognormal(0, 0.8, n) * (t.city_psf[city] / 450.0) ** 0.5
    value = np.where(ptype == _PT["Business Opportunity"], business, value)
    value = np.maximum(value, 40_000)
    rent = value * 0.005 * (value / 500_000) ** -0.12 * np.where(seasonal, 1.7, 1.0)
    com_rent = np.nan_to_num(area) * rng.uniform(22, 55, n) * (t.city_psf[city] / 480) ** 0.5 / 12
    rent = np.where(ptype == _PT["Commercial Lease"], com_rent, rent)
    price = np.where(lease, np.maximum(rent, 900.0), value)
    price = _round_price(price, lease, rng)

    return {
        "ptype": ptype.astype(np.int8),
        "sub": sub,
        "city": city,
        "zip": zip_,
        "prefix": prefix,
        "street": street,
        "number": number,
        "snum": number.astype("U6"),
        "unit": unit.astype("U6"),
        "subdiv": subdiv,
        "building": building,
        "lat": np.round(lat, 6),
        "lng": np.round(lng, 6),
        "beds": beds,
        "baths": baths,
        "area": area,
        "lot": lot,
        "year": year,
        "hoa": hoa,
        "waterfront": waterfront,
        "pool": pool,
        "penthouse": penthouse,
        "furnished": furnished,
        "pets": pets,
        "gated": gated,
        "tennis": tennis,
        "golf": golf,
        "boat_dock": boat_dock,
        "condition": condition,
        "seasonal": seasonal,
        "senior": senior,
        "agent": agent,
        "p0": price,
    }


def _beach_cities(t: _Tables) -> list[int]:
    beach = {
        "Miami Beach",
        "Sunny Isles Beach",
        "Hallandale Beach",
        "Fort Lauderdale",
        "Delray Beach",
    }
    return [i for i, c in enumerate(t.city_names) if c in beach]


def _draw_history(
    rng: np.random.Generator, ptype: np.ndarray, entry: np.ndarray, p0: np.ndarray
) -> dict[str, np.ndarray]:
    """Price changes and status changes of each listing as fixed-width event columns.

    ``pc_ts`` (n, 3) and ``prices`` (n, 4: the entry price then each change), ``st_ts`` (n, 4) and
    ``st_code`` (n, 5: Active then each status), ``close_ts`` and ``close_price``. Unused slots hold
    INF_TS; times within a listing strictly increase (each event on a later day).
    """
    n = len(entry)
    lease = _LEASE_TYPE[ptype]
    rows = np.arange(n)

    # planned price changes: a gap of 10+ days before each; overpriced homes take longer to sell
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
        new = _round_price(old * factor, lease, rng)
        unit = _price_unit(old, lease)
        new = np.where(new == old, np.where(up, old + unit, old - unit), new)
        prices[:, i + 1] = np.where(i < k_real, new, old)

    # status paths after the first contract (day d1)
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


# ----------------------------------------------------------------------------------------------
# state at the clock


@dataclass
class _State:
    """Listing fields at one clock time (all arrays over every generated row)."""

    now: int
    visible: np.ndarray
    list_price: np.ndarray
    prev_price: np.ndarray
    status: np.ndarray
    major_ts: np.ndarray
    dom: np.ndarray
    group: np.ndarray  # ptype * 4 + status, -1 when not yet entered
    orders: dict[str, np.ndarray] = field(default_factory=dict)
    subsets: dict[tuple[int, str], np.ndarray] = field(default_factory=dict)


def _compute_state(c: Mapping[str, np.ndarray], now: int) -> _State:
    rows = np.arange(len(c["entry"]))
    entry = c["entry"]
    k = (c["pc_ts"] <= now).sum(axis=1)
    list_price = c["prices"][rows, k]
    prev = np.where(k > 0, c["prices"][rows, np.maximum(k - 1, 0)], np.nan)
    j = (c["st_ts"] <= now).sum(axis=1)
    status = c["st_code"][rows, j]
    last_pc = np.where(k > 0, c["pc_ts"][rows, np.maximum(k - 1, 0)], entry)
    last_st = np.where(j > 0, c["st_ts"][rows, np.maximum(j - 1, 0)], entry)
    major = np.maximum(np.maximum(entry, last_pc), last_st)
    closed = status == CLOSED
    dom = (np.where(closed, c["close_ts"], now) - entry) // DAY
    visible = entry <= now
    group = np.where(visible, c["ptype"].astype(np.int16) * 4 + status, -1).astype(np.int16)
    return _State(now, visible, list_price, prev, status, major, dom, group)


@dataclass
class _Snapshot:
    """Columns plus the state at the clock; replaced as a whole so readers never see a mix."""

    cols: dict[str, np.ndarray]
    state: _State
    static_orders: dict[str, np.ndarray]


def _order(snap: _Snapshot, sort: str) -> np.ndarray:
    """Row indices of every listing in ``sort`` order, ties by ListingId (= row order)."""
    c, st = snap.cols, snap.state
    if sort in ("-listprice", "listprice"):
        cache = st.orders
        key = -st.list_price if sort == "-listprice" else st.list_price
    else:
        cache = snap.static_orders
        key = {
            "-listdate": lambda: -c["entry"],
            "beds": lambda: c["beds"],
            "baths": lambda: c["baths"],
        }[sort]()
    order = cache.get(sort)
    if order is None:
        order = np.argsort(key, kind="stable")
        cache[sort] = order
    return order


def _subset(snap: _Snapshot, group: int, sort: str) -> np.ndarray:
    st = snap.state
    key = (group, sort)
    idx = st.subsets.get(key)
    if idx is None:
        order = _order(snap, sort)
        idx = order[st.group[order] == group]
        st.subsets[key] = idx
    return idx


# ----------------------------------------------------------------------------------------------
# parameter parsing (raw query strings in, 400s naming the parameter out)

_NUMBER = re.compile(r"(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_INTEGER = re.compile(r"\d+")
_ID = re.compile(r"A(\d{8})")
_ISO_HINT = "an ISO 8601 timestamp, e.g. 2026-01-01T00:00:00Z or 2026-01-01"

#: (Min parameter, Max parameter, column) of the range filters.
RANGES: tuple[tuple[str, str, str], ...] = (
    ("MinListPrice", "MaxListPrice", "list_price"),
    ("MinBedroomsTotal", "MaxBedroomsTotal", "beds"),
    ("MinBathrooms", "MaxBathrooms", "baths"),
    ("MinLivingArea", "MaxLivingArea", "area"),
    ("MinLotSize", "MaxLotSize", "lot"),
    ("MinYearBuilt", "MaxYearBuilt", "year"),
    ("MinAssociationFee", "MaxAssociationFee", "hoa"),
)
#: Boolean feature filters and the column each keeps.
BOOLEANS: dict[str, str] = {
    "Pool": "pool",
    "Waterfront": "waterfront",
    "Penthouse": "penthouse",
    "Furnished": "is_furnished",
    "PetsAllowed": "pets_ok",
    "Gated": "gated",
    "TennisCourt": "tennis",
    "GolfCourse": "golf",
    "BoatDock": "boat_dock",
    "ShortSale": "short_sale",
    "SeasonalRentals": "seasonal",
}


def _text(params: Mapping[str, str], name: str) -> str | None:
    raw = params.get(name)
    if raw is None:
        return None
    if raw.strip() == "":
        raise bad_param(name, "must not be empty", "a non-empty value, or omit the parameter")
    return raw


def _choice(params: Mapping[str, str], name: str, allowed: tuple[str, ...], default: str) -> str:
    raw = params.get(name)
    if raw is None:
        return default
    if raw not in allowed:
        raise bad_param(name, f"unknown value {raw!r}", allowed)
    return raw


def _number(params: Mapping[str, str], name: str) -> float | None:
    raw = params.get(name)
    if raw is None:
        return None
    if raw.startswith("-") and _NUMBER.fullmatch(raw[1:]):
        raise bad_param(name, f"must not be negative, got {raw!r}", "a number >= 0")
    if not _NUMBER.fullmatch(raw) or not math.isfinite(value := float(raw)):
        raise bad_param(name, f"not a number: {raw!r}", "a finite number >= 0")
    return value


def _integer(params: Mapping[str, str], name: str, default: int, lo: int, hi: int | None) -> int:
    raw = params.get(name)
    allowed = f"an integer from {lo} to {hi}" if hi is not None else f"an integer >= {lo}"
    if raw is None:
        return default
    if not _INTEGER.fullmatch(raw):
        raise bad_param(name, f"not an integer: {raw!r}", allowed)
    value = int(raw)
    if value < lo or (hi is not None and value > hi):
        too_big = hi is not None and value > hi
        problem = f"at most {hi}, got {value}" if too_big else f"at least {lo}, got {value}"
        raise bad_param(name, problem, allowed)
    return value


def _boolean(params: Mapping[str, str], name: str) -> bool | None:
    raw = params.get(name)
    if raw is None:
        return None
    if raw.lower() not in ("true", "false"):
        raise bad_param(name, f"not a boolean: {raw!r}", ["true", "false"])
    return raw.lower() == "true"


def _since(params: Mapping[str, str], name: str) -> float | None:
    """Seconds since the epoch of an ISO 8601 parameter; naive times are UTC."""
    raw = params.get(name)
    if raw is None:
        return None
    try:
        dt = datetime.fromisoformat(raw)
    except ValueError:
        raise bad_param(name, f"not an ISO 8601 timestamp: {raw!r}", _ISO_HINT) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def _paging(params: Mapping[str, str]) -> tuple[int, int]:
    return (
        _integer(params, "Offset", 0, 0, None),
        _integer(params, "Limit", DEFAULT_LIMIT, 1, MAX_LIMIT),
    )


# ----------------------------------------------------------------------------------------------
# the store


class ListingStore:
    """A deterministic synthetic listings market with a movable clock.

    ``n`` listings are visible at ``as_of`` (history over the ~18 months before); listings, price
    changes and status changes of the ~12 months after ``as_of`` appear as the clock moves.

    >>> from datetime import UTC, datetime
    >>> store = ListingStore(n=100, seed=1, as_of=datetime(2026, 5, 1, tzinfo=UTC))
    >>> first = store.search({"Limit": "1"})["listings"][0]
    >>> store.detail(first["ListingId"])["ListPrice"] == first["ListPrice"]
    True
    """

    def __init__(self, n: int = 5000, seed: int = 7, *, as_of: datetime) -> None:
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n}")
        as_of_s = _utc_seconds(as_of, "as_of")
        self._seed = seed
        self._as_of = as_of.astimezone(UTC)
        self._lock = threading.Lock()
        self._inserted_batches = 0
        year = self._as_of.year
        self._year = year
        self._tables = _Tables(seed, n, year)
        rng = np.random.default_rng([seed, 1])

        # entry times: n in the history window (visible at as_of), the rest in the next year
        m = round(n * FUTURE_DAYS / HISTORY_DAYS)
        day_now = as_of_s - as_of_s % DAY
        past = (
            day_now - rng.integers(0, HISTORY_DAYS, n) * DAY + rng.integers(12 * 3600, 23 * 3600, n)
        )
        past = np.minimum(past, as_of_s)
        future = (
            day_now
            + rng.integers(0, FUTURE_DAYS + 1, m) * DAY
            + rng.integers(12 * 3600, 23 * 3600, m)
        )
        future = np.where(future <= as_of_s, future + DAY, future)
        entry = np.sort(np.concatenate([past, future])).astype(np.int64)
        ids = (
            10_000_000
            + int(rng.integers(0, 5_000_000))
            + np.cumsum(1 + rng.geometric(0.25, len(entry)))
        )

        cols = _draw_listings(rng, self._tables, entry, year)
        cols.update(_draw_history(rng, cols["ptype"], entry, cols["p0"]))
        cols["entry"] = entry
        cols["id"] = ids.astype(np.int64)
        _derive(cols, self._tables)
        self._n_base = len(entry)
        self._snap = _Snapshot(cols, _compute_state(cols, as_of_s), {})
        self._now = self._as_of

    # -- clock ---------------------------------------------------------------------------------

    @property
    def now(self) -> datetime:
        """The sandbox clock (starts at ``as_of``)."""
        return self._now

    def set_now(self, dt: datetime) -> None:
        """Move the clock forward to ``dt`` and recompute every listing's state.

        >>> from datetime import UTC, datetime, timedelta
        >>> s = ListingStore(n=50, as_of=datetime(2026, 5, 1, tzinfo=UTC))
        >>> s.set_now(s.now + timedelta(days=30)); s.now.day
        31
        """
        now_s = _utc_seconds(dt, "now")
        with self._lock:
            if dt < self._now:
                raise ValueError(
                    f"the clock only moves forward: {dt.isoformat()} < {self._now.isoformat()}"
                )
            snap = self._snap
            self._snap = _Snapshot(snap.cols, _compute_state(snap.cols, now_s), snap.static_orders)
            self._now = dt.astimezone(UTC)

    # -- drift fault ---------------------------------------------------------------------------

    def insert_new(self, k: int, property_type: str = "Residential") -> None:
        """Insert ``k`` new Active listings entered now, priced above every listing of the market.

        The drift fault: a client paging by ``-listprice`` sees everything shift down by ``k``.

        >>> from datetime import UTC, datetime
        >>> s = ListingStore(n=50, as_of=datetime(2026, 5, 1, tzinfo=UTC))
        >>> before = s.search({})["total"]; s.insert_new(2); s.search({})["total"] - before
        2
        """
        if k < 0:
            raise ValueError(f"k must be >= 0, got {k}")
        if k == 0:
            return
        if property_type not in _PT:
            raise ValueError(f"unknown property_type {property_type!r}; allowed: {', '.join(_PT)}")
        with self._lock:
            snap = self._snap
            c, st = snap.cols, snap.state
            now_s = st.now
            self._inserted_batches += 1
            rng = np.random.default_rng([self._seed, 2, self._inserted_batches])
            pt = _PT[property_type]
            base = np.zeros(len(c["entry"]), dtype=bool)
            base[: self._n_base] = True
            market = base & (st.group == pt * 4 + ACTIVE)
            top = float(st.list_price[market].max()) if market.any() else 1_000_000.0
            entry = np.full(k, now_s, dtype=np.int64)
            new = _draw_listings(
                rng, self._tables, entry, self._year, np.full(k, pt, dtype=np.int8)
            )
            lease = np.full(k, _LEASE_TYPE[pt])
            price = _round_price(top * rng.uniform(1.01, 1.12, k), lease, rng)
            price = np.maximum(price, top + _price_unit(np.array([top]), lease))
            new["p0"] = price
            new["pc_ts"] = np.full((k, 3), INF_TS, dtype=np.int64)
            new["prices"] = np.repeat(price[:, None], 4, axis=1)
            new["st_ts"] = np.full((k, 4), INF_TS, dtype=np.int64)
            new["st_code"] = np.concatenate(
                [np.zeros((k, 1), np.int8), np.full((k, 4), -1, np.int8)], axis=1
            )
            new["close_ts"] = np.full(k, INF_TS, dtype=np.int64)
            new["close_price"] = np.full(k, np.nan)
            new["entry"] = entry
            last_id = int(c["id"][-1]) if len(c["id"]) else 10_000_000
            new["id"] = last_id + np.cumsum(1 + rng.geometric(0.25, k))
            _derive(new, self._tables)
            cols = {name: np.concatenate([c[name], new[name]]) for name in c}
            self._snap = _Snapshot(cols, _compute_state(cols, now_s), {})

    # -- search --------------------------------------------------------------------------------

    def search(self, params: Mapping[str, str]) -> dict[str, Any]:
        """``GET /v1/listings``: every filter of the spec's table; raw query strings in.

        >>> from datetime import UTC, datetime
        >>> s = ListingStore(n=300, as_of=datetime(2026, 5, 1, tzinfo=UTC))
        >>> r = s.search({"PropertyType": "Residential Lease", "MaxListPrice": "3000", "Limit": "3"})
        >>> all(x["ListPrice"] <= 3000 for x in r["listings"])
        True
        """
        snap = self._snap
        c, st, t = snap.cols, snap.state, self._tables
        ptype = _choice(params, "PropertyType", md.PROPERTY_TYPES, "Residential")
        status = _choice(params, "Status", md.STATUSES, "Active")
        sort = _choice(params, "Sort", SORTS, "-listprice")
        offset, limit = _paging(params)
        checks: list[tuple[str, Any]] = []

        raw_subtypes = _text(params, "Subtypes")
        if raw_subtypes is not None:
            allowed = md.FILTERABLE_SUBTYPES.get(ptype)
            if allowed is None:
                raise bad_param(
                    "Subtypes",
                    f"applies to Residential and Residential Lease only, not PropertyType {ptype!r}",
                    "omit Subtypes, or use PropertyType Residential or Residential Lease",
                )
            wanted = [s.strip() for s in raw_subtypes.split(",")]
            for s in wanted:
                if s not in allowed:
                    problem = f"unknown value {s!r} for PropertyType {ptype}"
                    raise bad_param("Subtypes", problem if s else "empty item in the list", allowed)
            checks.append(("isin", ("sub", [_SUB[s] for s in wanted])))

        for name, col, lookup in (
            ("City", "city", lambda v: [t.city_lookup.get(v.lower(), -1)]),
            ("PostalCode", "zip", lambda v: [t.zip_lookup.get(v, -1)]),
            ("StreetName", "street", lambda v: [t.street_lookup.get(v.lower(), -1)]),
            ("SubdivisionName", "subdiv", lambda v: t.sub_lookup.get(v.lower(), [-2])),
            (
                "BuildingName",
                "building",
                lambda v: [i for i, b in enumerate(t.buildings) if v.lower() in b.lower()] or [-2],
            ),
            ("Agent", "agent", lambda v: [t.agent_lookup.get(v.upper(), -1)]),
            ("Broker", "office", lambda v: [t.office_lookup.get(v.upper(), -1)]),
        ):
            value = _text(params, name)
            if value is not None:
                checks.append(("isin", (col, lookup(value))))
        for name, col in (("StreetNumber", "snum"), ("UnitNumber", "unit")):
            value = _text(params, name)
            if value is not None:
                checks.append(("eq", (col, value.upper())))

        for lo_name, hi_name, col in RANGES:
            lo, hi = _number(params, lo_name), _number(params, hi_name)
            if lo is not None and hi is not None and lo > hi:
                raise bad_param(
                    lo_name,
                    f"{lo_name} {lo:g} is greater than {hi_name} {hi:g}",
                    f"{lo_name} <= {hi_name}",
                )
            if lo is not None:
                checks.append(("ge", (col, lo)))
            if hi is not None:
                checks.append(("le", (col, hi)))
        for name, col in BOOLEANS.items():
            flag = _boolean(params, name)
            if flag is not None:
                checks.append(("flag", (col, flag)))
        senior = params.get("SeniorCommunity")
        if senior is not None:
            if senior.lower() not in ("true", "exclude"):
                raise bad_param("SeniorCommunity", f"unknown value {senior!r}", ["true", "exclude"])
            checks.append(("flag", ("senior", senior.lower() == "true")))
        max_dom = _number(params, "MaxDaysOnMarket")
        if max_dom is not None:
            checks.append(("le", ("dom", max_dom)))
        since = _since(params, "Since")
        if since is not None:
            checks.append(("gt", ("entry", since)))

        idx = _subset(snap, _PT[ptype] * 4 + _ST[status], sort)
        state_cols = {"list_price": st.list_price, "dom": st.dom}
        for op, (col, arg) in checks:
            if len(idx) == 0:
                break
            values = (state_cols[col] if col in state_cols else c[col])[idx]
            if op == "isin":
                keep = values == arg[0] if len(arg) == 1 else np.isin(values, arg)
            elif op == "eq" or op == "flag":
                keep = values == arg
            elif op == "ge":
                keep = values >= arg
            elif op == "le":
                keep = values <= arg
            else:  # "gt"
                keep = values > arg
            idx = idx[keep]
        page = idx[offset : offset + limit]
        return {
            "total": len(idx),
            "offset": offset,
            "limit": limit,
            "listings": self._summaries(snap, page),
        }

    def _summaries(self, snap: _Snapshot, rows: np.ndarray) -> list[dict[str, Any]]:
        c, st, t = snap.cols, snap.state, self._tables
        if len(rows) == 0:
            return []
        g = {name: c[name][rows].tolist() for name in _SUMMARY_COLS}
        lp, pp = st.list_price[rows].tolist(), st.prev_price[rows].tolist()
        status, major, dom = (
            st.status[rows].tolist(),
            st.major_ts[rows].tolist(),
            st.dom[rows].tolist(),
        )
        out = []
        for i in range(len(rows)):
            closed = status[i] == CLOSED
            prefix = PREFIXES[g["prefix"][i]] or None
            street = t.streets[g["street"][i]]
            unit = g["unit"][i] or None
            city = t.city_names[g["city"][i]]
            zip_ = t.zips[g["zip"][i]]
            line = " ".join(x for x in (g["snum"][i], prefix, street) if x)
            if unit:
                line += f" #{unit}"
            sub, bld, agent = g["subdiv"][i], g["building"][i], g["agent"][i]
            office = int(t.agent_office[agent])
            out.append(
                {
                    "ListingId": _listing_id(g["id"][i]),
                    "ListPrice": _num(lp[i]),
                    "PreviousListPrice": _num(pp[i]),
                    "ClosePrice": _num(g["close_price"][i]) if closed else None,
                    "StandardStatus": md.STATUSES[status[i]],
                    "PropertyType": md.PROPERTY_TYPES[g["ptype"][i]],
                    "PropertySubType": SUBTYPES[g["sub"][i]],
                    "UnparsedAddress": f"{line}, {city}, {md.STATE} {zip_}",
                    "StreetNumber": g["snum"][i],
                    "StreetDirPrefix": prefix,
                    "StreetName": street,
                    "UnitNumber": unit,
                    "City": city,
                    "StateOrProvince": md.STATE,
                    "PostalCode": zip_,
                    "CountyOrParish": t.city_county[g["city"][i]],
                    "SubdivisionName": t.sub_names[sub] if sub >= 0 else None,
                    "BuildingName": t.buildings[bld] if bld >= 0 else None,
                    "BedroomsTotal": _num(g["beds"][i]),
                    "BathroomsTotalInteger": _num(g["baths"][i]),
                    "LivingArea": _num(g["area"][i]),
                    "LotSizeSquareFeet": _num(g["lot"][i]),
                    "YearBuilt": _num(g["year"][i]),
                    "DaysOnMarket": dom[i],
                    "AssociationFee": _num(g["hoa"][i]),
                    "WaterfrontYN": g["waterfront"][i],
                    "PoolPrivateYN": g["pool"][i],
                    "SeniorCommunityYN": g["senior"][i],
                    "coordinates": {"lng": g["lng"][i], "lat": g["lat"][i]},
                    "OriginalEntryTimestamp": _iso(g["entry"][i]),
                    "ModificationTimestamp": _iso(major[i]),
                    "MajorChangeTimestamp": _iso(major[i]),
                    "CloseDate": _date(g["close_ts"][i]) if closed else None,
                    "ListAgentMlsId": t.agent_ids[agent],
                    "ListOfficeMlsId": t.office_ids[office],
                    "ListOfficeName": t.office_names[office],
                }
            )
        return out

    # -- detail --------------------------------------------------------------------------------

    def _row(self, snap: _Snapshot, listing_id: str) -> int | None:
        m = _ID.fullmatch(listing_id)
        if m is None:
            return None
        num = int(m.group(1))
        ids = snap.cols["id"]
        row = int(np.searchsorted(ids, num))
        if row >= len(ids) or ids[row] != num or not snap.state.visible[row]:
            return None
        return row

    def detail(self, listing_id: str) -> dict[str, Any]:
        """``GET /v1/listings/{ListingId}``: every field of the spec's Listing, Media included.

        >>> from datetime import UTC, datetime
        >>> s = ListingStore(n=50, as_of=datetime(2026, 5, 1, tzinfo=UTC))
        >>> lid = s.search({"Limit": "1"})["listings"][0]["ListingId"]
        >>> 5 <= len(s.detail(lid)["Media"]) <= 20
        True
        """
        snap = self._snap
        row = self._row(snap, listing_id)
        if row is None:
            raise SandboxError(404, f"no listing {listing_id!r}")
        record = self._summaries(snap, np.array([row]))[0]
        record.update(_detail_fields(self._seed, snap.cols, row, record))
        return record

    # -- change feed ---------------------------------------------------------------------------

    def changes(self, params: Mapping[str, str]) -> dict[str, Any]:
        """``GET /v1/listings/changes``: price and status changes with Since < time <= now.

        >>> from datetime import UTC, datetime, timedelta
        >>> s = ListingStore(n=200, as_of=datetime(2026, 5, 1, tzinfo=UTC))
        >>> ids = ",".join(x["ListingId"] for x in s.search({"Limit": "50"})["listings"])
        >>> r = s.changes({"Since": "2025-01-01", "ListingIds": ids})
        >>> all(ch["ChangeType"] in ("price_change", "status_change") for ch in r["changes"])
        True
        """
        if params.get("Since") is None:
            raise bad_param("Since", "required", _ISO_HINT)
        since = _since(params, "Since")
        assert since is not None
        raw_ids = params.get("ListingIds")
        if raw_ids is None:
            raise bad_param(
                "ListingIds", "required", f"1 to {MAX_LISTING_IDS} comma-separated ListingIds"
            )
        ids = [s.strip() for s in raw_ids.split(",")]
        if any(not s for s in ids):
            raise bad_param(
                "ListingIds",
                "empty id in the list",
                f"1 to {MAX_LISTING_IDS} comma-separated ListingIds",
            )
        if len(ids) > MAX_LISTING_IDS:
            raise bad_param(
                "ListingIds",
                f"at most {MAX_LISTING_IDS} ids, got {len(ids)}",
                f"1 to {MAX_LISTING_IDS} ids",
            )
        change_type = params.get("ChangeType")
        if change_type is not None and change_type not in CHANGE_TYPES:
            raise bad_param("ChangeType", f"unknown value {change_type!r}", CHANGE_TYPES)
        offset, limit = _paging(params)

        snap = self._snap
        c, now = snap.cols, snap.state.now
        found = {r for r in (self._row(snap, s) for s in ids) if r is not None}
        events: list[tuple[int, int, int, dict[str, Any]]] = []
        for row in sorted(found):
            lid = _listing_id(int(c["id"][row]))
            if change_type in (None, "price_change"):
                prices = c["prices"][row].tolist()
                for i, ts in enumerate(c["pc_ts"][row].tolist()):
                    if since < ts <= now:
                        rec = {
                            "ListingId": lid,
                            "ChangeType": "price_change",
                            "ChangeTimestamp": _iso(ts),
                            "PreviousListPrice": _num(prices[i]),
                            "ListPrice": _num(prices[i + 1]),
                        }
                        events.append((ts, row, 0, rec))
            if change_type in (None, "status_change"):
                codes = c["st_code"][row].tolist()
                for i, ts in enumerate(c["st_ts"][row].tolist()):
                    if since < ts <= now:
                        rec = {
                            "ListingId": lid,
                            "ChangeType": "status_change",
                            "ChangeTimestamp": _iso(ts),
                            "PreviousStatus": md.STATUSES[codes[i]],
                            "StandardStatus": md.STATUSES[codes[i + 1]],
                        }
                        events.append((ts, row, 1, rec))
        events.sort(key=lambda e: e[:3])
        return {
            "total": len(events),
            "offset": offset,
            "limit": limit,
            "changes": [e[3] for e in events[offset : offset + limit]],
        }


_SUMMARY_COLS = (
    "id",
    "ptype",
    "sub",
    "prefix",
    "street",
    "unit",
    "snum",
    "city",
    "zip",
    "subdiv",
    "building",
    "beds",
    "baths",
    "area",
    "lot",
    "year",
    "hoa",
    "waterfront",
    "pool",
    "senior",
    "lng",
    "lat",
    "entry",
    "close_ts",
    "close_price",
    "agent",
)


def _derive(cols: dict[str, np.ndarray], t: _Tables) -> None:
    """Filter columns derived from the record fields (Furnished, PetsAllowed, conditions, broker)."""
    cols["is_furnished"] = cols["furnished"] == 1
    cols["pets_ok"] = cols["pets"] >= 1
    cols["short_sale"] = cols["condition"] == 1
    cols["office"] = t.agent_office[cols["agent"]]


# ----------------------------------------------------------------------------------------------
# detail-only fields, built lazily per listing from a per-listing seed


def _pick(rng: random.Random, pool: tuple[str, ...], lo: int, hi: int) -> str:
    k = rng.randint(lo, min(hi, len(pool)))
    return ", ".join(sorted(rng.sample(pool, k), key=pool.index))


def _detail_fields(
    seed: int, c: Mapping[str, np.ndarray], row: int, rec: Mapping[str, Any]
) -> dict[str, Any]:
    """Remarks, features and Media of one listing, consistent with its filter columns."""
    lid = rec["ListingId"]
    rng = random.Random(f"{seed}:{lid}")
    ptype, sub = rec["PropertyType"], rec["PropertySubType"]
    lease = ptype in md.LEASE_TYPES
    land = ptype in ("Land", "Land/Boat Docks")
    commercial = ptype in ("Commercial Sale", "Commercial Lease", "Business Opportunity")
    unit_sub = sub in md.UNIT_SUBTYPES
    waterfront, pool = rec["WaterfrontYN"], rec["PoolPrivateYN"]
    penthouse = bool(c["penthouse"][row])
    gated, tennis, golf = bool(c["gated"][row]), bool(c["tennis"][row]), bool(c["golf"][row])
    senior, seasonal = rec["SeniorCommunityYN"], bool(c["seasonal"][row])
    boat_dock = bool(c["boat_dock"][row])
    entry_year = int(rec["OriginalEntryTimestamp"][:4])
    year = rec["YearBuilt"]

    water: list[dict[str, str]] = []
    if waterfront:
        pool_w = md.WATER_FEATURES
        water = [{"Feature": f} for f in rng.sample(pool_w, rng.randint(1, 3))]
        if boat_dock:
            water.append({"Feature": md.BOAT_DOCK})
    pool_features = (
        [{"Feature": f} for f in rng.sample(md.POOL_FEATURES, rng.randint(1, 3))] if pool else []
    )

    stories = None
    if not land:
        if sub == "Single Family Residence":
            stories = rng.choice((1, 1, 1, 2, 2, 3))
        elif sub == "Townhouse":
            stories = rng.choice((2, 2, 3))
        elif commercial:
            stories = rng.randint(1, 4)
        elif ptype == "Residential Income":
            stories = rng.choice((1, 2))
        else:
            stories = 1
    levels = None if stories is None else ("One", "Two", "Three Or More")[min(stories, 3) - 1]
    house = sub in ("Single Family Residence", "Townhouse", "Villa", "1/2 Duplex")
    garage = None if land else (rng.choice((0, 1, 2, 2, 2, 3)) if house else 0)
    covered = None if land else (rng.randint(1, 2) if unit_sub else garage)

    interior = None
    if not land and not commercial:
        interior = _pick(rng, md.INTERIOR, 1, 4)
        if penthouse:
            interior = f"{md.PENTHOUSE}, {interior}"
    community = []
    if gated:
        community.append(md.GATED)
    if tennis:
        community.append(md.TENNIS)
    if golf:
        community.append(md.GOLF)
    if senior:
        community.append(md.SENIOR)
    if not commercial and rng.random() < 0.8:
        community += rng.sample(md.COMMUNITY, rng.randint(1, 3))
    furnished_code, pets_code, cond = (
        int(c["furnished"][row]),
        int(c["pets"][row]),
        int(c["condition"][row]),
    )

    if waterfront:
        view = ", ".join(rng.sample(md.VIEWS_WATER, rng.randint(1, 2)))
    elif land or rng.random() < 0.2:
        view = None
    else:
        view = rng.choice(md.VIEWS_DRY)
    lease_term = None
    if ptype == "Residential Lease":
        lease_term = md.LEASE_TERM_SEASONAL if seasonal else rng.choice(md.LEASE_TERMS_LONG)
    elif ptype == "Commercial Lease":
        lease_term = rng.choice(("12 Months", "36 Months", "60 Months"))
    orig_price = float(c["prices"][row][0])
    tax = None if lease else round(orig_price * rng.uniform(0.012, 0.021))
    built = None if year is None else ("New Construction" if year >= entry_year - 1 else "Resale")

    n_media = rng.randint(5, 20)
    rooms = list(md.MEDIA_ROOMS)
    if pool:
        rooms.append("Pool")
    if waterfront:
        rooms += ["Water View", "Dock" if boat_dock else "Waterfront"]
    first = "Lot" if land else ("Building Exterior" if unit_sub or commercial else "Front Exterior")
    captions = [first, *rng.choices(rooms, k=n_media - 1)]
    media = [
        {
            "Order": i + 1,
            "MediaURL": f"https://media.example.com/rf-sandbox/{lid}/{i + 1:02d}.jpg",
            "ShortDescription": caption,
        }
        for i, caption in enumerate(captions)
    ]
    return {
        "YearBuiltDetails": built,
        "TaxAnnualAmount": tax,
        "TaxYear": None if lease else entry_year - 1,
        "GarageSpaces": garage,
        "CoveredSpaces": covered,
        "Stories": stories,
        "WaterfrontFeatures": water,
        "PoolFeatures": pool_features,
        "Media": media,
        "PublicRemarks": _remarks(rng, rec, penthouse, boat_dock, seasonal, gated, golf),
        "ListingTerms": None if lease else _pick(rng, md.LISTING_TERMS, 1, 4),
        "Furnished": FURNISHED_VALUES[furnished_code] if furnished_code >= 0 else None,
        "View": view,
        "PetsAllowed": PETS_VALUES[pets_code] if pets_code >= 0 else None,
        "ParkingFeatures": None if land else _pick(rng, md.PARKING, 1, 3),
        "ConstructionMaterials": None if land else _pick(rng, md.CONSTRUCTION, 1, 2),
        "ArchitecturalStyle": None
        if land
        else rng.choice(md.STYLES_UNIT if unit_sub else md.STYLES_HOUSE),
        "Roof": None if land or unit_sub else rng.choice(md.ROOFS),
        "Cooling": None if land else _pick(rng, md.COOLING, 1, 2),
        "Heating": None if land else rng.choice(md.HEATING),
        "Flooring": None if land else _pick(rng, md.FLOORING, 1, 3),
        "Appliances": None if land or commercial else _pick(rng, md.APPLIANCES, 3, 7),
        "InteriorFeatures": interior,
        "ExteriorFeatures": None if land else _pick(rng, md.EXTERIOR, 1, 3),
        "CommunityFeatures": ", ".join(community) or None,
        "LaundryFeatures": None if land or commercial else rng.choice(md.LAUNDRY),
        "WindowFeatures": None if land else _pick(rng, md.WINDOWS, 1, 2),
        "Sewer": None
        if land
        else ("Septic Tank" if house and rng.random() < 0.12 else "Public Sewer"),
        "WaterSource": None if land else ("Well" if house and rng.random() < 0.04 else "Public"),
        "LeaseTerm": lease_term,
        "LeaseAmountFrequency": "Monthly" if lease else None,
        "SpecialListingConditions": CONDITIONS[cond],
        "VirtualTourURLUnbranded": f"https://tours.example.com/rf-sandbox/{lid}"
        if rng.random() < 0.4
        else None,
        "DirectionFaces": None if ptype == "Land/Boat Docks" else rng.choice(md.DIRECTIONS),
        "LotFeatures": None if unit_sub or commercial else _pick(rng, md.LOT_FEATURES, 1, 2),
        "Levels": levels,
        "OriginatingSystemKey": md.ORIGINATING_SYSTEM_KEY,
        "OriginatingSystemName": md.ORIGINATING_SYSTEM_NAME,
    }


def _remarks(
    rng: random.Random,
    rec: Mapping[str, Any],
    penthouse: bool,
    boat_dock: bool,
    seasonal: bool,
    gated: bool,
    golf: bool,
) -> str:
    sub, city = rec["PropertySubType"], rec["City"]
    place = rec["BuildingName"] or rec["SubdivisionName"] or city
    beds, baths, area = rec["BedroomsTotal"], rec["BathroomsTotalInteger"], rec["LivingArea"]
    adjective = rng.choice(
        ("Bright", "Spacious", "Updated", "Elegant", "Charming", "Renovated", "Stunning")
    )
    if beds is not None:
        rooms = "studio" if beds == 0 else f"{beds}-bedroom, {baths}-bath"
        text = f"{adjective} {rooms} {sub.lower()} in {place}"
    else:
        text = f"{adjective} {sub.lower()} opportunity in {place}"
    if area:
        text += f" with {area:,} sq ft"
    parts = [text + "."]
    if penthouse:
        parts.append("Penthouse residence with private elevator access and wraparound terrace.")
    if rec["WaterfrontYN"]:
        parts.append(
            "Waterfront setting with a private boat dock."
            if boat_dock
            else "Waterfront setting with open water views."
        )
    if rec["PoolPrivateYN"]:
        parts.append("Private pool and covered patio for year-round entertaining.")
    if rec["SeniorCommunityYN"]:
        parts.append("Located in a 55+ active-adult community.")
    if gated:
        parts.append("Guard-gated community.")
    if golf:
        parts.append("Golf course community.")
    if seasonal:
        parts.append("Available for the season; short-term lease.")
    parts.append(
        rng.choice(
            (
                f"Minutes from the best of {city}'s shopping, dining and beaches.",
                "Impact windows and doors throughout.",
                "Move-in ready; easy to show.",
                "Close to schools, parks and major highways.",
            )
        )
    )
    return " ".join(parts)
