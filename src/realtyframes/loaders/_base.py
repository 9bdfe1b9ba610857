"""Shared machinery of the loaders: where it is cached, how it is validated, what a load reports.

Every loader is three pieces: *fetch* (raw bodies through :mod:`realtyframes.api`), *shape*
(:mod:`realtyframes.schemas` turns bodies into typed frames) and :func:`load` here, which looks
the result up in the :class:`~realtyframes.cache.ParquetCache`, calls fetch + shape on a miss,
validates every frame (invalid rows to a quarantine frame), stores the result with its companions
(``media``, ``quarantine``) and records a :class:`LoadInfo`.

>>> result = load(ctx, spec, fetch)  # doctest: +SKIP
>>> result.info.requests, result.info.from_cache  # doctest: +SKIP
(6, False)
"""

from __future__ import annotations

import json
import logging
import os
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from realtyframes._environment import SETTING_VARIABLES
from realtyframes.api import ApiClient, Host
from realtyframes.api import caller_level as _caller_level
from realtyframes.cache import Checkpoint, ParquetCache
from realtyframes.errors import CacheLockTimeout, CacheWarning, DataQualityWarning
from realtyframes.loaders._resume import run_resumable
from realtyframes.schemas import QUARANTINE_REASON, OnInvalid, validate

logger = logging.getLogger("realtyframes.loaders")

__all__ = [
    "QUARANTINE_REASON",
    "LoadContext",
    "LoadInfo",
    "LoadSpec",
    "Loaded",
    "Result",
    "cache_key",
    "default_cache_dir",
    "load",
    "parquet_safe",
    "validate_frame",
]

_APP = "realtyframes"


def default_cache_dir() -> Path:
    """``REALTYFRAMES_CACHE_DIR``, else the user cache directory (``~/.cache/realtyframes`` on
    Linux, ``~/Library/Caches/realtyframes`` on macOS, ``%LOCALAPPDATA%\\realtyframes\\Cache`` on
    Windows). Only computes the path: nothing is created.

    >>> default_cache_dir().name in ("realtyframes", "Cache") or "REALTYFRAMES_CACHE_DIR" in os.environ
    True
    """
    given = os.environ.get(SETTING_VARIABLES["cache_dir"], "").strip()
    if given:
        return Path(given).expanduser()
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / _APP / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / _APP
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(xdg) if xdg else Path.home() / ".cache") / _APP


# -- what a load reports ---------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class LoadInfo:
    """What the latest load of a client did (``client.last_load``).

    - ``resource``: the cache folder / kind of data (``listings``, ``changes``, ``contacts`` ...).
    - ``rows``: rows returned (valid rows); ``quarantined``: rows moved to ``quarantine``.
      ``rows + quarantined`` is what was fetched (after duplicates of a record were merged).
    - ``requests``: HTTP requests made (0 on a cache hit).
    - ``from_cache``: the result came from the Parquet cache; ``fetched_at``: when the data was
      fetched from the service (tz-aware UTC).
    - ``total``: the server's total (list operations), else None.
    - ``warnings``: the data-quality messages of the load (quarantine, missing rows, drift), also
      issued as warnings.
    - ``quarantine``: the invalid rows, their columns plus ``_quarantine_reason`` (the failing
      check(s) of each row). Empty when every row was valid.
    - ``media``: listings only: the Media of the returned listings, a long frame (ListingId,
      Order, MediaURL, ShortDescription); search results without ``details=True`` carry none.
      None for other resources.
    - ``key``: the cache key of the entry (None with the cache off).
    - ``changes``: ``sync_listings`` only: what an incremental sync changed, one row per listing
      and kind of change (``new``, ``price_cut``, ``pending``, ``closed`` ...; see
      :mod:`realtyframes._changes`); None after a full load (the first sync).
    - ``resumed_requests``: answers (pages, details, feed pages) taken from the checkpoint of an
      interrupted identical load instead of being requested again (0: not resumed; not counted
      in ``requests``); ``resumed_from``: when that interrupted load started (None: not resumed).

    >>> df = client.listings(City="Miami", details=True)  # doctest: +SKIP
    >>> client.last_load.media.head()  # doctest: +SKIP
    >>> client.last_load.quarantine["_quarantine_reason"].value_counts()  # doctest: +SKIP
    """

    resource: str
    rows: int
    quarantined: int
    requests: int
    from_cache: bool
    fetched_at: datetime
    total: int | None = None
    warnings: tuple[str, ...] = ()
    quarantine: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    media: pd.DataFrame | None = field(default=None, repr=False)
    key: str | None = field(default=None, repr=False)
    changes: pd.DataFrame | None = field(default=None, repr=False)
    resumed_requests: int = 0
    resumed_from: datetime | None = None


