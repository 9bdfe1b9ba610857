"""Rate-limit headers, and the pacer that keeps a client inside its quota.

Parsed forms (malformed values are ignored, the parsers never raise):

* ``RateLimit: limit=60, remaining=59, reset=30`` (draft-07 dictionary form, the spec's);
* ``RateLimit: "default";r=50;t=30`` with ``RateLimit-Policy: "default";q=100;w=60`` (the newer
  structured-list form);
* ``RateLimit-Policy: 60;w=60`` (also lists such as ``10;w=1, 50;w=60``);
* ``RateLimit-Limit/-Remaining/-Reset`` and ``X-RateLimit-Limit/-Remaining/-Reset`` (a reset
  that looks like a Unix time is turned into seconds from now).

>>> info = parse_rate_limit_headers({"RateLimit": "limit=60, remaining=59, reset=30",
...                                  "RateLimit-Policy": "60;w=60"})
>>> (info.limit, info.remaining, info.reset, info.window)
(60, 59, 30.0, 60.0)

The :class:`Pacer` spaces requests at ``limit / window`` (a little under it), lets the
``remaining`` count the server reports correct its estimate, waits for the reset when that count
reaches zero, and honours ``Retry-After`` for every thread of the client.
"""

from __future__ import annotations

import functools
import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from realtyframes.api._constants import PACING_SAFETY

_MAX_DIGITS = 15


@dataclass(frozen=True)
class RateLimitInfo:
    """What one response said about the quota; any member may be unknown (None)."""

    limit: int | None = None
    remaining: int | None = None
    reset: float | None = None  # seconds until the window resets
    window: float | None = None  # seconds of the policy window
    policy: str | None = None  # the raw RateLimit-Policy value

    @property
    def empty(self) -> bool:
        """True when nothing usable was found."""
        return self.limit is None and self.remaining is None and self.reset is None


@dataclass(frozen=True)
class RateLimitState:
    """The latest quota state seen by a client (``client.rate_limit``).

    ``reset`` is the number of seconds to the window reset as reported by the latest response.
    """

    limit: int | None
    remaining: int | None
    reset: float | None
    window: float | None
    policy: str | None


# -- low-level tolerant parsing ---------------------------------------------------------------------
def _int(text: Any) -> int | None:
    if not isinstance(text, str):
        return None
    text = text.strip().strip('"').strip()
    if text.startswith("+"):
        text = text[1:]
    if not text or len(text) > _MAX_DIGITS or not text.isascii() or not text.isdigit():
        return None
    return int(text)


def _number(text: Any) -> float | None:
    if not isinstance(text, str):
        return None
    text = text.strip().strip('"').strip()
    if not text or len(text) > 32 or not text.isascii():
        return None
    if not all(c.isdigit() or c in ".+" for c in text):
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


def _split_outside_quotes(text: str, sep: str) -> list[str]:
    if '"' not in text:
        return text.split(sep)
    parts: list[str] = []
    current: list[str] = []
    quoted = False
    escaped = False
    for char in text:
        if escaped:
            current.append(char)
            escaped = False
        elif char == "\\" and quoted:
            current.append(char)
            escaped = True
        elif char == '"':
            quoted = not quoted
            current.append(char)
        elif char == sep and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


@dataclass(frozen=True)
class _Item:
    value: str  # the bare item, quotes removed
    quoted: bool
    params: dict[str, str]


def _items(text: str) -> list[_Item]:
    """Split a structured-field list (RFC 8941, tolerant) into items with parameters."""
    items = []
    for raw in _split_outside_quotes(text[:4096], ","):
        pieces = _split_outside_quotes(raw, ";")
        head = pieces[0].strip()
        quoted = len(head) >= 2 and head[0] == '"' and head[-1] == '"'
        params: dict[str, str] = {}
        for piece in pieces[1:]:
            key, _, value = piece.partition("=")
            key = key.strip().lower()
            if key:
                params[key] = value.strip() if value else "?1"
        items.append(_Item(head[1:-1] if quoted else head, quoted, params))
    return [item for item in items if item.value or item.params]


def _reset_seconds(value: float | None, now: float | None = None) -> float | None:
    """A reset value in seconds from now; Unix times (s or ms) are converted."""
    if value is None:
        return None
    if value > 1e12:  # epoch milliseconds
        value = value / 1000.0
    if value > 1e9:  # epoch seconds
        value = value - (time.time() if now is None else now)
    return max(0.0, value)


