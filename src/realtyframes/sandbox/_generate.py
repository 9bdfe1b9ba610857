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
    n = d.n
    ptype = d.ptype
    if ptype is None:
        w = np.array([md.PROPERTY_TYPE_WEIGHTS[p] for p in PROPERTY_TYPES])
        ptype = rng.choice(len(w), n, p=w / w.sum()).astype(np.int8)
    sub = np.zeros(n, dtype=np.int16)
    for ti, tname in enumerate(PROPERTY_TYPES):
        m = ptype == ti
        weights = md.SUBTYPE_WEIGHTS[tname]
        codes = np.array([_SUB[s] for s in weights], dtype=np.int16)
        p = np.array(list(weights.values()))
        sub[m] = codes[rng.choice(len(codes), int(m.sum()), p=p / p.sum())]
    lease = LEASE_TYPE[ptype]
    residential = _RESIDENTIAL[ptype]
    commercial = np.isin(ptype, [_PT["Commercial Sale"], _PT["Business Opportunity"]]) | (
        ptype == _PT["Commercial Lease"]
    )
    is_land = np.isin(ptype, [_PT["Land"], _PT["Land/Boat Docks"]])
    boat = ptype == _PT["Land/Boat Docks"]
    house = _HOUSE_SUBS[sub] & residential
    unit_sub = _UNIT_SUBS[sub]
    sfr = sub == _SUB["Single Family Residence"]
    d.__dict__.update(
        sub=sub,
        lease=lease,
        residential=residential,
        commercial=commercial,
        is_land=is_land,
        boat=boat,
        house=house,
        unit_sub=unit_sub,
        sfr=sfr,
        ptype=ptype,
    )


def _places(rng: np.random.Generator, t: Tables, d: SimpleNamespace) -> None:
    """City, subdivision and condo building."""
    commercial = d.commercial
    n = d.n
    sub = d.sub
    unit_sub = d.unit_sub
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
    d.__dict__.update(
        city=city,
        subdiv=subdiv,
        building=building,
        in_bld=in_bld,
        has_sub=has_sub,
        sd=sd,
        u_sub=u_sub,
        u_bld=u_bld,
        u_unit=u_unit,
        u_str=u_str,
    )


def _address(rng: np.random.Generator, t: Tables, d: SimpleNamespace) -> None:
    """Postal code, street, number and coordinates."""
    building = d.building
    city = d.city
    has_sub = d.has_sub
    in_bld = d.in_bld
    n = d.n
    sd = d.sd
    subdiv = d.subdiv
    u_str = d.u_str
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
    d.__dict__.update(
        zip_=zip_,
        prefix=prefix,
        street=street,
        number=number,
        b=b,
        lat=lat,
        lng=lng,
    )


def _units(rng: np.random.Generator, t: Tables, d: SimpleNamespace) -> None:
    """Waterfront, unit numbers and penthouses."""
    b = d.b
    boat = d.boat
    has_sub = d.has_sub
    in_bld = d.in_bld
    n = d.n
    ptype = d.ptype
    sd = d.sd
    sub = d.sub
    unit_sub = d.unit_sub
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
    d.__dict__.update(
        water_p=water_p,
        waterfront=waterfront,
        floors=floors,
        penthouse=penthouse,
        floor_no=floor_no,
        apt=apt,
        ph_no=ph_no,
        unit=unit,
        th_unit=th_unit,
    )


def _size(rng: np.random.Generator, t: Tables, d: SimpleNamespace) -> None:
    """Size, rooms, lot and age."""
    as_of_year = d.as_of_year
    b = d.b
    boat = d.boat
    commercial = d.commercial
    house = d.house
    in_bld = d.in_bld
    is_land = d.is_land
    n = d.n
    ptype = d.ptype
    sfr = d.sfr
    sub = d.sub
    unit_sub = d.unit_sub
    waterfront = d.waterfront
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
    d.__dict__.update(
        sp=sp,
        area=area,
        beds=beds,
        baths=baths,
        com_baths=com_baths,
        lot=lot,
        land_med=land_med,
        age=age,
        year=year,
    )


def _hoa(rng: np.random.Generator, t: Tables, d: SimpleNamespace) -> None:
    """HOA fee (sales of units, attached homes and HOA communities; leases carry none)."""
    area = d.area
    b = d.b
    has_sub = d.has_sub
    in_bld = d.in_bld
    lease = d.lease
    n = d.n
    residential = d.residential
    sd = d.sd
    sfr = d.sfr
    sub = d.sub
    th_unit = d.th_unit
    unit_sub = d.unit_sub
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
    d.__dict__.update(
        hoa=hoa,
        unit_rate=unit_rate,
    )


def _features(rng: np.random.Generator, t: Tables, d: SimpleNamespace) -> None:
    """Community and features."""
    b = d.b
    boat = d.boat
    city = d.city
    commercial = d.commercial
    has_sub = d.has_sub
    house = d.house
    in_bld = d.in_bld
    lease = d.lease
    n = d.n
    penthouse = d.penthouse
    ptype = d.ptype
    residential = d.residential
    sd = d.sd
    sfr = d.sfr
    sub = d.sub
    unit_sub = d.unit_sub
    waterfront = d.waterfront
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
    d.__dict__.update(
        senior=senior,
        gated=gated,
        golf=golf,
        tennis=tennis,
        pool_p=pool_p,
        pool=pool,
        dock_ok=dock_ok,
        boat_dock=boat_dock,
        seasonal_p=seasonal_p,
        seasonal=seasonal,
        cond_r=cond_r,
        condition=condition,
    )


def _furnishing(rng: np.random.Generator, t: Tables, d: SimpleNamespace) -> None:
    """Furnished, pets allowed and the listing agent."""
    n = d.n
    ptype = d.ptype
    residential = d.residential
    seasonal = d.seasonal
    senior = d.senior
    sub = d.sub
    unit_sub = d.unit_sub
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
    d.__dict__.update(
        fr=fr,
        furn_p=furn_p,
        furn_lease=furn_lease,
        furn_sale=furn_sale,
        furnished=furnished,
        pr=pr,
        pets_units=pets_units,
        pets_house=pets_house,
        pets=pets,
        agent=agent,
    )


def _beach_cities(t: Tables) -> list[int]:
    return [i for i, c in enumerate(t.city_names) if c in md.BEACH_CITIES]


def derive(cols: dict[str, np.ndarray], t: Tables) -> None:
    """Filter columns derived from the record fields (Furnished, PetsAllowed, conditions, broker)."""
    cols["is_furnished"] = cols["furnished"] == 1
    cols["pets_ok"] = cols["pets"] >= 1
    cols["short_sale"] = cols["condition"] == 1
    cols["office"] = t.agent_office[cols["agent"]]
