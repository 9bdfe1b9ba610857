"""``client.plan_listings`` / ``client.plan_sync``: the estimate against the requests actually
made (counted by an httpx request hook), on real sandboxes on loopback.

Done means (#28): within 5 % for a search, a details load and a first sync. The search and the
details are counted exactly from the server's total; a first sync's history backfill is estimated
from a sample of each status (so only the 5 % bound is promised).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

import realtyframes as rf
from realtyframes.api import MAX_LISTING_IDS
from realtyframes.loaders import ENDPOINTS, sync_listings
from realtyframes.sandbox import RunningSandbox

MakeClient = Callable[..., tuple[rf.Client, Any]]  # (client, the request log of conftest)


def within(estimate: int, actual: int, share: float = 0.05) -> bool:
    return abs(estimate - actual) <= share * actual


def test_a_search_plan_is_the_requests_of_the_search(
    make_client: MakeClient, sandbox_url: str
) -> None:
    client, log = make_client(sandbox_url)
    plan = client.plan_listings(Status="Closed", PropertyType="Residential")
    assert log.count == plan.probes == 1  # one Limit=1 search
    assert "Limit=1" in str(log.urls[0])
    before = log.count
    frame = client.listings(Status="Closed", PropertyType="Residential")
    made = log.count - before
    assert within(plan.requests, made) and plan.requests == made  # exact on a still market
    assert plan.rows == len(frame) + client.last_load.quarantined  # type: ignore[union-attr]
    assert (plan.pages, plan.details, plan.feed) == (made, 0, 0)
    assert plan["requests"] == plan.requests and plan.mode == "search"


def test_a_details_plan_counts_one_request_per_listing(
    make_client: MakeClient, sandbox_url: str
) -> None:
    client, log = make_client(sandbox_url)
    plan = client.plan_listings(City="Miami", Status="Pending", details=True)
    before = log.count
    client.listings(City="Miami", Status="Pending", details=True)
    made = log.count - before
    details = sum(1 for u in log.urls[before:] if u.path.startswith("/v1/listings/A"))
    assert within(plan.requests, made), (plan, made)
    assert plan.details == details and plan.mode == "details"
    capped = client.plan_listings(Status="Closed", max_results=120, details=True)
    before = log.count
    client.listings(Status="Closed", max_results=120, details=True)
    assert capped.requests == log.count - before == 3 + 120


def test_a_first_sync_plan_is_within_five_percent(
    make_client: MakeClient, sandbox_url: str
) -> None:
    client, log = make_client(sandbox_url)
    plan = client.plan_sync()  # the whole Residential market: 1,506 listings, 3 years
    assert plan.mode == "first sync" and plan.probes == log.count <= 8
    before = log.count
    market = client.sync_listings()
    made = log.count - before
    state = client.sync_state()
    assert state is not None
    assert within(plan.requests, made), (plan, made, state["last_requests"])
    assert plan.pages == state["last_requests"]["search"]  # the searches exactly
    assert plan.rows == len(market) + len(client.last_load.quarantine)  # type: ignore[union-attr]
    assert within(
        plan.feed, state["last_requests"]["backfill"] + state["last_requests"]["rejected"]
    )
    # once synced, the plan is an incremental one (4 searches and the clock's page)
    again = client.plan_sync()
    assert again.mode == "incremental" and again.rows == 0 and again.pages == 5


def test_an_incremental_plan_foresees_the_feed_and_the_closings(
    make_client: MakeClient,
    start_sandbox: Callable[..., RunningSandbox],
    http_client: httpx.Client,
) -> None:
    sandbox = start_sandbox(listings=3000, history_years=3)
    client, log = make_client(sandbox.url)
    client.sync_listings()
    http_client.post(f"{sandbox.url}/_sandbox/clock", json={"advance_days": 7}).raise_for_status()
    plan = client.plan_sync()
    before = log.count
    client.sync_listings()
    made = log.count - before
    counts = client.sync_state()["last_requests"]  # type: ignore[index]
    assert plan.pages == counts["search"] and plan.feed == counts["feed"]
    # the closings are sampled from one chunk of the feed: an estimate, not a count
    assert counts["details"] > 0 and plan.details > 0
    assert within(plan.requests, made, 0.25), (plan, counts)


def test_an_incremental_plan_counts_the_chunk_the_next_sync_uses(
    make_client: MakeClient,
    start_sandbox: Callable[..., RunningSandbox],
    http_client: httpx.Client,
) -> None:
    """A sync's ``chunk_size`` holds for that call; ``plan_sync`` plans the call with the
    defaults, so its feed is counted in chunks of the spec's 100 ids whatever the last sync used
    (it counted the last sync's chunk from the saved state: ten times the feed after
    ``chunk_size=10``)."""
    sandbox = start_sandbox(listings=3000, history_years=3)
    client, _ = make_client(sandbox.url)
    sync_listings(client.session, {}, chunk_size=10, history_since=False)
    http_client.post(f"{sandbox.url}/_sandbox/clock", json={"advance_days": 7}).raise_for_status()
    plan = client.plan_sync()
    client.sync_listings()
    counts = client.sync_state()["last_requests"]  # type: ignore[index]
    assert counts["feed"] > 0 and plan.feed == counts["feed"], (plan, counts)


def test_a_refresh_plan_counts_the_feed_since_the_last_sync(
    make_client: MakeClient,
    start_sandbox: Callable[..., RunningSandbox],
    http_client: httpx.Client,
) -> None:
    """``refresh=True`` reloads the market and asks the change feed since the last sync about
    the keys that were not terminal (about one request per 100 open listings): the plan counts
    those requests too (it left them out before: 33 planned against 36 made here)."""
    sandbox = start_sandbox(listings=3000, history_years=3)
    client, log = make_client(sandbox.url)
    client.sync_listings()
    http_client.post(f"{sandbox.url}/_sandbox/clock", json={"advance_days": 7}).raise_for_status()
    plan = client.plan_sync(refresh=True)
    before = log.count
    client.sync_listings(refresh=True)
    made = log.count - before
    counts = client.sync_state()["last_requests"]  # type: ignore[index]
    assert counts["feed"] > 0 and counts["backfill"] == 0  # the history kept, the week added
    assert plan.pages == counts["search"] and plan.feed > 0 and plan.probes <= 8
    assert within(plan.feed, counts["feed"] + counts["rejected"]), (plan, counts)
    assert within(plan.requests, made), (plan, made, counts)


def test_the_time_is_the_requests_at_the_accounts_rate(
    make_client: MakeClient, start_sandbox: Callable[..., RunningSandbox]
) -> None:
    sandbox = start_sandbox(rate_limit=(60, 60.0))
    client, _ = make_client(sandbox.url)
    plan = client.plan_listings(Status="Closed", details=True)
    assert (plan.limit, plan.window) == (60, 60.0)
    assert plan.seconds == pytest.approx(plan.requests * 60.0 / 60)
    assert f"{plan.requests:,} requests" in repr(plan) and "at 60 requests / 60 s" in repr(plan)


@pytest.mark.parametrize(
    ("call", "kwargs", "name"),
    [
        ("plan_listings", {"city": "Miami"}, "city"),
        ("plan_listings", {"Limit": 5}, "Limit"),
        ("plan_sync", {"Status": "Active"}, "Status"),
        ("plan_sync", {"history_since": "soon"}, "history_since"),
    ],
)
def test_bad_input_is_refused_before_any_request(
    make_client: MakeClient, sandbox_url: str, call: str, kwargs: dict[str, Any], name: str
) -> None:
    client, log = make_client(sandbox_url)
    with pytest.raises(rf.QueryError) as caught:
        getattr(client, call)(**kwargs)
    assert caught.value.param == name
    assert log.count == 0


def test_the_sync_is_declared_on_the_listings_row_with_the_specs_100_ids() -> None:
    sync = ENDPOINTS["listings"].sync
    assert sync is not None and sync.chunk == MAX_LISTING_IDS == 100
    assert sync.feed is ENDPOINTS["listing_changes"] and sync.key == "ListingId"
    assert sync.partition == ("Status", ("Active", "Active Under Contract", "Pending", "Closed"))
