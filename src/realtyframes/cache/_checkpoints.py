"""Checkpoints of long loads: the answers a load has fetched so far, kept in the cache's staging
area so that the next identical call, after an interruption (Ctrl-C, SIGKILL, a lost network,
retries spent), resumes where it stopped instead of starting over.

::

    <root>/.rf/staging/checkpoints/<resource>.<key>.journal

A checkpoint is a journal appended to as answers arrive, one ``os.write`` per record (the bytes
are the kernel's at once: a process killed with SIGKILL loses at most what it was writing)::

    RFCK1 <kind> <name> <length> <crc32>\\n<body>\\n

``kind`` is ``head`` (the first record: JSON with the scope's digest, the redacted parameters and
when the load started), ``page`` (a raw answer body) or ``note`` (JSON, e.g. a learned chunk size).
``name`` is the SHA-256 of what the caller named the answer (a request's path and query): no query
string, hence no credential, is ever written. A torn last record (the writer died in the middle)
ends the reading. Files are ``0600`` (answers may hold contacts) in ``0700`` folders.

Nothing under ``.rf`` is part of a dataset: readers never see a checkpoint, and what they see
stays "complete or nothing". A checkpoint is discarded (a log line at INFO) when the scope it was
made for differs from the call's, when it has not been written to for longer than its maximum age
(:data:`CHECKPOINT_MAX_AGE`), on ``refresh=True``, by ``ParquetCache.clear`` and, once its load
is stored, by the loader.

>>> cp = Checkpoint.open(Path("/tmp/c/x.journal"), {"host": "h"})  # doctest: +SKIP
>>> cp.put("/v1/listings?Offset=0", body); cp.get("/v1/listings?Offset=0") == body  # doctest: +SKIP
True
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
import zlib
from collections.abc import Collection, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, BinaryIO

from realtyframes._files import PRIVATE_MODE
from realtyframes.cache._entries import _private_dirs, _redact, normalise_params

__all__ = [
    "CHECKPOINT_MAX_AGE",
    "Checkpoint",
    "checkpoint_files",
    "remove_checkpoints",
    "remove_old_checkpoints",
]

logger = logging.getLogger("realtyframes.cache")

#: A checkpoint not written to for longer than this is discarded (its answers are too old to
#: be mixed with fresh ones).
CHECKPOINT_MAX_AGE = timedelta(hours=24)
#: The folder of the checkpoints, under the cache root.
FOLDER = Path(".rf") / "staging" / "checkpoints"
_MAGIC = b"RFCK1"
_SUFFIX = ".journal"
_KINDS = (b"head", b"page", b"note")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def scope_digest(scope: Mapping[str, Any]) -> str:
    """A stable digest of a load's scope (host, operation, parameters, account, options).

    >>> scope_digest({"a": 1, "b": [2]}) == scope_digest({"b": [2], "a": 1})
    True
    """
    return _digest(json.dumps(scope, sort_keys=True, default=str))


def checkpoint_files(root: Path, resource: str | None = None) -> list[Path]:
    """The checkpoint journals under the cache ``root`` (of ``resource`` only, when given)."""
    folder = root / FOLDER
    pattern = f"{resource}.*{_SUFFIX}" if resource else f"*{_SUFFIX}"
    return sorted(folder.glob(pattern)) if folder.is_dir() else []


def remove_checkpoints(
    root: Path, resource: str | None = None, keys: Collection[str] | None = None
) -> int:
    """Remove the checkpoints under ``root`` (of ``resource``; of ``keys`` only, when given)."""
    removed = 0
    for path in checkpoint_files(root, resource):
        key = path.name.removesuffix(_SUFFIX).split(".", 1)[-1]
        if keys is None or key in keys:
            path.unlink(missing_ok=True)
            removed += 1
    return removed


def remove_old_checkpoints(root: Path, max_age: timedelta) -> int:
    """Remove the checkpoints under ``root`` not written to for ``max_age`` (loads never
    repeated), with a log line each; returns how many."""
    removed = 0
    for path in checkpoint_files(root):
        try:
            age = time.time() - path.stat().st_mtime
        except OSError:
            continue
        if age > max_age.total_seconds():
            path.unlink(missing_ok=True)
            removed += 1
            logger.info(
                "checkpoint %s discarded: it was last written %s ago, more than %s",
                path.name.removesuffix(_SUFFIX),
                timedelta(seconds=int(age)),
                max_age,
            )
    return removed


class Checkpoint:
    """The answers of one unfinished load (see the module). Thread-safe; the file is created by
    the first :meth:`put`, so a load that fetches nothing leaves nothing.

    ``resumed_from``: when the load whose answers this holds started (None: a fresh
    checkpoint); ``reused``: answers served by :meth:`get` so far.
    """

    def __init__(self, path: Path, scope: Mapping[str, Any]) -> None:
        self.path = path
        self.digest = scope_digest(scope)
        self._params = _redact(normalise_params(scope.get("params") or {}))
        self._index: dict[str, tuple[int, int]] = {}
        self._notes: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._reader: BinaryIO | None = None
        self._broken = False  # a write failed: the load goes on without saving
        self.started = datetime.now(UTC)
        self.resumed_from: datetime | None = None
        self.reused = 0

    # -- opening --------------------------------------------------------------------------------

    @classmethod
    def open(
        cls, path: Path, scope: Mapping[str, Any], *, max_age: timedelta = CHECKPOINT_MAX_AGE
    ) -> Checkpoint:
        """The checkpoint at ``path`` for ``scope``: what an earlier identical load saved, or a
        fresh one (an existing journal of another scope, too old or unreadable is discarded)."""
        checkpoint = cls(path, scope)
        try:
            stat = path.stat()
        except FileNotFoundError:
            return checkpoint
        age = time.time() - stat.st_mtime
        head = checkpoint._load()
        if head is None:
            checkpoint.discard("it cannot be read")
        elif head.get("scope") != checkpoint.digest:
            checkpoint.discard("it was made for another scope (parameters, options or version)")
        elif age > max_age.total_seconds():
            checkpoint.discard(
                f"it was last written {timedelta(seconds=int(age))} ago, more than {max_age}"
            )
        elif checkpoint._index:
            checkpoint.started = datetime.fromisoformat(head["started"])
            checkpoint.resumed_from = checkpoint.started
            logger.info(
                "resuming %s from its checkpoint: %d answers saved since %s",
                path.name.removesuffix(_SUFFIX),
                len(checkpoint._index),
                head["started"],
            )
        return checkpoint

    def _load(self) -> dict[str, Any] | None:
        """Read the journal's index (name -> where the body is) and notes; the head, or None."""
        try:
            data = self.path.read_bytes()
        except OSError:
            return None
        head: dict[str, Any] | None = None
        at = 0
        while at < len(data):
            end = data.find(b"\n", at)
            parts = data[at:end].split(b" ") if end >= 0 else []
            if len(parts) != 5 or parts[0] != _MAGIC or parts[1] not in _KINDS:
                break
            try:
                length, crc = int(parts[3]), int(parts[4])
            except ValueError:
                break
            body = data[end + 1 : end + 1 + length]
            if len(body) != length or zlib.crc32(body) != crc:
                break  # a torn record: the writer died while writing it
            kind, name = parts[1], parts[2].decode()
            try:
                if kind == b"head":
                    head = json.loads(body)
                elif kind == b"note":
                    self._notes[name] = json.loads(body)
                else:
                    self._index[name] = (end + 1, length)
            except ValueError:
                break
            at = end + 2 + length
        if head is not None and at < len(data):  # a torn tail: later records go after the
            try:  # last whole one, or they could never be read
                os.truncate(self.path, at)
            except OSError:
                return None  # discarded: starts over
        if head is None or not isinstance(head, dict):
            self._index.clear()
            self._notes.clear()
            return None
        return head

    # -- reading and writing --------------------------------------------------------------------

    def get(self, name: str) -> bytes | None:
        """The saved answer named ``name`` (counted in :attr:`reused`), or None."""
        where = self._index.get(_digest(name))
        if where is None or where[0] < 0:
            return None
        with self._lock:
            try:
                if self._reader is None:
                    self._reader = open(self.path, "rb")  # noqa: SIM115 - closed by close()
                self._reader.seek(where[0])
                body = self._reader.read(where[1])
            except OSError:
                return None
            if len(body) != where[1]:
                return None
            self.reused += 1
        return body

    def has(self, name: str) -> bool:
        """Whether an answer named ``name`` is saved."""
        return _digest(name) in self._index

    def put(self, name: str, body: bytes) -> None:
        """Save the answer named ``name`` (a failure to write only logs: the load goes on)."""
        self._append(b"page", _digest(name), body)

    def note(self, name: str, value: Any) -> None:
        """Save a small JSON fact of the load (e.g. what it learned of the server)."""
        self._notes[name] = value
        self._append(b"note", name, json.dumps(value).encode())

    def noted(self, name: str) -> Any:
        """A fact saved by :meth:`note` (in this run or the interrupted one), or None."""
        return self._notes.get(name)

    def _append(self, kind: bytes, name: str, body: bytes) -> None:
        record = _record(kind, name, body)
        with self._lock:
            if self._broken:
                return
            try:
                if self._fd is None:
                    self._fd = self._create()
                os.write(self._fd, record)
            except OSError as exc:
                self._broken = True
                logger.warning(
                    "could not write the checkpoint %s (%s); this load will not be resumable",
                    self.path,
                    exc,
                )
                return
            if kind == b"page":
                self._index[name] = (-1, len(body))  # known; readable after a reopen

    def _create(self) -> int:
        _private_dirs(self.path.parent)
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_BINARY", 0)
        fd = os.open(self.path, flags, PRIVATE_MODE)
        if hasattr(os, "fchmod"):
            os.fchmod(fd, PRIVATE_MODE)  # exactly 0600, whatever the umask
        if os.fstat(fd).st_size == 0:
            head = {
                "scope": self.digest,
                "params": self._params,
                "started": self.started.isoformat(),
            }
            os.write(fd, _record(b"head", "head", json.dumps(head, sort_keys=True).encode()))
        return fd

    # -- ending ---------------------------------------------------------------------------------

    def __enter__(self) -> Checkpoint:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the file (the journal stays: the next identical load resumes from it)."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
            if self._reader is not None:
                self._reader.close()
            self._fd, self._reader = None, None

    def done(self) -> None:
        """The load is stored: remove the journal."""
        self.close()
        try:
            self.path.unlink(missing_ok=True)
        except OSError as exc:  # e.g. open in another process on Windows: the age limit ends it
            logger.warning("could not remove the checkpoint %s: %s", self.path, exc)
        self._index.clear()

    def discard(self, reason: str) -> None:
        """Remove the journal, with a log line saying why."""
        existed = self.path.exists()
        self.done()
        self._notes.clear()
        self.resumed_from = None
        self.started, self.reused = datetime.now(UTC), 0  # a load that starts over
        if existed:
            logger.info("checkpoint %s discarded: %s", self.path.name.removesuffix(_SUFFIX), reason)


def _record(kind: bytes, name: str, body: bytes) -> bytes:
    header = b" ".join(
        (_MAGIC, kind, name.encode(), str(len(body)).encode(), str(zlib.crc32(body)).encode())
    )
    return header + b"\n" + body + b"\n"
