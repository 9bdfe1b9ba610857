"""Lookup tables shared by every listing of a market: cities, streets, subdivisions, buildings, brokers.

Deterministic from the seed and the market size (their own generator, ``[seed, 0]``); the listing
generator (:mod:`realtyframes.sandbox._generate`) draws codes into these tables.

>>> tables = Tables(seed=7, n=100, as_of_year=2026)
>>> tables.city_names[0], len(tables.office_ids) >= 12
('Miami', True)
"""

from __future__ import annotations

import numpy as np

from realtyframes.sandbox import _market_data as md

__all__ = ["PREFIXES", "Tables"]

#: Street direction prefixes; a listing's ``prefix`` code is a position here ("" = none).
PREFIXES: tuple[str, ...] = ("", "N", "S", "E", "W", "NE", "NW", "SE", "SW")
_SUFFIXES = ("St", "Ave", "Ter", "Ct", "Pl", "Dr", "Way", "Rd")
#: Words for generated brokerage names.
_OFFICE_WORDS: tuple[str, ...] = (
    "Coastal",
    "Atlantic",
    "Bayside",
    "Palm",
    "Harbor",
    "Sunshine",
    "Oceanfront",
    "Keystone",
    "Biscayne",
    "Intracoastal",
    "Gulfstream",
    "Emerald",
    "Coral",
    "Mangrove",
    "Pelican",
    "Sandpiper",
    "Tropic",
    "Southern",
    "Lighthouse",
    "Seabreeze",
)
_OFFICE_SUFFIXES: tuple[str, ...] = (
    "Realty",
    "Properties",
    "Real Estate",
    "Realty Group",
    "Homes",
    "International Realty",
    "Luxury Properties",
    "Brokers",
)


class Tables:
    """Categorical lookups shared by all listings; deterministic from the seed and size."""

    def __init__(self, seed: int, n: int, as_of_year: int) -> None:
        rng = np.random.default_rng([seed, 0])
        cities = md.CITIES
        self._cities(cities)
        self._streets(rng, cities)
        self._subdivisions(rng, cities)
        self._buildings(rng, cities, as_of_year)
        self._brokers(rng, n)
        self._lookups()
        self._city_ranges()

    def _cities(self, cities: tuple[md.City, ...]) -> None:
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

    def _streets(self, rng: np.random.Generator, cities: tuple[md.City, ...]) -> None:
        """Streets: (prefix code, street name code) pools per city."""
        names: dict[str, int] = {}
        suffixes = _SUFFIXES
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

    def _subdivisions(self, rng: np.random.Generator, cities: tuple[md.City, ...]) -> None:
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

    def _buildings(
        self, rng: np.random.Generator, cities: tuple[md.City, ...], as_of_year: int
    ) -> None:
        """Condo buildings: a fixed address, neighbourhood, height, age, HOA rate."""
        subs = self.subdivisions
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

    def _brokers(self, rng: np.random.Generator, n: int) -> None:
        """Brokers (offices) and their agents; activity is skewed like a real MLS."""
        n_off = int(np.clip(round(n / 150), 12, 800))
        combos = [
            f"{w} {s}" + (f" of {c}" if k else "")
            for k, c in enumerate(["", *self.city_names])
            for w in _OFFICE_WORDS
            for s in _OFFICE_SUFFIXES
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

    def _lookups(self) -> None:
        """Case-insensitive lookups for the exact-match filters."""
        self.city_lookup = {s.lower(): i for i, s in enumerate(self.city_names)}
        self.zip_lookup = {s: i for i, s in enumerate(self.zips)}
        self.street_lookup = {s.lower(): i for i, s in enumerate(self.streets)}
        self.sub_lookup: dict[str, list[int]] = {}
        for i, name in enumerate(self.sub_names):
            self.sub_lookup.setdefault(name.lower(), []).append(i)
        self.agent_lookup = {s.upper(): i for i, s in enumerate(self.agent_ids)}
        self.office_lookup = {s.upper(): i for i, s in enumerate(self.office_ids)}

    def _city_ranges(self) -> None:
        """Each city's pools as (start, count) in one flat table, for drawing all cities at once.

        A city's zips, subdivisions and buildings are consecutive codes (``city_zips[c]`` is
        ``arange(zip_start[c], zip_start[c] + zip_count[c])``); its streets are the slice
        ``street_start[c]:street_start[c] + street_count[c]`` of ``street_pref``/``street_code``.
        """
        self.zip_start, self.zip_count = _ranges(self.city_zips)
        self.sub_start, self.sub_count = _ranges(self.city_subs)
        self.bld_start, self.bld_count = _ranges(self.city_buildings)
        codes = [c for _, c in self.city_streets]
        self.street_start = np.cumsum([0] + [len(c) for c in codes[:-1]]).astype(np.int64)
        self.street_count = np.array([len(c) for c in codes], dtype=np.int64)
        self.street_pref = np.concatenate([p for p, _ in self.city_streets])
        self.street_code = np.concatenate(codes)


def _ranges(pools: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(start, count) of each pool of consecutive codes (an empty pool starts at 0)."""
    start = np.array([int(p[0]) if len(p) else 0 for p in pools], dtype=np.int64)
    count = np.array([len(p) for p in pools], dtype=np.int64)
    for p, s in zip(pools, start.tolist(), strict=True):
        if not np.array_equal(p, np.arange(s, s + len(p))):
            raise ValueError("a city's pool is not a run of consecutive codes")
    return start, count


def _ordinal(k: int) -> str:
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"
