"""A RESO vendor's budgets kept by the client, across runs: requests per second, hour and day
and bytes per hour, in the cache's state database (table ``reso_budgets``; in memory for a
client without a cache).

The vendor counts in windows whose start the client cannot know, so the client keeps every
budget over a **sliding** window: a request is sent only if the requests of the last
``seconds`` (counted in buckets: a minute for the hour budgets, an hour for the day's; the
per-second budget exactly, in memory) leave room for it. Then no window of that length, however
aligned, holds more than the limit. A request that would pass a budget waits when room comes
within ``max_wait`` seconds (the per-second budget), else raises :class:`BudgetExhaustedError`
saying when the run may go on. A vendor's suspension (a 429 or 403 under a budgeted profile) is
recorded the same way: later runs stop at once, before any request, until it ends.

>>> budgets = Budgets({"hour": Budget(3600, 2)}, "acct", None, clock=lambda: 7200.0)
>>> budgets.admit(); budgets.admit(); budgets.admit()
Traceback (most recent call last):
...
realtyframes.reso._budgets.BudgetExhaustedError: the hour budget of 2 requests is used up (2 in the last 3600 s); the run may go on at 1970-01-01T03:01:00Z
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


#: Seconds added to the per-second budget's window (see ``_try_admit``).
SEND_MARGIN = 0.25


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
        self._recent: list[float] = []  # send times of the last second (in memory)
        self.waited = 0.0  #: seconds this process slept to keep the budgets (pacing)
        self._lock = threading.Lock()

    # -- storage: rows "<budget>@<bucket>" -> used, and "suspended" -> until --------------------
    def _rows(self) -> dict[str, tuple[int, int]]:
        if self.root is None:
            return dict(self._memory)
        with state_connection(self.root) as db:
            rows = db.execute(
                "SELECT budget, window, used FROM reso_budgets WHERE account = ?", (self.account,)
            ).fetchall()
        return {b: (int(w), int(u)) for b, w, u in rows}

    def _update(self, changes: Mapping[str, tuple[int, int]], stale: list[str]) -> None:
        if self.root is None:
            self._memory.update(changes)
            for name in stale:
                self._memory.pop(name, None)
            return
        with state_connection(self.root) as db, state_transaction(db):
            db.executemany(
                "INSERT INTO reso_budgets (account, budget, window, used) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (account, budget) DO UPDATE SET window = excluded.window,"
                " used = excluded.used",
                [(self.account, b, w, u) for b, (w, u) in changes.items()],
            )
            db.executemany(
                "DELETE FROM reso_budgets WHERE account = ? AND budget = ?",
                [(self.account, name) for name in stale],
            )

    # -- the rules -----------------------------------------------------------------------------
    @staticmethod
    def _bucket(budget: Budget) -> int:
        return 60 if budget.seconds <= 3600 else 3600

    def _window(
        self, name: str, budget: Budget, rows: Mapping[str, tuple[int, int]], now: float
    ) -> tuple[list[tuple[int, int]], list[str]]:
        """The buckets of ``name`` inside its sliding window (start, used), and the stale rows."""
        size = self._bucket(budget)
        live, stale = [], []
        for row, (start, used) in rows.items():
            if row.partition("@")[0] != name:
                continue
            if start + size <= now - budget.seconds:
                stale.append(row)
            else:
                live.append((start, used))
        return sorted(live), stale

    def usage(self) -> dict[str, dict[str, int]]:
        """What each budget used over its sliding window: ``{name: {"used", "limit"}}``."""
        now, rows = self.clock(), self._rows()
        out = {}
        for name, budget in self.budgets.items():
            if name == "second":
                used = sum(1 for t in self._recent if t > now - 1)
            else:
                used = sum(u for _, u in self._window(name, budget, rows, now)[0])
            out[name] = {"used": used, "limit": budget.limit}
        return out

    def suspended_until(self) -> float | None:
        """When a recorded suspension ends (epoch seconds), if it has not ended."""
        until = self._rows().get("suspended", (0, 0))[0]
        return float(until) if until > self.clock() else None

    def admit(self) -> None:
        """Count one request, waiting out a short wait or raising past a budget."""
        with self._lock:
            while True:
                wait = self._try_admit()
                if wait is None:
                    return
                self.sleep(wait)
                self.waited += wait

    def _refuse(self, name: str, budget: Budget, used: int, resume: float) -> float:
        now = self.clock()
        if resume - now <= self.max_wait:
            return max(resume - now, 0.001)
        unit = "bytes" if budget.unit == "bytes" else "requests"
        raise BudgetExhaustedError(
            f"the {name} budget of {budget.limit} {unit} is used up ({used} in the last "
            f"{budget.seconds} s); the run may go on at {_iso(resume)}",
            budget=name,
            resume_at=datetime.fromtimestamp(resume, UTC),
        )

    def _try_admit(self) -> float | None:
        now = self.clock()
        until = self.suspended_until()
        if until is not None:
            raise BudgetExhaustedError(
                f"the vendor suspended this account; the run may go on at {_iso(until)}",
                budget="suspended",
                resume_at=datetime.fromtimestamp(until, UTC),
            )
        rows = self._rows()
        changes: dict[str, tuple[int, int]] = {}
        stale: list[str] = []
        for name, budget in self.budgets.items():
            if name == "second":
                # the server counts a request when it arrives: a margin on the window absorbs
                # the jitter of the send delay (a later request arriving sooner than an earlier)
                span = budget.seconds + SEND_MARGIN
                self._recent = [t for t in self._recent if t > now - span]
                if len(self._recent) + 1 > budget.limit:
                    return self._refuse(name, budget, len(self._recent), self._recent[0] + span)
                continue
            live, old = self._window(name, budget, rows, now)
            stale += old
            used = sum(u for _, u in live)
            step = 1 if budget.unit == "requests" else 0
            if used + step > budget.limit or (step == 0 and used >= budget.limit):
                freed, resume = 0, now
                for start, count in live:  # the oldest buckets leave the window first
                    freed += count
                    resume = start + self._bucket(budget) + budget.seconds
                    if used - freed + max(step, 1) <= budget.limit:
                        break
                return self._refuse(name, budget, used, resume)
            if step:
                bucket = int(now // self._bucket(budget)) * self._bucket(budget)
                current = rows.get(f"{name}@{bucket}", (bucket, 0))[1]
                changes[f"{name}@{bucket}"] = (bucket, current + 1)
        if "second" in self.budgets:
            self._recent.append(now)
        self._update(changes, stale)
        return None

    def add_bytes(self, size: int) -> None:
        """Count an answer's ``size`` bytes against the bytes budgets."""
        now, rows, changes = self.clock(), self._rows(), {}
        for name, budget in self.budgets.items():
            if budget.unit == "bytes":
                bucket = int(now // self._bucket(budget)) * self._bucket(budget)
                current = rows.get(f"{name}@{bucket}", (bucket, 0))[1]
                changes[f"{name}@{bucket}"] = (bucket, current + size)
        if changes:
            self._update(changes, [])

    def suspend(self, seconds: float, why: str) -> BudgetExhaustedError:
        """Record the vendor's suspension for ``seconds``; the error to raise."""
        until = int(self.clock() + max(seconds, 1))
        self._update({"suspended": (until, 0)}, [])
        return BudgetExhaustedError(
            f"{why}; the vendor suspended this account, the run may go on at {_iso(until)}",
            budget="suspended",
            resume_at=datetime.fromtimestamp(until, UTC),
        )
