"""How the loaders fetch and shape each kind of endpoint (used by the declarations in
:mod:`realtyframes.loaders.endpoints`).

A *shaper* turns raw bodies into a :class:`~realtyframes.loaders._base.Loaded` (frames, no counts
yet); a *fetcher* makes the requests of one :class:`Call` and returns the shaped result with its
counts, given the load's :class:`Session` and its checkpoint (None: none; pages and details it
holds are not asked for again, the others are saved in it): :func:`fetch_one` (one request), :func:`fetch_paged` (a list operation, every page;
``max_results``; with ``details``, each record's detail from the endpoint its row declares as
``details``), :func:`fetch_changes` (id chunks, each paged) and :func:`fetch_or_empty` (a 404
that means "none").

>>> shape_contacts([b'{"total": 1, "contacts": [{"id": "c1"}]}']).frame["id"].tolist()
['c1']
"""

from __future__ import annotations

import hashlib
import json
import logging
import operator
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from realtyframes._tuning import DETAIL_BATCH, SHAPE_BATCH
from realtyframes.api import MAX_LISTING_IDS
from realtyframes.cache import Checkpoint
from realtyframes.errors import NotFoundError
from realtyframes.loaders._answers import check_echo, echo_check
from realtyframes.loaders._base import Call, Endpoint, Loaded, Session
from realtyframes.loaders._page_info import PAGE_SIZE
from realtyframes.loaders._paging import _Bar, fetch_pages, fetch_pages_many, progress_enabled
from realtyframes.schemas import (
    ANALYTICS_MODELS,
    Shaped,
    activity_from_json,
    analytics_from_json,
    changes_from_pages,
    contacts_from_pages,
    latest_per_listing,
    listings_from_record_batches,
    listings_from_records,
    shape_pages,
)

logger = logging.getLogger("realtyframes.loaders")

__all__ = [
    "CHANGE_KEY",
    "MAX_IDS_PER_REQUEST",
    "fetch_changes",
    "fetch_details",
    "fetch_one",
    "fetch_or_empty",
    "fetch_paged",
    "ids_label",
    "with_details",
]

#: ListingIds one change-feed request carries (the spec's limit: :data:`realtyframes.api.MAX_LISTING_IDS`).
MAX_IDS_PER_REQUEST = MAX_LISTING_IDS
#: A change record's identity (the same record read twice while paging is kept once).
CHANGE_KEY = ["ListingId", "ChangeType", "ChangeTimestamp"]


# -- shapers: raw bodies -> frames ------------------------------------------------------------------


def _dedupe(frame: pd.DataFrame, key: str | list[str]) -> pd.DataFrame:
    """One row per ``key`` (a record read twice while paging is kept once, the last copy)."""
    keys = [key] if isinstance(key, str) else key
    again = frame[keys].duplicated(keep="last") & frame[keys].notna().all(axis=1)
    return frame.loc[~again].reset_index(drop=True) if again.any() else frame


def shape_listings(bodies: Sequence[bytes]) -> Loaded:
    """Search pages -> listings (one per ListingId) and their media."""
    shaped = shape_pages(bodies, "listings")
    return Loaded(shaped.frame, 0, media=shaped.media, meta={"merged": shaped.merged})


