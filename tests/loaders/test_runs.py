"""The run history of a client: every load and sync appends one record, checked against what an
httpx request hook counted and what the frames hold; failures, retries and 429s, secrets, and an
anomaly flagged on a sandbox whose scope shrinks. Real sandboxes on loopback."""

from __future__ import annotations

import sqlite3
import threading
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest

import realtyframes as rf
from realtyframes.cache import RUN_COLUMNS, state_file
from realtyframes.loaders import ENDPOINTS, LoadInfo, LoadResult, run_load
from realtyframes.sandbox import DEMO, Faults, RunningSandbox


class Hook:
    """Counts every request a client sends and the statuses of the answers."""

    def __init__(self) -> None:
        self.requests = 0
        self.statuses: Counter[int] = Counter()

    def hooks(self) -> dict[str, list[Callable[..., Any]]]:
        return {"request": [self.on_request], "response": [self.on_response]}

    def on_request(self, request: httpx.Request) -> None:
        self.requests += 1

    def on_response(self, response: httpx.Response) -> None:
        self.statuses[response.status_code] += 1


@pytest.fixture
def make(tmp_path: Path) -> Iterator[Callable[..., tuple[rf.Client, Hook]]]:
    clients: list[rf.Client] = []

    def _make(url: str, **options: Any) -> tuple[rf.Client, Hook]:
        hook = Hook()
        options.setdefault("cache_dir", tmp_path / "cache")
        client = rf.Client(url, progress=False, event_hooks=hook.hooks(), **options)
        clients.append(client)
        return client, hook

    yield _make
    for client in clients:
        client.close()


def last_run(client: rf.Client) -> pd.Series:
    return client.runs().iloc[-1]


def test_each_load_appends_a_record_matching_the_hook_and_the_frame(
    make: Callable[..., tuple[rf.Client, Hook]], sandbox_url: str, tmp_path: Path
) -> None:
    client, hook = make(sandbox_url)
    frame = client.listings(City="Miami", Status="Closed")
    run = last_run(client)
    assert (run.kind, run.resource, run.outcome) == ("load", "listings", "ok")
    assert run.requests == hook.requests and run.retries == 0 and run.throttled == 0
    assert run.rows == len(frame) and run.quarantined == len(client.last_load.quarantine)  # type: ignore[union-attr]
    assert run.scope == '{"City": "Miami", "Status": "Closed"}' and not run.from_cache
    assert run.started <= run.finished and run.toolkit_version == rf.__version__
    assert pd.isna(run.resumed_from) and pd.isna(run.anomaly) and pd.isna(run.error_code)

    client.listings(City="Miami", Status="Closed")  # a cache hit is a run of no request
    hit = last_run(client)
    assert hit.from_cache and hit.requests == 0 and hit.rows == len(frame)
    assert hit.scope_key == run.scope_key

    before = hook.requests
    detail = client.listings(City="Miami", Status="Pending", details=True)
    run = last_run(client)
    assert run.requests == hook.requests - before and run.rows == len(detail)
    assert run.scope == '{"City": "Miami", "Status": "Pending", "details": "true"}'

    analytics = client.analytics("7d", Device="mobile")
    run = last_run(client)
    assert (run.resource, run.requests, run.rows) == ("analytics", 1, len(analytics.overview))
    assert list(client.runs().columns) == list(RUN_COLUMNS) and len(client.runs()) == 4
    assert len(client.runs(last=2)) == 2 and client.runs(failed=True).empty

    # another SQLite reader (DuckDB's sqlite_scan runs this SQL) sees the same table
    uri = f"file:{state_file(tmp_path / 'cache')}?mode=ro"
    with closing(sqlite3.connect(uri, uri=True)) as db:
        seen = db.execute("SELECT resource, requests FROM runs ORDER BY started").fetchall()
    assert [s[1] for s in seen] == client.runs()["requests"].tolist()
    assert [s[0] for s in seen] == ["listings", "listings", "listings", "analytics"]


def test_the_loaders_return_results_and_last_load_is_kept_per_thread(
    make: Callable[..., tuple[rf.Client, Hook]], sandbox_url: str
) -> None:
    client, hook = make(sandbox_url)
    result = run_load(client.session, ENDPOINTS["listings"], {}, max_results=60)
    assert client.last_load is None  # the result comes back; nothing is set on the side
    assert len(result.frame) == result.rows == 60 and result.requests == hook.requests
    run = last_run(client)  # the load is its own run, counted from the result it returned
    assert (run.kind, run.requests, run.rows, run.from_cache) == ("load", hook.requests, 60, False)

    frame = client.listings(max_results=60)  # the same load: a cache hit
    kept = client.last_load
    assert isinstance(kept, LoadInfo) and not isinstance(kept, LoadResult)  # a report, no rows
    assert kept.from_cache and kept.rows == len(frame) and kept.requests == 0
    seen: dict[str, LoadInfo | None] = {}

    def other_thread() -> None:
        seen["before"] = client.last_load
        client.contacts()
        seen["after"] = client.last_load

    thread = threading.Thread(target=other_thread)
    thread.start()
    thread.join()
    assert seen["before"] is None  # each thread sees the report of its own latest call
    assert seen["after"] is not None and seen["after"].resource == "contacts"
    assert client.last_load is kept


