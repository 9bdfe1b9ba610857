"""The cache's inventory: listing its entries, clearing them (never under a running sync).

:class:`~realtyframes.cache.ParquetCache`'s ``list``, ``clear`` and ``check_idle`` are these
functions; ``clear`` holds the job locks of what it removes (a market's sync:
``.rf/locks/<resource>.sync/<key>.lock``) so no sync starts meanwhile, and refuses, removing
nothing, a scope whose sync is running (:class:`~realtyframes.errors.ScopeBusyError` naming the
scope and its holder from the ``locks`` table).

>>> clear(Layout(Path("data/cache")), "analytics")  # doctest: +SKIP
1
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from realtyframes.cache._checkpoints import remove_checkpoints
from realtyframes.cache._entries import _NAME, _check_name, _private_dirs
from realtyframes.cache._generations import entry_meta, release_previous, remove_kept_leftovers
from realtyframes.cache._layout import Layout, remove_dead_writers_files
from realtyframes.cache._lock import CacheLockTimeout, file_lock, lock_error
from realtyframes.cache._scopes import holder
from realtyframes.errors import ScopeBusyError

__all__ = [
    "LIST_COLUMNS",
    "clear",
    "drop",
    "jobs",
    "list_entries",
    "lock_path",
    "no_job_running",
    "resources_of",
]

#: Columns of :meth:`ParquetCache.list`.
LIST_COLUMNS: tuple[str, ...] = ("resource", "key", "rows", "quarantined", "fetched_at")
LIST_COLUMNS += ("size", "host", "operation", "params", "path")


def resources_of(layout: Layout) -> list[str]:
    """The resources with a dataset folder under the cache root."""
    if not layout.root.is_dir():
        return []
    return sorted(p.name for p in layout.root.iterdir() if p.is_dir() and _NAME.match(p.name))


def lock_path(layout: Layout, resource: str, key: str) -> Path:
    """The write lock of ``resource``'s ``key``, its folder made (a typed error if it cannot be)."""
    lock = layout.lock(resource, key)
    try:
        _private_dirs(lock.parent)
    except OSError as exc:  # a file where a folder of the locks should be
        raise lock_error(lock, exc) from None
    return lock


def drop(layout: Layout, folder: str, key: str, keep: Path | None = None) -> None:
    """Remove ``key``'s files in ``folder`` (but ``keep``) and their emptied partitions."""
    for path in layout.files(folder, key):
        if path != keep:
            path.unlink(missing_ok=True)
            layout.remove_empty_partition(path)


def jobs(layout: Layout, resource: str | None) -> list[str]:
    """The resources whose job locks a clear of ``resource`` must find idle (every one with a
    job lock, for all: a first sync has no dataset yet)."""
    if resource is not None:
        return [_check_name(resource, "resource", _NAME)]
    return [p.name.removesuffix(".sync") for p in layout.internal.glob("locks/*.sync")]


def list_entries(layout: Layout) -> pd.DataFrame:
    """Every entry: resource, key, rows, quarantined, fetched_at, size (bytes, with
    companions), host, operation, params (JSON), path. Reads file footers only.

    >>> cache.list()[["resource", "rows", "fetched_at"]]  # doctest: +SKIP
    """
    rows = []
    for resource in resources_of(layout):
        for key, path in layout.entries(resource):
            try:
                meta = entry_meta(pq.read_schema(path))
                size = path.stat().st_size
            except (OSError, ValueError, KeyError, pa.ArrowException):
                continue  # unreadable: a read moves it aside
            for name in meta.get("extras") or {}:
                try:
                    companion = layout.find(f"{resource}.{name}", key)
                    size += companion.stat().st_size if companion is not None else 0
                except OSError:
                    continue  # not there (or replaced while listed)
            rows.append(
                {
                    "resource": resource,
                    "key": key,
                    "rows": meta.get("rows"),
                    "quarantined": meta.get("quarantined"),
                    "fetched_at": meta.get("fetched_at"),
                    "size": size,
                    "host": meta.get("host"),
                    "operation": meta.get("operation"),
                    "params": json.dumps(meta.get("params") or {}, sort_keys=True),
                    "path": str(path),
                }
            )
    frame = pd.DataFrame(
        rows,
        columns=list(LIST_COLUMNS),
    )
    return frame.astype(
        {
            "resource": "str",
            "key": "str",
            "rows": "Int64",
            "quarantined": "Int64",
            "size": "Int64",
            "host": "str",
            "operation": "str",
            "params": "str",
            "path": "str",
        }
    ).assign(
        fetched_at=pd.to_datetime(frame["fetched_at"], utc=True, format="ISO8601").dt.as_unit("us")
    )


