"""A fake :class:`~realtyframes.api._clock.Clock` for the engine: its waits move it on at once.

``ApiClient(..., clock=FakeClock())`` runs retries, backoff, ``Retry-After``, deadlines and
pacing without sleeping; a test reads ``clock.now()`` (a fake server stamps its requests with
it) and ``clock.sleeps`` (every wait the engine asked for), never the wall clock.
"""

from __future__ import annotations

import threading


class FakeClock:
    """Monotonic seconds that move only when the engine waits (or a test calls ``advance``)."""

    def __init__(self, start: float = 1000.0) -> None:
        self._now = start
        self._lock = threading.Lock()
        self.sleeps: list[float] = []  # the engine's waits between attempts, in order

    def now(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += max(0.0, seconds)

    def sleep(self, seconds: float, stop: threading.Event | None = None) -> bool:
        with self._lock:
            self.sleeps.append(seconds)
        if stop is not None and stop.is_set():
            return True
        self.advance(seconds)
        return stop is not None and stop.is_set()

    def wait(self, condition: threading.Condition, seconds: float) -> object:
        condition.wait(0)  # let other threads in, then the time has passed
        self.advance(seconds)
        return False
