"""Generation of listings: attributes, prices and the history of price and status changes.

Vectorised with numpy from one generator per market (see :class:`~realtyframes.sandbox._store.
ListingStore`): the same seed gives the same listings, drawn in a fixed order. The steps of
:func:`draw_listings` each draw their part (kinds, places, address, units, size, HOA, features,
furnishing, price) and must keep their order: reordering them changes every market.

>>> from realtyframes.sandbox._tables import Tables
>>> rng = np.random.default_rng(7)
>>> cols = draw_listings(rng, Tables(7, 100, 2026), np.zeros(5, dtype=np.int64), 2026)
>>> len(cols["p0"])
5
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from realtyframes.sandbox import _market_data as md
from realtyframes.sandbox._pricing import LEASE_TYPE, PROPERTY_TYPE_CODES, draw_price
from realtyframes.sandbox._spec import PROPERTY_TYPES
from realtyframes.sandbox._steps import keep
from realtyframes.sandbox._tables import Tables

__all__ = ["GEN_SUBTYPES", "SUBTYPE_CODES", "derive", "draw_listings"]

#: Every subtype generated (the filterable ones and the rest), in the weights' order.
GEN_SUBTYPES: tuple[str, ...] = tuple(
    dict.fromkeys(s for w in md.SUBTYPE_WEIGHTS.values() for s in w)
)
SUBTYPE_CODES = {name: i for i, name in enumerate(GEN_SUBTYPES)}
_SUB = SUBTYPE_CODES
_PT = PROPERTY_TYPE_CODES
_SP = np.array([md.SUBTYPE_PARAMS[s] for s in GEN_SUBTYPES], dtype=np.float64)

_RESIDENTIAL = np.array([t in ("Residential", "Residential Lease") for t in PROPERTY_TYPES])
_HOUSE_SUBS = np.array([s in md.HOUSE_SUBTYPES for s in GEN_SUBTYPES])
_UNIT_SUBS = np.array([s in md.UNIT_SUBTYPES for s in GEN_SUBTYPES])


def draw_listings(
    rng: np.random.Generator,
    t: Tables,
    entry: np.ndarray,
    as_of_year: int,
    ptype: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Attributes of ``len(entry)`` listings (everything but the event history)."""
    d = SimpleNamespace(n=len(entry), ptype=ptype, as_of_year=as_of_year)
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
        "snum": d.number.astype("U6"),
        "unit": d.unit.astype("U6"),
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
        d.ptype = rng.choice(len(w), d.n, p=w / w.sum()).astype(np.int8)
    sub = np.zeros(d.n, dtype=np.int16)
    for ti, tname in enumerate(PROPERTY_TYPES):
        m = d.ptype == ti
        weights = md.SUBTYPE_WEIGHTS[tname]
        codes = np.array([_SUB[s] for s in weights], dtype=np.int16)
        p = np.array(list(weights.values()))
        sub[m] = codes[rng.choice(len(codes), int(m.sum()), p=p / p.sum())]
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
    city = rng.choice(len(t.city_names), d.n, p=t.city_weights).astype(np.int8)
    subdiv = np.full(d.n, -1, dtype=np.int16)
    building = np.full(d.n, -1, dtype=np.int16)
    u_sub, u_bld, u_unit, u_str = rng.random(d.n), rng.random(d.n), rng.random(d.n), rng.random(d.n)
    for ci in range(len(t.city_names)):
        m = city == ci
        subs = t.city_subs[ci]
        subdiv[m] = subs[(u_sub[m] * len(subs)).astype(np.int64)]
        blds = t.city_buildings[ci]
        mb = m & d.unit_sub & (u_bld < np.where(d.sub == _SUB["Condo - Hotel"], 1.0, 0.8))
        building[mb] = blds[(u_unit[mb] * len(blds)).astype(np.int64)]
    subdiv[d.commercial] = -1
    in_bld = building >= 0
    subdiv[in_bld] = t.bld_sub[building[in_bld]]
    has_sub = subdiv >= 0
    sd = np.where(has_sub, subdiv, 0)
    keep(d, locals())


