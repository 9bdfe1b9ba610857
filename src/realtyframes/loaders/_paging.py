"""Offset paging of the list operations (listings, changes, contacts) with the fewest requests.

The first page's ``total`` plans the rest; the other pages are fetched concurrently through
:meth:`~realtyframes.api.ApiClient.get_many` (inside the client's rate budget and one retry budget);
a short page ends paging, and a full last page while the total grew goes on page by page.
Bodies stay raw bytes: only the envelope (``total``/``offset``) and the record ids are read, by a
byte scan, never by decoding the page into Python objects.

**Drift** (the data moves while it is paged: new records at the top of the sort order shift every
later page, so pages overlap or records slip between two pages served at different moments): when
the totals differ between pages, a record comes twice, or fewer records than the total arrived,
the pages are re-read (see ``_Pager._recover``) until the records received cover the total the
server gives on a read at the top; if that cannot be reached, a :class:`DriftWarning` says how many
records are missing. The re-read bodies are appended after the others (shaping keeps the newest
copy of a record seen twice).

>>> from realtyframes.api import ApiClient  # doctest: +SKIP
>>> paged = fetch_pages(api, "/v1/listings", {"City": "Miami"}, item_key="listings")  # doctest: +SKIP
>>> paged.total, paged.requests, len(paged.pages)  # doctest: +SKIP
(412, 9, 9)
"""

from __future__ import annotations

import itertools
import json
import math
import re
import sys
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from realtyframes.api._constants import MAX_PAGE_SIZE
from realtyframes.api._http import ApiClient, _caller_level
from realtyframes.errors import DriftWarning

__all__ = [
    "DriftWarning",
    "Paged",
    "fetch_pages",
    "fetch_pages_many",
    "page_info",
    "progress_enabled",
]

#: Page size of every list operation (the spec's maximum).
PAGE_SIZE = MAX_PAGE_SIZE

#: The field identifying one record of each list, for the drift checks (byte scan).
ID_FIELDS: dict[str, str] = {"listings": "ListingId", "contacts": "id", "changes": "ListingId"}

_ID_VALUE = {
    name: re.compile(
        rb'"' + re.escape(field.encode()) + rb'"\s*:\s*("(?:[^"\\]|\\.)*"|[-+.\deE]+|null)'
    )
    for name, field in ID_FIELDS.items()
}

#: Pages re-read from the top at most, per drift recovery round.
MAX_RESCAN_PAGES = 40


@dataclass(frozen=True)
class Paged:
    """The raw bodies of one paged read.

    - ``pages``: bodies in offset order (first page included); bodies re-read to close a drift
      gap follow, in the order read.
    - ``total``: the server's ``total`` on the last page read.
    - ``requests``: HTTP requests made (pages + any refetch; retries not counted).
    - ``warnings``: the drift messages also issued as :class:`DriftWarning` (empty when complete).
    """

    pages: list[bytes]
    total: int
    requests: int
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Info:
    """What one body says about itself."""

    total: int | None
    offset: int | None
    ids: tuple[Any, ...]  # one identity per record, in order

    @property
    def count(self) -> int:
        return len(self.ids)


_NUMBER = rb'"%s"\s*:\s*(-?\d+)'


