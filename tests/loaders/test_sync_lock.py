"""One sync of a scope at a time, whatever the processes (#28): two ``sync_listings`` processes
on one scope and cache at once make the requests of one sync; the second waits, then returns the
first's market (and its changes) from the cache. A held lock past ``wait`` is a ScopeBusyError; a
first sync killed while it held the lock leaves it free, and the next sync resumes its checkpoint.
Real sandboxes on loopback, real processes; requests counted by a request hook in each."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest

import realtyframes as rf
from realtyframes.cache import ParquetCache, file_lock, is_locked
from realtyframes.cli import main as cli_main
from realtyframes.loaders import SYNC_WAIT, sync_lock
from realtyframes.sandbox import RunningSandbox

SRC = Path(__file__).resolve().parents[2] / "src"

#: A sync in a process: each request is counted (its path appended to ``<out>.sent``, a byte
#: written to stdout); with ``free`` >= 0, the requests after the first ``free`` wait until stdin
#: is closed (the sync holds the scope's lock, paused).
CHILD = """
import json, logging, os, sys, threading
import realtyframes as rf
url, cache, out, wait, free = sys.argv[1:6]
logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
lock, count = threading.Lock(), [0]
gate = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), gate.set()), daemon=True).start()

def hook(request):
    with lock:
        count[0] += 1
        held = int(free) >= 0 and count[0] > int(free)
        with open(out + ".sent", "a") as sent:
            sent.write(request.url.path + "\\n")
        sys.stdout.write("r")
        sys.stdout.flush()
    if held:
        gate.wait()

with rf.Client(url, cache_dir=cache, progress=False, event_hooks={"request": [hook]}) as client:
    market = client.sync_listings(wait=float(wait))
    info = client.last_load
market.to_parquet(out + ".market.parquet")
if info.changes is not None:
    info.changes.to_parquet(out + ".changes.parquet")
with open(out + ".json", "w") as f:
    json.dump({"from_cache": info.from_cache, "requests": info.requests,
               "resumed_requests": info.resumed_requests}, f)
"""


class Child:
    """A sync running in its own process (``CHILD``). It writes a byte to its stdout for each
    request it sends; with ``free`` >= 0 the requests after the first ``free`` wait until its
    stdin is closed (:meth:`release`): the sync holds the scope's lock, paused. No polling: the
    test blocks on those pipes."""

    def __init__(self, url: str, cache: Path, out: Path, wait: float, free: int = -1) -> None:
        self.out = out
        env = {k: v for k, v in os.environ.items() if not k.startswith("REALTYFRAMES_")}
        env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
        args = [url, str(cache), str(out), str(wait), str(free)]
        self.process = subprocess.Popen(
            [sys.executable, "-c", CHILD, *args],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def sent(self) -> list[str]:
        path = self.out.with_name(self.out.name + ".sent")
        return path.read_text().splitlines() if path.exists() else []

    def wait_for_requests(self, count: int) -> None:
        """Block until the process has sent ``count`` requests (it must not end first)."""
        assert self.process.stdout is not None
        got = self.process.stdout.read(count)
        assert len(got) == count, self.process.communicate()[1]

    def release(self) -> None:
        """Let its paused requests go on."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.stdin = None  # communicate() would flush it

    def wait_for_line(self, text: str) -> list[str]:
        """Read its stderr until a line holds ``text``; the lines read."""
        assert self.process.stderr is not None
        seen = []
        for line in self.process.stderr:
            seen.append(line)
            if text in line:
                return seen
        raise AssertionError(f"{text!r} never logged: {seen}")

    def result(self) -> tuple[dict[str, Any], pd.DataFrame, pd.DataFrame | None]:
        _, err = self.process.communicate()
        assert self.process.returncode == 0, err
        info = json.loads(self.out.with_name(self.out.name + ".json").read_text())
        market = pd.read_parquet(self.out.with_name(self.out.name + ".market.parquet"))
        changes = self.out.with_name(self.out.name + ".changes.parquet")
        return info, market, pd.read_parquet(changes) if changes.exists() else None


@pytest.fixture
def sandbox(start_sandbox: Callable[..., RunningSandbox]) -> RunningSandbox:
    return start_sandbox()


def overlap(url: str, cache: Path, tmp: Path, tag: str) -> tuple[Child, Child]:
    """Two syncs of one scope at once: the first paused at its first request (the lock held),
    the second started and waiting for it, then the first let go. Both completed."""
    first = Child(url, cache, tmp / f"{tag}-first", 120, free=0)
    first.wait_for_requests(1)  # it holds the lock: it takes it before asking
    second = Child(url, cache, tmp / f"{tag}-second", 120)
    seen = second.wait_for_line("waiting up to 120 s")
    assert any("another run is syncing PropertyType=Residential" in line for line in seen), seen
    first.release()
    return first, second


