"""Moving a cache written by realtyframes 0.7 and earlier into the state database.

Run once, by the migration to schema version 1 (:mod:`._state`), inside its transaction:

* ``runs/run.*.parquet`` (one run record per file) become rows of ``runs``. A file of another
  schema (not a run record: a column of the record is missing or of another type) is skipped
  with a log line and left where it is; its rows never become blank records.
* ``.rf/staging/checkpoints/<resource>.<key>.journal`` (records
  ``RFCK1 <kind> <name> <length> <crc32>\\n<body>\\n``) become a checkpoint and its answers,
  read one record at a time; a torn or corrupt record ends the reading, as it did.
* ``.watches/watches.json`` becomes rows of ``watches`` (the snapshots stay Parquet files).

The files moved are removed once the transaction is committed (:func:`remove_moved`), so a
migration that fails leaves the old cache as it was.

>>> with connect(root) as db:  # doctest: +SKIP
...     ...  # an old cache is migrated by its first open
"""

from __future__ import annotations

import json
import logging
import sqlite3
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq

from realtyframes.cache._runs_table import SCHEMA, insert_record

__all__ = ["forget_moved", "import_legacy", "moved_files", "remove_moved"]

logger = logging.getLogger("realtyframes.cache")

_JOURNALS = Path(".rf") / "staging" / "checkpoints"
_WATCHES = Path(".watches") / "watches.json"
_MAGIC = b"RFCK1"
#: The columns without which a Parquet file in ``runs/`` is not a run record.
_REQUIRED = ("run_id", "started", "finished", "kind", "resource", "scope", "scope_key", "outcome")
#: Files moved into the database by a migration not committed yet, by cache root.
_MOVED: dict[Path, list[Path]] = {}


def moved_files(root: Path) -> list[Path]:
    """The files a migration of ``root`` not committed yet moved into the database."""
    return _MOVED.setdefault(root, [])


def import_legacy(db: sqlite3.Connection, root: Path) -> None:
    """Move the run records, checkpoints and watches of an older cache at ``root`` into ``db``."""
    moved = moved_files(root)
    moved += _import_runs(db, root)
    moved += _import_journals(db, root)
    moved += _import_watches(db, root)


def remove_moved(root: Path) -> None:
    """Remove the files a committed migration of ``root`` moved into the database."""
    for path in _MOVED.pop(root, []):
        path.unlink(missing_ok=True)


def forget_moved(root: Path) -> None:
    """A migration rolled back: keep the old files."""
    _MOVED.pop(root, None)


# -- run records -------------------------------------------------------------------------------


def _import_runs(db: sqlite3.Connection, root: Path) -> list[Path]:
    folder = root / "runs"
    moved, skipped = [], 0
    for path in sorted(folder.glob("*.parquet")) if folder.is_dir() else ():
        try:
            records = _run_records(pq.read_table(path))
        except (OSError, ValueError, pa.ArrowException):
            records = None
        if records is None or any(not r["run_id"] or r["started"] is None for r in records):
            skipped += 1
            logger.warning("run history: %s is not a run record (another schema); skipped", path)
            continue
        for record in records:
            insert_record(db, record)
        moved.append(path)
    if moved or skipped:
        logger.warning(
            "cache %s: %d run records moved from %s into %s (%d files of another schema skipped)",
            root,
            len(moved),
            folder,
            root / ".rf" / "state.sqlite3",
            skipped,
        )
    return moved


def _run_records(table: pa.Table) -> list[dict[str, Any]] | None:
    """The run records of a 0.7 run file, or None if it is not one: the record's key columns
    must be there, and every column of the record it has must be of the record's type (a column
    added in a later version, missing from an older file, is null)."""
    names = set(table.schema.names)
    if not set(_REQUIRED) <= names:
        return None
    if any(table.schema.field(f.name).type != f.type for f in SCHEMA if f.name in names):
        return None
    records = table.select([n for n in SCHEMA.names if n in names]).to_pylist()
    return [{name: record.get(name) for name in SCHEMA.names} for record in records]


# -- checkpoint journals -----------------------------------------------------------------------


def _records(file: BinaryIO) -> Iterator[tuple[bytes, str, bytes]]:
    """The whole records of a journal, one at a time; a torn or corrupt one ends them."""
    while True:
        parts = file.readline().rstrip(b"\n").split(b" ")
        if len(parts) != 5 or parts[0] != _MAGIC:
            return
        try:
            length, crc = int(parts[3]), int(parts[4])
        except ValueError:
            return
        body = file.read(length)
        if len(body) != length or zlib.crc32(body) != crc or file.read(1) != b"\n":
            return
        yield parts[1], parts[2].decode(), body


def _import_journals(db: sqlite3.Connection, root: Path) -> list[Path]:
    folder = root / _JOURNALS
    moved = []
    for path in sorted(folder.glob("*.journal")) if folder.is_dir() else ():
        resource, _, key = path.name.removesuffix(".journal").partition(".")
        try:
            moved += _import_journal(db, path, resource, key)
        except (OSError, ValueError) as exc:
            logger.info("checkpoint %s discarded: it cannot be read (%s)", path.name, exc)
            moved.append(path)
    return moved


def _import_journal(db: sqlite3.Connection, path: Path, resource: str, key: str) -> list[Path]:
    head: dict[str, Any] | None = None
    notes: dict[str, Any] = {}
    with path.open("rb") as file:
        for kind, name, body in _records(file):
            if kind == b"head":
                head = json.loads(body)
                db.execute(
                    "INSERT OR REPLACE INTO checkpoints VALUES (?, ?, ?, ?, ?, ?, '{}')",
                    (
                        resource,
                        key,
                        head["scope"],
                        json.dumps(head.get("params") or {}, sort_keys=True),
                        head["started"],
                        path.stat().st_mtime,
                    ),
                )
            elif head is None:
                break
            elif kind == b"note":
                notes[name] = json.loads(body)
            elif kind == b"page":
                db.execute(
                    "INSERT OR REPLACE INTO checkpoint_answers VALUES (?, ?, ?, ?)",
                    (resource, key, name, body),
                )
    if head is not None:
        db.execute(
            "UPDATE checkpoints SET notes = ? WHERE resource = ? AND key = ?",
            (json.dumps(notes, sort_keys=True), resource, key),
        )
    return [path]


# -- watches -----------------------------------------------------------------------------------


def _import_watches(db: sqlite3.Connection, root: Path) -> list[Path]:
    path = root / _WATCHES
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        logger.warning("watches: %s cannot be read (%s); left as it is", path, exc)
        return []
    now = datetime.now(UTC).isoformat()
    for name, definition in (data.get("watches") or {}).items():
        snapshot = path.parent / f"{name}.parquet"
        db.execute(
            "INSERT OR REPLACE INTO watches VALUES (?, ?, ?, ?)",
            (
                name,
                json.dumps(definition, sort_keys=True),
                snapshot.name if snapshot.exists() else None,
                now,
            ),
        )
    return [path]