def _address(rng: np.random.Generator, t: Tables, d: SimpleNamespace) -> None:
    """Postal code, street, number and coordinates."""
    zip_ = np.zeros(d.n, dtype=np.int16)
    prefix = np.zeros(d.n, dtype=np.int8)
    street = np.zeros(d.n, dtype=np.int16)
    for ci in range(len(t.city_names)):
        m = d.city == ci
        pref, codes = t.city_streets[ci]
        k = (d.u_str[m] * len(codes)).astype(np.int64)
        prefix[m] = pref[k]
        street[m] = codes[k]
        zips = t.city_zips[ci]
        zip_[m] = zips[rng.integers(0, len(zips), int(m.sum()))]
    zip_[d.has_sub] = t.sub_zip[d.subdiv[d.has_sub]]
    number = rng.integers(100, 22000, d.n).astype(np.int32)
    b = np.where(d.in_bld, d.building, 0)
    zip_[d.in_bld] = t.bld_zip[b[d.in_bld]]
    prefix[d.in_bld] = t.bld_pref[b[d.in_bld]]
    street[d.in_bld] = t.bld_street[b[d.in_bld]]
    number[d.in_bld] = t.bld_num[b[d.in_bld]]

    lat = np.where(d.has_sub, t.sub_lat[d.sd], t.city_lat[d.city]) + rng.normal(0, 0.006, d.n)
    lng = np.where(d.has_sub, t.sub_lng[d.sd], t.city_lng[d.city]) + rng.normal(0, 0.006, d.n)
    lat[d.in_bld] = t.bld_lat[b[d.in_bld]]
    lng[d.in_bld] = t.bld_lng[b[d.in_bld]]
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
    unit = np.where(d.unit_sub, (floor_no * 100 + apt).astype("U6"), "")
    th_unit = (d.sub == _SUB["Townhouse"]) | (d.sub == _SUB["Villa"])
    th_unit &= rng.random(d.n) < 0.4
    unit = np.where(th_unit, rng.integers(1, 41, d.n).astype("U6"), unit)
    unit = np.where(penthouse, np.char.add("PH", ph_no.astype("U2")), unit)
    keep(d, locals())


def _size(rng: np.random.Generator, t: Tables, d: SimpleNamespace) -> None:
    """Size, rooms, lot and age."""
    sp = _SP[d.sub]
    area = np.exp(np.log(np.maximum(sp[:, 0], 1.0)) + sp[:, 1] * rng.standard_normal(d.n))
    area = np.where(d.waterfront & d.house, area * 1.3, area)
    area = np.round(np.clip(area, sp[:, 2], sp[:, 3]))
    area = np.where(sp[:, 0] > 0, area, np.nan)
    beds = np.clip(
        np.round(area / np.maximum(sp[:, 4], 1) + rng.normal(0, 0.6, d.n)), sp[:, 5], sp[:, 6]
    )
    beds = np.where(sp[:, 5] >= 0, beds, np.nan)
    baths = np.clip(np.round(beds * 0.8 + rng.normal(0.4, 0.5, d.n)), 1, np.maximum(beds, 0) + 2)
    com_baths = np.clip(np.round(np.nan_to_num(area) / 2500 + rng.random(d.n)), 1, 8)
    baths = np.where(d.commercial, com_baths, baths)
    baths = np.where(d.is_land, np.nan, baths)
    lot = np.full(d.n, np.nan)
    lot = np.where(d.house, area * rng.uniform(2.5, 5.0, d.n), lot)
    lot = np.where(d.sub == _SUB["Townhouse"], rng.uniform(1500, 3500, d.n), lot)
    lot = np.where(d.sub == _SUB["Villa"], rng.uniform(3000, 6000, d.n), lot)
    lot = np.where(d.sub == _SUB["Mobile Home"], rng.uniform(2500, 5000, d.n), lot)
    lot = np.where(d.ptype == _PT["Residential Income"], rng.uniform(6000, 16000, d.n), lot)
    land_med = np.where(
        d.sub == _SUB["Acreage"],
        90000.0,
        np.where(d.sub == _SUB["Commercial Land"], 25000.0, 8000.0),
    )
    lot = np.where(d.ptype == _PT["Land"], land_med * rng.lognormal(0, 0.5, d.n), lot)
    lot = np.where(d.boat, rng.uniform(300, 1500, d.n), lot)
    lot = np.where(
        np.isin(d.ptype, [_PT["Commercial Sale"], _PT["Commercial Lease"]]),
        np.nan_to_num(area) * rng.uniform(1.5, 3.0, d.n),
        lot,
    )
    lot = np.where(d.waterfront & d.sfr, lot * 1.3, lot)
    lot = np.round(lot)
    age = np.where(d.unit_sub, rng.gamma(2.0, 12.0, d.n), rng.gamma(2.0, 16.0, d.n))
    year = np.clip(np.floor(d.as_of_year + 1 - age), 1920, d.as_of_year + 1)
    year = np.where(d.in_bld, t.bld_year[d.b], year)
    year = np.where(d.is_land, np.nan, year)
    keep(d, locals())


