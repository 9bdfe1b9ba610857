"""Know the cost before paying it: the requests a load or a sync will make, from a few cheap ones.

A plan is the run itself, dry: :func:`plan_sync` runs the sync's runner with :class:`Counting`, a
reader that asks each search for its first page (its total counts the pages) and samples the
change feed; :func:`plan_listings` counts a search's pages and details the same way. The time is
the requests at the account's rate limit (the answers' ``RateLimit`` headers).

>>> plan = plan_listings(session, {"City": "Miami"}, details=True)  # doctest: +SKIP
>>> plan.requests, plan.seconds  # doctest: +SKIP
(421, 421.0)
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import pandas as pd

from realtyframes.api import ApiClient
from realtyframes.loaders._base import Session
from realtyframes.loaders._page_info import PAGE_SIZE, Paged
from realtyframes.loaders._sync import _MARKET, _SYNC, plan_scope, run_sync
from realtyframes.loaders._sync_steps import (
    NOT_ASKED,
    Counts,
    Fed,
    chunks,
    pages_of,
)

__all__ = ["Counting", "Plan", "plan_listings", "plan_sync"]

#: The order the samples are drawn in: the service's default (price, not age: the first page of
#: ``-listdate`` holds only the newest listings, which have had the fewest changes).
_SAMPLE_SORT = "-listprice"


@dataclass(frozen=True)
class Plan:
    """What a load or a sync is expected to cost (``client.plan_listings`` / ``plan_sync``).

    - ``operation``: ``listings`` or ``sync_listings``; ``mode``: ``search``, ``details``,
      ``first sync`` or ``incremental``.
    - ``rows``: listings expected (a sync: in the market after it; incremental: new ones).
    - ``pages``: search pages of 50; ``details``: detail requests; ``feed``: change-feed
      requests (history backfill or incremental feed).
    - ``requests``: all of them; ``probes``: requests the plan itself made.
    - ``limit`` / ``window``: the account's rate (``limit`` requests per ``window`` seconds) from
      the server's headers, None when it sends none; ``seconds``: ``requests`` at that rate.
    - ``notes``: what the estimate leaves out.

    Items read like attributes (``plan["requests"]``).

    >>> Plan("listings", "search", 412, 9, 0, 0, 9, 1, 60, 60.0, 9.0)
    Plan(listings search: 412 rows -> 9 requests (9 pages, 0 details, 0 feed), 9 s at 60 requests / 60 s)
    """

    operation: str
    mode: str
    rows: int
    pages: int
    details: int
    feed: int
    requests: int
    probes: int
    limit: int | None
    window: float | None
    seconds: float | None
    notes: tuple[str, ...] = ()

    def __getitem__(self, name: str) -> Any:
        if name not in {f.name for f in fields(self)}:
            raise KeyError(name)
        return getattr(self, name)

    def __repr__(self) -> str:
        time = (
            f"{duration(self.seconds)} at {self.limit} requests / {self.window:g} s"
            if self.seconds is not None and self.window is not None
            else "rate limit unknown"
        )
        return (
            f"Plan({self.operation} {self.mode}: {self.rows:,} rows -> {self.requests:,} requests "
            f"({self.pages:,} pages, {self.details:,} details, {self.feed:,} feed), {time})"
        )


def duration(seconds: float) -> str:
    """``seconds`` for people.

    >>> duration(9), duration(642), duration(6600)
    ('9 s', '10 min 42 s', '1 h 50 min')
    """
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60} s"
    return f"{whole // 3600} h {whole % 3600 // 60} min"


def _count(body: Mapping[str, Any]) -> int:
    """A page's ``total`` (0 when absent or not a count).

    >>> _count({"total": 412}), _count({"total": "many"}), _count({})
    (412, 0, 0)
    """
    total = body.get("total")
    return total if isinstance(total, int) and not isinstance(total, bool) and total > 0 else 0


def _expected_pages(mean: float) -> float:
    """E[max(1, ceil(X / 50))] for X about normal with mean ``mean`` and variance ``mean``: the
    pages of a feed chunk expected to hold ``mean`` changes.

    >>> round(_expected_pages(0.0), 2), round(_expected_pages(155.0), 2)
    (1.0, 3.66)
    """
    if mean <= 0:
        return 1.0
    spread = math.sqrt(mean)
    pages = 1.0
    for k in range(1, int((mean + 6 * spread) // PAGE_SIZE) + 2):
        pages += 0.5 * math.erfc((k * PAGE_SIZE - mean) / (spread * math.sqrt(2)))
    return pages


class Counting:
    """The sync runner's reader in a dry run: it counts the requests the run would make.

    A search asks its first page (``sample`` records): its total gives the pages, its records
    stand for the rest. A market's keys are its samples', then ``known`` (a refresh: the cached
    market's), padded to the totals with stand-ins (``~n``), so the feed is chunked as in the run.
    The feed is sampled (a ``Limit=50`` page per search sample, weighted by its total, or of the
    first chunk of real keys): each chunk counts the pages its expected changes fill; the sample's
    records go back to the run, and the details count their share of closings over every id.
    """

    def __init__(self, api: ApiClient, sample: int = PAGE_SIZE, known: Sequence[str] = ()) -> None:
        self.api, self.sample, self.known = api, sample, known
        self.probes = self.rows = 0
        self.samples: list[tuple[list[str], int]] = []
        self.closings = 0.0

    def _get(self, path: str, query: Mapping[str, str]) -> tuple[bytes, dict[str, Any]]:
        self.probes += 1
        raw = self.api.get_bytes(path, {**query, "Offset": "0"})
        body = json.loads(raw)
        return raw, body if isinstance(body, dict) else {}

    def search(self, queries: Sequence[Mapping[str, str]]) -> list[Paged]:
        found = []
        for query in queries:
            asked = {**query, "Sort": _SAMPLE_SORT, "Limit": str(self.sample)}
            raw, body = self._get(_MARKET.path, asked)
            total = _count(body)
            records = [r for r in body.get("listings") or () if isinstance(r, dict)]
            self.samples.append(
                ([str(r["ListingId"]) for r in records if r.get("ListingId")], total)
            )
            self.rows += total
            found.append(Paged([raw], total, pages_of(total)))
        return found

    def keys(self, market: pd.DataFrame, found: Sequence[Paged]) -> list[str]:
        keys = market[_SYNC.key].astype(str).tolist()
        total = sum(f.total for f in found)
        seen = set(keys)
        keys += [k for k in self.known if k not in seen][: max(0, total - len(keys))]
        return keys + [f"~{n}" for n in range(total - len(keys))]

    def feed(self, ids: Sequence[str], since: str, chunk: int) -> Fed:
        real = [i for i in ids if not i.startswith("~")]
        if len(real) < len(ids):  # a market of samples: each search's sample, by its total
            groups = [(keys[:chunk], total) for keys, total in self.samples if keys]
        else:
            groups = [(real[:chunk], len(real))]
        changes = weight = closing = 0.0
        pages: list[bytes] = []
        for keys, total in groups:
            query = {"Since": since, _SYNC.feed_ids: ",".join(keys), "Limit": str(PAGE_SIZE)}
            raw, body = self._get(_SYNC.feed.path, query)
            per_key, records = _count(body) / len(keys), body.get("changes")
            changes += per_key * total
            closing += _closing_share(records) * per_key * total
            weight += total
            pages.append(raw)
        per_id = changes / weight if weight else 0.0
        requests = round(sum(_expected_pages(len(c) * per_id) for c in chunks(ids, chunk)))
        self.closings = closing / weight * len(ids) if weight else 0.0
        return Fed(pages, requests, 0, requests)

    def details(self, ids: Sequence[str]) -> tuple[list[bytes], list[str], int]:
        return [], [], round(self.closings)

    def page(self, query: Mapping[str, str]) -> pd.DataFrame:
        """The sync's clock page, read (a probe of the plan): the probes left follow from it."""
        raw, _ = self._get(_MARKET.path, query)
        assert _MARKET.shape is not None
        return _MARKET.shape([raw]).frame

    def detail(self, key: str) -> bytes | None:
        return NOT_ASKED  # the sync's clock probes: the runner counts its binary search


def _closing_share(records: Any) -> float:
    """The share of change records that close a listing (each costs the sync a detail request).

    >>> _closing_share([{"ChangeType": "status_change", "StandardStatus": "Closed"}, {}])
    0.5
    """
    if not isinstance(records, list) or not records:
        return 0.0
    closing = [
        r for r in records
        if isinstance(r, dict) and r.get("ChangeType") == "status_change"
        and r.get("StandardStatus") == "Closed"
    ]  # fmt: skip
    return len(closing) / len(records)


def _make(
    api: ApiClient, operation: str, mode: str, counts: Counts, rows: int, probes: int,
    notes: tuple[str, ...] = (),
) -> Plan:  # fmt: skip
    feed = counts.feed + counts.backfill + counts.rejected
    requests = counts.as_dict()["total"]
    state = api.rate_limit
    limit = state.limit if state is not None else None
    window = state.window if state is not None else None
    seconds = requests * window / limit if limit and window else None
    return Plan(operation, mode, rows, counts.search, counts.details, feed, requests, probes,
                limit, window, seconds, notes)  # fmt: skip


def _own(session: Session, name: str) -> Callable[..., Plan] | None:
    """A source's own planner (``plan_sync`` / ``plan_listings`` of the session's own sync: a
    RESO source's counts its pages), or None: the platform's requests are planned here."""
    return getattr(session.sync, name, None) if session.sync is not None else None


def plan_listings(
    session: Session,
    filters: Mapping[str, Any],
    *,
    max_results: int | None = None,
    details: bool = False,
) -> Plan:
    """The requests of ``listings(**filters, max_results=, details=)`` fetched (not from the
    cache): its search counted by :class:`Counting` (one ``Limit=1`` request), and one detail
    request per row with ``details=True``; filters are validated first (QueryError, no request).
    A source with its own planner (a RESO source) plans its own requests.

    >>> plan_listings(session, {"City": "Miami"}).pages  # doctest: +SKIP
    9
    """
    if (own := _own(session, "plan_listings")) is not None:
        return own(filters, max_results=max_results, details=details)
    call = _MARKET.call(filters, {"max_results": max_results, "details": details})
    reader = Counting(session.api, sample=1)
    (found,) = reader.search([call.query])
    cap = call.options["max_results"]
    rows = found.total if cap is None else min(found.total, cap)
    counts = Counts(search=pages_of(rows), details=rows if call.options["details"] else 0)
    mode = "details" if call.options["details"] else "search"
    return _make(session.api, "listings", mode, counts, rows, reader.probes)


def plan_sync(
    session: Session,
    scope: Mapping[str, Any],
    *,
    refresh: bool = False,
    history_since: Any = None,
) -> Plan:
    """What :func:`~realtyframes.loaders.sync_listings` of ``scope`` will cost: the sync's
    runner run dry with :class:`Counting` (a first sync: one page of each status and one feed
    sample per status; ``refresh=True``: the same, and the feed since the last sync over the
    cached keys that were not terminal, sampled from its first chunk; a later one: a page of each
    status since the watermark and one feed sample). Validates like the sync (QueryError before
    any request).

    >>> plan_sync(client.session, {"City": "Miami"}).requests  # doctest: +SKIP
    642
    """
    if (own := _own(session, "plan_sync")) is not None:
        return own(scope, refresh=refresh, history_since=history_since)
    asked, previous = plan_scope(session, scope, refresh=refresh, history_since=history_since)
    later = previous is not None and not asked.refresh
    refreshing = previous is not None and asked.refresh  # its history kept, the feed since added
    known = [] if previous is None or later else previous.market[_SYNC.key].astype(str).tolist()
    reader = Counting(session.api, known=known)
    result = run_sync(asked, reader, previous, cached=session.cache is not None,
                      on_invalid="quarantine")  # fmt: skip
    counts, notes = result.counts, []
    if later:
        notes.append("the closings (one detail request each) from a sample of the change feed")
    if counts.backfill:
        notes.append("the backfill from a sample of each status")
    if refreshing and counts.feed:
        notes.append("the feed since the last sync from a sample of its first chunk")
    mode = "incremental" if later else "first sync"
    return _make(
        session.api, "sync_listings", mode, counts, reader.rows, reader.probes, tuple(notes)
    )
