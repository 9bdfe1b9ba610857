"""Watches end to end against real servers on loopback: the sandbox (its clock moved by the test),
an SMTP server and an HTTP receiver. A run reports exactly what ``rf.market_changes`` finds
between the markets of two syncs; a run with nothing new sends nothing; a notification that was
not delivered is reported again by the next run; secrets never show."""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest

import realtyframes as rf
from realtyframes.analysis import CHANGE_KINDS
from realtyframes.cache import state_file
from realtyframes.sandbox import RunningSandbox
from realtyframes.watch import MAX_ROWS, matching
from receivers import Hook, Inbox, dripping_receiver, http_receiver, smtp_server

TOKEN = "watch-hook-token-K9p2Lm"


def advance(http: httpx.Client, base: str, days: float) -> None:
    http.post(f"{base}/_sandbox/clock", json={"advance_days": days}).raise_for_status()


@pytest.fixture
def receivers() -> Iterator[tuple[Inbox, Hook]]:
    with smtp_server() as inbox, http_receiver() as hook:
        yield inbox, hook


@pytest.fixture
def make_client(tmp_path: Path) -> Iterator[Callable[..., rf.Client]]:
    clients: list[rf.Client] = []

    def make(url: str, **options: Any) -> rf.Client:
        options.setdefault("cache_dir", tmp_path / "cache")
        client = rf.Client(base_url=url, progress=False, **options)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


def _hook_url(hook: Hook) -> str:
    return f"json://hooks:{TOKEN}@{hook.url}/watch"


def test_a_run_reports_exactly_what_market_changes_finds_then_nothing(
    start_sandbox: Callable[..., RunningSandbox],
    make_client: Callable[..., rf.Client],
    http_client: httpx.Client,
    receivers: tuple[Inbox, Hook],
) -> None:
    inbox, hook = receivers
    sandbox = start_sandbox(listings=1500)
    client = make_client(sandbox.url)
    watches = rf.Watches(client)
    watches.add("market", notify=[_hook_url(hook)], link="https://homes.example/l/{ListingId}")
    watches.add("cheap", MaxListPrice=400_000, notify=[inbox.url()])

    first = watches.run()
    assert [r.first_run for r in first] == [True, True]
    assert [r.total for r in first] == [0, 0]
    assert first[0].synced and first[1].synced  # one scope: synced once, by this process
    assert hook.posts == [] and inbox.messages == []  # a first run only records the start
    before = client.sync_listings()

    advance(http_client, sandbox.url, 7)
    cheap, market = watches.run()  # sorted by name
    after = client.sync_listings()
    expected = rf.market_changes(before, after)
    assert len(expected) > 5 and expected["change"].nunique() >= 3  # a real week of changes
    pd.testing.assert_frame_equal(market.changes, expected)
    counts = expected["change"].astype("string").value_counts()
    assert market.counts == {k: int(counts.get(k, 0)) for k in CHANGE_KINDS}
    assert market.matches == len(after)

    # the filtered watch: the same rows, of the listings under the bound before or after
    chosen = set(before.loc[matching(before, {"MaxListPrice": "400000"}), "ListingId"]) | set(
        after.loc[matching(after, {"MaxListPrice": "400000"}), "ListingId"]
    )
    expected_cheap = expected[expected["ListingId"].isin(chosen)].reset_index(drop=True)
    assert 0 < len(expected_cheap) < len(expected)
    pd.testing.assert_frame_equal(cheap.changes, expected_cheap)

    # one message each: the webhook's table names the changed listings, with their links
    ((_, _, body),) = hook.posts
    assert body["title"].startswith("realtyframes watch market: ")
    for row in expected.head(MAX_ROWS).itertuples():
        assert row.ListingId in body["message"]
        assert f"https://homes.example/l/{row.ListingId}" in body["message"]
    cuts = expected[expected["change"] == "price_cut"].head(1)
    for row in cuts.itertuples():  # a cut's amount and %
        delta = row.old_price - row.new_price
        assert f"-${delta:,.0f} (-{delta / row.old_price:.1%})" in body["message"]
    (mail,) = inbox.messages
    assert mail["Subject"].startswith("realtyframes watch cheap: ")
    html = mail.get_body(preferencelist=("html",))
    assert html is not None
    for listing in expected_cheap["ListingId"].head(MAX_ROWS):
        assert listing in html.get_content()

    # nothing new on the server: nothing reported, nothing sent
    again = watches.run()
    assert [r.total for r in again] == [0, 0]
    assert [r.deliveries for r in again] == [(), ()]
    assert len(hook.posts) == 1 and len(inbox.messages) == 1

    # each watch run is one record of the run history, with the counts of its result
    runs = client.runs()
    watch_runs = runs[runs["kind"] == "watch"].reset_index(drop=True)
    assert list(watch_runs["resource"]) == ["cheap", "market"] * 3  # runs go by name
    assert set(watch_runs["outcome"]) == {"ok"}
    week = watch_runs.iloc[[2, 3]]  # the runs after the clock advance: cheap, then market
    for record, result in zip(week.itertuples(), (cheap, market), strict=True):
        assert record.rows == result.matches
        assert record.new == result.counts["new"] and record.removed == result.counts["removed"]
        assert record.changed == result.total - result.counts["new"] - result.counts["removed"]
    assert list(watch_runs["changed"].iloc[4:]) == [0, 0]


