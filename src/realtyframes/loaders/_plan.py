"""Know the cost before paying it: the requests a load or a sync will make, from a few cheap ones.

:func:`plan_listings` asks the search once with ``Limit=1`` (the server's total) and counts the
pages of 50 and the details; :func:`plan_sync` asks each status once (a first sync) or the new
listings since the watermark (a later one) and samples the change feed (``Limit=1``: only its
total) to foresee the history backfill / the feed. The time is the requests at the account's rate
limit, read from the answers' ``RateLimit`` / ``RateLimit-Policy`` headers.

>>> plan = plan_listings(session, {"City": "Miami"}, details=True)  # doctest: +SKIP
>>> plan.requests, plan.seconds  # doctest: +SKIP
(421, 421.0)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import Any

from realtyframes.api import ApiClient
from realtyframes.loaders._base import Session
from realtyframes.loaders._page_info import PAGE_SIZE
from realtyframes.loaders._sync_feed import DEFAULT_CHUNK
from realtyframes.loaders._sync_steps import STATUSES
from realtyframes.loaders.endpoints import ENDPOINTS

__all__ = ["Plan", "feed_chunks", "plan_listings", "plan_sync_requests"]

_SEARCH = ENDPOINTS["listings"].path
_FEED = ENDPOINTS["listing_changes"].path
#: The order the backfill sample is drawn in: the service's default (price, not age: the first
#: page of ``-listdate`` holds only the newest listings, which have had the fewest changes).
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


def _make(
    api: ApiClient, operation: str, mode: str, counts: tuple[int, int, int, int], probes: int,
    notes: tuple[str, ...] = (),
) -> Plan:  # fmt: skip
    rows, pages, details, feed = counts
    requests = pages + details + feed
    state = api.rate_limit
    limit = state.limit if state is not None else None
    window = state.window if state is not None else None
    seconds = requests * window / limit if limit and window else None
    return Plan(operation, mode, rows, pages, details, feed, requests, probes, limit, window,
                seconds, notes)  # fmt: skip


def _pages(rows: int) -> int:
    """Pages a paged read of ``rows`` records takes (the first page is always read)."""
    return max(1, math.ceil(rows / PAGE_SIZE))


def _total(api: ApiClient, path: str, query: Mapping[str, str]) -> dict[str, Any]:
    body = api.get_json(path, {**query, "Offset": "0"})
    return body if isinstance(body, dict) else {}


def _count(body: Mapping[str, Any]) -> int:
    """A page's ``total`` (0 when absent or not a count).

    >>> _count({"total": 412}), _count({"total": "many"}), _count({})
    (412, 0, 0)
    """
    total = body.get("total")
    return total if isinstance(total, int) and not isinstance(total, bool) and total > 0 else 0


def _when(text: str) -> datetime:
    """An ISO 8601 timestamp for ordering (one that does not parse comes last).

    >>> _when("2026-01-02T00:00:00Z") < _when("2026-01-02T01:00:00+00:00") < _when("soon")
    True
    """
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return datetime.max.replace(tzinfo=UTC)
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def plan_listings(
    session: Session,
    filters: Mapping[str, Any],
    *,
    max_results: int | None = None,
    details: bool = False,
) -> Plan:
    """The requests of ``listings(**filters, max_results=, details=)`` fetched (not from the
    cache), from one ``Limit=1`` search; filters are validated first (QueryError, no request).

    >>> plan_listings(session, {"City": "Miami"}).pages  # doctest: +SKIP
    9
    """
    call = ENDPOINTS["listings"].call(filters, {"max_results": max_results, "details": details})
    body = _total(session.api, call.path, {**call.query, "Limit": "1"})
    total = _count(body)
    rows = total if call.options["max_results"] is None else min(total, call.options["max_results"])
    detail = rows if call.options["details"] else 0
    mode = "details" if call.options["details"] else "search"
    return _make(session.api, "listings", mode, (rows, _pages(rows), detail, 0), 1)


# -- syncs -------------------------------------------------------------------------------------------


def feed_chunks(ids: int, chunk: int = DEFAULT_CHUNK) -> list[int]:
    """The chunk sizes a sync's change feed sends for ``ids`` ids (``_sync_feed.feed_pages``:
    chunks of ``chunk`` ids, the last one short).

    >>> feed_chunks(350)
    [100, 100, 100, 50]
    """
    return [min(chunk, ids - done) for done in range(0, ids, chunk)]


def _feed_requests(sizes: Sequence[int], per_id: float) -> float:
    """Expected requests of the chunks: one at least each, and a page of 50 for every 50 changes
    a chunk holds, its changes taken as about normal around ``size * per_id`` with the spread of
    a count (the square root of the mean)."""
    return sum(_expected_pages(size * per_id) for size in sizes)


def _expected_pages(mean: float) -> float:
    """E[max(1, ceil(X / 50))] for X about normal with mean ``mean`` and variance ``mean``.

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


