"""``sync_listings``: the synced market equals a fresh full load, at the request floor.

Every test runs against its own sandbox (a real server on loopback) with a fixed clock that the
test moves. The "fresh full load" and the "raw feed" the sync is compared with are read here with
plain httpx page loops, independently of the loaders. Compared columns: every column of the
frames, DaysOnMarket of open listings included (the feed has no event for it: the sync places
the server's clock from what it read, see docs/sync.md).
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest

import realtyframes as rf
from realtyframes._changes import CHANGE_COLUMNS, sync_changes
from realtyframes.cache import CacheWarning
from realtyframes.errors import ApiError, BadRequestError, NotFoundError, QueryError
from realtyframes.loaders import SYNC_RESOURCE as RESOURCE
from realtyframes.loaders import (
    listing_history,
    sync_listings,
    sync_scope,
    sync_state,
)
from realtyframes.loaders._sync_steps import too_many
from realtyframes.sandbox import Faults
from realtyframes.schemas import STANDARD_STATUSES as STATUSES
from realtyframes.schemas import DataQualityWarning, Listing, listings_from_pages, validate

PAGE = 50
CHUNK = 100  # the sandbox's maximum of ListingIds per change-feed request


# -- counting requests --------------------------------------------------------------------------------


class Requests:
    """An httpx event hook counting requests by kind, and the answers' statuses."""

    def __init__(self) -> None:
        self.kinds: Counter[str] = Counter()
        self.statuses: Counter[int] = Counter()

    def on_request(self, request: httpx.Request) -> None:
        path = request.url.path
        if path == "/v1/listings":
            self.kinds["search"] += 1
        elif path == "/v1/listings/changes":
            self.kinds["feed"] += 1
        elif path.startswith("/v1/listings/"):
            self.kinds["detail"] += 1
        else:
            self.kinds["other"] += 1

    def on_response(self, response: httpx.Response) -> None:
        self.statuses[response.status_code] += 1

    @property
    def total(self) -> int:
        return sum(self.kinds.values())

    def reset(self) -> None:
        self.kinds.clear()
        self.statuses.clear()


@pytest.fixture
def counter() -> Requests:
    return Requests()


@pytest.fixture
def make_client(tmp_path: Path, counter: Requests) -> Iterator[Callable[..., rf.Client]]:
    clients: list[rf.Client] = []

    def make(url: str, **options: Any) -> rf.Client:
        options.setdefault("cache_dir", tmp_path / "cache")
        client = rf.Client(
            base_url=url,
            progress=False,
            event_hooks={"request": [counter.on_request], "response": [counter.on_response]},
            **options,
        )
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


# -- independent reads of the server ------------------------------------------------------------------


def _all_pages(http: httpx.Client, url: str, params: Mapping[str, str], key: str) -> list[bytes]:
    bodies, offset = [], 0
    while True:
        response = http.get(url, params={**params, "Offset": offset, "Limit": PAGE})
        response.raise_for_status()
        bodies.append(response.content)
        body = response.json()
        offset += PAGE
        if offset >= body["total"] or len(body[key]) < PAGE:
            return bodies


def fresh_market(
    http: httpx.Client, base: str, scope: Mapping[str, str], *, invalid: int = 0
) -> pd.DataFrame:
    """Every status of the scope, read now, validated (``invalid`` rows expected to fail),
    sorted by ListingId."""
    pages = [
        body
        for status in STATUSES
        for body in _all_pages(http, f"{base}/v1/listings", {**scope, "Status": status}, "listings")
    ]
    listings, _ = listings_from_pages(pages)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        valid, quarantined = validate(listings, Listing)
    assert len(quarantined) == invalid
    return valid.sort_values("ListingId").reset_index(drop=True)


def totals(http: httpx.Client, base: str, params: Mapping[str, str]) -> dict[str, int]:
    """The server's total of each status for a search."""
    return {
        s: http.get(f"{base}/v1/listings", params={**params, "Status": s, "Limit": 1}).json()[
            "total"
        ]
        for s in STATUSES
    }


