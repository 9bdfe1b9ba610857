"""Loads and syncs that resume (#28): a `details=True` load and a first sync with its history
backfill, interrupted at several points by SIGKILL (a subprocess), by a lost connection (the
fault proxy's ``drop`` mode) and by Ctrl-C, end equal to an uninterrupted load on the next
identical call, and
the requests of interrupted + resumed stay within the uninterrupted count plus the requests that
were in flight. Then what discards a checkpoint: another scope, drift, age, refresh=True, cache
clear; and what a checkpoint may hold (no secret, 0600)."""

from __future__ import annotations

import logging
import sqlite3
import stat
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest

import killing
import realtyframes as rf
from faultproxy import FaultProxy, start_proxy
from realtyframes.cache import Checkpoint, ParquetCache, SavedCheckpoint, state_file
from realtyframes.cli import main as cli_main
from realtyframes.loaders import listing_history, sync_state
from realtyframes.loaders._resume import IDENTITY_RECORDS
from realtyframes.sandbox import RunningSandbox, start

AS_OF = datetime(2026, 6, 30, tzinfo=UTC)
#: Enough listings for a few search pages of Active listings (about 200) and a backfill of
#: several chunks; a little latency so that a kill lands in the middle.
OPTIONS: dict[str, Any] = {
    "seed": 7,
    "as_of": AS_OF,
    "listings": 1500,
    "contacts": 60,
    "history_years": 1,
}
FAST = rf.RetryPolicy(max_retries=2, backoff_base=0.001, backoff_cap=0.005)
CONCURRENCY = 4  # the client's default max_concurrency: requests in flight at most


class Hook:
    """A request hook: counts every request the client sends."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, request: httpx.Request) -> None:
        self.count += 1


def client(url: str, cache: Path, hook: Hook | None = None, **options: Any) -> rf.Client:
    hooks = {"request": [hook]} if hook is not None else None
    return rf.Client(url, cache_dir=cache, progress=False, retry=FAST, event_hooks=hooks, **options)


def settle() -> None:
    """Wait for the sync's threads a failure left running (a failed ``get_many`` itself returns
    once its requests in flight have ended, on the dropped connection); the client is then
    closed with nothing in use."""
    for thread in threading.enumerate():
        if thread.name.startswith("realtyframes-sync"):
            thread.join(timeout=60)


def journals(cache: Path) -> list[SavedCheckpoint]:
    return ParquetCache(cache).checkpoints()


#: Requests sent but not in the checkpoint when a load is killed: those in the connection pool
#: (at most CONCURRENCY), answers received but not yet handed to the checkpoint by the loading
#: thread (``on_result`` runs there; on a loaded machine it lags a few answers behind) and, after
#: a SIGKILL, those handed over but not committed by its writer thread (docs/cache.md).
IN_FLIGHT_MAX = 2 * CONCURRENCY + Checkpoint.WRITE_BATCH
#: Requests a resume makes to check its checkpoint (#33): the details of the listings noted as
#: its identity (``_resume.check_identity``), and for a sync the first page read again to see
#: how far the data moved (``_resume.data_moved``).
LOAD_CHECKS = IDENTITY_RECORDS
SYNC_CHECKS = IDENTITY_RECORDS + 1


def checks(saved: int) -> int:
    """The checks of a resumed load: none when nothing was saved (nothing to resume)."""
    return LOAD_CHECKS if saved else 0


def saved_pages(cache: Path) -> int:
    return sum(c.answers for c in journals(cache))


@pytest.fixture(scope="module")
def sb() -> Iterator[RunningSandbox]:
    with start(**OPTIONS, latency_ms=2) as running:
        yield running


@pytest.fixture(scope="module")
def proxy(sb: RunningSandbox) -> Iterator[FaultProxy]:
    with start_proxy(sb.url) as running:
        yield running


@pytest.fixture(scope="module")
def reference(sb: RunningSandbox, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Uninterrupted loads on the sandbox itself: their frames and request counts."""
    found: dict[str, Any] = {}
    hook = Hook()
    with client(sb.url, tmp_path_factory.mktemp("ref-details"), hook) as c:
        found["details"] = c.listings(details=True)
        found["media"] = c.last_load.media
        found["details_requests"] = hook.count
    hook = Hook()
    with client(sb.url, tmp_path_factory.mktemp("ref-sync"), hook) as c:
        found["market"] = c.sync_listings()
        found["history"] = listing_history(c.session, {})
        found["state"] = sync_state(c.session, {})
        found["sync_requests"] = hook.count
    assert found["details_requests"] > 150 and found["sync_requests"] > 40
    return found


