"""Checkpoints of long loads: the answers a load has fetched so far, kept in the state database
(``checkpoints``, one row of ``checkpoint_answers`` per answer, named by the SHA-256 of the
request), so the next identical call resumes where an interrupted one stopped. How they are
written, read, removed and discarded: docs/cache.md, "Checkpoints of interrupted loads".

>>> cp = Checkpoint.open(root, "listings", key, {"host": "h"})  # doctest: +SKIP
>>> cp.put("/v1/listings?Offset=0", body); cp.get("/v1/listings?Offset=0") == body  # doctest: +SKIP
True
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from realtyframes.cache._entries import stored_params
from realtyframes.cache._state import connect, exists, open_db, select, shrink, transaction
from realtyframes.cache._writer import WRITE_BATCH, Writer, delete_orphans

__all__ = [
    "CHECKPOINT_MAX_AGE",
    "Checkpoint",
    "SavedCheckpoint",
    "remove_checkpoints",
    "remove_old_checkpoints",
    "saved_checkpoints",
]

logger = logging.getLogger("realtyframes.cache")

#: A checkpoint not written to for longer than this is discarded (too old to mix with fresh answers).
CHECKPOINT_MAX_AGE = timedelta(hours=24)
#: A checkpoint's header row and how many answers it has.
_HEAD = (
    "SELECT scope, started, updated, notes, (SELECT count(*) FROM checkpoint_answers a"
    " WHERE a.resource = c.resource AND a.key = c.key) FROM checkpoints c"
    " WHERE resource = ? AND key = ?"
)
_UPSERT = (
    "INSERT INTO checkpoints (resource, key, scope, params, started, updated, notes)"
    " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (resource, key)"
    " DO UPDATE SET updated = excluded.updated, notes = excluded.notes"
)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class SavedCheckpoint:
    """What :meth:`ParquetCache.checkpoints` lists: the checkpoint of an interrupted load of
    ``resource``'s entry ``key``, with its saved ``answers`` (and their ``size`` in bytes), when
    the load ``started`` and when it was last written (``updated``).

    >>> [(c.name, c.answers) for c in cache.checkpoints()]  # doctest: +SKIP
    [('market.3f9c0e...', 412)]
    """

    resource: str
    key: str
    answers: int
    size: int
    started: datetime
    updated: datetime

    @property
    def name(self) -> str:
        """``<resource>.<key>``, as log lines name it."""
        return f"{self.resource}.{self.key}"


def saved_checkpoints(root: Path, resource: str | None = None) -> list[SavedCheckpoint]:
    """The checkpoints under the cache ``root`` (of ``resource`` only, when given), by name.
    Asking creates nothing."""
    query = (
        "SELECT c.resource, c.key, count(a.name), coalesce(sum(length(a.body)), 0), c.started,"
        " c.updated FROM checkpoints c LEFT JOIN checkpoint_answers a"
        " ON a.resource = c.resource AND a.key = c.key"
        " WHERE ? IS NULL OR c.resource = ? GROUP BY c.resource, c.key"
        " ORDER BY c.resource, c.key"
    )
    return [
        SavedCheckpoint(
            res, key, n, size, datetime.fromisoformat(started), datetime.fromtimestamp(upd, UTC)
        )
        for res, key, n, size, started, upd in select(root, query, (resource, resource))
    ]


def remove_checkpoints(
    root: Path, resource: str | None = None, keys: Collection[str] | None = None
) -> int:
    """Remove the checkpoints under ``root`` (of ``resource``; of ``keys`` only, when given)."""
    found = [c for c in saved_checkpoints(root, resource) if keys is None or c.key in set(keys)]
    _delete_all(root, found)
    return len(found)


def _delete_all(root: Path, found: Collection[SavedCheckpoint]) -> None:
    """Delete ``found`` in one transaction, then give their space back."""
    if found:
        with connect(root) as db:
            with transaction(db):
                for table in ("checkpoint_answers", "checkpoints"):
                    db.executemany(
                        f"DELETE FROM {table} WHERE resource = ? AND key = ?",
                        [(saved.resource, saved.key) for saved in found],
                    )
            shrink(db)


def remove_old_checkpoints(root: Path, max_age: timedelta) -> int:
    """Remove the checkpoints under ``root`` not written to for ``max_age`` (loads never
    repeated), with a log line each, and the answers of removed ones a killed process left (the
    file's free pages given back); returns how many checkpoints."""
    now = datetime.now(UTC)
    old = [c for c in saved_checkpoints(root) if now - c.updated > max_age]
    _delete_all(root, old)
    if exists(root):  # answers of a removed checkpoint whose process was killed before its thread
        with connect(root) as db:
            left = set(db.execute("SELECT DISTINCT resource, key FROM checkpoint_answers"))
            left -= set(db.execute("SELECT resource, key FROM checkpoints"))
            if left:
                with transaction(db):
                    for resource, key in left:
                        delete_orphans(db, resource, key)
            if left or db.execute("PRAGMA freelist_count").fetchone()[0]:
                shrink(db)  # no deleted answer stays in the file's free pages
    for saved in old:
        age = (now - saved.updated).total_seconds()
        logger.info("checkpoint %s discarded: %s", saved.name, _too_old(age, max_age))
    return len(old)


def _too_old(age: float, max_age: timedelta) -> str:
    return f"it was last written {timedelta(seconds=int(age))} ago, more than {max_age}"


class Checkpoint:
    """The answers of one unfinished load (see the module). Thread-safe; the checkpoint is
    created by the first :meth:`put`, so a load that fetches nothing leaves nothing.

    ``resumed_from``: when the load whose answers this holds started (None: a fresh
    checkpoint); ``reused``: answers served by :meth:`get` so far. ``WRITE_BATCH``: the answers
    a SIGKILL may lose (:data:`WRITE_BATCH`).
    """

    WRITE_BATCH = WRITE_BATCH

    def __init__(self, root: Path, resource: str, key: str, scope: Mapping[str, Any]) -> None:
        self.root, self.resource, self.key = Path(root), resource, key
        self.digest = _digest(json.dumps(scope, sort_keys=True, default=str))  # of the scope
        self._params = json.dumps(stored_params(scope.get("params")), sort_keys=True)
        self._notes: dict[str, Any] = {}
        self._lock = threading.Lock()  # the reading connection
        self._db: sqlite3.Connection | None = None
        self._writer = Writer(self.root, lambda: self._notes, self._commit, self._fail)
        self._created = False
        self._broken = False  # a write failed: the load goes on without saving
        self.started = datetime.now(UTC)
        self.resumed_from: datetime | None = None
        self.reused = 0

    @property
    def name(self) -> str:
        """``<resource>.<key>``, as log lines name it."""
        return f"{self.resource}.{self.key}"

    # -- opening --------------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        root: Path,
        resource: str,
        key: str,
        scope: Mapping[str, Any],
        *,
        max_age: timedelta = CHECKPOINT_MAX_AGE,
    ) -> Checkpoint:
        """The checkpoint of ``resource``'s ``key`` for ``scope`` under the cache ``root``: what
        an earlier identical load saved, or a fresh one (one of another scope, too old or
        unreadable is discarded)."""
        checkpoint = cls(root, resource, key, scope)
        if not exists(root):
            return checkpoint
        try:
            found = checkpoint._conn().execute(_HEAD, (resource, key)).fetchone()
        except sqlite3.Error as exc:
            logger.warning("checkpoint %s cannot be read (%s)", checkpoint.name, exc)
            checkpoint._broken = True
            return checkpoint
        if found is None:
            return checkpoint
        digest, started, updated, notes, answers = found
        checkpoint._created = True
        age = time.time() - updated
        if digest != checkpoint.digest:
            checkpoint.discard("it was made for another scope (parameters, options or version)")
        elif age > max_age.total_seconds():
            checkpoint.discard(_too_old(age, max_age))
        else:
            checkpoint._notes = json.loads(notes)
            if answers:
                checkpoint.started = datetime.fromisoformat(started)
                checkpoint.resumed_from = checkpoint.started
                logger.info(
                    "resuming %s from its checkpoint: %d answers saved since %s",
                    checkpoint.name,
                    answers,
                    started,
                )
        return checkpoint

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            self._db = open_db(self.root)
        return self._db

    # -- reading and writing --------------------------------------------------------------------

    def _saved(self, name: str) -> bytes | None:
        """The answer named ``name``: handed to :meth:`put` and not committed yet, or saved."""
        digest = _digest(name)
        body = self._writer.waiting(digest)
        if body is not None or not self._created:
            return body
        query = "SELECT body FROM checkpoint_answers WHERE resource = ? AND key = ? AND name = ?"
        with self._lock:
            try:
                row = self._conn().execute(query, (self.resource, self.key, digest)).fetchone()
            except sqlite3.Error:
                return None
        return None if row is None else bytes(row[0])

    def get(self, name: str) -> bytes | None:
        """The saved answer named ``name`` (counted in :attr:`reused`), or None."""
        if self.resumed_from is None:
            return None  # nothing was saved before this run
        body = self._saved(name)
        if body is not None:
            with self._lock:
                self.reused += 1
        return body

    def has(self, name: str) -> bool:
        """Whether an answer named ``name`` is saved."""
        return self._saved(name) is not None

    def put(self, name: str, body: bytes) -> None:
        """Save the answer named ``name``: handed to the writer thread, committed with the others
        waiting (:data:`WRITE_BATCH` at most wait: beyond, ``put`` waits for the writer). A
        failure to write only logs: the load goes on."""
        if not self._broken:
            self._writer.put(_digest(name), body)

    def note(self, name: str, value: Any) -> None:
        """Save a small JSON fact of the load (free-form metadata: what it learned of the
        server, what it was made from), read back by :meth:`noted`; committed (with the answers
        handed over before it) when this returns."""
        json.dumps(value)  # a value that is not JSON fails here, in the caller
        self._writer.note(name, value)
        self.flush()

    def noted(self, name: str) -> Any:
        """A fact saved by :meth:`note` (in this run or the interrupted one), or None."""
        return self._notes.get(name)

    def flush(self) -> None:
        """Wait until every answer and note handed over so far is committed."""
        self._writer.flush()

    def _commit(self, db: sqlite3.Connection, answers: Mapping[str, bytes], notes: str) -> bool:
        """Write the header (``notes``: the notes as JSON) and ``answers`` in one transaction on
        the writer's connection ``db``; a failure logs and stops saving (False)."""
        if self._broken:
            return False
        try:
            with transaction(db):
                if not self._created:  # answers of a removed checkpoint not deleted yet
                    delete_orphans(db, self.resource, self.key)
                head = (self.resource, self.key, self.digest, self._params)
                db.execute(_UPSERT, (*head, self.started.isoformat(), time.time(), notes))
                db.executemany(
                    "INSERT OR REPLACE INTO checkpoint_answers VALUES (?, ?, ?, ?)",
                    [(self.resource, self.key, name, body) for name, body in answers.items()],
                )
            self._created = True
            return True
        except (OSError, sqlite3.Error) as exc:
            self._fail(exc)
            return False

    def _fail(self, exc: BaseException) -> None:
        self._broken = True
        logger.warning(
            "could not write the checkpoint %s (%s); this load will not be resumable",
            self.name,
            exc,
        )

    # -- ending ---------------------------------------------------------------------------------

    def __enter__(self) -> Checkpoint:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self, *, commit: bool = True) -> None:
        """Commit what was handed over and close (the checkpoint stays: the next identical
        load resumes); waits for the space of a removed checkpoint to be given back.
        ``commit=False``: answers not committed yet are dropped instead (a load that has all
        its answers and stores them next: a kill meanwhile loses those, as any kill does)."""
        self._writer.stop(drop=not commit)
        with self._lock:
            if self._db is not None:
                self._db.close()
            self._db = None

    def done(self) -> None:
        """The load is stored: remove the checkpoint (answers not committed yet are dropped); it
        is gone when this returns. Its answers are deleted, and their pages given back, by a
        thread (:meth:`close` waits for it; docs/cache.md)."""
        with self._lock:  # opened before the writer's connection closes, so that closing that
            db = self._open_quietly()  # one copies no log into the file: the thread does
        self._writer.stop(drop=True)
        with self._lock:
            db = self._open_quietly() if db is None else db
            if self._created and db is not None:
                try:
                    head = "DELETE FROM checkpoints WHERE resource = ? AND key = ?"
                    with transaction(db):
                        db.execute(head, (self.resource, self.key))
                    self._db = None  # handed to the thread, which closes it
                    self._writer.shrink(db, self.resource, self.key)
                except sqlite3.Error as exc:  # the age limit ends it
                    logger.warning("could not remove the checkpoint %s: %s", self.name, exc)
            self._created = False
            if self._db is not None:
                self._db.close()
            self._db = None

    def _open_quietly(self) -> sqlite3.Connection | None:
        """The reading connection, when the checkpoint was created (None if it cannot open)."""
        if not self._created:
            return None
        try:
            return self._conn()
        except sqlite3.Error as exc:
            logger.warning("could not remove the checkpoint %s: %s", self.name, exc)
            return None

    def discard(self, reason: str) -> None:
        """Remove the checkpoint, with a log line saying why."""
        existed = self._created
        self.done()
        self._notes.clear()
        self.resumed_from = None
        self.started, self.reused = datetime.now(UTC), 0  # a load that starts over
        if existed:
            logger.info("checkpoint %s discarded: %s", self.name, reason)