@dataclass(frozen=True)
class _Policy:
    name: str | None
    quota: int
    window: float


@functools.lru_cache(maxsize=64)
def _parse_policies(text: str | None) -> tuple[_Policy, ...]:
    """``60;w=60`` / ``10;w=1, 50;w=60`` (draft-07) or ``"default";q=100;w=60`` (newer).
    Cached: a server sends the same policy on every answer."""
    if not text:
        return ()
    policies = []
    for item in _items(text):
        if "q" in item.params:  # newer form: the item is the policy's name
            quota = _int(item.params["q"])
            name: str | None = item.value
        else:
            quota = _int(item.value)
            name = None
        window = _number(item.params.get("w", ""))
        if quota is not None and quota > 0 and window is not None and window > 0:
            policies.append(_Policy(name, quota, window))
    return tuple(policies)


def _parse_ratelimit_field(text: str | None) -> tuple[dict[str, float], str | None]:
    """The ``RateLimit`` field: dictionary form or structured-list form.

    Returns ({"limit", "remaining", "reset"} subset, policy name of the binding item).
    """
    if not text:
        return {}, None
    found: dict[str, float] = {}
    best_name: str | None = None
    best_remaining: float | None = None
    for item in _items(text):
        key, eq, value = item.value.partition("=")
        if eq and not item.quoted:  # dictionary member: limit=60
            key = key.strip().lower()
            number = _int(value) if key in ("limit", "remaining") else _number(value)
            if key in ("limit", "remaining", "reset") and number is not None:
                found.setdefault(key, float(number))
            continue
        remaining = _int(item.params.get("r", ""))
        reset = _number(item.params.get("t", ""))
        if remaining is None:
            continue
        if best_remaining is None or remaining < best_remaining:
            best_remaining = remaining
            best_name = item.value
            found["remaining"] = float(remaining)
            if reset is not None:
                found["reset"] = reset
            else:
                found.pop("reset", None)
    return found, best_name


def _get(headers: Mapping[str, str], name: str) -> str | None:
    try:
        value = headers.get(name)
        if value is None and not hasattr(headers, "multi_items"):
            lower = name.lower()
            for key, candidate in headers.items():
                if isinstance(key, str) and key.lower() == lower:
                    return candidate if isinstance(candidate, str) else None
        return value if isinstance(value, str) else None
    except Exception:
        return None


#: The headers :func:`parse_rate_limit_headers` reads.
_QUOTA_HEADERS = (
    "RateLimit",
    "RateLimit-Policy",
    *(f"{x}RateLimit-{name}" for x in ("", "X-") for name in ("Limit", "Remaining", "Reset")),
)
_QUOTA_NAMES = frozenset(name.lower() for name in _QUOTA_HEADERS)


def _quota_fields(headers: Mapping[str, str]) -> dict[str, str | None]:
    """The quota headers by lower-case name. An ``httpx.Headers`` is read in one pass (each of
    its lookups scans and decodes every header); repeated fields are joined with ``", "`` as its
    lookups do. Other mappings: :func:`_get` per name."""
    multi_items = getattr(headers, "multi_items", None)
    if multi_items is None:
        return {name.lower(): _get(headers, name) for name in _QUOTA_HEADERS}
    found: dict[str, str | None] = {}
    for key, value in multi_items():  # lower-case names
        if key in _QUOTA_NAMES:
            seen = found.get(key)
            found[key] = value if seen is None else f"{seen}, {value}"
    return found


def parse_rate_limit_headers(
    headers: Mapping[str, str], *, now: float | None = None
) -> RateLimitInfo | None:
    """The quota state announced by a response's headers; None when there is none.

    Never raises: a malformed header is ignored (the others still count).

    >>> parse_rate_limit_headers({"RateLimit": '"default";r=50;t=30',
    ...                           "RateLimit-Policy": '"default";q=100;w=60'})
    RateLimitInfo(limit=100, remaining=50, reset=30.0, window=60.0, policy='"default";q=100;w=60')
    >>> parse_rate_limit_headers({"X-RateLimit-Remaining": "many"}) is None
    True
    """
    try:
        return _parse(headers, now)
    except Exception:  # a parser bug must never break a request
        return None


