"""A RESO vendor's budgets on the client: counted across runs in the cache's state, a run that
would pass one stops before sending with the time it may go on, a vendor's suspension stops the
run at once and the next run resumes from its checkpoint: 0 keys lost, 0 twice."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest

import realtyframes as rf
from realtyframes.reso import BudgetExhaustedError

SYSTEM = "rfsandbox"
T0 = 1_800_000_000.0  # on an hour's boundary
_OPEN: list[rf.Client] = []


@pytest.fixture(autouse=True)
def _closed() -> Iterator[None]:
    yield
    while _OPEN:
        _OPEN.pop().close()


class Clock:
    """The budgets' clock, moved by the test (no waiting)."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def _reso(url: str, tmp_path: Path, clock: Clock, **options: Any) -> rf.Client:
    client = rf.Client.reso(
        url + "/reso/odata",
        token="mls-token",
        vendor="mlsgrid",
        originating_system=SYSTEM,
        page_size=25,
        cache_dir=tmp_path,
        progress=False,
        budget_clock=clock,
        **options,
    )
    _OPEN.append(client)
    return client


def _usage(url: str) -> dict[str, Any]:
    accounts = httpx.get(url + "/_sandbox/reso/usage").json()["tokens"]
    (only,) = accounts.values()
    return only  # type: ignore[no-any-return]


def _platform(url: str, tmp_path: Path) -> pd.DataFrame:
    client = rf.Client(url, api_key="k", cache_dir=tmp_path / "platform", progress=False)
    _OPEN.append(client)
    return client.sync_listings()


def _check_whole(got: pd.DataFrame, hidden_free: pd.DataFrame) -> None:
    assert got["ListingId"].is_unique  # 0 duplicated keys
    assert set(got["ListingId"]) == set(hidden_free["ListingId"])  # 0 missing keys


def test_a_budget_is_kept_across_runs_and_says_when_to_go_on(
    start_sandbox: Any, tmp_path: Path
) -> None:
    sb = start_sandbox(reso_vendor="mlsgrid", reso_hidden_share=0.0, reso_budgets="second=1000")
    clock = Clock()
    first = _reso(sb.url, tmp_path, clock, budgets={"second": 1000, "hour": 4})
    with pytest.raises(BudgetExhaustedError, match="hour budget of 4 requests") as caught:
        first.sync_listings()
    assert caught.value.budget == "hour"
    assert caught.value.resume_at.timestamp() == T0 + 3600 + 60  # the oldest minute leaves
    sent = _usage(sb.url)["requests"]
    assert sent == 4
    # another run (another client, the same cache): refused before any request
    second = _reso(sb.url, tmp_path, clock, budgets={"second": 1000, "hour": 4})
    with pytest.raises(BudgetExhaustedError, match="may go on at"):
        second.sync_listings()
    assert _usage(sb.url)["requests"] == sent
    # each next hour: it goes on from its checkpoint, at most 4 requests a run
    runs, resume_at = 2, caught.value.resume_at.timestamp()
    while True:
        clock.now = resume_at
        runs += 1
        before = _usage(sb.url)["requests"]
        try:
            got = _reso(
                sb.url, tmp_path, clock, budgets={"second": 1000, "hour": 4}
            ).sync_listings()
            break
        except BudgetExhaustedError as again:
            resume_at = again.resume_at.timestamp()
            assert runs < 40
        finally:
            assert _usage(sb.url)["requests"] - before <= 4
    assert runs > 3
    _check_whole(got, _platform(sb.url, tmp_path))


def test_a_suspension_stops_at_once_and_resumes_without_loss(
    start_sandbox: Any, tmp_path: Path
) -> None:
    sb = start_sandbox(
        reso_vendor="mlsgrid",
        reso_hidden_share=0.0,
        reso_budgets="second=1000,hour=3",
        reso_budget_clock="manual",
    )
    clock = Clock()
    client = _reso(sb.url, tmp_path, clock, budgets={"second": 1000})  # the server's hour: 3
    with pytest.raises(BudgetExhaustedError, match="suspended") as caught:
        client.sync_listings()
    usage = _usage(sb.url)
    assert usage["requests"] == 3 and usage["refused_429"] == 1 and usage["refused_403"] == 0
    assert caught.value.budget == "suspended" and caught.value.resume_at.timestamp() > T0
    # a run during the suspension sends nothing (no 403 storm)
    with pytest.raises(BudgetExhaustedError):
        _reso(sb.url, tmp_path, clock, budgets={"second": 1000}).sync_listings()
    assert _usage(sb.url)["refused_403"] == 0 and _usage(sb.url)["refused_429"] == 1
    # each window's end on both sides: the run goes on from the pages it kept, 3 per hour,
    # stopped by each suspension at its first refusal (one 429 per window, never a 403)
    suspensions, resume_at = 1, caught.value.resume_at.timestamp()
    while True:
        httpx.post(
            sb.url + "/_sandbox/reso/usage", json={"advance_seconds": 3600}
        ).raise_for_status()
        clock.now = resume_at
        try:
            got = _reso(sb.url, tmp_path, clock, budgets={"second": 1000}).sync_listings()
            break
        except BudgetExhaustedError as again:
            suspensions += 1
            resume_at = again.resume_at.timestamp()
            assert suspensions < 40
    usage = _usage(sb.url)
    assert suspensions > 1 and usage["refused_429"] == suspensions
    assert usage["refused_403"] == 0 and usage["peak"]["hour"] <= 3
    _check_whole(got, _platform(sb.url, tmp_path))


def test_budget_overrides_are_checked_before_any_request(tmp_path: Path) -> None:
    with pytest.raises(rf.QueryError, match="budgets: unknown budget 'minute'"):
        rf.Client.reso("http://127.0.0.1:9", token="t", budgets={"minute": 5}, cache_dir=tmp_path)
    with pytest.raises(rf.QueryError, match="hour: expected an integer"):
        rf.Client.reso("http://127.0.0.1:9", token="t", budgets={"hour": 0}, cache_dir=tmp_path)