def test_a_message_not_delivered_is_reported_again_by_the_next_run(
    start_sandbox: Callable[..., RunningSandbox],
    make_client: Callable[..., rf.Client],
    http_client: httpx.Client,
    receivers: tuple[Inbox, Hook],
) -> None:
    _, hook = receivers
    sandbox = start_sandbox(listings=1000)
    client = make_client(sandbox.url)
    watches = rf.Watches(client)
    watches.add("w", notify=_hook_url(hook))
    watches.run()
    advance(http_client, sandbox.url, 5)
    hook.status = 503
    (failed,) = watches.run()
    assert not failed.ok and failed.failed == (str(watches.get("w").notify[0]),)
    assert failed.total > 0
    hook.status = 200
    (retried,) = watches.run()  # the server did not move: the same changes, delivered now
    assert retried.ok and retried.sent
    pd.testing.assert_frame_equal(retried.changes, failed.changes)
    assert len(hook.posts) == 2
    (quiet,) = watches.run()
    assert quiet.total == 0 and quiet.deliveries == ()
    runs = client.runs()
    watch_runs = runs[runs["kind"] == "watch"]
    assert list(watch_runs["outcome"]) == ["ok", "failed", "ok", "ok"]
    assert list(watch_runs["error_code"].fillna("")) == ["", "NotificationError", "", ""]
    assert "hook" not in " ".join(map(str, watch_runs["scope"]))  # no URL in the history


def test_a_receiver_dripping_a_byte_every_2_s_fails_at_the_notification_deadline(
    start_sandbox: Callable[..., RunningSandbox], make_client: Callable[..., rf.Client]
) -> None:
    """Such a receiver hung ``watch run`` for over 240 s (each byte within apprise's read
    timeout, the answer never done). Every notification now has a total deadline: past it the
    sending is abandoned, typed (NotificationTimeout) in the delivery, the result and the run
    record, and the next run reports the changes again."""
    sandbox = start_sandbox(listings=300)
    client = make_client(sandbox.url)
    watches = rf.Watches(client)
    with dripping_receiver(interval=2.0) as slow:
        watches.add("w", notify=f"json://hooks:{TOKEN}@{slow.url}/watch")
        (result,) = watches.run(always=True, notify_deadline=0.3)
        assert len(slow.posts) == 1  # it got the message; its answer never ended
    assert not result.ok and result.failed == (str(watches.get("w").notify[0]),)
    (delivery,) = result.deliveries
    assert isinstance(delivery.error, rf.NotificationTimeout)
    assert isinstance(delivery.error, rf.NotificationError) and delivery.error.deadline == 0.3
    assert result.error is not None and result.error.startswith("NotificationTimeout: ")
    assert TOKEN not in result.error and TOKEN not in str(delivery)
    runs = client.runs()
    (run,) = runs[runs["kind"] == "watch"].itertuples()
    assert (run.outcome, run.error_code) == ("failed", "NotificationTimeout")
    assert watches.get("w").last_run is None  # not delivered: the next run reports it again
    with pytest.raises(rf.QueryError, match="notify_deadline"):
        watches.run(notify_deadline=0)