def clear(
    layout: Layout,
    resource: str | None = None,
    *,
    keys: Collection[str] | None = None,
    lock_timeout: float | None = 300.0,
) -> int:
    """Remove every entry (of ``resource``; only those whose key is in ``keys`` when given):
    its companions, lock and moved-aside files too, and the checkpoints of its loads.

    Returns the number of entries removed. A scope being synced (its job lock held, e.g. by
    a ``sync_listings`` in another process) is not cleared under the sync:
    :class:`~realtyframes.errors.ScopeBusyError` naming it, and nothing removed.

    >>> cache.clear("analytics")  # doctest: +SKIP
    1
    """
    resources = [_check_name(resource, "resource", _NAME)] if resource else resources_of(layout)
    with no_job_running(layout, jobs(layout, resource), keys) as held:
        removed = 0
        for res in resources:
            removed += _clear_entries(layout, res, keys, lock_timeout)
            if keys is None:  # the whole resource: its leftovers too
                _clear_leftovers(layout, res)
        remove_checkpoints(layout.root, resource, keys)  # of every resource when none is given
        for lock in held:
            lock.unlink(missing_ok=True)  # its waiters take the lock file made next
    return removed


@contextmanager
def no_job_running(
    layout: Layout, resources: Collection[str], keys: Collection[str] | None
) -> Iterator[list[Path]]:
    """Hold the job locks of ``resources`` (of ``keys``) for the block, so that no sync
    starts meanwhile; one held by a job at work raises :class:`ScopeBusyError`."""
    with ExitStack() as stack:
        held: list[Path] = []
        for res in resources:
            for lock in sorted(layout.internal.glob(f"locks/{res}.sync/*.lock")):
                if keys is not None and lock.stem not in keys:
                    continue
                try:
                    stack.enter_context(file_lock(lock, timeout=0))
                except CacheLockTimeout:
                    who = holder(layout.root, res, lock.stem)
                    scope = f"{res} scope {who.scope} ({who})" if who else f"{res} {lock.stem}"
                    raise ScopeBusyError(
                        f"{scope} is being synced; nothing was removed "
                        "(run it again once that sync is done)"
                    ) from None
                held.append(lock)
        yield held


def _clear_entries(
    layout: Layout, res: str, keys: Collection[str] | None, lock_timeout: float | None
) -> int:
    companions = [f for f in layout.folders() if f.startswith(f"{res}.")]
    removed = 0
    for key, _path in list(layout.entries(res)):
        if keys is not None and key not in keys:
            continue
        lock = lock_path(layout, res, key)
        with file_lock(lock, timeout=lock_timeout):
            for folder in [*companions, res]:
                drop(layout, folder, key)
            release_previous(layout, res, key)
            lock.unlink(missing_ok=True)
        removed += 1
    return removed


def _clear_leftovers(layout: Layout, resource: str) -> None:
    """Moved-aside files, dead writers' temporary files, idle locks and companions kept by
    writes that died (``.rf/previous``) of ``resource``."""
    internal = layout.internal
    for name in (resource, f"{resource}.*"):
        for leftover in internal.glob(f"corrupt/{name}.*"):
            leftover.unlink(missing_ok=True)
    remove_dead_writers_files(layout)
    remove_kept_leftovers(layout, resource)
    for lock in internal.glob(f"locks/{resource}/*.lock"):  # keys with no data (interrupted)
        try:
            with file_lock(lock, timeout=0):
                lock.unlink(missing_ok=True)
        except CacheLockTimeout:
            continue  # a writer is at work on it
