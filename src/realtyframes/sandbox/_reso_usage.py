"""A vendor profile's budgets, counted per token: requests per second, hour and day, bytes per
hour; throttling (per second) and suspension (the others) as the vendor does it.

Windows are fixed (``floor(t / seconds)``) on a budget clock: real time by default, or a manual
clock that only moves when told (``advance``), so tests reach the end of a window without waiting.
Past an hour, day or bytes budget the token is suspended for the rest of that window: the request
that crossed it gets a 429, every later one a 403, until the window ends.

>>> from realtyframes.sandbox._reso_vendors import profile
>>> usage = Usage(profile("mlsgrid", "hour=2,second=100"), manual=True)
>>> [usage.admit("t").status for _ in range(4)]
[200, 200, 429, 403]
>>> usage.advance(3600); usage.admit("t").status
200
"""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from realtyframes.sandbox._reso_vendors import VendorProfile

__all__ = ["Admission", "Usage", "token_label"]


def token_label(token: str | None) -> str:
    """A token as it is reported (a hash prefix, never the secret), or ``anonymous``."""
    if not token:
        return "anonymous"
    return "token-" + hashlib.sha256(token.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Admission:
    """The budget's answer to one request: 200 (go on), 429 or 403, why, and Retry-After."""

    status: int
    detail: str = ""
    retry_after: int = 0


@dataclass
class _Account:
    counts: dict[tuple[str, int], int] = field(default_factory=dict)  # (budget, window) -> used
    peak: dict[str, int] = field(default_factory=dict)  # budget -> the most any window used
    suspended_until: float | None = None
    suspended_by: str = ""
    requests: int = 0
    bytes: int = 0
    refused_429: int = 0
    refused_403: int = 0
    server_seconds: float = 0.0  # time spent answering (query, paging, JSON), not waiting


class Usage:
    """Budget accounting of one sandbox (all tokens); thread-safe."""

    def __init__(self, vendor: VendorProfile, *, manual: bool = False) -> None:
        self.vendor = vendor
        self.manual = manual
        self._offset = 0.0
        self._start = time.monotonic()
        self._lock = threading.Lock()
        self._accounts: dict[str, _Account] = {}

    def now(self) -> float:
        """The budget clock, in seconds since the sandbox started."""
        return self._offset + (0.0 if self.manual else time.monotonic() - self._start)

    def advance(self, seconds: float) -> None:
        """Move the budget clock forward (tests end a window this way)."""
        if seconds < 0:
            raise ValueError(f"advance_seconds: must be >= 0, got {seconds}")
        with self._lock:
            self._offset += seconds

    def _count(self, acc: _Account, name: str, window: int, amount: int) -> int:
        key = (name, window)
        acc.counts[key] = acc.counts.get(key, 0) + amount
        acc.peak[name] = max(acc.peak.get(name, 0), acc.counts[key])
        return acc.counts[key]

    def admit(self, label: str) -> Admission:
        """Count one request of ``label`` against the budgets; 200, 429 or 403."""
        budgets = self.vendor.budgets
        with self._lock:
            acc = self._accounts.setdefault(label, _Account())
            now = self.now()
            if acc.suspended_until is not None and now < acc.suspended_until:
                acc.refused_403 += 1
                wait = int(acc.suspended_until - now) + 1
                detail = f"the token is suspended for exceeding the {acc.suspended_by} budget; it may go on in {wait} s"
                return Admission(403, detail, wait)
            acc.suspended_until = None
            for name, (seconds, limit) in budgets.items():
                window = int(now // seconds)
                used = acc.counts.get((name, window), 0)
                if used + (name != "bytes_hour") > limit:
                    end = (window + 1) * seconds
                    wait = int(end - now) + 1
                    acc.refused_429 += 1
                    if name == "second":
                        return Admission(429, f"more than {limit} requests per second", wait)
                    acc.suspended_until, acc.suspended_by = end, name
                    detail = (
                        f"{name} budget of {limit} used up; the token is suspended for {wait} s"
                    )
                    return Admission(429, detail, wait)
            acc.requests += 1
            for name, (seconds, _) in budgets.items():
                if name != "bytes_hour":
                    self._count(acc, name, int(now // seconds), 1)
            return Admission(200)

    def add_bytes(self, label: str, size: int) -> None:
        """Count an answer's body bytes against the bytes budget (checked at the next request)."""
        with self._lock:
            acc = self._accounts.setdefault(label, _Account())
            acc.bytes += size
            if "bytes_hour" in self.vendor.budgets:
                seconds = self.vendor.budgets["bytes_hour"][0]
                self._count(acc, "bytes_hour", int(self.now() // seconds), size)

    def add_time(self, label: str, seconds: float) -> None:
        """Count the time the face spent answering one request of ``label``."""
        with self._lock:
            self._accounts.setdefault(label, _Account()).server_seconds += seconds

    def report(self) -> dict[str, Any]:
        """Counts per token: admitted requests, bytes, refusals, the busiest window per budget."""
        with self._lock:
            now = self.now()
            tokens = {
                label: {
                    "requests": acc.requests,
                    "bytes": acc.bytes,
                    "refused_429": acc.refused_429,
                    "refused_403": acc.refused_403,
                    "server_seconds": round(acc.server_seconds, 3),
                    "peak": dict(acc.peak),
                    "suspended": acc.suspended_until is not None and now < acc.suspended_until,
                    "suspended_by": acc.suspended_by or None,
                }
                for label, acc in self._accounts.items()
            }
        budgets = {name: {"seconds": s, "limit": n} for name, (s, n) in self.vendor.budgets.items()}
        clock = "manual" if self.manual else "real"
        return {
            "vendor": self.vendor.name,
            "budgets": budgets,
            "clock": clock,
            "now": now,
            "tokens": tokens,
        }
