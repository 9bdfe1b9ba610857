"""Generation of listings: attributes, prices and the history of price and status changes.

Vectorised with numpy from one generator per market (see :class:`~realtyframes.sandbox._store.
ListingStore`): the same seed gives the same listings, drawn in a fixed order. The steps of
:func:`draw_listings` each draw their part (kinds, places, address, units, size, HOA, features,
furnishing, price) and must keep their order: reordering them changes every market. Work between
the draws is written to allocate little (a million-listing market is drawn at start-up): values
are put in place (``np.copyto(..., where=)``) rather than chained ``np.where``, per-city or
per-type draws are made in one pass (:mod:`~realtyframes.sandbox._draws`), and a step deletes its
large temporaries before ``keep``: what is kept lives until the end of the generation, and
memory that keeps growing is memory the system must map fresh (slow with transparent huge pages).

Unit and street numbers are kept as numbers: ``unit`` is a code (0 none, ``n`` the unit ``"n"``,
``-k`` the penthouse ``"PHk"``, see :func:`unit_text`) and the street number is ``number``.

>>> from realtyframes.sandbox._tables import Tables
>>> rng = np.random.default_rng(7)
>>> cols = draw_listings(rng, Tables(7, 100, 2026), np.zeros(5, dtype=np.int64), 2026)
>>> len(cols["p0"])
5
>>> [unit_text(c) for c in (0, 1204, -3)], unit_code("PH3"), unit_code("0305")
(['', '1204', 'PH3'], -3, None)
"""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np

from realtyframes.sandbox import _market_data as md
from realtyframes.sandbox._draws import by_group, choice
from realtyframes.sandbox._pricing import LEASE_TYPE, PROPERTY_TYPE_CODES, draw_price
from realtyframes.sandbox._spec import PROPERTY_TYPES
from realtyframes.sandbox._steps import keep
from realtyframes.sandbox._tables import Tables

__all__ = [
    "GEN_SUBTYPES",
    "SUBTYPE_CODES",
    "derive",
    "draw_listings",
    "number_code",
    "unit_code",
    "unit_text",
]

#: Every subtype generated (the filterable ones and the rest), in the weights' order.
GEN_SUBTYPES: tuple[str, ...] = tuple(
    dict.fromkeys(s for w in md.SUBTYPE_WEIGHTS.values() for s in w)
)
SUBTYPE_CODES = {name: i for i, name in enumerate(GEN_SUBTYPES)}
_SUB = SUBTYPE_CODES
_PT = PROPERTY_TYPE_CODES
_SP = np.array([md.SUBTYPE_PARAMS[s] for s in GEN_SUBTYPES], dtype=np.float64)
#: The subtype parameters by column (``_SP_T[j][sub]`` is column j of each listing's subtype).
_SP_T = np.ascontiguousarray(_SP.T)
_LOG_AREA = np.log(np.maximum(_SP[:, 0], 1.0))
_AREA_PER_BED = np.maximum(_SP[:, 4], 1)
_HAS_AREA = _SP[:, 0] > 0
_HAS_BEDS = _SP[:, 5] >= 0
_LAND_MEDIAN = np.array(
    [{"Acreage": 90000.0, "Commercial Land": 25000.0}.get(s, 8000.0) for s in GEN_SUBTYPES]
)
#: Per property type: subtype codes and their probabilities.
_SUBTYPE_DRAWS = [
    (
        np.array([SUBTYPE_CODES[s] for s in md.SUBTYPE_WEIGHTS[tname]], dtype=np.int16),
        (w := np.array(list(md.SUBTYPE_WEIGHTS[tname].values()))) / w.sum(),
    )
    for tname in PROPERTY_TYPES
]
_UNIT = re.compile(r"(PH)?([1-9][0-9]{0,3})")
_NUMBER = re.compile(r"[1-9][0-9]{0,8}")

_RESIDENTIAL = np.array([t in ("Residential", "Residential Lease") for t in PROPERTY_TYPES])
_HOUSE_SUBS = np.array([s in md.HOUSE_SUBTYPES for s in GEN_SUBTYPES])
_UNIT_SUBS = np.array([s in md.UNIT_SUBTYPES for s in GEN_SUBTYPES])