class _EarlyShape:
    """Shapes a search's pages in order, :data:`SHAPE_BATCH` at a time, as they arrive (the
    calling thread, while the workers fetch the others: ``fetch_pages``'s ``on_page``), so that
    little is left to shape after the last page. :meth:`finish` gives what
    :func:`shape_listings` gives on all the pages, or runs it when the pages it shaped are not
    the first of those (drift re-reads come after them and are shaped at the end)."""

    def __init__(self, start: int) -> None:
        self.next = start  # the offset of the first page not shaped yet
        self.waiting: dict[int, bytes] = {}
        self.bodies: list[bytes] = []
        self.parts: list[Shaped] = []

    def __call__(self, offset: int, body: bytes) -> None:
        if offset >= self.next:
            self.waiting.setdefault(offset, body)
        batch = SHAPE_BATCH.get() * PAGE_SIZE  # REALTYFRAMES_SHAPE_BATCH pages
        step = range(self.next, self.next + batch, PAGE_SIZE)
        while all(o in self.waiting for o in step):
            bodies = [self.waiting.pop(o) for o in step]
            self.parts.append(shape_pages(bodies, "listings"))
            self.bodies.extend(bodies)
            self.next = step.stop
            step = range(self.next, self.next + batch, PAGE_SIZE)

    def finish(self, pages: Sequence[bytes]) -> Loaded:
        done = len(self.bodies)
        shaped = len(pages) >= done > 0 and all(map(operator.is_, pages, self.bodies))
        rest = [shape_pages(pages[done:], "listings")] if len(pages) > done else []
        parts = self.parts + rest if shaped else []
        first = parts[0].frame if parts else None
        if first is None or any(
            not p.frame.dtypes.equals(first.dtypes) or p.frame["ListingId"].isna().any()
            for p in parts
        ):  # an added field in some pages only, or a record without id: shaped as a whole
            return shape_listings(pages)
        frames = [p.frame for p in parts]
        media = [p.media for p in parts if p.media is not None]
        parents, base = [], 0  # each photo's listing row (ids are unique within a part)
        for part in parts:
            if part.media is not None:
                ids = pd.Index(part.frame["ListingId"])
                parents.append(ids.get_indexer(part.media["ListingId"]) + base)
            base += len(part.frame)
        frame = pd.concat(frames, ignore_index=True)
        both = pd.concat(media, ignore_index=True)
        kept, both = latest_per_listing(frame, both, parents=np.concatenate(parents))
        merged = sum(p.merged for p in parts) + len(frame) - len(kept)
        return Loaded(kept, 0, media=both, meta={"merged": merged})


#: What a details load needs of a search record: its id, and the time that picks the newest of
#: two copies (:func:`~realtyframes.schemas.latest_per_listing`); the details carry the rest.
_SEARCH_KEPT = ("ListingId", "ModificationTimestamp")


def search_ids(body: bytes) -> bytes:
    """A search page reduced to what a details load needs of it (:data:`_SEARCH_KEPT` of each
    record, the envelope as it is), so that the search leaves little held when the details
    start. A page that is not an object of records that all have an id stays whole (those
    records are kept as they are: :func:`with_details`).

    >>> search_ids(b'{"total": 1, "listings": [{"ListingId": "A1", "City": "Miami"}]}')
    b'{"total": 1, "listings": [{"ListingId": "A1"}]}'
    """
    try:
        page = json.loads(body)
    except ValueError:
        return body
    records = page.get("listings") if isinstance(page, dict) else None
    if not isinstance(records, list) or not all(
        isinstance(r, dict) and r.get("ListingId") is not None for r in records
    ):
        return body
    page["listings"] = [{k: r[k] for k in _SEARCH_KEPT if k in r} for r in records]
    return json.dumps(page).encode()


def shape_listing(bodies: Sequence[bytes]) -> Loaded:
    """One listing's detail body -> one row with every detail field, and its media."""
    frame, media = listings_from_records(bodies, detail=True)
    return Loaded(frame, 0, total=1, expected=1, media=media)


def shape_changes(bodies: Sequence[bytes]) -> Loaded:
    """Change-feed pages -> one row per change."""
    return Loaded(_dedupe(changes_from_pages(bodies), CHANGE_KEY), 0)


def shape_contacts(bodies: Sequence[bytes]) -> Loaded:
    """Contact pages (or the legacy array) -> one row per contact id."""
    return Loaded(_dedupe(contacts_from_pages(bodies), "id"), 0)


def shape_legacy_contacts(bodies: Sequence[bytes]) -> Loaded:
    """The legacy contacts array -> one row per contact id; its total is what it holds."""
    shaped = shape_contacts(bodies)
    return replace(shaped, total=len(shaped.frame))


def shape_contact(bodies: Sequence[bytes]) -> Loaded:
    """One contact body -> one row."""
    return Loaded(contacts_from_pages([b"[" + bodies[0] + b"]"]), 0, total=1, expected=1)


def shape_activity(bodies: Sequence[bytes]) -> Loaded:
    """A contact's activity body -> one row per event."""
    return Loaded(activity_from_json(bodies[0]), 0)