def raw_feed(
    http: httpx.Client, base: str, ids: list[str], since: str
) -> tuple[list[dict[str, Any]], list[int]]:
    """Every change record of ``ids`` since ``since`` (chunks of 100) and each chunk's total."""
    records: list[dict[str, Any]] = []
    chunk_totals: list[int] = []
    for i in range(0, len(ids), CHUNK):
        params = {"Since": since, "ListingIds": ",".join(ids[i : i + CHUNK])}
        bodies = _all_pages(http, f"{base}/v1/listings/changes", params, "changes")
        chunk_totals.append(httpx.Response(200, content=bodies[0]).json()["total"])
        for body in bodies:
            records += httpx.Response(200, content=body).json()["changes"]
    return records, chunk_totals


def iso(stamp: pd.Timestamp) -> str:
    return stamp.tz_convert("UTC").isoformat().replace("+00:00", "Z")


def advance(http: httpx.Client, base: str, days: float) -> None:
    http.post(f"{base}/_sandbox/clock", json={"advance_days": days}).raise_for_status()


# -- comparisons --------------------------------------------------------------------------------------


def assert_same_market(synced: pd.DataFrame, fresh: pd.DataFrame) -> None:
    """Cell for cell: rows, prices, statuses, close data, timestamps, DaysOnMarket (of open
    listings too: the sync places the server's clock, docs/sync.md) and every other column."""
    assert synced["ListingId"].is_unique
    assert synced["ListingId"].tolist() == fresh["ListingId"].tolist()
    assert set(synced.columns) == set(fresh.columns)
    pd.testing.assert_frame_equal(synced[list(fresh.columns)], fresh)


def history_keys(frame: pd.DataFrame) -> set[tuple[str, str, str]]:
    return {
        (row.ListingId, str(row.ChangeType), iso(row.ChangeTimestamp))
        for row in frame.itertuples(index=False)
    }


def assert_history_is_the_feed(history: pd.DataFrame, records: list[dict[str, Any]]) -> None:
    """The history holds exactly the feed's records, with their old and new values."""
    assert len(history) == len(records)
    by_key = {(r["ListingId"], r["ChangeType"], r["ChangeTimestamp"]): r for r in records}
    assert history_keys(history) == set(by_key)
    for row in history.itertuples(index=False):
        record = by_key[(row.ListingId, str(row.ChangeType), iso(row.ChangeTimestamp))]
        if row.ChangeType == "price_change":
            assert (row.PreviousListPrice, row.ListPrice) == (
                record["PreviousListPrice"],
                record["ListPrice"],
            )
        else:
            assert (str(row.PreviousStatus), str(row.StandardStatus)) == (
                record["PreviousStatus"],
                record["StandardStatus"],
            )


def open_count(market: pd.DataFrame) -> int:
    """Listings the change feed is asked about: every status but Closed (terminal)."""
    return int((market["StandardStatus"] != "Closed").sum())


