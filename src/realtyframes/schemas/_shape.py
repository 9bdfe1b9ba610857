"""Shaping: raw API bodies -> typed DataFrames, without decoding pages into Python dicts.

The hot path joins the page bodies as newline-delimited JSON and parses them (in runs of about
32 MB) with ``pyarrow.json.read_json`` against an explicit schema derived from the pandera models (fields the
server adds are inferred and kept), flattens the records in Arrow, pulls ``coordinates`` and
``Media`` out, casts to the target types in Arrow (fixed-category dictionaries for enumerations,
integers from JSON numbers) and converts to pandas once. A body Arrow cannot parse against the
schema (a field changed type) goes through a tolerant per-page path: its columns of the wrong type
stay ``object`` so that :func:`~realtyframes.schemas.validate` names them and quarantines their rows.

>>> listings, media = listings_from_pages(page_bodies)  # doctest: +SKIP
>>> changes = changes_from_pages(change_bodies)  # doctest: +SKIP
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from realtyframes.errors import BadResponseError
from realtyframes.schemas._analytics import (
    ANALYTICS_MODELS,
    UTM_DIMENSIONS,
    AnalyticsTimeline,
    AnalyticsUtm,
)
from realtyframes.schemas._analytics_result import BREAKDOWNS, Analytics
from realtyframes.schemas._contacts import ContactActivity
from realtyframes.schemas._quarantine import (
    SchemaDriftWarning,
    target_dtypes,
)
from realtyframes.schemas._shape_parse import (
    _ARRAY_BODY,
    _CHANGE_SPEC,
    _CONTACT_SPEC,
    _POOL,
    _STR,
    Model,
    _assemble,
    _child_columns,
    _decode,
    _listing_spec,
    _order,
    _PageInfo,
    _parse_bodies,
    _parse_parts,
    _Spec,
    _typed_frame,
    _Unit,
)

__all__ = [
    "Shaped",
    "activity_from_json",
    "analytics_from_json",
    "changes_from_pages",
    "contacts_from_pages",
    "give_back_memory",
    "latest_per_listing",
    "listings_from_pages",
    "listings_from_record_batches",
    "listings_from_records",
    "shape_pages",
]


# --- assembling -----------------------------------------------------------------------------------


def _split_bodies(pages: Sequence[bytes | bytearray | memoryview | str]) -> list[bytes]:
    out = []
    for page in pages:
        body = page.encode() if isinstance(page, str) else bytes(page)
        if body and not body.isspace():
            out.append(body)
    return out


def _concat(
    units: list[_Unit], spec: _Spec
) -> tuple[pd.DataFrame, pd.DataFrame | None, np.ndarray | None]:
    dtypes = target_dtypes(spec.model)
    if not units:
        empty = _order(pd.DataFrame(index=pd.RangeIndex(0)), spec.columns, dtypes)
        child = None
        if spec.child_model is not None:
            child = _order(
                pd.DataFrame(index=pd.RangeIndex(0)),
                _child_columns(spec),
                target_dtypes(spec.child_model),
            )
        return empty, child, np.zeros(0, dtype=np.int64)
    if len(units) == 1:
        u = units[0]
        return u.frame, u.child, u.parents
    frames, children, parents = [], [], []
    offset = 0
    for u in units:
        frames.append(u.frame)
        if u.child is not None and u.parents is not None:
            children.append(u.child)
            parents.append(u.parents + offset)
        offset += len(u.frame)
    frame = _settle_extras(_order(pd.concat(frames, ignore_index=True), spec.columns, dtypes), spec)
    if spec.child_model is None:
        return frame, None, None
    child_cols = _child_columns(spec)
    child_dtypes = target_dtypes(spec.child_model)
    if children:
        child = _order(pd.concat(children, ignore_index=True), child_cols, child_dtypes)
        return frame, child, np.concatenate(parents)
    empty = _order(pd.DataFrame(index=pd.RangeIndex(0)), child_cols, child_dtypes)
    return frame, empty, np.zeros(0, dtype=np.int64)


def _value_kind(v: Any) -> str:
    if isinstance(v, bool | np.bool_):
        return "bool"
    if isinstance(v, int | float | np.integer | np.floating):
        return "number"
    if isinstance(v, str):
        return "str"
    if isinstance(v, dict):
        return "object"
    return "array"


def _json_text(v: Any) -> Any:
    if v is None or isinstance(v, str) or (isinstance(v, float) and v != v):
        return v
    if isinstance(v, np.ndarray):
        v = v.tolist()
    return json.dumps(v, default=str)


def _settle_extras(frame: pd.DataFrame, spec: _Spec) -> pd.DataFrame:
    """An added field whose type differs between parts becomes JSON text (Parquet needs one type)."""
    dtypes = target_dtypes(spec.model)
    fixes = {}
    for name in frame.columns:
        if name in dtypes or frame[name].dtype != object:
            continue
        values = frame[name].to_numpy()
        kinds = {
            _value_kind(v)
            for v in values
            if v is not None and not (isinstance(v, float) and v != v)
        }
        if len(kinds) > 1:
            fixes[name] = pd.Series([_json_text(v) for v in values], index=frame.index, dtype=_STR)
            warnings.warn(
                f"{spec.model.__name__}: added field {name!r} arrives as {' and '.join(sorted(kinds))}; "
                "it is kept as JSON text",
                SchemaDriftWarning,
                stacklevel=5,
            )
    return frame.assign(**fixes) if fixes else frame


def _wrap_arrays(bodies: list[bytes], key: str) -> list[bytes]:
    prefix = b'{"' + key.encode() + b'":'
    return [prefix + b + b"}" if _ARRAY_BODY.match(b) else b for b in bodies]


def _duplicates(ids: pd.Series) -> bool:
    """Whether ``ids`` has a value twice (nulls count as equal). An Arrow-backed column is
    counted in Arrow (pandas' ``duplicated`` would make a Python string of every id)."""
    if isinstance(ids.dtype, pd.StringDtype) and ids.dtype.storage == "pyarrow":
        values = pa.chunked_array(pa.array(ids))  # the column's own buffers
        distinct = pc.count_distinct(values, mode="all", memory_pool=_POOL).as_py()
        return bool(distinct < len(values))
    return bool(ids.duplicated().any())


def latest_per_listing(
    listings: pd.DataFrame, media: pd.DataFrame | None = None, *, parents: np.ndarray | None = None
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """One row per ListingId: the newest ``ModificationTimestamp`` wins (ties: the later row).

    Media of dropped rows are dropped with them when ``parents`` (the listing row of each media
    row) is given, else media are kept for the ListingIds that remain. Not a quarantine: a listing
    seen twice while paging is one listing.

    >>> listings, media = latest_per_listing(listings, media)  # doctest: +SKIP
    """
    ids = listings["ListingId"]
    if not _duplicates(ids):
        return listings, media
    stamp = listings["ModificationTimestamp"]
    if not isinstance(stamp.dtype, pd.DatetimeTZDtype):
        stamp = pd.to_datetime(stamp.astype(object), utc=True, errors="coerce", format="ISO8601")
    order = pd.DataFrame(
        {"id": ids.to_numpy(), "t": stamp.to_numpy(), "pos": np.arange(len(listings))}
    )
    order = order.sort_values(["t", "pos"], na_position="first", kind="stable")
    keep_pos = np.sort(order.drop_duplicates("id", keep="last")["pos"].to_numpy())
    keep_pos = np.union1d(keep_pos, np.flatnonzero(ids.isna().to_numpy()))  # null ids: validation's
    kept = listings.iloc[keep_pos].reset_index(drop=True)
    if media is None:
        return kept, None
    if parents is not None and len(parents) == len(media):
        mask = np.isin(parents, keep_pos)
    else:
        mask = media["ListingId"].isin(set(kept["ListingId"].dropna())).to_numpy()
    return kept, media.loc[mask].reset_index(drop=True)


@dataclass(frozen=True)
class Shaped:
    """Everything shaping learnt from a set of bodies.

    - ``frame``: the resource's rows (listings: one per ListingId).
    - ``media``: the listings' Media rows (``None`` for other resources).
    - ``pages``: one row per non-empty body, in order: ``total``, ``offset``, ``limit`` (as the
      server sent them; null for array or single-record bodies) and ``records`` (objects in it).
    - ``merged``: rows dropped as older copies of a ListingId seen twice (paging drift).
    """

    frame: pd.DataFrame
    media: pd.DataFrame | None
    pages: pd.DataFrame
    merged: int = 0


_KEYS = {"listings": "listings", "changes": "changes", "contacts": "contacts"}


def _pages_frame(info: list[_PageInfo]) -> pd.DataFrame:
    cols = ("total", "offset", "limit", "records")
    data = {c: pd.array([row[k] for row in info], dtype="Int64") for k, c in enumerate(cols)}
    return pd.DataFrame(data, index=pd.RangeIndex(len(info)))


def shape_pages(
    pages: Sequence[bytes],
    resource: str = "listings",
    *,
    detail: bool = False,
    records: bool = False,
) -> Shaped:
    """Raw bodies of one resource -> :class:`Shaped` (frame, media, per-page counts).

    ``resource``: ``"listings"``, ``"changes"`` or ``"contacts"``. ``records=True``: each body is
    one record (a listing detail) instead of a page. The loaders use this to check the row count
    against the server's ``total`` and to spot short pages; the ``*_from_pages`` functions below
    are the same without the counts.

    >>> shaped = shape_pages(bodies, "listings")  # doctest: +SKIP
    >>> shaped.pages["records"].sum() - shaped.merged == len(shaped.frame)  # doctest: +SKIP
    True
    """
    if resource not in _KEYS:
        raise ValueError(f"resource: unknown value {resource!r}; allowed: {', '.join(_KEYS)}")
    spec = {"changes": _CHANGE_SPEC, "contacts": _CONTACT_SPEC}.get(resource) or _listing_spec(
        detail
    )
    key = None if records else _KEYS[resource]
    bodies = _split_bodies(pages)
    if key:
        bodies = _wrap_arrays(bodies, key)
    units, info = _parse_bodies(bodies, spec, key)
    frame, media, parents = _concat(units, spec)
    merged = 0
    if resource == "listings":
        before = len(frame)
        frame, media = latest_per_listing(frame, media, parents=parents)
        merged = before - len(frame)
    return Shaped(frame, media, _pages_frame(info), merged)


def listings_from_pages(
    pages: Sequence[bytes], *, detail: bool = False
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Search-result page bodies -> ``(listings, media)``, one listing row per ListingId.

    ``pages``: raw bodies of ``GET /v1/listings`` (``{"total", "offset", "limit", "listings"}``);
    a body that is a JSON array is read as the array of listings. ``detail=True`` also gives every
    detail column (null where absent). Duplicates keep the newest ``ModificationTimestamp``.
    Columns: the spec's field names, ``coordinates`` as ``Latitude``/``Longitude``, then any field
    the server added. ``media``: ListingId, Order, MediaURL, ShortDescription.

    >>> listings, media = listings_from_pages([r.content for r in responses])  # doctest: +SKIP
    """
    shaped = shape_pages(pages, "listings", detail=detail)
    assert shaped.media is not None
    return shaped.frame, shaped.media


def listings_from_records(
    bodies: Sequence[bytes], *, detail: bool = True
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Listing-detail bodies (``GET /v1/listings/{ListingId}``, one listing object each) -> frames.

    >>> listings, media = listings_from_records([r.content for r in detail_responses])  # doctest: +SKIP
    """
    shaped = shape_pages(bodies, "listings", detail=detail, records=True)
    assert shaped.media is not None
    return shaped.frame, shaped.media


def _load_libc() -> Any:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return libc if libc is not None and hasattr(libc, "malloc_trim") else None


#: glibc, whose ``malloc_trim`` gives freed memory back to the system (None elsewhere).
_LIBC = _load_libc()


def give_back_memory() -> None:
    """Give freed memory back to the system, not only to the allocators (glibc's
    ``malloc_trim``; pyarrow's pool). A details batch's raw bodies were allocated by the
    fetching threads, each in its own glibc arena, and stay resident there otherwise (#33: a
    details load of 12,988 listings peaked 15-20 MB lower).

    >>> give_back_memory()
    """
    pa.default_memory_pool().release_unused()
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def listings_from_record_batches(
    batches: Iterable[Sequence[bytes]], *, detail: bool = True
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`listings_from_records` for bodies that arrive in batches (e.g. a generator that
    fetches them): each batch is parsed into Arrow columns before the next is asked for, so the
    raw bodies of one batch only are held at a time; the columns of all become pandas once, at
    the end (no frame per batch, no concatenation). Same result as one call on all the bodies.

    >>> listings, media = listings_from_record_batches(fetch(ids[i : i + 2000]) for i in starts)  # doctest: +SKIP
    """
    spec = _listing_spec(detail)
    parts: list[pa.Table | _Unit] = []  # Arrow tables: converted to pandas once, at the end
    for batch in batches:
        parts.extend(_parse_parts(_split_bodies(batch), spec, None, []))
        del batch  # before the next batch is fetched
        give_back_memory()
    frame, media, parents = _concat(_assemble(parts, spec), spec)
    frame, media = latest_per_listing(frame, media, parents=parents)
    give_back_memory()  # what the conversion freed, before the caller goes on (validation, the cache)
    assert media is not None
    return frame, media


def changes_from_pages(pages: Sequence[bytes]) -> pd.DataFrame:
    """Change-feed page bodies (``{"total", "offset", "limit", "changes"}``) -> one row per change.

    >>> changes = changes_from_pages([r.content for r in responses])  # doctest: +SKIP
    """
    return shape_pages(pages, "changes").frame


def contacts_from_pages(pages: Sequence[bytes]) -> pd.DataFrame:
    """Contact page bodies (``{"total", ..., "contacts"}``) or legacy arrays -> one row per contact.

    ``links`` becomes ``links_facebook`` ... ``links_service``, ``registration`` becomes
    ``registration_date``; ``phones`` and ``spokenLanguages`` are list columns. A single contact
    body (``GET /v1/contacts/{id}``) can be passed as ``b"[" + body + b"]"``.

    >>> contacts = contacts_from_pages([r.content for r in responses])  # doctest: +SKIP
    """
    return shape_pages(pages, "contacts").frame


def _loads(obj: Mapping[str, Any] | bytes | str, what: str) -> Any:
    return _decode(obj, what) if isinstance(obj, bytes | bytearray | str) else obj


def activity_from_json(obj: Mapping[str, Any] | bytes) -> pd.DataFrame:
    """``{"contactId", "activity": [...]}`` -> long frame, one row per event, with ``contactId``.

    >>> activity_from_json({"contactId": "c1", "activity": [{"id": "a1", "type": "call",
    ...     "timestamp": "2025-01-02T15:00:00Z", "description": "Outbound call"}]}).shape
    (1, 5)
    """
    data = _loads(obj, "the activity body")
    if not isinstance(data, Mapping):
        raise BadResponseError(f"the activity body is a JSON {type(data).__name__}, not an object")
    events = data.get("activity") or []
    if not isinstance(events, list):
        raise BadResponseError("the activity body's 'activity' member is not a list")
    contact = data.get("contactId")
    rows = [
        {"contactId": contact, **(e if isinstance(e, dict) else {"description": e})} for e in events
    ]
    return _typed_frame(rows, ContactActivity, tuple(target_dtypes(ContactActivity)))


def _items_frame(items: Any, model: Model, what: str) -> pd.DataFrame:
    if items is None:
        items = []
    if not isinstance(items, list):
        raise BadResponseError(f"analytics member {what!r} is not a list")
    rows = [i if isinstance(i, dict) else {"name": i} for i in items]
    return _typed_frame(rows, model, tuple(target_dtypes(model)))


def analytics_from_json(obj: Mapping[str, Any] | bytes) -> Analytics:
    """An analytics result (``GET /v1/analytics``) -> :class:`Analytics`, one frame per member.

    >>> a = analytics_from_json({"period": "7d", "overview": {"visitors": 10}})
    >>> int(a.overview.loc[0, "visitors"]), len(a.timelines)
    (10, 0)
    """
    data = _loads(obj, "the analytics body")
    if not isinstance(data, Mapping):
        raise BadResponseError(f"the analytics body is a JSON {type(data).__name__}, not an object")
    overview = data.get("overview") or {}
    if not isinstance(overview, Mapping):
        raise BadResponseError("analytics member 'overview' is not an object")
    model = ANALYTICS_MODELS["overview"]
    frames: dict[str, pd.DataFrame] = {
        "overview": _typed_frame([dict(overview)], model, tuple(target_dtypes(model)))
    }
    timeline_rows: list[dict[str, Any]] = []
    timelines = data.get("timelines") or {}
    if not isinstance(timelines, Mapping):
        raise BadResponseError("analytics member 'timelines' is not an object")
    for metric, points in timelines.items():
        for p in points or []:
            timeline_rows.append({"metric": metric, **(p if isinstance(p, dict) else {"value": p})})
    frames["timelines"] = _typed_frame(
        timeline_rows, AnalyticsTimeline, tuple(target_dtypes(AnalyticsTimeline))
    )
    for name in BREAKDOWNS:
        frames[name] = _items_frame(data.get(name), ANALYTICS_MODELS[name], name)
    utm = data.get("utm") or {}
    if not isinstance(utm, Mapping):
        raise BadResponseError("analytics member 'utm' is not an object")
    utm_rows: list[dict[str, Any]] = []
    for dimension in list(UTM_DIMENSIONS) + [d for d in utm if d not in UTM_DIMENSIONS]:
        for item in utm.get(dimension) or []:
            utm_rows.append(
                {"dimension": dimension, **(item if isinstance(item, dict) else {"name": item})}
            )
    frames["utm"] = _typed_frame(utm_rows, AnalyticsUtm, tuple(target_dtypes(AnalyticsUtm)))
    return Analytics(period=str(data.get("period", "")), **frames)
