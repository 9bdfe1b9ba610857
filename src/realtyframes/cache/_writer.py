"""The writer thread of a checkpoint: it commits the answers a load hands over, all those
waiting in one transaction on its own connection, so the load never waits for SQLite; a second
thread gives a removed checkpoint's pages back (:meth:`Writer.shrink`).

>>> writer = Writer(root, notes=lambda: {}, commit=commit, fail=fail)  # doctest: +SKIP
>>> writer.put(digest, body); writer.flush()  # doctest: +SKIP
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

from realtyframes.cache._state import open_db, transaction

__all__ = ["WRITE_BATCH", "Writer", "delete_orphans"]

logger = logging.getLogger("realtyframes.cache")

#: Answers handed to :meth:`Checkpoint.put` that may not be committed yet: what a SIGKILL can
#: lose besides the requests in flight (``put`` waits while this many are uncommitted).
WRITE_BATCH = 16

#: Seconds the writer thread waits for more answers before it ends (the next ``put`` starts
#: another): a checkpoint nobody closes never keeps the process from exiting, and the process
#: waits for what it holds at exit.
_IDLE = 0.5

#: Pages given back to the file system per step of the vacuum after a checkpoint is removed
#: (each step is one short write transaction: other writers wait at most one step).
_SHRINK_STEP = 512


#: ``commit(db, answers, notes)``: write the checkpoint's header with ``notes`` (JSON) and
#: ``answers`` (digest -> body) in one transaction on ``db``; False: it failed, stop saving.
Commit = Callable[[sqlite3.Connection, dict[str, bytes], str], bool]


class Writer:
    """The writer thread of one checkpoint under the cache ``root``: ``commit`` writes each
    batch with ``notes()``; ``fail(exc)``: the database cannot be opened (nothing is saved)."""

    def __init__(
        self,
        root: Path,
        notes: Callable[[], dict[str, Any]],
        commit: Commit,
        fail: Callable[[BaseException], None],
    ) -> None:
        self.root, self.notes, self.commit, self.fail = root, notes, commit, fail
        self.ready = threading.Condition()
        self.pending: dict[str, bytes] = {}  # digest -> body, handed over, not committed
        self.writing: dict[str, bytes] = {}  # the batch being committed
        self.dirty = False  # notes changed since the last commit
        self.stopping = False
        self.thread: threading.Thread | None = None
        self.shrinking: threading.Thread | None = None

    def waiting(self, digest: str) -> bytes | None:
        with self.ready:
            return self.pending.get(digest, self.writing.get(digest))

    def put(self, digest: str, body: bytes) -> None:
        with self.ready:
            while len(self.pending) + len(self.writing) >= WRITE_BATCH and self._alive():
                self.ready.wait()
            self.pending[digest] = body
            self._start()

    def note(self, name: str, value: Any) -> None:
        with self.ready:
            self.notes()[name] = value
            self.dirty = True
            self._start()

    def flush(self) -> None:
        with self.ready:
            while (self.pending or self.writing or self.dirty) and self._alive():
                self.ready.wait()

    def stop(self, *, drop: bool) -> None:
        """End the thread: after committing what waits, or (``drop``) dropping it."""
        with self.ready:
            if drop:
                self.pending.clear()
                self.dirty = False
            self.stopping = True
            self.ready.notify_all()
            thread, self.thread = self.thread, None
        if thread is not None:
            thread.join()
        with self.ready:
            self.stopping = False
        if self.shrinking is not None:
            self.shrinking.join()

    def _alive(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def _start(self) -> None:
        self.ready.notify_all()
        if not self._alive():
            self.thread = threading.Thread(target=self._run, name="realtyframes-checkpoint")
            self.thread.start()

    def _run(self) -> None:
        try:
            db = open_db(self.root)
        except (OSError, sqlite3.Error) as exc:
            self.fail(exc)
            with self.ready:
                self.pending.clear()
                self.dirty = False
                self.ready.notify_all()
            return
        try:
            while True:
                with self.ready:
                    while not (self.pending or self.dirty or self.stopping):
                        if not self.ready.wait(_IDLE) and not (self.pending or self.dirty):
                            break  # idle: the next put starts another thread
                    if not (self.pending or self.dirty):
                        if self.thread is threading.current_thread():
                            self.thread = None
                        return
                    self.writing, self.pending = self.pending, {}
                    self.dirty = False
                    notes = json.dumps(self.notes(), sort_keys=True)
                ok = self.commit(db, self.writing, notes)
                with self.ready:
                    self.writing = {}
                    if not ok:
                        self.pending.clear()
                    self.ready.notify_all()
        finally:
            db.close()

    def shrink(self, db: sqlite3.Connection, resource: str, key: str) -> None:
        """Delete the answers of the removed checkpoint of ``resource``'s ``key`` and give their
        pages back, in a thread, on ``db`` (which it closes), in steps of :data:`_SHRINK_STEP`
        pages. No secure delete: the vacuum moves pages into them or cuts them off the file."""
        if self.shrinking is not None:
            self.shrinking.join()  # an earlier removal of this checkpoint (rare: discarded)

        def run() -> None:
            try:
                with closing(db):
                    db.execute("PRAGMA secure_delete=OFF")
                    with transaction(db):
                        delete_orphans(db, resource, key)
                    free, before = _free_pages(db), None
                    while free and free != before:  # (a file without auto_vacuum frees none)
                        db.execute(f"PRAGMA incremental_vacuum({_SHRINK_STEP})").fetchall()
                        free, before = _free_pages(db), free
            except sqlite3.Error as exc:
                logger.debug("could not shrink the cache's state %s: %s", self.root, exc)

        self.shrinking = threading.Thread(target=run, name="realtyframes-checkpoint-shrink")
        self.shrinking.start()


def delete_orphans(db: sqlite3.Connection, resource: str, key: str) -> None:
    """Delete the answers of ``resource``'s ``key`` when it has no checkpoint (in a transaction)."""
    db.execute(
        "DELETE FROM checkpoint_answers WHERE resource = ? AND key = ? AND NOT EXISTS"
        " (SELECT 1 FROM checkpoints c WHERE c.resource = ? AND c.key = ?)",
        (resource, key, resource, key),
    )


def _free_pages(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA freelist_count").fetchone()[0])
