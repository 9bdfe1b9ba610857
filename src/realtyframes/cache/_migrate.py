"""Moving an older cache into the state database: every migration that reads an old format.

Version 1 (:mod:`._state` runs each once, inside its transaction) imports a cache written by
realtyframes 0.7 and earlier:

* ``runs/run.*.parquet`` (one run record per file) become rows of ``runs``. A file of another
  schema (not a run record: a column of the record is missing or of another type) is skipped
  with a log line and left where it is; its rows never become blank records.
* ``.rf/staging/checkpoints/<resource>.<key>.journal`` (records
  ``RFCK1 <kind> <name> <length> <crc32>\\n<body>\\n``) become a checkpoint and its answers,
  read one record at a time; a torn or corrupt record ends the reading, as it did.
* ``.watches/watches.json`` becomes rows of ``watches`` (the snapshots stay Parquet files).

Version 2 (:func:`to_v2`) registers the entries of a cache written by realtyframes 0.8: each
``part-0.parquet`` with its companions of the same generation (in place, or kept in
``.rf/previous`` by a write that died) becomes a generation, hard-linked into ``.rf/generations``,
its sync state moved from the file's footer into ``sync_state``.

The files moved are removed once the transaction is committed (:func:`remove_moved`), so a
migration that fails leaves the old cache as it was.

>>> with connect(root) as db:  # doctest: +SKIP
...     ...  # an old cache is migrated by its first open
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import shutil
import sqlite3
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq

from realtyframes.cache._catalog import Current, commit
from realtyframes.cache._entries import FILE_MODE, _private_dirs
from realtyframes.cache._layout import GENERATION, MAIN, Layout, entry_meta, part_path
from realtyframes.cache._runs_table import SCHEMA, insert_record

__all__ = ["forget_moved", "import_legacy", "moved_files", "remove_moved", "to_v2"]

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


# -- version 2: the entries of a 0.8 cache ----------------------------------------------------------

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


def to_v2(db: sqlite3.Connection, root: Path) -> list[Path]:
    """Create the tables and register the entries of an older cache at ``root``; returns the
    files to remove once committed (companions kept in ``.rf/previous``)."""
    for statement in SCHEMA_V2.split(";"):
        if statement.strip():
            db.execute(statement)
    layout = Layout(root)
    registered = skipped = 0
    for resource in layout.resources():
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
