"""The Parquet cache: one hive-partitioned dataset per resource, one file per key, metadata in
the file itself.

Layout (see ``docs/cache.md`` and :mod:`._layout`)::

    <root>/<resource>/account=<account>/scope=key-<key>/part-0.parquet          the frame
    <root>/<resource>.<extra>/account=<account>/scope=key-<key>/part-0.parquet  its companions
    <root>/.rf/                                       locks, files being written, moved aside

Every file carries Parquet key-value metadata ``realtyframes`` (JSON: host, operation, params with
secrets redacted, account fingerprint, fetched_at, schema_version, rows, extras' rows). Writes are
atomic (temporary file in ``.rf/staging``, fsync, ``os.replace`` into the partition, fsync of the
folder) under an exclusive lock; a file that cannot be read is a miss, moved to ``.rf/corrupt``.
No pickles.

>>> cache = ParquetCache("data/cache")  # doctest: +SKIP
>>> key = cache.key(host=h, operation="listings", params={"City": "Miami"}, account=fp)  # doctest: +SKIP
>>> cache.write("listings", key, frame, {"host": h, "params": {"City": "Miami"}})  # doctest: +SKIP
>>> cache.read("listings", key).frame  # doctest: +SKIP
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Collection, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

import pandas as pd

from realtyframes._files import TEMP_MARKER
from realtyframes.cache._checkpoints import (
    CHECKPOINT_MAX_AGE,
    Checkpoint,
    SavedCheckpoint,
    remove_checkpoints,
    remove_old_checkpoints,
    saved_checkpoints,
)
from realtyframes.cache._entries import (
    _DEFAULT_TTL,
    _KEY,
    _NAME,
    Entry,
    _caller_level,
    _categories,
    _check_name,
    _private_dirs,
    _ResourceTtl,
    account_fingerprint,
    cache_key,
    entry_doc,
    is_fresh,
    normalise_params,
)
from realtyframes.cache._generations import (
    GENERATION,
    META_KEY,
    Torn,
    Unreadable,
    entry_meta,
    footer,
    identity,
    read_frame,
    release_previous,
    replace_files,
)
from realtyframes.cache._inventory import (
    clear,
    drop,
    jobs,
    list_entries,
    lock_path,
    no_job_running,
)
from realtyframes.cache._layout import (
    Layout,
    account_label,
    migrate_flat_layout,
    remove_dead_writers_files,
)
from realtyframes.cache._lock import CacheLockTimeout, file_lock, is_locked
from realtyframes.cache._scopes import Holder, holder
from realtyframes.errors import CacheReadTimeout, CacheWarning

__all__ = [
    "META_KEY",
    "CacheWarning",
    "Entry",
    "ParquetCache",
    "account_fingerprint",
    "cache_key",
    "is_fresh",
    "normalise_params",
]

#: Seconds a reader waits at most for a writer to complete an entry (``ParquetCache.read_wait``).
READ_WAIT = 30.0
#: Seconds between two looks at an entry a writer of an older version is completing.
_READ_POLL = 0.02
_NOTHING = object()


class ParquetCache:
    """Parquet files under ``root``: each resource a hive-partitioned dataset (partitions
    ``account`` and ``scope``) that DuckDB, Polars, pyarrow and Spark read as one table.

    ``ttl``: per-resource freshness (the loaders pass their endpoints' lifetimes; a resource
    not in it: one hour; ``None``: never expires). ``lock_timeout``: seconds a writer waits
    for another writer of the same entry. ``read_wait``: seconds a reader waits at most for a
    writer of an older version to complete an entry it is in the middle of (readers never wait
    for writers of this version: they read the previous generation). Reading never creates files
    or folders; writing creates the partition. A cache of realtyframes 0.1 (flat files) is moved
    into this layout when opened, with one log line. See ``docs/cache.md`` for the layout.

    >>> cache = ParquetCache(tmp_path)  # doctest: +SKIP
    >>> cache.read("listings", "0" * 32) is None  # doctest: +SKIP
    True
    """

    def __init__(
        self,
        root: Path | str,
        *,
        ttl: Mapping[str, timedelta | float | None] | None = None,
        lock_timeout: float | None = 300.0,
        read_wait: float = READ_WAIT,
        checkpoint_max_age: timedelta = CHECKPOINT_MAX_AGE,
    ) -> None:
        self.root = Path(root).expanduser()
        self._ttl: dict[str, timedelta | float | None] = dict(ttl or {})
        self.lock_timeout = lock_timeout
        if (
            isinstance(read_wait, bool)
            or not isinstance(read_wait, int | float)
            or not read_wait >= 0
        ):
            raise ValueError(f"read_wait: {read_wait!r} is not a number of seconds >= 0")
        self.read_wait = float(read_wait)
        if not isinstance(checkpoint_max_age, timedelta):
            raise ValueError(f"checkpoint_max_age: {checkpoint_max_age!r} is not a timedelta")
        self.checkpoint_max_age = checkpoint_max_age
        self._layout = Layout(self.root)
        remove_dead_writers_files(self._layout)  # a crashed write's leftovers, whatever its key
        remove_old_checkpoints(self.root, checkpoint_max_age)  # of loads never called again
        migrate_flat_layout(self.root)

    def __repr__(self) -> str:
        return f"ParquetCache({str(self.root)!r})"

    # -- naming ----------------------------------------------------------------------------------

    key = staticmethod(cache_key)

    def path(self, resource: str, key: str, extra: str | None = None) -> Path:
        """Where an entry's file (or its ``extra`` companion's) lives: the existing file, else
        the partition of the entry's account (``account=unset`` when there is no entry)."""
        found = self._layout.find(self._folder(resource, key, extra), key)
        if found is not None:
            return found
        main = self._layout.find(resource, key)
        account = main.parent.parent.name.removeprefix("account=") if main else account_label(None)
        return self._layout.entry(self._folder(resource, key, extra), account, key)

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

    def _lock_path(self, resource: str, key: str) -> Path:
        return lock_path(self._layout, resource, key)

    def job_lock(self, resource: str, key: str) -> Path:
        """The lock file a long job on ``key`` holds from its first read to its write (a market's
        sync: ``.rf/locks/<resource>.sync/<key>.lock``), apart from the write lock, which
        :meth:`write` takes inside it for the files' replacement only (docs/sync.md)."""
        self._folder(resource, key)  # checks both names
        return self._lock_path(f"{resource}.sync", key)

    def job_holder(self, resource: str, key: str) -> Holder | None:
        """Who holds the job lock of ``key`` now (scope, PID, host, since), from the ``locks``
        table; None when no live process does (a row of a dead one is stale).

        >>> cache.job_holder("market", key)  # doctest: +SKIP
        Holder(scope='City=Miami, PropertyType=Residential', pid=4242, host='box', since='...')
        """
        self._folder(resource, key)  # checks both names
        return holder(self.root, resource, key)

    def generation(self, resource: str, key: str) -> str | None:
        """The generation (``Entry.meta["generation"]``, new at each write) of the entry stored
        now, from its file's footer only; None when there is none."""
        meta = footer(self._layout.find(self._folder(resource, key), key))
        found = (meta or {}).get("generation")
        return found if isinstance(found, str) else None

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

        Never a part of an entry: while a writer replaces it, the previous complete generation
        (main file and companions); if a writer of an older version left the companions of its
        write in place before its main file, the read waits for that write to complete, at most
        ``read_wait`` seconds, then raises :class:`~realtyframes.errors.CacheReadTimeout`.
        Companions left from a write that died are a miss.

        >>> entry = cache.read("listings", key)  # doctest: +SKIP
        """
        self._folder(resource, key)  # checks both names
        deadline = time.monotonic() + self.read_wait
        seen: object = _NOTHING  # the torn state seen last with no writer at work
        while True:
            try:
                return self._read_once(resource, key)
            except Torn as torn:
                if not is_locked(self._layout.lock(resource, key)):
                    if torn.token == seen:
                        return None  # left so by a writer that died: a miss, as it always was
                    first, seen = seen is _NOTHING, torn.token
                    if first or time.monotonic() < deadline:
                        continue  # a write completed meanwhile: read the new generation
                elif time.monotonic() < deadline:
                    seen = _NOTHING
                    time.sleep(_READ_POLL)  # a writer of an older version: let it complete
                    continue
                raise CacheReadTimeout(
                    f"cache entry {resource}/{key} is being written by another process and "
                    f"was not complete after {self.read_wait:g} s (ParquetCache.read_wait)"
                ) from None

    def _read_once(self, resource: str, key: str) -> Entry | None:
        """One attempt of :meth:`read`; raises :class:`Torn` when files changed meanwhile."""
        path = self._layout.find(resource, key)
        if path is None:
            return None
        try:
            meta, frame = read_frame(path)
        except FileNotFoundError:
            raise Torn(("gone", str(path))) from None  # removed since listed: look again
        except Unreadable as bad:
            self._unreadable(path, bad, resource, resource, key)
            return None
        assert frame is not None
        extra: dict[str, pd.DataFrame] = {}
        for name, info in (meta.get("extras") or {}).items():
            wanted = info.get("generation") if isinstance(info, dict) else None
            found = self._read_companion(resource, name, key, wanted)
            if found is None:
                return None
            extra[name] = found
        return Entry(resource, key, path, frame, meta, extra)

    def _read_companion(
        self, resource: str, name: str, key: str, generation: object
    ) -> pd.DataFrame | None:
        """The ``name`` companion of ``generation``: in place, else kept in ``.rf/previous``
        (being replaced); None when unreadable (moved aside). Raises :class:`Torn` if neither
        place has it."""
        folder = self._folder(resource, key, name)
        places = [self._layout.find(folder, key)]
        if isinstance(generation, str) and GENERATION.match(generation):
            places.append(self._layout.previous(folder, key, generation))
        for place in places:
            if place is None:
                continue
            try:
                _meta, frame = read_frame(place, generation=generation)
            except FileNotFoundError:
                continue
            except Unreadable as bad:
                self._unreadable(place, bad, resource, folder, key)
                return None
            if frame is not None:
                return frame
        raise Torn(("torn", folder, key, generation))

    _meta = staticmethod(entry_meta)

    def _unreadable(
        self, path: Path, bad: Unreadable, resource: str, folder: str, key: str
    ) -> None:
        """Move an unreadable file aside (under the entry's lock, if it is still the file that
        was read) and warn; a file a writer is replacing is read again instead."""
        target = self._layout.corrupt(folder, key)
        try:
            with file_lock(self._lock_path(resource, key), timeout=0):
                if bad.identity is not None and identity(path) != bad.identity:
                    raise Torn(("replaced", str(path)))  # a writer replaced it meanwhile
                _private_dirs(target.parent)
                os.replace(path, target)
            where = f"moved aside to {target}"
            self._layout.remove_empty_partition(path)
        except CacheLockTimeout:
            raise Torn(("writing", str(path))) from None  # a writer is replacing it: wait
        except OSError as move_exc:
            where = f"could not be moved aside ({move_exc.strerror})"
        warnings.warn(
            f"cache file {path} is unreadable ({bad}); treated as a miss, {where}",
            CacheWarning,
            stacklevel=_caller_level(__name__),
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
        """Store ``frame`` (and companions such as ``{"media": ..., "quarantine": ...}``) atomically.

        The columns are stored; the index only when it is named (an unnamed index, such as the
        labels ``validate`` keeps, reads back as a RangeIndex).

        ``meta``: JSON-serialisable facts about the fetch: ``host``, ``operation``, ``params``
        (normalised; secret-looking names redacted), ``account``, ``schema_version``,
        ``fetched_at`` (default now) and anything else the caller needs later (e.g. sync state).
        ``rows`` and each companion's rows are added (``quarantined`` = the quarantine's rows).

        >>> cache.write("listings", key, listings, {"host": host, "params": params},
        ...             extra_frames={"media": media, "quarantine": quarantined})  # doctest: +SKIP
        """
        extras = dict(extra_frames or {})
        folders = {name: self._folder(resource, key, name) for name in extras}  # checks names
        doc = entry_doc(resource, key, frame, meta, extras)
        account = account_label(doc["account"])
        path = self._layout.entry(self._folder(resource, key), account, key)
        files = [
            (
                self._layout.entry(folders[name], account, key),
                folders[name],
                extra,
                {**doc, "role": name, "rows": len(extra), **_categories(extra)},
            )
            for name, extra in extras.items()
        ]
        files.append((path, resource, frame, doc))  # the main file last: it completes the entry
        with file_lock(self._lock_path(resource, key), timeout=self.lock_timeout):
            self._remove_temp_files(key)
            old = replace_files(self._layout, resource, key, files)
            for target, folder, _part, _doc in files:
                self._drop(folder, key, keep=target)  # the key once stored for another account
            for name in set((old or {}).get("extras") or {}) - set(extras):
                self._drop(f"{resource}.{name}", key)
            release_previous(self._layout, resource, key)  # no reader needs them now
        return Entry(resource, key, path, frame, doc, extras)

    def _drop(self, folder: str, key: str, keep: Path | None = None) -> None:
        drop(self._layout, folder, key, keep)

    def _remove_temp_files(self, key: str) -> None:
        """Temporary files of this key left by a killed writer (we hold the key's lock)."""
        for stale in self._layout.internal.glob(f"staging/.*.{key}.parquet{TEMP_MARKER}*"):
            stale.unlink(missing_ok=True)

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
        if resource is not None:
            _check_name(resource, "resource", _NAME)
        with no_job_running(
            self._layout, jobs(self._layout, resource), keys
        ):  # a sync's own checkpoint
            return remove_checkpoints(self.root, resource, keys)

    def check_idle(self, resource: str | None = None) -> None:
        """Raise :class:`~realtyframes.errors.ScopeBusyError` if a scope (of ``resource``) is
        being synced now: what ``realtyframes cache clear`` asks before it removes anything.

        >>> cache.check_idle("market")  # doctest: +SKIP
        """
        with no_job_running(self._layout, jobs(self._layout, resource), None):
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
        return clear(self._layout, resource, keys=keys, lock_timeout=self.lock_timeout)