def unique_records(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Feed records without repeats (two reads of the feed may overlap)."""
    by_key = {(r["ListingId"], r["ChangeType"], r["ChangeTimestamp"]): r for r in records}
    return list(by_key.values())


def assert_changes_are_the_feed(
    changes: pd.DataFrame, floor: Mapping[str, Any], after: pd.DataFrame, before: pd.DataFrame
) -> None:
    """``client.last_load.changes`` of a sync: the new listings plus one row per listing and
    kind of the feed's records, each with its old and new values."""
    assert list(changes.columns) == list(CHANGE_COLUMNS)
    new = set(after["ListingId"]) - set(before["ListingId"])
    assert set(changes.loc[changes["change"] == "new", "ListingId"]) == new
    fed = changes[~changes["change"].isin(["new", "removed"])]
    expected: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in floor["records"]:
        if r["ChangeType"] == "price_change":
            kind = "price_cut" if r["ListPrice"] < r["PreviousListPrice"] else "price_increase"
        elif r["StandardStatus"] in ("Pending", "Active Under Contract"):
            kind = "pending"
        elif r["StandardStatus"] == "Closed":
            kind = "closed"
        elif r["PreviousStatus"] in ("Pending", "Active Under Contract"):
            kind = "back_on_market"
        else:
            kind = "status_change"
        expected.setdefault((r["ListingId"], kind), []).append(r)
    assert set(zip(fed["ListingId"], fed["change"].astype(str), strict=True)) == set(expected)
    assert fed["events"].sum() == len(floor["records"])
    for row in fed.itertuples(index=False):
        records = sorted(
            expected[(row.ListingId, str(row.change))], key=lambda r: r["ChangeTimestamp"]
        )
        assert row.events == len(records)
        assert iso(row.ChangeTimestamp) == records[-1]["ChangeTimestamp"]
        if row.change in ("price_cut", "price_increase"):
            assert (row.old_price, row.new_price) == (
                records[0]["PreviousListPrice"],
                records[-1]["ListPrice"],
            )
        else:
            assert (row.old_status, row.new_status) == (
                records[0]["PreviousStatus"],
                records[-1]["StandardStatus"],
            )
    assert changes["City"].notna().all() and changes["UnparsedAddress"].notna().all()


def expected_floor(
    http: httpx.Client,
    base: str,
    scope: Mapping[str, str],
    cached: pd.DataFrame,
) -> dict[str, Any]:
    """The requests the next sync must make, from the server's data (read before the sync):
    new listings per status, the feed over the known ids, and the listings that closed."""
    entry_since = iso(cached["OriginalEntryTimestamp"].max())
    change_since = iso(cached["ModificationTimestamp"].max())
    new_totals = totals(http, base, {**scope, "Since": entry_since})
    new_pages = [
        body
        for s in STATUSES
        for body in _all_pages(
            http, f"{base}/v1/listings", {**scope, "Status": s, "Since": entry_since}, "listings"
        )
    ]
    new, _ = listings_from_pages(new_pages)
    changed_new = new.loc[
        new["ModificationTimestamp"] > new["OriginalEntryTimestamp"], "ListingId"
    ].tolist()
    # Closed is terminal: only listings open at the last sync are polled (and new ones once)
    ids = cached.loc[cached["StandardStatus"] != "Closed", "ListingId"].tolist() + changed_new
    records, chunk_totals = raw_feed(http, base, ids, change_since)
    closed_before = set(cached.loc[cached["StandardStatus"] == "Closed", "ListingId"])
    closings = {
        r["ListingId"]
        for r in records
        if r["ChangeType"] == "status_change"
        and r["StandardStatus"] == "Closed"
        and r["ListingId"] not in closed_before
        and r["ListingId"] in set(cached["ListingId"])
    }
    search = sum(max(1, math.ceil(n / PAGE)) for n in new_totals.values())
    feed = sum(max(1, math.ceil(n / PAGE)) for n in chunk_totals)
    return {
        "search": search,
        "feed": feed,
        "detail": len(closings),
        "total": search + feed + len(closings),
        "chunks": len(chunk_totals),
        "ids": len(ids),
        "records": records,
        "new": sum(new_totals.values()),
        "changed_new": len(changed_new),
        "closings": closings,
    }


# -- tests --------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_sync_equals_full_load_after_the_clock_moves_at_the_request_floor(
    start_sandbox, make_client, counter, http_client
):
    sandbox = start_sandbox(listings=1500)
    base, scope = sandbox.url, sync_scope({})
    client = make_client(base)

    # first sync: each status loaded once, equal to a fresh full load (DaysOnMarket included),
    # and the history backfilled from the feed since the oldest listing's entry
    market = client.sync_listings()
    fresh = fresh_market(http_client, base, scope)
    assert_same_market(market, fresh)
    first_totals = totals(http_client, base, scope)
    oldest = iso(market["OriginalEntryTimestamp"].min())
    backfilled, backfill_totals = raw_feed(http_client, base, market["ListingId"].tolist(), oldest)
    # the backfill sends the spec's 100 ids a request: no 4xx answer at all
    assert counter.kinds == {
        "search": sum(max(1, math.ceil(n / PAGE)) for n in first_totals.values()),
        "feed": sum(max(1, math.ceil(n / PAGE)) for n in backfill_totals),
    }
    assert set(counter.statuses) == {200}
    assert set(market["StandardStatus"]) == set(STATUSES)
    assert_history_is_the_feed(listing_history(client.session, {}), backfilled)
    state = sync_state(client.session, {})
    assert state is not None and state["mode"] == "full" and state["chunk"] == CHUNK
    assert "chunk_refused" not in state
    assert state["last_requests"]["rejected"] == 0
    assert state["last_requests"]["backfill"] == counter.kinds["feed"]
    assert state["last_requests"]["total"] == counter.total
    assert client.last_load.changes is None  # a full load: nothing to compare with

    # a week later: new listings, price cuts, contracts, closings
    advance(http_client, base, 7)
    floor = expected_floor(http_client, base, scope, market)
    assert floor["closings"] and floor["new"] and floor["chunks"] == math.ceil(floor["ids"] / CHUNK)
    assert {r["ChangeType"] for r in floor["records"]} == {"price_change", "status_change"}
    counter.reset()
    synced = client.sync_listings()
    clock = sync_state(client.session, {})["last_requests"]["clock"]
    assert counter.kinds["feed"] == floor["feed"]
    pages = counter.kinds["search"] - floor["search"]  # the clock's search pages, then details
    assert 0 <= pages <= 2 and pages + counter.kinds["detail"] - floor["detail"] == clock
    # the floor: ceil(ids / chunk) + sum of ceil(new_s / 50) + closings + the clock's requests
    assert counter.total == floor["total"] + clock
    assert clock <= open_count(market).bit_length() + 1
    assert counter.kinds["feed"] == math.ceil(floor["ids"] / CHUNK)
    assert sync_state(client.session, {})["last_requests"]["total"] == counter.total
    assert client.last_load.resource == RESOURCE
    assert client.last_load.requests == counter.total
    fresh = fresh_market(http_client, base, scope)
    assert_same_market(synced, fresh)
    open_ = synced["StandardStatus"] != "Closed"
    grew = synced.loc[open_].merge(market[["ListingId", "DaysOnMarket"]], on="ListingId")
    assert (grew["DaysOnMarket_x"] > grew["DaysOnMarket_y"]).all()  # recomputed, not stale
    history = listing_history(client.session, {})
    assert_history_is_the_feed(history, unique_records(backfilled + floor["records"]))
    assert_changes_are_the_feed(client.last_load.changes, floor, synced, market)

    # nothing moved: only the floor (one empty page per status, one request per id chunk, and
    # the clock: nothing the sync read says the day has not turned, so a page of open listings
    # of a status or two places it, and details the few whose day they leave open)
    counter.reset()
    again = client.sync_listings()
    clock = sync_state(client.session, {})["last_requests"]["clock"]
    pages = counter.kinds["search"] - len(STATUSES)  # the clock's, one per open status at most
    assert counter.kinds["feed"] == math.ceil(open_count(synced) / CHUNK)
    assert 1 <= pages <= 3 and counter.kinds["detail"] == clock - pages
    assert clock <= 3  # 9 details before the pages (a binary search over 307 open listings)
    pd.testing.assert_frame_equal(again, synced)
    pd.testing.assert_frame_equal(listing_history(client.session, {}), history)

    # two months later: listings that were new last time have changed too; still equal
    advance(http_client, base, 60)
    floor = expected_floor(http_client, base, scope, synced)
    assert floor["changed_new"] > 0
    counter.reset()
    synced = client.sync_listings()
    assert (
        counter.total == floor["total"] + sync_state(client.session, {})["last_requests"]["clock"]
    )
    assert_same_market(synced, fresh_market(http_client, base, scope))
    records, _ = raw_feed(http_client, base, synced["ListingId"].tolist(), oldest)
    assert_history_is_the_feed(listing_history(client.session, {}), records)