def _parse(headers: Mapping[str, str], now: float | None) -> RateLimitInfo | None:
    get = _quota_fields(headers).get
    field, name = _parse_ratelimit_field(get("ratelimit"))
    policy_text = get("ratelimit-policy")
    policies = list(_parse_policies(policy_text))
    # Older drafts: RateLimit-Limit may itself carry policies ("10, 10;w=1").
    old_limit_text = get("ratelimit-limit")
    old_limit = None
    if old_limit_text:
        for item in _items(old_limit_text):
            if "w" in item.params:
                policies.extend(_parse_policies(f"{item.value};w={item.params['w']}"))
            elif old_limit is None:
                old_limit = _int(item.value)

    policy: _Policy | None = None
    if name is not None:
        policy = next((p for p in policies if p.name == name), None)
    if policy is None and policies:
        policy = max(policies, key=lambda p: p.window / p.quota)  # the slowest allowed rate

    def first(*values: float | None) -> float | None:
        return next((v for v in values if v is not None), None)

    limit = first(
        field.get("limit"),
        policy.quota if policy else None,
        old_limit,
        _int(get("x-ratelimit-limit")),
    )
    remaining = first(
        field.get("remaining"),
        _int(get("ratelimit-remaining")),
        _int(get("x-ratelimit-remaining")),
    )
    reset = first(
        field.get("reset"),
        _reset_seconds(_number(get("ratelimit-reset")), now),
        _reset_seconds(_number(get("x-ratelimit-reset")), now),
    )
    if reset is not None and reset > 1e7:  # nonsense (more than ~4 months)
        reset = None
    info = RateLimitInfo(
        limit=int(limit) if limit is not None and limit > 0 else None,
        remaining=int(remaining) if remaining is not None else None,
        reset=float(reset) if reset is not None else None,
        window=policy.window if policy else None,
        policy=policy_text.strip()[:200] if policy_text and policy else None,
    )
    return None if info.empty and info.window is None else info


# -- the pacer ------------------------------------------------------------------------------------
def _wait_on(condition: threading.Condition, seconds: float) -> object:
    """Wait on ``condition`` (held) for at most ``seconds`` of real time."""
    return condition.wait(timeout=seconds)


