"""Who holds a scope: the holders of the cache's job locks (a market's sync), in the ``locks``
table of the state database (:mod:`._state`).

The lock itself stays an ``flock`` on ``.rf/locks/<resource>.sync/<key>.lock`` (:mod:`._lock`):
the kernel releases it when its holder dies, even by SIGKILL, and a sync holds it for minutes,
which a SQLite transaction cannot do without stopping every other writer of the database. What
SQLite adds is the holder: while :func:`hold_scope` holds the lock, the row ``(name, scope, pid,
host, since, process_start)`` says who it is. A row whose process has died (its PID is gone on
this host, or is now another process) is stale: :func:`holder` ignores it and the next holder
replaces it. ``realtyframes cache clear`` names the holder when it refuses a scope being synced.

>>> with hold_scope(cache.job_lock("market", key), "City=Miami", timeout=900):  # doctest: +SKIP
...     holder(cache.root, "market", key)
Holder(scope='City=Miami', pid=4242, host='box', since='2026-06-01T09:00:00+00:00')
"""

from __future__ import annotations

import os
import socket
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from realtyframes.cache._lock import file_lock
from realtyframes.cache._state import connect, exists, transaction

__all__ = ["Holder", "hold_scope", "holder"]


@dataclass(frozen=True)
class Holder:
    """Who holds a scope: what it syncs (``scope``, as error lines show it), its process
    (``pid`` on ``host``) and since when (ISO 8601, UTC).

    >>> str(Holder("City=Miami", 4242, "box", "2026-06-01T09:00:00.000000+00:00"))
    'process 4242 on box since 2026-06-01T09:00:00Z'
    """

    scope: str
    pid: int
    host: str
    since: str

    def __str__(self) -> str:
        return f"process {self.pid} on {self.host} since {self.since[:19]}Z"


def _process_start(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot, Linux), to tell a reused PID."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _alive(pid: int, started: str | None) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process: alive
    return started is None or _process_start(pid) in (None, started)


def _name(lock: Path) -> tuple[Path, str]:
    """The cache root and the row's name (``<resource>/<key>``) of a job lock's path,
    ``<root>/.rf/locks/<resource>.sync/<key>.lock``."""
    return lock.parents[3], f"{lock.parent.name.removesuffix('.sync')}/{lock.stem}"


@contextmanager
def hold_scope(lock: Path, scope: str, *, timeout: float | None) -> Iterator[None]:
    """Hold the job lock at ``lock`` (see :func:`file_lock`: waits ``timeout`` seconds, then
    :class:`CacheLockTimeout`) and say who holds it in the ``locks`` table for the block."""
    root, name = _name(lock)
    with file_lock(lock, timeout=timeout):
        pid, since = os.getpid(), datetime.now(UTC).isoformat(timespec="microseconds")
        row = (name, scope, pid, socket.gethostname(), since, _process_start(pid))
        with connect(root) as db, transaction(db):
            db.execute("INSERT OR REPLACE INTO locks VALUES (?, ?, ?, ?, ?, ?)", row)
        try:
            yield
        finally:
            with suppress(sqlite3.Error), connect(root) as db:  # stale anyway once we are gone
                db.execute("DELETE FROM locks WHERE name = ? AND since = ?", (name, since))


def holder(root: Path, resource: str, key: str) -> Holder | None:
    """Who holds ``resource``'s job lock of ``key`` now, if a live process says so (asking
    creates nothing)."""
    if not exists(root):
        return None
    with connect(root) as db:
        row = db.execute(
            "SELECT scope, pid, host, since, process_start FROM locks WHERE name = ?",
            (f"{resource}/{key}",),
        ).fetchone()
    if row is None:
        return None
    scope, pid, host, since, started = row
    if host == socket.gethostname() and not _alive(pid, started):
        return None  # stale: its process has died
    return Holder(scope, pid, host, since)