@dataclass
class Loaded:
    """What a loader's fetch step gives back: shaped (not yet validated) frames and counts."""

    frame: pd.DataFrame
    requests: int
    total: int | None = None
    expected: int | None = None  # rows the server's total promises (None: no check)
    media: pd.DataFrame | None = None
    warnings: tuple[str, ...] = ()  # already issued (e.g. drift)
    meta: dict[str, Any] = field(default_factory=dict)
    #: further frames of the result, validated against their own model and stored as companions
    members: dict[str, tuple[pd.DataFrame, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class LoadSpec:
    """One load: which cache entry, which model, how to treat invalid rows."""

    resource: str
    operation: str
    params: Mapping[str, Any]
    model: Any
    on_invalid: OnInvalid = "quarantine"
    refresh: bool = False
    host: Host = "base"


class LoadContext:
    """What loaders need from a client: the HTTP layer, the cache (or None), progress, and
    where to record the latest :class:`LoadInfo`."""

    def __init__(
        self,
        api: ApiClient,
        cache: ParquetCache | None,
        progress: bool | None,
        record: Callable[[LoadInfo], None],
    ) -> None:
        self.api, self.cache, self.progress, self.record = api, cache, progress, record
        #: the checkpoint of the load under way (set by :func:`load`; see ``_resume``)
        self.checkpoint: Checkpoint | None = None


# -- validation and quarantine ---------------------------------------------------------------------


def validate_frame(
    frame: pd.DataFrame, model: Any, on_invalid: OnInvalid
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(valid, quarantined)``, both with a fresh RangeIndex (as they read back from Parquet)."""
    valid, quarantined = validate(frame, model, on_invalid=on_invalid)
    return valid.reset_index(drop=True), quarantined.reset_index(drop=True)


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


def parquet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every object column Arrow cannot store as one type turned into JSON text
    (quarantined rows keep the wrong-typed values that got them quarantined)."""
    fixes: dict[str, pd.Series] = {}
    for name in frame.columns:
        series = frame[name]
        if series.dtype != object:
            continue
        try:
            pa.array(series.to_numpy(), from_pandas=True)
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            text = [
                None
                if v is None or (isinstance(v, float) and v != v)
                else v
                if isinstance(v, str)
                else json.dumps(_jsonable(v), default=str)
                for v in series.to_numpy()
            ]
            fixes[name] = pd.Series(text, index=frame.index, dtype="str")
    return frame.assign(**fixes) if fixes else frame


# -- the load ----------------------------------------------------------------------------------


def _warn(message: str, category: type[Warning] = DataQualityWarning) -> None:
    warnings.warn(message, category, stacklevel=_caller_level())


def cache_key(ctx: LoadContext, spec: LoadSpec) -> str:
    """The entry key: host + operation + normalised params (+ ``on_invalid`` unless the default)
    + the account's fingerprint."""
    assert ctx.cache is not None
    params = dict(spec.params)
    if spec.on_invalid != "quarantine":  # other modes keep other rows: their own entries
        params["on_invalid"] = spec.on_invalid
    return ctx.cache.key(
        host=ctx.api.cache_host(spec.host),
        operation=spec.operation,
        params=params,
        account=ctx.api.fingerprint,
    )


@dataclass(frozen=True)
class Result:
    """The valid frame, the load's report, and the valid member frames (analytics)."""

    frame: pd.DataFrame
    info: LoadInfo
    members: dict[str, pd.DataFrame]
    meta: dict[str, Any]


_OWN_EXTRAS = ("quarantine", "media")


def ids_in(values: pd.Series, ids: Iterable[Any]) -> np.ndarray:
    """Boolean mask of ``values`` found in ``ids``, computed by Arrow.

    ``Series.isin`` on pandas' string dtype takes seconds for millions of media rows; Arrow's
    ``is_in`` takes a tenth of a second.

    >>> ids_in(pd.Series(["a", "b", None], dtype="str"), ["b"]).tolist()
    [False, True, False]
    """
    value_set = pa.array(list(ids) if not isinstance(ids, pd.Series) else ids, type=pa.string())
    mask = pc.is_in(pa.array(values, type=pa.string()), value_set=value_set)
    return np.asarray(mask.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)


def _from_cache(ctx: LoadContext, spec: LoadSpec, key: str) -> Result | None:
    """The fresh cache entry of ``spec`` as a Result (zero requests), else None."""
    assert ctx.cache is not None
    entry = ctx.cache.read(spec.resource, key)
    if entry is None or not ctx.cache.is_fresh(entry):
        return None
    meta = entry.meta
    info = LoadInfo(
        resource=spec.resource,
        rows=len(entry.frame),
        quarantined=int(meta.get("quarantined") or 0),
        requests=0,
        from_cache=True,
        fetched_at=entry.fetched_at,
        total=meta.get("total"),
        warnings=tuple(meta.get("load_warnings") or ()),
        quarantine=entry.extra.get("quarantine", pd.DataFrame()),
        media=entry.extra.get("media"),
        key=key,
    )
    ctx.record(info)
    logger.debug("cache hit %s/%s (%d rows)", spec.resource, key, info.rows)
    stored = {k: v for k, v in entry.extra.items() if k not in _OWN_EXTRAS}
    return Result(entry.frame, info, stored, dict(meta))


@dataclass
class _Checked:
    """A fetched result after validation: valid rows, valid members, quarantine, messages."""

    valid: pd.DataFrame
    members: dict[str, pd.DataFrame]
    quarantined: pd.DataFrame
    messages: list[str]
    media: pd.DataFrame | None


def _check(spec: LoadSpec, loaded: Loaded) -> _Checked:
    """Validate the frame and each member (``spec.on_invalid``); report quarantined and missing
    rows. Quarantined rows of member frames carry a ``_member`` column."""
    messages = list(loaded.warnings)
    fetched = len(loaded.frame)
    valid, quarantined = validate_frame(loaded.frame, spec.model, spec.on_invalid)
    members: dict[str, pd.DataFrame] = {}
    if loaded.members:
        parts = [quarantined.assign(_member=spec.resource)] if len(quarantined) else []
        for name, (member, model) in loaded.members.items():
            members[name], bad = validate_frame(member, model, spec.on_invalid)
            fetched += len(member)
            if len(bad):
                parts.append(bad.assign(_member=name))
        if parts:
            quarantined = pd.concat(parts, ignore_index=True)
    if len(quarantined):
        messages.append(
            f"{spec.resource}: {len(quarantined)} of {fetched} rows quarantined "
            "(see client.last_load.quarantine, column _quarantine_reason)"
        )
    if loaded.expected is not None and fetched < loaded.expected and not loaded.warnings:
        message = (
            f"{spec.resource}: {fetched} rows received but the server's total promises "
            f"{loaded.expected}; {loaded.expected - fetched} are missing"
        )
        messages.append(message)
        _warn(message)
    media = loaded.media
    if media is not None and len(quarantined) and "ListingId" in media:
        media = media.loc[ids_in(media["ListingId"], valid["ListingId"])].reset_index(drop=True)
    return _Checked(valid, members, quarantined, messages, media)


def _store(
    ctx: LoadContext, spec: LoadSpec, key: str, loaded: Loaded, checked: _Checked, at: datetime
) -> None:
    """Write the valid frame with its companions; a cache that cannot be written is a warning."""
    assert ctx.cache is not None
    companions: dict[str, pd.DataFrame] = {"quarantine": parquet_safe(checked.quarantined)}
    if checked.media is not None:
        companions["media"] = checked.media
    companions.update(checked.members)
    meta = {
        "host": ctx.api.cache_host(spec.host),
        "operation": spec.operation,
        "params": dict(spec.params),
        "account": ctx.api.fingerprint,
        "fetched_at": at,
        "total": loaded.total,
        "requests": loaded.requests,
        "load_warnings": list(checked.messages),
        **loaded.meta,
    }
    try:
        ctx.cache.write(spec.resource, key, checked.valid, meta, extra_frames=companions)
    except (OSError, CacheLockTimeout, pa.ArrowException) as exc:
        _warn(
            f"could not store {spec.resource} in the cache at {ctx.cache.root} "
            f"({type(exc).__name__}: {exc}); the data is returned uncached",
            CacheWarning,
        )


def load(ctx: LoadContext, spec: LoadSpec, fetch: Callable[[], Loaded]) -> Result:
    """Cache lookup, else fetch + validate + store; returns the valid frame and its LoadInfo.

    A fresh cache entry answers with zero requests (``spec.refresh`` skips it). On a miss the
    fetched frame (and each member frame) is validated (``spec.on_invalid``), rows short of the
    server's total are reported, and the result is written with its ``quarantine``, ``media``
    and member companions.
    """
    key = cache_key(ctx, spec) if ctx.cache is not None else None
    if key is not None and not spec.refresh:
        cached = _from_cache(ctx, spec, key)
        if cached is not None:
            return cached
    fetched_at = datetime.now(UTC)

    def run(checkpoint: Checkpoint | None) -> Loaded:
        ctx.checkpoint = checkpoint
        try:
            return fetch()
        finally:
            ctx.checkpoint = None

    scope = {"resource": spec.resource, "operation": spec.operation, "key": key}
    loaded, checkpoint = run_resumable(
        ctx.cache, spec.resource, key, scope, refresh=spec.refresh, run=run
    )
    resumed = checkpoint.resumed_from if checkpoint is not None else None
    checked = _check(spec, loaded)
    info = LoadInfo(
        resource=spec.resource,
        rows=len(checked.valid),
        quarantined=len(checked.quarantined),
        requests=loaded.requests,
        from_cache=False,
        fetched_at=resumed or fetched_at,  # a resumed load's data is as old as its first page
        total=loaded.total,
        warnings=tuple(checked.messages),
        quarantine=checked.quarantined,
        media=checked.media,
        key=key,
        resumed_requests=checkpoint.reused if checkpoint is not None and resumed else 0,
        resumed_from=resumed,
    )
    if key is not None:
        _store(ctx, spec, key, loaded, checked, info.fetched_at)
    if checkpoint is not None:
        checkpoint.done()  # stored (or returned uncached): nothing left to resume
    ctx.record(info)
    return Result(checked.valid, info, checked.members, dict(loaded.meta))
