"""Generations of an entry: how a reader gets a complete one while a writer replaces it.

A write makes a new *generation*: an id in the metadata of the main file and of each of its
companions (``market`` and ``market.history``, ``listings`` and ``listings.media`` ...). The
writer stages every file complete in ``.rf/staging``, then renames the companions into their
partitions and the main file last. A reader that opened the previous main file may so find
companions of the new generation in place; therefore, before renaming anything, the writer links
each companion of the generation in place to ``.rf/previous/<folder>.<key>.<generation>.parquet``
and removes those links only once the new main file is in place. A reader reads the main file,
then each companion of the main file's generation, in place or else in ``.rf/previous``; if
neither has it, a newer write completed meanwhile and the reader reads the entry again
(:class:`Torn`). Each file is read through one open file (its metadata and its rows from the
same file; an open file stays readable when it is renamed over or removed).

>>> GENERATION.match("9f2c4e1a0b3d5e7f") is not None
True
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from realtyframes._files import atomic_path, fsync_dir, temp_path
from realtyframes.cache._entries import FILE_MODE, _private_dirs, _restore_categories
from realtyframes.cache._layout import Layout
from realtyframes.cache._lock import is_locked

__all__ = [
    "ANY",
    "GENERATION",
    "META_KEY",
    "Part",
    "Torn",
    "Unreadable",
    "commit",
    "entry_meta",
    "identity",
    "keep_previous",
    "read_frame",
    "release_previous",
    "remove_kept_leftovers",
    "replace_files",
    "stage",
]

#: Parquet key-value metadata key holding the entry's JSON metadata.
META_KEY = b"realtyframes"
#: What a generation id looks like (the writer makes 16 hex digits).
GENERATION = re.compile(r"^[0-9a-f]{1,64}$")
#: ``read_frame(generation=ANY)``: whatever the file's generation.
ANY = object()
#: Errors of a file that is there but cannot be read as an entry (truncated, not Parquet ...).
_BROKEN = (OSError, ValueError, TypeError, KeyError, pa.ArrowException)


class Torn(Exception):
    """The entry's files changed while they were read (a write completed meanwhile, or a writer
    of another version is at work): read it again. ``token`` tells one torn state from another."""

    def __init__(self, token: object) -> None:
        super().__init__(repr(token))
        self.token = token


class Unreadable(Exception):
    """A file that cannot be read as an entry; ``identity`` names the file (device, inode)."""

    def __init__(self, cause: BaseException, ident: tuple[int, int] | None) -> None:
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.cause = cause
        self.identity = ident


def entry_meta(schema: pa.Schema) -> dict[str, Any]:
    """The ``realtyframes`` metadata of a file's schema; raises if missing or malformed."""
    raw = (schema.metadata or {}).get(META_KEY)
    if raw is None:
        raise KeyError("no realtyframes metadata")
    meta = json.loads(raw)
    if not isinstance(meta, dict) or "fetched_at" not in meta:
        raise ValueError("realtyframes metadata without fetched_at")
    return meta