def _hoa(rng: np.random.Generator, t: Tables, d: SimpleNamespace) -> None:
    """HOA fee (sales of units, attached homes and HOA communities; leases carry none)."""
    hoa = np.full(d.n, np.nan)
    unit_rate = np.where(d.in_bld, t.bld_hoa[d.b], rng.uniform(0.35, 0.8, d.n))
    unit_rate = np.where(d.sub == _SUB["Condo - Hotel"], unit_rate * 1.4, unit_rate)
    hoa = np.where(d.unit_sub, d.area * unit_rate, hoa)
    hoa = np.where(
        d.th_unit | (d.sub == _SUB["Townhouse"]) | (d.sub == _SUB["Villa"]),
        rng.uniform(150, 550, d.n),
        hoa,
    )
    hoa = np.where(d.sfr & d.has_sub & t.sub_hoa[d.sd], rng.uniform(100, 900, d.n), hoa)
    hoa = np.where(d.sub == _SUB["Mobile Home"], rng.uniform(50, 350, d.n), hoa)
    hoa = np.where(d.lease | ~d.residential, np.nan, hoa)
    hoa = np.round(hoa)
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
    pool_p = np.where(d.sub == _SUB["Villa"], 0.15, pool_p)
    pool_p = np.where(d.sub == _SUB["Townhouse"], 0.08, pool_p)
    pool_p = np.where(d.sub == _SUB["1/2 Duplex"], 0.10, pool_p)
    pool_p = np.where(d.ptype == _PT["Residential Income"], 0.10, pool_p)
    pool_p = np.where(d.unit_sub, np.where(d.penthouse, 0.3, 0.004), pool_p)
    pool = rng.random(d.n) < pool_p
    dock_ok = d.house | (d.sub == _SUB["Residential Lot"]) | (d.ptype == _PT["Residential Income"])
    boat_dock = (d.waterfront & dock_ok & (rng.random(d.n) < 0.55)) | d.boat
    seasonal_p = np.where(np.isin(d.city, _beach_cities(t)), 0.2, 0.1)
    seasonal = (d.ptype == _PT["Residential Lease"]) & (rng.random(d.n) < seasonal_p)
    cond_r = rng.random(d.n)
    condition = np.where(
        cond_r < 0.02, 1, np.where(cond_r < 0.04, 2, np.where(cond_r < 0.05, 3, 0))
    )
    condition = np.where(d.lease, 0, condition).astype(np.int8)
    keep(d, locals())


def _furnishing(rng: np.random.Generator, t: Tables, d: SimpleNamespace) -> None:
    """Furnished, pets allowed and the listing agent."""
    fr = rng.random(d.n)
    furn_p = np.where(d.seasonal, 0.95, np.where(d.unit_sub, 0.4, 0.15))
    furn_lease = (fr < furn_p).astype(np.int8)
    furn_sale = np.where(
        d.sub == _SUB["Condo - Hotel"],
        (fr < 0.9).astype(np.int8),
        np.where(
            d.unit_sub,
            np.where(fr < 0.2, 1, np.where(fr < 0.7, 0, -1)),
            np.where(fr < 0.05, 1, np.where(fr < 0.65, 0, -1)),
        ),
    )
    furnished = np.where(d.ptype == _PT["Residential Lease"], furn_lease, furn_sale)
    furnished = np.where(d.residential, furnished, -1).astype(np.int8)
    pr = rng.random(d.n)
    pets_units = np.where(pr < 0.35, 1, np.where(pr < 0.55, 2, np.where(pr < 0.75, 3, 0)))
    pets_house = np.where(pr < 0.55, 1, np.where(pr < 0.7, 2, np.where(pr < 0.8, 0, -1)))
    pets = np.where(d.unit_sub | (d.ptype == _PT["Residential Lease"]), pets_units, pets_house)
    pets = np.where(d.senior & (pets > 0), 3, pets)
    pets = np.where(d.residential | (d.ptype == _PT["Residential Income"]), pets, -1).astype(
        np.int8
    )

    agent = rng.choice(len(t.agent_ids), d.n, p=t.agent_weights).astype(np.int32)
    keep(d, locals())


def _beach_cities(t: Tables) -> list[int]:
    return [i for i, c in enumerate(t.city_names) if c in md.BEACH_CITIES]


def derive(cols: dict[str, np.ndarray], t: Tables) -> None:
    """Filter columns derived from the record fields (Furnished, PetsAllowed, conditions, broker)."""
    cols["is_furnished"] = cols["furnished"] == 1
    cols["pets_ok"] = cols["pets"] >= 1
    cols["short_sale"] = cols["condition"] == 1
    cols["office"] = t.agent_office[cols["agent"]]
