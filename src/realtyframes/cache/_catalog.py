"""The store's tables in the state database: the current generation of each entry
(``entries``), the generations kept for their grace period (``generations``) and the synced
scopes' state (``sync_state``); one transaction makes a generation current (:func:`commit`).

>>> with connect(root) as db:  # doctest: +SKIP
...     current(db, "market", key).generation
'9f2c4e1a0b3d5e7f'
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from realtyframes.cache._layout import MAIN

__all__ = ["Current", "all_entries", "commit", "current", "forget", "retired"]

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


_SELECT = (
    "SELECT e.resource, e.key, e.generation, e.account, e.meta, s.state FROM entries e"
    " LEFT JOIN sync_state s ON s.resource = e.resource AND s.key = e.key"
)


def _current(row: tuple[str, str, str, str, str, str | None]) -> Current:
    meta = json.loads(row[4])
    if row[5] is not None:
        meta["sync"] = json.loads(row[5])
    return Current(row[2], row[3], meta)


def current(db: sqlite3.Connection, resource: str, key: str) -> Current | None:
    """The current generation of ``resource``'s ``key``, or None."""
    row = db.execute(f"{_SELECT} WHERE e.resource = ? AND e.key = ?", (resource, key)).fetchone()
    return None if row is None else _current(row)


def all_entries(
    db: sqlite3.Connection, resource: str | None = None
) -> list[tuple[str, str, Current]]:
    """``(resource, key, current generation)`` of every entry (of ``resource``), in order."""
    where = "WHERE ? IS NULL OR e.resource = ? ORDER BY e.resource, e.key"
    return [(r[0], r[1], _current(r)) for r in db.execute(f"{_SELECT} {where}", (resource,) * 2)]


def commit(db: sqlite3.Connection, resource: str, key: str, new: Current, now: float) -> None:
    """Make ``new`` the current generation (inside the caller's transaction): retire the one it
    replaces (the key's one generation not retired), store its sync state (``new.meta["sync"]``)
    or remove the old one."""
    meta = dict(new.meta)
    sync = meta.pop("sync", None)
    db.execute(
        "INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?, ?)",
        (resource, key, new.generation, new.account, json.dumps(meta, sort_keys=True)),
    )
    db.execute(
        "UPDATE generations SET retired = ? WHERE resource = ? AND key = ? AND generation != ?"
        " AND retired IS NULL",
        (now, resource, key, new.generation),
    )
    db.execute(
        "INSERT OR REPLACE INTO generations VALUES (?, ?, ?, NULL)", (resource, key, new.generation)
    )
    db.execute("DELETE FROM sync_state WHERE resource = ? AND key = ?", (resource, key))
    if isinstance(sync, Mapping):
        marks = [None if sync.get(n) is None else str(sync.get(n)) for n in _WATERMARKS]
        db.execute(
            "INSERT INTO sync_state VALUES (?, ?, ?, ?, ?, ?, ?)",
            (resource, key, new.generation, *marks, json.dumps(sync, sort_keys=True)),
        )


def forget(db: sqlite3.Connection, resource: str, key: str) -> None:
    """Remove the entry (inside the caller's transaction); its generations are retired at once
    (``retired`` 0: the next collection removes them)."""
    db.execute("DELETE FROM entries WHERE resource = ? AND key = ?", (resource, key))
    db.execute("DELETE FROM sync_state WHERE resource = ? AND key = ?", (resource, key))
    db.execute("UPDATE generations SET retired = 0 WHERE resource = ? AND key = ?", (resource, key))


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
