"""Every answer is checked against its question (issue 24): through a fault-injecting proxy
(tests/faultproxy.py) that answers with another request's body, each load either equals the
fault-free run (the fault was transient: retried) or raises ``rf.ResponseMismatchError`` naming
what mismatched (persistent) -- and after a raise the cache holds the previous complete
generation or nothing, never a wrong row.

The fault-free run reads the same sandbox directly (no proxy) into a cache of its own.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest

import realtyframes as rf
from realtyframes.loaders import listing_history, synced_market
from realtyframes.loaders._answers import PageQuestion, check_echo
from realtyframes.loaders._page_info import page_info

FAST = rf.RetryPolicy(max_retries=3, backoff_base=0.005, backoff_cap=0.02)
Make = Callable[..., rf.Client]


@pytest.fixture
def make(tmp_path: Path) -> Iterator[Make]:
    """``make(url, name)``: a client on ``url`` with the cache ``tmp_path / name``, quick retries."""
    clients: list[rf.Client] = []

    def _make(url: str, name: str, **options: Any) -> rf.Client:
        options.setdefault("retry", FAST)
        client = rf.Client(url, cache_dir=tmp_path / name, progress=False, **options)
        clients.append(client)
        return client

    yield _make
    for client in clients:
        client.close()


@pytest.fixture
def setup(start_sandbox, fault_proxy, make):
    """(sandbox, proxy in front of it, direct client, proxied client)."""
    sandbox = start_sandbox()
    proxy = fault_proxy(sandbox.url)
    return sandbox, proxy, make(sandbox.url, "direct"), make(proxy.url, "proxied")


def _raises(field: str, load: Callable[[], Any]) -> rf.ResponseMismatchError:
    with pytest.raises(rf.ResponseMismatchError) as caught:
        load()
    error = caught.value
    assert error.field == field, error
    assert isinstance(error, rf.BadResponseError) and error.url and error.method == "GET"
    assert "does not match the request" in str(error)
    return error


def _assert_cache_holds(
    make: Make, proxy: Any, load: Callable[[rf.Client], Any], expected: Any | None
) -> None:
    """A fresh client on the same cache: the entry is ``expected`` (the previous complete
    generation) or, when None, there is none (the load goes to the server)."""
    proxy.set(None)
    fresh = make(proxy.url, "proxied")
    got = load(fresh)
    if expected is None:
        assert not fresh.last_load.from_cache
    else:
        assert fresh.last_load.from_cache
        _assert_same(got, expected)


def _assert_same(got: Any, expected: Any) -> None:
    if isinstance(expected, pd.DataFrame):
        pd.testing.assert_frame_equal(got, expected)
    else:  # rf.Analytics
        for name in ("overview", "pages", "referrers", "devices"):
            pd.testing.assert_frame_equal(getattr(got, name), getattr(expected, name))
        assert got.period == expected.period


# -- the checks themselves ------------------------------------------------------------------------


def test_a_page_without_offset_or_limit_is_accepted_a_different_one_is_not():
    question = PageQuestion.of("contacts", {})
    bare = b'{"total": 60, "contacts": [{"id": "c1"}]}'
    question.check(bare, page_info(bare, "contacts"), offset=50, limit=50)
    bad_limit = b'{"total": 60, "offset": 50, "limit": 20, "contacts": [{"id": "c1"}]}'
    with pytest.raises(rf.ResponseMismatchError) as caught:
        question.check(bad_limit, page_info(bad_limit, "contacts"), offset=50, limit=50)
    assert (caught.value.field, caught.value.asked, caught.value.got) == ("limit", 50, 20)


def test_records_of_another_status_give_a_stale_page_away_one_fitting_record_is_enough():
    question = PageQuestion.of("listings", {"Status": "Pending", "PropertyType": "Residential"})
    pending = b'{"ListingId":"A%d","StandardStatus":"Pending","PropertyType":"Residential"}'
    active = b'{"ListingId":"B%d","StandardStatus":"Active","PropertyType":"Residential"}'

    def page(records: list[bytes]) -> bytes:
        return b'{"total":9,"offset":0,"limit":50,"listings":[' + b",".join(records) + b"]}"

    lagging = page([active % 1, pending % 2])  # an index a moment behind its records
    question.check(lagging, page_info(lagging, "listings"), offset=0, limit=50)
    stale = page([active % 1, active % 2])
    with pytest.raises(rf.ResponseMismatchError) as caught:
        question.check(stale, page_info(stale, "listings"), offset=0, limit=50)
    assert (caught.value.field, caught.value.asked) == ("StandardStatus", "Pending")
    empty = page([])
    question.check(empty, page_info(empty, "listings"), offset=0, limit=50)


def test_change_records_of_listings_not_asked_about_are_refused():
    question = PageQuestion.of("changes", {"ListingIds": "A1,A2", "Since": "2026-01-01T00:00:00Z"})
    body = (
        b'{"total":2,"offset":0,"limit":50,"changes":[{"ListingId":"A1","ChangeType":"price_change",'
        b'"ChangeTimestamp":"2026-02-01T00:00:00Z"},{"ListingId":"Z9","ChangeType":"price_change",'
        b'"ChangeTimestamp":"2026-02-01T00:00:00Z"}]}'
    )
    with pytest.raises(rf.ResponseMismatchError) as caught:
        question.check(body, page_info(body, "changes"), offset=0, limit=50)
    assert (caught.value.field, caught.value.asked, caught.value.got) == (
        "ListingId",
        ("A1", "A2"),
        "Z9",
    )
    assert "not among the 2 ListingIds asked about" in str(caught.value)
    old = body.replace(b'"Z9"', b'"A2"').replace(b"2026-02-01", b"2025-02-01")
    with pytest.raises(rf.ResponseMismatchError, match="Since"):
        question.check(old, page_info(old, "changes"), offset=0, limit=50)


def test_a_detail_is_checked_by_its_top_level_id_nested_copies_do_not_count():
    check_echo(b'{"ListingId": "A1", "Media": []}', "ListingId", "A1")
    check_echo(b'{"ListPrice": 1}', "ListingId", "A1")  # not echoed: accepted
    check_echo(b'{"ListingId": null}', "ListingId", "A1")  # null: validation's business
    nested = b'{"contactId": "c2", "activity": [{"contactId": "c1"}]}'
    with pytest.raises(rf.ResponseMismatchError, match="'c2' where 'c1'"):
        check_echo(nested, "contactId", "c1")


def test_the_mismatch_error_pickles_with_its_fields():
    import pickle

    error = rf.ResponseMismatchError.of("offset", 100, 50).at("GET", "http://x/v1/listings")
    again = pickle.loads(pickle.dumps(error))
    assert (again.field, again.asked, again.got, again.url) == ("offset", 100, 50, error.url)
    assert str(again) == str(error)


# -- listings search and details ------------------------------------------------------------------

QUERY = {"PropertyType": "Residential", "Status": "Closed"}  # 139 listings: 3 pages


def test_pages_that_do_not_echo_offset_and_limit_are_accepted(setup):
    _, proxy, direct, proxied = setup
    proxy.set("no_echo")
    _assert_same(proxied.listings(**QUERY), direct.listings(**QUERY))
    _assert_same(proxied.contacts(), direct.contacts())
    assert proxy.injected["no_echo"] == 3 + 2  # every page of both loads


def test_search_through_a_stale_cache_equals_the_fault_free_run_or_raises(setup, make):
    _, proxy, direct, proxied = setup
    expected = direct.listings(**QUERY)
    assert direct.last_load.total > 100  # three pages at least: later ones get stale bodies

    proxy.set("stale_page", times=2)
    _assert_same(proxied.listings(**QUERY), expected)
    assert proxy.injected["stale_page"] == 2

    proxy.set("stale_page")  # every time: the retries are spent
    _raises("offset", lambda: proxied.listings(**QUERY, refresh=True))
    # within the retry policy: each of the 3 pages is tried at most 1 + max_retries times
    assert proxy.injected["stale_page"] <= 2 * FAST.max_retries + 2
    assert proxy.forwarded + proxy.injected["stale_page"] <= 3 * (1 + FAST.max_retries)
    # the previous complete generation is still the entry
    _assert_cache_holds(make, proxy, lambda c: c.listings(**QUERY), expected)


def test_a_stale_page_never_reaches_an_empty_cache(setup, make):
    _, proxy, direct, proxied = setup
    expected = direct.listings(**QUERY)
    proxy.set("stale_page")
    _raises("offset", lambda: proxied.listings(**QUERY))
    _assert_cache_holds(make, proxy, lambda c: c.listings(**QUERY), None)
    _assert_same(make(proxy.url, "proxied").listings(**QUERY), expected)


@pytest.mark.parametrize(
    ("mode", "field"),
    [
        ("stale_page", "offset"),
        ("swapped_detail", "ListingId"),
        ("empty_detail", "ListingId"),  # a 200 `{}`: once quarantined and cached as a row
        ("list_detail", "ListingId"),  # a 200 search page for a detail: likewise
    ],
)
def test_details_through_the_proxy_equal_the_fault_free_run_or_raise(setup, make, mode, field):
    _, proxy, direct, proxied = setup
    expected = direct.listings(**QUERY, details=True)
    expected_media = direct.last_load.media

    proxy.set(mode, times=3)
    _assert_same(proxied.listings(**QUERY, details=True), expected)
    _assert_same(proxied.last_load.media, expected_media)
    assert proxy.injected[mode] == 3

    proxy.set(mode)
    _raises(field, lambda: proxied.listings(**QUERY, details=True, refresh=True))
    _assert_cache_holds(make, proxy, lambda c: c.listings(**QUERY, details=True), expected)


@pytest.mark.parametrize("mode", ["swapped_detail", "empty_detail", "list_detail"])
def test_one_listing_swapped_is_retried_then_refused(setup, make, mode):
    _, proxy, direct, proxied = setup
    listing_id = str(direct.listings(**QUERY, max_results=1)["ListingId"].iloc[0])
    expected = direct.listing(listing_id)
    proxy.set(mode, times=1)
    _assert_same(proxied.listing(listing_id), expected)
    assert proxied.last_load.quarantined == 0
    proxy.set(mode)
    error = _raises("ListingId", lambda: proxied.listing(listing_id, refresh=True))
    if mode == "swapped_detail":
        assert error.asked == listing_id and error.got != listing_id
    else:  # no record at all: a fault, retried, then raised (never a quarantined row)
        assert error.asked == "a record" and proxy.injected[mode] > 1
    _assert_cache_holds(make, proxy, lambda c: c.listing(listing_id), expected)


# -- change feed ----------------------------------------------------------------------------------

SINCE = "2025-06-01T00:00:00Z"


@pytest.mark.parametrize("mode", ["foreign_changes", "stale_page"])
def test_changes_through_the_proxy_equal_the_fault_free_run_or_raise(setup, make, mode):
    _, proxy, direct, proxied = setup
    ids = direct.listings(PropertyType="Residential", Status="Closed")["ListingId"].tolist()
    assert len(ids) > 100  # two id chunks: a stale page of one answers the other
    expected = direct.listing_changes(ids, SINCE)
    assert len(expected) > 50

    proxy.set(mode, times=2)
    _assert_same(proxied.listing_changes(ids, SINCE), expected)
    assert proxy.injected[mode] == 2

    proxy.set(mode)
    with pytest.raises(rf.ResponseMismatchError) as caught:
        proxied.listing_changes(ids, SINCE, refresh=True)
    assert caught.value.field in ("ListingId", "offset")  # a stale page: whichever came first
    _assert_cache_holds(make, proxy, lambda c: c.listing_changes(ids, SINCE), expected)


# -- contacts, contact, activity ------------------------------------------------------------------


def test_contacts_through_a_stale_cache_equal_the_fault_free_run_or_raise(setup, make):
    _, proxy, direct, proxied = setup
    expected = direct.contacts()
    assert direct.last_load.total > 50  # two pages
    proxy.set("stale_page", times=1)
    _assert_same(proxied.contacts(), expected)
    assert proxy.injected["stale_page"] == 1
    proxy.set("stale_page")
    _raises("offset", lambda: proxied.contacts(refresh=True))
    _assert_cache_holds(make, proxy, lambda c: c.contacts(), expected)


@pytest.mark.parametrize(("load", "field"), [("contact", "id"), ("contact_activity", "contactId")])
def test_a_swapped_contact_is_retried_then_refused(setup, make, load, field):
    _, proxy, direct, proxied = setup
    contact_id = str(direct.contacts()["id"].iloc[3])
    expected = getattr(direct, load)(contact_id)
    proxy.set("swapped_detail", times=1)
    _assert_same(getattr(proxied, load)(contact_id), expected)
    assert proxy.injected["swapped_detail"] == 1
    proxy.set("swapped_detail")
    error = _raises(field, lambda: getattr(proxied, load)(contact_id, refresh=True))
    assert error.asked == contact_id
    _assert_cache_holds(make, proxy, lambda c: getattr(c, load)(contact_id), expected)


# -- analytics ------------------------------------------------------------------------------------


def test_analytics_of_another_period_is_retried_then_refused(setup, make):
    _, proxy, direct, proxied = setup
    expected = direct.analytics("7d", Device="mobile")
    proxy.set("wrong_period", times=1)
    _assert_same(proxied.analytics("7d", Device="mobile"), expected)
    assert proxy.injected["wrong_period"] == 1
    proxy.set("wrong_period")
    error = _raises("period", lambda: proxied.analytics("7d", Device="mobile", refresh=True))
    assert (error.asked, error.got) == ("7d", "24h")
    _assert_cache_holds(make, proxy, lambda c: c.analytics("7d", Device="mobile"), expected)


def test_analytics_of_another_period_never_reaches_an_empty_cache(setup, make):
    _, proxy, _, proxied = setup
    proxy.set("wrong_period")
    _raises("period", lambda: proxied.analytics("30d"))
    _assert_cache_holds(make, proxy, lambda c: c.analytics("30d"), None)


# -- sync across clock advances -------------------------------------------------------------------


def _advance(base: str, days: float) -> None:
    httpx.post(f"{base}/_sandbox/clock", json={"advance_days": days}).raise_for_status()


def _cached_market(client: rf.Client) -> pd.DataFrame | None:
    return synced_market(client.session, {})


def _same_sync(proxied: rf.Client, direct: rf.Client) -> None:
    """The proxied client's synced market and history equal the direct client's."""
    _assert_same(proxied.sync_listings(), direct.sync_listings())
    _assert_same(listing_history(proxied.session, {}), listing_history(direct.session, {}))


@pytest.mark.slow
def test_sync_across_clock_advances_equals_the_fault_free_run_or_raises(setup, make):
    """Each sync through the proxy equals the same sync read directly (same server, same
    previous state) after transient faults; a persistent fault raises and leaves the previous
    synced market and history in the cache."""
    sandbox, proxy, _, _ = setup
    base = sandbox.url
    # one request at a time: which answer the proxy's cache holds is then the same every run
    direct = make(base, "direct-sync", max_concurrency=1)
    proxied = make(proxy.url, "proxied-sync", max_concurrency=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rf.DataQualityWarning)
        # first sync: full load and history backfill; at most max_retries faults, since they
        # may all fall on one request (the statuses are read one after the other)
        proxy.set("stale_page", times=3)
        _same_sync(proxied, direct)
        assert proxy.injected["stale_page"] == 3

        steps = (
            (7, "foreign_changes", "ListingId"),  # the change feed
            (7, "stale_page", "StandardStatus"),  # the new listings' searches, status by status
            (30, "swapped_detail", "ListingId"),  # the details of listings that closed
        )
        for days, mode, field in steps:
            _advance(base, days)
            before = (_cached_market(proxied), listing_history(proxied.session, {}))
            proxy.set(mode)  # persistent: the sync raises, the cache keeps the last sync
            with pytest.raises(rf.ResponseMismatchError) as caught:
                proxied.sync_listings()
            assert caught.value.field == field
            _assert_same(_cached_market(proxied), before[0])
            _assert_same(listing_history(proxied.session, {}), before[1])
            proxy.set(mode, times=2)  # transient: the same sync succeeds, equal to the direct one
            _same_sync(proxied, direct)
            assert proxy.injected[mode] == 2, (mode, dict(proxy.injected))


@pytest.mark.parametrize(
    "body",
    [
        b"{}",
        b'{"total": 1, "offset": 0, "limit": 50, "listings": [{"ListingId": "A1"}]}',
        b'{"total": 0, "listings": []}',
    ],
)
def test_a_detail_that_is_no_record_is_a_mismatch(body: bytes):
    """Even a list page of one record, the one asked for: a page, not the detail."""
    with pytest.raises(rf.ResponseMismatchError) as caught:
        check_echo(body, "ListingId", "A1")
    assert caught.value.field == "ListingId" and caught.value.asked == "a record"
    check_echo(b'{"ListingId": "A1", "Media": [{"Order": 1}]}', "ListingId", "A1")  # a record
