"""The cache's state: one SQLite database per cache root, ``<root>/.rf/state.sqlite3`` (``0600``,
WAL), holding everything besides the data; this module owns the connection and the schema. Its
tables and migrations: ``docs/cache.md``, "The state database".

>>> with connect(Path("data/cache")) as db:  # doctest: +SKIP
...     db.execute("SELECT count(*) FROM runs").fetchone()
(12,)
"""

from __future__ import annotations

import logging
import os
import sqlite3
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

from realtyframes._files import PRIVATE_MODE
from realtyframes.cache._entries import _private_dirs, _stamp
from realtyframes.cache._layout import INTERNAL
from realtyframes.cache._migrate import has_legacy_files, import_legacy, register_entries
from realtyframes.errors import CacheWarning

__all__ = [
    "connect",
    "exists",
    "open_db",
    "select",
    "shrink",
    "state_file",
    "transaction",
]

logger = logging.getLogger("realtyframes.cache")

#: Seconds a statement waits for another process's write transaction (SQLite's busy timeout).
BUSY_TIMEOUT = 60.0

_SCHEMA_V1 = """
CREATE TABLE checkpoints (resource TEXT NOT NULL, key TEXT NOT NULL, scope TEXT NOT NULL,
    params TEXT NOT NULL, started TEXT NOT NULL, updated REAL NOT NULL,
    notes TEXT NOT NULL DEFAULT '{}', PRIMARY KEY (resource, key));
CREATE TABLE checkpoint_answers (resource TEXT NOT NULL, key TEXT NOT NULL, name TEXT NOT NULL,
    body BLOB NOT NULL, PRIMARY KEY (resource, key, name));
CREATE TABLE runs (run_id TEXT PRIMARY KEY, started TEXT NOT NULL, finished TEXT NOT NULL,
    kind TEXT NOT NULL, resource TEXT NOT NULL, scope TEXT NOT NULL, scope_key TEXT NOT NULL,
    host TEXT, account TEXT, requests INTEGER, retries INTEGER, throttled INTEGER, rows INTEGER,
    quarantined INTEGER, new INTEGER, changed INTEGER, removed INTEGER,
    from_cache INTEGER NOT NULL, outcome TEXT NOT NULL, error_code TEXT, anomaly TEXT,
    toolkit_version TEXT, resumed_from TEXT);
CREATE INDEX runs_by_scope ON runs (scope_key, started);
CREATE TABLE locks (name TEXT PRIMARY KEY, scope TEXT NOT NULL, pid INTEGER NOT NULL,
    host TEXT NOT NULL, since TEXT NOT NULL, process_start TEXT);
CREATE TABLE watches (name TEXT PRIMARY KEY, definition TEXT NOT NULL, snapshot TEXT,
    updated TEXT NOT NULL)
"""
_SCHEMA_V2 = """
CREATE TABLE entries (resource TEXT NOT NULL, key TEXT NOT NULL, generation TEXT NOT NULL,
    account TEXT NOT NULL, meta TEXT NOT NULL, PRIMARY KEY (resource, key));
CREATE TABLE generations (resource TEXT NOT NULL, key TEXT NOT NULL, generation TEXT NOT NULL,
    retired REAL, PRIMARY KEY (resource, key, generation));
CREATE TABLE sync_state (resource TEXT NOT NULL, key TEXT NOT NULL, generation TEXT NOT NULL,
    entry_watermark TEXT, change_watermark TEXT, data_time TEXT, state TEXT NOT NULL,
    PRIMARY KEY (resource, key))
"""
_SCHEMA_V3 = """
CREATE TABLE reso_budgets (account TEXT NOT NULL, budget TEXT NOT NULL,
    window INTEGER NOT NULL, used INTEGER NOT NULL, PRIMARY KEY (account, budget))
"""


#: ``MIGRATIONS[n]`` takes a database at ``user_version`` n to n + 1, inside one transaction: the
#: tables it creates, and what moves the old files in (returning them: removed once committed).
MIGRATIONS: tuple[tuple[str, Callable[[sqlite3.Connection, Path], list[Path]] | None], ...] = (
    (_SCHEMA_V1, import_legacy),
    (_SCHEMA_V2, register_entries),
    (_SCHEMA_V3, None),
)
#: The schema's version this code writes (``PRAGMA user_version``).
SCHEMA_VERSION = len(MIGRATIONS)


def state_file(root: Path) -> Path:
    """The database of the cache at ``root``.

    >>> state_file(Path("/data/cache")).as_posix()
    '/data/cache/.rf/state.sqlite3'
    """
    return Path(root) / INTERNAL / "state.sqlite3"


