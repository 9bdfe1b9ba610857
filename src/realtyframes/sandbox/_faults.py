"""Fault injection for reliability tests and benchmarks, as pure ASGI middleware.

Faults apply to the ``/v1/*`` data routes only; added latency to every answer but the admin
routes and the documentation (``/_sandbox/*``, ``/openapi.json``, ``/docs``). Decisions come from a generator seeded with the sandbox seed, so one server with one
request sequence misbehaves the same way every run. What was injected is counted in
:class:`FaultCounters` (``app.state.admin.faults``).

>>> validate_faults(Faults(error_rate=0.5))
>>> validate_faults(Faults(error_rate=2))
Traceback (most recent call last):
...
ValueError: faults: error_rate must be within 0..1, got 2
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import logging
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from realtyframes.sandbox._errors import SandboxError
from realtyframes.sandbox._options import Faults

#: Renders a SandboxError for a request scope (the one error renderer of the app).
RenderError = Callable[[Scope, SandboxError, dict[str, str] | None], Response]

_RATES = ("error_rate", "drop_rate", "truncate_rate", "nonjson_rate", "bad_records")

NGINX_502 = (
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n"
    "</body>\r\n</html>\r\n"
)

#: Kinds of corrupted listing records, in the order they are chosen from.
BAD_RECORD_KINDS: tuple[str, ...] = (
    "negative_list_price",
    "close_price_not_closed",
    "bedrooms_999",
    "latitude_200",
    "malformed_postal_code",
    "null_listing_id",
)


def validate_faults(faults: Faults) -> None:
    """Raise ValueError naming the fault option when a value is out of range."""
    for name in _RATES:
        value = getattr(faults, name)
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"faults: {name} must be within 0..1, got {value}")
    for name in ("burst_429", "drift", "retry_after"):
        if getattr(faults, name) < 0:
            raise ValueError(f"faults: {name} must be >= 0, got {getattr(faults, name)}")
    if faults.burst_every < 1:
        raise ValueError(f"faults: burst_every must be >= 1, got {faults.burst_every}")
    if faults.burst_429 > faults.burst_every:
        raise ValueError(
            f"faults: burst_429 ({faults.burst_429}) must be <= burst_every ({faults.burst_every})"
        )


class DroppedConnection(Exception):
    """Raised on purpose mid-body so that uvicorn closes the connection (the drop fault)."""


class _DropFilter(logging.Filter):
    """Keeps uvicorn's error log quiet about connections the drop fault closes on purpose."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, DroppedConnection)


def install_log_filter() -> None:
    """Silence uvicorn's traceback for intentional drops (idempotent)."""
    logger = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, _DropFilter) for f in logger.filters):
        logger.addFilter(_DropFilter())


