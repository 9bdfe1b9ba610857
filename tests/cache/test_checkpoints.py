"""The checkpoints of the cache (#28, in the state database since #33): what survives a writer
killed with SIGKILL, what discards a checkpoint, and what it never holds."""

from __future__ import annotations

import logging
import os
import stat
import subprocess
import sys
import textwrap
from datetime import timedelta
from pathlib import Path

import pytest

from realtyframes.cache import CHECKPOINT_MAX_AGE, Checkpoint, ParquetCache, state_file

SCOPE = {"resource": "listings", "operation": "listings", "key": "k1", "params": {"api_key": "s3"}}

_KILLED = """
import os, signal, sys
from realtyframes.cache import ParquetCache
SCOPE = {"resource": "listings", "operation": "listings", "key": "k1", "params": {"api_key": "s3"}}
cp = ParquetCache(sys.argv[1]).checkpoint("listings", "k1", SCOPE)
cp.put("/v1/listings?Offset=0", b'{"total": 120}')
cp.note("chunk", {"chunk": 100, "chunk_refused": 200})
cp.put("/v1/listings?Offset=50", b'{"total": 120, "more": 1}')
cp.flush()  # both committed: what the writer thread holds is what a kill loses
for n in range(2, 2 + int(sys.argv[2])):
    cp.put(f"/v1/listings?Offset={n * 50}", b'{"total": 120, "n": %d}' % n)
os.kill(os.getpid(), signal.SIGKILL)  # no close, no exit handler
"""


def test_saved_answers_survive_a_writer_killed_with_sigkill(tmp_path: Path):
    cache = ParquetCache(tmp_path)
    first = cache.checkpoint("listings", "k1", SCOPE)
    assert first.resumed_from is None and cache.checkpoints() == []  # nothing before a put
    child = subprocess.run([sys.executable, "-c", textwrap.dedent(_KILLED), str(tmp_path), "0"])
    assert child.returncode == -9
    (saved,) = cache.checkpoints()
    assert (saved.name, saved.answers) == ("listings.k1", 2)

    again = cache.checkpoint("listings", "k1", SCOPE)
    assert again.resumed_from is not None
    assert again.get("/v1/listings?Offset=0") == b'{"total": 120}'
    assert again.get("/v1/listings?Offset=50") == b'{"total": 120, "more": 1}'
    assert again.get("/v1/listings?Offset=100") is None  # never saved: fetched again
    assert again.has("/v1/listings?Offset=50") and not again.has("/v1/listings?Offset=100")
    assert again.noted("chunk") == {"chunk": 100, "chunk_refused": 200}
    assert again.reused == 2
    again.put("/v1/listings?Offset=100", b'{"total": 120, "last": 2}')
    again.close()
    with cache.checkpoint("listings", "k1", SCOPE) as third:
        assert third.get("/v1/listings?Offset=100") == b'{"total": 120, "last": 2}'
    third.done()
    assert cache.checkpoints() == []


def test_a_kill_loses_at_most_the_answers_the_writer_holds(tmp_path: Path):
    """Answers are committed in batches by the checkpoint's writer thread (#33): a SIGKILL
    loses at most ``Checkpoint.WRITE_BATCH`` of those handed to ``put``."""
    more = 200
    child = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_KILLED), str(tmp_path), str(more)]
    )
    assert child.returncode == -9
    (saved,) = ParquetCache(tmp_path).checkpoints()
    assert 2 + more - Checkpoint.WRITE_BATCH <= saved.answers <= 2 + more
    with ParquetCache(tmp_path).checkpoint("listings", "k1", SCOPE) as again:
        kept = [n for n in range(2 + more) if again.has(f"/v1/listings?Offset={n * 50}")]
    assert kept == list(range(saved.answers))  # committed in the order handed over


def test_a_stored_load_gives_its_checkpoints_space_back(tmp_path: Path):
    cache = ParquetCache(tmp_path)
    with cache.checkpoint("listings", "k1", SCOPE) as cp:
        for n in range(40):
            cp.put(f"/v1/listings?Offset={n * 50}", os.urandom(50_000))
    assert cache.checkpoints()[0].size == 40 * 50_000
    cp.done()  # the rows are gone at once; the file's pages are given back by a thread
    cp.close()  # which closing waits for
    size = sum(p.stat().st_size for p in state_file(tmp_path).parent.glob("state.sqlite3*"))
    assert size < 200_000  # not the 2 MB the answers took


def test_a_checkpoint_of_notes_only_is_not_a_resume(tmp_path: Path):
    cache = ParquetCache(tmp_path)
    with cache.checkpoint("listings", "k1", SCOPE) as cp:
        cp.note("identity", {"seed": 7})  # free-form metadata, kept with the checkpoint
    with cache.checkpoint("listings", "k1", SCOPE) as again:
        assert again.resumed_from is None and again.noted("identity") == {"seed": 7}
    with pytest.raises(TypeError):
        again.note("bad", object())  # not JSON: refused at once, nothing written


