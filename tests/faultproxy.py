"""A fault-injecting HTTP proxy on loopback, in front of a sandbox: answers that are well formed
but belong to another request, which the sandbox's own faults (5xx, 429, truncated bodies...)
cannot make.

Modes (``proxy.set(mode, times=None)``; ``times``: inject that many faults, then pass through,
so a retry can succeed; None: every time):

- ``stale_page``: a caching proxy keyed without the query. A list request (``/v1/listings``,
  ``/v1/listings/changes``, ``/v1/contacts``) is answered from the body cached for its path when
  that body answered another query; otherwise it is forwarded and its answer cached.
- ``stale_copy``: a cache that keeps answers past their freshness. A list request is answered
  with the body the same path and query got the first time the proxy forwarded it (in any mode:
  copies are kept from the proxy's start, ``set`` does not forget them); a request never seen is
  forwarded.
- ``swapped_detail``: a detail (``/v1/listings/{id}``, ``/v1/contacts/{id}``,
  ``/v1/contacts/{id}/activity``) is answered with the body of another listing / contact.
- ``empty_detail``: a detail is answered 200 with ``{}``.
- ``list_detail``: a detail is answered 200 with a search page (``total``, ``listings``, ...):
  a server or proxy routing ``/v1/listings/{id}`` to the search.
- ``foreign_changes``: a change-feed page gets a change record of a listing the request did not
  ask about (a listing the proxy saw in a search, else a made-up id).
- ``wrong_period``: an analytics request is answered with another period's analytics.
- ``no_echo``: not a fault: list pages lose their ``offset`` and ``limit`` members (a variant
  of the envelope the client must accept).
- ``drop``: a lost network: after the first ``after`` requests (``proxy.set("drop", after=N)``),
  every request (``times`` of them) gets the start of an answer and then its connection is closed,
  the body cut off; nothing is forwarded. ``proxy.requests`` counts every request that arrived.

``proxy.injected`` counts the faults injected since the last ``set``, by mode; ``proxy.paths``
the GET requests forwarded, by path. ``proxy.upstream`` may be changed while it runs (another
server behind the same URL).

>>> with start_proxy(sandbox.url) as proxy:  # doctest: +SKIP
...     proxy.set("stale_page", times=2)
...     client = rf.Client(proxy.url)
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

import anyio
import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

MODES = (
    "stale_page",
    "stale_copy",
    "swapped_detail",
    "empty_detail",
    "list_detail",
    "foreign_changes",
    "wrong_period",
    "no_echo",
    "drop",
)
LIST_PATHS = frozenset({"/v1/listings", "/v1/listings/changes", "/v1/contacts"})
_DETAIL = re.compile(r"^/v1/(listings|contacts)/([^/]+)(/activity)?$")
_LISTING_ID = re.compile(rb'"ListingId"\s*:\s*"([^"\\]+)"')
_HOP = {"content-length", "transfer-encoding", "content-encoding", "connection", "keep-alive"}
_PERIODS = ("24h", "7d", "30d", "90d", "1y")
#: An answer: status, headers, body.
Answer = tuple[int, dict[str, str], bytes]


class FaultProxy:
    """The proxy's state: where it forwards to, the fault mode and what it injected."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.url = ""
        self.mode: str | None = None
        self.left: int | None = None
        self.injected: Counter[str] = Counter()
        self.forwarded = 0
        self.requests = 0
        self.paths: Counter[str] = Counter()  # forwarded GET requests by path
        self.after = 0
        self._lock = threading.Lock()
        self._pages: dict[str, tuple[frozenset[tuple[str, str]], bytes, dict[str, str]]] = {}
        self._copies: dict[tuple[str, frozenset[tuple[str, str]]], Answer] = {}
        self._seen_ids: dict[str, None] = {}
        self._http = httpx.Client(timeout=30)

    def set(self, mode: str | None, *, times: int | None = None, after: int = 0) -> None:
        """Inject ``mode`` from now on (None: none), ``times`` times (None: every time), once
        ``after`` requests have arrived (``drop`` only); the counts (``injected``, ``forwarded``,
        ``requests``) and the cached pages start afresh."""
        if mode is not None and mode not in MODES:
            raise ValueError(f"mode: {mode!r}; allowed: {', '.join(MODES)}")
        with self._lock:
            self.mode, self.left, self.after = mode, times, after
            self.injected.clear()
            self.forwarded = self.requests = 0
            self.paths.clear()
            self._pages.clear()

    def drop_now(self) -> bool:
        """Count a request; whether to cut its connection (mode ``drop``)."""
        with self._lock:
            self.requests += 1
            if self.mode != "drop" or self.requests <= self.after:
                return False
        return self._take("drop")

    def _take(self, mode: str) -> bool:
        """Whether to inject ``mode`` now (and count it)."""
        with self._lock:
            if self.mode != mode or (self.left is not None and self.left <= 0):
                return False
            if self.left is not None:
                self.left -= 1
            self.injected[mode] += 1
            return True

    # -- forwarding ---------------------------------------------------------------------------
    def _get(self, path: str, query: str, headers: dict[str, str]) -> httpx.Response:
        url = self.upstream + path + (f"?{query}" if query else "")
        response = self._http.get(url, headers=headers)
        with self._lock:
            self.forwarded += 1
            self.paths[path] += 1
        if path == "/v1/listings" and response.status_code == 200:
            with self._lock:
                for found in _LISTING_ID.findall(response.content)[:50]:
                    self._seen_ids[found.decode()] = None
        return response

    def handle(
        self, method: str, path: str, query: str, headers: dict[str, str], body: bytes
    ) -> Answer:
        """One request -> (status, headers, body)."""
        if method != "GET":
            url = self.upstream + path + (f"?{query}" if query else "")
            r = self._http.request(method, url, headers=headers, content=body)
            return r.status_code, _kept(r.headers), r.content
        if path in LIST_PATHS:
            return self._list(path, query, headers)
        detail = _DETAIL.match(path)
        if detail is not None and detail.group(2) != "changes":
            return self._detail(path, query, headers, detail)
        if path == "/v1/analytics":
            return self._analytics(path, query, headers)
        r = self._get(path, query, headers)
        return r.status_code, _kept(r.headers), r.content

    def _list(self, path: str, query: str, headers: dict[str, str]) -> Answer:
        key = frozenset(httpx.QueryParams(query).multi_items())
        with self._lock:
            cached = self._pages.get(path)
        if cached is not None and cached[0] != key and self._take("stale_page"):
            return 200, cached[2], cached[1]
        with self._lock:
            copy = self._copies.get((path, key))
        if copy is not None and self._take("stale_copy"):
            return copy
        r = self._get(path, query, headers)
        content = r.content
        if r.status_code == 200:
            with self._lock:
                self._pages[path] = (key, content, _kept(r.headers))
                self._copies.setdefault((path, key), (200, _kept(r.headers), content))
            if path == "/v1/listings/changes" and self.mode == "foreign_changes":
                content = self._foreign(query, content)
            elif self.mode == "no_echo" and self._take("no_echo"):
                page = json.loads(content)
                page.pop("offset", None)
                page.pop("limit", None)
                content = json.dumps(page).encode()
        return r.status_code, _kept(r.headers), content

    def _foreign(self, query: str, content: bytes) -> bytes:
        params = httpx.QueryParams(query)
        asked = set(params.get("ListingIds", "").split(","))
        with self._lock:
            foreign = next((i for i in self._seen_ids if i not in asked), "A00000001")
        page = json.loads(content)
        records = page.get("changes") or []
        if records:
            record = {**records[0], "ListingId": foreign}
        else:
            since = params.get("Since", "2026-01-01T00:00:00Z")
            record = {
                "ListingId": foreign,
                "ChangeType": "price_change",
                "ChangeTimestamp": since,
                "PreviousListPrice": 500000,
                "ListPrice": 450000,
            }
        if not self._take("foreign_changes"):
            return content
        if len(records) >= int(page.get("limit") or 50):
            records[-1] = record
        else:
            records.append(record)
            page["total"] = int(page.get("total") or 0) + 1
        page["changes"] = records
        return json.dumps(page).encode()

    def _detail(
        self, path: str, query: str, headers: dict[str, str], match: re.Match[str]
    ) -> Answer:
        r = self._get(path, query, headers)
        if r.status_code == 200 and self.mode == "empty_detail" and self._take("empty_detail"):
            return 200, _kept(r.headers), b"{}"
        if r.status_code == 200 and self.mode == "list_detail" and self._take("list_detail"):
            kind = match.group(1)
            page = self._get(f"/v1/{kind}", "Limit=3", headers)
            return page.status_code, _kept(page.headers), page.content
        if r.status_code != 200 or self.mode != "swapped_detail":
            return r.status_code, _kept(r.headers), r.content
        kind, asked, activity = match.groups()
        other = self._other_id(kind, asked, headers)
        if other is None or not self._take("swapped_detail"):
            return r.status_code, _kept(r.headers), r.content
        swapped = self._get(f"/v1/{kind}/{other}{activity or ''}", "", headers)
        return swapped.status_code, _kept(swapped.headers), swapped.content

    def _other_id(self, kind: str, asked: str, headers: dict[str, str]) -> str | None:
        items = self._get(f"/v1/{kind}", "Limit=5", headers).json()[kind]
        key = "ListingId" if kind == "listings" else "id"
        return next((str(i[key]) for i in items if str(i[key]) != asked), None)

    def _analytics(self, path: str, query: str, headers: dict[str, str]) -> Answer:
        params = httpx.QueryParams(query)
        if self.mode == "wrong_period":
            asked = params.get("Period", "30d")
            other = next(p for p in _PERIODS if p != asked)
            if self._take("wrong_period"):
                query = str(params.set("Period", other))
        r = self._get(path, query, headers)
        return r.status_code, _kept(r.headers), r.content

    def close(self) -> None:
        self._http.close()


