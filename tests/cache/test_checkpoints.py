"""The checkpoint journal of the cache (#28): what survives a writer killed mid-record, what
discards a journal, and what it never holds."""

from __future__ import annotations

import logging
import os
import stat
import time
from datetime import timedelta
from pathlib import Path

import pytest

from realtyframes.cache import CHECKPOINT_MAX_AGE, ParquetCache

SCOPE = {"resource": "listings", "operation": "listings", "key": "k1", "params": {"api_key": "s3"}}


def test_saved_answers_come_back_and_a_torn_record_ends_the_reading(tmp_path: Path):
    cache = ParquetCache(tmp_path)
    first = cache.checkpoint("listings", "k1", SCOPE)
    assert first.resumed_from is None and cache.checkpoints() == []  # nothing before a put
    first.put("/v1/listings?Offset=0", b'{"total": 120}')
    first.put("/v1/listings?Offset=50", b'{"total": 120, "more": 1}')
    first.note("chunk", {"chunk": 100, "chunk_refused": 200})
    first.put("/v1/listings?Offset=100", b'{"total": 120, "last": 1}')
    first.close()
    (path,) = cache.checkpoints()
    data = path.read_bytes()
    path.write_bytes(data[:-7])  # the writer died in the middle of its last record

    again = cache.checkpoint("listings", "k1", SCOPE)
    assert again.resumed_from is not None
    assert again.get("/v1/listings?Offset=0") == b'{"total": 120}'
    assert again.get("/v1/listings?Offset=50") == b'{"total": 120, "more": 1}'
    assert again.get("/v1/listings?Offset=100") is None  # torn: fetched again
    assert again.noted("chunk") == {"chunk": 100, "chunk_refused": 200}
    assert again.reused == 2
    again.put("/v1/listings?Offset=100", b'{"total": 120, "last": 2}')  # appended after the tear
    again.close()
    with cache.checkpoint("listings", "k1", SCOPE) as third:
        assert third.get("/v1/listings?Offset=100") == b'{"total": 120, "last": 2}'
    third.done()
    assert cache.checkpoints() == []


def test_a_corrupt_record_ends_the_reading(tmp_path: Path):
    cache = ParquetCache(tmp_path)
    cp = cache.checkpoint("listings", "k1", SCOPE)
    cp.put("a", b"first body")
    cp.put("b", b"second body")
    cp.close()
    (path,) = cache.checkpoints()
    path.write_bytes(path.read_bytes().replace(b"second body", b"secund body"))  # crc mismatch
    with cache.checkpoint("listings", "k1", SCOPE) as again:
        assert again.get("a") == b"first body" and again.get("b") is None


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

    cp = cache.checkpoint("market", "k2", {"params": {}})
    cp.put("page", b"body")
    cp.close()
    (path,) = cache.checkpoints()
    old = time.time() - CHECKPOINT_MAX_AGE.total_seconds() - 60
    os.utime(path, (old, old))
    short = ParquetCache(tmp_path, checkpoint_max_age=timedelta(days=2))  # a longer limit keeps it
    assert short.checkpoints() == [path]
    with short.checkpoint("market", "k2", {"params": {}}) as kept:
        assert kept.get("page") == b"body"
    os.utime(path, (old, old))
    ParquetCache(tmp_path)  # opening the cache removes checkpoints older than the limit
    assert cache.checkpoints() == []
    assert "more than 1 day" in caplog.text
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
    (path,) = cache.checkpoints("contacts")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    text = path.read_bytes()
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
    assert [p.name for p in cache.checkpoints()] == ["listings.k1.journal"]
    cache.clear()
    assert cache.checkpoints() == []
