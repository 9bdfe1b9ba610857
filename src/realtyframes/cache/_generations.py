"""Generations of an entry: immutable files, written whole before the state database makes them
current, and published into the dataset.

A write makes a new *generation* (16 hex digits): its main file and each companion
(``market`` and ``market.history``, ``listings`` and ``listings.media`` ...) are written, flushed
and never changed again in ``.rf/generations/<resource>/<key>/<generation>/<part>.parquet``
(:func:`write_parts`). One transaction of the state database then makes it the entry's current
generation (:mod:`._catalog`); a reader reads the current generation's name and the files of
that generation, so it never mixes two writes and never waits. Inside that transaction the
writer publishes the files into the dataset (:func:`publish`): each partition's ``part-0.parquet``
becomes a hard link to the generation's file by one rename, which outside engines see whole.
A replaced generation stays on disk for a grace period (``ParquetCache(grace=...)``), so a reader
that read its name just before it was replaced still opens its files; then it is removed.

>>> GENERATION.match("9f2c4e1a0b3d5e7f") is not None
True
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Mapping, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from realtyframes._files import fsync_dir, temp_path
from realtyframes.cache._entries import FILE_MODE, _private_dirs, _restore_categories
from realtyframes.cache._layout import Layout

__all__ = [
    "GENERATION",
    "MAIN",
    "META_KEY",
    "Unreadable",
    "entry_meta",
    "part_path",
    "publish",
    "read_generation",
    "remove_generation",
    "write_parts",
]

#: Parquet key-value metadata key holding the entry's JSON metadata.
META_KEY = b"realtyframes"
#: What a generation id looks like (the writer makes 16 hex digits).
GENERATION = re.compile(r"^[0-9a-f]{1,64}$")
#: The part name of an entry's main file (its companions' parts are their names).
MAIN = "main"
#: Errors of a file that is there but cannot be read as an entry (truncated, not Parquet ...).
_BROKEN = (OSError, ValueError, TypeError, KeyError, pa.ArrowException)


class Unreadable(Exception):
    """A file that cannot be read as an entry; ``part`` names it (``main`` or a companion)."""

    def __init__(self, cause: BaseException, part: str) -> None:
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.cause = cause
        self.part = part


def entry_meta(schema: pa.Schema) -> dict[str, Any]:
    """The ``realtyframes`` metadata of a file's schema; raises if missing or malformed."""
    raw = (schema.metadata or {}).get(META_KEY)
    if raw is None:
        raise KeyError("no realtyframes metadata")
    meta = json.loads(raw)
    if not isinstance(meta, dict) or "fetched_at" not in meta:
        raise ValueError("realtyframes metadata without fetched_at")
    return meta


def part_path(folder: Path, part: str) -> Path:
    return folder / f"{part}.parquet"


def read_generation(folder: Path, parts: Sequence[str]) -> dict[str, pd.DataFrame]:
    """The frames of a generation's files (``main`` and its companions), opened all at once
    before any is read (an open file stays readable when the generation is removed). Raises
    ``FileNotFoundError`` when one is gone (the generation was removed), :class:`Unreadable`
    when one is not a readable entry file (page checksums verified)."""
    opened: dict[str, pa.OSFile] = {}
    try:
        for part in parts:
            try:
                opened[part] = pa.OSFile(str(part_path(folder, part)))
            except FileNotFoundError:
                raise
            except OSError as exc:
                raise Unreadable(exc, part) from exc
        return {part: _read(source, part, folder.name) for part, source in opened.items()}
    finally:
        for source in opened.values():
            source.close()


def _read(source: pa.OSFile, part: str, generation: str) -> pd.DataFrame:
    try:
        parquet = pq.ParquetFile(source, page_checksum_verification=True)
        meta = entry_meta(parquet.schema_arrow)
        if meta.get("generation", generation) != generation:  # written over from outside
            raise ValueError(f"a file of generation {meta['generation']}, not {generation}")
        return _restore_categories(parquet.read().to_pandas(), meta)
    except _BROKEN as exc:
        raise Unreadable(exc, part) from exc


def write_parts(folder: Path, parts: Sequence[tuple[str, pd.DataFrame, Mapping[str, Any]]]) -> None:
    """Write each part (name, frame, its metadata) of a new generation into ``folder``, private
    (``0600``) and flushed to disk, then flush the folder. Nothing reads them before the state
    database names the generation; on a failure the folder is removed."""
    _private_dirs(folder)
    try:
        for part, frame, doc in parts:
            _write_file(part_path(folder, part), frame, doc)
        fsync_dir(folder)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def _write_file(path: Path, frame: pd.DataFrame, doc: Mapping[str, Any]) -> None:
    named = isinstance(frame.index, pd.MultiIndex) or frame.index.name is not None
    table = pa.Table.from_pandas(frame, preserve_index=named)  # str columns: no copy (Arrow)
    metadata = {**(table.schema.metadata or {}), META_KEY: json.dumps(doc).encode()}
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, FILE_MODE)
    try:
        if hasattr(os, "fchmod"):
            os.fchmod(fd, FILE_MODE)  # exactly 0600, whatever the umask
        with open(fd, "wb", closefd=False) as fh:
            pq.write_table(table.replace_schema_metadata(metadata), fh, write_page_checksum=True)
        os.fsync(fd)
    finally:
        os.close(fd)


def publish(
    layout: Layout, key: str, folder: Path, targets: Mapping[str, tuple[str, Path]]
) -> None:
    """Put each part of the generation in ``folder`` at its dataset target (``part -> (dataset
    folder, target)``): a hard link (a copy without hard links) made in ``.rf/staging`` and renamed
    onto the target, the main file last; then flush the partitions' folders."""
    for part, (dataset, target) in sorted(targets.items(), key=lambda kv: kv[0] == MAIN):
        _private_dirs(target.parent)
        tmp = temp_path(layout.staging(dataset, key))
        _private_dirs(tmp.parent)
        try:
            os.link(part_path(folder, part), tmp)
        except OSError:  # a file system without hard links: a copy
            shutil.copyfile(part_path(folder, part), tmp)
            os.chmod(tmp, FILE_MODE)
        try:
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    for partition in dict.fromkeys(target.parent for _dataset, target in targets.values()):
        fsync_dir(partition)


def remove_generation(layout: Layout, resource: str, key: str, generation: str) -> None:
    """Remove a generation's files (and its key's folder once empty)."""
    folder = layout.generation(resource, key, generation)
    shutil.rmtree(folder, ignore_errors=True)
    with suppress(OSError):  # other generations of the key, or already gone
        folder.parent.rmdir()