def assert_same_details(c: rf.Client, frame: pd.DataFrame, reference: dict[str, Any]) -> None:
    pd.testing.assert_frame_equal(frame, reference["details"])
    pd.testing.assert_frame_equal(c.last_load.media, reference["media"])


def assert_same_market(c: rf.Client, market: pd.DataFrame, reference: dict[str, Any]) -> None:
    pd.testing.assert_frame_equal(market, reference["market"])
    pd.testing.assert_frame_equal(listing_history(c.session, {}), reference["history"])
    state = sync_state(c.session, {})
    assert state is not None
    for name in ("entry_watermark", "change_watermark", "data_time", "history_since"):
        assert state[name] == reference["state"][name]


# -- a lost connection ------------------------------------------------------------------------------


@pytest.mark.parametrize("after", [3, 60, 150])
def test_details_load_resumes_after_a_lost_connection(
    proxy: FaultProxy, reference: dict[str, Any], tmp_path: Path, after: int
):
    proxy.set("drop", after=after)
    hook = Hook()
    with client(proxy.url, tmp_path, hook) as c:
        with pytest.raises(rf.ConnectError):
            c.listings(details=True)
        settle()
        interrupted = after  # the requests that passed (a last one may still be on its way)
        assert proxy.forwarded <= after
        assert not (tmp_path / "listings").exists()  # readers see nothing of it
        saved = saved_pages(tmp_path)
        in_flight = interrupted - saved
        assert 0 <= in_flight <= IN_FLIGHT_MAX
        proxy.set(None)
        frame = c.listings(details=True)
        info = c.last_load
    assert_same_details(c, frame, reference)
    assert info.resumed_requests == saved and info.resumed_from is not None
    # the checks of the checkpoint are requests of the load (#33)
    assert info.requests + info.resumed_requests == reference["details_requests"] + checks(saved)
    assert interrupted + proxy.forwarded <= reference["details_requests"] + in_flight + LOAD_CHECKS
    assert journals(tmp_path) == []  # stored: the checkpoint is gone
    # the run history: the interrupted load failed, the resumed one says where it went on from
    runs = c.runs()
    failed, resumed = runs.iloc[-2], runs.iloc[-1]
    assert (failed["outcome"], failed["error_code"]) == ("failed", "ConnectError")
    assert resumed["outcome"] == "ok" and resumed["rows"] == len(frame)
    assert resumed["resumed_from"] == info.resumed_from.isoformat()


@pytest.mark.parametrize("after", [5, 22, 40])  # in the searches, the backfill's probe, its chunks
def test_first_sync_resumes_after_a_lost_connection(
    proxy: FaultProxy, reference: dict[str, Any], tmp_path: Path, after: int
):
    proxy.set("drop", after=after)
    with client(proxy.url, tmp_path) as c:
        with pytest.raises(rf.ConnectError):
            c.sync_listings()
        settle()
        interrupted = after  # the requests that passed (a last one may still be on its way)
        assert proxy.forwarded <= after
        assert not (tmp_path / "market").exists()
        assert sync_state(c.session, {}) is None and listing_history(c.session, {}).empty
        saved = saved_pages(tmp_path)
        in_flight = interrupted - saved  # and the refused probe: see the SIGKILL test
        assert 0 <= in_flight <= IN_FLIGHT_MAX + 1
        proxy.set(None)
        market = c.sync_listings()
        assert c.last_load.resumed_requests == saved
        assert_same_market(c, market, reference)
    assert interrupted + proxy.forwarded <= reference["sync_requests"] + in_flight + SYNC_CHECKS
    assert journals(tmp_path) == []


def test_details_load_resumes_after_ctrl_c(
    sb: RunningSandbox, reference: dict[str, Any], tmp_path: Path
):
    """KeyboardInterrupt (Ctrl-C) raised in the middle of the load, from a request hook."""
    sent = [0]

    def ctrl_c(request: httpx.Request) -> None:
        if sent[0] >= 80:
            raise KeyboardInterrupt
        sent[0] += 1

    with rf.Client(
        sb.url, cache_dir=tmp_path, progress=False, event_hooks={"request": [ctrl_c]}
    ) as c:
        with pytest.raises(KeyboardInterrupt):
            c.listings(details=True)
        settle()
    assert not (tmp_path / "listings").exists() and len(journals(tmp_path)) == 1
    saved = saved_pages(tmp_path)
    in_flight = sent[0] - saved
    assert 0 <= in_flight <= IN_FLIGHT_MAX
    hook = Hook()
    with client(sb.url, tmp_path, hook) as c:
        frame = c.listings(details=True)
        assert c.last_load.resumed_requests == saved
    assert_same_details(c, frame, reference)
    assert sent[0] + hook.count == reference["details_requests"] + in_flight + checks(saved)