def shape_analytics(bodies: Sequence[bytes]) -> Loaded:
    """An analytics body -> the overview row plus one member frame per breakdown."""
    result = analytics_from_json(bodies[0])
    frames = result.frames()
    overview = frames.pop("overview")
    members = {name: (frame, ANALYTICS_MODELS[name]) for name, frame in frames.items()}
    return Loaded(overview, 0, members=members, meta={"period": result.period})


# -- fetchers: the requests of one call --------------------------------------------------------------


def _shape(endpoint: Endpoint, bodies: Sequence[bytes]) -> Loaded:
    if endpoint.shape is None:
        raise ValueError(f"{endpoint.name} has no shaper: it is not a loader endpoint")
    return endpoint.shape(bodies)


def fetch_one(
    session: Session, endpoint: Endpoint, call: Call, checkpoint: Checkpoint | None = None
) -> Loaded:
    """One request, its body checked against what it must echo (``call.echo``), shaped."""
    body = session.api.get_bytes(
        call.path, call.query or None, host=endpoint.host, check=echo_check(call.echo)
    )
    return replace(_shape(endpoint, [body]), requests=1)


def fetch_or_empty(
    session: Session, endpoint: Endpoint, call: Call, checkpoint: Checkpoint | None = None
) -> Loaded:
    """:func:`fetch_one`, where a 404 means "none" (the legacy contacts list, spec): an empty
    frame with the resource's columns."""
    try:
        return fetch_one(session, endpoint, call)
    except NotFoundError as exc:
        logger.info("%s: 404 (%s): none, an empty frame", endpoint.name, exc.message)
        empty = _shape(endpoint, [])
        return replace(empty, requests=1, total=0, expected=0, meta={"empty": True})


def fetch_paged(
    session: Session, endpoint: Endpoint, call: Call, checkpoint: Checkpoint | None = None
) -> Loaded:
    """Every page of a list operation (``call.options["max_results"]`` stops early), shaped; the
    row count is checked against the server's total. With ``call.options["details"]``, each
    record's detail from the endpoint's ``details`` row (:func:`with_details`)."""
    assert endpoint.item_key is not None
    max_results = call.options.get("max_results")
    details = endpoint.details is not None and bool(call.options.get("details"))
    early = None
    if endpoint.shape is shape_listings and not details:  # shaped as they arrive
        early = _EarlyShape(int(call.query.get("Offset", 0) or 0))
    paged = fetch_pages(
        session.api,
        call.path,
        call.query,
        item_key=endpoint.item_key,
        max_results=max_results,
        progress=session.progress,
        desc=endpoint.resource or endpoint.name,
        checkpoint=checkpoint,
        on_page=early,
        keep=search_ids if details else None,  # the details carry the rest
    )
    shaped = early.finish(paged.pages) if early is not None else _shape(endpoint, paged.pages)
    frame = shaped.frame
    if max_results is not None and len(frame) > max_results:
        frame = frame.iloc[:max_results].reset_index(drop=True)
    expected = paged.total if max_results is None else min(paged.total, max_results)
    loaded = replace(
        shaped,
        frame=frame,
        requests=paged.requests,
        total=paged.total,
        expected=expected,
        warnings=paged.warnings,
    )
    if not details:
        return loaded
    assert endpoint.details is not None
    del paged, shaped, frame, early  # the pages and the search frame are not held meanwhile
    return with_details(session, endpoint.details, loaded, checkpoint)


