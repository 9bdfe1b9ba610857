"""The generator's fast paths give what the plain numpy forms give (a market is the same however
it is computed), and the numbers kept for unit and street numbers answer like the text did.
"""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from realtyframes.sandbox._draws import by_group, choice
from realtyframes.sandbox._generate import number_code, unit_code, unit_text
from realtyframes.sandbox._store import ListingStore


@pytest.mark.parametrize("k", [1, 2, 4, 9, 16, 17, 50, 5600])
def test_choice_draws_what_rng_choice_draws(k: int) -> None:
    gen = np.random.default_rng(k)
    for trial in range(5):
        weights = gen.lognormal(0.0, 2.0, k)
        if trial % 2 and k > 1:
            weights[gen.random(k) < 0.3] = 0.0  # values that can never be drawn
            weights[0] = max(weights[0], 1e-6)
        p = weights / weights.sum()
        size = int(gen.integers(0, 20_000))
        fast = choice(np.random.default_rng([k, trial]), p, size)
        plain = np.random.default_rng([k, trial]).choice(k, size, p=p)
        assert fast.dtype == plain.dtype
        assert np.array_equal(fast, plain)


def test_choice_leaves_the_generator_where_rng_choice_does() -> None:
    a, b = np.random.default_rng(3), np.random.default_rng(3)
    choice(a, [0.2, 0.8], 1000)
    b.choice(2, 1000, p=[0.2, 0.8])
    assert a.random() == b.random()


def test_by_group_draws_group_by_group_like_a_loop_of_masks() -> None:
    group = np.random.default_rng(1).integers(0, 5, 1000)
    a, b = np.random.default_rng(2), np.random.default_rng(2)
    fast = by_group(group, 6, lambda g, n: a.integers(0, 10 + g, n), np.int64)
    plain = np.zeros(len(group), dtype=np.int64)
    for g in range(6):
        m = group == g
        plain[m] = b.integers(0, 10 + g, int(m.sum()))
    assert np.array_equal(fast, plain)


def test_unit_and_street_number_codes() -> None:
    for code in (0, 1, 40, 101, 6012, -1, -6):
        assert unit_code(unit_text(code)) == code
    assert [unit_text(c) for c in (0, 305, -2)] == ["", "305", "PH2"]
    for text in ("0305", "PH0", "PH02", "ph2", "3 ", "+3", "-3", "PH", "١٠١", "1e2"):
        assert unit_code(text) is None
    assert number_code("1200") == 1200
    for text in ("01200", "", "12 00", "+1200", "١٢٣"):
        assert number_code(text) is None


@pytest.fixture(scope="module")
def store() -> ListingStore:
    return ListingStore(n=4000, seed=5, as_of=datetime(2026, 6, 30, tzinfo=UTC))


def _all(store: ListingStore, params: dict[str, str]) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    while True:
        page = store.search({**params, "Offset": str(len(out)), "Limit": "50"})
        out += page["listings"]
        if len(out) >= page["total"]:
            return out


def test_unit_number_filter_matches_the_written_unit_case_insensitively(
    store: ListingStore,
) -> None:
    closed = {"Status": "Closed"}  # most of a multi-year market
    units = [r["UnitNumber"] for r in _all(store, {"Subtypes": "Condominium", **closed})]
    penthouse = next(u for u in units if u and u.startswith("PH"))
    flat = next(u for u in units if u and u.isdigit())
    for unit in (penthouse, flat):
        found = _all(store, {"UnitNumber": unit.lower(), **closed})
        assert found and all(r["UnitNumber"] == unit for r in found)
    assert store.search({"UnitNumber": "0" + flat})["total"] == 0
    assert store.search({"UnitNumber": penthouse.replace("PH", "PH0")})["total"] == 0


def test_street_number_filter_matches_the_written_number(store: ListingStore) -> None:
    number = store.search({"Limit": "1"})["listings"][0]["StreetNumber"]
    found = _all(store, {"StreetNumber": number})
    assert found and all(r["StreetNumber"] == number for r in found)
    assert all(r["UnparsedAddress"].startswith(number + " ") for r in found)
    assert store.search({"StreetNumber": "0" + number})["total"] == 0
