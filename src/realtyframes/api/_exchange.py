"""One GET's plan as the transports see it, and the signals they raise.

The engine puts an :class:`Exchange` in the request's extensions (``request.extensions[KEY]``);
each transport of :mod:`._transports` reads what it needs from it (the retry policy and budget,
the host's pacer, the deadline, the answer's check) and writes back what it learned (the parsed
result, deprecation notices). A request without one (the MCP sessions' POSTs) passes through
every step untouched.

>>> Exchange(host="base", shown="/v1/me", pace=True, limit=4, policy=RetryPolicy()).attempt
0
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from realtyframes.api._deprecation import Deprecation
from realtyframes.api._retry import RetryBudget, RetryPolicy

__all__ = ["KEY", "Cancelled", "DeadlinePassed", "Exchange", "TransientAnswer"]

#: The request extension holding the :class:`Exchange`.
KEY = "realtyframes.exchange"


class Cancelled(Exception):
    """Raised inside a request of ``get_many`` once another request has failed."""


class DeadlinePassed(Exception):
    """The deadline of the whole call passed before this request was sent."""


class TransientAnswer(Exception):
    """A 2xx answer that is not the one asked for: a broken body, or the answer to another
    request (``cause``: a ``BrokenBody`` or a ``ResponseMismatchError``). Raised by the answer's
    check where the body is parsed; the retry step retries it, and once retries are spent it is
    mapped to its typed error by :func:`~realtyframes.api._errors.error_for`."""

    def __init__(self, cause: Exception, status: int) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.status = status


@dataclass
class Exchange:
    """What the transports need to know about one GET, and what they report back."""

    host: str
    shown: object  # the URL with secrets masked (its str()), for logs and errors
    pace: bool
    limit: int  # requests of this client in flight at once (its max_concurrency)
    policy: RetryPolicy
    budget: RetryBudget | None = None
    stop: threading.Event | None = None
    deadline_at: float | None = None  # clock time after which no attempt starts or waits
    load_deadline: float | None = None  # the deadline of the whole call (get_many)
    timeout: float | None = None  # seconds per attempt
    accept: Callable[[httpx.Response], Any] | None = None  # parses a 2xx answer
    result: Any = None
    notices: list[tuple[str, str, Deprecation]] = field(default_factory=list)
    attempt: int = 0
    path: str = ""  # the path asked for (deprecation notices name it)
    retry_after: float | None = None  # the last answer's Retry-After (clamped), read once

    @staticmethod
    def of(request: httpx.Request) -> Exchange | None:
        """The exchange of ``request`` (None for a request the engine did not plan)."""
        found = request.extensions.get(KEY)
        return found if isinstance(found, Exchange) else None

    @property
    def stopped(self) -> bool:
        """True once another request of the same call failed."""
        return self.stop is not None and self.stop.is_set()

    def attempt_timeout(self, now: float) -> dict[str, float | None]:
        """httpx's timeout extension for an attempt starting at ``now`` (capped by the deadline);
        raises :class:`DeadlinePassed` when the whole call's deadline has passed."""
        if self.load_deadline is not None and now >= self.load_deadline:
            raise DeadlinePassed()
        timeout = self.timeout
        if self.deadline_at is not None:
            left = max(0.001, self.deadline_at - now)
            timeout = left if timeout is None else min(timeout, left)
        return httpx.Timeout(timeout).as_dict()