@dataclass
class FaultCounters:
    """How many of each fault the server injected (read by tests and benchmarks)."""

    requests: int = 0  # /v1 requests seen by the fault layer
    errors: dict[int, int] = field(default_factory=dict)  # status -> count
    burst_429: int = 0
    drops: int = 0
    truncated: int = 0
    nonjson: int = 0
    drift_inserted: int = 0
    bad_records: int = 0  # corrupted records served (a record served twice counts twice)
    bad_record_ids: set[str | None] = field(default_factory=set)  # original ListingIds corrupted
    bad_record_kinds: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready copy."""
        out = dataclasses.asdict(self)
        out["errors"] = {str(k): v for k, v in self.errors.items()}
        out["bad_record_ids"] = sorted(i for i in self.bad_record_ids if i is not None)
        return out


def bad_record_kind(seed: int, listing_id: object, share: float) -> str | None:
    """Which corruption (if any) a listing gets: a pure function of seed and ListingId.

    >>> bad_record_kind(7, "A1", 0.0) is None
    True
    >>> bad_record_kind(7, "A1", 1.0) in BAD_RECORD_KINDS
    True
    """
    if share <= 0:
        return None
    digest = hashlib.sha256(f"{seed}:{listing_id}".encode()).digest()
    draw = int.from_bytes(digest[:8], "big") / 2**64
    if draw >= share:
        return None
    return BAD_RECORD_KINDS[digest[8] % len(BAD_RECORD_KINDS)]


def corrupt_record(record: dict[str, Any], kind: str) -> dict[str, Any]:
    """A copy of a listing record broken in the way ``kind`` says.

    >>> corrupt_record({"ListPrice": 10.0}, "negative_list_price")["ListPrice"]
    -10.0
    """
    rec = dict(record)
    price = rec.get("ListPrice")
    if kind == "close_price_not_closed" and rec.get("StandardStatus") == "Closed":
        kind = "negative_list_price"  # a Closed record may carry a ClosePrice: break it another way
    if kind == "negative_list_price":
        rec["ListPrice"] = -abs(price) if isinstance(price, int | float) and price else -1.0
    elif kind == "close_price_not_closed":
        rec["ClosePrice"] = price if isinstance(price, int | float) else 100000.0
    elif kind == "bedrooms_999":
        rec["BedroomsTotal"] = 999
    elif kind == "latitude_200":
        coords = rec.get("coordinates")
        rec["coordinates"] = {**(coords if isinstance(coords, dict) else {}), "lat": 200.0}
    elif kind == "malformed_postal_code":
        rec["PostalCode"] = "3X1-"
    elif kind == "null_listing_id":
        rec["ListingId"] = None
    return rec


def _cut(body: bytes) -> bytes:
    """The first half of ``body``, ending right after an inner ``}`` where there is one: the
    hardest truncation for a client, since the cut body still ends like a whole JSON object."""
    half = body[: len(body) // 2]
    brace = half.rfind(b"}")
    return half[: brace + 1] if brace > 0 else half


async def _capture(app: ASGIApp, scope: Scope, receive: Receive) -> tuple[Message, bytes]:
    """Run ``app`` and collect its response start message and whole body."""
    start: Message = {}
    chunks: list[bytes] = []

    async def send(message: Message) -> None:
        nonlocal start
        if message["type"] == "http.response.start":
            start = message
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(scope, receive, send)
    return start, b"".join(chunks)


def _with_length(start: Message, length: int) -> Message:
    headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
    headers.append((b"content-length", str(length).encode()))
    return {**start, "headers": headers}


class FaultsMiddleware:
    """Injects the configured faults into ``/v1/*`` answers.

    ``on_search`` is called after each page of ``search_path`` served (the drift fault); paths
    starting with one of ``spared`` get no fault, not even latency.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        faults: Faults,
        latency_ms: float,
        seed: int,
        counters: FaultCounters,
        render_error: RenderError,
        on_search: Callable[[int], None],
        search_path: str,
        spared: tuple[str, ...],
    ) -> None:
        self.app = app
        self.faults = faults
        self.latency = max(0.0, latency_ms) / 1000.0
        self.seed = seed
        self.counters = counters
        self.render_error = render_error
        self.on_search = on_search
        self.search_path = search_path
        self.spared = spared
        self._rng = random.Random(f"faults:{seed}")
        self._lock = threading.Lock()
        self.active = faults != Faults()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if not path or path.startswith(self.spared):
            await self.app(scope, receive, send)
            return
        if self.latency:
            await asyncio.sleep(self.latency)
        if not self.active or not path.startswith("/v1/"):
            await self.app(scope, receive, send)
            return
        f = self.faults
        with self._lock:
            n = self.counters.requests
            self.counters.requests += 1
            draws = [self._rng.random() for _ in range(4)]
            error_status = self._rng.choice((500, 502, 503))
        if f.burst_429 and n % f.burst_every >= f.burst_every - f.burst_429:
            self.counters.burst_429 += 1
            await self._burst_429(scope, receive, send)
        elif draws[0] < f.error_rate:
            self.counters.errors[error_status] = self.counters.errors.get(error_status, 0) + 1
            response = self.render_error(scope, SandboxError(error_status), None)
            await response(scope, receive, send)
        elif draws[1] < f.nonjson_rate:
            self.counters.nonjson += 1
            response = Response(NGINX_502, status_code=502, media_type="text/html")
            await response(scope, receive, send)
        elif draws[2] < f.drop_rate:
            self.counters.drops += 1
            start, body = await self._run(scope, receive)
            await send(_with_length(start, len(body)))
            await send(
                {"type": "http.response.body", "body": body[: len(body) // 2], "more_body": True}
            )
            raise DroppedConnection(f"drop fault on {path}")
        elif draws[3] < f.truncate_rate:
            self.counters.truncated += 1
            start, body = await self._run(scope, receive)
            cut = _cut(body)
            await send(_with_length(start, len(cut)))
            await send({"type": "http.response.body", "body": cut})
        elif f.bad_records > 0 and path == self.search_path:
            start, body = await self._run(scope, receive)
            await send(_with_length(start, len(body)))
            await send({"type": "http.response.body", "body": body})
        else:
            await self._pass(scope, receive, send)

    async def _run(self, scope: Scope, receive: Receive) -> tuple[Message, bytes]:
        start, body = await _capture(self.app, scope, receive)
        if scope["path"] == self.search_path and start.get("status") == 200:
            body = self._corrupt_page(body)
            self._drift()
        return start, body

    async def _pass(self, scope: Scope, receive: Receive, send: Send) -> None:
        status = 0

        async def send_wrapper(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        await self.app(scope, receive, send_wrapper)
        if scope["path"] == self.search_path and status == 200:
            self._drift()

    def _drift(self) -> None:
        if self.faults.drift > 0:
            self.on_search(self.faults.drift)
            self.counters.drift_inserted += self.faults.drift

    def _corrupt_page(self, body: bytes) -> bytes:
        share = self.faults.bad_records
        if share <= 0:
            return body
        page = json.loads(body)
        records = page.get("listings") if isinstance(page, dict) else None
        if not isinstance(records, list):
            return body
        changed = False
        for i, record in enumerate(records):
            if not isinstance(record, dict):
                continue
            kind = bad_record_kind(self.seed, record.get("ListingId"), share)
            if kind is None:
                continue
            self.counters.bad_records += 1
            self.counters.bad_record_ids.add(record.get("ListingId"))
            self.counters.bad_record_kinds[kind] = self.counters.bad_record_kinds.get(kind, 0) + 1
            records[i] = corrupt_record(record, kind)
            changed = True
        if not changed:
            return body
        return json.dumps(page, ensure_ascii=False, separators=(",", ":")).encode()

    async def _burst_429(self, scope: Scope, receive: Receive, send: Send) -> None:
        retry = max(0, self.faults.retry_after)
        headers = {"Retry-After": str(retry)}
        quota = scope.get("rf.quota")
        if quota is not None:
            headers.update(quota.headers(remaining=0, reset=max(1, retry)))
        detail = f"burst of {self.faults.burst_429} requests refused (fault injection)"
        response = self.render_error(scope, SandboxError(429, detail), headers)
        await response(scope, receive, send)