def draw_listings(
    rng: np.random.Generator,
    t: Tables,
    entry: np.ndarray,
    entry_year: int | np.ndarray,
    ptype: np.ndarray | None = None,
    level: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Attributes of ``len(entry)`` listings (everything but the event history).

    ``entry_year``: the year each listing entered (a home is built by the next year at the
    latest; one year for all, or one per listing); ``level``: the market's price level at each
    entry (list prices are multiplied by it; None: 1).
    """
    d = SimpleNamespace(n=len(entry), ptype=ptype, entry_year=entry_year, level=level)
    for step in (
        _kinds,
        _places,
        _address,
        _units,
        _size,
        _hoa,
        _features,
        _furnishing,
        draw_price,
    ):
        step(rng, t, d)
    return {
        "ptype": d.ptype.astype(np.int8),
        "sub": d.sub,
        "city": d.city,
        "zip": d.zip_,
        "prefix": d.prefix,
        "street": d.street,
        "number": d.number,
        "unit": d.unit,
        "subdiv": d.subdiv,
        "building": d.building,
        "lat": np.round(d.lat, 6),
        "lng": np.round(d.lng, 6),
        "beds": d.beds,
        "baths": d.baths,
        "area": d.area,
        "lot": d.lot,
        "year": d.year,
        "hoa": d.hoa,
        "waterfront": d.waterfront,
        "pool": d.pool,
        "penthouse": d.penthouse,
        "furnished": d.furnished,
        "pets": d.pets,
        "gated": d.gated,
        "tennis": d.tennis,
        "golf": d.golf,
        "boat_dock": d.boat_dock,
        "condition": d.condition,
        "seasonal": d.seasonal,
        "senior": d.senior,
        "agent": d.agent,
        "p0": d.price,
    }


def _kinds(rng: np.random.Generator, t: Tables, d: SimpleNamespace) -> None:
    """Property type and subtype of each listing, and the flags derived from them."""
    if d.ptype is None:
        w = np.array([md.PROPERTY_TYPE_WEIGHTS[p] for p in PROPERTY_TYPES])
        d.ptype = choice(rng, w / w.sum(), d.n).astype(np.int8)

    def subtypes(ti: int, count: int) -> np.ndarray:
        codes, p = _SUBTYPE_DRAWS[ti]
        return codes[choice(rng, p, count)]

    sub = by_group(d.ptype, len(PROPERTY_TYPES), subtypes, np.int16)
    lease = LEASE_TYPE[d.ptype]
    residential = _RESIDENTIAL[d.ptype]
    commercial = np.isin(d.ptype, [_PT["Commercial Sale"], _PT["Business Opportunity"]]) | (
        d.ptype == _PT["Commercial Lease"]
    )
    is_land = np.isin(d.ptype, [_PT["Land"], _PT["Land/Boat Docks"]])
    boat = d.ptype == _PT["Land/Boat Docks"]
    house = _HOUSE_SUBS[sub] & residential
    unit_sub = _UNIT_SUBS[sub]
    sfr = sub == _SUB["Single Family Residence"]
    keep(d, locals())


def _places(rng: np.random.Generator, t: Tables, d: SimpleNamespace) -> None:
    """City, subdivision and condo building."""
    city = choice(rng, t.city_weights, d.n).astype(np.int8)
    u_sub, u_bld, u_unit, u_str = rng.random(d.n), rng.random(d.n), rng.random(d.n), rng.random(d.n)
    # the k-th of a city's n subdivisions (buildings) with k = floor(u * n)
    subdiv = (t.sub_start[city] + (u_sub * t.sub_count[city]).astype(np.int64)).astype(np.int16)
    building = np.full(d.n, -1, dtype=np.int16)
    mb = d.unit_sub & (u_bld < np.where(d.sub == _SUB["Condo - Hotel"], 1.0, 0.8))
    cb = city[mb]
    building[mb] = t.bld_start[cb] + (u_unit[mb] * t.bld_count[cb]).astype(np.int64)
    subdiv[d.commercial] = -1
    in_bld = building >= 0
    subdiv[in_bld] = t.bld_sub[building[in_bld]]
    has_sub = subdiv >= 0
    sd = np.where(has_sub, subdiv, 0)
    del u_sub, u_bld, u_unit, mb, cb  # (temporaries are not kept: see the module docstring)
    keep(d, locals())


def _address(rng: np.random.Generator, t: Tables, d: SimpleNamespace) -> None:
    """Postal code, street, number and coordinates."""
    k = t.street_start[d.city] + (d.u_str * t.street_count[d.city]).astype(np.int64)
    prefix = t.street_pref[k]
    street = t.street_code[k]

    def zips(ci: int, count: int) -> np.ndarray:  # one draw per city, in city order
        return rng.integers(0, int(t.zip_count[ci]), count)

    zip_ = (t.zip_start[d.city] + by_group(d.city, len(t.city_names), zips, np.int64)).astype(
        np.int16
    )
    zip_[d.has_sub] = t.sub_zip[d.subdiv[d.has_sub]]
    number = rng.integers(100, 22000, d.n).astype(np.int32)
    b = np.where(d.in_bld, d.building, 0)
    ib = np.flatnonzero(d.in_bld)
    bb = b[ib]
    zip_[ib] = t.bld_zip[bb]
    prefix[ib] = t.bld_pref[bb]
    street[ib] = t.bld_street[bb]
    number[ib] = t.bld_num[bb]

    lat = np.where(d.has_sub, t.sub_lat[d.sd], t.city_lat[d.city]) + rng.normal(0, 0.006, d.n)
    lng = np.where(d.has_sub, t.sub_lng[d.sd], t.city_lng[d.city]) + rng.normal(0, 0.006, d.n)
    lat[ib] = t.bld_lat[bb]
    lng[ib] = t.bld_lng[bb]
    del k
    d.u_str = None
    keep(d, locals())


def _units(rng: np.random.Generator, t: Tables, d: SimpleNamespace) -> None:
    """Waterfront, unit numbers and penthouses."""
    water_p = np.where(d.has_sub, t.sub_water[d.sd], 0.05)
    waterfront = np.where(d.in_bld, t.bld_water[d.b], rng.random(d.n) < water_p) | d.boat
    waterfront &= ~np.isin(d.ptype, [_PT["Business Opportunity"]])
    floors = np.where(d.in_bld, t.bld_floors[d.b], 4).astype(np.int64)
    penthouse = d.in_bld & (rng.random(d.n) < 0.03)
    floor_no = rng.integers(1, np.maximum(floors, 2))
    apt = rng.integers(1, 13, d.n)
    ph_no = rng.integers(1, 7, d.n)
    unit = np.where(d.unit_sub, floor_no * 100 + apt, 0).astype(np.int16)  # see unit_text
    th_unit = (d.sub == _SUB["Townhouse"]) | (d.sub == _SUB["Villa"])
    th_unit &= rng.random(d.n) < 0.4
    np.copyto(unit, rng.integers(1, 41, d.n), where=th_unit, casting="unsafe")
    np.copyto(unit, -ph_no, where=penthouse, casting="unsafe")
    del water_p, floors, floor_no, apt, ph_no
    keep(d, locals())


def _size(rng: np.random.Generator, t: Tables, d: SimpleNamespace) -> None:
    """Size, rooms, lot and age."""
    sp = {j: _SP_T[j][d.sub] for j in (1, 2, 3, 5, 6, 7)}  # column j of the subtype's parameters
    value_factor = sp[7]
    area = sp[1] * rng.standard_normal(d.n)
    area += _LOG_AREA[d.sub]
    np.exp(area, out=area)
    np.multiply(area, 1.3, out=area, where=d.waterfront & d.house)
    np.round(np.clip(area, sp[2], sp[3], out=area), out=area)
    area[~_HAS_AREA[d.sub]] = np.nan
    beds = area / _AREA_PER_BED[d.sub]
    beds += rng.normal(0, 0.6, d.n)
    np.clip(np.round(beds, out=beds), sp[5], sp[6], out=beds)
    beds[~_HAS_BEDS[d.sub]] = np.nan
    baths = np.clip(np.round(beds * 0.8 + rng.normal(0.4, 0.5, d.n)), 1, np.maximum(beds, 0) + 2)
    com_baths = np.clip(np.round(np.nan_to_num(area) / 2500 + rng.random(d.n)), 1, 8)
    np.copyto(baths, com_baths, where=d.commercial)
    baths[d.is_land] = np.nan
    lot = np.full(d.n, np.nan)
    np.copyto(lot, area * rng.uniform(2.5, 5.0, d.n), where=d.house)
    np.copyto(lot, rng.uniform(1500, 3500, d.n), where=d.sub == _SUB["Townhouse"])
    np.copyto(lot, rng.uniform(3000, 6000, d.n), where=d.sub == _SUB["Villa"])
    np.copyto(lot, rng.uniform(2500, 5000, d.n), where=d.sub == _SUB["Mobile Home"])
    np.copyto(lot, rng.uniform(6000, 16000, d.n), where=d.ptype == _PT["Residential Income"])
    land = _LAND_MEDIAN[d.sub] * rng.lognormal(0, 0.5, d.n)
    np.copyto(lot, land, where=d.ptype == _PT["Land"])
    np.copyto(lot, rng.uniform(300, 1500, d.n), where=d.boat)
    np.copyto(
        lot,
        np.nan_to_num(area) * rng.uniform(1.5, 3.0, d.n),
        where=np.isin(d.ptype, [_PT["Commercial Sale"], _PT["Commercial Lease"]]),
    )
    np.multiply(lot, 1.3, out=lot, where=d.waterfront & d.sfr)
    np.round(lot, out=lot)
    age = np.where(d.unit_sub, rng.gamma(2.0, 12.0, d.n), rng.gamma(2.0, 16.0, d.n))
    year = np.clip(np.floor(d.entry_year + 1 - age), 1920, d.entry_year + 1)
    year[d.ib] = t.bld_year[d.bb]
    year[d.is_land] = np.nan
    del sp, com_baths, land, age
    keep(d, locals())


def _hoa(rng: np.random.Generator, t: Tables, d: SimpleNamespace) -> None:
    """HOA fee (sales of units, attached homes and HOA communities; leases carry none)."""
    hoa = np.full(d.n, np.nan)
    unit_rate = rng.uniform(0.35, 0.8, d.n)
    unit_rate[d.ib] = t.bld_hoa[d.bb]
    np.multiply(unit_rate, 1.4, out=unit_rate, where=d.sub == _SUB["Condo - Hotel"])
    np.copyto(hoa, d.area * unit_rate, where=d.unit_sub)
    attached = d.th_unit | (d.sub == _SUB["Townhouse"]) | (d.sub == _SUB["Villa"])
    np.copyto(hoa, rng.uniform(150, 550, d.n), where=attached)
    np.copyto(hoa, rng.uniform(100, 900, d.n), where=d.sfr & d.has_sub & t.sub_hoa[d.sd])
    np.copyto(hoa, rng.uniform(50, 350, d.n), where=d.sub == _SUB["Mobile Home"])
    hoa[d.lease | ~d.residential] = np.nan
    np.round(hoa, out=hoa)
    del unit_rate
    keep(d, locals())


def _features(rng: np.random.Generator, t: Tables, d: SimpleNamespace) -> None:
    """Community and features."""
    senior = d.residential & d.has_sub & t.sub_senior[d.sd]
    gated = (
        (~d.commercial) & d.has_sub & (rng.random(d.n) < np.where(d.has_sub, t.sub_gated[d.sd], 0))
    )
    golf = (~d.commercial) & d.has_sub & t.sub_golf[d.sd] & (rng.random(d.n) < 0.9)
    tennis = (~d.commercial) & d.has_sub & t.sub_tennis[d.sd] & (rng.random(d.n) < 0.9)
    tennis |= d.in_bld & t.bld_tennis[d.b]
    pool_p = np.where(d.sfr, 0.30 + 0.30 * d.waterfront, 0.0)
    pool_p[d.sub == _SUB["Villa"]] = 0.15
    pool_p[d.sub == _SUB["Townhouse"]] = 0.08
    pool_p[d.sub == _SUB["1/2 Duplex"]] = 0.10
    pool_p[d.ptype == _PT["Residential Income"]] = 0.10
    pool_p[d.unit_sub] = 0.004
    pool_p[d.unit_sub & d.penthouse] = 0.3
    pool = rng.random(d.n) < pool_p
    dock_ok = d.house | (d.sub == _SUB["Residential Lot"]) | (d.ptype == _PT["Residential Income"])
    boat_dock = (d.waterfront & dock_ok & (rng.random(d.n) < 0.55)) | d.boat
    seasonal_p = np.where(np.isin(d.city, _beach_cities(t)), 0.2, 0.1)
    seasonal = (d.ptype == _PT["Residential Lease"]) & (rng.random(d.n) < seasonal_p)
    condition = _bins(rng.random(d.n), (0.02, 0.04, 0.05), (1, 2, 3, 0))
    condition[d.lease] = 0
    del pool_p, seasonal_p
    keep(d, locals())


def _furnishing(rng: np.random.Generator, t: Tables, d: SimpleNamespace) -> None:
    """Furnished, pets allowed and the listing agent."""
    fr = rng.random(d.n)
    furn_p = np.where(d.seasonal, 0.95, np.where(d.unit_sub, 0.4, 0.15))
    furn_lease = (fr < furn_p).astype(np.int8)
    furn_sale = _bins(fr, (0.05, 0.65), (1, 0, -1))
    np.copyto(furn_sale, _bins(fr, (0.2, 0.7), (1, 0, -1)), where=d.unit_sub)
    np.copyto(furn_sale, fr < 0.9, where=d.sub == _SUB["Condo - Hotel"], casting="unsafe")
    furnished = np.where(d.ptype == _PT["Residential Lease"], furn_lease, furn_sale)
    furnished[~d.residential] = -1
    pr = rng.random(d.n)
    pets_units = _bins(pr, (0.35, 0.55, 0.75), (1, 2, 3, 0))
    pets_house = _bins(pr, (0.55, 0.7, 0.8), (1, 2, 0, -1))
    pets = np.where(d.unit_sub | (d.ptype == _PT["Residential Lease"]), pets_units, pets_house)
    pets[d.senior & (pets > 0)] = 3
    pets[~(d.residential | (d.ptype == _PT["Residential Income"]))] = -1

    agent = choice(rng, t.agent_weights, d.n).astype(np.int32)
    del fr, furn_p, pr
    keep(d, locals())


def _bins(u: np.ndarray, edges: tuple[float, ...], values: tuple[int, ...]) -> np.ndarray:
    """``values[i]`` where ``edges[i - 1] <= u < edges[i]`` (int8): a chain of np.where at once."""
    k = np.zeros(len(u), dtype=np.int8)
    for e in edges:
        k += u >= e
    return np.array(values, dtype=np.int8)[k]


def _beach_cities(t: Tables) -> list[int]:
    return [i for i, c in enumerate(t.city_names) if c in md.BEACH_CITIES]


def derive(cols: dict[str, np.ndarray], t: Tables) -> None:
    """Filter columns derived from the record fields (Furnished, PetsAllowed, conditions, broker)."""
    cols["is_furnished"] = cols["furnished"] == 1
    cols["pets_ok"] = cols["pets"] >= 1
    cols["short_sale"] = cols["condition"] == 1
    cols["office"] = t.agent_office[cols["agent"]]


def unit_text(code: int) -> str:
    """The UnitNumber of a ``unit`` code: 0 none (""), ``n`` > 0 ``"n"``, ``-k`` ``"PHk"``."""
    return "" if code == 0 else (str(code) if code > 0 else f"PH{-code}")


def unit_code(text: str) -> int | None:
    """The ``unit`` code whose :func:`unit_text` is ``text``; None when no code has it."""
    if text == "":
        return 0
    m = _UNIT.fullmatch(text)
    if m is None:
        return None
    return -int(m[2]) if m[1] else int(m[2])


def number_code(text: str) -> int | None:
    """The street ``number`` written ``text`` (no sign, no leading zero); None if none is."""
    return int(text) if _NUMBER.fullmatch(text) else None
