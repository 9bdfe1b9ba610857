"""A cache written by realtyframes before the state database (tests/data/cache-0.7, made by the
code at main with the script in tests/data/cache-0.7.md) opens with today's code: its run
records, checkpoint and watches move into ``.rf/state.sqlite3`` once, and its synced market and
sync state read as they were."""

from __future__ import annotations

import json
import logging
import shutil
import sqlite3
import stat
import zlib
from pathlib import Path

import pandas as pd
import pytest

import realtyframes as rf
from realtyframes.cache import ParquetCache, append_run, read_runs, state_file

OLD = Path(__file__).parents[1] / "data" / "cache-0.7"
MARKET_KEY = "09ecc8bef686a1aa57877fc2d949e095"
CHECKPOINT_KEY = "0123456789abcdef0123456789abcdef"


@pytest.fixture
def old_cache(tmp_path: Path) -> Path:
    root = tmp_path / "cache"
    shutil.copytree(OLD, root, copy_function=shutil.copy)  # mtimes now: the journal is fresh
    return root


def test_an_old_cache_is_migrated_on_first_open(
    old_cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="realtyframes.cache")
    assert not state_file(old_cache).exists()
    cache = ParquetCache(old_cache)

    # the run history: both records, whole, and the Parquet files gone (now rows)
    runs = read_runs(old_cache)
    assert runs["kind"].tolist() == ["watch", "sync"]
    watch_run = runs.iloc[0]
    assert (watch_run.resource, watch_run.requests, watch_run.rows, watch_run.new) == (
        "surfside",
        3,
        12,
        1,
    )
    assert watch_run.started == pd.Timestamp("2026-06-01 09:00", tz="UTC")
    assert runs.iloc[1].resource == "market" and runs.iloc[1].rows == 2
    assert not list((old_cache / "runs").glob("*.parquet"))
    assert "2 run records moved" in caplog.text
    assert stat.S_IMODE(state_file(old_cache).stat().st_mode) == 0o600

    # the checkpoint of the interrupted load: resumed from, answer and note intact
    (saved,) = cache.checkpoints()
    assert (saved.resource, saved.key, saved.answers) == ("listings", CHECKPOINT_KEY, 1)
    scope = {"params": {"City": "Doral"}, "host": "h"}
    with cache.checkpoint("listings", CHECKPOINT_KEY, scope) as cp:
        assert cp.resumed_from is not None
        body = cp.get("/v1/listings?City=Doral&Offset=0")
        assert body == b'{"total": 1, "value": [{"ListingId": "L1"}]}'
        assert cp.noted("chunk") == {"chunk": 100}
    assert not list((old_cache / ".rf" / "staging" / "checkpoints").glob("*.journal"))

    # the watches: the definition, its notification (masked when shown)
    watches = rf.Watches(cache_dir=old_cache)
    watch = watches.get("surfside")
    assert watch.scope == {"City": "Surfside", "PropertyType": "Residential"}
    assert watch.filters == {"MaxListPrice": "2000000"}
    assert "tok-123" not in repr(watch) and len(watch.notify) == 1
    assert not (old_cache / ".watches" / "watches.json").exists()

    # the synced market and its sync state, as they were
    entry = cache.read("market", MARKET_KEY)
    assert entry is not None and len(entry.frame) == 2
    state = entry.meta["sync"]
    assert (state["syncs"], state["change_watermark"]) == (1, "2025-12-24T19:44:45Z")
    assert len(entry.extra["history"]) > 0


def test_a_second_open_migrates_nothing_again(
    old_cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    assert len(read_runs(old_cache)) == 2
    caplog.clear()
    caplog.set_level(logging.INFO, logger="realtyframes.cache")
    shutil.copy(next((OLD / "runs").glob("run.2026060*.parquet")), old_cache / "runs")
    assert len(read_runs(old_cache)) == 2  # the version is 1 now: files in runs/ are not read
    assert "moved" not in caplog.text
    rf.Watches(cache_dir=old_cache).remove("surfside")
    assert rf.Watches(cache_dir=old_cache).list().empty


def test_a_journal_alone_is_moved_in_by_the_first_look(old_cache: Path) -> None:
    """An old cache with nothing but an interrupted load's journal: the load resumes from it."""
    shutil.rmtree(old_cache / "runs")
    shutil.rmtree(old_cache / ".watches")
    cache = ParquetCache(old_cache)
    scope = {"params": {"City": "Doral"}, "host": "h"}
    with cache.checkpoint("listings", CHECKPOINT_KEY, scope) as cp:
        assert cp.resumed_from is not None and cp.has("/v1/listings?City=Doral&Offset=0")
    assert read_runs(old_cache).empty and rf.Watches(cache_dir=old_cache).list().empty


def test_a_damaged_state_database_is_moved_aside_never_a_crash(tmp_path: Path) -> None:
    append_run(tmp_path, kind="load", resource="listings", scope={"City": "Miami"}, rows=5)
    state = state_file(tmp_path)
    state.write_bytes(b"this is not a SQLite database" * 200)
    with pytest.warns(rf.CacheWarning, match="unreadable .* moved aside"):
        runs = read_runs(tmp_path)
    assert runs.empty  # a new history: the old file is kept under .rf/corrupt
    assert len(list((tmp_path / ".rf" / "corrupt").glob("state.*.sqlite3"))) == 1
    append_run(tmp_path, kind="load", resource="listings", scope={"City": "Miami"}, rows=5)
    assert len(read_runs(tmp_path)) == 1


def test_a_journal_whose_head_has_no_scope_is_discarded_never_a_crash(
    old_cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A journal head without ``scope`` (or ``started``) cannot be resumed safely: its checkpoint
    is discarded with a log line and everything else migrates; opening the cache never fails."""
    journal = next((old_cache / ".rf" / "staging" / "checkpoints").glob("*.journal"))
    head = json.dumps({"params": {"City": "Doral"}, "started": "2026-06-01T09:00:00+00:00"})
    page = b'{"total": 1, "value": [{"ListingId": "L1"}]}'
    records = [(b"head", b"head", head.encode()), (b"page", b"1d0a2b87", page)]
    journal.write_bytes(
        b"".join(
            b"RFCK1 %s %s %d %d\n%s\n" % (kind, name, len(body), zlib.crc32(body), body)
            for kind, name, body in records
        )
    )
    caplog.set_level(logging.INFO, logger="realtyframes.cache")
    cache = ParquetCache(old_cache)
    assert cache.checkpoints() == []
    assert f"checkpoint {journal.name} discarded" in caplog.text
    assert not journal.exists()
    with sqlite3.connect(state_file(old_cache)) as db:  # none of its answers is left behind
        assert db.execute("SELECT count(*) FROM checkpoint_answers").fetchone() == (0,)
    assert len(read_runs(old_cache)) == 2 and rf.Watches(cache_dir=old_cache).get("surfside")
