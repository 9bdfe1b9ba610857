"""Paging a RESO collection: the first request, then ``@odata.nextLink`` to the end.

Each page is checked against the vendor's paging rule: a page fuller than asked, or a short
page that still has a next link where the profile says pages are full (Bridge's silent change
of ``$top`` from page size to collection size), is a
:class:`~realtyframes.errors.ResponseMismatchError`, never a short load. A next link to another
host than the client's is refused (the credentials go to the client's host only).

>>> split_link("http://h/reso/odata", "http://h/reso/odata/Property?$top=5&$skip=5")
('/Property', {'$top': '5', '$skip': '5'})
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from realtyframes.api import ApiClient
from realtyframes.cache import Checkpoint
from realtyframes.errors import (
    BadResponseError,
    InsufficientScopeError,
    RateLimitError,
    ResponseMismatchError,
)
from realtyframes.reso._budgets import Budgets

__all__ = ["Page", "fetch", "iter_pages", "read_all", "split_link"]


@dataclass(frozen=True)
class Page:
    """One page: its records, the server's ``@odata.count`` (None if not sent), its next link,
    its size in bytes."""

    records: list[dict[str, Any]]
    count: int | None
    next_link: str | None
    size: int


def split_link(base_url: str, link: str) -> tuple[str, dict[str, str]]:
    """``(path under the base URL, query)`` of a next link; another host is refused."""
    base = urlsplit(base_url)
    target = urlsplit(link)
    if target.scheme and (target.scheme, target.netloc) != (base.scheme, base.netloc):
        raise BadResponseError(
            f"@odata.nextLink points to another host ({target.scheme}://{target.netloc}); "
            "not followed (the credentials are for the client's host only)"
        )
    path = target.path
    if not path.startswith(base.path):
        raise BadResponseError(f"@odata.nextLink {path!r} is outside the service {base.path!r}")
    rest = path[len(base.path.rstrip("/")) :] or "/"
    return rest, dict(parse_qsl(target.query, keep_blank_values=True))


def fetch(api: ApiClient, path: str, query: Mapping[str, str], budgets: Budgets | None) -> bytes:
    """One GET within ``budgets``: counted before it is sent, its bytes after; a 429 or 403 of
    a budgeted vendor is its suspension, recorded, and a
    :class:`~realtyframes.reso.BudgetExhaustedError` (the run stops; a sync resumes from its
    checkpoint)."""
    if budgets is None:
        return api.get_bytes(path, query)
    budgets.admit()
    try:
        body = api.get_bytes(path, query)
    except (RateLimitError, InsufficientScopeError) as exc:
        wait = exc.retry_after if exc.retry_after is not None else 3600.0
        raise budgets.suspend(wait, f"HTTP {exc.status}: {exc.message}") from exc
    budgets.add_bytes(len(body))
    return body


def _decode(body: bytes) -> Page:
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise BadResponseError(f"RESO page: not JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("value"), list):
        raise BadResponseError("RESO page: no 'value' array")
    count = data.get("@odata.count")
    link = data.get("@odata.nextLink")
    return Page(data["value"], count if isinstance(count, int) else None, link, len(body))


def iter_pages(
    api: ApiClient,
    path: str,
    query: Mapping[str, str],
    *,
    page_size: int,
    full_pages: bool,
    checkpoint: Checkpoint | None = None,
    budgets: Budgets | None = None,
) -> Iterator[Page]:
    """Every page of a query, following next links; pages already in ``checkpoint`` (a resumed
    load) are read from it. ``full_pages``: every page but the last holds ``page_size`` records
    (the profile's rule; a short one with a next link is a mismatch). ``budgets``: counted
    before each request (see :func:`fetch`)."""
    where: tuple[str, Mapping[str, str]] | None = (path, dict(query))
    index = 0
    while where is not None:
        name = f"page-{index}"
        body = checkpoint.get(name) if checkpoint is not None else None
        if body is None:
            body = fetch(api, where[0], where[1], budgets)
            if checkpoint is not None:
                checkpoint.put(name, body)
        page = _decode(body)
        if len(page.records) > page_size:
            raise ResponseMismatchError.of("page size", page_size, len(page.records))
        if full_pages and page.next_link and len(page.records) < page_size:
            raise ResponseMismatchError.of("page size", page_size, len(page.records))
        yield page
        index += 1
        where = split_link(api.base_url, page.next_link) if page.next_link else None


def read_all(
    api: ApiClient,
    path: str,
    query: Mapping[str, str],
    *,
    page_size: int,
    budgets: Budgets | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """Every record of a small query (a Lookup read), its pages followed, no checkpoint:
    (records, requests)."""
    records: list[dict[str, Any]] = []
    requests = 0
    for page in iter_pages(
        api, path, query, page_size=page_size, full_pages=False, budgets=budgets
    ):
        records.extend(page.records)
        requests += 1
    return records, requests
