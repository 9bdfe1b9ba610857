"""Every answer checked against its question, inside the retry loop of ``ApiClient.get_many``:
a caching proxy (or a confused server) may answer with another request's well-formed body.

- a page: its echoed ``offset`` and ``limit``, when present (from ``page_info``'s byte scan);
- a change-feed page: each record's ListingId is one asked about;
- a search or feed page: its records must not all contradict the request's ``Status``,
  ``PropertyType``, ``Since`` or ``ChangeType`` (another query's page at the same offset has the
  same envelope). One record that fits is enough: a server may lag between index and records;
- a detail: its top-level id, when present, is the one asked; ``{}`` or a list page is no record.

A mismatch raises :class:`~realtyframes.errors.ResponseMismatchError`, retried like a broken body
and finally raised: the load fails and nothing is cached.

>>> from realtyframes.loaders._page_info import page_info
>>> question = PageQuestion.of("listings", {"Status": "Active"})
>>> body = b'{"total":99,"offset":50,"limit":50,"listings":[{"ListingId":"A1"}]}'
>>> question.check(body, page_info(body, "listings"), offset=100, limit=50)
Traceback (most recent call last):
...
realtyframes.errors.ResponseMismatchError: the answer does not match the request: offset 50 where 100 was asked
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from realtyframes.errors import ResponseMismatchError
from realtyframes.loaders._page_info import _Info, _NullId
from realtyframes.schemas import STANDARD_STATUSES

__all__ = ["PageQuestion", "check_echo", "echo_check"]


def _string_field(name: str) -> re.Pattern[bytes]:
    return re.compile(rb'"' + re.escape(name.encode()) + rb'"\s*:\s*"([^"\\]*)"')


def _instant(text: str) -> datetime | None:
    try:
        stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return stamp if stamp.tzinfo is not None else None


@dataclass(frozen=True)
class _RecordRule:
    """Records of a page must not all contradict one filter of the request."""

    field: str
    param: str
    asked: str
    pattern: re.Pattern[bytes]
    fits: Callable[[str], bool]

    def check(self, body: bytes) -> None:
        first = self.pattern.search(body)
        if first is None or self.fits(first.group(1).decode("utf-8", "replace")):
            return  # no record carries the field, or the first one fits: the usual case
        values = [v.decode("utf-8", "replace") for v in self.pattern.findall(body)]
        if any(self.fits(v) for v in values):
            return
        raise ResponseMismatchError.of(
            self.field, self.asked, values[0], detail=f"no record fits the request's {self.param}"
        )


def _equal_rule(field: str, param: str, asked: str) -> _RecordRule:
    return _RecordRule(field, param, asked, _string_field(field), lambda v: v == asked)


def _since_rule(field: str, since: str) -> _RecordRule | None:
    start = _instant(since)
    if start is None:
        return None

    def fits(value: str) -> bool:
        at = _instant(value)
        return at is None or at >= start  # an unreadable value is validation's business

    return _RecordRule(field, "Since", since, _string_field(field), fits)


@dataclass(frozen=True)
class PageQuestion:
    """What the pages of one list query must answer: the ids asked (change feed) and the
    rules their records must not all break."""

    item_key: str
    ids: frozenset[str] | None = None
    rules: tuple[_RecordRule, ...] = ()

    @classmethod
    def of(cls, item_key: str, params: Mapping[str, Any]) -> PageQuestion:
        """The question of a query of ``item_key`` (``listings``, ``changes``, ``contacts``)
        with the (validated, string) parameters ``params``.

        >>> PageQuestion.of("changes", {"ListingIds": "A1,A2"}).ids == {"A1", "A2"}
        True
        """
        rules: list[_RecordRule | None] = []
        ids: frozenset[str] | None = None
        if item_key == "listings":
            status = params.get("Status")
            if isinstance(status, str) and status in STANDARD_STATUSES:
                rules.append(_equal_rule("StandardStatus", "Status", status))
            kind = params.get("PropertyType")
            if isinstance(kind, str) and kind:
                rules.append(_equal_rule("PropertyType", "PropertyType", kind))
            since = params.get("Since")
            if isinstance(since, str):
                rules.append(_since_rule("OriginalEntryTimestamp", since))
        elif item_key == "changes":
            listing_ids = params.get("ListingIds")
            if isinstance(listing_ids, str):
                ids = frozenset(i.strip() for i in listing_ids.split(",") if i.strip())
            since = params.get("Since")
            if isinstance(since, str):
                rules.append(_since_rule("ChangeTimestamp", since))
            change_type = params.get("ChangeType")
            if isinstance(change_type, str) and change_type:
                rules.append(_equal_rule("ChangeType", "ChangeType", change_type))
        return cls(item_key, ids, tuple(r for r in rules if r is not None))

    def check(self, body: bytes, info: _Info, *, offset: int, limit: int) -> None:
        """Raise :class:`ResponseMismatchError` when the page answers another request."""
        if info.offset is not None and info.offset != offset:
            raise ResponseMismatchError.of("offset", offset, info.offset)
        if info.limit is not None and info.limit != limit:
            raise ResponseMismatchError.of("limit", limit, info.limit)
        if not info.ids:
            return
        if self.ids is not None:
            for identity in info.ids:
                listing_id = identity[0] if isinstance(identity, tuple) else identity
                if listing_id is None or isinstance(listing_id, _NullId):
                    continue  # a record without an id: validation quarantines it
                if str(listing_id) not in self.ids:
                    raise ResponseMismatchError(
                        "the answer does not match the request: a change record of ListingId "
                        f"{str(listing_id)!r}, which is not among the {len(self.ids)} "
                        "ListingIds asked about",
                        field="ListingId",
                        asked=tuple(sorted(self.ids)),
                        got=str(listing_id),
                    )
        for rule in self.rules:
            rule.check(body)


# -- detail bodies --------------------------------------------------------------------------------

_ABSENT = object()


@functools.lru_cache(maxsize=32)
def _member(field: str) -> tuple[bytes, re.Pattern[bytes]]:
    """The quoted name of ``field`` and the pattern of its member (name, colon, scalar value)."""
    key = b'"' + field.encode() + b'"'
    value = rb'("(?:[^"\\]|\\.)*"|-?[\d.eE+-]+|null|true|false)'
    return key, re.compile(re.escape(key) + rb"\s*:\s*" + value)


def _top_level(body: bytes, field: str) -> Any:
    """The value of ``field`` at the top of a JSON object body (``_ABSENT`` when it has none):
    by a byte scan when the name occurs once, else by decoding. A body that is no record at
    all (``{}``, a list page) raises :class:`ResponseMismatchError` (:func:`_not_a_record`)."""
    key, pattern = _member(field)
    if body.count(key) == 1 and b'"total"' not in body:  # a list page of one record has it once
        found = pattern.search(body)
        if found is not None:
            return json.loads(found.group(1))
    try:
        data = json.loads(body)
    except ValueError:
        return _ABSENT  # the shaper reports a body that is not JSON
    if not isinstance(data, dict):
        return _ABSENT
    value = data.get(field, _ABSENT)
    if value is _ABSENT:
        _not_a_record(data, field)
    return value


def _not_a_record(data: dict[str, Any], field: str) -> None:
    """Raise when a detail's body is an empty object or a list page (a ``total`` and a list of
    records): what a confused proxy or server sends for a detail, a fault to retry, never a
    record to quarantine and cache."""
    if not data:
        raise ResponseMismatchError.of(field, "a record", "{}", detail="an empty object")
    if "total" in data and any(isinstance(v, list) for v in data.values()):
        lists = sorted(k for k, v in data.items() if isinstance(v, list))
        raise ResponseMismatchError.of(
            field, "a record", f"a list of {lists[0]}", detail="a list page, not a record"
        )


def check_echo(body: bytes, field: str, asked: str) -> None:
    """Raise :class:`ResponseMismatchError` when ``body``'s top-level ``field`` is present and
    not ``asked`` (a missing or null field is accepted), or when the body is no record: ``{}``
    or a list page (retried by the engine like a broken body, then raised; never quarantined).

    >>> check_echo(b'{"ListingId": "A2", "ListPrice": 1}', "ListingId", "A1")
    Traceback (most recent call last):
    ...
    realtyframes.errors.ResponseMismatchError: the answer does not match the request: ListingId 'A2' where 'A1' was asked
    """
    got = _top_level(body, field)
    if got is _ABSENT or got is None:
        return
    if str(got) != asked:
        raise ResponseMismatchError.of(field, asked, str(got))


def echo_check(echo: Mapping[str, str]) -> Callable[[bytes], None] | None:
    """One body's check of every ``field -> asked`` of ``echo`` (None when there is none)."""
    if not echo:
        return None
    pairs = tuple(echo.items())

    def check(body: bytes) -> None:
        for field, asked in pairs:
            check_echo(body, field, asked)

    return check
