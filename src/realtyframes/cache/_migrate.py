"""Moving an older cache into the state database (docs/cache.md, "The state database"): a 0.7
cache's run records, checkpoint journals and watches file (version 1, :func:`import_legacy`), a
0.8 cache's entries registered as generations (version 2, :func:`register_entries`). Each returns
the old files it moved in; :mod:`._state` removes them once committed, so a failed migration
leaves the old cache as it was. A run file of another schema is skipped, never blank rows.
"""

from __future__ import annotations

import json
import logging
import secrets
import sqlite3
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq

from realtyframes.cache._catalog import Current, commit
from realtyframes.cache._entries import _private_dirs
from realtyframes.cache._layout import (
    GENERATION,
    MAIN,
    PART_FILE,
    Layout,
    entry_meta,
    link,
    part_path,
)
from realtyframes.cache._runs_table import SCHEMA, insert_record

__all__ = ["has_legacy_files", "import_legacy", "register_entries"]

logger = logging.getLogger("realtyframes.cache")

_RUNS = "runs"
_JOURNALS = Path(".rf") / "staging" / "checkpoints"
_WATCHES = Path(".watches") / "watches.json"
_MAGIC = b"RFCK1"  # a record: RFCK1 <kind> <name> <length> <crc32>\n<body>\n
#: What a checkpoint journal's head must say.
_HEAD = ("scope", "started")
#: The columns without which a Parquet file in ``runs/`` is not a run record.
_REQUIRED = ("run_id", "started", "finished", "kind", "resource", "scope", "scope_key", "outcome")


def has_legacy_files(root: Path) -> bool:
    """Whether ``root`` holds files of an older cache that the migration moves in."""
    journals = root / _JOURNALS
    return (
        (root / _RUNS).is_dir()
        or any(root.glob(f"*/account=*/scope=key-*/{PART_FILE}"))
        or (root / _WATCHES).is_file()
        or (journals.is_dir() and any(journals.glob("*.journal")))
    )


def import_legacy(db: sqlite3.Connection, root: Path) -> list[Path]:
    """Move the run records, checkpoints and watches of an older cache at ``root`` into ``db``."""
    return _import_runs(db, root) + _import_journals(db, root) + _import_watches(db, root)


# -- run records -------------------------------------------------------------------------------


def _import_runs(db: sqlite3.Connection, root: Path) -> list[Path]:
    folder = root / _RUNS
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
    moved = sorted(folder.glob("*.journal")) if folder.is_dir() else []
    for path in moved:
        resource, _, key = path.name.removesuffix(".journal").partition(".")
        try:
            _import_journal(db, path, resource, key)
        except (OSError, ValueError) as exc:  # its answers, if some were moved in, go too
            db.execute(
                "DELETE FROM checkpoint_answers WHERE resource = ? AND key = ?", (resource, key)
            )
            logger.info("checkpoint %s discarded: it cannot be read (%s)", path.name, exc)
    return moved


def _import_journal(db: sqlite3.Connection, path: Path, resource: str, key: str) -> None:
    head: dict[str, Any] | None = None
    notes: dict[str, Any] = {}
    with path.open("rb") as file:
        for kind, name, body in _records(file):
            if kind == b"head":
                head = _head(body)
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
        params, notes_json = json.dumps(head.get("params") or {}, sort_keys=True), json.dumps(notes)
        row = (resource, key, head["scope"], params, head["started"], path.stat().st_mtime)
        db.execute(
            "INSERT OR REPLACE INTO checkpoints VALUES (?, ?, ?, ?, ?, ?, ?)", (*row, notes_json)
        )


def _head(body: bytes) -> dict[str, Any]:
    """A journal's head; one without the scope it was made for, or its start, cannot resume."""
    head = json.loads(body)
    if not isinstance(head, dict) or not all(isinstance(head.get(n), str) for n in _HEAD):
        raise ValueError(f"its head has no {' or '.join(_HEAD)}")
    datetime.fromisoformat(head["started"])  # ValueError if it is not a time
    return head


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
        kept = snapshot.name if snapshot.exists() else None
        row = (name, json.dumps(definition, sort_keys=True), kept, now)
        db.execute("INSERT OR REPLACE INTO watches VALUES (?, ?, ?, ?)", row)
    return [path]


# -- version 2: the entries of a 0.8 cache ----------------------------------------------------------


def register_entries(db: sqlite3.Connection, root: Path) -> list[Path]:
    """Register the entries of an older cache at ``root`` as generations; returns the files to
    remove once committed (companions kept in ``.rf/previous``)."""
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
        link(source, part_path(target, part))
    account = main.parent.parent.name.removeprefix("account=")
    commit(db, resource, key, Current(generation, account, meta), 0.0)
    return True
