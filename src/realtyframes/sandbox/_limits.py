"""Per-credential request quotas in fixed windows, and the spec's rate-limit headers.

Every answer of the sandbox carries ``RateLimit``, ``RateLimit-Policy`` and ``X-RateLimit-*``; a
credential (token, API key, legacy ``api_key``; anonymous callers by client host) that has used up
its quota gets 429 ``rate_limit_exceeded`` with an integer ``Retry-After``.

>>> limiter = RateLimiter(lambda plan: (2, 60.0))
>>> [limiter.hit("k").allowed for _ in range(3)]
[True, True, False]
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

#: How a plan maps to (requests, window seconds); usually ``SandboxOptions.effective_rate_limit``.
QuotaFor = Callable[[str], tuple[int, float]]


def _format_window(window: float) -> str:
    return str(int(window)) if float(window).is_integer() else f"{window:g}"


@dataclass(frozen=True)
class Quota:
    """The state of one credential's quota right after a request was counted."""

    limit: int
    remaining: int
    reset: int  # whole seconds until the window resets, >= 1
    window: float
    allowed: bool

    @property
    def retry_after(self) -> int:
        """Seconds a refused caller should wait: the time to the window reset, at least 1."""
        return max(1, self.reset)

    def headers(self, *, remaining: int | None = None, reset: int | None = None) -> dict[str, str]:
        """The five rate-limit headers of the spec (values may be overridden, e.g. by faults).

        >>> Quota(60, 59, 60, 60.0, True).headers()["RateLimit"]
        'limit=60, remaining=59, reset=60'
        """
        rem = self.remaining if remaining is None else remaining
        rst = self.reset if reset is None else reset
        return {
            "RateLimit": f"limit={self.limit}, remaining={rem}, reset={rst}",
            "RateLimit-Policy": f"{self.limit};w={_format_window(self.window)}",
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(rem),
            "X-RateLimit-Reset": str(rst),
        }


class RateLimiter:
    """Fixed-window request counters per credential key; thread-safe, on ``time.monotonic``.

    >>> RateLimiter(lambda plan: (60, 60.0)).hit("client:127.0.0.1").remaining
    59
    """

    def __init__(self, quota_for: QuotaFor, clock: Callable[[], float] = time.monotonic) -> None:
        self._quota_for = quota_for
        self._clock = clock
        self._lock = threading.Lock()
        self._windows: dict[str, tuple[float, int]] = {}  # key -> (window start, count)

    def hit(self, key: str, plan: str = "standard") -> Quota:
        """Count one request of ``key`` (on ``plan``) and return the quota state after it."""
        limit, window = self._quota_for(plan)
        now = self._clock()
        with self._lock:
            start, count = self._windows.get(key, (now, 0))
            if now - start >= window:
                start, count = now, 0
            count += 1
            self._windows[key] = (start, count)
        reset = max(1, math.ceil(start + window - now))
        return Quota(
            limit=limit,
            remaining=max(0, limit - count),
            reset=reset,
            window=window,
            allowed=count <= limit,
        )

    def reset(self) -> None:
        """Forget every counter (a fresh window for everybody)."""
        with self._lock:
            self._windows.clear()


def parse_rate_limit(text: str) -> tuple[int, float]:
    """Parse ``"60/60s"`` (also ``"60/60"``, ``"300/1m"``, ``"5/500ms"``) into (requests, seconds).

    >>> parse_rate_limit("120/10s")
    (120, 10.0)
    """
    count_text, sep, window_text = text.strip().partition("/")
    units = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
    problem = f"rate limit {text!r}: expected REQUESTS/WINDOW such as 60/60s, 300/1m or 5/500ms"
    if not sep:
        raise ValueError(problem)
    try:
        count = int(count_text)
    except ValueError:
        raise ValueError(problem) from None
    window_text = window_text.strip().lower()
    factor = 1.0
    for suffix in ("ms", "s", "m", "h"):
        if window_text.endswith(suffix):
            window_text, factor = window_text[: -len(suffix)], units[suffix]
            break
    try:
        window = float(window_text) * factor
    except ValueError:
        raise ValueError(problem) from None
    if count < 1 or not math.isfinite(window) or window <= 0:
        raise ValueError(f"{problem}; requests must be >= 1 and the window > 0")
    return count, window
