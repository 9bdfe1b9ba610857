"""The Parquet cache: one folder per resource, one file per key, metadata in the file itself.

Layout (see ``docs/cache.md``)::

    <root>/<resource>/<key>.parquet            the frame (e.g. listings/3f9c....parquet)
    <root>/<resource>.<extra>/<key>.parquet    its companion frames (listings.media, .quarantine)
    <root>/<resource>/.<key>.lock              writer lock (hidden: readers and tools skip it)

Every file carries Parquet key-value metadata ``realtyframes`` (JSON: host, operation, params with
secrets redacted, account fingerprint, fetched_at, schema_version, rows, extras' rows). Writes are
atomic (temporary file in the same folder, fsync, ``os.replace``, fsync of the folder) under an
exclusive lock; a file that cannot be read is a miss, moved aside as ``.<key>.parquet.corrupt-<ts>``.
No pickles.

>>> cache = ParquetCache("data/cache")  # doctest: +SKIP
>>> key = cache.key(host=h, operation="listings", params={"City": "Miami"}, account=fp)  # doctest: +SKIP
>>> cache.write("listings", key, frame, {"host": h, "params": {"City": "Miami"}})  # doctest: +SKIP
>>> cache.read("listings", key).frame  # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import secrets
import warnings
from collections.abc import Collection, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from realtyframes._files import TEMP_MARKER, atomic_path
from realtyframes._version import __version__
from realtyframes.cache._entries import (
    _DEFAULT_TTL,
    _KEY,
    _NAME,
    FILE_MODE,
    Entry,
    _categories,
    _check_name,
    _private_dirs,
    _redact,
    _remove_dead_writers_files,
    _ResourceTtl,
    _restore_categories,
    _stamp,
    account_fingerprint,
    cache_key,
    is_fresh,
    normalise_params,
)
from realtyframes.cache._lock import CacheLockTimeout, file_lock
from realtyframes.errors import CacheWarning

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

#: Parquet key-value metadata key holding the entry's JSON metadata.
META_KEY = b"realtyframes"


class ParquetCache:
    """Parquet files under ``root``, one folder per resource, readable by DuckDB, Polars, pyarrow.

    ``ttl``: per-resource freshness (the loaders pass their endpoints' lifetimes; a resource
    not in it: one hour; ``None``: never expires). Reading never creates files or
    folders; writing creates the resource folder. See ``docs/cache.md`` for the layout.

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
    ) -> None:
        self.root = Path(root).expanduser()
        self._ttl: dict[str, timedelta | float | None] = dict(ttl or {})
        self.lock_timeout = lock_timeout
        _remove_dead_writers_files(self.root)  # a crashed write's leftovers, whatever its key

    def __repr__(self) -> str:
        return f"ParquetCache({str(self.root)!r})"

    # -- naming ----------------------------------------------------------------------------------

    key = staticmethod(cache_key)

    def path(self, resource: str, key: str, extra: str | None = None) -> Path:
        """Where an entry's file (or its ``extra`` companion's) lives."""
        _check_name(resource, "resource", _NAME)
        _check_name(key, "key", _KEY)
        folder = resource if extra is None else f"{resource}.{_check_name(extra, 'extra', _NAME)}"
        return self.root / folder / f"{key}.parquet"

    def _lock_path(self, resource: str, key: str) -> Path:
        return self.root / resource / f".{key}.lock"

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
        """The entry, or ``None`` on a miss (absent, unreadable -- moved aside with a warning --
        or its companion files from another write).

        >>> entry = cache.read("listings", key)  # doctest: +SKIP
        """
        path = self.path(resource, key)
        try:
            table = pq.read_table(path, page_checksum_verification=True)
        except FileNotFoundError:
            return None
        except (OSError, pa.ArrowException) as exc:
            self._move_aside(path, exc)
            return None
        try:
            meta = self._meta(table.schema)
            frame = _restore_categories(table.to_pandas(), meta)
        except (ValueError, TypeError, KeyError, pa.ArrowException) as exc:
            self._move_aside(path, exc)
            return None
        extra: dict[str, pd.DataFrame] = {}
        for name, info in (meta.get("extras") or {}).items():
            extra_path = self.path(resource, key, name)
            try:
                extra_table = pq.read_table(extra_path, page_checksum_verification=True)
                extra_meta = self._meta(extra_table.schema)
            except FileNotFoundError:
                return None  # a write in progress or interrupted: a miss, not corruption
            except (OSError, ValueError, KeyError, pa.ArrowException) as exc:
                self._move_aside(extra_path, exc)
                return None
            if extra_meta.get("generation") != info.get("generation"):
                return None
            extra[name] = _restore_categories(extra_table.to_pandas(), extra_meta)
        return Entry(resource, key, path, frame, meta, extra)

    @staticmethod
    def _meta(schema: pa.Schema) -> dict[str, Any]:
        raw = (schema.metadata or {}).get(META_KEY)
        if raw is None:
            raise KeyError("no realtyframes metadata")
        meta = json.loads(raw)
        if not isinstance(meta, dict) or "fetched_at" not in meta:
            raise ValueError("realtyframes metadata without fetched_at")
        return meta

    def _move_aside(self, path: Path, exc: BaseException) -> None:
        target = path.with_name(f".{path.name}.corrupt-{_stamp()}")
        try:
            os.replace(path, target)
            where = f"moved aside to {target}"
        except OSError as move_exc:
            where = f"could not be moved aside ({move_exc.strerror})"
        warnings.warn(
            f"cache file {path} is unreadable ({type(exc).__name__}: {exc}); treated as a miss, "
            f"{where}",
            CacheWarning,
            stacklevel=3,
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
        path = self.path(resource, key)
        extras = dict(extra_frames or {})
        for name in extras:
            self.path(resource, key, name)  # validates the name
        doc = self._meta_doc(resource, key, frame, meta, extras)
        folder = path.parent
        _private_dirs(folder)
        with file_lock(self._lock_path(resource, key), timeout=self.lock_timeout):
            self._remove_temp_files(folder, key)
            previous = self._previous_extras(path)
            for name, extra in extras.items():
                extra_doc = {**doc, "role": name, "rows": len(extra), **_categories(extra)}
                extra_path = self.path(resource, key, name)
                _private_dirs(extra_path.parent)
                self._remove_temp_files(extra_path.parent, key)
                self._atomic_write(extra_path, extra, extra_doc)
            self._atomic_write(path, frame, doc)
            for name in previous - set(extras):
                self.path(resource, key, name).unlink(missing_ok=True)
        return Entry(resource, key, path, frame, doc, extras)

    def _meta_doc(
        self,
        resource: str,
        key: str,
        frame: pd.DataFrame,
        meta: Mapping[str, Any] | None,
        extras: Mapping[str, pd.DataFrame],
    ) -> dict[str, Any]:
        from realtyframes.schemas import SCHEMA_VERSION

        given = dict(meta or {})
        fetched = given.pop("fetched_at", None) or datetime.now(UTC)
        if isinstance(fetched, str):
            fetched = datetime.fromisoformat(fetched.replace("Z", "+00:00"))
        if fetched.tzinfo is None:
            raise ValueError("meta: fetched_at must be timezone-aware")
        params = _redact(normalise_params(given.pop("params", None)))
        generation = secrets.token_hex(8)
        doc: dict[str, Any] = {
            "resource": resource,
            "key": key,
            "host": given.pop("host", None),
            "operation": given.pop("operation", resource),
            "params": params,
            "account": given.pop("account", None),
            "schema_version": given.pop("schema_version", SCHEMA_VERSION),
            "fetched_at": fetched.astimezone(UTC).isoformat(),
            "rows": len(frame),
            **_categories(frame),
            "generation": generation,
            "written_by": f"realtyframes {__version__}",
            "extras": {
                name: {"rows": len(df), "generation": generation} for name, df in extras.items()
            },
        }
        if "quarantine" in extras:
            doc["quarantined"] = len(extras["quarantine"])
        reserved = sorted(set(given) & (set(doc) | {"categories", "quarantined", "role"}))
        if reserved:
            raise ValueError(f"meta: {', '.join(reserved)} are set by the cache, not the caller")
        doc.update(given)
        json.dumps(doc)  # fails here, before any file is touched, if not serialisable
        return doc

    def _previous_extras(self, path: Path) -> set[str]:
        try:
            return set((self._meta(pq.read_schema(path)).get("extras") or {}).keys())
        except (OSError, ValueError, KeyError, pa.ArrowException):
            return set()

    @staticmethod
    def _remove_temp_files(folder: Path, key: str) -> None:
        """Temporary files of this key left by a killed writer (we hold the key's lock)."""
        for stale in folder.glob(f".{key}.parquet{TEMP_MARKER}*"):
            stale.unlink(missing_ok=True)

    @staticmethod
    def _atomic_write(path: Path, frame: pd.DataFrame, doc: Mapping[str, Any]) -> None:
        named = isinstance(frame.index, pd.MultiIndex) or frame.index.name is not None
        table = pa.Table.from_pandas(frame, preserve_index=named)
        metadata = dict(table.schema.metadata or {})
        metadata[META_KEY] = json.dumps(doc, separators=(",", ":")).encode()
        table = table.replace_schema_metadata(metadata)
        with atomic_path(path, mode=FILE_MODE) as tmp, open(tmp, "wb") as fh:
            pq.write_table(table, fh, write_page_checksum=True)

    # -- inventory -------------------------------------------------------------------------------

    def _resources(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if p.is_dir() and _NAME.match(p.name))

    def list(self) -> pd.DataFrame:
        """Every entry: resource, key, rows, quarantined, fetched_at, size (bytes, with
        companions), host, operation, params (JSON), path. Reads file footers only.

        >>> cache.list()[["resource", "rows", "fetched_at"]]  # doctest: +SKIP
        """
        rows = []
        for resource in self._resources():
            for path in sorted((self.root / resource).glob("*.parquet")):
                key = path.stem
                if not _KEY.match(key):
                    continue
                try:
                    meta = self._meta(pq.read_schema(path))
                    size = path.stat().st_size
                except (OSError, ValueError, KeyError, pa.ArrowException):
                    continue  # unreadable: a read moves it aside
                for name in meta.get("extras") or {}:
                    extra_path = self.path(resource, key, name)
                    size += extra_path.stat().st_size if extra_path.exists() else 0
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
            columns=[
                "resource",
                "key",
                "rows",
                "quarantined",
                "fetched_at",
                "size",
                "host",
                "operation",
                "params",
                "path",
            ],
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
            fetched_at=pd.to_datetime(frame["fetched_at"], utc=True, format="ISO8601").dt.as_unit(
                "us"
            )
        )

    def clear(self, resource: str | None = None, *, keys: Collection[str] | None = None) -> int:
        """Remove every entry (of ``resource``; only those whose key is in ``keys`` when given):
        its companions, lock and moved-aside files too.

        Returns the number of entries removed.

        >>> cache.clear("analytics")  # doctest: +SKIP
        1
        """
        resources = [_check_name(resource, "resource", _NAME)] if resource else self._resources()
        removed = 0
        for res in resources:
            folder = self.root / res
            if not folder.is_dir():
                continue
            companions = [
                p
                for p in self.root.iterdir()
                if p.is_dir()
                and p.name.startswith(f"{res}.")
                and _NAME.match(p.name[len(res) + 1 :])
            ]
            for path in sorted(folder.glob("*.parquet")):
                key = path.stem
                if not _KEY.match(key) or (keys is not None and key not in keys):
                    continue
                lock = self._lock_path(res, key)
                with file_lock(lock, timeout=self.lock_timeout):
                    for comp in companions:
                        (comp / path.name).unlink(missing_ok=True)
                    path.unlink(missing_ok=True)
                    lock.unlink(missing_ok=True)
                removed += 1
            if keys is not None:
                continue  # chosen entries only: the folder's leftovers stay
            for folder_ in [folder, *companions]:
                for leftover in folder_.glob(".*"):
                    if ".corrupt-" in leftover.name or ".tmp-" in leftover.name:
                        leftover.unlink(missing_ok=True)
            for lock in folder.glob(".*.lock"):  # keys with no data (e.g. an interrupted write)
                try:
                    with file_lock(lock, timeout=0):
                        lock.unlink(missing_ok=True)
                except CacheLockTimeout:
                    continue  # a writer is at work on it
        return removed
