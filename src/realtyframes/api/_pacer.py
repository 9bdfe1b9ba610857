"""The pacer that keeps a client inside its quota, shared by all its threads."""

from __future__ import annotations

import threading
from dataclasses import replace

from realtyframes.api._clock import SYSTEM_CLOCK, Clock
from realtyframes.api._constants import PACING_SAFETY
from realtyframes.api._ratelimit import RateLimitState


class Pacer:
    """One rate budget per client, shared by all its threads.

    ``acquire()`` before each attempt returns a ticket, ``release(ticket, info)`` after the answer
    (``cancel(ticket)`` when none came). Requests are spaced ``window / (limit * safety)`` apart;
    the server's ``remaining`` (corrected for requests still in flight) stops sending at zero until
    the reset; ``block(seconds)`` (a ``Retry-After``) holds every thread. ``clock``: its time.

    >>> pacer = Pacer()
    >>> ticket = pacer.acquire()
    >>> pacer.release(ticket, RateLimitState(limit=60, remaining=59, reset=60.0, window=60.0))
    >>> pacer.state.remaining
    59
    """

    def __init__(self, *, safety: float = PACING_SAFETY, clock: Clock = SYSTEM_CLOCK) -> None:
        if not 0 < safety <= 1:
            raise ValueError("safety must be in (0, 1]")
        self.safety = safety
        self._clock = clock.now
        self._wait = clock.wait
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

    def acquire(self, stop: threading.Event | None = None, *, pace: bool = True) -> int:
        """Wait for a slot and return a ticket; returns early (still a ticket) when ``stop`` is set.
        ``pace=False`` skips spacing and the quota estimate (``block`` is still honoured)."""
        started = self._clock()
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

    def release(self, ticket: int, info: RateLimitState | None) -> None:
        """Record the quota state the answer to ``ticket`` reported."""
        with self._cond:
            sent_at = self._inflight.pop(ticket, None)
            if info is not None:
                self._observe(ticket, sent_at, info)
            self._cond.notify_all()

    def _observe(self, ticket: int, sent_at: float | None, info: RateLimitState) -> None:
        now = self._clock()
        if info.limit is not None:
            self._limit = info.limit
        if info.window is not None:
            self._window = info.window
        elif info.reset is not None:
            self._window_guess = max(self._window_guess or 0.0, info.reset)
        self._latest = replace(info, limit=self._limit, window=self._window)
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