# -- SIGKILL ----------------------------------------------------------------------------------------

LOAD = """
url, cache, kind = args
with rf.Client(url, cache_dir=cache, progress=False, event_hooks={"request": [hook]}) as client:
    if kind == "details":
        client.listings(details=True)
    elif kind == "closed":
        client.listings(PropertyType="Residential", Status="Closed")
    else:
        client.sync_listings()
"""


def run_and_kill(url: str, cache: Path, kind: str, sent: int) -> int:
    """Run the load in a process and SIGKILL it once it has sent ``sent`` requests and the next
    one waits (the answers of the last ones may be on their way: in flight); returns the
    requests it sent."""
    return killing.run_and_kill(LOAD, cache.parent / f"{cache.name}-requests", sent, url,
                                str(cache), kind)  # fmt: skip


@pytest.mark.parametrize("sent", [2, 60, 150])
def test_details_load_resumes_after_sigkill(
    sb: RunningSandbox, reference: dict[str, Any], tmp_path: Path, sent: int
):
    cache = tmp_path / "cache"
    interrupted = run_and_kill(sb.url, cache, "details", sent)
    assert interrupted == sent and not (cache / "listings").exists()
    saved = saved_pages(cache)  # the answers that reached the checkpoint before the kill
    in_flight = interrupted - saved
    assert 0 <= in_flight <= IN_FLIGHT_MAX
    hook = Hook()
    with client(sb.url, cache, hook) as c:
        frame = c.listings(details=True)
        info = c.last_load
    assert_same_details(c, frame, reference)
    assert info.resumed_requests == saved  # every saved answer reused, none asked again
    # every request the resume made is in its count, the checks of its checkpoint too (#33)
    assert info.requests == hook.count
    assert info.requests + info.resumed_requests == reference["details_requests"] + checks(saved)
    # interrupted + resumed = uninterrupted + the requests that were in flight, exactly (and
    # the checks of the checkpoint's identity)
    assert interrupted + hook.count == reference["details_requests"] + in_flight + checks(saved)
    assert journals(cache) == []


@pytest.mark.parametrize("sent", [3, 20, 38])  # in the searches, the backfill's probe, its chunks
def test_first_sync_resumes_after_sigkill(
    sb: RunningSandbox, reference: dict[str, Any], tmp_path: Path, sent: int
):
    cache = tmp_path / "cache"
    interrupted = run_and_kill(sb.url, cache, "sync", sent)
    assert interrupted == sent and not (cache / "market").exists()
    # sent, but not saved as pages: those in flight, and the backfill's refused probe (a 400 on
    # 200 ids, kept in the checkpoint as the chunk size learned, so not sent again)
    saved = saved_pages(cache)
    in_flight = interrupted - saved
    assert 0 <= in_flight <= IN_FLIGHT_MAX + 1
    hook = Hook()
    with client(sb.url, cache, hook) as c:
        market = c.sync_listings()
        assert c.last_load.resumed_requests == saved  # every saved answer reused
        assert c.last_load.requests == hook.count  # the checks of the checkpoint too (#33)
        assert_same_market(c, market, reference)
    assert interrupted + hook.count <= reference["sync_requests"] + in_flight + SYNC_CHECKS
    assert journals(cache) == []


# -- what discards a checkpoint -----------------------------------------------------------------------


def interrupt(proxy: FaultProxy, c: rf.Client, call: str, after: int, **kwargs: Any) -> None:
    proxy.set("drop", after=after)
    with pytest.raises(rf.ConnectError):
        getattr(c, call)(**kwargs)
    settle()
    proxy.set(None)


def discarded(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "discarded" in r.getMessage()]


