"""An exclusive lock file serialising cache writers across processes (``fcntl.flock``).

The lock is tied to the open file, so the kernel releases it when its process dies (even by
SIGKILL): a crashed writer never leaves the key locked. After taking the lock, the holder checks
that the path still names the file it locked (a ``clear`` may have removed it) and retries if not.

>>> with file_lock(Path("/tmp/example.lock")):  # doctest: +SKIP
...     ...  # only one process at a time gets here
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from realtyframes._files import PRIVATE_MODE
from realtyframes.errors import CacheLockError, CacheLockTimeout

__all__ = ["CacheLockError", "CacheLockTimeout", "file_lock", "is_locked", "lock_error"]

_POLL = 0.05  # seconds between attempts when waiting with a timeout


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(fd: int) -> bool:
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

    _try_shared = _try_lock  # no shared locks here: a probe takes the lock for a moment

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)

    def _lock_blocking(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)

    def _try_shared(fd: int) -> bool:
        """A shared lock: refused while a writer holds the lock, never refused by another probe."""
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True


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
        if not _try_shared(fd):
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
