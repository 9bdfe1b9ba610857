"""The cache key of a query is the one older releases wrote: today's code, asked the query
tests/data/cache-0.8 was made with (tests/data/cache-0.8.md), computes the key of that fixture's
listings entry, so a cache written before any change to how a query travels still hits; and a
query written two ways (a number as a number or as text, Subtypes in any order) is one entry.

The key is read from the fixture's directory (``scope=key-...``), never written here."""

from __future__ import annotations

from pathlib import Path

import realtyframes as rf
from cache_08 import FIXTURE, HOST, OPTIONS, ToSandbox


def fixture_keys(resource: str) -> set[str]:
    """The keys of the fixture's entries of ``resource``, from their directories."""
    found = FIXTURE.glob(f"{resource}/account=*/scope=key-*")
    return {path.name.removeprefix("scope=key-") for path in found}


def test_the_key_of_a_listings_load_is_the_08_caches(start_sandbox, tmp_path: Path) -> None:
    (old_key,) = fixture_keys("listings")  # listings(City="Miami", max_results=15, details=True)
    sandbox = start_sandbox(**OPTIONS)
    with rf.Client(
        HOST, cache_dir=tmp_path / "cache", progress=False, transport=ToSandbox(sandbox.url)
    ) as client:
        client.listings(City="Miami", max_results=15, details=True)
        first = client.last_load
        # the same query given in another order and with an option spelt out: the same key
        client.listings(details=True, max_results=15, City="Miami", refresh=True)
        again = client.last_load
    assert first is not None and again is not None
    assert first.key == old_key
    assert again.key == old_key
    assert first.requests > 0 and not first.from_cache  # computed by a load, not read back


def test_one_query_written_two_ways_is_one_entry(sandbox_url: str, tmp_path: Path) -> None:
    with rf.Client(sandbox_url, cache_dir=tmp_path / "cache", progress=False) as client:
        client.listings(
            City="Miami",
            MinListPrice=300000,
            Subtypes=["Condominium", "Single Family Residence"],
            max_results=5,
        )
        first = client.last_load
        client.listings(
            City="Miami",
            MinListPrice="300000",
            Subtypes=["Single Family Residence", "Condominium"],
            max_results=5,
        )
        second = client.last_load
    assert first is not None and second is not None
    assert not first.from_cache and first.requests > 0
    assert second.from_cache and second.requests == 0
    assert second.key == first.key
