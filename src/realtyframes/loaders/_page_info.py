"""Reading a page without decoding it: its ids and envelope numbers (total, offset, limit) found
by a byte scan, with a JSON fallback; and the progress bar of the paged loads."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from realtyframes.api import MAX_PAGE_SIZE

ID_FIELDS: dict[str, str] = {"listings": "ListingId", "contacts": "id", "changes": "ListingId"}

_ID_VALUE = {
    name: re.compile(
        rb'"' + re.escape(field.encode()) + rb'"\s*:\s*("(?:[^"\\]|\\.)*"|[-+.\deE]+|null)'
    )
    for name, field in ID_FIELDS.items()
}

#: Pages re-read from the top at most, per drift recovery round.
MAX_RESCAN_PAGES = 40


#: Page size of every list operation (the spec's maximum).
PAGE_SIZE = MAX_PAGE_SIZE


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
    limit: int | None = None  # the page size the server says it used (None: not echoed)

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


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _ids_by_json(body: bytes, item_key: str) -> _Info:
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise ValueError(f"not a JSON document: {exc}") from None
    if isinstance(data, list):  # a bare array of records (legacy style)
        data = {item_key: data, "total": len(data)}
    if not isinstance(data, Mapping):
        raise ValueError(f"a JSON {type(data).__name__}, not a page")
    records = data.get(item_key)
    if records is None:
        records = []
    if not isinstance(records, list):
        raise ValueError(f"member {item_key!r} is not a list")
    key = ID_FIELDS.get(item_key)
    ids: list[Any] = []
    for record in records:
        if isinstance(record, Mapping) and item_key == "changes":
            ids.append(
                (record.get("ListingId"), record.get("ChangeType"), record.get("ChangeTimestamp"))
            )
        elif isinstance(record, Mapping) and key is not None and key in record:
            value = record[key]
            value = str(value) if isinstance(value, int | float) else value
            ids.append(_NullId() if value is None else value)
        else:
            ids.append(json.dumps(record, sort_keys=True, default=str))
    total, offset, limit = (_int_or_none(data.get(n)) for n in ("total", "offset", "limit"))
    return _Info(total, offset, tuple(ids), limit)


def page_info(body: bytes, item_key: str, *, exact: bool = False) -> _Info:
    """``total``, ``offset``, ``limit`` and the record ids of one page body, by a byte scan.

    Falls back to decoding the JSON when the scan is not conclusive (no envelope found, more ids
    than a page holds) and always when ``exact`` (change records are then identified by
    ListingId, ChangeType and ChangeTimestamp). Raises ValueError for a body that is not a page
    (counted as a broken body by ``get_many``, hence retried).

    >>> page_info(b'{"total":2,"offset":0,"limit":50,"listings":[{"ListingId":"A1"}]}', "listings")
    _Info(total=2, offset=0, ids=('A1',), limit=50)
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

    def number(name: str) -> int | None:
        pattern = _NUMBER % name.encode()
        found = re.search(pattern, head) or re.search(pattern, tail)
        return int(found.group(1)) if found else None

    total = number("total")
    if total is None:
        return None
    offset, limit = number("offset"), number("limit")
    found = _ID_VALUE[item_key].findall(body, at)
    ids = tuple(_id_value(v) for v in found)
    if len(ids) > PAGE_SIZE:  # a nested object carries the same field: decode instead
        return None
    if not ids and b"{" in body[at + len(marker) :].split(b"]", 1)[0]:
        return None  # records without the id field: decode to count them
    return _Info(total, offset, ids, limit)


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


#: The progress bar's line: requests done, left, and the ETA at the current pace (tqdm's
#: ``remaining`` comes from its smoothed rate, i.e. the pace of the latest requests).
BAR_FORMAT = (
    "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} requests{postfix} "
    "[ETA {remaining}, {rate_fmt}]"
)


class _Bar:
    """A ``tqdm.auto`` bar, made only when shown and once more than one request is planned: the
    requests done and left, and the ETA at the current pace."""

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
                desc=self.desc or "requests",
                unit="request",
                leave=False,
                file=sys.stderr,
                bar_format=BAR_FORMAT,
                postfix=self.left(),
            )
        else:
            self._bar.total = self.planned
            self._bar.set_postfix_str(self.left(), refresh=False)
            self._bar.refresh()

    def left(self) -> str:
        """The requests left, for the bar.

        >>> bar = _Bar(False, ""); bar.plan(9); bar.update(); bar.left()
        '8 left'
        """
        return f"{max(0, self.planned - self.done):,} left"

    def update(self) -> None:
        self.done += 1
        if self._bar is not None:
            self._bar.set_postfix_str(self.left(), refresh=False)
            self._bar.update(1)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
