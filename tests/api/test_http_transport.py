"""Transport details of ApiClient that users meet without asking: proxies, progress order."""

from __future__ import annotations

import threading

import pytest

from realtyframes.api import ApiClient


def test_loopback_bypasses_proxy_environment(
    sandbox_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An unreachable proxy in the environment must not break the embedded sandbox on loopback.
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("ALL_PROXY", "http://127.0.0.1:9")
    with ApiClient(base_url=sandbox_url) as api:
        assert api.get_json("/v1/listings", {"Limit": 1})["limit"] == 1


def test_results_reach_on_result_as_they_arrive(sandbox_url: str) -> None:
    # on_result drives progress bars: it must see fast pages while a slow one is still running.
    seen: list[int] = []
    slow_started = threading.Event()
    release = threading.Event()

    def parse(body: bytes) -> bytes:
        if b'"offset":0,' in body:
            slow_started.set()
            assert release.wait(10)
        return body

    def on_result(index: int, _: object) -> None:
        seen.append(index)
        if len(seen) == 3:  # pages 1..3 arrived while page 0 is held back
            release.set()

    with ApiClient(base_url=sandbox_url, max_concurrency=4) as api:
        requests = [("/v1/listings", {"Offset": o, "Limit": 5}) for o in (0, 5, 10, 15)]
        results = api.get_many(requests, parse=parse, on_result=on_result)
    assert slow_started.is_set()
    assert seen[-1] == 0 and sorted(seen[:3]) == [1, 2, 3]
    assert [r.count(b'"ListingId"') for r in results] == [5, 5, 5, 5]
