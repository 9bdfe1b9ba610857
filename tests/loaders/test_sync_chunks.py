"""The change feed's chunk of ids, learned against the sandbox's ``max_listing_ids``, and a month
of daily syncs that ends equal to a full load with no terminal listing ever polled.

Helpers (the independent full load, the clock, the comparison) come from ``test_sync``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import httpx
import pytest
from test_sync import advance, assert_same_market, fresh_market, open_count

import realtyframes as rf
from realtyframes.loaders import sync_scope, sync_state
from realtyframes.loaders._sync_feed import HOST_CHUNKS_FILE, MAX_CHUNK, ChunkSize


class FeedLog:
    """Each change-feed chunk's number of ids and answer status: its first page's request (an
    httpx event hook; later pages of a chunk repeat its ids)."""

    def __init__(self) -> None:
        self.sizes: list[int] = []
        self.statuses: list[int] = []

    def on_request(self, request: httpx.Request) -> None:
        if _first_feed_page(request):
            self.sizes.append(len(request.url.params["ListingIds"].split(",")))

    def on_response(self, response: httpx.Response) -> None:
        if _first_feed_page(response.request):
            self.statuses.append(response.status_code)

    def clear(self) -> None:
        self.sizes.clear()
        self.statuses.clear()


def _first_feed_page(request: httpx.Request) -> bool:
    offset = request.url.params.get("Offset", "0")
    return request.url.path == "/v1/listings/changes" and offset == "0"


def _client(url: str, cache: Path, log: FeedLog, **options: object) -> rf.Client:
    hooks = {"request": [log.on_request], "response": [log.on_response]}
    return rf.Client(base_url=url, cache_dir=cache, progress=False, event_hooks=hooks, **options)


def test_the_chunk_grows_while_the_server_accepts_and_is_remembered_per_host(
    start_sandbox, http_client, tmp_path
):
    sandbox = start_sandbox(listings=8000, max_listing_ids=1000)
    log = FeedLog()
    with _client(sandbox.url, tmp_path / "c", log) as client:
        market = client.sync_listings()  # the backfill asks the feed about every id
        # probing: 100, 200, 400 and 800 accepted one at a time, 1600 refused, then 800 each
        assert log.sizes[:5] == [100, 200, 400, 800, 1600]
        assert log.statuses[:5] == [200, 200, 200, 200, 400]
        assert log.statuses.count(400) == 1
        assert max(s for s, code in zip(log.sizes, log.statuses, strict=True) if code == 200) == 800
        state = sync_state(client, {})
        assert (state["chunk"], state["chunk_refused"]) == (800, 1600)
        assert state["last_requests"]["rejected"] == 1
        assert sum(log.sizes) - 1600 == len(market)  # every id asked about exactly once

        # the size is remembered for the host: another market there starts at 800, no probing
        log.clear()
        client.sync_listings(PropertyType="Residential")
        assert 400 not in log.statuses and max(log.sizes) == 800

        # an incremental sync polls the open ids 800 at a time: ceil(open / 800) requests
        advance(http_client, sandbox.url, 2)
        log.clear()
        synced = client.sync_listings()
        assert len(log.sizes) == math.ceil(open_count(market) / 800)
        assert 400 not in log.statuses
    fresh = fresh_market(http_client, sandbox.url, sync_scope({}))
    assert_same_market(synced, fresh, exact_days=False)
    remembered = json.loads((tmp_path / "c" / HOST_CHUNKS_FILE).read_text())
    assert list(remembered.values()) == [{"chunk": 800, "chunk_refused": 1600}]
    assert "api_key" not in json.dumps(remembered).lower()


def test_the_chunk_shrinks_to_what_a_smaller_server_accepts(start_sandbox, http_client, tmp_path):
    sandbox = start_sandbox(listings=1500, max_listing_ids=30)
    log = FeedLog()
    with _client(sandbox.url, tmp_path / "c", log) as client:
        client.sync_listings()
        # 100 and 50 refused; 25 accepted; 50 is known to be refused, so no growth
        assert log.sizes[:3] == [100, 50, 25] and log.statuses[:3] == [400, 400, 200]
        assert log.statuses.count(400) == 2
        assert max(log.sizes[3:]) <= 25
        state = sync_state(client, {})
        assert (state["chunk"], state["chunk_refused"]) == (25, 50)
        assert state["last_requests"]["rejected"] == 2
        advance(http_client, sandbox.url, 3)
        log.clear()
        synced = client.sync_listings()
        assert 400 not in log.statuses and max(log.sizes) <= 25
    assert_same_market(
        synced, fresh_market(http_client, sandbox.url, sync_scope({})), exact_days=False
    )


def test_chunk_growth_stops_at_the_largest_url_tried():
    assert ChunkSize(MAX_CHUNK // 2).next_size() == MAX_CHUNK
    assert ChunkSize(MAX_CHUNK).next_size() is None
    assert ChunkSize(800, refused=1600).next_size() is None
    assert ChunkSize(400, refused=1600).next_size() == 800
    # a refusal halves and remembers the smallest size refused
    assert ChunkSize(800, refused=1600).after_refusal(800) == ChunkSize(400, 800)
    assert ChunkSize.from_state({"chunk": 100}) == ChunkSize(100, None)


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
        assert sync_state(client, {})["syncs"] == 31
    fresh = fresh_market(http_client, sandbox.url, sync_scope({}))
    assert_same_market(market, fresh, exact_days=False)
