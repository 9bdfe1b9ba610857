"""Atomic file writes: a temporary file next to the target, renamed onto it when complete.

A reader sees the old file or the new one, never a half-written one; a failure (or Ctrl-C)
leaves the old file as it was and removes the temporary one.

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> with atomic_path(folder / "out.txt") as tmp:
...     _ = tmp.write_text("done", encoding="utf-8")
>>> (folder / "out.txt").read_text(encoding="utf-8"), sorted(p.name for p in folder.iterdir())
('done', ['out.txt'])
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = [
    "PRIVATE_MODE",
    "TEMP_MARKER",
    "atomic_path",
    "atomic_write_text",
    "fsync_dir",
    "temp_path",
]

#: Temporary files are named ``.<name><TEMP_MARKER><pid>-<random>`` next to the target, so a
#: writer holding a lock can remove those left by a killed one (``glob(f".{name}.tmp-*")``).
TEMP_MARKER = ".tmp-"
#: The mode of files holding secrets or personal data: readable and writable by their owner only.
PRIVATE_MODE = 0o600


def temp_path(path: Path) -> Path:
    """A fresh, hidden temporary name in ``path``'s folder (same file system: rename is atomic).

    >>> temp_path(Path("/data/x.parquet")).name.startswith(".x.parquet.tmp-")
    True
    """
    return path.with_name(f".{path.name}{TEMP_MARKER}{os.getpid()}-{secrets.token_hex(4)}")


def fsync_dir(folder: Path) -> None:
    """Flush a folder's entries (a rename is durable only once its folder is synced)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDWR)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _create_private(path: Path, mode: int) -> None:
    """Create ``path`` empty with exactly ``mode`` (never through a link; umask ignored)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, mode)
    try:
        if hasattr(os, "fchmod"):
            os.fchmod(fd, mode)
    finally:
        os.close(fd)


@contextmanager
def atomic_path(
    path: str | os.PathLike[str],
    *,
    mode: int | None = None,
    fsync: bool = True,
    staging: Path | None = None,
) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; when the block succeeds, rename it onto ``path``.

    The block writes the temporary file (by path or by opening it). ``mode``: the temporary file
    is created first with exactly this mode (e.g. ``0o600`` for a secret), so the content is
    never readable by others, even for a moment. ``fsync``: the file's data and then the folder
    are flushed, so the new content survives a power cut. ``staging``: the temporary file is
    named after this path instead (another folder on the same file system, so the folder of
    ``path`` never holds a partial file). On any failure the temporary file is removed and
    ``path`` is left as it was. The folders must exist.

    >>> with atomic_path("~/.config/realtyframes/token.json", mode=0o600) as tmp:  # doctest: +SKIP
    ...     tmp.write_text(text)
    """
    target = Path(path).expanduser()
    tmp = temp_path(target if staging is None else staging)
    try:
        if mode is not None:
            _create_private(tmp, mode)
        yield tmp
        if fsync:
            _fsync_file(tmp)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if fsync:
        fsync_dir(target.parent)


def atomic_write_text(
    path: str | os.PathLike[str], text: str, *, mode: int | None = None, fsync: bool = True
) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically (see :func:`atomic_path`); returns the path.

    >>> atomic_write_text("reports/page.html", "<!doctype html>...")  # doctest: +SKIP
    PosixPath('reports/page.html')
    """
    target = Path(path).expanduser()
    with atomic_path(target, mode=mode, fsync=fsync) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return target