def plan_sync_requests(
    api: ApiClient,
    params: Mapping[str, str],
    *,
    previous: Any,
    history_since: str | None,
    backfill: bool,
) -> Plan:
    """The requests of a sync of ``params`` (validated scope): a first sync when ``previous``
    (the cached ``SyncResult``) is None, else an incremental one. ``history_since``: the
    backfill's start (ISO text) or None (the oldest listing's entry); ``backfill``: whether a
    first sync backfills the history. The feed's chunks are the spec's 100 ids."""
    if previous is None:
        return _plan_first(api, params, history_since, backfill)
    return _plan_incremental(api, params, previous)


def _plan_first(
    api: ApiClient,
    params: Mapping[str, str],
    history_since: str | None,
    backfill: bool,
) -> Plan:
    totals: dict[str, int] = {}
    changes = 0.0
    probes = 0
    for status in STATUSES:
        query = {**params, "Status": status, "Sort": _SAMPLE_SORT, "Limit": str(PAGE_SIZE)}
        body = _total(api, _SEARCH, query)
        probes += 1
        totals[status] = total = _count(body)
        listings = [r for r in body.get("listings") or () if isinstance(r, dict)]
        ids = [str(r["ListingId"]) for r in listings if r.get("ListingId")]
        if not backfill or not ids:
            continue
        entries = [
            str(r["OriginalEntryTimestamp"]) for r in listings if r.get("OriginalEntryTimestamp")
        ]
        since = history_since or (min(entries, key=_when) if entries else None)
        if since is None:
            continue
        feed = _total(api, _FEED, {"Since": since, "ListingIds": ",".join(ids), "Limit": "1"})
        probes += 1
        changes += _count(feed) / len(ids) * total
    rows = sum(totals.values())
    pages = sum(_pages(t) for t in totals.values())
    feed_requests = 0
    if backfill and rows:
        feed_requests = round(_feed_requests(feed_chunks(rows), changes / rows))
    notes = ("the backfill from a sample of each status",) if backfill else ()
    return _make(api, "sync_listings", "first sync", (rows, pages, 0, feed_requests), probes, notes)


def _plan_incremental(api: ApiClient, params: Mapping[str, str], previous: Any) -> Plan:
    state = previous.state
    search = {**params, "Limit": "1"}
    if state.get("entry_watermark"):
        search["Since"] = str(state["entry_watermark"])
    new = [_count(_total(api, _SEARCH, {**search, "Status": s})) for s in STATUSES]
    probes = len(STATUSES)
    market = previous.market
    open_ids = market.loc[market["StandardStatus"].astype("str") != "Closed", "ListingId"].tolist()
    feed_requests, closings = 0, 0.0
    since = state.get("change_watermark")
    if open_ids and since:
        sizes = feed_chunks(len(open_ids))
        first = open_ids[: sizes[0]]
        query = {"Since": str(since), "ListingIds": ",".join(first), "Limit": str(PAGE_SIZE)}
        body = _total(api, _FEED, query)
        probes += 1
        per_id = _count(body) / len(first)
        feed_requests = round(_feed_requests(sizes, per_id))
        closings = _closing_share(body.get("changes")) * per_id * len(open_ids)
    pages = sum(_pages(n) for n in new)
    notes = ("the closings (one detail request each) from a sample of the change feed",)
    counts = (sum(new), pages, round(closings), feed_requests)
    return _make(api, "sync_listings", "incremental", counts, probes, notes)


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
