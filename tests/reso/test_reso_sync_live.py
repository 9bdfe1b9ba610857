"""A RESO sync while the server changes: an incremental sync's ``changes`` equal the platform
sync's; MLS Grid's live MlgCanView flip and a feed's deletes (found by the key reconcile) leave the
market as removals; one sync of a scope at a time (the platform sync's scope lock). Real sandboxes
on loopback; the server's records changed through ``POST /_sandbox/reso/records``."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest

import realtyframes as rf
from realtyframes.cache import file_lock
from realtyframes.loaders import sync_lock
from realtyframes.reso import HISTORY_SOURCE
from realtyframes.reso._sync import RECONCILE_EVERY, RECONCILE_SOURCE
from reso_clients import OPEN, pair

SRC = Path(__file__).resolve().parents[2] / "src"


def _advance(url: str, days: float) -> None:
    httpx.post(f"{url}/_sandbox/clock", json={"advance_days": days}).raise_for_status()


def _change(url: str, **keys: list[str]) -> None:
    httpx.post(f"{url}/_sandbox/reso/records", json=keys).raise_for_status()


def _differing_cells(a: pd.DataFrame, b: pd.DataFrame) -> int:
    assert list(a.columns) == list(b.columns) and (a.dtypes == b.dtypes).all()
    assert list(a["ListingId"]) == list(b["ListingId"])
    same = (a == b) | (a.isna() & b.isna())
    return int((~same).to_numpy().sum())


def test_incremental_changes_equal_the_platform_sync_changes(
    start_sandbox: Any, tmp_path: Path
) -> None:
    sb = start_sandbox()
    platform, source = pair(sb.url, tmp_path)
    platform.sync_listings(), source.sync_listings()
    assert source.last_load is not None and source.last_load.changes is None  # a full load
    for days in (5, 30):
        _advance(sb.url, days)
        platform.sync_listings(), source.sync_listings()
        assert platform.last_load is not None and source.last_load is not None
        expected, got = platform.last_load.changes, source.last_load.changes
        assert expected is not None and got is not None
        assert len(expected) > 0 and {"new", "price_cut"} <= set(expected["change"].astype(str))
        pd.testing.assert_frame_equal(got, expected)
    # the run record counts them as the platform's does
    runs = [c.runs(last=1).iloc[0] for c in (platform, source)]
    assert runs[0]["new"] == runs[1]["new"] > 0 and runs[0]["changed"] == runs[1]["changed"] > 0


def test_mlsgrid_live_flip_of_one_percent_leaves_the_market_as_removals(
    start_sandbox: Any, tmp_path: Path
) -> None:
    sb = start_sandbox(listings=5000, reso_vendor="mlsgrid", reso_hidden_share=0.0)
    platform, source = pair(sb.url, tmp_path, vendor="mlsgrid", originating_system="rfsandbox")
    before = source.sync_listings()
    platform.sync_listings()
    history_before = source.listing_history()
    flipped = before["ListingId"].sample(frac=0.01, random_state=7).tolist()
    assert len(flipped) >= 20
    _change(sb.url, hide=flipped)
    after = source.sync_listings()
    info = source.last_load
    expected = platform.sync_listings()  # the same clock: the platform's market, unflipped
    assert not set(flipped) & set(after["ListingId"])
    kept = expected[~expected["ListingId"].isin(flipped)].reset_index(drop=True)
    assert _differing_cells(after, kept) == 0
    history = source.listing_history()
    removals = history[history[HISTORY_SOURCE] == "removed: MlgCanView false"]
    assert sorted(removals["ListingId"]) == sorted(flipped)
    assert removals["StandardStatus"].isna().all()
    others = history[history[HISTORY_SOURCE] != "removed: MlgCanView false"]
    pd.testing.assert_frame_equal(others.reset_index(drop=True), history_before)
    assert info is not None and info.changes is not None
    assert sorted(info.changes["ListingId"]) == sorted(flipped)
    assert set(info.changes["change"].astype(str)) == {"removed"}


@pytest.mark.parametrize("vendor", ["trestle", "generic"])
def test_key_reconcile_writes_deleted_keys_as_removals(
    start_sandbox: Any, tmp_path: Path, vendor: str
) -> None:
    """A feed without a delete flag: a deleted record is invisible to ``ge <watermark>``; the
    key reconcile (every RECONCILE_EVERY th incremental sync, or ``reconcile=True``) finds it."""
    sb = start_sandbox(listings=1500, reso_vendor=vendor)
    _, source = pair(sb.url, tmp_path, vendor=vendor)
    market = source.sync_listings()
    deleted = market["ListingId"].iloc[::300].tolist()
    _change(sb.url, delete=deleted)
    for _ in range(RECONCILE_EVERY - 1):  # not yet due: the deleted rows stay, unnoticed
        assert set(deleted) <= set(source.sync_listings()["ListingId"])
    due = source.sync_listings()
    assert not set(deleted) & set(due["ListingId"]) and len(due) == len(market) - len(deleted)
    history = source.listing_history()
    removals = history[history[HISTORY_SOURCE] == RECONCILE_SOURCE]
    assert sorted(removals["ListingId"]) == sorted(deleted)
    assert list(removals["PreviousStatus"].astype(str)) == list(
        market.set_index("ListingId").loc[removals["ListingId"], "StandardStatus"].astype(str)
    )
    info = source.last_load
    assert info is not None and info.changes is not None
    assert sorted(info.changes.loc[info.changes["change"] == "removed", "ListingId"]) == sorted(
        deleted
    )
    # reconcile=True on demand: a deletion found on the next sync; False skips it
    more = due["ListingId"].iloc[:2].tolist()
    _change(sb.url, delete=more)
    assert set(more) <= set(source.sync_listings(reconcile=False)["ListingId"])
    assert not set(more) & set(source.sync_listings(reconcile=True)["ListingId"])
    with pytest.raises(rf.QueryError) as bad:
        source.sync_listings(reconcile="yes")
    assert bad.value.param == "reconcile"


def test_sandbox_refuses_a_flip_on_a_feed_without_the_flag(start_sandbox: Any) -> None:
    sb = start_sandbox(listings=200)
    answer = httpx.post(f"{sb.url}/_sandbox/reso/records", json={"hide": ["A1"]})
    assert answer.status_code == 400 and "MlgCanView" in answer.text
    answer = httpx.post(f"{sb.url}/_sandbox/reso/records", json={"delete": ["nope"]})
    assert answer.status_code == 400 and "nope" in answer.text


def _overlapping_syncs(url: str, cache: Path) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """Two runs on one cache (two clients, two threads): the first paused at its first request
    (the scope's lock held), the second started once the first asked and waiting for it (its
    log line), then the first let go. Their markets and infos, and the paths each sent."""
    go, asked, waiting = threading.Event(), threading.Event(), threading.Event()
    sent: dict[str, list[str]] = {"a": [], "b": []}

    def hook(name: str) -> Any:
        def record(request: httpx.Request) -> None:
            sent[name].append(request.url.path)
            if name == "a":
                asked.set()
                go.wait(60)

        return record

    clients = {
        name: rf.Client.reso(url + "/reso/odata", token="reso-token", progress=False,
                             cache_dir=cache, event_hooks={"request": [hook(name)]})
        for name in ("a", "b")
    }  # fmt: skip
    OPEN.extend(clients.values())

    class Waiting(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "waiting up to 120 s" in record.getMessage():
                waiting.set()

    found: dict[str, Any] = {}

    def run(name: str) -> None:
        found[name] = clients[name].sync_listings(wait=120)
        found[name + ".info"] = clients[name].last_load

    handler = Waiting()
    logging.getLogger("realtyframes.sync").addHandler(handler)
    first, second = (threading.Thread(target=run, args=(n,)) for n in ("a", "b"))
    first.start()
    try:
        assert asked.wait(60)
        second.start()
        assert waiting.wait(60)
    finally:
        logging.getLogger("realtyframes.sync").removeHandler(handler)
        go.set()
    first.join(120)
    second.join(120)
    return found, sent


def test_two_reso_syncs_of_one_scope_sync_once(
    start_sandbox: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The second of two overlapping syncs waits for the first, then takes its market from the
    cache with no request: a first sync, and an incremental one (its changes rebuilt)."""
    caplog.set_level(logging.INFO, logger="realtyframes.sync")
    sb = start_sandbox(listings=1500)
    found, sent = _overlapping_syncs(sb.url, tmp_path)
    assert sent["b"] == [] and len(sent["a"]) == found["a.info"].requests > 0
    assert found["b.info"].from_cache and found["b.info"].requests == 0
    pd.testing.assert_frame_equal(found["a"], found["b"])
    assert found["a.info"].changes is None and found["b.info"].changes is None
    _advance(sb.url, 10)
    found, sent = _overlapping_syncs(sb.url, tmp_path)
    assert sent["b"] == [] and len(sent["a"]) == found["a.info"].requests > 0
    assert found["b.info"].from_cache and found["b.info"].requests == 0
    pd.testing.assert_frame_equal(found["a"], found["b"])
    assert len(found["a.info"].changes) > 0
    pd.testing.assert_frame_equal(found["a.info"].changes, found["b.info"].changes)


