"""Cron-friendly exit codes and the scope lock on the command line (#28): two ``report market``
processes at once on one scope and cache make the change-feed and search requests of one sync
(counted by a proxy in front of the sandbox) and write the same market; a lock held past
``--wait 0`` exits 75 with the ScopeBusyError line; ``report market``, ``fetch`` and ``watch run``
exit 3 when a run they recorded was flagged (a sandbox whose scope shrinks)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pandas as pd
import pytest

import realtyframes as rf
from faultproxy import FaultProxy
from realtyframes.cache import file_lock
from realtyframes.cli import main
from realtyframes.cli.config import EXIT_ANOMALY, EXIT_BUSY, EXIT_OK
from realtyframes.loaders import sync_lock
from realtyframes.report import read_report_data
from realtyframes.sandbox import RunningSandbox

SRC = Path(__file__).resolve().parents[2] / "src"
MARKET = {"PropertyType": "Residential"}  # the scope of a report without --city
REPORT = ["report", "market", "--as-of", "2026-06-30", "--chart-workers", "0"]


def _subprocess(args: list[str], home: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REALTYFRAMES_")}
    env.update(PYTHONPATH=os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")]), HOME=str(home))
    return subprocess.Popen(
        [sys.executable, "-m", "realtyframes.cli", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_line(process: subprocess.Popen[str], text: str) -> list[str]:
    assert process.stderr is not None
    seen = []
    for line in process.stderr:
        seen.append(line)
        if text in line:
            return seen
    raise AssertionError(f"{text!r} never logged: {seen}")


def _listing_requests(proxy: FaultProxy) -> int:
    """Searches, change-feed pages and details the proxy forwarded."""
    return sum(n for path, n in proxy.paths.items() if path.startswith("/v1/listings"))


def test_two_report_market_processes_at_once_sync_once(
    tmp_path: Path,
    start_sandbox: Callable[..., RunningSandbox],
    fault_proxy: Callable[[str], FaultProxy],
    http_client: httpx.Client,
) -> None:
    """An earlier run holds the market's lock (the test) while two reports start; both wait;
    once it is free, one syncs and the other takes that sync: a first sync, then (10 days on)
    an incremental one."""
    sandbox = start_sandbox()
    proxy = fault_proxy(sandbox.url)
    cache = tmp_path / "cache"
    flags = ["--base-url", proxy.url, "--cache-dir", str(cache), "--wait", "120", "-v"]
    with rf.Client(proxy.url, cache_dir=cache, progress=False) as client:
        lock = sync_lock(client.session, MARKET)
    assert lock is not None
    for round_, days in ((1, 0), (2, 10)):
        if days:
            http_client.post(f"{sandbox.url}/_sandbox/clock", json={"advance_days": days})
        proxy.set(None)  # the counts start afresh
        with file_lock(lock, timeout=5):
            runs = [
                _subprocess([*REPORT, "--out", str(tmp_path / f"{name}{round_}"), *flags], tmp_path)
                for name in ("a", "b")
            ]
            for process in runs:
                seen = _wait_for_line(process, "waiting up to 120 s")
                assert any("another run is syncing PropertyType=Residential" in s for s in seen)
        with ThreadPoolExecutor(2) as pool:
            done = list(pool.map(lambda p: p.communicate(timeout=300), runs))
        for process, (_out, err) in zip(runs, done, strict=True):
            assert process.returncode == EXIT_OK, err
        assert sum("another run synced it meanwhile" in err for _, err in done) == 1
        with rf.Client(proxy.url, cache_dir=cache, progress=False) as client:
            state = client.sync_state(**MARKET)
            history = client.runs()
        assert state is not None and state["syncs"] == round_  # one sync per round, not two
        syncs = history[history["kind"] == "sync"].tail(2)
        assert sorted(syncs["from_cache"].astype(bool)) == [False, True]
        own, shared = syncs[~syncs["from_cache"].astype(bool)], syncs[syncs["from_cache"]]
        assert _listing_requests(proxy) == int(own["requests"].iloc[0]) > 0
        assert _listing_requests(proxy) == state["last_requests"]["total"]
        assert int(shared["requests"].iloc[0]) == 0
        reports = history[history["kind"] == "report"].tail(2)
        assert (reports["outcome"] == "ok").all() and reports["rows"].nunique() == 1
        frames = [read_report_data(Path(out.strip())) for out, _ in done]
        names = ["listings", "changes", *(["since-last"] if round_ == 2 else [])]
        for name in names:  # the market, its history and (2nd round) what the sync changed
            pd.testing.assert_frame_equal(frames[0][name], frames[1][name])
        assert round_ == 1 or len(frames[0]["since-last"]) > 0


def test_report_market_exits_75_when_the_market_stays_busy_past_wait(
    tmp_path: Path,
    start_sandbox: Callable[..., RunningSandbox],
    capsys: pytest.CaptureFixture[str],
) -> None:
    sandbox = start_sandbox()
    cache = tmp_path / "cache"
    flags = ["--base-url", sandbox.url, "--cache-dir", str(cache), "--out", str(tmp_path / "r")]
    with rf.Client(sandbox.url, cache_dir=cache, progress=False) as client:
        lock = sync_lock(client.session, MARKET)
        assert lock is not None
        with file_lock(lock, timeout=5):  # another run syncing the market
            assert main([*REPORT, *flags, "--wait", "0"]) == EXIT_BUSY
        out, err = capsys.readouterr()
        assert out == "" and not (tmp_path / "r").exists()
        assert err.strip().splitlines()[-1] == (
            "realtyframes report: error: ScopeBusyError: another run kept syncing "
            "PropertyType=Residential for over 0 s; this run synced nothing (run it again "
            "later, or give a longer wait: --wait, wait=)"
        )
        runs = client.runs()
        assert runs[["kind", "outcome", "error_code"]].values.tolist() == [
            ["report", "failed", "ScopeBusyError"],  # started first: the sync is inside it
            ["sync", "failed", "ScopeBusyError"],
        ]
        assert client.sync_state(**MARKET) is None  # nothing was synced
    with pytest.raises(SystemExit) as usage:
        main([*REPORT, "--wait", "-1"])
    assert usage.value.code == 2


def _advance(http_client: httpx.Client, sandbox: RunningSandbox, days: int) -> None:
    http_client.post(
        f"{sandbox.url}/_sandbox/clock", json={"advance_days": days}
    ).raise_for_status()


def test_fetch_and_watch_run_exit_3_when_a_run_is_flagged(
    tmp_path: Path,
    start_sandbox: Callable[..., RunningSandbox],
    http_client: httpx.Client,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """60 days on, the sandbox's Pending listings are far fewer: the fetch of them and the watch
    of them are flagged (rows fell), and exit 3; the same again is not flagged (0)."""
    sandbox = start_sandbox()
    flags = ["--base-url", sandbox.url, "--cache-dir", str(tmp_path / "cache")]
    fetch = ["fetch", "listings", "--Status", "Pending", "--out", str(tmp_path / "p.parquet")]
    assert main([*fetch, *flags]) == EXIT_OK
    assert main(["watch", "add", "pending", "--Status", "Pending", *flags]) == EXIT_OK
    assert main(["watch", "run", *flags]) == EXIT_OK
    before = len(pd.read_parquet(tmp_path / "p.parquet"))
    capsys.readouterr()
    _advance(http_client, sandbox, 60)
    assert main([*fetch, "--refresh", "--quiet", *flags]) == EXIT_ANOMALY
    after = len(pd.read_parquet(tmp_path / "p.parquet"))
    assert after < 0.8 * before
    err = capsys.readouterr().err
    assert err.startswith("realtyframes fetch: warning: RunAnomalyWarning: load of listings")
    assert f"rows fell {(before - after) / before:.0%}" in err  # said even with --quiet
    assert main(["watch", "run", *flags]) == EXIT_ANOMALY
    out, err = capsys.readouterr()
    assert out.startswith("pending: ") and "RunAnomalyWarning: watch of pending" in err
    assert main([*fetch, "--refresh", *flags]) == EXIT_OK  # the same rows again
    assert main(["watch", "run", *flags]) == EXIT_OK


def test_report_market_exits_3_when_its_market_shrinks(
    tmp_path: Path,
    start_sandbox: Callable[..., RunningSandbox],
    fault_proxy: Callable[[str], FaultProxy],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Behind one URL (a proxy), a server with half the listings: the reloaded market (and so
    the report) has far fewer rows than the last run's; flagged, exit 3."""
    proxy = fault_proxy(start_sandbox().url)
    smaller = start_sandbox(listings=200)
    flags = ["--base-url", proxy.url, "--cache-dir", str(tmp_path / "cache")]
    report = [*REPORT, "--out", str(tmp_path / "r"), *flags]
    assert main(report) == EXIT_OK
    capsys.readouterr()
    proxy.upstream = smaller.url
    assert main([*report, "--refresh"]) == EXIT_ANOMALY
    out, err = capsys.readouterr()
    assert out.strip().endswith(".html")  # written all the same
    assert "RunAnomalyWarning: sync of market" in err and "RunAnomalyWarning: report of" in err
    with rf.Client(proxy.url, cache_dir=tmp_path / "cache", progress=False) as client:
        flagged = client.runs().dropna(subset=["anomaly"])
    assert set(flagged["kind"]) == {"sync", "report"}
