"""A cache written by realtyframes before generations in the state database (tests/data/cache-0.8,
made by main at 1901803 with the script in tests/data/cache-0.8.md) opens with today's code: its
entries become generations named by ``.rf/state.sqlite3``, their sync state moves from the
footers into ``sync_state``, every frame reads as it was, and its market continues incrementally."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import httpx
import pandas as pd
import pyarrow.parquet as pq
import pytest

import realtyframes as rf
from cache_08 import FIXTURE as OLD
from cache_08 import HOST, OPTIONS, ToSandbox
from realtyframes.cache import ParquetCache, read_runs, state_file

MARKET_KEY = "1107fc498d243861fecbf9cb5d27d98d"
LISTINGS_KEY = "e83fabcec9effd3ea0ac530a206965f4"


@pytest.fixture
def old_cache(tmp_path: Path) -> Path:
    root = tmp_path / "cache"
    shutil.copytree(OLD, root, copy_function=shutil.copy)  # mtimes now: the checkpoint is fresh
    for path in root.rglob("*"):
        os.chmod(path, 0o700 if path.is_dir() else 0o600)  # as written (git keeps no modes)
    return root


def footer_frames(root: Path, resource: str, key: str) -> dict[str, pd.DataFrame]:
    """The frames of an entry's files as the old code wrote them, read by pyarrow alone."""
    found = {}
    for path in root.glob(f"{resource}*/account=*/scope=key-{key}/part-0.parquet"):
        name = path.parents[2].name.partition(".")[2] or "main"
        found[name] = pq.read_table(path).to_pandas()
    return found


def test_a_08_cache_opens_reads_equal_frames_and_keeps_its_state(old_cache: Path) -> None:
    before = {
        key: footer_frames(old_cache, res, key)
        for res, key in (("market", MARKET_KEY), ("listings", LISTINGS_KEY))
    }
    old_state = pq.read_schema(next(old_cache.glob(f"market/*/scope=key-{MARKET_KEY}/*.parquet")))
    cache = ParquetCache(old_cache)
    with sqlite3.connect(state_file(old_cache)) as db:
        assert (
            db.execute("PRAGMA user_version").fetchone()[0] == 3
        )  # v2: generations; v3: RESO budgets

    for resource, key in (("market", MARKET_KEY), ("listings", LISTINGS_KEY)):
        entry = cache.read(resource, key)
        assert entry is not None
        frames = {"main": entry.frame, **entry.extra}
        assert set(frames) == set(before[key])
        for name, frame in frames.items():
            pd.testing.assert_frame_equal(frame, before[key][name], check_categorical=False)
    assert set(before[LISTINGS_KEY]) == {"main", "media", "quarantine"}
    assert len(before[LISTINGS_KEY]["media"]) > 0

    # the sync state: in the database now, as the footer had it
    import json

    footer_sync = json.loads(old_state.metadata[b"realtyframes"])["sync"]
    state = cache.sync_state("market", MARKET_KEY)
    assert state == footer_sync and state["syncs"] == 2
    with sqlite3.connect(state_file(old_cache)) as db:
        marks = db.execute("SELECT change_watermark FROM sync_state WHERE key = ?", (MARKET_KEY,))
        assert marks.fetchone()[0] == footer_sync["change_watermark"]
    listed = cache.list().set_index("key")
    assert listed.loc[MARKET_KEY, "rows"] == len(before[MARKET_KEY]["main"])

    # what the 0.8 database held already: runs, the watch, the checkpoint
    assert read_runs(old_cache)["kind"].tolist() == ["watch", "load", "sync", "sync"]
    assert rf.Watches(cache_dir=old_cache).get("surfside").scope["City"] == "Surfside"
    assert [c.key for c in cache.checkpoints()] == ["0123456789abcdef0123456789abcdef"]
    # the dataset outside engines read: each entry once, unchanged
    assert len(pd.read_parquet(old_cache / "market")) == len(before[MARKET_KEY]["main"])


@pytest.mark.slow
def test_a_migrated_market_continues_incrementally(
    old_cache: Path, start_sandbox, tmp_path: Path
) -> None:
    sandbox = start_sandbox(**OPTIONS)
    for days in (7, 7):  # to the fixture's clock, then a week later
        httpx.post(f"{sandbox.url}/_sandbox/clock", json={"advance_days": days}).raise_for_status()
    with rf.Client(
        HOST, cache_dir=old_cache, progress=False, transport=ToSandbox(sandbox.url)
    ) as client:
        synced = client.sync_listings(City="Miami")
        state = client.sync_state(City="Miami")
        history = client.listing_history(City="Miami")
    assert state is not None and (state["mode"], state["syncs"]) == ("incremental", 3)
    with rf.Client(
        HOST, cache_dir=tmp_path / "fresh", progress=False, transport=ToSandbox(sandbox.url)
    ) as fresh_client:
        fresh = fresh_client.sync_listings(City="Miami")
    columns = ["ListingId", "StandardStatus", "ListPrice", "ModificationTimestamp"]
    ours = synced[columns].sort_values("ListingId").reset_index(drop=True)
    theirs = fresh[columns].sort_values("ListingId").reset_index(drop=True)
    pd.testing.assert_frame_equal(ours, theirs)
    old_history = footer_frames(OLD, "market", MARKET_KEY)["history"]
    assert len(history) >= len(old_history)  # the old changes kept, the week's added
