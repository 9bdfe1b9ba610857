"""The change feed's chunk of ids: the spec's 100 with no 4xx answer, a chunk a smaller server
(``max_listing_ids``) refuses split once, and a month of daily syncs that ends equal to a full
load with no terminal listing ever polled.

Helpers (the independent full load, the clock, the comparison) come from ``test_sync``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_sync import advance, assert_same_market, fresh_market, open_count

import realtyframes as rf
from realtyframes.loaders import sync_scope, sync_state


class FeedLog:
    """Each change-feed chunk's number of ids and answer status: its first page's request (an
    httpx event hook; later pages of a chunk repeat its ids)."""

    def __init__(self) -> None:
        self.sizes: list[int] = []
        self.statuses: list[int] = []
        self.answers: list[tuple[int, int]] = []  # (ids, status) of each chunk's first page

    def on_request(self, request: httpx.Request) -> None:
        if _first_feed_page(request):
            self.sizes.append(len(request.url.params["ListingIds"].split(",")))

    def on_response(self, response: httpx.Response) -> None:
        if _first_feed_page(response.request):
            self.statuses.append(response.status_code)
            ids = len(response.request.url.params["ListingIds"].split(","))
            self.answers.append((ids, response.status_code))

    def clear(self) -> None:
        self.sizes.clear()
        self.statuses.clear()
        self.answers.clear()


def _first_feed_page(request: httpx.Request) -> bool:
    offset = request.url.params.get("Offset", "0")
    return request.url.path == "/v1/listings/changes" and offset == "0"


def _client(url: str, cache: Path, log: FeedLog, *also: Any, **options: Any) -> rf.Client:
    """A client whose feed requests ``log`` records; ``also``: more response hooks."""
    hooks = {"request": [log.on_request], "response": [log.on_response, *also]}
    return rf.Client(base_url=url, cache_dir=cache, progress=False, event_hooks=hooks, **options)


def test_a_first_sync_gets_no_4xx_answer_and_a_leftover_chunk_file_is_ignored(
    start_sandbox, http_client, tmp_path
):
    """The spec's 100 ids a request from the start: no probe, so no deliberate 400 on a first
    sync (there was one on every first sync), and nothing is learned or written between syncs: a
    ``feed-chunks.json`` an older release left in the cache folder is not read."""
    sandbox = start_sandbox()  # the tests' default sandbox: the spec's 100 ids at most
    cache = tmp_path / "c"
    cache.mkdir()
    leftover = cache / "feed-chunks.json"
    leftover.write_text(json.dumps({sandbox.url: {"chunk": 800, "chunk_refused": 1600}}))
    log = FeedLog()
    statuses: list[int] = []
    with _client(sandbox.url, cache, log, lambda r: statuses.append(r.status_code)) as client:
        market = client.sync_listings()  # the backfill asks the feed about every id
        assert statuses and not [s for s in statuses if 400 <= s < 500]
        assert set(log.sizes) <= {*range(1, 101)} and log.sizes.count(100) == len(market) // 100
        assert sum(log.sizes) == len(market)  # every id asked about exactly once
        state = sync_state(client.session, {})
        assert state["chunk"] == 100 and state["last_requests"]["rejected"] == 0
        advance(http_client, sandbox.url, 2)
        log.clear()
        statuses.clear()
        synced = client.sync_listings()
        assert len(log.sizes) == math.ceil(open_count(market) / 100)
        assert not [s for s in statuses if 400 <= s < 500]
    assert json.loads(leftover.read_text()) == {sandbox.url: {"chunk": 800, "chunk_refused": 1600}}
    assert sorted(p.name for p in cache.glob("*.json")) == ["feed-chunks.json"]
    assert_same_market(synced, fresh_market(http_client, sandbox.url, sync_scope({})))


def test_against_a_smaller_server_each_chunk_is_split_once(start_sandbox, http_client, tmp_path):
    sandbox = start_sandbox(listings=1500, max_listing_ids=60)
    log = FeedLog()
    with _client(sandbox.url, tmp_path / "c", log) as client:
        market = client.sync_listings(history_since=False)
        advance(http_client, sandbox.url, 3)
        log.clear()
        synced = client.sync_listings()
        chunks = math.ceil(open_count(market) / 100)
        # each chunk of 100 refused once, then its halves of 50 accepted
        assert {code for size, code in log.answers if size > 60} == {400}
        assert {code for size, code in log.answers if size <= 60} == {200}
        assert max(size for size, _ in log.answers if size <= 60) == 50
        assert sync_state(client.session, {})["last_requests"]["rejected"] == log.statuses.count(
            400
        )
        assert log.statuses.count(400) >= chunks - 1
    assert_same_market(synced, fresh_market(http_client, sandbox.url, sync_scope({})))
    sandbox = start_sandbox(listings=1500, max_listing_ids=30)  # halves of 50 refused: raised
    with _client(sandbox.url, tmp_path / "d", FeedLog()) as client:
        with pytest.raises(rf.BadRequestError):
            client.sync_listings()
        assert sync_state(client.session, {}) is None


@pytest.mark.slow
def test_a_month_of_daily_syncs_equals_a_full_load_and_never_polls_a_closed_listing(
    start_sandbox, http_client, tmp_path
):
    sandbox = start_sandbox(listings=1500)
    asked: set[str] = set()

    def on_request(request: httpx.Request) -> None:
        if request.url.path == "/v1/listings/changes":
            asked.update(request.url.params["ListingIds"].split(","))

    with rf.Client(
        base_url=sandbox.url,
        cache_dir=tmp_path / "c",
        progress=False,
        event_hooks={"request": [on_request]},
    ) as client:
        market = client.sync_listings(history_since=False)
        closed = set(market.loc[market["StandardStatus"] == "Closed", "ListingId"])
        for _ in range(30):
            advance(http_client, sandbox.url, 1)
            asked.clear()
            market = client.sync_listings()
            assert not closed & asked  # a listing Closed at an earlier sync is never polled
            closed |= set(market.loc[market["StandardStatus"] == "Closed", "ListingId"])
        assert sync_state(client.session, {})["syncs"] == 31
    fresh = fresh_market(http_client, sandbox.url, sync_scope({}))
    assert_same_market(market, fresh)