def test_a_reso_sync_waits_on_the_scope_lock_and_is_busy_past_wait(
    start_sandbox: Any, tmp_path: Path
) -> None:
    sb = start_sandbox(listings=200)
    requests: list[str] = []
    client = rf.Client.reso(sb.url + "/reso/odata", token="reso-token", progress=False,
                            cache_dir=tmp_path, event_hooks={"request": [
                                lambda r: requests.append(r.url.path)]})  # fmt: skip
    OPEN.append(client)
    lock = sync_lock(client.session, {"City": "Doral"})
    assert lock is not None
    with file_lock(lock, timeout=5), pytest.raises(rf.ScopeBusyError) as busy:
        client.sync_listings(City="Doral", wait=0)
    assert "another run kept syncing City=Doral, PropertyType=Residential" in str(busy.value)
    assert requests == []
    record = client.runs().iloc[-1]
    assert (record["kind"], record["outcome"], record["error_code"]) == (
        "sync",
        "failed",
        "ScopeBusyError",
    )
    assert len(client.sync_listings(City="Doral", wait=0)) > 0 and requests


#: A RESO sync in its own process: its requests counted (``<out>.sent``), its info in ``<out>``.
CHILD = """
import json, logging, sys
import realtyframes as rf
url, cache, out = sys.argv[1:4]
logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
sent = []
with rf.Client.reso(url + "/reso/odata", token="reso-token", cache_dir=cache, progress=False,
                    event_hooks={"request": [lambda r: sent.append(r.url.path)]}) as client:
    market = client.sync_listings(wait=120)
    info = client.last_load
with open(out, "w") as f:
    json.dump({"sent": sent, "from_cache": info.from_cache, "requests": info.requests,
               "rows": len(market)}, f)
"""


