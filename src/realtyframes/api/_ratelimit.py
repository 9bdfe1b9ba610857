"""Rate-limit headers, parsed for the client's pacer (:mod:`realtyframes.api._pacer`).

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
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_MAX_DIGITS = 15


@dataclass(frozen=True)
class RateLimitState:
    """What a response said about the quota (``client.rate_limit``: the latest seen); any member
    may be unknown (None). ``reset``: seconds until the window resets, as the response reported
    it; ``window``: seconds of the policy window; ``policy``: the raw RateLimit-Policy value."""

    limit: int | None = None
    remaining: int | None = None
    reset: float | None = None
    window: float | None = None
    policy: str | None = None

    @property
    def empty(self) -> bool:
        """True when nothing usable was found."""
        return self.limit is None and self.remaining is None and self.reset is None


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


#: The headers :func:`parse_rate_limit_headers` reads (lower-case).
_QUOTA_NAMES = frozenset(
    {"ratelimit", "ratelimit-policy"}
    | {f"{x}ratelimit-{name}" for x in ("", "x-") for name in ("limit", "remaining", "reset")}
)


def _quota_fields(headers: Mapping[str, str]) -> dict[str, str]:
    """The quota headers by lower-case name, repeated fields joined with ``", "`` as httpx's
    lookups do (an ``httpx.Headers`` is read in one pass: each lookup decodes every header)."""
    multi_items = getattr(headers, "multi_items", None)
    found: dict[str, str] = {}
    for key, value in multi_items() if multi_items is not None else headers.items():
        key = key.lower() if isinstance(key, str) else key
        if key in _QUOTA_NAMES and isinstance(value, str):
            seen = found.get(key)
            found[key] = value if seen is None else f"{seen}, {value}"
    return found


def parse_rate_limit_headers(
    headers: Mapping[str, str], *, now: float | None = None
) -> RateLimitState | None:
    """The quota state announced by a response's headers; None when there is none.

    Never raises: a malformed header is ignored (the others still count).

    >>> parse_rate_limit_headers({"RateLimit": '"default";r=50;t=30',
    ...                           "RateLimit-Policy": '"default";q=100;w=60'})
    RateLimitState(limit=100, remaining=50, reset=30.0, window=60.0, policy='"default";q=100;w=60')
    >>> parse_rate_limit_headers({"X-RateLimit-Remaining": "many"}) is None
    True
    """
    try:
        return _parse(headers, now)
    except Exception:  # a parser bug must never break a request
        return None


def _parse(headers: Mapping[str, str], now: float | None) -> RateLimitState | None:
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
    info = RateLimitState(
        limit=int(limit) if limit is not None and limit > 0 else None,
        remaining=int(remaining) if remaining is not None else None,
        reset=float(reset) if reset is not None else None,
        window=policy.window if policy else None,
        policy=policy_text.strip()[:200] if policy_text and policy else None,
    )
    return None if info.empty and info.window is None else info
