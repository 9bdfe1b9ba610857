"""The Parquet cache: one hive-partitioned dataset per resource, one file per key, each entry's
current generation named by the state database; every file carries its metadata (JSON, Parquet
key ``realtyframes``); an unreadable file is a miss, moved aside. No pickles (docs/cache.md).

>>> cache = ParquetCache("data/cache")  # doctest: +SKIP
>>> key = cache.key(host=h, operation="listings", params={"City": "Miami"}, account=fp)  # doctest: +SKIP
>>> cache.write("listings", key, frame, {"host": h, "params": {"City": "Miami"}})  # doctest: +SKIP
>>> cache.read("listings", key).frame  # doctest: +SKIP
"""

from __future__ import annotations

import os
import shutil
import time
import warnings
from collections.abc import Collection, Mapping
from contextlib import suppress
from datetime import timedelta
from pathlib import Path
from typing import Any

import pandas as pd

from realtyframes._deprecation import REMOVED_IN
from realtyframes.cache._catalog import Current, commit, current, forget, retired
from realtyframes.cache._checkpoints import (
    CHECKPOINT_MAX_AGE,
    Checkpoint,
    SavedCheckpoint,
    remove_checkpoints,
    remove_old_checkpoints,
    saved_checkpoints,
)
from realtyframes.cache._entries import (
    _KEY,
    _NAME,
    Entry,
    _categories,
    _check_name,
    _private_dirs,
    _ResourceTtl,
    cache_key,
    entry_doc,
    is_fresh,
)
from realtyframes.cache._inventory import (
    clear,
    list_entries,
    no_job_running,
    unpublish,
)
from realtyframes.cache._layout import (
    MAIN,
    Layout,
    Unreadable,
    account_label,
    part_path,
    publish,
    read_generation,
    remove_dead_writers_files,
    remove_generation,
    write_parts,
)
from realtyframes.cache._lock import Holder, holder, lock_error
from realtyframes.cache._state import connect, exists, transaction
from realtyframes.errors import CacheWarning

__all__ = ["GRACE", "READ_WAIT", "ParquetCache"]

#: Kept for compatibility; ``ParquetCache(read_wait=...)`` has no effect.
READ_WAIT = 30.0
#: How long a replaced generation's files stay for the readers that named it before.
GRACE = timedelta(minutes=10)
#: How long an entry stays fresh when the caller gave no lifetime for its resource.
_DEFAULT_TTL = timedelta(hours=1)


