"""``realtyframes runs [--last N] [--failed]``, ``fetch listings --dry-run``, and the record a
``report market`` appends to the run history. In-process through :func:`realtyframes.cli.main`,
on real sandboxes on loopback."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import realtyframes as rf
from realtyframes.cache import read_runs
from realtyframes.cli import main
from realtyframes.sandbox import Faults, RunningSandbox


def _history(url: str, cache: Path, bad_url: str) -> None:
    """Three good loads and one failed one."""
    with rf.Client(url, cache_dir=cache, progress=False) as client:
        client.listings(City="Miami", Status="Pending")
        client.listings(City="Doral", Status="Pending")
        client.analytics("7d")
    with (
        rf.Client(bad_url, cache_dir=cache, progress=False, max_retries=0) as client,
        pytest.raises(rf.ServerError),
    ):
        client.listings(City="Miami", Status="Pending")


def test_runs_prints_the_history_with_last_and_failed(
    sandbox_url: str,
    start_sandbox: Callable[..., RunningSandbox],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cache = tmp_path / "cache"
    assert main(["runs", "--cache-dir", str(cache)]) == 0
    assert capsys.readouterr().out == f"no runs recorded in {cache / 'runs'}\n"

    failing = start_sandbox(faults=Faults(error_rate=1.0))
    _history(sandbox_url, cache, failing.url)

    assert main(["runs", "--cache-dir", str(cache)]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert len(lines) == 1 + 4 and err == f"4 runs in {cache / 'runs'}\n"
    assert lines[0].split()[:4] == ["started", "kind", "resource", "scope"]
    assert '{"City": "Miami", "Status": "Pending"}' in lines[1]
    assert "analytics" in lines[3] and "ServerError" in lines[4] and "failed" in lines[4]

    assert main(["runs", "--cache-dir", str(cache), "--last", "2"]) == 0
    last = capsys.readouterr().out.splitlines()
    assert [line.split() for line in last[1:]] == [line.split() for line in lines[3:]]

    assert main(["runs", "--cache-dir", str(cache), "--failed"]) == 0
    failed = capsys.readouterr().out.splitlines()
    assert [line.split() for line in failed[1:]] == [lines[4].split()]
    assert main(["runs", "--cache-dir", str(cache), "--failed", "--last", "1"]) == 0
    assert [line.split() for line in capsys.readouterr().out.splitlines()[1:]] == [lines[4].split()]


def test_runs_refuses_a_bad_count(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["runs", "--last", "0"])
    assert exited.value.code == 2 and "too small" in capsys.readouterr().err


def test_fetch_dry_run_prints_the_plan_and_fetches_nothing(
    sandbox_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache"
    args = ["--base-url", sandbox_url, "--cache-dir", str(cache), "-q"]
    assert main(["fetch", "listings", "--City", "Miami", "--details", "--dry-run", *args]) == 0
    out, err = capsys.readouterr()
    with rf.Client(sandbox_url, cache_dir=cache, progress=False) as client:
        plan = client.plan_listings(City="Miami", details=True)
    assert out == f"{plan!r}\n" and err == ""
    assert f"-> {plan.requests:,} requests" in out
    assert not (cache / "listings").exists() and not (cache / "runs").exists()

    assert main(["fetch", "listings", "--City", "Miami", *args]) == 1  # no --out, no --dry-run
    assert "--out: missing" in capsys.readouterr().err


def test_a_report_appends_its_own_record(
    start_sandbox: Callable[..., RunningSandbox],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    sandbox = start_sandbox()
    cache = tmp_path / "cache"
    args = ["--base-url", sandbox.url, "--cache-dir", str(cache), "--out", str(tmp_path / "r")]
    argv = ["report", "market", "--city", "Miami", "--as-of", "2026-06-30", "-q", *args]
    assert main([*argv, "--chart-workers", "0"]) == 0
    capsys.readouterr()
    runs = read_runs(cache)
    report = runs[runs["kind"] == "report"]
    assert len(report) == 1 and report["outcome"].iloc[0] == "ok"
    assert report["scope"].iloc[0] == (
        '{"City": "Miami", "PropertyType": "Residential", "by": "City", "window_days": "90"}'
    )
    loads = runs[runs["kind"] != "report"]
    assert report["requests"].iloc[0] == loads["requests"].sum()  # its syncs and loads
    sync = runs[runs["kind"] == "sync"]
    assert report["rows"].iloc[0] == sync["rows"].iloc[0]  # the market's listings
    assert report["started"].iloc[0] <= loads["started"].min()
    assert report["finished"].iloc[0] >= loads["finished"].max()


def test_report_dry_run_prints_each_syncs_plan_and_writes_nothing(
    sandbox_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache, out = tmp_path / "cache", tmp_path / "reports"
    argv = ["report", "market", "--city", "Miami", "Doral", "--dry-run", "-q"]
    args = ["--base-url", sandbox_url, "--cache-dir", str(cache), "--out", str(out)]
    assert main([*argv, *args]) == 0
    lines = capsys.readouterr().out.splitlines()
    with rf.Client(sandbox_url, cache_dir=cache, progress=False) as client:
        plans = [client.plan_sync(City=c, PropertyType="Residential") for c in ("Miami", "Doral")]
    assert lines[:2] == [repr(p) for p in plans]
    total = sum(p.requests for p in plans)
    assert lines[2].startswith(f"total: {total:,} requests for 2 syncs")
    assert not out.exists() and not (cache / "market").exists() and not (cache / "runs").exists()
