"""The cache written by realtyframes 0.8 (tests/data/cache-0.8, made with the script in
tests/data/cache-0.8.md): where it is, the host its keys hash, the sandbox it was made with, and a
transport that sends that host's requests to a running sandbox."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import httpx

FIXTURE = Path(__file__).parent / "data" / "cache-0.8"
#: The host the fixture names (its cache keys hash it).
HOST = "http://sandbox.rf-fixture.test"
#: The sandbox the fixture was made with.
OPTIONS = {
    "listings": 400,
    "seed": 7,
    "history_years": 1,
    "as_of": datetime(2026, 6, 30, tzinfo=UTC),
}


class ToSandbox(httpx.BaseTransport):
    """Sends the fixture host's requests to a sandbox (the cache keys hash the host)."""

    def __init__(self, url: str) -> None:
        self.target, self.inner = httpx.URL(url), httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.url = request.url.copy_with(host=self.target.host, port=self.target.port)
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()
