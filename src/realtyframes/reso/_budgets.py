"""A RESO vendor's budgets kept by the client, across runs: requests per second, hour and day
and bytes per hour, in fixed windows (``floor(t / seconds)``, as the vendors count them), in the
cache's state database (table ``reso_budgets``; in memory for a client without a cache).

Before each request :meth:`Budgets.admit` counts it; a request that would pass a budget waits
for the window's end when that is at most ``max_wait`` seconds away (the per-second budget),
else raises :class:`BudgetExhaustedError` saying when the run may go on. A vendor's suspension
(a 429 or 403 under a budgeted profile) is recorded the same way: later runs stop at once,
before any request, until it ends.

>>> budgets = Budgets({"hour": Budget(3600, 2)}, "acct", None, clock=lambda: 7200.0)
>>> budgets.admit(); budgets.admit(); budgets.admit()
Traceback (most recent call last):
...
realtyframes.reso._budgets.BudgetExhaustedError: the hour budget of 2 requests is used up (2 used in this window); the run may go on at 1970-01-01T03:00:00Z
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path

from realtyframes.cache import state_connection, state_transaction
from realtyframes.errors import RealtyFramesError
from realtyframes.reso._profiles import Budget

__all__ = ["BudgetExhaustedError", "Budgets"]


class BudgetExhaustedError(RealtyFramesError):
    """A RESO vendor's budget is used up, or the vendor suspended the account: nothing more is
    sent until ``resume_at`` (a UTC datetime). ``budget`` names it (``hour``, ``day``,
    ``bytes_hour``, ``suspended``). A sync stopped by it resumes from its checkpoint."""

    def __init__(self, message: str, *, budget: str, resume_at: datetime) -> None:
        super().__init__(message)
        self.budget = budget
        self.resume_at = resume_at


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Budgets:
    """The budgets of one account (``account``: vendor and fingerprint, no secret) under the
    cache ``root`` (None: in memory). ``clock``: epoch seconds (tests pass their own)."""

    def __init__(
        self,
        budgets: Mapping[str, Budget],
        account: str,
        root: Path | None,
        *,
        clock: Callable[[], float] = time.time,
        max_wait: float = 2.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.budgets = dict(budgets)
        self.account = account
        self.root = root
        self.clock, self.max_wait, self.sleep = clock, max_wait, sleep
        self._memory: dict[str, tuple[int, int]] = {}
        self._lock = threading.Lock()

    # -- storage -------------------------------------------------------------------------------
    def _rows(self) -> dict[str, tuple[int, int]]:
        if self.root is None:
            return dict(self._memory)
        with state_connection(self.root) as db:
            rows = db.execute(
                "SELECT budget, window, used FROM reso_budgets WHERE account = ?", (self.account,)
            ).fetchall()
        return {b: (int(w), int(u)) for b, w, u in rows}

    def _update(self, changes: Mapping[str, tuple[int, int]]) -> None:
        if self.root is None:
            self._memory.update(changes)
            return
        with state_connection(self.root) as db, state_transaction(db):
            db.executemany(
                "INSERT INTO reso_budgets (account, budget, window, used) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (account, budget) DO UPDATE SET window = excluded.window,"
                " used = excluded.used",
                [(self.account, b, w, u) for b, (w, u) in changes.items()],
            )

    # -- the rules -----------------------------------------------------------------------------
    def usage(self) -> dict[str, dict[str, int]]:
        """What each budget used in its current window: ``{name: {"used", "limit"}}``."""
        now, rows = self.clock(), self._rows()
        out = {}
        for name, budget in self.budgets.items():
            window, used = rows.get(name, (-1, 0))
            current = used if window == int(now // budget.seconds) else 0
            out[name] = {"used": current, "limit": budget.limit}
        return out

    def suspended_until(self) -> float | None:
        """When a recorded suspension ends (epoch seconds), if it has not ended."""
        until = self._rows().get("suspended", (0, 0))[0]
        return float(until) if until > self.clock() else None

    def admit(self) -> None:
        """Count one request, waiting out a short window or raising past a budget."""
        with self._lock:
            while True:
                wait = self._try_admit()
                if wait is None:
                    return
                self.sleep(wait)

    def _try_admit(self) -> float | None:
        now = self.clock()
        until = self.suspended_until()
        if until is not None:
            raise BudgetExhaustedError(
                f"the vendor suspended this account; the run may go on at {_iso(until)}",
                budget="suspended",
                resume_at=datetime.fromtimestamp(until, UTC),
            )
        rows, changes = self._rows(), {}
        for name, budget in self.budgets.items():
            window = int(now // budget.seconds)
            seen, used = rows.get(name, (window, 0))
            used = used if seen == window else 0
            step = 1 if budget.unit == "requests" else 0
            if used + step > budget.limit or (step == 0 and used >= budget.limit):
                end = (window + 1) * budget.seconds
                if end - now <= self.max_wait:
                    return max(end - now, 0.001)
                unit = "requests" if step else "bytes"
                raise BudgetExhaustedError(
                    f"the {name} budget of {budget.limit} {unit} is used up ({used} used in "
                    f"this window); the run may go on at {_iso(end)}",
                    budget=name,
                    resume_at=datetime.fromtimestamp(end, UTC),
                )
            changes[name] = (window, used + step)
        self._update(changes)
        return None

    def add_bytes(self, size: int) -> None:
        """Count an answer's ``size`` bytes against the bytes budgets."""
        now, rows, changes = self.clock(), self._rows(), {}
        for name, budget in self.budgets.items():
            if budget.unit == "bytes":
                window = int(now // budget.seconds)
                seen, used = rows.get(name, (window, 0))
                changes[name] = (window, (used if seen == window else 0) + size)
        if changes:
            self._update(changes)

    def suspend(self, seconds: float, why: str) -> BudgetExhaustedError:
        """Record the vendor's suspension for ``seconds``; the error to raise."""
        until = int(self.clock() + max(seconds, 1))
        self._update({"suspended": (until, 0)})
        return BudgetExhaustedError(
            f"{why}; the vendor suspended this account, the run may go on at {_iso(until)}",
            budget="suspended",
            resume_at=datetime.fromtimestamp(until, UTC),
        )