def _kept(headers: httpx.Headers) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k.lower() not in _HOP}


def _app(proxy: FaultProxy) -> ASGIApp:
    async def endpoint(request: Request) -> Response:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP | {"host"}}
        body = await request.body()
        status, out_headers, content = await anyio.to_thread.run_sync(
            proxy.handle,
            request.method,
            request.url.path,
            request.url.query,
            headers,
            body,
        )
        return Response(content, status_code=status, headers=out_headers)

    methods = ["GET", "POST", "DELETE", "PUT", "PATCH", "HEAD", "OPTIONS"]
    routes = Starlette(routes=[Route("/{path:path}", endpoint, methods=methods)])

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and proxy.drop_now():
            # half an answer, then the connection goes: uvicorn closes it when the app returns
            # before the body is complete
            start = {"type": "http.response.start", "status": 200}
            headers = [(b"content-type", b"application/json"), (b"content-length", b"4096")]
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": b'{"total": ', "more_body": True})
            return
        await routes(scope, receive, send)

    return app


@contextmanager
def start_proxy(upstream: str) -> Iterator[FaultProxy]:
    """A :class:`FaultProxy` to ``upstream`` served on 127.0.0.1 (a free port) in a thread."""
    proxy = FaultProxy(upstream)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    config = uvicorn.Config(
        _app(proxy),
        http="h11",
        ws="none",
        lifespan="off",
        log_level="warning",
        access_log=False,
        log_config=None,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="fault-proxy", daemon=True
    )
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the fault proxy did not start")
            time.sleep(0.005)
        host, port = sock.getsockname()[:2]
        proxy.url = f"http://{host}:{port}"
        yield proxy
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
        proxy.close()
