"""The entries in the state database: which generation of each entry is current (``entries``),
the generations kept for their grace period (``generations``) and the synced scopes' state and
watermarks (``sync_state``). :mod:`._store` reads and changes them; one transaction makes a new
generation current, retires the one it replaces and stores the scope's sync state with it.

The migration to schema version 2 (:func:`to_v2`) registers the entries of a cache written by
realtyframes 0.8 and earlier: each ``part-0.parquet`` with its companions of the same generation
(in place, or kept in ``.rf/previous`` by a write that died) becomes a generation, hard-linked
into ``.rf/generations``, its sync state moved from the file's footer into ``sync_state``.

>>> with connect(root) as db:  # doctest: +SKIP
...     current(db, "market", key).generation
'9f2c4e1a0b3d5e7f'
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import shutil
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from realtyframes.cache._entries import FILE_MODE, _private_dirs
from realtyframes.cache._generations import GENERATION, MAIN, entry_meta, part_path
from realtyframes.cache._layout import Layout

__all__ = ["Current", "all_entries", "commit", "current", "forget", "retired", "to_v2"]

logger = logging.getLogger("realtyframes.cache")

SCHEMA_V2 = """
CREATE TABLE entries (
    resource TEXT NOT NULL,
    key TEXT NOT NULL,
    generation TEXT NOT NULL,
    account TEXT NOT NULL,
    meta TEXT NOT NULL,
    PRIMARY KEY (resource, key)
);
CREATE TABLE generations (
    resource TEXT NOT NULL,
    key TEXT NOT NULL,
    generation TEXT NOT NULL,
    retired REAL,
    PRIMARY KEY (resource, key, generation)
);
CREATE TABLE sync_state (
    resource TEXT NOT NULL,
    key TEXT NOT NULL,
    generation TEXT NOT NULL,
    entry_watermark TEXT,
    change_watermark TEXT,
    data_time TEXT,
    state TEXT NOT NULL,
    PRIMARY KEY (resource, key)
);
"""
#: The sync state's fields that have a column of their own (queryable; also in ``state``).
_WATERMARKS = ("entry_watermark", "change_watermark", "data_time")


@dataclass(frozen=True)
class Current:
    """The current generation of an entry: its id, account label, metadata (with its sync
    state under ``"sync"`` when it has one)."""

    generation: str
    account: str
    meta: dict[str, Any]

    @property
    def parts(self) -> list[str]:
        """The generation's files: ``main`` and its companions."""
        return [MAIN, *(self.meta.get("extras") or {})]


def current(db: sqlite3.Connection, resource: str, key: str) -> Current | None:
    """The current generation of ``resource``'s ``key``, or None."""
    row = db.execute(
        "SELECT e.generation, e.account, e.meta, s.state FROM entries e LEFT JOIN sync_state s "
        "ON s.resource = e.resource AND s.key = e.key WHERE e.resource = ? AND e.key = ?",
        (resource, key),
    ).fetchone()
    if row is None:
        return None
    meta = json.loads(row[2])
    if row[3] is not None:
        meta["sync"] = json.loads(row[3])
    return Current(row[0], row[1], meta)


def all_entries(db: sqlite3.Connection, resource: str | None = None) -> list[tuple[str, str]]:
    """``(resource, key)`` of every entry (of ``resource``)."""
    sql = "SELECT resource, key FROM entries"
    rows = db.execute(sql + " WHERE resource = ? ORDER BY key", (resource,)) if resource else None
    return [tuple(r) for r in (rows or db.execute(sql + " ORDER BY resource, key")).fetchall()]


def commit(
    db: sqlite3.Connection,
    resource: str,
    key: str,
    new: Current,
    now: float,
) -> Current | None:
    """Make ``new`` the current generation (inside the caller's transaction): retire the one it
    replaces, store its sync state (``new.meta["sync"]``) or remove the old one. Returns the
    generation replaced, or None."""
    old = current(db, resource, key)
    meta = dict(new.meta)
    sync = meta.pop("sync", None)
    db.execute(
        "INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?, ?)",
        (resource, key, new.generation, new.account, json.dumps(meta, sort_keys=True)),
    )
    db.execute(
        "INSERT OR REPLACE INTO generations VALUES (?, ?, ?, NULL)", (resource, key, new.generation)
    )
    if old is not None and old.generation != new.generation:
        db.execute(
            "UPDATE generations SET retired = ? WHERE resource = ? AND key = ? AND generation = ?",
            (now, resource, key, old.generation),
        )
    db.execute("DELETE FROM sync_state WHERE resource = ? AND key = ?", (resource, key))
    if isinstance(sync, Mapping):
        marks = [None if sync.get(n) is None else str(sync.get(n)) for n in _WATERMARKS]
        db.execute(
            "INSERT INTO sync_state VALUES (?, ?, ?, ?, ?, ?, ?)",
            (resource, key, new.generation, *marks, json.dumps(sync, sort_keys=True)),
        )
    return old