@pytest.mark.slow
def test_a_chunk_the_server_refuses_is_split_once(start_sandbox, make_client, counter, http_client):
    sandbox = start_sandbox(listings=4000)
    client = make_client(sandbox.url)
    market = sync_listings(client.session, {}, history_since=False).frame
    assert open_count(market) > 4 * CHUNK  # only open listings are polled
    advance(http_client, sandbox.url, 3)
    counter.reset()
    # 200 ids a chunk: each refused (400 bad_request), its halves of 100 accepted
    synced = sync_listings(client.session, {}, chunk_size=2 * CHUNK).frame
    refused = math.ceil(open_count(market) / (2 * CHUNK))
    assert counter.statuses[400] == refused
    assert counter.kinds["feed"] == refused + math.ceil(open_count(market) / CHUNK)
    state = sync_state(client.session, {})
    assert state["chunk"] == 2 * CHUNK
    assert state["last_requests"]["rejected"] == refused
    assert state["last_requests"]["total"] == state["last_requests"]["floor"] + refused
    assert_same_market(synced, fresh_market(http_client, sandbox.url, sync_scope({})))
    counter.reset()
    sync_listings(client.session, {})  # nothing learned: the spec's 100 again, no refusal
    assert counter.statuses[400] == 0
    assert counter.kinds["feed"] == math.ceil(open_count(synced) / CHUNK)
    # a chunk whose halves are refused too: raised, nothing written
    before = sync_state(client.session, {})
    with pytest.raises(BadRequestError):
        sync_listings(client.session, {}, chunk_size=4 * CHUNK)
    assert sync_state(client.session, {}) == before

    # refresh=True: a full load; the history so far is kept, plus the feed since the last sync
    # over the listings not closed then (nothing here: the clock did not move)
    history = listing_history(client.session, {})
    assert len(history) > 0
    counter.reset()
    refreshed = sync_listings(client.session, {}, refresh=True).frame
    assert set(counter.kinds) == {"search", "feed"}
    assert counter.kinds["feed"] == math.ceil(open_count(synced) / CHUNK)
    assert sync_state(client.session, {})["mode"] == "full"
    assert sync_state(client.session, {})["syncs"] == 4
    pd.testing.assert_frame_equal(listing_history(client.session, {}), history)
    assert_same_market(refreshed, fresh_market(http_client, sandbox.url, sync_scope({})))


