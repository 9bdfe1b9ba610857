"""The loaders' shared types and helpers: where the cache lives, what every load, sync and plan
takes (:class:`Session`), what a fetch gives back (:class:`Loaded`), what a load returns
(:class:`LoadResult`: its frames and its :class:`LoadInfo`), validation with a quarantine, and
Parquet-safe frames.

The load itself (cache lookup, fetch, validate, store) reads top to bottom in
:mod:`realtyframes.loaders._load`.

>>> valid, quarantined = validate_frame(frame, Listing, "quarantine")  # doctest: +SKIP
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from realtyframes._environment import SETTING_VARIABLES
from realtyframes.api import ApiClient
from realtyframes.cache import ParquetCache
from realtyframes.schemas import QUARANTINE_REASON, OnInvalid, validate

logger = logging.getLogger("realtyframes.loaders")

__all__ = [
    "QUARANTINE_REASON",
    "LoadInfo",
    "LoadResult",
    "Loaded",
    "Session",
    "default_cache_dir",
    "ids_in",
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


def _never() -> bool:
    return False


@dataclass(frozen=True)
class Session:
    """What every load, sync, plan and run record takes, explicitly: the HTTP layer, the cache
    (None: ``cache=False``), progress bars (None: on in notebooks and terminals), what loads do
    with invalid rows, whether the source can have changed since it was last synced
    (``unchanged()``: True while a client's embedded sandbox has not started in this process),
    and a source's own sync (``sync``: a RESO source's replication, called by
    :func:`sync_listings` with its arguments; None: the listings row's declared sync).
    ``rf.Client`` holds one (``client.session``); its calls return results, never side channels.

    >>> result = run_load(client.session, ENDPOINTS["listings"], {"City": "Miami"})  # doctest: +SKIP
    >>> result.frame, result.requests  # doctest: +SKIP
    """

    api: ApiClient
    cache: ParquetCache | None
    progress: bool | None = None
    on_invalid: OnInvalid = "quarantine"
    unchanged: Callable[[], bool] = field(default=_never, repr=False)
    sync: Callable[..., LoadResult] | None = field(default=None, repr=False)

    @property
    def source_unchanged(self) -> bool:
        """True while the source's data are those the cache key names, as last synced."""
        return self.unchanged()

    def own_cache(self, operation: str) -> ParquetCache:
        """The cache, or a ValueError naming ``operation`` when the session keeps none."""
        if self.cache is None:
            raise ValueError(
                f"{operation}: this client keeps no cache (it was made with cache=False)"
            )
        return self.cache


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


# -- results ---------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class LoadResult(LoadInfo):
    """What a load or a sync returns: its :class:`LoadInfo` (counts, quarantine, media, changes)
    plus the valid ``frame``, the valid ``members`` (analytics) and the entry's ``meta``.
    ``info`` is the report alone (``client.last_load``), which holds no frame of rows.

    >>> result = run_load(session, ENDPOINTS["contacts"], {})  # doctest: +SKIP
    >>> result.frame, result.requests, result.info  # doctest: +SKIP
    """

    frame: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    members: dict[str, pd.DataFrame] = field(default_factory=dict, repr=False)
    meta: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def info(self) -> LoadInfo:
        """The load's report without its frames of rows."""
        return LoadInfo(**{f.name: getattr(self, f.name) for f in fields(LoadInfo)})


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