def fetch_details(
    session: Session,
    endpoint: Endpoint,
    ids: list[str],
    *,
    desc: str = "details",
    checkpoint: Checkpoint | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each listing's detail (``endpoint``: the detail row, ``ENDPOINTS["listing"]``), fetched concurrently within the rate budget -> (listings, media).
    Fetched and parsed :data:`DETAIL_BATCH` at a time (a whole load's bodies would take several
    times the memory of its frames). A detail of another listing than the one asked for is
    retried, then raised (:class:`~realtyframes.errors.ResponseMismatchError`). Details the
    load's ``checkpoint`` holds are taken from it; the others are saved in it."""
    paths = [endpoint.at(i) for i in ids]
    field = endpoint.echo[0] if endpoint.echo is not None else None
    bar = _Bar(progress_enabled(session.progress), desc)
    bar.plan(len(paths) - sum(1 for p in paths if checkpoint is not None and checkpoint.has(p)))

    def batches() -> Iterator[list[Any]]:
        size = DETAIL_BATCH.get()  # REALTYFRAMES_DETAIL_BATCH
        for start in range(0, len(paths), size):
            chunk = paths[start : start + size]
            bodies: list[Any] = [None if checkpoint is None else checkpoint.get(p) for p in chunk]
            todo = [i for i, body in enumerate(bodies) if body is None]

            def check(index: int, body: bytes, start: int = start, todo: list[int] = todo) -> None:
                if field is not None:
                    check_echo(body, field, ids[start + todo[index]])

            def arrived(
                index: int, body: bytes, chunk: list[str] = chunk, todo: list[int] = todo
            ) -> None:
                bar.update()
                if checkpoint is not None:
                    checkpoint.put(chunk[todo[index]], body)

            got = session.api.get_many(
                [(chunk[i], None) for i in todo], raw=True, on_result=arrived, check=check
            )
            for i, body in zip(todo, got, strict=True):
                bodies[i] = body
            yield bodies

    try:
        return listings_from_record_batches(batches(), detail=True)
    finally:
        bar.close()


def with_details(
    session: Session, detail: Endpoint, loaded: Loaded, checkpoint: Checkpoint | None = None
) -> Loaded:
    """``loaded`` (search results) replaced by each record's detail from ``detail`` (the search
    row's ``details``: the records are named by its ``path_param``); records without an id are
    kept as they are (validation reports them)."""
    id_field = detail.path_param
    assert id_field is not None
    known = loaded.frame[id_field].notna()
    ids = list(dict.fromkeys(loaded.frame.loc[known, id_field].astype(str)))
    no_id = loaded.frame.loc[~known]  # cannot be looked up: validation reports them
    loaded = replace(loaded, frame=no_id.iloc[:0])  # the search frame is not held meanwhile
    reused = checkpoint.reused if checkpoint is not None else 0
    frame, media = fetch_details(session, detail, ids, checkpoint=checkpoint)
    if checkpoint is not None:  # details taken from the checkpoint were not requested
        reused = checkpoint.reused - reused
    if len(no_id):
        frame = pd.concat([frame, no_id], ignore_index=True)
    requests = loaded.requests + len(ids) - reused
    return replace(loaded, frame=frame, media=media, requests=requests)


def ids_label(ids: list[str]) -> str:
    """A short, stable stand-in for a long id list in the cache key and metadata.

    >>> ids_label(["A2", "A1"]) == ids_label(["A1", "A2"])
    True
    """
    digest = hashlib.sha256(",".join(sorted(ids)).encode()).hexdigest()[:24]
    return f"{len(ids)} ids sha256:{digest}"


def changes_key(query: Mapping[str, str]) -> dict[str, str]:
    """The change feed's cache-key parameters: the id list as :func:`ids_label`."""
    rest = {k: v for k, v in query.items() if k != "ListingIds"}
    return {**rest, "ListingIds": ids_label(query["ListingIds"].split(","))}


def fetch_changes(
    session: Session, endpoint: Endpoint, call: Call, checkpoint: Checkpoint | None = None
) -> Loaded:
    """The change feed: ids :data:`MAX_IDS_PER_REQUEST` per request, each chunk paged; one row
    per change."""
    assert endpoint.item_key is not None
    ids = call.query["ListingIds"].split(",")
    rest = {k: v for k, v in call.query.items() if k != "ListingIds"}
    step = MAX_IDS_PER_REQUEST
    queries = [
        {**rest, "ListingIds": ",".join(ids[i : i + step])} for i in range(0, len(ids), step)
    ]
    paged = fetch_pages_many(
        session.api,
        call.path,
        queries,
        item_key=endpoint.item_key,
        progress=session.progress,
        desc=endpoint.resource or endpoint.name,
        checkpoint=checkpoint,
    )
    shaped = _shape(endpoint, [body for p in paged for body in p.pages])
    total = sum(p.total for p in paged)
    return replace(
        shaped,
        requests=sum(p.requests for p in paged),
        total=total,
        expected=total,
        warnings=tuple(w for p in paged for w in p.warnings),
        meta={"chunks": len(queries)},
    )