class Pacer:
    """One rate budget per client, shared by all its threads.

    ``acquire()`` before each attempt returns a ticket, ``release(ticket, info)`` after the answer
    (``cancel(ticket)`` when none came). Requests are spaced ``window / (limit * safety)`` apart;
    the server's ``remaining`` (corrected for requests still in flight) stops sending at zero until
    the reset; ``block(seconds)`` (a ``Retry-After``) holds every thread. ``clock`` and ``wait``
    (how a thread waits on the pacer's condition for at most some seconds) are the time it keeps:
    a test passes a fake clock whose ``wait`` moves it on, and checks the pacing without sleeping.

    >>> pacer = Pacer()
    >>> ticket = pacer.acquire()
    >>> pacer.release(ticket, RateLimitInfo(limit=60, remaining=59, reset=60.0, window=60.0))
    >>> pacer.state.remaining
    59
    """

    def __init__(
        self,
        *,
        safety: float = PACING_SAFETY,
        enabled: bool = True,
        clock: Callable[[], float] = time.monotonic,
        wait: Callable[[threading.Condition, float], object] | None = None,
    ) -> None:
        if not 0 < safety <= 1:
            raise ValueError("safety must be in (0, 1]")
        self.safety = safety
        self.enabled = enabled
        self._clock = clock
        self._wait = wait if wait is not None else _wait_on
        self._cond = threading.Condition()
        self._sent = 0
        self._inflight: dict[int, float] = {}  # ticket -> send time
        self._best: int | None = None  # min over the window of (remaining + ticket)
        self._best_ticket = 0
        self._reset_at: float | None = None
        self._window_start_ticket = 0
        self._limit: int | None = None
        self._window: float | None = None
        self._window_guess: float | None = None
        self._next_slot = 0.0
        self._blocked_until = 0.0
        self._latest: RateLimitState | None = None
        self.waited = 0.0  # seconds spent waiting in acquire (for tests and benchmarks)

    # -- state ---------------------------------------------------------------------------------
    @property
    def state(self) -> RateLimitState | None:
        """The latest quota state a response reported (None before any)."""
        return self._latest

    @property
    def interval(self) -> float:
        """Seconds between two request starts in steady state (0 when the policy is unknown)."""
        window = self._window or self._window_guess
        if not self._limit or not window:
            return 0.0
        return window / (self._limit * self.safety)

    def _tokens(self, now: float) -> int | None:
        """Requests that may still be sent in the current window (None: unknown)."""
        if self._best is None or self._reset_at is None or now >= self._reset_at:
            return None
        older_in_flight = sum(1 for t in self._inflight if t < self._best_ticket)
        return self._best - self._sent - older_in_flight

    def _wait_until(self, now: float, pace: bool) -> float | None:
        if now < self._blocked_until:
            return self._blocked_until
        if not pace:
            return None
        tokens = self._tokens(now)
        if tokens is not None and tokens <= 0:
            return self._reset_at
        if now < self._next_slot:
            interval = self.interval
            if tokens is not None and interval > 0 and self._reset_at is not None:
                # Quota the steady pace cannot use before the reset may go at once (short loads
                # need not wait); the reserve keeps the pace going until the reset.
                reserve = (self._reset_at - now) / interval
                if tokens - 1 > reserve:
                    return None
            return self._next_slot
        return None

    # -- protocol ------------------------------------------------------------------------------
    def acquire(self, stop: threading.Event | None = None, *, pace: bool | None = None) -> int:
        """Wait for a slot and return a ticket; returns early (still a ticket) when ``stop`` is set.

        ``pace=False`` skips spacing and the quota estimate (``block`` is still honoured);
        None uses ``enabled``.
        """
        started = self._clock()
        pace = self.enabled if pace is None else pace
        with self._cond:
            while True:
                now = self._clock()
                until = self._wait_until(now, pace)
                if until is None or (stop is not None and stop.is_set()):
                    self._sent += 1
                    ticket = self._sent
                    self._inflight[ticket] = now
                    if pace:
                        self._advance_slot(now)
                    self.waited += now - started
                    return ticket
                self._wait(self._cond, min(max(until - now, 0.0), 0.25))

    def _advance_slot(self, now: float) -> None:
        interval = self.interval
        if self._next_slot <= now < self._next_slot + interval:
            self._next_slot += interval  # on schedule: no drift from wake-up latency
        else:
            self._next_slot = max(self._next_slot, now + interval)  # idle, or a burst send

    def cancel(self, ticket: int) -> None:
        """The attempt of ``ticket`` got no answer."""
        with self._cond:
            self._inflight.pop(ticket, None)
            self._cond.notify_all()

    def block(self, seconds: float) -> None:
        """Hold every thread for ``seconds`` (a ``Retry-After``)."""
        with self._cond:
            self._blocked_until = max(self._blocked_until, self._clock() + max(0.0, seconds))
            self._cond.notify_all()

    def release(self, ticket: int, info: RateLimitInfo | None) -> None:
        """Record the quota state the answer to ``ticket`` reported."""
        with self._cond:
            sent_at = self._inflight.pop(ticket, None)
            if info is not None:
                self._observe(ticket, sent_at, info)
            self._cond.notify_all()

    def _observe(self, ticket: int, sent_at: float | None, info: RateLimitInfo) -> None:
        now = self._clock()
        if info.limit is not None:
            self._limit = info.limit
        if info.window is not None:
            self._window = info.window
        elif info.reset is not None:
            self._window_guess = max(self._window_guess or 0.0, info.reset)
        self._latest = RateLimitState(
            limit=info.limit if info.limit is not None else self._limit,
            remaining=info.remaining,
            reset=info.reset,
            window=info.window if info.window is not None else self._window,
            policy=info.policy,
        )
        if info.remaining is None:
            return
        reset_passed = self._reset_at is not None and now >= self._reset_at
        if reset_passed and sent_at is not None and sent_at < self._reset_at:  # type: ignore[operator]
            return  # an answer from the window that has ended
        key = info.remaining + ticket
        new_window = (
            self._best is None
            or self._reset_at is None
            or reset_passed
            or key > self._best + len(self._inflight) + 1
        )
        if new_window or key < self._best:  # type: ignore[operator]
            self._best = key
            self._best_ticket = ticket
        if info.reset is not None:
            reset_at = now + info.reset
            if new_window or self._reset_at is None:
                self._reset_at = reset_at
            else:
                self._reset_at = min(self._reset_at, reset_at)
        elif new_window and self._reset_at is None:
            self._reset_at = now + (self._window or 1.0)
