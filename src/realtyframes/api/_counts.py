"""What a client sent: HTTP requests (every attempt), retries and 429 answers, counted for the run
history (``client.runs()``). One counter per connection pool, shared by ``with_options`` copies
and threads; a run reads it before and after (:meth:`RequestCounter.snapshot`) and keeps the
difference.

>>> counter = RequestCounter()
>>> counter.sent(status=429); counter.retried(); counter.sent(status=200)
>>> counter.snapshot()
RequestCounts(requests=2, retries=1, throttled=1)
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

__all__ = ["RequestCounter", "RequestCounts"]


@dataclass(frozen=True)
class RequestCounts:
    """Counts since the client was made: ``requests`` (every attempt that went out, retries
    included), ``retries`` (attempts after the first of a request), ``throttled`` (429 answers).

    >>> RequestCounts(5, 1, 1) - RequestCounts(2, 0, 0)
    RequestCounts(requests=3, retries=1, throttled=1)
    """

    requests: int = 0
    retries: int = 0
    throttled: int = 0

    def __sub__(self, other: RequestCounts) -> RequestCounts:
        return RequestCounts(
            self.requests - other.requests,
            self.retries - other.retries,
            self.throttled - other.throttled,
        )


class RequestCounter:
    """A thread-safe :class:`RequestCounts`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests = self._retries = self._throttled = 0

    def sent(self, status: int | None = None) -> None:
        """One attempt went out; ``status``: its answer's status (None: no answer came)."""
        with self._lock:
            self._requests += 1
            if status == 429:
                self._throttled += 1

    def retried(self) -> None:
        """A request is attempted again."""
        with self._lock:
            self._retries += 1

    def snapshot(self) -> RequestCounts:
        """The counts so far."""
        with self._lock:
            return RequestCounts(self._requests, self._retries, self._throttled)