def test_another_scope_discards_the_checkpoint(
    proxy: FaultProxy, tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    """history_since is not in the market's key: a checkpoint made for another start of the
    history is not used."""
    caplog.set_level(logging.INFO, logger="realtyframes.cache")
    with client(proxy.url, tmp_path) as c:
        interrupt(proxy, c, "sync_listings", 30, history_since="2026-01-01")
        assert len(journals(tmp_path)) == 1
        market = c.sync_listings(history_since="2026-03-01")
        assert c.last_load.resumed_requests == 0
        assert [m for m in discarded(caplog) if "another scope" in m]
        history = listing_history(c.session, {})
    with client(proxy.url, tmp_path / "fresh") as fresh:
        pd.testing.assert_frame_equal(market, fresh.sync_listings(history_since="2026-03-01"))
        pd.testing.assert_frame_equal(history, listing_history(fresh.session, {}))


def test_drift_beyond_tolerance_discards_the_checkpoint(
    start_sandbox: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    """The closed listings of a search interrupted at its third page grow by more than the
    tolerance while the load waits: the saved pages are dropped and the load starts over."""
    caplog.set_level(logging.INFO, logger="realtyframes.cache")
    own = start_sandbox(**OPTIONS)
    with start_proxy(own.url) as own_proxy, client(own_proxy.url, tmp_path) as c:
        interrupt(own_proxy, c, "listings", 3, Status="Closed")
        before = saved_pages(tmp_path)
        httpx.post(f"{own.url}/_sandbox/clock", json={"advance_days": 120}).raise_for_status()
        frame = c.listings(Status="Closed")
        assert before >= 1 and c.last_load.resumed_requests == 0
        assert [m for m in discarded(caplog) if "total moved" in m]
        with client(own_proxy.url, tmp_path / "fresh") as fresh:
            pd.testing.assert_frame_equal(frame, fresh.listings(Status="Closed"))
            assert len(frame) > before * 50 + 50


def test_an_old_checkpoint_is_discarded(
    proxy: FaultProxy, reference: dict[str, Any], tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    caplog.set_level(logging.INFO, logger="realtyframes.cache")
    with client(proxy.url, tmp_path) as c:
        interrupt(proxy, c, "listings", 40, details=True)
        assert len(journals(tmp_path)) == 1
        old = time.time() - 25 * 3600  # CHECKPOINT_MAX_AGE is 24 hours
        with sqlite3.connect(state_file(tmp_path)) as db:  # docs/cache.md: last written
            db.execute("UPDATE checkpoints SET updated = ?", (old,))
        frame = c.listings(details=True)
        assert c.last_load.resumed_requests == 0
        assert c.last_load.requests == reference["details_requests"]
    assert [m for m in discarded(caplog) if "more than 1 day" in m]
    pd.testing.assert_frame_equal(frame, reference["details"])


def test_refresh_discards_the_checkpoint(
    proxy: FaultProxy, reference: dict[str, Any], tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    caplog.set_level(logging.INFO, logger="realtyframes.cache")
    with client(proxy.url, tmp_path) as c:
        interrupt(proxy, c, "listings", 40, details=True)
        frame = c.listings(details=True, refresh=True)
        assert c.last_load.resumed_requests == 0
        assert c.last_load.requests == reference["details_requests"]
        interrupt(proxy, c, "sync_listings", 20)
        c.sync_listings(refresh=True)
        assert c.last_load.resumed_requests == 0
    assert len([m for m in discarded(caplog) if "refresh=True" in m]) == 2
    pd.testing.assert_frame_equal(frame, reference["details"])
    assert journals(tmp_path) == []


def test_cache_clear_discards_checkpoints(proxy: FaultProxy, tmp_path: Path):
    with client(proxy.url, tmp_path) as c:
        interrupt(proxy, c, "listings", 40, details=True)
        interrupt(proxy, c, "sync_listings", 20)
    assert len(journals(tmp_path)) == 2
    ParquetCache(tmp_path).clear("market")
    assert [c.resource for c in journals(tmp_path)] == ["listings"]
    assert cli_main(["cache", "clear", "--yes", "--cache-dir", str(tmp_path)]) == 0
    assert journals(tmp_path) == []


def test_a_checkpoint_holds_no_secret_and_contacts_are_private(proxy: FaultProxy, tmp_path: Path):
    """The checkpoints of an interrupted search and of the contacts, made with a token, hold
    neither the token nor a query string; the database is 0600 in a 0700 folder."""
    secret = "tok-9f8e7d6c5b4a-secret"
    with client(proxy.url, tmp_path, token=secret) as c:
        interrupt(proxy, c, "contacts", 1)
        interrupt(proxy, c, "listings", 2, PropertyType="Residential")
    found = journals(tmp_path)
    assert sorted(c.resource for c in found) == ["contacts", "listings"]
    assert all(c.answers for c in found)
    path = state_file(tmp_path)
    text = b"".join(p.read_bytes() for p in path.parent.glob("state.sqlite3*"))
    assert secret.encode() not in text
    assert b"Offset=" not in text and b"PropertyType=" not in text
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
