"""Where the cache's files live (docs/cache.md, "Layout"), and the generations' files: each
resource is a hive-partitioned Parquet dataset whose ``part-0.parquet`` files are hard links to
the current generations' files, immutable under ``.rf/generations/<resource>/<key>/<generation>``.
A generation is written whole (:func:`write_parts`), made current by one state transaction, and
published by one rename per file (:func:`publish`), so readers never see half of one.

>>> partition("anon-1f2e3d4c5b6", "3f9c")
'account=anon-1f2e3d4c5b6/scope=key-3f9c'
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterator, Mapping, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from realtyframes._files import TEMP_MARKER, fsync_dir, temp_path
from realtyframes.cache._entries import (
    _KEY,
    _NAME,
    FILE_MODE,
    _private_dirs,
    _restore_categories,
    _stamp,
    pid_alive,
)

__all__ = [
    "GENERATION",
    "INTERNAL",
    "MAIN",
    "META_KEY",
    "PART_FILE",
    "Layout",
    "Unreadable",
    "account_label",
    "entry_meta",
    "link",
    "part_path",
    "partition",
    "publish",
    "read_generation",
    "remove_dead_writers_files",
    "remove_generation",
    "write_parts",
]

#: The cache's own folder under the root (hidden: no dataset reader looks there).
INTERNAL = ".rf"
#: The one file of a partition.
PART_FILE = "part-0.parquet"
#: Rows per Parquet row group of an entry file, and bytes per data page: the writer holds a row
#: group's pages while it encodes them. Pages of 32 KB (pyarrow's default 1 MB) from the system
#: allocator took a details load of 12,988 listings' write from 34 to 14 MB with files and reads
#: as before; row groups of 2,048 rows took it to 12 MB but made the files 17-42 % larger and
#: every read 1.8-2.5x slower (#33, docs/benchmarks.md).
ROW_GROUP_ROWS = 65_536
PAGE_BYTES = 32 * 1024
#: A column chunk's dictionary past this many bytes is given up for plain values (a column of
#: long free texts, remarks or URLs, gains nothing from one): the writer held it as it grew
#: (pyarrow's default 1 MB; the files are the same size).
DICTIONARY_BYTES = 64 * 1024
_SCOPE_PREFIX = "key-"
_NO_ACCOUNT = "unset"
_LABEL = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
#: A dataset folder: a resource, or a resource's companion (``listings.media``).
_WORD = _NAME.pattern.strip("^$")
_FOLDER = re.compile(rf"^{_WORD}(\.{_WORD})?$")


def account_label(fingerprint: object) -> str:
    """The ``account=`` value of an account fingerprint: ``anon-…`` as it is, any other
    ``acct-<fingerprint>`` (a bare hex fingerprint may look like a number to a reader).

    >>> account_label("anon-1f2e3d4c5b6"), account_label("0123456789abcdef"), account_label(None)
    ('anon-1f2e3d4c5b6', 'acct-0123456789abcdef', 'unset')
    """
    if fingerprint is None:
        return _NO_ACCOUNT
    text = str(fingerprint)
    if text.startswith("anon-") and _LABEL.match(text):
        return text
    if not _LABEL.match(text):  # not a fingerprint of ours: a stable, path-safe stand-in
        text = hashlib.sha256(text.encode()).hexdigest()[:16]
    return f"acct-{text}"


def partition(account: str, key: str) -> str:
    """The partition folders (relative) of an entry whose account label is ``account``."""
    return f"account={account}/scope={_SCOPE_PREFIX}{key}"


class Layout:
    """The paths of one cache root (nothing is created by asking).

    >>> Layout(Path("/c")).entry("listings", "anon-1", "k1").as_posix()
    '/c/listings/account=anon-1/scope=key-k1/part-0.parquet'
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.internal = root / INTERNAL

    def entry(self, folder: str, account: str, key: str) -> Path:
        return self.root / folder / partition(account, key) / PART_FILE

    def files(self, folder: str, key: str) -> list[Path]:
        """The existing files of ``key`` in ``folder`` (one, unless written for two accounts)."""
        return sorted(
            (self.root / folder).glob(f"account=*/scope={_SCOPE_PREFIX}{key}/{PART_FILE}")
        )

    def find(self, folder: str, key: str) -> Path | None:
        """The existing file of ``key`` in ``folder`` (whatever its account), or None."""
        found = self.files(folder, key)
        return found[0] if found else None

    def entries(self, folder: str) -> Iterator[tuple[str, Path]]:
        """``(key, path)`` of every entry file in ``folder``."""
        for path in sorted((self.root / folder).glob(f"account=*/scope=*/{PART_FILE}")):
            scope = path.parent.name.removeprefix(f"scope={_SCOPE_PREFIX}")
            if scope != path.parent.name and _KEY.match(scope):
                yield scope, path

    def lock(self, folder: str, key: str) -> Path:
        return self.internal / "locks" / folder / f"{key}.lock"

    def staging(self, folder: str, key: str) -> Path:
        """The stand-in name a write's temporary file is made from (see ``atomic_path``)."""
        return self.internal / "staging" / f"{folder}.{key}.parquet"

    def generation(self, resource: str, key: str, generation: str) -> Path:
        """The folder of one generation of an entry (its main file and companions)."""
        return self.internal / "generations" / resource / key / generation

    def corrupt(self, folder: str, key: str) -> Path:
        return self.internal / "corrupt" / f"{folder}.{key}.{_stamp()}.parquet"

    def folders(self) -> list[str]:
        """Every dataset folder under the root (resources and companions)."""
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if p.is_dir() and _FOLDER.match(p.name))

    def resources(self) -> list[str]:
        """The resources with a dataset folder under the root (not their companions)."""
        return [folder for folder in self.folders() if "." not in folder]

    @staticmethod
    def remove_empty_partition(path: Path) -> None:
        """Remove the ``scope=`` folder of a removed file, and its ``account=`` folder if empty."""
        for folder in (path.parent, path.parent.parent):
            try:
                folder.rmdir()
            except OSError:
                return  # not empty (or already gone): stop


