"""Writers in several processes, a writer killed mid-write, and other tools reading the cache."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from datetime import timedelta
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pyarrow.dataset as ds
import pytest

from realtyframes.cache import (
    CacheLockTimeout,
    CacheWarning,
    ParquetCache,
    file_lock,
    hold_scope,
)


def frame(n: int, tag: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "ListingId": pd.array([f"A{i}" for i in range(n)], dtype="str"),
            "ListPrice": np.full(n, float(tag)),
            "Writer": pd.array(np.full(n, tag), dtype="Int64"),
        }
    )


def files(root: Path) -> list[str]:
    """Every file under ``root``, relative, sorted."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


ENTRY = "account=unset/scope=key-{}/part-0.parquet"


def _writer(root: str, tag: int, rounds: int) -> None:
    cache = ParquetCache(root)
    for r in range(rounds):
        cache.write("listings", "shared", frame(20_000 + r, tag), {"host": "h", "writer": tag})


def _locker(lock: str, log: str, tag: int, rounds: int) -> None:
    for _ in range(rounds):
        with file_lock(Path(lock)):
            with open(log, "a") as fh:
                fh.write(f"enter {tag}\n")
                fh.flush()
            time.sleep(0.01)
            with open(log, "a") as fh:
                fh.write(f"exit {tag}\n")


