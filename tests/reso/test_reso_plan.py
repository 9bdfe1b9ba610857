"""Plans on a RESO client: ``plan_sync`` / ``plan_listings`` (and ``fetch --dry-run``) count the
RESO requests the run will make (its nextLink pages, from ``@odata.count``), checked against the
requests the sandbox counted for the run itself: a first sync, an incremental one, the key
reconcile, a search."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

import realtyframes as rf
from realtyframes.cli import main
from realtyframes.reso._sync import RECONCILE_EVERY
from reso_clients import OPEN


def _sent(url: str) -> int:
    """The RESO requests the sandbox counted (one token)."""
    tokens = httpx.get(url + "/_sandbox/reso/usage").json()["tokens"]
    assert len(tokens) <= 1
    return sum(int(t["requests"]) for t in tokens.values())


def _client(url: str, tmp_path: Path, **options: Any) -> rf.Client:
    client = rf.Client.reso(
        url + "/reso/odata", token="reso-token", cache_dir=tmp_path, progress=False, **options
    )
    OPEN.append(client)
    return client


def _check(url: str, plan: rf.Plan, run: Any) -> int:
    """Run ``run``; the plan's requests against the sandbox's count of the run's (within 5 %;
    a RESO plan counts exactly). The run's requests."""
    before = _sent(url)
    run()
    made = _sent(url) - before
    assert made > 1
    assert abs(plan.requests - made) <= 0.05 * made, (plan, made)
    assert plan.requests == made  # pages of a full page size each: exact
    return made


@pytest.mark.parametrize(
    ("vendor", "options"),
    [
        ("generic", {"page_size": 50}),
        ("trestle", {"page_size": 100}),
        ("bridge", {"page_size": 40}),
        ("generic", {"page_size": 60, "history": "synthesised"}),
    ],
)
def test_plan_sync_counts_the_requests_of_first_and_incremental_syncs(
    start_sandbox: Any, tmp_path: Path, vendor: str, options: dict[str, Any]
) -> None:
    sb = start_sandbox(listings=1500, reso_vendor=vendor)
    client = _client(sb.url, tmp_path, vendor=vendor, **options)
    plan = client.plan_sync()
    assert (plan.operation, plan.mode) == ("sync_listings", "first sync") and plan.probes >= 1
    _check(sb.url, plan, client.sync_listings)
    assert plan.rows == len(client.sync_listings(wait=0))  # the market's size, from $count
    assert plan.feed > 0 if options.get("history") is None else plan.feed == 0
    httpx.post(f"{sb.url}/_sandbox/clock", json={"advance_days": 20}).raise_for_status()
    plan = client.plan_sync()
    assert plan.mode == "incremental" and plan.rows > 0
    _check(sb.url, plan, client.sync_listings)


def test_plan_sync_counts_the_key_reconcile_when_it_is_due(
    start_sandbox: Any, tmp_path: Path
) -> None:
    sb = start_sandbox(listings=1500, reso_vendor="trestle")
    client = _client(sb.url, tmp_path, vendor="trestle", page_size=100)
    client.sync_listings()
    for _ in range(RECONCILE_EVERY - 1):
        client.sync_listings()
    due = client.plan_sync()
    assert any("key reconcile" in note for note in due.notes)
    made = _check(sb.url, due, client.sync_listings)
    plain = client.plan_sync(reconcile=False)
    assert not any("key reconcile" in note for note in plain.notes)
    assert plain.requests < made
    _check(sb.url, plain, lambda: client.sync_listings(reconcile=False))


def test_plan_listings_counts_the_search_pages(start_sandbox: Any, tmp_path: Path) -> None:
    sb = start_sandbox(listings=1500)
    client = _client(sb.url, tmp_path, page_size=25)
    plan = client.plan_listings(Status="Closed")
    assert (plan.operation, plan.mode, plan.details) == ("listings", "search", 0)
    _check(sb.url, plan, lambda: client.listings(Status="Closed"))
    assert plan.rows == len(client.listings(Status="Closed"))
    capped = client.plan_listings(Status="Closed", max_results=60)
    assert (capped.rows, capped.requests) == (60, 3)
    with pytest.raises(rf.QueryError) as bad:
        client.plan_listings(details=True)
    assert bad.value.param == "details"


def test_a_plan_on_mlsgrid_counts_the_time_at_its_budgets(
    start_sandbox: Any, tmp_path: Path
) -> None:
    sb = start_sandbox(reso_vendor="mlsgrid")
    client = _client(sb.url, tmp_path, vendor="mlsgrid", originating_system="rfsandbox",
                     page_size=50)  # fmt: skip
    plan = client.plan_sync()
    assert (plan.limit, plan.window) == (2, 1.0)  # the finest budget: 2 requests a second
    assert plan.seconds == plan.requests / 2
    _check(sb.url, plan, client.sync_listings)


def test_fetch_dry_run_on_the_reso_source_prints_its_plan(
    start_sandbox: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    sb = start_sandbox(listings=1500)
    monkeypatch.setenv("RF_TEST_MLS_TOKEN", "mls-secret-token")
    config = tmp_path / "config.toml"
    config.write_text(
        f'[reso]\nbase_url = "{sb.url}/reso/odata"\nvendor = "generic"\n'
        'token_env = "RF_TEST_MLS_TOKEN"\npage_size = 30\n'
    )
    before = _sent(sb.url)
    assert main(["fetch", "listings", "--Status", "Closed", "--dry-run", "--config", str(config),
                 "--source", "reso", "--cache-dir", str(tmp_path / "c"), "-q"]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert printed.startswith("Plan(listings search: ")
    assert _sent(sb.url) - before == 2  # $metadata (the server's lookups), the count: no page
    client = _client(sb.url, tmp_path / "c2", page_size=30)
    assert printed.strip() == repr(client.plan_listings(Status="Closed"))


def test_report_dry_run_on_the_reso_source_counts_the_report_s_sync(
    start_sandbox: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    sb = start_sandbox(listings=1500)
    monkeypatch.setenv("RF_TEST_MLS_TOKEN", "mls-secret-token")
    config = tmp_path / "config.toml"
    config.write_text(
        f'[reso]\nbase_url = "{sb.url}/reso/odata"\nvendor = "generic"\n'
        'token_env = "RF_TEST_MLS_TOKEN"\npage_size = 40\n'
    )
    common = ["report", "market", "--city", "Miami Beach", "--config", str(config), "--source",
              "reso", "--cache-dir", str(tmp_path / "c"), "-q"]  # fmt: skip
    assert main([*common, "--dry-run"]) == 0
    (line, *_) = capsys.readouterr().out.splitlines()
    assert line.startswith("Plan(sync_listings first sync: ")
    planned = int(line.split(" -> ")[1].split(" requests")[0].replace(",", ""))
    before = _sent(sb.url)
    assert main([*common, "--out", str(tmp_path / "report")]) == 0
    made = _sent(sb.url) - before
    # the report's own client reads $metadata again (the plan's client read it: a probe)
    assert made == planned + 1 and abs(planned - made) <= 0.05 * made