def identity(path: Path) -> tuple[int, int] | None:
    """``(device, inode)`` of the file at ``path`` now, or None when there is none."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


def read_frame(
    path: Path, *, generation: object = ANY
) -> tuple[dict[str, Any], pd.DataFrame | None]:
    """The metadata and the frame of the file at ``path``, both from one open file.

    With ``generation`` given, a file of another generation gives ``(meta, None)`` (its rows are
    not read). Raises ``FileNotFoundError`` when there is no file, :class:`Unreadable` when it
    is not a readable entry.
    """
    try:
        source = pa.OSFile(str(path))
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise Unreadable(exc, identity(path)) from exc
    with source:
        st = os.fstat(source.fileno())
        try:
            parquet = pq.ParquetFile(source, page_checksum_verification=True)
            meta = entry_meta(parquet.schema_arrow)
            if generation is not ANY and meta.get("generation") != generation:
                return meta, None
            table = parquet.read()
        except _BROKEN as exc:
            raise Unreadable(exc, (st.st_dev, st.st_ino)) from exc
    try:
        return meta, _restore_categories(table.to_pandas(), meta)
    except _BROKEN as exc:
        raise Unreadable(exc, (st.st_dev, st.st_ino)) from exc


def footer(path: Path | None) -> dict[str, Any] | None:
    """The metadata of the file at ``path`` (its footer only), or None."""
    if path is None:
        return None
    try:
        return entry_meta(pq.read_schema(path))
    except _BROKEN:
        return None


# -- writing -----------------------------------------------------------------------------------------


def keep_previous(layout: Layout, resource: str, key: str, meta: Mapping[str, Any]) -> None:
    """Link the companions of the generation in place (``meta``: its main file's metadata) into
    ``.rf/previous``, so readers of that main file find them while a writer replaces them.
    The caller holds the entry's lock."""
    generation = meta.get("generation")
    if not isinstance(generation, str) or not GENERATION.match(generation):
        return
    kept_any = False
    for name in meta.get("extras") or {}:
        folder = f"{resource}.{name}"
        kept = layout.previous(folder, key, generation)
        current = layout.find(folder, key)
        if kept.exists() or current is None:
            continue  # kept by a write that did not complete; or nothing to keep
        found = footer(current)
        if found is None or found.get("generation") != generation:
            continue
        _private_dirs(kept.parent)
        try:
            os.link(current, kept)
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links: a copy
            staging = layout.staging(folder, key)
            with atomic_path(kept, mode=FILE_MODE, fsync=False, staging=staging) as tmp:
                shutil.copyfile(current, tmp)
        kept_any = True
    if kept_any:
        fsync_dir(layout.internal / "previous")


def release_previous(layout: Layout, resource: str, key: str) -> None:
    """Remove the kept companions of ``key`` (once the new main file is in place)."""
    for path in layout.previous_files(key, resource):
        try:
            path.unlink(missing_ok=True)
        except OSError:  # open by a reader where that forbids removing (Windows): the next write
            continue


def remove_kept_leftovers(layout: Layout, resource: str) -> None:
    """Remove the companions of ``resource`` kept by writes that died (those of keys whose lock
    a writer holds are in use)."""
    for kept in layout.internal.glob(f"previous/{resource}.*.parquet"):
        key = kept.name.removesuffix(".parquet").rsplit(".", 2)[-2]
        if not is_locked(layout.lock(resource, key)):
            kept.unlink(missing_ok=True)


def stage(
    layout: Layout, folder: str, key: str, frame: pd.DataFrame, doc: Mapping[str, Any]
) -> Path:
    """Write ``frame`` with its metadata ``doc`` to a new private file in ``.rf/staging``,
    flushed to disk; return its path (the caller renames it into place with :func:`commit`)."""
    named = isinstance(frame.index, pd.MultiIndex) or frame.index.name is not None
    table = pa.Table.from_pandas(frame, preserve_index=named)
    metadata = dict(table.schema.metadata or {})
    metadata[META_KEY] = json.dumps(doc, separators=(",", ":")).encode()
    table = table.replace_schema_metadata(metadata)
    tmp = temp_path(layout.staging(folder, key))
    _private_dirs(tmp.parent)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(tmp, flags, FILE_MODE)
    try:
        if hasattr(os, "fchmod"):
            os.fchmod(fd, FILE_MODE)  # exactly 0600, whatever the umask
        with open(fd, "wb", closefd=False) as fh:
            pq.write_table(table, fh, write_page_checksum=True)
        os.fsync(fd)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    finally:
        os.close(fd)
    return tmp


#: One file of a write: its target, its dataset folder, the frame and its metadata.
Part = tuple[Path, str, pd.DataFrame, Mapping[str, Any]]


def replace_files(
    layout: Layout, resource: str, key: str, parts: Sequence[Part]
) -> dict[str, Any] | None:
    """Replace the entry's files by ``parts`` (the main file last): keep the companions of the
    generation in place for its readers (:func:`keep_previous`), stage every part complete,
    then rename them into place. The caller holds the entry's lock and, once it has removed
    what the new generation no longer has, calls :func:`release_previous`. Returns the metadata
    of the main file replaced (None if there was none)."""
    old = footer(layout.find(resource, key))
    if old is not None:
        keep_previous(layout, resource, key, old)
    staged: list[tuple[Path, Path]] = []
    try:
        for target, folder, frame, doc in parts:
            _private_dirs(target.parent)
            staged.append((stage(layout, folder, key, frame, doc), target))
    except BaseException:
        for tmp, _target in staged:
            tmp.unlink(missing_ok=True)
        release_previous(layout, resource, key)  # nothing was replaced
        raise
    commit(staged)
    return old


def commit(staged: list[tuple[Path, Path]]) -> None:
    """Rename each staged file onto its target, in order (the main file last), then flush the
    folders. On a failure the files not yet renamed are removed."""
    done = 0
    try:
        for tmp, target in staged:
            os.replace(tmp, target)
            done += 1
    except BaseException:
        for tmp, _target in staged[done:]:
            tmp.unlink(missing_ok=True)
        raise
    for folder in dict.fromkeys(target.parent for _tmp, target in staged):
        fsync_dir(folder)