class _NullId:
    """A record without an id: never equal to another (each counts as one record)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "null"


def _id_value(raw: bytes) -> Any:
    if raw == b"null":
        return _NullId()
    if raw[:1] == b'"':
        return raw[1:-1].decode("utf-8", "replace")
    return raw.decode()


def _envelope_number(part: bytes, name: str) -> int | None:
    match = re.search(_NUMBER % name.encode(), part)
    return int(match.group(1)) if match else None


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _ids_by_json(body: bytes, item_key: str) -> _Info:
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise ValueError(f"not a JSON document: {exc}") from None
    records: Any
    total: int | None
    offset: int | None
    if isinstance(data, list):  # a bare array of records (legacy style)
        records, total, offset = data, len(data), 0
    elif isinstance(data, Mapping):
        records = data.get(item_key)
        if records is None:
            records = []
        if not isinstance(records, list):
            raise ValueError(f"member {item_key!r} is not a list")
        total, offset = _int_or_none(data.get("total")), _int_or_none(data.get("offset"))
    else:
        raise ValueError(f"a JSON {type(data).__name__}, not a page")
    key = ID_FIELDS.get(item_key)
    ids: list[Any] = []
    for record in records:
        if isinstance(record, Mapping) and item_key == "changes":
            ids.append(
                (record.get("ListingId"), record.get("ChangeType"), record.get("ChangeTimestamp"))
            )
        elif isinstance(record, Mapping) and key is not None and key in record:
            value = record[key]
            ids.append(
                _NullId()
                if value is None
                else str(value)
                if isinstance(value, int | float)
                else value
            )
        else:
            ids.append(json.dumps(record, sort_keys=True, default=str))
    return _Info(total, offset, tuple(ids))


def page_info(body: bytes, item_key: str, *, exact: bool = False) -> _Info:
    """``total``, ``offset`` and the record ids of one page body, by a byte scan.

    Falls back to decoding the JSON when the scan is not conclusive (no envelope found, more ids
    than a page holds) and always when ``exact`` (change records are then identified by
    ListingId, ChangeType and ChangeTimestamp). Raises ValueError for a body that is not a page
    (counted as a broken body by ``get_many``, hence retried).

    >>> page_info(b'{"total":2,"offset":0,"limit":50,"listings":[{"ListingId":"A1"}]}', "listings")
    _Info(total=2, offset=0, ids=('A1',))
    """
    if not exact and item_key in ID_FIELDS:
        scanned = _scan(body, item_key)
        if scanned is not None:
            return scanned
    return _ids_by_json(body, item_key)


def _scan(body: bytes, item_key: str) -> _Info | None:
    marker = b'"' + item_key.encode() + b'"'
    at = body.find(marker)
    if at < 0:
        return None
    head = body[:at]
    end = body.rfind(b"]")
    tail = body[end:] if end > at else b""
    total = _envelope_number(head, "total")
    if total is None:
        total = _envelope_number(tail, "total")
    offset = _envelope_number(head, "offset")
    if offset is None:
        offset = _envelope_number(tail, "offset")
    if total is None:
        return None
    found = _ID_VALUE[item_key].findall(body, at)
    ids = tuple(_id_value(v) for v in found)
    if len(ids) > PAGE_SIZE:  # a nested object carries the same field: decode instead
        return None
    if not ids and b"{" in body[at + len(marker) :].split(b"]", 1)[0]:
        return None  # records without the id field: decode to count them
    return _Info(total, offset, ids)


# -- progress ----------------------------------------------------------------------------------------


def _in_notebook() -> bool:
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        shell = ipython.get_ipython()  # type: ignore[attr-defined]
    except Exception:
        return False
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def progress_enabled(progress: bool | None) -> bool:
    """``progress`` resolved: None means on only when stderr is a terminal or in a notebook.

    >>> progress_enabled(False)
    False
    """
    if progress is not None:
        return bool(progress)
    try:
        tty = sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):
        tty = False
    return tty or _in_notebook()


class _Bar:
    """A ``tqdm.auto`` bar, made only when shown and once more than one page is planned."""

    def __init__(self, enabled: bool, desc: str) -> None:
        self.enabled, self.desc = enabled, desc
        self.planned = self.done = 0
        self._bar: Any = None

    def plan(self, pages: int) -> None:
        self.planned += pages
        if not self.enabled or self.planned <= 1:
            return
        if self._bar is None:
            from tqdm.auto import tqdm

            self._bar = tqdm(
                total=self.planned,
                initial=self.done,
                desc=self.desc or None,
                unit="page",
                leave=False,
                file=sys.stderr,
            )
        else:
            self._bar.total = self.planned
            self._bar.refresh()

    def update(self) -> None:
        self.done += 1
        if self._bar is not None:
            self._bar.update(1)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


# -- paging -------------------------------------------------------------------------------------------


def _query(params: Mapping[str, Any], offset: int) -> dict[str, Any]:
    return {**params, "Offset": str(offset), "Limit": str(PAGE_SIZE)}


def _check_max_results(max_results: int | None) -> None:
    if max_results is not None and (
        isinstance(max_results, bool) or not isinstance(max_results, int) or max_results < 0
    ):
        raise ValueError(f"max_results: {max_results!r} is not an int >= 0")


class _Reader:
    """Fetches pages of several queries through ``get_many``, counting requests per query."""

    def __init__(self, api: ApiClient, path: str, item_key: str, bar: _Bar) -> None:
        self.api, self.path, self.item_key, self.bar = api, path, item_key, bar

    def parse(self, body: bytes) -> tuple[bytes, _Info]:
        return body, page_info(body, self.item_key)

    def read(self, jobs: list[tuple[_Pager, int]]) -> None:
        """Read ``(pager, offset)`` pages concurrently; each pager absorbs its pages in the order
        they arrived (so its last total is the most recent one)."""
        if not jobs:
            return
        self.bar.plan(len(jobs))
        arrived: list[int] = []

        def on_result(index: int, _result: Any) -> None:
            arrived.append(index)
            self.bar.update()

        budget = self.api.new_budget(len(jobs))
        got = self.api.get_many(
            [(self.path, _query(pager.base, offset)) for pager, offset in jobs],
            parse=self.parse,
            budget=budget,
            on_result=on_result,
        )
        for index in arrived:
            pager, offset = jobs[index]
            pager.requests += 1
            pager.absorb(offset, *got[index])


class _Pager:
    """The pages of one query: planning, reading on, drift recovery."""

    def __init__(self, reader: _Reader, params: Mapping[str, Any], max_results: int | None) -> None:
        self.reader = reader
        self.base = {k: v for k, v in params.items() if k not in ("Offset", "Limit")}
        self.start = int(params.get("Offset", 0) or 0)
        self.max_results = max_results
        self.state = _State(reader.item_key, self.start)
        self.requests = 0
        self._extra = False
        self.last_new: set[Any] = set()
        self.last_info = _Info(None, None, ())

    def absorb(self, offset: int, body: bytes, info: _Info) -> None:
        self.last_new = self.state.add(offset, body, info, extra=self._extra)
        self.last_info = info

    def read(self, offsets: list[int], *, extra: bool = False) -> None:
        self._extra = extra
        try:
            self.reader.read([(self, o) for o in offsets])
        finally:
            self._extra = False

    def read_one(self, offset: int, *, extra: bool = False) -> tuple[set[Any], _Info]:
        self.read([offset], extra=extra)
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

    def finish(self) -> Paged:
        """Read on after a full last page, recover from drift, and report."""
        self._continue()
        if self.max_results is None and self.state.drifted(self.start):
            self._recover()
        state = self.state
        messages = state.report(self.start, self.max_results)
        return Paged(state.bodies(), state.last_total, self.requests, messages)

    def _continue(self) -> None:
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
            self.read([end])

    def _sweep(self, offset: int) -> None:
        """Read page after page from ``offset`` while each page holds records not seen before."""
        for _ in range(MAX_RESCAN_PAGES):
            new, info = self.read_one(offset, extra=True)
            if not new or info.count < PAGE_SIZE:
                return
            offset += PAGE_SIZE

    def _recover(self) -> None:
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
            _, info = self.read_one(start, extra=True)
            if state.distinct() >= state.last_total - start:
                return
            if round_ == 0:
                if info.count >= PAGE_SIZE:
                    self._sweep(start + PAGE_SIZE)
                main = sorted(state.main.items())
                for (_, (_, a)), (offset_b, (_, b)) in itertools.pairwise(main):
                    if a.total is not None and b.total is not None and b.total < a.total:
                        self._sweep(max(start, offset_b - a.total + state.last_total))
            elif round_ in (1, 2):  # a second pass when records also landed mid-list meanwhile
                offset = start
                pages = math.ceil(max(0, state.last_total - start) / PAGE_SIZE)
                for _ in range(pages + MAX_RESCAN_PAGES):
                    _, info = self.read_one(offset, extra=True)
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
) -> Paged:
    """Every page of a list operation, as raw bodies, with the fewest requests.

    ``params`` are already validated query parameters (strings); ``Offset`` in them is where
    paging starts (default 0) and ``Limit`` is replaced by pages of 50. ``item_key`` names the
    records' member of a page (``"listings"``, ``"changes"``, ``"contacts"``). ``max_results``
    stops after that many records (the first ones in the server's order; pages are whole, the
    caller trims; no drift re-read from the top). ``progress``: a ``tqdm.auto`` bar when more
    than one page is read (None: on in terminals and notebooks). Issues a :class:`DriftWarning`
    when the data moved under paging and the gap could not be closed.

    >>> paged = fetch_pages(client.api, "/v1/listings", {"City": "Miami"},
    ...                     item_key="listings", progress=False)  # doctest: +SKIP
    >>> paged.requests == len(paged.pages)  # doctest: +SKIP
    True
    """
    return fetch_pages_many(
        api,
        path,
        [params],
        item_key=item_key,
        max_results=max_results,
        progress=progress,
        desc=desc,
    )[0]


def fetch_pages_many(
    api: ApiClient,
    path: str,
    queries: Sequence[Mapping[str, Any]],
    *,
    item_key: str,
    max_results: int | None = None,
    progress: bool | None = None,
    desc: str = "",
) -> list[Paged]:
    """:func:`fetch_pages` for several queries of one operation (e.g. id chunks of the change
    feed): the first pages of all queries in one concurrent batch, then every further page of
    all of them in a second one. One :class:`Paged` per query, in order.

    >>> chunks = [{"Since": since, "ListingIds": ",".join(ids[i:i + 100])}
    ...           for i in range(0, len(ids), 100)]  # doctest: +SKIP
    >>> pages = fetch_pages_many(api, "/v1/listings/changes", chunks, item_key="changes")  # doctest: +SKIP
    """
    _check_max_results(max_results)
    if item_key not in ID_FIELDS:
        raise ValueError(f"item_key: unknown value {item_key!r}; allowed: {', '.join(ID_FIELDS)}")
    bar = _Bar(progress_enabled(progress), desc)
    reader = _Reader(api, path, item_key, bar)
    pagers = [_Pager(reader, params, max_results) for params in queries]
    try:
        reader.read([(p, p.start) for p in pagers])
        reader.read([(p, o) for p in pagers for o in p.planned()])
        results = [p.finish() for p in pagers]
    finally:
        bar.close()
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
