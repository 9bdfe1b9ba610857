"""A synced market and its history equal a fresh first sync's, cell for cell: after
``refresh=True`` (the history keeps the changes between the last sync and the refresh) and after
incremental syncs as the server's clock moves (DaysOnMarket of open listings included, which no
feed event reports).

Helpers (the independent full load, the clock, the comparison) come from ``test_sync``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
import pytest
from test_sync import advance, assert_same_market, fresh_market, iso, open_count

import realtyframes as rf
from realtyframes.loaders import listing_history, sync_listings, sync_scope, sync_state

SCOPE = sync_scope({})


@pytest.fixture
def make() -> Iterator[Callable[..., rf.Client]]:
    """``make(url, cache, paths=None)``: a client on ``cache`` (its request paths appended to
    ``paths``), closed after the test."""
    clients: list[rf.Client] = []

    def _make(url: str, cache: Path, paths: list[str] | None = None) -> rf.Client:
        hooks = {"request": [lambda r: paths.append(r.url.path)]} if paths is not None else {}
        client = rf.Client(base_url=url, cache_dir=cache, progress=False, event_hooks=hooks)
        clients.append(client)
        return client

    yield _make
    for client in clients:
        client.close()


def _covered(history: pd.DataFrame, since: pd.Timestamp, ids: pd.Series) -> pd.DataFrame:
    """The history's rows from ``since`` on, of the listings ``ids``, in a stable order."""
    rows = history[(history["ChangeTimestamp"] >= since) & history["ListingId"].isin(ids)]
    order = ["ChangeTimestamp", "ListingId", "ChangeType"]
    return rows.sort_values(order, kind="stable").reset_index(drop=True)


def test_a_refresh_keeps_the_changes_since_the_last_sync_in_the_history(
    start_sandbox, make, http_client, tmp_path
):
    sandbox = start_sandbox()
    client = make(sandbox.url, tmp_path / "a")
    client.sync_listings()
    kept = listing_history(client.session, {})
    watermark = pd.Timestamp(sync_state(client.session, {})["change_watermark"])
    advance(http_client, sandbox.url, 7)  # prices cut, contracts signed, listings closed
    refreshed = sync_listings(client.session, {}, refresh=True).frame
    assert sync_state(client.session, {})["mode"] == "full"
    history = listing_history(client.session, {})

    fresh = make(sandbox.url, tmp_path / "b")
    market = fresh.sync_listings()
    assert_same_market(refreshed, market)
    expected = listing_history(fresh.session, {})
    since = pd.Timestamp(sync_state(fresh.session, {})["history_since"])
    gap = expected[expected["ChangeTimestamp"] > watermark]
    assert len(gap) > 0  # the week's changes the refresh must not lose
    pd.testing.assert_frame_equal(
        _covered(history, since, market["ListingId"]),
        _covered(expected, since, market["ListingId"]),
    )
    # what was kept stays as it was, and nothing is counted twice
    pd.testing.assert_frame_equal(history.iloc[: len(kept)], kept)
    assert not history.duplicated(["ListingId", "ChangeType", "ChangeTimestamp"]).any()
    assert sync_state(client.session, {})["history_since"] == iso(since)  # where it starts


def test_a_refresh_of_a_market_kept_without_history_stays_without_one(
    start_sandbox, make, http_client, tmp_path
):
    sandbox = start_sandbox()
    paths: list[str] = []
    client = make(sandbox.url, tmp_path / "a", paths)
    sync_listings(client.session, {}, history_since=False)
    advance(http_client, sandbox.url, 7)
    paths.clear()
    sync_listings(client.session, {}, refresh=True, history_since=False)
    assert set(paths) == {"/v1/listings"}  # searches only: no history asked for
    assert listing_history(client.session, {}).empty


@pytest.mark.parametrize("days", [3, 0.4, 30])
def test_an_incremental_sync_has_the_servers_days_on_market(
    start_sandbox, make, http_client, tmp_path, days
):
    sandbox = start_sandbox()
    paths: list[str] = []
    client = make(sandbox.url, tmp_path / "a", paths)
    client.sync_listings()
    advance(http_client, sandbox.url, days)
    paths.clear()
    synced = client.sync_listings()
    fresh = fresh_market(http_client, sandbox.url, SCOPE)
    assert open_count(fresh) > 50
    assert_same_market(synced, fresh)  # DaysOnMarket of every listing
    counted = sync_state(client.session, {})["last_requests"]
    assert counted["total"] == len(paths)
    details = sum(p.startswith("/v1/listings/") and p != "/v1/listings/changes" for p in paths)
    assert details == counted["details"]  # the closings' and the clock's
    assert counted["search"] == paths.count("/v1/listings")  # the statuses' and the clock's pages
    # the clock costs a binary search over the open listings at most (pages included)
    assert 0 <= counted["clock"] <= open_count(fresh).bit_length() + 1


def test_days_on_market_stays_exact_when_nothing_changed(
    start_sandbox, make, http_client, tmp_path
):
    sandbox = start_sandbox()
    client = make(sandbox.url, tmp_path / "a")
    client.sync_listings()
    for days in (0.25, 0.5, 1, 2):  # only the clock moves between some of these syncs
        advance(http_client, sandbox.url, days)
        synced = client.sync_listings()
        assert_same_market(synced, fresh_market(http_client, sandbox.url, SCOPE))
    again = client.sync_listings()  # the clock did not move: the same market
    pd.testing.assert_frame_equal(again, synced)