def forget(db: sqlite3.Connection, resource: str, key: str) -> Current | None:
    """Remove the entry (inside the caller's transaction); its generations are retired at once
    (``retired`` 0: the next collection removes them). Returns what was current, or None."""
    old = current(db, resource, key)
    db.execute("DELETE FROM entries WHERE resource = ? AND key = ?", (resource, key))
    db.execute("DELETE FROM sync_state WHERE resource = ? AND key = ?", (resource, key))
    db.execute("UPDATE generations SET retired = 0 WHERE resource = ? AND key = ?", (resource, key))
    return old


def retired(db: sqlite3.Connection, before: float) -> list[tuple[str, str, str]]:
    """Take the generations retired before ``before`` off the table (inside the caller's
    transaction) and return them ``(resource, key, generation)``: their files can go."""
    rows = db.execute(
        "SELECT resource, key, generation FROM generations WHERE retired IS NOT NULL "
        "AND retired < ?",
        (before,),
    ).fetchall()
    db.execute("DELETE FROM generations WHERE retired IS NOT NULL AND retired < ?", (before,))
    return [tuple(r) for r in rows]


# -- the migration to schema version 2 -----------------------------------------------------------


def to_v2(db: sqlite3.Connection, root: Path) -> list[Path]:
    """Create the tables and register the entries of an older cache at ``root``; returns the
    files to remove once committed (companions kept in ``.rf/previous``)."""
    for statement in SCHEMA_V2.split(";"):
        if statement.strip():
            db.execute(statement)
    layout = Layout(root)
    registered = skipped = 0
    for resource in (f for f in layout.folders() if "." not in f):
        for key, path in layout.entries(resource):
            if _register(db, layout, resource, key, path):
                registered += 1
            else:
                skipped += 1
    if registered or skipped:
        logger.warning(
            "cache %s: %d entries registered in %s (their generations in %s); %d unreadable left "
            "as misses",
            root,
            registered,
            root / ".rf" / "state.sqlite3",
            layout.internal / "generations",
            skipped,
        )
    return sorted(layout.internal.glob("previous/*.parquet"))


def _footer(path: Path | None) -> dict[str, Any] | None:
    try:
        return None if path is None else entry_meta(pq.read_schema(path))
    except (OSError, ValueError, KeyError, pa.ArrowException):
        return None


def _register(db: sqlite3.Connection, layout: Layout, resource: str, key: str, main: Path) -> bool:
    meta = _footer(main)
    if meta is None:
        return False
    generation = meta.get("generation")
    if not isinstance(generation, str) or not GENERATION.match(generation):
        generation = secrets.token_hex(8)  # written before generations had ids
    files = {MAIN: main}
    for name in meta.get("extras") or {}:
        folder = f"{resource}.{name}"
        found = layout.find(folder, key)
        if (_footer(found) or {}).get("generation") != meta.get("generation"):
            found = layout.internal / "previous" / f"{folder}.{key}.{generation}.parquet"
        if found is None or _footer(found) is None:
            logger.info(
                "cache %s/%s: companion %s of its generation is missing", resource, key, name
            )
            return False
        files[name] = found
    target = layout.generation(resource, key, generation)
    _private_dirs(target)
    for part, source in files.items():
        _link(source, part_path(target, part))
    account = main.parent.parent.name.removeprefix("account=")
    commit(db, resource, key, Current(generation, account, meta), 0.0)
    return True


def _link(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except FileExistsError:
        pass  # linked by a migration that did not commit
    except OSError:  # a file system without hard links
        shutil.copyfile(source, target)
        os.chmod(target, FILE_MODE)
