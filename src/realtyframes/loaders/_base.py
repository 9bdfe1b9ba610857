"""The loaders' shared types and helpers: where the cache lives, what every load, sync and plan
takes (:class:`Session`), the types of the endpoint table (:class:`Endpoint`: an operation of the
spec and how it is loaded; :class:`Sync`: how a list endpoint's collection is kept current),
what a fetch gives back (:class:`Loaded`), what a load returns (:class:`LoadResult`: its frames
and its :class:`LoadInfo`), validation with a quarantine, and Parquet-safe frames. The table is
:data:`~realtyframes.loaders.endpoints.ENDPOINTS`; the load reads top to bottom in ``_load``.

>>> from realtyframes.loaders import ENDPOINTS
>>> ENDPOINTS["listing"].call({"ListingId": "A1"}, {}).path
'/v1/listings/A1'
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from realtyframes._environment import SETTING_VARIABLES
from realtyframes.api import ApiClient, Host
from realtyframes.cache import Checkpoint, ParquetCache
from realtyframes.loaders._checkers import Call, Operation, PreparedRequest, prepare_call
from realtyframes.schemas import QUARANTINE_REASON, OnInvalid, validate

logger = logging.getLogger("realtyframes.loaders")

__all__ = [
    "QUARANTINE_REASON",
    "Call",
    "Endpoint",
    "Fetcher",
    "LoadInfo",
    "LoadResult",
    "Loaded",
    "Session",
    "Shaper",
    "Sync",
    "default_cache_dir",
    "ids_in",
    "parquet_safe",
    "validate_frame",
]

_APP = "realtyframes"
_HOUR = timedelta(hours=1)


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


# -- the endpoint table's types ----------------------------------------------------------------

Shaper = Callable[[Sequence[bytes]], "Loaded"]
Fetcher = Callable[["Session", "Endpoint", "Call", Checkpoint | None], "Loaded"]


@dataclass(frozen=True)
class Sync:
    """How a list endpoint's whole collection is kept current (``Endpoint.sync``; the runner is
    :mod:`realtyframes.loaders._sync_steps`).

    ``key``: the records' identity; ``cursor``: (the field a new record's entry is read from, the
    field its last change is read from): their newest values are the watermarks, the ``Since`` of
    the next search and of the change feed; ``partition``: (parameter, values): one search per
    value (each status); ``terminal``: the value of ``status`` that leaves the feed (a record in
    it never changes again); ``feed``: the change feed's endpoint and ``feed_ids`` its id-list
    parameter, asked ``chunk`` ids at a time (the spec's 100); ``apply``: the step that applies
    changes to the rows -> (rows, touched ids, ids whose detail must be read: the ``closing``
    ones, from the endpoint's ``details``); ``sort``: a static order to page in.
    """

    key: str
    cursor: tuple[str, str]
    partition: tuple[str, tuple[str, ...]]
    status: str
    terminal: str
    feed: Endpoint
    feed_ids: str
    chunk: int
    apply: Callable[[Any, Any], tuple[Any, list[str], list[str]]]
    sort: str


@dataclass(frozen=True)
class Endpoint:
    """One operation of the spec (:data:`realtyframes.loaders.OPERATIONS`: name, host, path, path
    parameter, validator) and how the client side loads it.

    Loader endpoints (``resource`` set) also have the ``model`` of their rows, the ``shape`` of
    raw bodies into frames, the ``fetch`` strategy, the cache folder ``resource`` and its ``ttl``
    (None: never expires). ``item_key``: the records' member of a page (``paged``). ``options``:
    the loader's own arguments, defaults and checks; ``refused``: spec parameters the loader
    manages itself (name -> (why, instead)); ``key``: the cache key's parameters from the
    validated query (default: the query). ``echo``: (field of the body, the request's
    parameter) an answer must agree on. ``details``: the endpoint each record's detail is read
    from (the ``details`` option). ``sync``: how ``sync_listings`` keeps it current.
    """

    operation: Operation
    item_key: str | None = None
    model: Any = None
    shape: Shaper | None = None
    fetch: Fetcher | None = None
    resource: str | None = None
    ttl: timedelta | None = _HOUR
    paged: bool = False
    options: Mapping[str, tuple[Any, Callable[[str, Any], Any]]] = field(default_factory=dict)
    refused: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    key: Callable[[Mapping[str, str]], dict[str, Any]] | None = None
    echo: tuple[str, str] | None = None
    details: Endpoint | None = None
    sync: Sync | None = None

    @property
    def name(self) -> str:
        """The operation's name (``listings``)."""
        return self.operation.name

    @property
    def host(self) -> Host:
        """The host the operation lives on (``base``, ``legacy``)."""
        return self.operation.host

    @property
    def path(self) -> str:
        """The path template (``/v1/listings/{}``)."""
        return self.operation.path

    @property
    def path_param(self) -> str | None:
        """The spec name of the identifier in the path, if any (``ListingId``)."""
        return self.operation.path_param

    @property
    def summary(self) -> str:
        """One line on what the operation returns."""
        return self.operation.summary

    def at(self, identifier: str) -> str:
        """The path of the resource ``identifier`` names (``path_param`` endpoints).

        >>> from realtyframes.loaders import ENDPOINTS
        >>> ENDPOINTS["contact_activity"].at("c 1")
        '/v1/contacts/c%201/activity'
        """
        return self.operation.at(identifier)

    def prepare(self, params: Mapping[str, Any] | None = None) -> PreparedRequest:
        """The validated request (path filled in); QueryError before any I/O."""
        return self.operation.prepare(params)

    def call(self, params: Mapping[str, Any], options: Mapping[str, Any]) -> Call:
        """A validated load: request, checked loader options and the cache key's parameters
        (:func:`~realtyframes.loaders._checkers.prepare_call`)."""
        return prepare_call(self, params, options)


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