def _writer_alive(temp_name: str) -> bool:
    """Whether the process that named a temporary file ``.<name>.tmp-<pid>-<hex>`` still runs."""
    try:
        pid = int(temp_name.rsplit(TEMP_MARKER, 1)[1].split("-", 1)[0])
    except (IndexError, ValueError):
        return False
    return pid_alive(pid)


def remove_dead_writers_files(layout: Layout) -> int:
    """Remove temporary files left by killed writers (in ``.rf/staging``); return how many."""
    removed = 0
    for stale in layout.internal.glob(f"staging/.*{TEMP_MARKER}*"):
        if not _writer_alive(stale.name):
            stale.unlink(missing_ok=True)
            removed += 1
    return removed


# -- the generations' files -------------------------------------------------------------------------

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
    # str columns: no copy (Arrow); one thread: a pool's threads would each take a fresh arena
    table = pa.Table.from_pandas(frame, preserve_index=named, nthreads=1)
    metadata = {**(table.schema.metadata or {}), META_KEY: json.dumps(doc).encode()}
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, FILE_MODE)
    try:
        if hasattr(os, "fchmod"):
            os.fchmod(fd, FILE_MODE)  # exactly 0600, whatever the umask
        with open(fd, "wb", closefd=False) as fh:
            pq.write_table(
                table.replace_schema_metadata(metadata),
                fh,
                write_page_checksum=True,
                row_group_size=ROW_GROUP_ROWS,
                data_page_size=PAGE_BYTES,
                dictionary_pagesize_limit=DICTIONARY_BYTES,
                memory_pool=pa.system_memory_pool(),  # the default (mimalloc) keeps what it freed
            )
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
        link(part_path(folder, part), tmp)
        try:
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    for partition in dict.fromkeys(target.parent for _dataset, target in targets.values()):
        fsync_dir(partition)


def link(source: Path, target: Path) -> None:
    """Hard-link ``source`` at ``target`` (kept if there already; a private copy on a file
    system without hard links)."""
    try:
        os.link(source, target)
    except FileExistsError:
        pass
    except OSError:
        shutil.copyfile(source, target)
        os.chmod(target, FILE_MODE)


def remove_generation(layout: Layout, resource: str, key: str, generation: str) -> None:
    """Remove a generation's files (and its key's folder once empty)."""
    folder = layout.generation(resource, key, generation)
    shutil.rmtree(folder, ignore_errors=True)
    with suppress(OSError):  # other generations of the key, or already gone
        folder.parent.rmdir()