class ParquetCache:
    """Parquet files under ``root``: each resource a hive-partitioned dataset (partitions
    ``account`` and ``scope``) that DuckDB, Polars, pyarrow and Spark read as one table.

    ``ttl``: per-resource freshness (the loaders pass their endpoints' lifetimes; a resource
    not in it: one hour; ``None``: never expires). ``grace``: how long a replaced generation
    stays readable. ``lock_timeout`` and ``read_wait`` have no effect (``clear`` refuses a scope
    being synced at once; readers never wait): passing either is a ``DeprecationWarning``.
    Reading never creates files or folders. An older cache is migrated when opened, with one
    log line.

    >>> cache = ParquetCache(tmp_path)  # doctest: +SKIP
    >>> cache.read("listings", "0" * 32) is None  # doctest: +SKIP
    True
    """

    def __init__(
        self,
        root: Path | str,
        *,
        ttl: Mapping[str, timedelta | float | None] | None = None,
        lock_timeout: float | None = None,
        read_wait: float | None = None,
        checkpoint_max_age: timedelta = CHECKPOINT_MAX_AGE,
        grace: timedelta = GRACE,
    ) -> None:
        self.root = Path(root).expanduser()
        self._ttl: dict[str, timedelta | float | None] = dict(ttl or {})
        for name, unused in (("lock_timeout", lock_timeout), ("read_wait", read_wait)):
            if unused is not None:
                warnings.warn(
                    f"ParquetCache(): `{name}` has no effect (nothing waits) and goes in "
                    f"realtyframes {REMOVED_IN}; leave it out",
                    DeprecationWarning,
                    stacklevel=2,
                )
        for name, value in (("checkpoint_max_age", checkpoint_max_age), ("grace", grace)):
            if not isinstance(value, timedelta):
                raise ValueError(f"{name}: {value!r} is not a timedelta")
        self.checkpoint_max_age, self.grace = checkpoint_max_age, grace
        self._layout = Layout(self.root)
        remove_dead_writers_files(self._layout)  # a crashed write's leftovers, whatever its key
        # of loads never called again; its first look migrates an older cache
        remove_old_checkpoints(self.root, checkpoint_max_age)

    def __repr__(self) -> str:
        return f"ParquetCache({str(self.root)!r})"

    # -- naming ----------------------------------------------------------------------------------

    key = staticmethod(cache_key)

    def path(self, resource: str, key: str, extra: str | None = None) -> Path:
        """Where an entry's dataset file (or its ``extra`` companion's) lives: the existing
        file, else the partition of the entry's account (``account=unset`` when none)."""
        folder = self._folder(resource, key, extra)
        main = self._layout.find(resource, key)
        account = main.parent.parent.name.removeprefix("account=") if main else account_label(None)
        return self._layout.find(folder, key) or self._layout.entry(folder, account, key)

    @staticmethod
    def _folder(resource: str, key: str, extra: str | None = None) -> str:
        _check_name(resource, "resource", _NAME)
        _check_name(key, "key", _KEY)
        return resource if extra is None else f"{resource}.{_check_name(extra, 'extra', _NAME)}"

    def dataset_path(self, resource: str) -> Path:
        """The root of ``resource``'s dataset (``"listings"``, or a companion such as
        ``"listings.media"``), whether or not anything is cached yet.

        >>> cache.dataset_path("listings")  # doctest: +SKIP
        PosixPath('data/cache/listings')
        """
        main, dot, extra = resource.partition(".")
        self._folder(main, "k", extra if dot else None)  # validates both names
        return self.root / resource

    def job_lock(self, resource: str, key: str) -> Path:
        """The lock file a long job on ``key`` holds from its first read to its write (a market's
        sync: ``.rf/locks/<resource>.sync/<key>.lock``; docs/sync.md)."""
        self._folder(resource, key)  # checks both names
        lock = self._layout.lock(f"{resource}.sync", key)
        try:
            _private_dirs(lock.parent)
        except OSError as exc:  # a file where a folder of the locks should be
            raise lock_error(lock, exc) from None
        return lock

    def job_holder(self, resource: str, key: str) -> Holder | None:
        """Who holds the job lock of ``key`` now (scope, PID, host, since), from the ``locks``
        table; None when no live process does (a row of a dead one is stale).

        >>> cache.job_holder("market", key)  # doctest: +SKIP
        Holder(scope='City=Miami, PropertyType=Residential', pid=4242, host='box', since='...')
        """
        self._folder(resource, key)  # checks both names
        return holder(self.root, resource, key)

    def _current(self, resource: str, key: str) -> Current | None:
        self._folder(resource, key)  # checks both names
        if not exists(self.root):
            return None
        with connect(self.root) as db:
            return current(db, resource, key)

    def generation(self, resource: str, key: str) -> str | None:
        """The generation (``Entry.meta["generation"]``, new at each write) of the entry stored
        now, from the state database; None when there is none."""
        found = self._current(resource, key)
        return None if found is None else found.generation

    def sync_state(self, resource: str, key: str) -> dict[str, Any] | None:
        """The sync state stored with the current generation of ``key`` (watermarks, syncs,
        last requests ...; the ``sync`` of :meth:`write`'s ``meta``), from the state database's
        ``sync_state`` table without reading any Parquet file; None when there is none.

        >>> cache.sync_state("market", key)["change_watermark"]  # doctest: +SKIP
        '2026-06-29T17:02:11Z'
        """
        found = self._current(resource, key)
        state = None if found is None else found.meta.get("sync")
        return dict(state) if isinstance(state, dict) else None

    def ttl_for(self, resource: str) -> timedelta | float | None:
        """The freshness window of ``resource`` (``None``: never expires)."""
        return self._ttl.get(resource, _DEFAULT_TTL)

    def is_fresh(
        self, entry: Entry, ttl: timedelta | float | _ResourceTtl | None = _ResourceTtl.DEFAULT
    ) -> bool:
        """Whether ``entry`` is within ``ttl`` (default: the resource's ttl; ``None``: forever)."""
        chosen = self.ttl_for(entry.resource) if isinstance(ttl, _ResourceTtl) else ttl
        return is_fresh(entry, chosen)

    # -- read ------------------------------------------------------------------------------------

    def read(self, resource: str, key: str) -> Entry | None:
        """The entry, or ``None`` on a miss (absent, or unreadable -- moved aside with a warning).

        Always one whole generation: the one the state database names when the read starts,
        whatever writers do meanwhile (its files stay for the grace period). Never waits.

        >>> entry = cache.read("listings", key)  # doctest: +SKIP
        """
        for _attempt in range(3):
            found = self._current(resource, key)
            if found is None:
                return None
            folder = self._layout.generation(resource, key, found.generation)
            try:
                frames = read_generation(folder, found.parts)
            except FileNotFoundError:
                continue  # cleared, or replaced and collected meanwhile: look again
            except Unreadable as bad:
                self._unreadable(resource, key, found, bad)
                return None
            main = frames.pop(MAIN)
            path = self._layout.entry(resource, found.account, key)
            return Entry(resource, key, path, main, found.meta, frames)
        return None

    def _unreadable(self, resource: str, key: str, found: Current, bad: Unreadable) -> None:
        """Forget the entry, move its unreadable file aside and warn (unless a writer replaced
        the generation meanwhile: then this read is a miss, the next reads the new one)."""
        folder = resource if bad.part == MAIN else f"{resource}.{bad.part}"
        path = self._layout.entry(folder, found.account, key)
        target = self._layout.corrupt(folder, key)
        with connect(self.root) as db, transaction(db):
            now = current(db, resource, key)
            if now is None or now.generation != found.generation:
                return
            forget(db, resource, key)
            unpublish(self._layout, resource, key)
            source = part_path(self._layout.generation(resource, key, found.generation), bad.part)
            try:
                _private_dirs(target.parent)
                os.replace(source, target)
                where = f"moved aside to {target}"
            except OSError as move_exc:
                where = f"could not be moved aside ({move_exc.strerror})"
        from realtyframes.api import caller_level  # (the user's line; httpx only on this path)

        warnings.warn(
            f"cache file {path} is unreadable ({bad}); treated as a miss, {where}",
            CacheWarning,
            stacklevel=caller_level(),
        )

    # -- write -----------------------------------------------------------------------------------

    def write(
        self,
        resource: str,
        key: str,
        frame: pd.DataFrame,
        meta: Mapping[str, Any] | None = None,
        *,
        extra_frames: Mapping[str, pd.DataFrame] | None = None,
    ) -> Entry:
        """Store ``frame`` (and companions such as ``{"media": ..., "quarantine": ...}``) as a
        new generation, made current by one transaction.

        The columns are stored; the index only when it is named (an unnamed index, such as the
        labels ``validate`` keeps, reads back as a RangeIndex).

        ``meta``: JSON-serialisable facts about the fetch: ``host``, ``operation``, ``params``
        (normalised; secret-looking names redacted), ``account``, ``schema_version``,
        ``fetched_at`` (default now) and anything else the caller needs later. ``sync``: a
        synced scope's state, stored in the ``sync_state`` table with the generation
        (:meth:`sync_state`). ``rows`` and each companion's rows are added (``quarantined`` =
        the quarantine's rows).

        >>> cache.write("listings", key, listings, {"host": host, "params": params},
        ...             extra_frames={"media": media, "quarantine": quarantined})  # doctest: +SKIP
        """
        extras = dict(extra_frames or {})
        folders = {part: self._folder(resource, key, part) for part in extras}  # checks names
        folders[MAIN] = self._folder(resource, key)
        given = dict(meta or {})
        sync = given.pop("sync", None)
        doc = entry_doc(resource, key, frame, given, extras)
        account = account_label(doc["account"])
        targets = {part: (f, self._layout.entry(f, account, key)) for part, f in folders.items()}
        folder = self._layout.generation(resource, key, doc["generation"])
        parts = [(MAIN, frame, doc)]
        parts += [
            (name, extra, {**doc, "role": name, "rows": len(extra), **_categories(extra)})
            for name, extra in extras.items()
        ]
        write_parts(folder, parts)
        new = Current(doc["generation"], account, doc if sync is None else {**doc, "sync": sync})
        try:
            with connect(self.root) as db, transaction(db):
                commit(db, resource, key, new, time.time())
                publish(self._layout, key, folder, targets)
                unpublish(self._layout, resource, key, [t for _f, t in targets.values()])
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        self._collect(resource, key)
        return Entry(resource, key, targets[MAIN][1], frame, new.meta, extras)

    def _collect(self, resource: str, key: str) -> None:
        """Remove the generations replaced longer than the grace period ago, and those of
        ``key`` that writes which died before their commit left (older than the grace period)."""
        before = time.time() - self.grace.total_seconds()
        with connect(self.root) as db:
            with transaction(db):
                gone = retired(db, before)
            query = "SELECT generation FROM generations WHERE resource = ? AND key = ?"
            known = {g for (g,) in db.execute(query, (resource, key))}
        for res, k, generation in gone:
            remove_generation(self._layout, res, k, generation)
        for path in self._layout.generation(resource, key, "x").parent.glob("*"):
            with suppress(FileNotFoundError):  # another writer's collection removed it first
                if path.name not in known and path.stat().st_mtime < before:
                    remove_generation(self._layout, resource, key, path.name)

    # -- checkpoints of unfinished loads --------------------------------------------------------

    def checkpoint(self, resource: str, key: str, scope: Mapping[str, Any]) -> Checkpoint:
        """The checkpoint of an unfinished load of ``key`` (in ``.rf/state.sqlite3``): what an
        earlier identical load of ``scope`` saved before it was interrupted, else an empty one.
        One of another scope, or not written to for ``checkpoint_max_age``, is discarded.

        >>> cp = cache.checkpoint("listings", key, {"host": h, "params": params})  # doctest: +SKIP
        >>> cp.resumed_from  # doctest: +SKIP
        """
        self._folder(resource, key)  # checks both names
        return Checkpoint.open(self.root, resource, key, scope, max_age=self.checkpoint_max_age)

    def checkpoints(self, resource: str | None = None) -> list[SavedCheckpoint]:
        """The checkpoints of interrupted loads (of ``resource``): resource, key, answers, size,
        started, updated.

        >>> [c.name for c in cache.checkpoints()]  # doctest: +SKIP
        ['market.3f9c0e...']
        """
        return saved_checkpoints(self.root, resource)

    def clear_checkpoints(
        self, resource: str | None = None, *, keys: Collection[str] | None = None
    ) -> int:
        """Remove the checkpoints of unfinished loads (of ``resource``; only ``keys`` when given);
        returns how many.

        >>> cache.clear_checkpoints("market")  # doctest: +SKIP
        1
        """
        with no_job_running(self._layout, resource, keys):  # a sync's own checkpoint
            return remove_checkpoints(self.root, resource, keys)

    def check_idle(self, resource: str | None = None) -> None:
        """Raise :class:`~realtyframes.errors.ScopeBusyError` if a scope (of ``resource``) is
        being synced now: what ``realtyframes cache clear`` asks before it removes anything.

        >>> cache.check_idle("market")  # doctest: +SKIP
        """
        with no_job_running(self._layout, resource, None):
            pass

    def list(self) -> pd.DataFrame:
        """Every entry: resource, key, rows, quarantined, fetched_at, size (bytes, with
        companions), host, operation, params (JSON), path. Reads file footers only.

        >>> cache.list()[["resource", "rows", "fetched_at"]]  # doctest: +SKIP
        """
        return list_entries(self._layout)

    def clear(self, resource: str | None = None, *, keys: Collection[str] | None = None) -> int:
        """Remove every entry (of ``resource``; only those whose key is in ``keys`` when given):
        its companions, lock and moved-aside files too, and the checkpoints of its loads.

        Returns the number of entries removed. A scope being synced (its job lock held, e.g. by
        a ``sync_listings`` in another process) is not cleared under the sync:
        :class:`~realtyframes.errors.ScopeBusyError` naming it, and nothing removed.

        >>> cache.clear("analytics")  # doctest: +SKIP
        1
        """
        return clear(self._layout, resource, keys=keys)
