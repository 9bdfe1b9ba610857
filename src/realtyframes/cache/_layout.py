"""Where the cache's files live: each resource is a hive-partitioned Parquet dataset.

::

    <root>/<folder>/account=<account>/scope=key-<key>/part-0.parquet   one entry (atomic)
    <root>/.rf/locks/<folder>/<key>.lock                               writer locks
    <root>/.rf/staging/.<folder>.<key>.parquet.tmp-<pid>-<hex>         files being written
    <root>/.rf/corrupt/<folder>.<key>.<UTC stamp>.parquet              unreadable files moved aside
    <root>/.rf/previous/<folder>.<key>.<generation>.parquet            companions being replaced

``<folder>`` is a resource (``listings``) or a companion (``listings.media``). A dataset folder
holds nothing but partitions of whole files: a file is written in ``.rf/staging`` and renamed into
its partition when complete, so DuckDB, Polars, pyarrow or Spark reading ``<root>/<folder>`` see
every entry once, never half of one. Partition values are text that no reader takes for a number:
``anon-…`` (no credentials) or ``acct-`` + the account fingerprint, and ``key-`` + the cache key.

:func:`migrate_flat_layout` moves the flat files of realtyframes 0.1 (``<folder>/<key>.parquet``)
into this layout, with one log line.

>>> partition("anon-1f2e3d4c5b6", "3f9c")
'account=anon-1f2e3d4c5b6/scope=key-3f9c'
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from realtyframes._files import TEMP_MARKER
from realtyframes.cache._entries import _KEY, _NAME, _private_dirs, _stamp
from realtyframes.cache._lock import file_lock

__all__ = [
    "INTERNAL",
    "PARTITION_COLUMNS",
    "PART_FILE",
    "Layout",
    "account_label",
    "migrate_flat_layout",
    "partition",
    "remove_dead_writers_files",
]

logger = logging.getLogger("realtyframes.cache")

#: The cache's own folder under the root (hidden: no dataset reader looks there).
INTERNAL = ".rf"
#: The one file of a partition.
PART_FILE = "part-0.parquet"
#: The hive partition columns a reader of a dataset folder gets, in path order.
PARTITION_COLUMNS = ("account", "scope")
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

    def previous(self, folder: str, key: str, generation: str) -> Path:
        """Where a companion of the generation being replaced stays readable during a write."""
        return self.internal / "previous" / f"{folder}.{key}.{generation}.parquet"

    def previous_files(self, key: str, resource: str | None = None) -> list[Path]:
        """The kept companions of ``key`` (of ``resource``'s companions only, when given)."""
        found = []
        for path in sorted(self.internal.glob(f"previous/*.{key}.*.parquet")):
            folder, name, _generation = path.name.removesuffix(".parquet").rsplit(".", 2)
            if name == key and (resource is None or folder.split(".")[0] == resource):
                found.append(path)
        return found

    def corrupt(self, folder: str, key: str) -> Path:
        return self.internal / "corrupt" / f"{folder}.{key}.{_stamp()}.parquet"

    def folders(self) -> list[str]:
        """Every dataset folder under the root (resources and companions)."""
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if p.is_dir() and _FOLDER.match(p.name))

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
        os.kill(pid, 0)
    except (IndexError, ValueError, ProcessLookupError):
        return False
    except (PermissionError, OSError):  # exists, owned by another user; or cannot tell
        return True
    return True


def remove_dead_writers_files(layout: Layout) -> int:
    """Remove temporary files left by killed writers (in ``.rf/staging``, and next to their
    target in the flat layout of 0.1); return how many."""
    removed = 0
    stale_files = [
        *layout.internal.glob(f"staging/.*{TEMP_MARKER}*"),
        *layout.root.glob(f"*/.*{TEMP_MARKER}*"),
    ]
    for stale in stale_files:
        if not _writer_alive(stale.name):
            stale.unlink(missing_ok=True)
            removed += 1
    return removed


# --- migration from the flat layout (realtyframes 0.1) ----------------------------------------------


def _flat_files(layout: Layout) -> list[Path]:
    files = []
    for folder in layout.folders():
        files += [p for p in (layout.root / folder).glob("*.parquet") if _KEY.match(p.stem)]
    return files


def _account_of(path: Path) -> str | None:
    """The account fingerprint in a flat file's metadata; raises if the file is unreadable."""
    raw = (pq.read_schema(path).metadata or {})[b"realtyframes"]
    meta = json.loads(raw)
    return meta.get("account") if isinstance(meta, dict) else None


def migrate_flat_layout(root: Path) -> int:
    """Move every entry of the flat layout under ``root`` into its partition (companions follow
    their entry's account); unreadable ones go to ``.rf/corrupt``, old lock files are removed.
    Logs one line (level WARNING, once) when anything moved. Returns the number of files moved.

    >>> migrate_flat_layout(Path("data/cache"))  # doctest: +SKIP
    12
    """
    layout = Layout(root)
    if not _flat_files(layout):
        return 0
    lock = layout.internal / "locks" / "migrate.lock"
    _private_dirs(lock.parent)
    with file_lock(lock, timeout=None):
        files = _flat_files(layout)  # another process may have moved them meanwhile
        main_first = sorted(files, key=lambda p: ("." in p.parent.name, str(p)))
        accounts: dict[str, str] = {}
        moved, aside = 0, []
        for path in main_first:
            folder, key = path.parent.name, path.stem
            try:
                label = accounts.get(key) or account_label(_account_of(path))
            except (OSError, KeyError, ValueError, pa.ArrowException):
                target = layout.corrupt(folder, key)
                aside.append(target)
            else:
                accounts.setdefault(key, label)
                target = layout.entry(folder, label, key)
                moved += 1
            _private_dirs(target.parent)
            try:
                os.replace(path, target)
            except FileNotFoundError:
                continue
        _clean_flat_leftovers(layout)
    if moved or aside:
        where = (
            f"; {len(aside)} unreadable moved aside to {layout.internal / 'corrupt'}"
            if aside
            else ""
        )
        logger.warning(
            "cache %s: %d files moved to the dataset layout "
            "<resource>/account=…/scope=key-…/part-0.parquet (realtyframes 0.1 kept them flat)%s",
            root,
            moved,
            where,
        )
    return moved


def _clean_flat_leftovers(layout: Layout) -> None:
    """Old lock files (never held now: every writer of this version locks in ``.rf/locks``)
    and files moved aside by 0.1 (kept, in ``.rf/corrupt``)."""
    for folder in layout.folders():
        for path in (layout.root / folder).glob(".*"):
            if path.is_file() and path.name.endswith(".lock"):
                path.unlink(missing_ok=True)
            elif path.is_file() and ".corrupt-" in path.name:
                target = layout.internal / "corrupt" / f"{folder}{path.name}"
                _private_dirs(target.parent)
                os.replace(path, target)