def test_always_sends_even_when_nothing_changed(
    start_sandbox: Callable[..., RunningSandbox],
    make_client: Callable[..., rf.Client],
    receivers: tuple[Inbox, Hook],
) -> None:
    _, hook = receivers
    sandbox = start_sandbox(listings=300)
    watches = rf.Watches(make_client(sandbox.url))
    watches.add("w", Status="Active", notify=_hook_url(hook))
    (first,) = watches.run(always=True)
    assert first.first_run and first.sent
    assert "watching" in hook.bodies[0]["title"]
    (second,) = watches.run(always=True)
    assert second.total == 0 and second.sent
    assert "No changes since the last run" in hook.bodies[1]["message"]
    # the same search with other targets or link goes on from its last run; another starts afresh
    last = watches.get("w").last_run
    watches.add("w", Status="Active", link="https://h.example/{ListingId}", replace=True)
    assert watches.get("w").last_run == last is not None
    (third,) = watches.run()
    assert not third.first_run and third.deliveries == ()
    watches.add("w", Status="Pending", replace=True)
    assert watches.get("w").last_run is None
    assert watches.run()[0].first_run


def test_the_watches_file_is_private_and_urls_show_only_masked(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    cache = tmp_path / "cache"
    watches = rf.Watches(cache_dir=cache)
    smtp = "mailtos://me:smtp-Pass-31x@smtp.example.com?to=me@example.com"
    hook = f"jsons://hooks.example.com/in/{TOKEN}"
    watch = watches.add("miami", City="Miami", MaxListPrice=900000, notify=[smtp, hook])
    stored = state_file(cache)  # the watches table (docs/cache.md)
    assert stored.stat().st_mode & 0o777 == 0o600
    with closing(sqlite3.connect(f"file:{stored}?mode=ro", uri=True)) as db:
        (definition,) = db.execute("SELECT definition FROM watches WHERE name = 'miami'").fetchone()
    assert json.loads(definition)["notify"] == [smtp, hook]
    assert watch.scope == {"City": "Miami", "PropertyType": "Residential"}
    assert watch.filters == {"MaxListPrice": "900000"}
    listed = watches.list()
    shown = [repr(watch), str(watch), repr(watches), listed.to_string(), caplog.text]
    for text in shown:
        assert "smtp-Pass-31x" not in text and TOKEN not in text
    assert listed.loc[0, "notify"].startswith("mailtos://me:")
    with pytest.raises(rf.QueryError) as exists:
        watches.add("miami", City="Doral")
    assert exists.value.param == "name"
    watches.add("miami", City="Doral", replace=True)
    assert watches.get("miami").scope["City"] == "Doral"
    watches.remove("miami")
    assert len(watches.list()) == 0
    state = b"".join(p.read_bytes() for p in stored.parent.glob("state.sqlite3*"))
    assert b"smtp-Pass-31x" not in state and TOKEN.encode() not in state  # overwritten
    with pytest.raises(rf.QueryError, match="no watch named"):
        watches.remove("miami")


@pytest.mark.parametrize(
    ("call", "param"),
    [
        (lambda w: w.add("bad name!", City="Miami"), "name"),
        (lambda w: w.add("x", Cty="Miami"), "Cty"),
        (lambda w: w.add("x", Status="Sold"), "Status"),
        (lambda w: w.add("x", MaxListPrice=-5), "MaxListPrice"),
        (lambda w: w.add("x", Limit=10), "Limit"),
        (lambda w: w.add("x", notify="nosuch://user:pw-Secret-9@h"), "notify"),
        (lambda w: w.add("x", link="https://homes.example/l/"), "link"),
        (lambda w: w.run("nope"), "client"),
    ],
)
def test_bad_input_is_a_query_error_naming_the_parameter(
    tmp_path: Path, call: Callable[[rf.Watches], Any], param: str
) -> None:
    watches = rf.Watches(cache_dir=tmp_path / "cache")
    with pytest.raises(rf.QueryError) as refused:
        call(watches)
    assert refused.value.param == param
    assert "pw-Secret-9" not in str(refused.value)
    assert not (tmp_path / "cache").exists()  # refused before anything was written


@pytest.mark.parametrize("name", ["miami\n", "miami\r", "mia\tmi", "miami\x00", "miami\x1b[2J"])
def test_a_name_with_a_control_character_is_refused(tmp_path: Path, name: str) -> None:
    """``"miami\\n"`` passed the name's pattern (``$`` matches before a final newline)."""
    watches = rf.Watches(cache_dir=tmp_path / "cache")
    with pytest.raises(rf.QueryError, match="control character") as refused:
        watches.add(name, City="Miami")
    assert refused.value.param == "name"
    assert isinstance(refused.value, ValueError)
    assert not (tmp_path / "cache" / ".watches" / "watches.json").exists()
    watches.add("miami", City="Miami")
    for call in (watches.get, watches.remove):
        with pytest.raises(rf.QueryError, match="control character"):
            call(name)
    assert watches.names() == ["miami"]


def test_run_refuses_unknown_names_and_bad_waits_before_syncing(
    sandbox_url: str, make_client: Callable[..., rf.Client]
) -> None:
    watches = rf.Watches(make_client(sandbox_url))
    watches.add("a", City="Miami")
    with pytest.raises(rf.QueryError) as unknown:
        watches.run("b")
    assert unknown.value.param == "name" and str(unknown.value).endswith("allowed: a")
    with pytest.raises(rf.QueryError) as wait:
        watches.run(wait=-1)
    assert wait.value.param == "wait"
    with pytest.raises(rf.QueryError, match="cache=False"):
        rf.Watches(make_client(sandbox_url, cache=False))


def test_synced_market_reads_the_last_sync_without_a_request(
    start_sandbox: Callable[..., RunningSandbox], tmp_path: Path
) -> None:
    """What a run that waited for another process's sync reads instead of syncing again."""
    from realtyframes.loaders import synced_market

    sandbox = start_sandbox(listings=300)
    requests: list[str] = []
    hooks = {"request": [lambda r: requests.append(str(r.url))]}
    with rf.Client(
        base_url=sandbox.url, cache_dir=tmp_path / "c", progress=False, event_hooks=hooks
    ) as client:
        assert synced_market(client.session, {"City": "Doral"}) is None
        market = client.sync_listings(City="Doral")
        requests.clear()
        cached = synced_market(client.session, {"City": "Doral"})
        assert requests == []
        assert cached is not None
        pd.testing.assert_frame_equal(cached.reset_index(drop=True), market.reset_index(drop=True))
    with rf.Client(base_url=sandbox.url, cache=False, progress=False) as uncached:
        assert synced_market(uncached.session, {"City": "Doral"}) is None


def test_a_busy_scope_is_flagged_and_the_other_scopes_still_run(
    start_sandbox: Callable[..., RunningSandbox], make_client: Callable[..., rf.Client]
) -> None:
    from realtyframes.cache import file_lock
    from realtyframes.loaders import sync_lock

    sandbox = start_sandbox(listings=300)
    client = make_client(sandbox.url)
    watches = rf.Watches(client)
    watches.add("a", City="Doral")
    watches.add("b", City="Miami")
    held = sync_lock(client.session, watches.get("a").scope)
    assert held is not None
    with file_lock(held, timeout=5):  # another run syncing Doral
        busy, done = watches.run(wait=0)
    assert busy.busy and not busy.ok and busy.total == 0 and not busy.synced
    assert busy.error is not None and busy.error.startswith("ScopeBusyError: another run kept")
    assert client.sync_state(City="Doral") is None  # nothing synced for the busy scope
    assert done.ok and done.first_run and done.synced
    (again,) = watches.run("a")  # free now: a first run
    assert again.ok and again.first_run
