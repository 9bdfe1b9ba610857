"""Retry logic as small named pieces: what is retried, how long to wait, how much in total.

>>> policy = RetryPolicy(backoff_base=1.0, backoff_cap=8.0)
>>> retryable(httpx.ConnectError("refused")), retryable(httpx.UnsupportedProtocol("ftp"))
(True, False)
>>> 0.0 <= policy.backoff(3, random.Random(1)) <= 8.0
True
"""

from __future__ import annotations

import math
import random
import threading
from dataclasses import dataclass
from datetime import UTC, datetime

import httpx

from realtyframes.api._constants import (
    DEFAULT_BACKOFF_BASE,
    DEFAULT_BACKOFF_CAP,
    DEFAULT_DEADLINE,
    DEFAULT_MAX_RETRIES,
    DEFAULT_RETRY_AFTER_CAP,
    DEFAULT_RETRY_AFTER_FLOOR,
    DEFAULT_RETRY_BUDGET_RATIO,
)
from realtyframes.api._deprecation import http_date


def retryable(exc: BaseException) -> bool:
    """Whether an attempt that raised ``exc`` is retried: connect errors, timeouts, dropped
    connections and undecodable bodies; never a protocol the client cannot speak or a proxy's
    refusal."""
    if isinstance(exc, httpx.DecodingError):
        return True
    return isinstance(exc, httpx.TransportError) and not isinstance(
        exc, httpx.UnsupportedProtocol | httpx.LocalProtocolError | httpx.ProxyError
    )


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` value (delta-seconds or HTTP-date); None if malformed.

    Never raises; a date in the past gives 0.

    >>> parse_retry_after("7"), parse_retry_after("soon")
    (7.0, None)
    >>> parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=datetime(2015, 10, 21, 7, 27, tzinfo=UTC))
    60.0
    """
    if value is None:
        return None
    text = value.strip()
    if not text or not text.isascii() or len(text) > 64:
        return None
    try:
        if text.isdigit() or (text[0] in "+-" and text[1:].isdigit()):
            seconds = float(int(text))
        elif all(c.isdigit() or c == "." for c in text) and text.count(".") == 1:
            seconds = float(text)
        else:
            when = http_date(text)
            if when is None:
                return None
            seconds = (when - (now or datetime.now(UTC))).total_seconds()
    except (ValueError, TypeError, IndexError, OverflowError):
        return None
    if not math.isfinite(seconds):
        return None
    return max(0.0, seconds)


@dataclass(frozen=True)
class RetryPolicy:
    """How requests are retried. Tests shrink the waits; defaults are in ``_constants``.

    ``deadline``: seconds one request may take in total, attempts and waits included (None: none).
    ``budget_ratio``: retries of one load = ``max_retries + ceil(requests * budget_ratio)``.
    """

    max_retries: int = DEFAULT_MAX_RETRIES
    backoff_base: float = DEFAULT_BACKOFF_BASE
    backoff_cap: float = DEFAULT_BACKOFF_CAP
    retry_after_cap: float = DEFAULT_RETRY_AFTER_CAP
    retry_after_floor: float = DEFAULT_RETRY_AFTER_FLOOR
    deadline: float | None = DEFAULT_DEADLINE
    budget_ratio: float = DEFAULT_RETRY_BUDGET_RATIO

    def __post_init__(self) -> None:
        if not isinstance(self.max_retries, int) or isinstance(self.max_retries, bool):
            raise TypeError("max_retries must be an int")
        if self.max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        for name in ("backoff_base", "backoff_cap", "retry_after_cap", "retry_after_floor"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite number >= 0")
        if self.retry_after_floor > self.retry_after_cap:
            raise ValueError("retry_after_floor must be <= retry_after_cap")
        if self.deadline is not None and not self.deadline > 0:
            raise ValueError("deadline must be > 0 or None")
        if not self.budget_ratio >= 0:
            raise ValueError("budget_ratio must be >= 0")

    def backoff(self, attempt: int, rng: random.Random | None = None) -> float:
        """Full-jitter wait before retry ``attempt`` (0-based): ``uniform(0, min(cap, base*2**n))``.

        >>> RetryPolicy(backoff_base=1.0, backoff_cap=5.0).backoff(10, random.Random(0)) <= 5.0
        True
        """
        ceiling = min(self.backoff_cap, self.backoff_base * (2.0 ** min(max(attempt, 0), 62)))
        return (rng or random).uniform(0.0, ceiling)

    def retry_after(self, response: httpx.Response) -> float | None:
        """The response's ``Retry-After`` in seconds, clamped to [floor, cap]; None if absent.

        >>> RetryPolicy().retry_after(httpx.Response(429, headers={"Retry-After": "0"}))
        0.1
        >>> RetryPolicy().retry_after(httpx.Response(429, headers={"Retry-After": "3600"}))
        60.0
        """
        seconds = parse_retry_after(response.headers.get("retry-after"))
        return None if seconds is None else self.clamp(seconds)

    def clamp(self, seconds: float) -> float:
        """A server's wait, within [retry_after_floor, retry_after_cap]."""
        return min(self.retry_after_cap, max(self.retry_after_floor, seconds))

    def budget(self, requests: int) -> RetryBudget:
        """A fresh retry budget for a load of ``requests`` requests."""
        return RetryBudget(self.max_retries + math.ceil(max(0, requests) * self.budget_ratio))


class RetryBudget:
    """Retries shared by all the requests of one load; thread-safe.

    >>> budget = RetryBudget(1)
    >>> budget.try_spend(), budget.try_spend()
    (True, False)
    """

    def __init__(self, total: int) -> None:
        if total < 0:
            raise ValueError("a retry budget must be >= 0")
        self.total = total
        self._spent = 0
        self._lock = threading.Lock()

    @property
    def spent(self) -> int:
        """Retries used so far."""
        return self._spent

    @property
    def remaining(self) -> int:
        """Retries left."""
        return self.total - self._spent

    def try_spend(self) -> bool:
        """Take one retry; False when the budget is used up."""
        with self._lock:
            if self._spent >= self.total:
                return False
            self._spent += 1
            return True

    def __repr__(self) -> str:
        return f"RetryBudget(total={self.total}, spent={self._spent})"