def test_a_reso_sync_in_another_process_waits_and_takes_the_market(
    start_sandbox: Any, tmp_path: Path
) -> None:
    """The scope's lock holds across processes: this process syncs, paused at its first
    request; a sync in a child process waits for it (its log line), then takes the market from
    the cache with no request."""
    sb = start_sandbox(listings=1500)
    go, asked = threading.Event(), threading.Event()

    def hook(request: httpx.Request) -> None:
        asked.set()
        go.wait(60)

    client = rf.Client.reso(sb.url + "/reso/odata", token="reso-token", progress=False,
                            cache_dir=tmp_path, event_hooks={"request": [hook]})  # fmt: skip
    OPEN.append(client)
    found: dict[str, Any] = {}
    first = threading.Thread(target=lambda: found.update(market=client.sync_listings()))
    first.start()
    child = None
    try:
        assert asked.wait(60)
        env = {k: v for k, v in os.environ.items() if not k.startswith("REALTYFRAMES_")}
        env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
        out = tmp_path / "child.json"
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, sb.url, str(tmp_path), str(out)],
            env=env, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert child.stderr is not None
        for line in child.stderr:
            if "waiting up to 120 s" in line:
                break
        else:
            raise AssertionError("the child never waited")
    finally:
        go.set()
    first.join(120)
    assert child is not None
    child.communicate(timeout=120)
    assert child.returncode == 0
    got = json.loads(out.read_text())
    assert got["sent"] == [] and got["from_cache"] and got["requests"] == 0
    assert got["rows"] == len(found["market"]) > 0
