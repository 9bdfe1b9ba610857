"""Where the cache's files live: each resource is a hive-partitioned Parquet dataset, and each
entry's generations are immutable files under ``.rf/generations``.

::

    <root>/<folder>/account=<account>/scope=key-<key>/part-0.parquet   the entry's current file
    <root>/.rf/generations/<resource>/<key>/<generation>/<part>.parquet    its generations
    <root>/.rf/state.sqlite3                                           which generation is current
    <root>/.rf/locks/<folder>/<key>.lock                               job locks (a market's sync)
    <root>/.rf/staging/.<folder>.<key>.parquet.tmp-<pid>-<hex>         links being published
    <root>/.rf/corrupt/<folder>.<key>.<UTC stamp>.parquet              unreadable files moved aside

``<folder>`` is a resource (``listings``) or a companion (``listings.media``); ``<part>`` is
``main`` or the companion's name. A generation is written whole before the state database makes
it current; the dataset file is then a hard link to it (a copy where the file system has none),
renamed into its partition, so DuckDB, Polars, pyarrow or Spark reading ``<root>/<folder>`` see
every entry once, never half of one. Partition values are text that no reader takes for a
number: ``anon-…`` (no credentials) or ``acct-`` + the account fingerprint, and ``key-`` + the
cache key.

>>> partition("anon-1f2e3d4c5b6", "3f9c")
'account=anon-1f2e3d4c5b6/scope=key-3f9c'
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from pathlib import Path

from realtyframes._files import TEMP_MARKER
from realtyframes.cache._entries import _KEY, _NAME, _stamp

__all__ = [
    "INTERNAL",
    "PARTITION_COLUMNS",
    "PART_FILE",
    "Layout",
    "account_label",
    "partition",
    "remove_dead_writers_files",
]

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
    """Remove temporary files left by killed writers (in ``.rf/staging``); return how many."""
    removed = 0
    for stale in layout.internal.glob(f"staging/.*{TEMP_MARKER}*"):
        if not _writer_alive(stale.name):
            stale.unlink(missing_ok=True)
            removed += 1
    return removed