def test_a_sync_records_its_requests_and_what_it_changed(
    make: Callable[..., tuple[rf.Client, Hook]],
    start_sandbox: Callable[..., RunningSandbox],
    http_client: httpx.Client,
) -> None:
    sandbox = start_sandbox()
    client, hook = make(sandbox.url)
    market = client.sync_listings(City="Miami")
    first = last_run(client)
    assert (first.kind, first.resource) == ("sync", "market")
    assert first.requests == hook.requests and first.rows == len(market)
    assert pd.isna(first.new)  # a full load: nothing to compare with
    http_client.post(f"{sandbox.url}/_sandbox/clock", json={"advance_days": 20}).raise_for_status()
    before = hook.requests
    market = client.sync_listings(City="Miami", PropertyType="Residential")  # the same scope
    run = last_run(client)
    changes = client.last_load.changes  # type: ignore[union-attr]
    assert changes is not None and len(changes)
    kinds = changes["change"].astype(str)
    assert run.scope_key == first.scope_key
    assert run.requests == hook.requests - before and run.rows == len(market)
    assert run.new == (kinds == "new").sum() and run.removed == (kinds == "removed").sum()
    moved = changes.loc[~kinds.isin(["new", "removed"]), "ListingId"].nunique()
    assert run.changed == moved and run.changed > 0


def test_retries_and_429s_are_counted(
    make: Callable[..., tuple[rf.Client, Hook]], start_sandbox: Callable[..., RunningSandbox]
) -> None:
    sandbox = start_sandbox(faults=Faults(burst_429=1, burst_every=4, retry_after=0))
    client, hook = make(sandbox.url, max_concurrency=1)
    client.listings(Status="Closed", City="Miami", details=True)
    run = last_run(client)
    assert hook.statuses[429] > 0
    assert run.throttled == hook.statuses[429] and run.retries == hook.statuses[429]
    assert run.requests == hook.requests == sum(hook.statuses.values())


def test_a_failed_run_is_recorded_with_its_error_class(
    make: Callable[..., tuple[rf.Client, Hook]], start_sandbox: Callable[..., RunningSandbox]
) -> None:
    sandbox = start_sandbox(faults=Faults(error_rate=1.0))
    client, hook = make(sandbox.url, max_retries=1)
    with pytest.raises(rf.ServerError):
        client.listings(City="Miami")
    run = last_run(client)
    assert (run.outcome, run.error_code) == ("failed", "ServerError")
    assert run.requests == hook.requests == 2 and run.retries == 1
    assert pd.isna(run.rows)  # nothing was returned
    assert client.runs(failed=True)["run_id"].tolist() == [run.run_id]
    with pytest.raises(rf.QueryError):  # refused before any request: not a run
        client.listings(city="Miami")
    assert len(client.runs()) == 1


def test_no_secret_reaches_the_runs_files(
    make: Callable[..., tuple[rf.Client, Hook]],
    protected_sandbox_url: str,
    tmp_path: Path,
) -> None:
    key = DEMO.api_key
    password = "pw-hunter2-7f3a"
    url = httpx.URL(protected_sandbox_url)
    with_password = str(url.copy_with(username="analyst", password=password))
    client, _ = make(with_password, api_key=key)
    client.listings(City="Miami", Status="Pending")
    with pytest.raises(rf.ApiError):
        client.contacts()  # an API key may not read /v1/contacts: a failed run
    with pytest.warns(rf.ApiDeprecationWarning):  # the key travels in the query string there
        client.legacy_contacts()
    runs = client.runs()
    assert runs["outcome"].tolist() == ["ok", "failed", "ok"]
    assert runs["host"].str.contains("analyst").sum() == 0
    state = state_file(tmp_path / "cache")
    data = b"".join(p.read_bytes() for p in state.parent.glob("state.sqlite3*"))
    assert b"legacy_contacts" in data or b"contacts" in data  # the records are in these bytes
    assert key.encode() not in data and password.encode() not in data
    assert state.stat().st_mode & 0o777 == 0o600


def test_a_shrinking_scope_is_flagged(
    make: Callable[..., tuple[rf.Client, Hook]],
    start_sandbox: Callable[..., RunningSandbox],
    http_client: httpx.Client,
) -> None:
    sandbox = start_sandbox()
    client, _ = make(sandbox.url)
    before = client.listings(Status="Pending")
    http_client.post(f"{sandbox.url}/_sandbox/clock", json={"advance_days": 60}).raise_for_status()
    with pytest.warns(rf.RunAnomalyWarning, match="rows fell"):
        after = client.listings(Status="Pending", refresh=True)
    assert len(after) < 0.8 * len(before) and len(before) >= 20  # the sandbox's market shrank
    runs = client.runs()
    assert pd.isna(runs["anomaly"].iloc[0])
    assert f"({len(before)} -> {len(after)}; flagged above 20%)" in runs["anomaly"].iloc[-1]
    with warnings.catch_warnings():  # the same rows again: not flagged
        warnings.simplefilter("error", rf.RunAnomalyWarning)
        client.listings(Status="Pending", refresh=True)
    assert pd.isna(client.runs()["anomaly"].iloc[-1])


def test_a_client_without_cache_records_nothing(sandbox_url: str) -> None:
    with rf.Client(sandbox_url, cache=False, progress=False) as client:
        client.listings(City="Miami", Status="Pending")
        with pytest.raises(ValueError, match="cache=False"):
            client.runs()
        with pytest.raises(rf.QueryError, match="last"):
            client.with_options(cache=True).runs(last=-1)
