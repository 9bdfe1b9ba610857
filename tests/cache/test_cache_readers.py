"""Readers never see a hole: while writers replace an entry, every read returns a complete
generation of it (the previous one, or the new one), never an empty or partial frame.

First a reader run at each step of a write (the race forced, deterministically), and entries left
between two generations by a writer of an older version or a writer that died. Then processes,
not threads: writers run ``client.sync_listings`` and ``client.listings(refresh=True)``
against one sandbox (its clock moved between rounds, so every round really rewrites the entries)
while readers call ``client.listing_history`` and ``client.listings`` in a loop. The complete
generations are the frames the writers stored (each generation's files, kept on disk for the
grace period, ``docs/cache.md``); a read whose row counts no complete generation had is a partial
frame.

The races are forced through public seams only: the standard library's ``os.replace`` (each
rename into the dataset), ``sqlite3.connect`` (the writer's transaction, after its files are
written) and ``time.time`` (the grace period), and pyarrow's ``OSFile`` (a reader opening the
files of the generation it named).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sqlite3
import subprocess
import sys
import textwrap
import time
import warnings
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import realtyframes as rf
from realtyframes.cache import GRACE, META_KEY, CacheWarning, Entry, ParquetCache

# -- one entry, a reader at each step of a write ------------------------------------------------------


def generation(n: int) -> dict[str, pd.DataFrame]:
    """The frames of one write: ``n`` rows, ``2n`` rows of history, ``n // 2`` of media."""
    return {
        "main": pd.DataFrame({"ListingId": pd.array([f"L{i}" for i in range(n)], dtype="str")}),
        "history": pd.DataFrame({"ListPrice": np.arange(2 * n, dtype="float64")}),
        "media": pd.DataFrame({"Order": pd.array(np.arange(n // 2), dtype="Int64")}),
    }


def write(cache: ParquetCache, n: int) -> Entry:
    frames = generation(n)
    extras = {"history": frames["history"], "media": frames["media"]}
    return cache.write("market", "k", frames["main"], {"host": "h"}, extra_frames=extras)


def counts(entry: Entry | None) -> tuple[int, int, int] | None:
    """Rows of the main frame, its history and media (None: a miss)."""
    if entry is None:
        return None
    return len(entry.frame), len(entry.extra["history"]), len(entry.extra["media"])


def generation_of(path: Path) -> str:
    return json.loads(pq.read_schema(path).metadata[META_KEY])["generation"]


READ_IN_ANOTHER_PROCESS = textwrap.dedent(
    """
    import json, sys
    from realtyframes.cache import ParquetCache
    entry = ParquetCache(sys.argv[1]).read("market", "k")
    print(json.dumps(None if entry is None else
                     [len(entry.frame), len(entry.extra["history"]), len(entry.extra["media"])]))
    """
)


def test_a_reader_at_each_step_of_a_write_gets_one_whole_generation(tmp_path, monkeypatch):
    """The writer is stopped at each rename into the dataset (every file of the entry, companions
    first; inside the transaction that makes the new generation current); a reader of this
    process, and at the main file's rename one of another process, must get the previous
    generation, whole; the dataset folders hold whole files only."""
    root = tmp_path / "cache"
    cache = ParquetCache(root)
    write(cache, 10)
    main = root / "market" / "account=unset" / "scope=key-k" / "part-0.parquet"
    history = root / "market.history" / "account=unset" / "scope=key-k" / "part-0.parquet"
    real_replace = os.replace
    seen: list[tuple[str, tuple[int, int, int] | None]] = []

    def replace(src: Any, dst: Any) -> None:
        if Path(dst).name == "part-0.parquet":  # a file of the entry is about to be renamed
            seen.append((Path(dst).parent.parent.parent.name, counts(cache.read("market", "k"))))
            if Path(dst) == main:  # the companions are the new generation's, the main is not
                assert generation_of(history) != generation_of(main)
                other = subprocess.run(
                    [sys.executable, "-c", READ_IN_ANOTHER_PROCESS, str(root)],
                    capture_output=True, text=True, check=True, timeout=120,
                )  # fmt: skip
                got = json.loads(other.stdout)
                seen.append(("other process", None if got is None else tuple(got)))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    write(cache, 20)
    monkeypatch.undo()
    assert [folder for folder, _got in seen] == [
        "market.history", "market.media", "market", "other process"
    ]  # fmt: skip
    assert all(got == (10, 20, 5) for _folder, got in seen), seen  # the previous one, whole
    assert counts(cache.read("market", "k")) == (20, 40, 10)
    assert not (root / ".rf" / "previous").exists()  # no copies kept aside: generations


@pytest.mark.parametrize("grace", [timedelta(minutes=10), timedelta(0)])
def test_a_reader_that_named_a_generation_reads_it_during_the_grace_period(
    tmp_path, monkeypatch, grace
):
    """The reader has read which generation is current; two writes complete before it opens the
    files. Within the grace period the replaced generation is still there: it reads it, whole.
    With no grace it is gone: the reader looks again and reads the newest, whole (no wait)."""
    root = tmp_path / "cache"
    cache = ParquetCache(root, grace=grace)
    write(cache, 10)
    real_open, reads = pa.OSFile, []

    def open_file(path: str, *args: Any, **kw: Any) -> Any:
        if Path(path).name == "main.parquet":  # a read of a generation it named opens its files
            reads.append(Path(path).parent.name)
            if len(reads) == 1:  # named, not opened yet: two writers complete their writes
                write(ParquetCache(root, grace=grace), 20)
                write(ParquetCache(root, grace=grace), 30)
        return real_open(path, *args, **kw)

    monkeypatch.setattr(pa, "OSFile", open_file)
    got = counts(cache.read("market", "k"))
    monkeypatch.undo()
    if grace:
        assert got == (10, 20, 5) and len(reads) == 1
        assert len(list((root / ".rf" / "generations" / "market" / "k").iterdir())) == 3
    else:
        assert got == (30, 60, 15) and len(reads) == 2  # looked again at once
        assert len(list((root / ".rf" / "generations" / "market" / "k").iterdir())) == 1


def test_replaced_generations_are_removed_after_the_grace_period(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    cache = ParquetCache(root)
    write(cache, 10)
    first = cache.generation("market", "k")
    write(cache, 20)
    kept = root / ".rf" / "generations" / "market" / "k"
    assert sorted(p.name for p in kept.iterdir()) == sorted(
        [first, cache.generation("market", "k")]
    )
    later = time.time() + GRACE.total_seconds() + 1
    monkeypatch.setattr(time, "time", lambda: later)  # the clock, past the grace period
    write(cache, 30)
    assert first not in {p.name for p in kept.iterdir()}  # past its grace: removed
    assert len(list(kept.iterdir())) == 2  # the one replaced now stays for its grace period


@pytest.mark.parametrize("name", ["lock_timeout", "read_wait"])
def test_the_parameters_that_have_no_effect_are_deprecated(tmp_path, name):
    with pytest.warns(DeprecationWarning, match=f"`{name}` has no effect") as seen:
        cache = ParquetCache(tmp_path, **{name: 30.0})
    assert len(seen) == 1 and seen[0].filename == __file__  # the caller's line
    written = write(cache, 3)  # and the cache works as without it
    assert counts(cache.read("market", "k")) == counts(written)


def test_a_writer_that_dies_before_its_commit_leaves_the_previous_generation(tmp_path, monkeypatch):
    """Killed after its files are written (before the transaction), or between its renames
    into the dataset (inside it): the previous generation stays current and whole, the new
    one's files are removed, and the next write of the key completes."""
    root = tmp_path / "cache"
    cache = ParquetCache(root)
    write(cache, 10)

    def killed(*_args: Any, **_kw: Any) -> None:
        raise KeyboardInterrupt  # the writer's next step after its files: opening the state

    real_replace = os.replace

    def replace(src: Any, dst: Any) -> None:
        if Path(dst).parent.parent.parent.name == "market":
            raise KeyboardInterrupt  # killed before the main file
        real_replace(src, dst)

    for target, name, fake in ((sqlite3, "connect", killed), (os, "replace", replace)):
        with pytest.raises(KeyboardInterrupt), monkeypatch.context() as m:
            m.setattr(target, name, fake)
            write(cache, 20)
        assert counts(cache.read("market", "k")) == (10, 20, 5)  # the previous one, whole
        assert len(list((root / ".rf" / "generations" / "market" / "k").iterdir())) == 1
    write(cache, 30)
    assert counts(cache.read("market", "k")) == (30, 60, 15)
    dataset = pd.read_parquet(root / "market.history")
    assert len(dataset) == 60  # the dataset: the newest generation's files in place
    assert cache.clear("market") == 1
    assert not list(root.rglob("*.parquet"))


# -- every cached load of the client ------------------------------------------------------------------


def _listing(client: rf.Client, refresh: bool) -> pd.DataFrame:
    return client.listing(client.listings(City="Miami").ListingId.iloc[0], refresh=refresh)


def _changes(client: rf.Client, refresh: bool) -> pd.DataFrame:
    ids = client.listings(City="Miami").ListingId
    return client.listing_changes(ids, "2026-01-01", refresh=refresh)


LOADS: dict[str, Callable[[rf.Client, bool], pd.DataFrame]] = {
    "listings": lambda client, refresh: client.listings(City="Miami", refresh=refresh),
    "listing": _listing,
    "changes": _changes,
    "contacts": lambda client, refresh: client.contacts(refresh=refresh),
    "analytics": lambda client, refresh: client.analytics("7d", refresh=refresh).overview,
}


@pytest.mark.parametrize("resource", sorted(LOADS))
def test_every_cached_load_is_answered_while_its_entry_is_rewritten(
    sandbox_url, tmp_path, monkeypatch, resource
):
    """A client rewrites the entry (``refresh=True``); when its new generation is written but
    not yet current, another client's load is a cache hit, equal to the generation before."""
    load = LOADS[resource]
    writer = rf.Client(sandbox_url, cache_dir=tmp_path, progress=False)
    reader = rf.Client(sandbox_url, cache_dir=tmp_path, progress=False)
    before = load(writer, False)
    answers: list[tuple[bool, pd.DataFrame]] = []
    generations = tmp_path / ".rf" / "generations" / resource
    written = set(generations.glob("*/*"))
    real_connect, busy = sqlite3.connect, []

    def connect(*args: Any, **kw: Any) -> Any:
        # the writer opens the state to make its generation current: once its new generation's
        # files are all written (a new folder), the other client loads first
        if not busy and not answers and set(generations.glob("*/*")) - written:
            busy.append(True)
            got = load(reader, False)
            assert reader.last_load is not None
            answers.append((reader.last_load.from_cache, got))
            busy.clear()
        return real_connect(*args, **kw)

    monkeypatch.setattr(sqlite3, "connect", connect)
    load(writer, True)
    monkeypatch.undo()
    assert len(answers) == 1 and answers[0][0], "the reader fetched: the cache had a hole"
    pd.testing.assert_frame_equal(answers[0][1], before)
    writer.close()
    reader.close()


# -- processes: writers and readers of a synced market and of listings ----------------------------


SCOPE: dict[str, Any] = {"City": "Miami"}
LISTINGS: dict[str, Any] = {"City": "Miami", "Status": "Active"}


def _stored(cache: Path, resource: str, part: str) -> set[int]:
    """Rows of ``part`` in every generation of ``resource`` written (each generation's files stay
    on disk for the grace period, ten minutes: longer than these tests)."""
    folders = (cache / ".rf" / "generations" / resource).glob("*/*")
    return {pq.read_metadata(folder / f"{part}.parquet").num_rows for folder in folders}


def _write_rounds(url: str, cache: str, tag: int, rounds: int, barrier: Any) -> None:
    """Rounds of a writer; writer 0 moves the clock before each and syncs incrementally (so each
    round stores a new history generation, whichever writer wins the scope's lock next: a
    ``refresh=True`` sync keeps the history it has), then the writers of a round start together."""
    with rf.Client(url, cache_dir=cache, progress=False) as client, httpx.Client() as http:
        for r in range(rounds):
            if tag == 0:
                http.post(f"{url}/_sandbox/clock", json={"advance_days": 7}).raise_for_status()
                client.sync_listings(**SCOPE)
            if barrier is not None:
                barrier.wait(timeout=60)
            client.sync_listings(refresh=(r + tag) % 2 == 1, **SCOPE)
            client.listings(refresh=True, **LISTINGS)


def _writer(url: str, cache: str, tag: int, rounds: int, barrier: Any) -> None:
    warnings.simplefilter("error", CacheWarning)  # a file found unreadable fails the test
    _write_rounds(url, cache, tag, rounds, barrier)


def _reader(url: str, cache: str, log: str, ready: Any, stop: Any) -> None:
    warnings.simplefilter("error", CacheWarning)  # a file found unreadable fails the test
    reads = []
    with rf.Client(url, cache_dir=cache, progress=False) as client:
        while not stop.is_set():
            history = client.listing_history(**SCOPE)
            listings = client.listings(**LISTINGS)
            info = client.last_load
            assert info is not None
            reads.append([len(history), len(listings), info.from_cache])
            ready.set()
    Path(log).write_text(json.dumps(reads))


def _start(target: Callable[..., None], *args: Any) -> multiprocessing.process.BaseProcess:
    process = multiprocessing.get_context("spawn").Process(target=target, args=args)
    process.start()
    return process


def _join(processes: list[multiprocessing.process.BaseProcess], what: str) -> None:
    for process in processes:
        process.join(timeout=120)
        assert process.exitcode == 0, f"a {what} failed"


def run_writers_and_readers(
    url: str,
    root: Path,
    *,
    writers: int,
    readers: int,
    rounds: int,
) -> tuple[dict[str, set[int]], list[list[Any]]]:
    """Complete generations' row counts (history and listings) and every read (history rows,
    listings rows, from cache). ``writers=0``: this process writes (one writer)."""
    cache, logs = root / "cache", root / "logs"
    logs.mkdir()
    with rf.Client(url, cache_dir=cache, progress=False) as client:  # a complete entry first
        client.sync_listings(**SCOPE)
        history = client.listing_history(**SCOPE)
        listings = client.listings(**LISTINGS)
    assert len(history) and len(listings)
    ctx = multiprocessing.get_context("spawn")
    stop, ready = ctx.Event(), [ctx.Event() for _ in range(readers)]
    procs = [
        _start(_reader, url, str(cache), str(logs / f"reads-{i}.json"), ready[i], stop)
        for i in range(readers)
    ]
    try:
        for event in ready:  # every reader reads before the first write
            assert event.wait(timeout=120), "a reader did not start"
        if writers:
            barrier = ctx.Barrier(writers)
            procs += [_start(_writer, url, str(cache), i, rounds, barrier) for i in range(writers)]
            _join(procs[readers:], "writer")
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("error", CacheWarning)
                _write_rounds(url, str(cache), 0, rounds, None)
        stop.set()
        _join(procs[:readers], "reader")
    finally:
        for process in procs:
            if process.is_alive():
                process.kill()
                process.join()
    written = {"history": _stored(cache, "market", "history"),
               "listings": _stored(cache, "listings", "main")}  # fmt: skip
    assert {len(history)} <= written["history"] and {len(listings)} <= written["listings"]
    reads = [read for log in logs.glob("reads-*.json") for read in json.loads(log.read_text())]
    return written, reads


def assert_no_hole(written: dict[str, set[int]], reads: list[list[Any]]) -> None:
    assert len(written["history"]) >= 2  # the clock moved: the writers stored new generations
    holes = [read for read in reads if read[0] not in written["history"]]
    misses = [read for read in reads if read[1] not in written["listings"] or not read[2]]
    assert not holes, f"{len(holes)} of {len(reads)} history reads empty or partial: {holes[:5]}"
    assert not misses, f"{len(misses)} of {len(reads)} listings reads not a cached generation"


def test_readers_in_other_processes_never_see_a_hole(start_sandbox, tmp_path):
    sandbox = start_sandbox(listings=400)
    written, reads = run_writers_and_readers(sandbox.url, tmp_path, writers=0, readers=2, rounds=4)
    assert_no_hole(written, reads)


@pytest.mark.slow
def test_three_writers_and_three_readers_never_see_a_hole(start_sandbox, tmp_path):
    sandbox = start_sandbox(listings=600)
    written, reads = run_writers_and_readers(sandbox.url, tmp_path, writers=3, readers=3, rounds=3)
    assert_no_hole(written, reads)
