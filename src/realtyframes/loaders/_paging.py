"""Offset paging of the list operations (listings, changes, contacts) with the fewest requests.

The first page's ``total`` plans the rest; a short page ends paging, a full last page while the
total grew reads on. This module decides which pages are read (a generator, the *flow*: each
``yield`` is a batch); the path and queries go down once, to the api's page loop
(:meth:`~realtyframes.api.ApiClient.get_pages`), which sends each batch and hands the answers
back. Bodies stay raw bytes: the envelope and the record ids are read by a byte scan. Each page
is checked against its request inside the retry loop (:mod:`realtyframes.loaders._answers`).

**Drift** (new records at the top of the sort order shift every later page while paging): when
the totals differ, a record comes twice, or fewer records than the total arrived, the pages are
re-read (``_Pager._recover``) until the records cover the total of a read at the top, else a
:class:`DriftWarning` says how many are missing. Re-read bodies come after the others.

>>> paged = fetch_pages(api, "/v1/listings", {"City": "Miami"}, item_key="listings")  # doctest: +SKIP
>>> paged.total, paged.requests, len(paged.pages)  # doctest: +SKIP
(412, 9, 9)
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Generator, Mapping, Sequence
from typing import Any

from realtyframes.api import ApiClient
from realtyframes.api import caller_level as _caller_level
from realtyframes.cache import Checkpoint
from realtyframes.errors import DriftWarning
from realtyframes.loaders._answers import PageQuestion
from realtyframes.loaders._checks import check_count
from realtyframes.loaders._page_info import (
    ID_FIELDS,
    MAX_RESCAN_PAGES,
    PAGE_SIZE,
    Paged,
    _Bar,
    _Info,
    page_info,
    progress_enabled,
)
from realtyframes.loaders._resume import (
    CheckpointDrift,
    drift_tolerance,
    note_identity,
)

__all__ = [
    "DriftWarning",
    "Paged",
    "fetch_pages",
    "fetch_pages_many",
    "page_info",
    "progress_enabled",
]


# -- paging -------------------------------------------------------------------------------------------


def page_name(path: str, query: Mapping[str, Any] | None) -> str:
    """The name of an answer in a checkpoint: its path and sorted query (hashed by the
    checkpoint, never written as it is).

    >>> page_name("/v1/listings", {"Offset": "50", "City": "Miami"})
    '/v1/listings?City=Miami&Offset=50'
    """
    items = sorted((query or {}).items())
    return path + ("?" + "&".join(f"{k}={v}" for k, v in items) if items else "")


#: What a read of one page found: the ids not seen before, and the page's envelope.
_Found = tuple[set[Any], _Info]


def _query(params: Mapping[str, Any], offset: int) -> dict[str, Any]:
    return {**params, "Offset": str(offset), "Limit": str(PAGE_SIZE)}


#: ``on_page(offset, body)``: a page read in order (not a re-read of drift recovery), as it
#: arrives, in the calling thread (what it does overlaps the other pages' requests).
OnPage = Callable[[int, bytes], None]
#: ``keep(body)``: what of a page is kept once it is checked and saved in the checkpoint (a
#: details load keeps the ids only: :func:`~realtyframes.loaders._fetch.search_ids`).
Keep = Callable[[bytes], bytes]
#: What the pages of a load are read by: each ``yield`` hands the api's pager
#: (:meth:`~realtyframes.api.ApiClient.get_pages`) a batch of (query index, offset) to read,
#: and resumes once their answers are in.
Flow = Generator[list[tuple[int, int]], None, None]


class _Answer:
    """A page as read: its body (replaced by what is kept of it once saved) and envelope."""

    __slots__ = ("body", "info")

    def __init__(self, body: bytes, info: _Info) -> None:
        self.body, self.info = body, info


class _Reader:
    """Which pages of several queries are read (:meth:`flow`, sent by the api's page loop); the
    answers absorbed, requests counted per query. A page the ``checkpoint`` holds is taken from
    it, each page fetched saved in it (drift re-reads neither: they must see the data of now);
    ``keep`` (None: all) is what of each page is held afterwards."""

    def __init__(
        self,
        path: str,
        item_key: str,
        bar: _Bar,
        checkpoint: Checkpoint | None = None,
        on_page: OnPage | None = None,
        keep: Keep | None = None,
    ) -> None:
        self.bar, self.checkpoint = bar, checkpoint
        self.item_key = item_key
        self.path = path  # the checkpoint's names of pages
        self.on_page, self.keep = on_page, keep
        self.pagers: list[_Pager] = []
        self.first: _Pager | None = None  # the query whose pages on_page is told of
        self.batch: list[tuple[_Pager, int]] = []  # the pages being read
        self.arrived: list[tuple[int, _Answer]] = []

    def _tell(self, pager: _Pager, offset: int, body: bytes) -> None:
        if self.on_page is not None and pager is self.first and not pager._extra:
            self.on_page(offset, body)

    def parse(self, body: bytes) -> _Answer:
        return _Answer(body, page_info(body, self.item_key))

    def _name(self, pager: _Pager, offset: int) -> str:
        return page_name(self.path, _query(pager.base, offset))

    def _saved(self, jobs: list[tuple[_Pager, int]]) -> list[tuple[_Pager, int]]:
        """Absorb the pages the checkpoint holds; the jobs left to fetch."""
        if self.checkpoint is None:
            return jobs
        left = []
        for pager, offset in jobs:
            body = None if pager._extra else self.checkpoint.get(self._name(pager, offset))
            if body is None:
                left.append((pager, offset))
                continue
            info = page_info(body, self.item_key)
            if pager.saved_total is None and info.total is not None:
                pager.saved_total = info.total
            if self.keep is not None:
                body = self.keep(body)
            self._tell(pager, offset, body)
            pager.absorb(offset, body, info)
        return left

    def read(self, jobs: list[tuple[_Pager, int]]) -> Flow:
        """One batch of ``(pager, offset)`` pages; each pager absorbs its pages in the order
        they arrived (its last total is the most recent one)."""
        jobs = self._saved(jobs)
        if not jobs:
            return
        self.bar.plan(len(jobs))
        self.batch, self.arrived = jobs, []
        yield [(pager.index, offset) for pager, offset in jobs]
        for index, answer in self.arrived:
            pager, offset = jobs[index]
            pager.requests += 1
            pager.check_drift(answer.info)
            pager.absorb(offset, answer.body, answer.info)

    def on_result(self, index: int, answer: _Answer) -> None:
        """A page of the batch has arrived (the calling thread, as each one does): saved whole
        in the checkpoint, then only what ``keep`` keeps of it is held."""
        self.arrived.append((index, answer))
        self.bar.update()
        pager, offset = self.batch[index]
        checkpoint = self.checkpoint
        if checkpoint is not None and not pager._extra:
            note_identity(checkpoint, answer.body, self.item_key)  # before the first page
            checkpoint.put(self._name(pager, offset), answer.body)
        if self.keep is not None:
            answer.body = self.keep(answer.body)  # the api's result list holds the answer
        self._tell(pager, offset, answer.body)

    def check(self, index: int, answer: _Answer) -> None:
        """A page answers its request (the worker thread, inside the retry loop)."""
        pager, offset = self.batch[index]
        pager.question.check(answer.body, answer.info, offset=offset, limit=PAGE_SIZE)

    def flow(self) -> Flow:
        """The first pages, the rest their totals plan, then each query read on and recovered."""
        pagers = self.pagers
        yield from self.read([(p, p.start) for p in pagers])
        yield from self.read([(p, o) for p in pagers for o in p.planned()])
        for pager in pagers:
            yield from pager.finish()


class _Pager:
    """The pages of one query: planning, reading on, drift recovery."""

    def __init__(
        self, reader: _Reader, index: int, params: Mapping[str, Any], max_results: int | None
    ) -> None:
        self.reader, self.index = reader, index  # the query's place in the api pager's queries
        self.base = {k: v for k, v in params.items() if k not in ("Offset", "Limit")}
        self.question = PageQuestion.of(reader.item_key, self.base)
        self.start = int(params.get("Offset", 0) or 0)
        self.max_results = max_results
        self.state = _State(reader.item_key, self.start)
        self.requests = 0
        self._extra = False
        self.last_new: set[Any] = set()
        self.last_info = _Info(None, None, ())
        self.saved_total: int | None = None  # the total the checkpoint's pages were read under
        self.paged: Paged | None = None  # the result, once finished

    def check_drift(self, info: _Info) -> None:
        """A page fetched now after pages taken from a checkpoint: its total must be near
        theirs (:func:`drift_tolerance`), else :class:`CheckpointDrift`."""
        saved, total = self.saved_total, info.total
        if saved is not None and total is not None and abs(total - saved) > drift_tolerance(saved):
            raise CheckpointDrift(saved, total)

    def absorb(self, offset: int, body: bytes, info: _Info) -> None:
        self.last_new = self.state.add(offset, body, info, extra=self._extra)
        self.last_info = info

    def read(self, offsets: list[int], *, extra: bool = False) -> Flow:
        self._extra = extra
        try:
            yield from self.reader.read([(self, o) for o in offsets])
        finally:
            self._extra = False

    def read_one(self, offset: int, *, extra: bool = False) -> Generator[Any, None, _Found]:
        yield from self.read([offset], extra=extra)
        return self.last_new, self.last_info

    def planned(self) -> list[int]:
        """The offsets after the first page that its total calls for."""
        first = self.state.main[self.start][1]
        want = max(0, self.state.last_total - self.start)
        if self.max_results is not None:
            want = min(want, self.max_results)
        if first.count < PAGE_SIZE or want <= PAGE_SIZE:
            return []
        return list(range(self.start + PAGE_SIZE, self.start + want, PAGE_SIZE))

    def finish(self) -> Flow:
        """Read on after a full last page, recover from drift, and report (:attr:`paged`)."""
        yield from self._continue()
        if self.max_results is None and self.state.drifted(self.start):
            yield from self._recover()
        state = self.state
        messages = state.report(self.start, self.max_results)
        self.paged = Paged(state.bodies(), state.last_total, self.requests, messages)

    def _continue(self) -> Flow:
        """After a full last page, read on while the server's total says there is more."""
        state = self.state
        while True:
            offset, info = state.last_page()
            end = offset + PAGE_SIZE
            target = state.last_total - self.start
            if self.max_results is not None:
                target = min(target, self.max_results)
            if info.count < PAGE_SIZE or end - self.start >= target:
                return
            if self.max_results is not None and state.distinct() >= self.max_results:
                return
            yield from self.read([end])

    def _sweep(self, offset: int) -> Flow:
        """Read page after page from ``offset`` while each page holds records not seen before."""
        for _ in range(MAX_RESCAN_PAGES):
            new, info = yield from self.read_one(offset, extra=True)
            if not new or info.count < PAGE_SIZE:
                return
            offset += PAGE_SIZE

    def _recover(self) -> Flow:
        """Close a drift gap. Each round starts with a read at the top: the load is complete
        when the records received cover the total the server gives on that read (the newest
        records, which a change at the top brings, are on that page). Until then, in turn:

        1. read on from the top while pages hold records not seen before (records added at the
           top); where two neighbouring pages were served at different data versions (the later
           offset saw a smaller total, so records may have slipped between them), re-read
           around their boundary, shifted by how much the total grew since;
        2. page the whole range again, one page after another (sequential reads leave no gap
           when records are only added at the top), twice at most: records added in the middle
           of the order during the first pass are caught by the second.
        """
        state, start = self.state, self.start
        for round_ in range(4):
            _, info = yield from self.read_one(start, extra=True)
            if state.distinct() >= state.last_total - start:
                return
            if round_ == 0:
                if info.count >= PAGE_SIZE:
                    yield from self._sweep(start + PAGE_SIZE)
                main = sorted(state.main.items())
                for (_, (_, a)), (offset_b, (_, b)) in itertools.pairwise(main):
                    if a.total is not None and b.total is not None and b.total < a.total:
                        yield from self._sweep(max(start, offset_b - a.total + state.last_total))
            elif round_ in (1, 2):  # a second pass when records also landed mid-list meanwhile
                offset = start
                pages = math.ceil(max(0, state.last_total - start) / PAGE_SIZE)
                for _ in range(pages + MAX_RESCAN_PAGES):
                    _, info = yield from self.read_one(offset, extra=True)
                    if info.count < PAGE_SIZE:
                        break
                    offset += PAGE_SIZE


def fetch_pages(
    api: ApiClient,
    path: str,
    params: Mapping[str, Any],
    *,
    item_key: str,
    max_results: int | None = None,
    progress: bool | None = None,
    desc: str = "",
    checkpoint: Checkpoint | None = None,
    on_page: OnPage | None = None,
    keep: Keep | None = None,
) -> Paged:
    """Every page of a list operation, as raw bodies, with the fewest requests.

    ``params``: validated query parameters (strings); ``Offset`` is where paging starts, pages
    are of :data:`PAGE_SIZE`. ``item_key``: the records' member (``"listings"``, ``"changes"``,
    ``"contacts"``). ``max_results`` (:func:`~realtyframes.loaders._checks.check_count`) stops
    after that many records (whole pages, the caller trims; no drift re-read). ``progress``: a
    ``tqdm.auto`` bar (None: in terminals and notebooks). A :class:`DriftWarning` when the data
    moved under paging and the gap stayed open. ``checkpoint``: pages it holds are not asked for
    again, pages fetched are saved in it. ``on_page(offset, body)``: each page read in order.
    ``keep(body)``: what of each page is held and returned once saved (None: the whole body).

    >>> fetch_pages(client.api, "/v1/listings", {"City": "Miami"}, item_key="listings")  # doctest: +SKIP
    """
    many = fetch_pages_many(api, path, [params], item_key=item_key, max_results=max_results,
                            progress=progress, desc=desc, checkpoint=checkpoint,
                            on_page=on_page, keep=keep)  # fmt: skip
    return many[0]


def fetch_pages_many(
    api: ApiClient,
    path: str,
    queries: Sequence[Mapping[str, Any]],
    *,
    item_key: str,
    max_results: int | None = None,
    progress: bool | None = None,
    desc: str = "",
    checkpoint: Checkpoint | None = None,
    on_page: OnPage | None = None,
    keep: Keep | None = None,
) -> list[Paged]:
    """:func:`fetch_pages` for several queries of one operation (id chunks of the change feed):
    the first pages of all in one batch, then every further page in a second. One :class:`Paged`
    per query, in order; ``on_page`` is told of the first query's pages.

    >>> chunks = [{"Since": since, "ListingIds": ",".join(ids[i:i + 100])}
    ...           for i in range(0, len(ids), 100)]  # doctest: +SKIP
    >>> pages = fetch_pages_many(api, "/v1/listings/changes", chunks, item_key="changes")  # doctest: +SKIP
    """
    max_results = check_count("max_results", max_results)
    if item_key not in ID_FIELDS:
        raise ValueError(f"item_key: unknown value {item_key!r}; allowed: {', '.join(ID_FIELDS)}")
    bar = _Bar(progress_enabled(progress), desc)
    reader = _Reader(path, item_key, bar, checkpoint, on_page, keep)
    reader.pagers = pagers = [_Pager(reader, i, q, max_results) for i, q in enumerate(queries)]
    reader.first = pagers[0] if pagers else None
    try:  # the path and the queries go down once: the api's pager sends every page
        api.get_pages(path, [p.base for p in pagers], reader.flow(), page_size=PAGE_SIZE,
                      parse=reader.parse, on_result=reader.on_result, check=reader.check)  # fmt: skip
    finally:
        bar.close()
    results = [p.paged for p in pagers if p.paged is not None]
    for paged in results:
        for message in paged.warnings:
            warnings.warn(message, DriftWarning, stacklevel=_caller_level())
    return results


class _State:
    """Pages of one query read so far, the ids seen and the totals reported."""

    def __init__(self, item_key: str, start: int) -> None:
        self.item_key, self.start = item_key, start
        self.main: dict[int, tuple[bytes, _Info]] = {}  # offset -> page (first read wins)
        self.extra: list[bytes] = []  # re-read bodies, in the order read
        self.seen: set[Any] = set()
        self.records = 0
        self.totals: list[int] = []
        self.last_total = 0
        self.exact = item_key != "changes"  # change ids are exact only once decoded

    def add(self, offset: int, body: bytes, info: _Info, *, extra: bool = False) -> set[Any]:
        """Record one page; returns the ids it held that were not seen before."""
        if self.exact and self.item_key == "changes":
            info = page_info(body, self.item_key, exact=True)
        new = set(info.ids) - self.seen
        self.seen.update(info.ids)
        self.records += info.count
        if info.total is not None:
            self.totals.append(info.total)
            self.last_total = info.total
        elif not self.totals:
            self.last_total = info.count
        if extra or offset in self.main:
            self.extra.append(body)
        else:
            self.main[offset] = (body, info)
        return new

    def go_exact(self) -> None:
        """Identify change records by (ListingId, ChangeType, ChangeTimestamp) from now on."""
        if self.exact:
            return
        self.exact = True
        self.seen = set()
        for body in self.bodies():
            self.seen.update(page_info(body, self.item_key, exact=True).ids)

    def distinct(self) -> int:
        """Distinct records received."""
        return len(self.seen) if self.exact else self.records

    def last_page(self) -> tuple[int, _Info]:
        offset = max(self.main)
        return offset, self.main[offset][1]

    def drifted(self, start: int) -> bool:
        if len(set(self.totals)) > 1 or self.records < self.last_total - start:
            self.go_exact()
            return True
        return self.exact and len(self.seen) != self.records

    def bodies(self) -> list[bytes]:
        return [self.main[o][0] for o in sorted(self.main)] + self.extra

    def report(self, start: int, max_results: int | None) -> tuple[str, ...]:
        target = self.last_total - start
        if max_results is not None:
            target = min(target, max_results)
        missing = target - self.distinct()
        if missing <= 0:
            return ()
        moved = (
            f"the server's total moved from {self.totals[0]} to {self.last_total} while paging"
            if len(set(self.totals)) > 1
            else f"the server reported a total of {self.last_total}"
        )
        return (
            f"{self.item_key}: {missing} of {target} records are missing after re-reading "
            f"({self.distinct()} distinct records received; {moved}). The data moved under "
            "paging; load again later for a complete result.",
        )
