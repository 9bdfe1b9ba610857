"""Fixtures of the loader tests: clients on the shared sandbox with a private cache, and a
request counter (an httpx event hook) to prove what a load sent."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from realtyframes import Client


class RequestLog:
    """Counts the requests a client sends (thread-safe) and the most in flight at once."""

    def __init__(self) -> None:
        self.urls: list[httpx.URL] = []
        self._lock = threading.Lock()
        self._in_flight = 0
        self.max_in_flight = 0

    def on_request(self, request: httpx.Request) -> None:
        with self._lock:
            self.urls.append(request.url)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)

    def on_response(self, response: httpx.Response) -> None:
        with self._lock:
            self._in_flight -= 1

    @property
    def count(self) -> int:
        return len(self.urls)

    def paths(self) -> list[str]:
        return [u.path for u in self.urls]

    def hooks(self) -> dict[str, list[Callable[..., Any]]]:
        return {"request": [self.on_request], "response": [self.on_response]}


@pytest.fixture
def make_client(tmp_path: Path) -> Iterator[Callable[..., tuple[Client, RequestLog]]]:
    """``make_client(url, **options) -> (client, log)``: cache in this test's tmp dir, no
    progress bars, every request logged. Clients are closed after the test."""
    clients: list[Client] = []

    def _make(url: str, **options: Any) -> tuple[Client, RequestLog]:
        log = RequestLog()
        options.setdefault("cache_dir", tmp_path / "cache")
        options.setdefault("progress", False)
        client = Client(url, event_hooks=log.hooks(), **options)
        clients.append(client)
        return client, log

    yield _make
    for client in clients:
        client.close()