def test_two_processes_sync_a_scope_once_first_sync_and_incremental(
    sandbox: RunningSandbox, http_client: httpx.Client, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    first, second = overlap(sandbox.url, cache, tmp_path, "full")
    info_a, market_a, changes_a = first.result()
    info_b, market_b, changes_b = second.result()
    assert second.sent() == []  # no request at all: the first's market from the cache
    paths = set(first.sent())
    assert {"/v1/listings", "/v1/listings/changes"} <= paths  # the searches and the backfill
    assert not info_a["from_cache"] and info_a["requests"] == len(first.sent())
    assert info_b == {"from_cache": True, "requests": 0, "resumed_requests": 0}
    pd.testing.assert_frame_equal(market_a, market_b)
    assert changes_a is None and changes_b is None  # a first sync: nothing to compare with

    http_client.post(f"{sandbox.url}/_sandbox/clock", json={"advance_days": 10})
    first, second = overlap(sandbox.url, cache, tmp_path, "incremental")
    info_a, market_a, changes_a = first.result()
    info_b, market_b, changes_b = second.result()
    assert second.sent() == [] and len(first.sent()) == info_a["requests"] > 0
    assert info_b["from_cache"] and not info_a["from_cache"]
    pd.testing.assert_frame_equal(market_a, market_b)
    assert changes_a is not None and changes_b is not None and len(changes_a) > 0
    pd.testing.assert_frame_equal(changes_a, changes_b)  # the first's changes, rebuilt

    with rf.Client(sandbox.url, cache_dir=cache, progress=False) as client:
        runs = client.runs()
        assert client.sync_state()["syncs"] == 2  # two syncs, not four
    syncs = runs[runs["kind"] == "sync"]
    assert len(syncs) == 4 and (syncs["outcome"] == "ok").all()
    shared = syncs[syncs["from_cache"].astype(bool)]
    assert len(shared) == 2 and (shared["requests"] == 0).all()
    own = syncs[~syncs["from_cache"].astype(bool)]
    assert (own["requests"] > 0).all()
    assert shared["rows"].tolist() == own["rows"].tolist()
    assert shared["new"].iloc[1] == own["new"].iloc[1]
    assert shared["changed"].iloc[1] == own["changed"].iloc[1]


def test_a_lock_held_past_wait_is_scope_busy_and_records_a_failed_run(
    sandbox: RunningSandbox, tmp_path: Path
) -> None:
    requests: list[str] = []
    hooks = {"request": [lambda r: requests.append(r.url.path)]}
    with rf.Client(
        sandbox.url, cache_dir=tmp_path / "c", progress=False, event_hooks=hooks
    ) as client:
        lock = sync_lock(client.session, {"City": "Doral"})
        assert lock is not None and lock.parent.name == "market.sync"
        with file_lock(lock, timeout=5), pytest.raises(rf.ScopeBusyError) as busy:
            client.sync_listings(City="Doral", wait=0)  # another run is syncing it
        assert str(busy.value).startswith(
            "another run kept syncing City=Doral, PropertyType=Residential for over 0 s; "
            "this run synced nothing"
        )
        assert isinstance(busy.value, rf.CacheLockTimeout)
        assert requests == [] and client.sync_state(City="Doral") is None
        record = client.runs().iloc[-1]
        assert (record["kind"], record["outcome"], record["error_code"]) == (
            "sync",
            "failed",
            "ScopeBusyError",
        )
        client.sync_listings(City="Doral", wait=0)  # free again: syncs
        assert requests and not is_locked(lock) and lock.exists()
        ParquetCache(client.dataset_path("market").parent).clear()
        assert not lock.exists()  # `cache clear` removes the sync locks no one holds


def test_wait_is_checked_before_any_request_and_a_client_without_cache_takes_no_lock(
    sandbox: RunningSandbox, tmp_path: Path
) -> None:
    requests: list[str] = []
    hooks = {"request": [lambda r: requests.append(r.url.path)]}
    with rf.Client(
        sandbox.url, cache_dir=tmp_path / "c", progress=False, event_hooks=hooks
    ) as client:
        for bad in (-1, "soon", True, float("nan")):
            with pytest.raises(rf.QueryError) as error:
                client.sync_listings(City="Doral", wait=bad)
            assert error.value.param == "wait"
        assert requests == [] and not (tmp_path / "c" / ".rf" / "locks").exists()
    assert SYNC_WAIT == 900.0
    with rf.Client(sandbox.url, cache=False, progress=False) as uncached:
        assert sync_lock(uncached.session, {"City": "Doral"}) is None
        assert len(uncached.sync_listings(City="Doral", wait=None)) > 0


def test_threads_of_one_process_sync_a_scope_once(
    sandbox: RunningSandbox, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="realtyframes.sync")
    go, asked, waiting = threading.Event(), threading.Event(), threading.Event()
    requests: list[str] = []

    def hook(request: httpx.Request) -> None:
        requests.append(request.url.path)
        asked.set()
        go.wait(60)

    class Waiting(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "waiting up to 120 s" in record.getMessage():
                waiting.set()

    handler = Waiting()
    logging.getLogger("realtyframes.sync").addHandler(handler)

    with rf.Client(
        sandbox.url, cache_dir=tmp_path / "c", progress=False, event_hooks={"request": [hook]}
    ) as client:
        lock = sync_lock(client.session, {})
        assert lock is not None
        found: dict[str, pd.DataFrame] = {}
        first = threading.Thread(target=lambda: found.update(a=client.sync_listings()))
        first.start()
        assert asked.wait(60)  # the first holds the lock, paused at its first request
        second = threading.Thread(target=lambda: found.update(b=client.sync_listings(wait=120)))
        second.start()
        try:
            assert waiting.wait(60)  # the second waits for the first
        finally:
            logging.getLogger("realtyframes.sync").removeHandler(handler)
        go.set()
        first.join(120)
        second.join(120)
        made = len(requests)
        pd.testing.assert_frame_equal(found["a"], found["b"])
        assert made == client.sync_state()["last_requests"]["total"]  # one sync's requests
        assert client.sync_state()["syncs"] == 1


def test_a_first_sync_killed_holding_the_lock_frees_it_and_is_resumed(
    sandbox: RunningSandbox, tmp_path: Path
) -> None:
    """SIGKILL while the lock is held: the kernel releases it; the next sync (waiting) gets it at
    once and resumes the first's checkpoint (pages reused, not asked again)."""
    cache = tmp_path / "cache"
    # the first sync's requests after its 6th wait until it is killed
    first = Child(sandbox.url, cache, tmp_path / "killed", 120, free=6)
    first.wait_for_requests(7)
    with rf.Client(sandbox.url, cache_dir=cache, progress=False) as probe:
        lock = sync_lock(probe.session, {})
    assert lock is not None and is_locked(lock)
    store = ParquetCache(cache)
    held = store.job_holder("market", lock.stem)  # who: the locks table (docs/cache.md)
    assert held is not None and held.pid == first.process.pid
    assert held.scope == "PropertyType=Residential"
    os.kill(first.process.pid, signal.SIGKILL)
    first.process.communicate()
    assert not is_locked(lock)
    assert store.job_holder("market", lock.stem) is None  # its row is stale: the holder died
    with rf.Client(sandbox.url, cache_dir=cache, progress=False) as client:
        market = client.sync_listings(wait=0)
        info = client.last_load
    with rf.Client(sandbox.url, cache_dir=tmp_path / "ref", progress=False) as reference:
        expected = reference.sync_listings()
    assert info is not None and not info.from_cache
    assert info.resumed_requests > 0  # the pages the killed sync saved, not asked again
    pd.testing.assert_frame_equal(market, expected)


def test_cache_clear_refuses_a_scope_being_synced(
    sandbox: RunningSandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A clear during a sync removed that sync's checkpoint, and the sync then wrote its entry
    after the clear: now the clear refuses (ScopeBusyError naming the scope and its holder; the
    CLI one line, exit 75) and removes nothing; once the sync is done it clears."""
    root = tmp_path / "c"
    syncing, go = threading.Event(), threading.Event()

    def hook(request: httpx.Request) -> None:
        syncing.set()  # the sync holds its scope's lock from before its first request
        go.wait(60)

    found: dict[str, pd.DataFrame] = {}
    with rf.Client(
        sandbox.url, cache_dir=root, progress=False, event_hooks={"request": [hook]}
    ) as client:
        first = threading.Thread(target=lambda: found.update(m=client.sync_listings(City="Doral")))
        first.start()
        try:
            assert syncing.wait(60)
            cache = ParquetCache(root)
            with pytest.raises(rf.ScopeBusyError) as busy:
                cache.clear()
            message = str(busy.value)
            assert "City=Doral, PropertyType=Residential" in message
            assert f"process {os.getpid()}" in message and "nothing was removed" in message
            with pytest.raises(rf.ScopeBusyError):
                cache.clear_checkpoints("market")
            assert cli_main(["cache", "clear", "--yes", "--cache-dir", str(root)]) == 75
            lines = capsys.readouterr().err.strip().splitlines()
            assert len(lines) == 1 and "is being synced; nothing was removed" in lines[0]
        finally:
            go.set()
            first.join(120)
        assert client.sync_state(City="Doral") is not None  # its entry, written whole
        assert len(cache.list()) == 1
        assert cache.clear() == 1 and cache.list().empty  # idle now: cleared
        assert cache.checkpoints() == [] and len(found["m"]) > 0


def test_a_lock_path_that_is_a_directory_is_a_typed_error(
    sandbox: RunningSandbox, tmp_path: Path
) -> None:
    requests: list[str] = []
    hooks = {"request": [lambda r: requests.append(r.url.path)]}
    with rf.Client(
        sandbox.url, cache_dir=tmp_path / "c", progress=False, event_hooks=hooks
    ) as client:
        lock = sync_lock(client.session, {"City": "Doral"})
        assert lock is not None
        lock.mkdir(parents=True)
        with pytest.raises(rf.CacheLockError, match="it is a directory") as error:
            client.sync_listings(City="Doral")
        assert isinstance(error.value, OSError) and str(lock) in str(error.value)
        assert requests == []
