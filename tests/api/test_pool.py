"""One bounded pool per client: its copies and concurrent calls share the same slots, and every
transport httpx holds for it carries the steps (retry, slot, pacing, counting, hooks)."""

from __future__ import annotations

import threading
from typing import Any

import httpx
import pytest

from fakeclock import FakeClock
from realtyframes.api import ApiClient
from realtyframes.api._transports import RetryTransport


class InFlight:
    """A fake server that counts the requests in flight at once; each group of ``width`` waits
    for the others of its group (a barrier), so a width the client cannot reach fails."""

    def __init__(self, width: int) -> None:
        self.barrier = threading.Barrier(width, timeout=30)
        self.lock = threading.Lock()
        self.now = self.peak = self.total = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        with self.lock:
            self.now += 1
            self.total += 1
            self.peak = max(self.peak, self.now)
        try:
            self.barrier.wait()
        finally:
            with self.lock:
                self.now -= 1
        return httpx.Response(200, json={"offset": request.url.params["Offset"]})


def test_copies_and_concurrent_calls_share_the_clients_slots() -> None:
    server = InFlight(3)
    api = ApiClient(
        "http://api.test", transport=httpx.MockTransport(server), max_concurrency=3,
        clock=FakeClock(),
    )  # fmt: skip
    copy = api.with_options(timeout=5.0)
    got: dict[str, Any] = {}

    def load(name: str, client: ApiClient) -> None:
        got[name] = client.get_many([("/v1/listings", {"Offset": str(i)}) for i in range(6)])

    with api:
        threads = [
            threading.Thread(target=load, args=(name, client))
            for name, client in (("api", api), ("copy", copy))
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    # two calls of 3 each would put 6 in flight; the one pool holds them to 3
    assert server.total == 12 and server.peak == 3
    assert (
        [r["offset"] for r in got["api"]]
        == [str(i) for i in range(6)]
        == [r["offset"] for r in got["copy"]]
    )


def test_a_smaller_copy_uses_fewer_of_the_same_slots() -> None:
    server = InFlight(1)
    with ApiClient(
        "http://api.test", transport=httpx.MockTransport(server), max_concurrency=4,
        clock=FakeClock(),
    ) as api:  # fmt: skip
        one = api.with_options(max_concurrency=1)
        assert len(one.get_many([("/v1/listings", {"Offset": str(i)}) for i in range(5)])) == 5
    assert server.peak == 1


@pytest.mark.parametrize("transport", [None, httpx.MockTransport(lambda r: httpx.Response(200))])
def test_every_transport_of_a_client_is_composed(transport: httpx.BaseTransport | None) -> None:
    with ApiClient("http://api.test", transport=transport) as api:
        http = api.http
        held = [http._transport, *(t for t in http._mounts.values() if t is not None)]
    assert held and all(isinstance(t, RetryTransport) for t in held)


class Wire:
    """Requests in flight on the wire (httpx event hooks run once per attempt, in the slots)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = self.peak = self.feed = 0

    def request(self, request: httpx.Request) -> None:
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
            self.feed += request.url.path.endswith("/changes")

    def response(self, response: httpx.Response) -> None:
        with self.lock:
            self.now -= 1


def test_the_syncs_change_feed_is_requests_in_the_clients_pool(
    start_sandbox: Any, tmp_path: Any
) -> None:
    """A first sync's feed backfill (its chunks in threads, each chunk paged) stays within the
    client's max_concurrency: its chunks share the client's slots, with no copies of the client."""
    import realtyframes as rf

    sandbox = start_sandbox(listings=1500)
    wire = Wire()
    hooks = {"request": [wire.request], "response": [wire.response]}
    with rf.Client(
        sandbox.url, cache_dir=tmp_path, progress=False, max_concurrency=3, event_hooks=hooks
    ) as client:
        market = client.sync_listings()
    assert len(market) > 300 and wire.feed > 3  # chunks of 100 ids: the feed ran in threads
    assert wire.peak <= 3


class Watched(threading.Condition):
    """A condition that says each time a thread starts waiting on it (released before the wait,
    under the lock, so the waiter is in the queue before anyone else can take the lock)."""

    def __init__(self) -> None:
        super().__init__()
        self.waiting = threading.Semaphore(0)

    def wait(self, timeout: float | None = None) -> bool:
        self.waiting.release()
        return super().wait(timeout)


def test_a_freed_slot_reaches_a_waiter_whose_limit_allows_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A copy with a smaller max_concurrency waits in the same queue: a freed slot it may not use
    must still reach a waiter with a larger limit (not wait for the next slot to be freed)."""
    from realtyframes.api import _transports

    cond = Watched()
    with monkeypatch.context() as patch:  # the slots wait on a condition the test watches
        patch.setattr(_transports, "threading", type("T", (), {"Condition": lambda: cond}))
        slots = _transports.Slots()
    slots.take(2, None)
    slots.take(2, None)  # two in flight
    took = threading.Event()
    small = threading.Thread(target=slots.take, args=(1, None), daemon=True)
    small.start()
    cond.waiting.acquire()  # a copy of limit 1 waits first
    large = threading.Thread(target=lambda: (slots.take(2, None), took.set()), daemon=True)
    large.start()
    cond.waiting.acquire()  # then a call of limit 2
    slots.give()  # one in flight: the call of limit 2 may go, the copy of limit 1 may not
    assert took.wait(timeout=30)  # done at once; without the fix it waits for the other slot
    assert slots.busy == 2
    slots.give()
    slots.give()
    small.join()