def test_another_scope_or_old_age_discards_with_a_log_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    caplog.set_level(logging.INFO, logger="realtyframes.cache")
    cache = ParquetCache(tmp_path)
    cp = cache.checkpoint("market", "k2", {"params": {"City": "Miami"}, "history_since": None})
    cp.put("page", b"body")
    cp.close()
    other = cache.checkpoint("market", "k2", {"params": {"City": "Miami"}, "history_since": "x"})
    assert other.get("page") is None and cache.checkpoints() == []
    assert "another scope" in caplog.text

    assert timedelta(hours=24) == CHECKPOINT_MAX_AGE  # docs/cache.md
    cp = cache.checkpoint("market", "k2", {"params": {}})
    cp.put("page", b"body")
    cp.close()
    (saved,) = cache.checkpoints()
    assert saved.answers == 1 and saved.size == 4 and saved.updated >= saved.started
    with cache.checkpoint("market", "k2", {"params": {}}) as kept:  # younger than the limit
        assert kept.get("page") == b"body"
    none = ParquetCache(tmp_path, checkpoint_max_age=timedelta(0))  # every one is older
    assert none.checkpoints() == []  # opening the cache removed it
    assert "more than 0:00:00" in caplog.text
    with pytest.raises(ValueError, match="checkpoint_max_age"):
        ParquetCache(tmp_path, checkpoint_max_age=3600)  # type: ignore[arg-type]


def test_a_checkpoint_is_private_and_holds_no_names_or_secrets(tmp_path: Path):
    previous = os.umask(0)  # the most permissive umask: the modes are the cache's own
    try:
        cache = ParquetCache(tmp_path)
        cp = cache.checkpoint("contacts", "k3", SCOPE)
        cp.put("/v1/contacts?Offset=0&token=abc123", b'{"contacts": [{"email": "a@b.c"}]}')
        cp.close()
    finally:
        os.umask(previous)
    assert [c.name for c in cache.checkpoints("contacts")] == ["contacts.k3"]
    path = state_file(tmp_path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    text = b"".join(p.read_bytes() for p in path.parent.glob("state.sqlite3*"))
    assert b"a@b.c" in text  # the answer is there (so the checks below look at the right bytes)
    assert b"abc123" not in text and b"Offset" not in text  # names are digests
    assert b"s3" not in text and b"<redacted>" in text  # credential-like params redacted


def test_clear_removes_checkpoints_of_a_resource_or_all(tmp_path: Path):
    cache = ParquetCache(tmp_path)
    for resource, key in (("listings", "k1"), ("listings", "k2"), ("market", "k1")):
        cp = cache.checkpoint(resource, key, {"key": key})
        cp.put("p", b"b")
        cp.close()
    assert cache.clear_checkpoints("listings", keys={"k2"}) == 1
    assert len(cache.checkpoints()) == 2
    assert cache.clear("market") == 0  # no entry, but its checkpoint goes
    assert [c.name for c in cache.checkpoints()] == ["listings.k1"]
    cache.clear()
    assert cache.checkpoints() == []


_DONE_THEN_KILLED = """
import os, signal, sys
from realtyframes.cache import ParquetCache
cp = ParquetCache(sys.argv[1]).checkpoint("listings", "k1", {"key": "k1"})
for n in range(40):
    cp.put(f"/v1/listings?Offset={n * 50}", os.urandom(50_000))
cp.flush()
if sys.argv[2] == "before":  # killed before the thread that deletes the answers could run
    import threading
    threading.Thread.start = lambda self: None
cp.done()  # the load is stored; its answers are deleted by a thread
os.kill(os.getpid(), signal.SIGKILL)
"""


def _state_size(root: Path) -> int:
    return sum(p.stat().st_size for p in state_file(root).parent.glob("state.sqlite3*"))


def test_a_removed_checkpoint_is_gone_before_its_answers_are_deleted(tmp_path: Path):
    """``done`` removes the checkpoint at once and leaves deleting its answers to a thread
    (#33: off the load's path): a new load of the same key starts afresh, and never mixes the
    removed checkpoint's answers into its own, whenever that thread runs."""
    cache = ParquetCache(tmp_path)
    old = cache.checkpoint("listings", "k1", SCOPE)
    for n in range(3):
        old.put(f"/v1/listings?Offset={n * 50}", b'{"old": %d}' % n)
    old.flush()
    old.done()
    assert cache.checkpoints() == []  # gone when done returns
    new = cache.checkpoint("listings", "k1", SCOPE)
    assert new.resumed_from is None and not new.has("/v1/listings?Offset=0")
    new.put("/v1/listings?Offset=50", b'{"new": 1}')
    new.close()
    old.close()  # waits for the old one's thread
    (saved,) = cache.checkpoints()
    assert saved.answers == 1  # its own answer only
    with cache.checkpoint("listings", "k1", SCOPE) as again:
        assert again.get("/v1/listings?Offset=50") == b'{"new": 1}'
        assert again.get("/v1/listings?Offset=0") is None and again.reused == 1


@pytest.mark.parametrize("killed", ["before", "any time"])
def test_answers_a_killed_process_left_are_deleted_by_the_next_opening(tmp_path: Path, killed: str):
    child = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_DONE_THEN_KILLED), str(tmp_path), killed]
    )
    assert child.returncode == -9
    if killed == "before":
        assert _state_size(tmp_path) > 2_000_000  # the answers are still in the file
    cache = ParquetCache(tmp_path)  # deletes what the killed thread had not
    assert cache.checkpoints() == []
    assert _state_size(tmp_path) < 200_000  # not the 2 MB the answers took
    with cache.checkpoint("listings", "k1", {"key": "k1"}) as again:
        assert again.resumed_from is None and not again.has("/v1/listings?Offset=0")
