"""The one :class:`Clock` of the request engine's deadlines, waits and pacing: tests pass a fake
one (``tests/fakeclock.py``) whose waits move it on at once, so nothing sleeps.

>>> clock = SystemClock()
>>> clock.sleep(0.0)
False
"""

from __future__ import annotations

import threading
import time
from typing import Protocol


class Clock(Protocol):
    """Monotonic seconds and the three ways the engine waits."""

    def now(self) -> float:
        """Seconds on a monotonic scale."""
        ...

    def sleep(self, seconds: float, stop: threading.Event | None = None) -> bool:
        """Wait ``seconds``; True when ``stop`` was set meanwhile (the wait ends early)."""
        ...

    def wait(self, condition: threading.Condition, seconds: float) -> object:
        """Wait on ``condition`` (held) for at most ``seconds`` (the pacer's wait)."""
        ...


class SystemClock:
    """Real time: ``time.monotonic`` and real waits."""

    def now(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float, stop: threading.Event | None = None) -> bool:
        if stop is not None:
            return stop.wait(max(0.0, seconds))
        if seconds > 0:
            time.sleep(seconds)
        return False

    def wait(self, condition: threading.Condition, seconds: float) -> object:
        return condition.wait(timeout=seconds)

    def __repr__(self) -> str:
        return "SystemClock()"


#: The clock of every client not given another.
SYSTEM_CLOCK = SystemClock()
