"""An exclusive lock file serialising cache writers across processes (``fcntl.flock``: the kernel
releases it when its process dies), re-taken if the path was replaced meanwhile; and who holds a
scope's lock, in the ``locks`` table while :func:`hold_scope` holds it (a row of a dead process is
stale). Why both: docs/cache.md, "The state database".

>>> with hold_scope(cache.job_lock("market", key), "City=Miami", timeout=900):  # doctest: +SKIP
...     holder(cache.root, "market", key)
Holder(scope='City=Miami', pid=4242, host='box', since='2026-06-01T09:00:00+00:00')
"""

from __future__ import annotations

import os
import socket
import sqlite3
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from realtyframes._files import PRIVATE_MODE
from realtyframes.cache._entries import pid_alive, process_start
from realtyframes.cache._layout import INTERNAL
from realtyframes.cache._state import connect, select, transaction
from realtyframes.errors import CacheLockError, CacheLockTimeout

__all__ = ["Holder", "file_lock", "hold_scope", "holder", "is_locked", "lock_error"]

_POLL = 0.05  # seconds between attempts when waiting with a timeout


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(fd: int, shared: bool = False) -> bool:  # no shared locks: a probe locks
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

    def _lock_blocking(fd: int) -> None:
        while not _try_lock(fd):
            time.sleep(_POLL)

else:
    import fcntl

    def _try_lock(fd: int, shared: bool = False) -> bool:
        """``shared``: refused while a writer holds the lock, never refused by another probe."""
        try:
            fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)

    def _lock_blocking(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)


def lock_error(path: Path, exc: OSError) -> CacheLockError:
    """The typed error for a lock ``path`` that cannot be a lock file (``exc`` says why).

    >>> str(lock_error(Path("/c/k.lock"), IsADirectoryError(21, "Is a directory")))
    'cache lock /c/k.lock cannot be taken: it is a directory (remove or rename it)'
    """
    if isinstance(exc, IsADirectoryError):
        why = "it is a directory"
    elif isinstance(exc, NotADirectoryError | FileExistsError):
        why = "a file stands where its folder should be"
    elif isinstance(exc, FileNotFoundError):
        why = "its folder does not exist"
    else:
        why = exc.strerror or type(exc).__name__
    return CacheLockError(f"cache lock {path} cannot be taken: {why} (remove or rename it)")


def _open(path: Path, flags: int) -> int:
    try:
        return os.open(path, flags, PRIVATE_MODE)
    except FileNotFoundError as exc:
        if flags & os.O_CREAT:
            raise lock_error(path, exc) from None  # its folder is missing
        raise
    except (IsADirectoryError, NotADirectoryError, PermissionError) as exc:
        raise lock_error(path, exc) from None


def is_locked(path: Path) -> bool:
    """Whether another holder has the lock on ``path`` now (a lock file that does not exist is
    not held; asking creates nothing and waits for nothing).

    >>> is_locked(Path("/tmp/no-such.lock"))
    False
    """
    try:
        fd = _open(path, os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        if not _try_lock(fd, shared=True):
            return True
        _unlock(fd)
        return False
    finally:
        os.close(fd)


def _same_file(fd: int, path: Path) -> bool:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    own = os.fstat(fd)
    return (own.st_dev, own.st_ino) == (st.st_dev, st.st_ino)


@contextmanager
def file_lock(path: Path, *, timeout: float | None = 300.0) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if missing) for the ``with`` block.

    ``timeout``: seconds to wait for another holder (``None`` waits forever); on expiry raises
    :class:`CacheLockTimeout`. A path that cannot be a lock file (a directory, a file in place of
    its folder) raises :class:`CacheLockError`.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        fd = _open(path, os.O_RDWR | os.O_CREAT)
        try:
            if deadline is None:
                _lock_blocking(fd)
            else:
                while not _try_lock(fd):
                    if time.monotonic() >= deadline:
                        raise CacheLockTimeout(
                            f"cache lock {path.name} held by another process for over {timeout:g} s"
                        )
                    time.sleep(_POLL)
            if _same_file(fd, path):
                break
            _unlock(fd)  # the lock file was removed or replaced meanwhile: lock the current one
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    try:
        yield
    finally:
        try:
            _unlock(fd)
        finally:
            os.close(fd)


# -- who holds a scope ------------------------------------------------------------------------------


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


def _root_and_name(lock: Path) -> tuple[Path, str]:
    """The cache root and the ``locks`` row's name (``<resource>/<key>``, as :func:`holder` asks)
    of a job lock, ``<root>/.rf/locks/<resource>.sync/<key>.lock``."""
    if lock.parts[-4:-2] != (INTERNAL, "locks") or lock.suffix != ".lock":
        raise ValueError(
            f"lock: {lock} is not a cache's job lock (<root>/{INTERNAL}/locks/<resource>.sync/"
            "<key>.lock: ParquetCache.job_lock)"
        )
    return lock.parents[3], f"{lock.parent.name.removesuffix('.sync')}/{lock.stem}"


@contextmanager
def hold_scope(lock: Path, scope: str, *, timeout: float | None) -> Iterator[None]:
    """Hold the job lock at ``lock`` (see :func:`file_lock`: waits ``timeout`` seconds, then
    :class:`CacheLockTimeout`) and say who holds it in the ``locks`` table for the block."""
    root, name = _root_and_name(lock)
    with file_lock(lock, timeout=timeout):
        pid, since = os.getpid(), datetime.now(UTC).isoformat(timespec="microseconds")
        row = (name, scope, pid, socket.gethostname(), since, process_start(pid))
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
    query = "SELECT scope, pid, host, since, process_start FROM locks WHERE name = ?"
    for scope, pid, host, since, started in select(root, query, (f"{resource}/{key}",)):
        if host != socket.gethostname() or pid_alive(pid, started):
            return Holder(scope, pid, host, since)
    return None  # none, or a stale row: its process has died
