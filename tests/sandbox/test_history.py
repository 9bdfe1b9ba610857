"""The multi-year sandbox market: its span, season, price path and resales of the same homes.

Expectations are computed here from the records the operations return (summary and detail
fields) and from the published truth (``realtyframes.sandbox.price_level`` / ``price_path``),
never from the store's own columns.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta
from typing import Any

import httpx
import numpy as np
import pytest

from realtyframes.sandbox import (
    DEFAULT_HISTORY_YEARS,
    RunningSandbox,
    SandboxOptions,
    price_level,
    price_path,
    seasonal_factor,
    start,
)
from realtyframes.sandbox._spec import PROPERTY_TYPES, STATUSES
from realtyframes.sandbox._store import ListingStore

AS_OF = datetime(2026, 6, 30, tzinfo=UTC)
Record = dict[str, Any]
#: What a home's resale shares with its earlier listing.
HOME_FIELDS = (
    "UnparsedAddress",
    "StreetNumber",
    "StreetDirPrefix",
    "StreetName",
    "UnitNumber",
    "City",
    "PostalCode",
    "PropertySubType",
    "LivingArea",
    "BedroomsTotal",
    "BathroomsTotalInteger",
    "YearBuilt",
    "LotSizeSquareFeet",
    "SubdivisionName",
    "BuildingName",
    "WaterfrontYN",
    "PoolPrivateYN",
    "coordinates",
)


def _pages(
    search: Callable[[dict[str, str]], dict[str, Any]], params: dict[str, str]
) -> Iterator[Record]:
    offset = 0
    while True:
        page = search({**params, "Offset": str(offset), "Limit": "50"})
        yield from page["listings"]
        offset += len(page["listings"])
        if offset >= page["total"] or not page["listings"]:
            return


def _listings(store: ListingStore, kind: str = "Residential") -> list[Record]:
    """Every visible listing of ``store`` of one property type (all statuses)."""
    return [r for s in STATUSES for r in _pages(store.search, {"PropertyType": kind, "Status": s})]


def _entered(record: Record) -> datetime:
    return datetime.fromisoformat(record["OriginalEntryTimestamp"].replace("Z", "+00:00"))


@pytest.fixture(scope="module")
def market() -> ListingStore:
    """The default history (3 years) of the default size (5,000 listings)."""
    return ListingStore(5000, 5, as_of=AS_OF)


@pytest.fixture(scope="module")
def homes(market: ListingStore) -> list[Record]:
    return _listings(market)


# -- the option ------------------------------------------------------------------------------------


def test_the_default_history_is_three_years() -> None:
    assert SandboxOptions().history_years == DEFAULT_HISTORY_YEARS == 3


@pytest.mark.parametrize("bad", [0, 11, -3, 2.5, "3", True, None])
def test_bad_history_years_are_refused_naming_the_option(bad: object) -> None:
    with pytest.raises(
        ValueError, match=r"history_years: must be a whole number of years from 1 to 10"
    ):
        ListingStore(10, as_of=AS_OF, history_years=bad)  # type: ignore[arg-type]
    with (
        pytest.raises(ValueError, match=r"history_years"),
        start(listings=10, as_of=AS_OF, history_years=bad),
    ):
        pass  # pragma: no cover - never reached


def test_same_seed_and_options_give_the_same_market() -> None:
    def market(seed: int = 3, years: int = 4) -> list[Record]:
        store = ListingStore(600, seed, as_of=AS_OF, history_years=years)
        return [store.detail(r["ListingId"]) for r in _listings(store)]

    first = market()
    assert first == market()
    assert market(seed=4) != first
    assert market(years=5) != first


def test_the_option_reaches_the_server(start_sandbox: Callable[..., RunningSandbox]) -> None:
    """``start(history_years=...)``: the same data as the store with those options, over HTTP."""
    sandbox = start_sandbox(listings=300, history_years=2)
    store = ListingStore(300, 7, as_of=AS_OF, history_years=2)
    params = {"PropertyType": "Residential", "Status": "Closed", "Sort": "-listdate"}
    with httpx.Client(base_url=sandbox.url, timeout=30) as http:
        served = list(_pages(lambda p: http.get("/v1/listings", params=p).json(), params))
    assert served == list(_pages(store.search, params)) and served


# -- the span --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("years", "n"), [(1, 300), (3, 600), (10, 2000)])
def test_the_history_spans_the_years_and_n_listings_are_visible(years: int, n: int) -> None:
    store = ListingStore(n, 9, as_of=AS_OF, history_years=years)
    everything = [r for kind in PROPERTY_TYPES for r in _listings(store, kind)]
    assert len(everything) == n
    entered = sorted(_entered(r) for r in everything)
    assert entered[-1] <= AS_OF
    assert AS_OF - timedelta(days=round(years * 365.2425)) <= entered[0]
    assert entered[0] < AS_OF - timedelta(days=years * 365) + timedelta(days=30)


# -- the season ------------------------------------------------------------------------------------


def test_spring_has_more_entries_and_sales_than_winter() -> None:
    """Over three whole years: entries in March-May against December-February, sales (CloseDate)
    in April-July against November-February, each against what a flat year would give."""
    store = ListingStore(12000, 2, as_of=AS_OF)
    records = _listings(store) + _listings(store, "Residential Lease")
    first = date(2023, 7, 1)  # three whole years: July 2023 to June 2026
    entries = Counter(d.month for r in records if (d := _entered(r).date()) >= first)
    sales = Counter(
        d.month
        for r in records
        if r["CloseDate"] and first <= (d := date.fromisoformat(r["CloseDate"])) < AS_OF.date()
    )
    spring = sum(entries[m] for m in (3, 4, 5)) / sum(entries[m] for m in (12, 1, 2))
    assert spring > 1.15  # the intensity gives ~1.27; a flat year ~1.0 (+- 0.03 at this size)
    summer = sum(sales[m] for m in (4, 5, 6, 7)) / sum(sales[m] for m in (11, 12, 1, 2))
    assert summer > 1.15
    assert seasonal_factor(date(2026, 5, 15)) == pytest.approx(1.2, abs=0.005)
    assert seasonal_factor(date(2026, 11, 14)) == pytest.approx(0.8, abs=0.005)


# -- the price path --------------------------------------------------------------------------------


def test_prices_follow_the_published_price_level() -> None:
    """Sold homes over five years, each against the median of its subtype in its city (constant
    subtype and city): per whole year of entry, the median log price per sq ft moves with the
    market (by more than twice the tolerance), and less the published level it stays put. The
    last year is left out: of its entries, only the quick sales (fewer price cuts) have closed."""
    store = ListingStore(100_000, 4, as_of=AS_OF, history_years=5)
    sold = [r for r in _pages(store.search, {"Status": "Closed"}) if r["LivingArea"]]
    levels = price_level([_entered(r) for r in sold], AS_OF)
    log_psf = [math.log(r["ClosePrice"] / r["LivingArea"]) for r in sold]
    cells: dict[tuple[str, str], list[float]] = {}
    for r, x in zip(sold, log_psf, strict=True):
        cells.setdefault((r["City"], r["PropertySubType"]), []).append(x)
    cell_median = {cell: statistics.median(xs) for cell, xs in cells.items()}
    by_year: dict[int, list[tuple[float, float]]] = {}
    for r, x, level in zip(sold, log_psf, levels, strict=True):
        age = (AS_OF - _entered(r)).days // 365  # 4: the first whole year, 1: the last one used
        x -= cell_median[(r["City"], r["PropertySubType"])]
        by_year.setdefault(age, []).append((x, math.log(level)))
    assert min(len(by_year[y]) for y in (1, 2, 3, 4)) > 5000
    raw = {y: statistics.median(x for x, _ in by_year[y]) for y in (1, 2, 3, 4)}
    adjusted = {y: statistics.median(x - lv for x, lv in by_year[y]) for y in (1, 2, 3, 4)}
    assert raw[1] - raw[4] > 0.06  # the market rose about 10 % over those three years
    for y in (1, 2, 3):
        assert adjusted[y] - adjusted[4] == pytest.approx(0.0, abs=0.025)


def test_price_path_is_the_monthly_mean_of_the_price_level() -> None:
    path = price_path(AS_OF, years=3)
    assert path[0][0] == date(2023, 6, 1) and path[-1][0] == date(2026, 6, 1) and len(path) == 37
    march = [price_level(datetime(2026, 3, d, 12, tzinfo=UTC), AS_OF) for d in range(1, 32)]
    assert dict(path)[date(2026, 3, 1)] == pytest.approx(statistics.fmean(march), rel=1e-9)
    yoy = [b / a - 1 for (_, a), (_, b) in zip(path, path[12:], strict=False)]
    assert all(0.015 < g < 0.09 for g in yoy)  # ~5 %/year with a mild cycle, never a fall
    assert price_level(AS_OF, AS_OF) == 1.0
    later = datetime(2030, 1, 1, tzinfo=UTC)  # the ratio of two levels does not depend on as_of
    assert price_level(AS_OF, later) / price_level(date(2024, 1, 1), later) == pytest.approx(
        1 / price_level(date(2024, 1, 1), AS_OF)
    )


# -- resales ---------------------------------------------------------------------------------------


def _resales(homes: list[Record]) -> list[tuple[Record, Record]]:
    """(earlier, later) listings at one address: the earlier Closed before the later entered."""
    by_address: dict[str, list[Record]] = {}
    for r in homes:
        by_address.setdefault(r["UnparsedAddress"], []).append(r)
    pairs = []
    for same in by_address.values():
        same.sort(key=_entered)
        for earlier, later in itertools.pairwise(same):
            closed = earlier["CloseDate"]
            if closed and date.fromisoformat(closed) < _entered(later).date():
                pairs.append((earlier, later))
    return pairs


def test_resales_are_the_same_home_listed_again_years_later(
    market: ListingStore, homes: list[Record]
) -> None:
    pairs = [(a, b) for a, b in _resales(homes) if a["LivingArea"] == b["LivingArea"]]
    start_ = min(_entered(r) for r in homes)
    later = [r for r in homes if _entered(r) > start_ + timedelta(days=548)]
    share = len({b["ListingId"] for _, b in pairs}) / len(later)
    assert 0.06 < share < 0.15
    for earlier, again in pairs:
        assert again["ListingId"] != earlier["ListingId"]
        assert all(again[f] == earlier[f] for f in HOME_FIELDS)
        sold = date.fromisoformat(earlier["CloseDate"])
        assert (_entered(again).date() - sold).days >= 365
    # the detail's structure is the home's too; the listing's own parts (agent, text) are not
    earlier, again = pairs[0]
    first, second = market.detail(earlier["ListingId"]), market.detail(again["ListingId"])
    for field in ("Stories", "GarageSpaces", "CoveredSpaces", "PoolFeatures"):
        assert first[field] == second[field]
    assert first["Media"] != second["Media"]


def test_resale_prices_follow_the_level_between_the_two_sales(homes: list[Record]) -> None:
    """log(later close / earlier close) - log(level ratio of the entries): centred on 0, so a
    repeat-sales index on these pairs finds the published path."""
    pairs = [(a, b) for a, b in _resales(homes) if a["LivingArea"] == b["LivingArea"]]
    closed = [(a, b) for a, b in pairs if b["ClosePrice"]]
    assert len(closed) > 80
    excess = []
    for a, b in closed:
        la, lb = price_level([_entered(a), _entered(b)], AS_OF)
        excess.append(math.log(b["ClosePrice"] / a["ClosePrice"]) - math.log(lb / la))
    assert abs(statistics.median(excess)) < 0.025
    assert abs(float(np.mean(excess))) < 0.03