def test_two_processes_writing_one_key_leave_one_valid_file(tmp_path: Path):
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), tag, 4)) for tag in (1, 2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    cache = ParquetCache(tmp_path, grace=timedelta(0))  # replaced generations go at once
    entry = cache.read("listings", "shared")
    assert entry is not None
    tag = entry.meta["writer"]
    pd.testing.assert_frame_equal(entry.frame, frame(20_003, tag))
    cache.write("listings", "other", frame(3, 3), {"host": "h"})  # a write collects them
    cache.clear(keys={"other"})
    current = cache.generation("listings", "shared")
    assert files(tmp_path) == [
        f".rf/generations/listings/shared/{current}/main.parquet",
        ".rf/state.sqlite3",
        "listings/" + ENTRY.format("shared"),
    ]


def test_the_lock_excludes_other_processes(tmp_path: Path):
    ctx = multiprocessing.get_context("spawn")
    lock, log = str(tmp_path / ".k.lock"), str(tmp_path / "log")
    procs = [ctx.Process(target=_locker, args=(lock, log, tag, 15)) for tag in (1, 2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    lines = Path(log).read_text().split()
    events = list(zip(lines[0::2], lines[1::2], strict=True))
    assert len(events) == 60
    for enter, leave in zip(events[0::2], events[1::2], strict=True):  # never interleaved
        assert enter[0] == "enter" and leave == ("exit", enter[1])


def test_lock_timeout(tmp_path: Path):
    lock = tmp_path / ".k.lock"
    code = f"from pathlib import Path; import time\nfrom realtyframes.cache import file_lock\nwith file_lock(Path({str(lock)!r})):\n    print('held', flush=True); time.sleep(30)\n"
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with (
            pytest.raises(CacheLockTimeout, match="held by another process"),
            file_lock(lock, timeout=0.2),
        ):
            pass
    finally:
        holder.kill()
        holder.communicate()  # reaps it and closes its pipe
    with file_lock(lock, timeout=5):  # the kernel released the dead holder's lock
        pass


@pytest.mark.parametrize("where", ["a/b/c/scope.lock", "scope.lock"])
def test_hold_scope_takes_only_a_job_lock(tmp_path: Path, where: str):
    """Who holds a scope is written to the state database of the cache the lock is in; a lock
    elsewhere names no cache: a clear error, and no database made three folders up."""
    root = tmp_path / "x" / "y" / "z"  # three folders up from a lock in root: tmp_path
    (root / where).parent.mkdir(parents=True, exist_ok=True)
    with (
        pytest.raises(ValueError, match=r"lock: .* is not a cache's job lock"),
        hold_scope(root / where, "City=Miami", timeout=0),
    ):
        pass
    assert not list(tmp_path.rglob("*.sqlite3"))
    lock = ParquetCache(root).job_lock("market", "k1")
    with hold_scope(lock, "City=Miami", timeout=0):
        assert ParquetCache(root).job_holder("market", "k1").pid == os.getpid()


KILLED_WRITER = textwrap.dedent(
    """
    import sys
    import numpy as np, pandas as pd
    from realtyframes.cache import ParquetCache
    n = 3_000_000
    big = pd.DataFrame({
        "ListingId": pd.array(np.char.add("B", np.arange(n).astype(str)), dtype="str"),
        "ListPrice": np.random.default_rng(0).random(n),
        "Remarks": pd.array(np.char.add("remark ", np.arange(n).astype(str)), dtype="str"),
    })
    print("ready", flush=True)
    ParquetCache(sys.argv[1]).write("listings", "k", big, {"host": "h"})
    print("finished", flush=True)
    """
)


@pytest.mark.slow
def test_sigkill_in_the_middle_of_a_write_keeps_the_previous_file(tmp_path: Path):
    cache = ParquetCache(tmp_path)
    previous = frame(1000, 7)
    cache.write("listings", "k", previous, {"host": "h"})
    first = cache.generation("listings", "k")
    folder = tmp_path / ".rf" / "generations" / "listings" / "k"  # the dataset never sees it
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 60
        while not [p for p in folder.iterdir() if p.name != first and any(p.iterdir())]:
            assert child.poll() is None, "the writer finished before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.001)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.communicate()  # reaps it and closes its pipe
    assert child.returncode == -signal.SIGKILL
    assert len(list(folder.iterdir())) == 2  # the half-written generation, never made current
    entry = cache.read("listings", "k")
    assert entry is not None and cache.generation("listings", "k") == first
    pd.testing.assert_frame_equal(entry.frame, previous)
    assert files(tmp_path / "listings") == [ENTRY.format("k")]  # only the whole, previous file
    # the next write of the key, once the grace period has passed, removes the dead writer's files
    ParquetCache(tmp_path, grace=timedelta(0)).write("listings", "k", frame(5, 8), {"host": "h"})
    current = cache.generation("listings", "k")
    assert files(tmp_path) == [
        f".rf/generations/listings/k/{current}/main.parquet",
        ".rf/state.sqlite3",
        "listings/" + ENTRY.format("k"),
    ]


def test_other_tools_read_the_cache_folder(tmp_path: Path):
    cache = ParquetCache(tmp_path)
    cache.write("listings", "k1", frame(30, 1), {"host": "h"}, extra_frames={"media": frame(5, 1)})
    cache.write("listings", "k2", frame(12, 2), {"host": "h"})
    # things that must not confuse readers: a lock, a moved-aside file, a killed writer's temp file
    cache.write("listings", "k3", frame(3, 3), {"host": "h"})
    cache.path("listings", "k3").write_bytes(b"broken")  # damaged: a read moves it aside
    with pytest.warns(CacheWarning):
        assert cache.read("listings", "k3") is None
    (tmp_path / ".rf" / "staging" / ".listings.k4.parquet.tmp-1-abcd").write_bytes(b"half")
    folder = tmp_path / "listings"
    rows = duckdb.sql(
        f"SELECT Writer, count(*) AS n FROM read_parquet('{folder}/**/*.parquet') "
        "GROUP BY Writer ORDER BY Writer"
    ).fetchall()
    assert rows == [(1, 30), (2, 12)]
    media = duckdb.sql(
        f"SELECT count(*) FROM read_parquet('{tmp_path}/listings.media/**/*.parquet')"
    ).fetchall()
    assert media == [(5,)]
    table = ds.dataset(folder, format="parquet", partitioning="hive").to_table()
    assert table.num_rows == 42
    assert set(table.column_names) == {"ListingId", "ListPrice", "Writer", "account", "scope"}
    meta = duckdb.sql(
        f"SELECT count(*) FROM parquet_kv_metadata('{folder}/**/*.parquet') "
        "WHERE key = 'realtyframes'"
    ).fetchall()
    assert meta == [(2,)]


def test_a_dead_writers_folder_removed_by_another_writer_meanwhile_is_no_error(
    tmp_path: Path, monkeypatch
):
    """Two writers collect a dead writer's folder at once: the one that finds it gone between
    listing the key's folder and looking at the folder's age (here, ``Path.stat`` of that folder,
    made to remove it first) still writes, and the entry reads back whole."""
    cache = ParquetCache(tmp_path, grace=timedelta(0))
    cache.write("listings", "k", frame(3, 1), {"host": "h"})
    current = cache.generation("listings", "k")
    dead = tmp_path / ".rf" / "generations" / "listings" / "k" / "dead-writer"
    dead.mkdir()
    (dead / "main.parquet").write_bytes(b"half")
    os.utime(dead, (0, 0))
    stat = Path.stat

    def collected_meanwhile(self: Path, *args, **kwargs):
        if self == dead and os.path.isdir(dead):
            shutil.rmtree(dead)  # the other writer's collection, between glob and stat
        return stat(self, *args, **kwargs)

    monkeypatch.setattr(Path, "stat", collected_meanwhile)
    cache.write("listings", "k", frame(4, 2), {"host": "h"})
    monkeypatch.undo()
    assert not dead.exists() and cache.generation("listings", "k") != current
    entry = cache.read("listings", "k")
    assert entry is not None
    pd.testing.assert_frame_equal(entry.frame, frame(4, 2))