class RefuseOneLongRequest(httpx.BaseTransport):
    """Scripted fault the sandbox cannot produce: a 414 URI Too Long for the ``nth`` change-feed
    request naming more than ``limit`` ids (as a proxy with a URL limit would answer when ids are
    longer in some chunk); every other request goes to the real server."""

    def __init__(self, nth: int, limit: int) -> None:
        self.inner = httpx.HTTPTransport()
        self.nth, self.limit, self.seen = nth, limit, 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/listings/changes":
            ids = request.url.params.get("ListingIds", "").split(",")
            if len(ids) > self.limit:
                self.seen += 1
                if self.seen == self.nth:
                    return httpx.Response(414, text="URI Too Long", request=request)
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


def test_a_chunk_refused_by_a_proxy_is_split_in_halves(
    start_sandbox, make_client, counter, http_client
):
    sandbox = start_sandbox(listings=3000)
    # the fourth change-feed request of 100 ids gets the proxy's 414
    client = make_client(sandbox.url, transport=RefuseOneLongRequest(nth=4, limit=CHUNK // 2))
    market = sync_listings(client.session, {}, history_since=False).frame
    advance(http_client, sandbox.url, 7)
    counter.reset()
    synced = sync_listings(client.session, {}).frame
    chunks = math.ceil(open_count(market) / CHUNK)
    assert chunks >= 4
    # the refused chunk made one request more than the floor, and its two halves one more
    assert counter.kinds["feed"] == chunks + 2
    assert counter.statuses[400] == 0 and counter.statuses[414] == 1
    state = sync_state(client.session, {})
    assert state["chunk"] == CHUNK  # nothing learned
    assert state["last_requests"]["rejected"] == 1
    assert_same_market(synced, fresh_market(http_client, sandbox.url, sync_scope({})))


def test_a_corrupt_cache_file_falls_back_to_a_full_load(
    start_sandbox, make_client, counter, http_client, tmp_path
):
    sandbox = start_sandbox(listings=600)
    scope = {"PropertyType": "Residential Lease", "City": "Miami Beach"}
    client = make_client(sandbox.url)
    first = sync_listings(client.session, scope).frame
    assert len(first) > 0
    assert set(first["City"]) == {"Miami Beach"}
    files = list((tmp_path / "cache" / RESOURCE).glob("**/*.parquet"))
    assert len(files) == 1
    files[0].write_bytes(files[0].read_bytes()[: files[0].stat().st_size // 2])
    # the sync state is read from the cache's state database alone: no Parquet file is read
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        assert sync_state(client.session, scope)["syncs"] == 1
    advance(http_client, sandbox.url, 5)
    counter.reset()
    with pytest.warns(CacheWarning, match="unreadable"):
        market = sync_listings(client.session, scope).frame
    expected = totals(http_client, sandbox.url, sync_scope(scope))
    assert counter.kinds["search"] == sum(max(1, math.ceil(n / PAGE)) for n in expected.values())
    # the history went with the file: the full load backfills it again
    state = sync_state(client.session, scope)
    assert state["mode"] == "full"
    assert counter.kinds["feed"] == state["last_requests"]["backfill"] > 0
    assert_same_market(market, fresh_market(http_client, sandbox.url, sync_scope(scope)))


def test_an_unreadable_sync_state_falls_back_to_a_full_load(
    start_sandbox, make_client, counter, http_client
):
    sandbox = start_sandbox(listings=400)
    client = make_client(sandbox.url)
    key = sync_listings(client.session, {}).key
    cache = client.session.cache
    entry = cache.read(RESOURCE, key)
    meta = {k: entry.meta[k] for k in ("host", "operation", "params", "account", "schema_version")}
    state = {**entry.meta["sync"], "change_watermark": "yesterday"}
    cache.write(RESOURCE, key, entry.frame, {**meta, "sync": state}, extra_frames=entry.extra)
    advance(http_client, sandbox.url, 3)
    counter.reset()
    market = sync_listings(client.session, {}, history_since=False).frame
    assert set(counter.kinds) == {"search"}
    assert sync_state(client.session, {})["mode"] == "full"
    assert_same_market(market, fresh_market(http_client, sandbox.url, sync_scope({})))


def test_only_refusals_that_may_be_about_the_ids_split_the_chunk():
    """Read from the error's type and attributes, never its message."""

    def bad_request(message: str) -> BadRequestError:
        return BadRequestError(message, status=400, code="bad_request")

    assert too_many(bad_request("Invalid or missing parameters"))
    assert too_many(bad_request("ListingIds: at most 100 ids, got 200"))
    assert too_many(ApiError("URI Too Long", status=414, code="uri_too_long"))
    # a message naming the ids does not make another status or code one
    assert not too_many(ApiError("ListingIds: too many", status=400, code="invalid_request"))
    assert not too_many(NotFoundError("ListingIds: not found", status=404, code="not_found"))


def test_invalid_records_are_quarantined_and_not_followed(
    start_sandbox, make_client, counter, http_client
):
    sandbox = start_sandbox(listings=600, faults=Faults(bad_records=0.04))
    client = make_client(sandbox.url)
    with pytest.warns(DataQualityWarning, match="quarantined"):
        first = sync_listings(client.session, {})
    market, quarantine = first.frame, first.quarantine
    assert len(quarantine) > 0 and first.quarantined == len(quarantine)
    assert quarantine["_quarantine_reason"].notna().all()
    assert first.requests == counter.total
    assert client.last_load is None  # the loaders return their results; only the Client keeps one
    corrupted = set(sandbox.admin.faults.bad_record_ids)
    assert set(quarantine["ListingId"].dropna()) <= corrupted
    assert not set(market["ListingId"]) & corrupted
    fresh = fresh_market(http_client, sandbox.url, sync_scope({}), invalid=len(quarantine))
    assert_same_market(market, fresh)

    advance(http_client, sandbox.url, 7)
    with warnings.catch_warnings():  # a new listing may be corrupted too
        warnings.simplefilter("ignore", DataQualityWarning)
        later = sync_listings(client.session, {})
        fresh = fresh_market(http_client, sandbox.url, sync_scope({}), invalid=later.quarantined)
    assert_same_market(later.frame, fresh)
    assert later.quarantined >= len(quarantine)
    history = listing_history(client.session, {})
    assert not set(history["ListingId"]) & set(quarantine["ListingId"].dropna())


def test_without_a_cache_every_sync_is_a_full_load(
    start_sandbox, make_client, counter, http_client
):
    sandbox = start_sandbox(listings=400)
    client = make_client(sandbox.url, cache=False)
    scope = sync_scope({"Subtypes": ["Condominium"]})
    for _ in range(2):
        counter.reset()
        market = sync_listings(client.session, {"Subtypes": ["Condominium"]}).frame
        assert counter.kinds["feed"] == 0 and counter.kinds["search"] >= len(STATUSES)
        assert_same_market(market, fresh_market(http_client, sandbox.url, scope))
        advance(http_client, sandbox.url, 2)
    assert listing_history(client.session, {"Subtypes": ["Condominium"]}).empty
    assert sync_state(client.session, {"Subtypes": ["Condominium"]}) is None


def test_the_sync_returns_its_result_and_sets_nothing_on_the_client(
    start_sandbox, make_client, counter, http_client
):
    """The loaders' sync returns its result; only ``client.sync_listings`` keeps ``last_load``."""
    sandbox = start_sandbox(listings=400)
    client = make_client(sandbox.url)
    info = sync_listings(client.session, {"Subtypes": ["Condominium"]})
    assert client.last_load is None  # nothing set on the client
    assert info.requests == counter.total > 0 and info.rows == len(info.frame) > 0
    assert info.changes is None and not info.from_cache  # a first sync: nothing to compare with
    advance(http_client, sandbox.url, 5)
    counter.reset()
    later = sync_listings(client.session, {"Subtypes": ["Condominium"]})
    assert later.requests == counter.total and later.changes is not None
    assert client.last_load is None and later.rows == len(later.frame)


@pytest.mark.parametrize(
    ("scope", "param", "says"),
    [
        ({"Status": "Active"}, "Status", "every status"),
        ({"Since": "2026-01-01"}, "Since", "sets Since itself"),
        ({"Limit": 10}, "Limit", "pages by itself"),
        ({"Sort": "-listprice"}, "Sort", "order"),
        ({"MaxListPrice": 500_000}, "MaxListPrice", "filter the returned frame"),
        ({"MaxDaysOnMarket": 30}, "MaxDaysOnMarket", "filter the returned frame"),
        ({"city": "Miami"}, "city", "did you mean 'City'"),
        ({"PropertyType": "House"}, "PropertyType", "Residential Lease"),
    ],
)
def test_a_bad_scope_is_refused_before_any_request(make_client, counter, scope, param, says):
    client = make_client("http://127.0.0.1:9")  # nothing listens there: any request would fail
    with pytest.raises(QueryError, match=says) as caught:
        sync_listings(client.session, scope)
    assert caught.value.param == param
    with pytest.raises(QueryError):
        listing_history(client.session, scope)
    assert counter.total == 0


def test_bad_chunk_size_is_refused(make_client, counter):
    client = make_client("http://127.0.0.1:9")
    for bad in (0, -5, 2.5, True):
        with pytest.raises(QueryError, match="chunk_size"):
            sync_listings(client.session, {}, chunk_size=bad)
    assert counter.total == 0


def test_scope_is_normalised_so_equal_markets_share_one_entry():
    assert sync_scope({}) == sync_scope({"PropertyType": "Residential"})
    assert sync_scope({"Subtypes": "Villa,Condominium"}) == sync_scope(
        {"Subtypes": ["Condominium", "Villa"]}
    )


# -- the history from day one -------------------------------------------------------------------------


def test_a_first_sync_backfills_over_a_year_and_equals_a_long_series_of_syncs(
    start_sandbox, make_client, counter, http_client, tmp_path
):
    sandbox = start_sandbox(listings=600, history_years=3)  # the default: more than a year
    early = make_client(sandbox.url, cache_dir=tmp_path / "early")
    early.sync_listings(City="Miami")
    history = early.listing_history(City="Miami")
    span = history["ChangeTimestamp"].max() - history["ChangeTimestamp"].min()
    assert len(history) > 0 and span > pd.Timedelta(days=365)
    assert {"price_change", "status_change"} <= set(history["ChangeType"].astype(str))
    for days in (10, 30):
        advance(http_client, sandbox.url, days)
        early.sync_listings(City="Miami")
    # a client that syncs for the first time now gets the same history in one backfill
    late = make_client(sandbox.url, cache_dir=tmp_path / "late")
    late.sync_listings(City="Miami")
    pd.testing.assert_frame_equal(
        late.listing_history(City="Miami"), early.listing_history(City="Miami")
    )


def test_history_since_bounds_or_skips_the_backfill(
    start_sandbox, make_client, counter, http_client, tmp_path, sandbox_as_of
):
    sandbox = start_sandbox(listings=400)
    client = make_client(sandbox.url, cache_dir=tmp_path / "a")
    client.sync_listings(history_since=False)
    assert set(counter.kinds) == {"search"}
    assert client.listing_history().empty
    assert sync_state(client.session, {})["last_requests"]["backfill"] == 0

    since = (pd.Timestamp(sandbox_as_of) - pd.Timedelta(days=90)).normalize()
    other = make_client(sandbox.url, cache_dir=tmp_path / "b")
    market = other.sync_listings(history_since=since.date())  # a date: midnight UTC
    history = other.listing_history()
    assert len(history) > 0 and history["ChangeTimestamp"].min() > since
    records, _ = raw_feed(http_client, sandbox.url, market["ListingId"].tolist(), iso(since))
    assert_history_is_the_feed(history, records)
    assert sync_state(other.session, {})["history_since"] == iso(since)


@pytest.mark.parametrize(
    ("value", "message"),
    [("yesterday", "not a date"), (True, "not a date"), ("2999-01-01", "in the future"), (3, "")],
)
def test_a_bad_history_since_fails_before_any_request(
    start_sandbox, make_client, counter, value, message
):
    sandbox = start_sandbox(listings=100)
    client = make_client(sandbox.url)
    with pytest.raises(QueryError, match=f"history_since.*{message}") as caught:
        client.sync_listings(history_since=value)
    assert "None or False" in str(caught.value.allowed)
    assert counter.total == 0


def test_the_changes_of_a_sync_collapse_per_listing_and_kind():
    t = pd.Timestamp("2026-06-01", tz="UTC")
    listing = {
        "UnparsedAddress": ["1 A St", "2 B St", "3 C St"],
        "City": ["Miami", "Doral", "Miami"],
        "PostalCode": ["33101", "33172", "33101"],
        "PropertyType": ["Residential"] * 3,
        "PropertySubType": ["Condominium", "Single Family Residence", "Townhouse"],
    }
    before = pd.DataFrame({"ListingId": ["A1", "B2", "C3"], **listing})
    feed = pd.DataFrame(
        {
            "ListingId": ["A1", "A1", "B2", "B2"],
            "ChangeType": ["price_change", "price_change", "status_change", "status_change"],
            "ChangeTimestamp": [t, t + pd.Timedelta(days=3), t, t + pd.Timedelta(days=5)],
            "PreviousListPrice": [500_000.0, 480_000.0, None, None],
            "ListPrice": [480_000.0, 450_000.0, None, None],
            "PreviousStatus": [None, None, "Active", "Pending"],
            "StandardStatus": [None, None, "Pending", "Active"],
        }
    )
    new = pd.DataFrame(
        {
            "ListingId": ["D4"],
            "OriginalEntryTimestamp": [t],
            "ListPrice": [1_200_000.0],
            "StandardStatus": ["Active"],
            "UnparsedAddress": ["4 D St"],
            "City": ["Miami"],
            "PostalCode": ["33101"],
            "PropertyType": ["Residential"],
            "PropertySubType": ["Condominium"],
        }
    )
    changes = sync_changes(feed, new, ["C3"], before, pd.concat([before[:2], new]))
    assert list(changes.columns) == list(CHANGE_COLUMNS)
    got = {
        (r.ListingId, r.change): (r.old_price, r.new_price, r.old_status, r.new_status, r.events)
        for r in changes.itertuples(index=False)
    }
    assert got.keys() == {("D4", "new"), ("A1", "price_cut"), ("B2", "pending"),
                          ("B2", "back_on_market"), ("C3", "removed")}  # fmt: skip
    assert got[("A1", "price_cut")][:2] == (500_000.0, 450_000.0)  # first old, last new
    assert got[("A1", "price_cut")][4] == 2
    assert got[("B2", "back_on_market")][2:4] == ("Pending", "Active")
    assert got[("D4", "new")][1] == 1_200_000.0 and math.isnan(got[("D4", "new")][0])
    removed = changes[changes["change"] == "removed"].iloc[0]
    assert removed["UnparsedAddress"] == "3 C St"  # described from the market before the sync
    assert changes["change"].cat.codes.is_monotonic_increasing  # kinds in the documented order


def test_a_closed_listing_is_never_polled_again(start_sandbox, http_client, tmp_path):
    sandbox = start_sandbox(listings=1500)
    asked: list[str] = []

    def on_request(request: httpx.Request) -> None:
        if request.url.path == "/v1/listings/changes":
            asked.extend(request.url.params["ListingIds"].split(","))

    client = rf.Client(base_url=sandbox.url, cache_dir=tmp_path / "c", progress=False,
                       event_hooks={"request": [on_request]})  # fmt: skip
    market = client.sync_listings(history_since=False)
    closed = set(market.loc[market["StandardStatus"] == "Closed", "ListingId"])
    assert len(closed) > len(market) / 2  # most of a market's ids are terminal
    for days in (5, 10):
        advance(http_client, sandbox.url, days)
        synced = client.sync_listings()
        assert asked and not closed & set(asked)  # Closed is terminal: never asked about again
        closed |= set(synced.loc[synced["StandardStatus"] == "Closed", "ListingId"])
        asked.clear()
    # still equal to a fresh full load: nothing the feed would have said was missed
    assert_same_market(synced, fresh_market(http_client, sandbox.url, sync_scope({})))
    client.close()