def exists(root: Path) -> bool:
    """Whether the cache at ``root`` has state to read: its database, or the files of an older
    cache that opening it moves in (asking creates nothing)."""
    return state_file(root).is_file() or has_legacy_files(Path(root))


def select(root: Path, query: str, params: Sequence[Any] = ()) -> list[Any]:
    """The rows ``query`` selects in the database of ``root``; none when the cache has no state
    (asking creates nothing)."""
    if not exists(root):
        return []
    with connect(root) as db:
        return db.execute(query, params).fetchall()


def open_db(root: Path) -> sqlite3.Connection:
    """A connection to the database of ``root``, created (``0600``) and migrated if needed. The
    caller closes it; it may be used from several threads under the caller's own lock.
    Statements run in autocommit mode unless the caller opens a transaction. A file that is not
    a SQLite database (damaged) is moved to ``.rf/corrupt`` with a :class:`CacheWarning`, and a
    new database started: the cache's state is lost, never its data."""
    try:
        return _open(root)
    except sqlite3.DatabaseError as exc:
        if isinstance(exc, sqlite3.OperationalError):
            raise  # busy, no space, no permission: not the file's content
        _move_aside(Path(root), exc)
        return _open(root)


def _move_aside(root: Path, exc: sqlite3.DatabaseError) -> None:
    path = state_file(root)
    target = root / INTERNAL / "corrupt" / f"state.{_stamp()}.sqlite3"
    _private_dirs(target.parent)
    os.replace(path, target)
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    warnings.warn(
        f"the cache's state {path} is unreadable ({exc}); moved aside to {target} and started "
        "anew (checkpoints, run history, watches of this cache are in the file moved aside)",
        CacheWarning,
        stacklevel=3,
    )


def _open(root: Path) -> sqlite3.Connection:
    path = state_file(root)
    if not path.is_file():
        _private_dirs(path.parent)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, PRIVATE_MODE)
        if hasattr(os, "fchmod"):
            os.fchmod(fd, PRIVATE_MODE)  # exactly 0600 (the -wal and -shm files copy it)
        os.close(fd)
    db = sqlite3.connect(path, timeout=BUSY_TIMEOUT, isolation_level=None, check_same_thread=False)
    try:
        if db.execute("PRAGMA page_count").fetchone()[0] == 0:  # new: set once, never waits
            db.execute("PRAGMA auto_vacuum=INCREMENTAL")  # freed pages can go
            db.execute("PRAGMA journal_mode=WAL")  # (kept in the file: readers never wait)
        db.execute("PRAGMA synchronous=NORMAL")  # WAL: a commit survives a killed process
        db.execute("PRAGMA secure_delete=ON")  # removed answers and URLs are overwritten
        db.execute("PRAGMA journal_size_limit=0")  # and the log is emptied once applied
        if db.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
            _migrate(db, Path(root))
    except BaseException:
        db.close()
        raise
    return db


def _migrate(db: sqlite3.Connection, root: Path) -> None:
    moved: list[Path] = []
    with transaction(db):
        version = db.execute("PRAGMA user_version").fetchone()[0]  # another process's?
        for step in range(version, SCHEMA_VERSION):
            schema, move_in = MIGRATIONS[step]
            for statement in schema.split(";"):  # not executescript: it would commit at once
                db.execute(statement)
            moved += move_in(db, root) if move_in else []
            logger.debug("cache state %s: schema version %d", state_file(root), step + 1)
        db.execute(f"PRAGMA user_version = {max(version, SCHEMA_VERSION)}")
    for path in moved:  # the old files, now in the database (a rollback keeps them)
        path.unlink(missing_ok=True)


def shrink(db: sqlite3.Connection) -> None:
    """Give the pages freed by removed rows back to the file system (outside a transaction)."""
    db.executescript("PRAGMA incremental_vacuum;")  # stepped to the end: every free page


@contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction (``BEGIN IMMEDIATE``: it takes the write lock at once, so two
    processes never read-then-write over each other), committed when the block ends.

    >>> with connect(root) as db, transaction(db):  # doctest: +SKIP
    ...     db.execute("DELETE FROM runs WHERE started < '2026-01-01'")
    """
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def connect(root: Path) -> closing[sqlite3.Connection]:
    """:func:`open_db` for the ``with`` block, closed after it.

    >>> with connect(Path("data/cache")) as db:  # doctest: +SKIP
    ...     db.execute("SELECT name FROM watches").fetchall()
    """
    return closing(open_db(root))
