"""A load or first sync resumed after the server moved on (#33): killed half-way (SIGKILL in a
subprocess, as in ``test_resume``), then resumed after the server's data moved a week, or after
the server behind the same URL became another one (restarted with another seed on the same
port). Either the resumed result ends equal to a fresh one, or the checkpoint is discarded, said
in a log line -- never a silent mix of two datasets.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest
from test_resume import OPTIONS, Hook, client, journals, run_and_kill, saved_pages
from test_sync import assert_same_market

from faultproxy import FaultProxy
from realtyframes.loaders import listing_history, sync_state
from realtyframes.sandbox import RunningSandbox, start


@contextmanager
def sandbox(port: int = 0, **options: Any) -> Iterator[RunningSandbox]:
    with start(**{**OPTIONS, "latency_ms": 2, **options}, port=port) as running:
        yield running


def advance(url: str, days: float) -> None:
    httpx.post(f"{url}/_sandbox/clock", json={"advance_days": days}).raise_for_status()


def assert_market_agrees_with_its_history(market: pd.DataFrame, history: pd.DataFrame) -> None:
    """Every listing's status is the one its last status change in ``listing_history`` says."""
    changes = history[history["ChangeType"] == "status_change"]
    last = changes.sort_values("ChangeTimestamp").drop_duplicates("ListingId", keep="last")
    joined = market.merge(last[["ListingId", "StandardStatus"]], on="ListingId", how="inner")
    assert len(joined) > 100
    wrong = joined[joined["StandardStatus_x"].astype(str) != joined["StandardStatus_y"].astype(str)]
    assert wrong.empty, wrong[["ListingId", "StandardStatus_x", "StandardStatus_y"]]


# killed in the searches (Active pages saved) or among the backfill's chunks (every search page
# saved); resumed a week later (the saved pages are discarded) or 40 minutes later (taken)
@pytest.mark.parametrize(("sent", "days"), [(6, 7), (30, 7), (6, 0.03), (30, 0.03)])
def test_a_first_sync_resumed_later_equals_a_fresh_sync_after_the_next_one(
    tmp_path: Path, sent: int, days: float, caplog: pytest.LogCaptureFixture
):
    """The issue's first silent defect: the saved pages are a week old, the pages read after the
    resume are new; the watermark was the newest timestamp of the mixed rows, so the changes of
    the old rows before it were never asked for, and the market stayed wrong for good."""
    caplog.set_level(logging.INFO, logger="realtyframes")
    with sandbox() as server:
        cache = tmp_path / "cache"
        run_and_kill(server.url, cache, "sync", sent)
        assert saved_pages(cache) >= 1
        advance(server.url, days)
        with client(server.url, cache) as c:
            c.sync_listings()  # resumed
            moved = [r.getMessage() for r in caplog.records if "data moved" in r.getMessage()]
            if days > 1:  # a week behind: discarded, said
                assert c.last_load.resumed_requests == 0 and len(moved) == 1
            else:  # within the hour: taken, the watermarks back to the saved pages' data time
                assert c.last_load.resumed_requests >= 1 and not moved
            synced = c.sync_listings()  # the next ordinary incremental sync
            history = listing_history(c.session, {})
            assert sync_state(c.session, {})["mode"] == "incremental"
        assert journals(cache) == []
        with client(server.url, tmp_path / "fresh") as f:
            fresh = f.sync_listings()
            fresh_history = listing_history(f.session, {})
    # cell for cell: every column equal, DaysOnMarket of open listings included
    assert_same_market(synced, fresh)
    pd.testing.assert_frame_equal(history, fresh_history)
    assert_market_agrees_with_its_history(synced, history)


def test_a_checkpoint_of_another_dataset_behind_the_same_url_is_discarded(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    """The issue's second silent defect: a reseeded staging server (another seed on the same
    port) answered the resumed load, whose saved pages came from the first one; the totals
    agreed within the drift tolerance, so the result mixed the two datasets."""
    caplog.set_level(logging.INFO, logger="realtyframes")
    cache = tmp_path / "cache"
    query = {"PropertyType": "Residential", "Status": "Closed"}
    with sandbox() as first:
        port = int(first.url.rsplit(":", 1)[1])
        run_and_kill(first.url, cache, "closed", 6)
        # the first page at least: it is read alone and saved before the others are asked for
        # (how many of the next five reached the checkpoint before the kill depends on the
        # machine's load); without the identity check a resume would reuse what was saved
        assert saved_pages(cache) >= 1
    with sandbox(port=port, seed=8) as second:
        assert second.url == first.url  # the same URL, another dataset
        hook = Hook()
        with client(second.url, cache, hook) as c:
            resumed = c.listings(**query)
            assert c.last_load.resumed_requests == 0  # nothing of the first dataset
        with client(second.url, tmp_path / "fresh") as f:
            fresh = f.listings(**query)
    pd.testing.assert_frame_equal(resumed, fresh)
    said = [r.getMessage() for r in caplog.records if "discarded" in r.getMessage()]
    assert len(said) == 1 and "identity" in said[0], said
    assert journals(cache) == []


def test_a_week_old_resume_a_stale_cache_let_through_catches_up_at_the_next_sync(
    tmp_path: Path, fault_proxy: Callable[[str], FaultProxy]
):
    """The watermarks of a resumed sync go back to its saved pages' data time, so the next sync
    asks for the changes of the old rows too. Here a cache in front of the server (the fault
    proxy's ``stale_copy``) answers the resume's re-read of the first page with its copy from
    before the kill, so week-old saved pages are taken: every listing the resumed market holds
    ends equal to a fresh sync's, status, price and all (the issue's 2 listings Active for
    Pending). The listings that moved back into a status whose pages were saved are the resume
    window's reason: they are not in the market (docs/sync.md), so they are left out of the
    comparison."""
    with sandbox() as server:
        proxy = fault_proxy(server.url)
        cache = tmp_path / "cache"
        run_and_kill(proxy.url, cache, "sync", 6)
        advance(server.url, 7)
        proxy.set("stale_copy")  # the first page's copy from before the kill, and those in flight
        with client(proxy.url, cache) as c:
            c.sync_listings()
            assert c.last_load.resumed_requests >= 1 and proxy.injected["stale_copy"] >= 1
            proxy.set(None)  # from now on, the server's answers
            state = sync_state(c.session, {})
            synced = c.sync_listings()
            history = listing_history(c.session, {})
        with client(server.url, tmp_path / "fresh") as f:
            fresh = f.sync_listings()
            fresh_history = listing_history(f.session, {})
    held = fresh["ListingId"].isin(synced["ListingId"])
    assert held.sum() > 0.99 * len(fresh) and synced["ListingId"].isin(fresh["ListingId"]).all()
    assert_same_market(synced, fresh[held].reset_index(drop=True))
    ours = fresh_history["ListingId"].isin(synced["ListingId"])
    pd.testing.assert_frame_equal(history, fresh_history[ours].reset_index(drop=True))
    assert_market_agrees_with_its_history(synced, history)
    assert state["change_watermark"] < state["data_time"]  # back to the saved pages' time
