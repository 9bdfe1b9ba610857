"""The cache's inventory: :class:`~realtyframes.cache.ParquetCache`'s ``list``, ``clear`` and
``check_idle``, over the state database's ``entries``. ``clear`` holds the job locks of what it
removes and refuses a scope being synced (docs/cache.md, "Inventory and cleaning").

>>> clear(Layout(Path("data/cache")), "analytics")  # doctest: +SKIP
1
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pandas as pd

from realtyframes.cache._catalog import all_entries, forget, retired
from realtyframes.cache._checkpoints import remove_checkpoints
from realtyframes.cache._entries import _NAME, _check_name
from realtyframes.cache._layout import Layout, remove_dead_writers_files, remove_generation
from realtyframes.cache._lock import file_lock, holder
from realtyframes.cache._state import connect, exists, transaction
from realtyframes.errors import CacheLockTimeout, ScopeBusyError

__all__ = ["clear", "list_entries", "no_job_running", "unpublish"]

#: Columns of :meth:`ParquetCache.list`.
LIST_COLUMNS: tuple[str, ...] = ("resource", "key", "rows", "quarantined", "fetched_at")
LIST_COLUMNS += ("size", "host", "operation", "params", "path")


def unpublish(
    layout: Layout, resource: str, key: str | None = None, keep: Collection[Path] = ()
) -> None:
    """Remove the dataset files of ``resource`` and its companions (``key``'s; every key's when
    None) but ``keep``, and their emptied partitions."""
    for folder in layout.folders():
        if folder == resource or folder.startswith(f"{resource}."):
            found = layout.files(folder, key) if key else [p for _k, p in layout.entries(folder)]
            for path in found:
                if path not in keep:
                    path.unlink(missing_ok=True)
                    layout.remove_empty_partition(path)


def list_entries(layout: Layout) -> pd.DataFrame:
    """:meth:`ParquetCache.list <realtyframes.cache.ParquetCache.list>`: the state database only."""
    entries, rows = [], []
    if exists(layout.root):
        with connect(layout.root) as db:
            entries = all_entries(db)
    for resource, key, found in entries:
        meta, folder = found.meta, layout.generation(resource, key, found.generation)
        known = [meta.get(name) for name in ("rows", "quarantined", "fetched_at")]
        size = sum(p.stat().st_size for p in folder.glob("*.parquet"))
        params = json.dumps(meta.get("params") or {}, sort_keys=True)
        path = str(layout.entry(resource, found.account, key))
        host, operation = meta.get("host"), meta.get("operation")
        rows.append([resource, key, *known, size, host, operation, params, path])
    frame = pd.DataFrame(rows, columns=list(LIST_COLUMNS))
    types = dict.fromkeys(("resource", "key", "host", "operation", "params", "path"), "str")
    frame = frame.astype({**types, "rows": "Int64", "quarantined": "Int64", "size": "Int64"})
    stamps = pd.to_datetime(frame["fetched_at"], utc=True, format="ISO8601")
    return frame.assign(fetched_at=stamps.dt.as_unit("us"))


def clear(
    layout: Layout, resource: str | None = None, *, keys: Collection[str] | None = None
) -> int:
    """:meth:`ParquetCache.clear <realtyframes.cache.ParquetCache.clear>`, under the job locks of
    what it removes (:func:`no_job_running`)."""
    with no_job_running(layout, resource, keys) as held:
        removed, gone = 0, []
        if exists(layout.root):
            with connect(layout.root) as db, transaction(db):
                for res, key, _current in all_entries(db, resource):
                    if keys is None or key in keys:
                        forget(db, res, key)
                        unpublish(layout, res, key)
                        removed += 1
                gone = retired(db, 1.0)  # those forgotten now (retired at 0)
        for res, key, generation in gone:
            remove_generation(layout, res, key, generation)
        if keys is None:  # the whole resource: its leftovers too
            for res in [resource] if resource else layout.resources():
                _clear_leftovers(layout, res)
        remove_checkpoints(layout.root, resource, keys)  # of every resource when none is given
        for lock in held:
            lock.unlink(missing_ok=True)  # its waiters take the lock file made next
    return removed


@contextmanager
def no_job_running(
    layout: Layout, resource: str | None, keys: Collection[str] | None
) -> Iterator[list[Path]]:
    """Hold the job locks of ``resource`` (of every resource with one when None: a first sync
    has no dataset yet; of ``keys`` only, when given) for the block, so that no sync starts
    meanwhile; one held by a job at work raises :class:`ScopeBusyError`."""
    if resource is not None:
        resources = [_check_name(resource, "resource", _NAME)]
    else:
        resources = [p.name.removesuffix(".sync") for p in layout.internal.glob("locks/*.sync")]
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


def _clear_leftovers(layout: Layout, resource: str) -> None:
    """Moved-aside files, dead writers' temporary files and dataset files no entry names (a
    write that died between its publishing and its commit) of ``resource``."""
    for name in (resource, f"{resource}.*"):
        for leftover in layout.internal.glob(f"corrupt/{name}.*"):
            leftover.unlink(missing_ok=True)
    remove_dead_writers_files(layout)
    unpublish(layout, resource)
