"""Plans on a RESO source: what ``listings`` or ``sync_listings`` of a RESO client will cost,
from the server's ``@odata.count``.

A RESO read is a query followed by ``@odata.nextLink`` in pages of the profile's size, each page
full but the last (:mod:`._pages` holds the server to it), so a query of ``n`` records costs
``max(1, ceil(n / page_size))`` requests: one ``$count`` request (``$top=1``) per query the run
will make counts them. A plan of a sync runs the sync's own decisions dry: a first sync (the
scope's Property records, then the HistoryTransactional backfill since the oldest listing's
entry, found by one ``$orderby=OriginalEntryTimestamp`` request), or an incremental one (the
records modified since the watermark, the history since its own, and the key reconcile when it
is due). The time is the requests at the vendor's budgets (their windows; a lower bound), else
at the server's ``RateLimit`` headers.

>>> pages_of(0, 1000), pages_of(1000, 1000), pages_of(1001, 1000)
(1, 1, 2)
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from realtyframes.cache import ParquetCache
from realtyframes.errors import BadResponseError, QueryError
from realtyframes.loaders import Plan, check_flag, sync_scope
from realtyframes.reso._pages import fetch
from realtyframes.reso._query import property_filter
from realtyframes.reso._source import ResoSource
from realtyframes.reso._sync import (
    HISTORY,
    check_reconcile,
    reconcile_due,
    scope_entry,
    stamp,
)

__all__ = ["pages_of", "plan_reso_listings", "plan_reso_sync"]


def pages_of(records: int, page_size: int) -> int:
    """Requests of a query of ``records`` in pages of ``page_size`` (an empty one is one)."""
    return max(1, math.ceil(records / page_size))


class _Probe:
    """The plan's own requests (counted in ``probes``, within the vendor's budgets)."""

    def __init__(self, source: ResoSource) -> None:
        self.source, self.probes = source, 0

    def get(self, path: str, query: Mapping[str, str]) -> dict[str, Any]:
        self.probes += 1
        body = json.loads(fetch(self.source.api, path, query, self.source.budgets))
        if not isinstance(body, dict):
            raise BadResponseError("RESO plan: the answer is not a JSON object")
        return body

    def count(self, path: str, expression: str) -> int:
        """The server's ``@odata.count`` of a query (one request)."""
        body = self.get(path, {"$filter": expression, "$count": "true", "$top": "1"})
        count = body.get("@odata.count")
        if not isinstance(count, int) or isinstance(count, bool):
            raise BadResponseError(
                f"RESO plan: {path} sent no @odata.count for $count=true; the requests of its "
                "pages cannot be counted without reading them"
            )
        return count

    def has_history(self) -> bool:
        """Whether the server has HistoryTransactional (its ``$metadata``, read once)."""
        source = self.source
        if source.settings.history != "auto":
            return False
        self.probes += 0 if source.has_metadata else 1
        return HISTORY in source.metadata()

    def oldest_entry(self, expression: str) -> str | None:
        """The oldest ``OriginalEntryTimestamp`` of a query's records (one request)."""
        query = {"$filter": expression, "$orderby": "OriginalEntryTimestamp asc", "$top": "1",
                 "$select": "ListingKey,OriginalEntryTimestamp"}  # fmt: skip
        found = [r.get("OriginalEntryTimestamp") for r in self.get("/Property", query)["value"]]
        return str(found[0]) if found and found[0] else None


def _timing(source: ResoSource, requests: int) -> tuple[int | None, float | None, float | None]:
    """(limit, window, seconds): the finest request budget and the time ``requests`` take
    within every budget (the windows each must wait out; a lower bound), else the server's
    rate limit; (None, None, None) when neither is known."""
    budgets = source.budgets
    limits = (
        [] if budgets is None else [b for b in budgets.budgets.values() if b.unit == "requests"]
    )
    if not limits:
        state = source.api.rate_limit
        if state is None or not state.limit or not state.window:
            return None, None, None
        return state.limit, state.window, requests * state.window / state.limit
    finest = min(limits, key=lambda b: b.seconds)
    seconds = max(
        [requests * finest.seconds / finest.limit]
        + [(math.ceil(requests / b.limit) - 1) * b.seconds for b in limits]
    )
    return finest.limit, float(finest.seconds), float(seconds)


def _plan(
    source: ResoSource, operation: str, mode: str, rows: int, pages: int, feed: int,
    probe: _Probe, notes: tuple[str, ...],
) -> Plan:  # fmt: skip
    limit, window, seconds = _timing(source, pages + feed)
    return Plan(operation, mode, rows, pages, 0, feed, pages + feed, probe.probes, limit, window,
                seconds, notes)  # fmt: skip


def plan_reso_listings(
    source: ResoSource, filters: Mapping[str, Any], *, max_results: int | None, details: bool
) -> Plan:
    """The requests of a RESO client's ``listings(**filters, max_results=)`` fetched (not from
    the cache): the search's count (one request), in pages of the profile's size. Filters are
    checked as the search checks them (QueryError before any data request).

    >>> plan_reso_listings(source, {"City": "Miami"}, max_results=None, details=False)  # doctest: +SKIP
    Plan(listings search: 412 rows -> 1 requests (1 pages, 0 details, 0 feed), rate limit unknown)
    """
    filters = dict(filters)
    filters.pop("reso_fields", None)
    if details is not False:
        raise QueryError(
            "details", "not available on a RESO source", "details=False, or reso_fields=True"
        )
    if max_results is not None and (
        not isinstance(max_results, int) or isinstance(max_results, bool) or max_results < 1
    ):
        raise QueryError("max_results", f"expected an integer >= 1, got {max_results!r}", "1+")
    probe = _Probe(source)
    before = source.has_metadata, source.has_lookups
    query = source.listings_query(filters)
    probe.probes += source.requests_since(before)
    total = probe.count("/Property", query["$filter"])
    rows = total if max_results is None else min(total, max_results)
    pages = pages_of(rows, source.settings.page_size)
    return _plan(source, "listings", "search", rows, pages, 0, probe, ())


def plan_reso_sync(
    source: ResoSource,
    cache: ParquetCache | None,
    scope: Mapping[str, Any],
    *,
    refresh: bool = False,
    history_since: Any = None,
    reconcile: bool | None = None,
) -> Plan:
    """What a RESO client's ``sync_listings(**scope)`` will cost, counted as the module says.
    Checked as the sync checks (QueryError before any request).

    >>> plan_reso_sync(source, cache, {"City": "Miami"}).requests  # doctest: +SKIP
    3
    """
    params = sync_scope(scope)
    check_flag("refresh", refresh)
    reconcile = check_reconcile(reconcile)
    probe = _Probe(source)
    before = source.has_metadata, source.has_lookups
    expression, _ = property_filter(params, fields=None, every_status=True, lookups=source.lookups)
    probe.probes += source.requests_since(before)  # the server's values of its lookups
    entry = scope_entry(source, cache, params)
    if entry is not None and (refresh or "sync" not in entry.meta):
        entry = None
    history = probe.has_history()
    if entry is None:
        return _first(source, probe, expression, history, history_since)
    return _later(source, probe, expression, entry.meta["sync"], history, reconcile)


def _first(
    source: ResoSource, probe: _Probe, expression: str, history: bool, history_since: Any
) -> Plan:
    """A first sync's plan: the scope's records, the history backfill."""
    size = source.settings.page_size
    rows = probe.count("/Property", source.scoped(expression, initial=True))
    feed, since = 0, history_since
    if history and history_since is not False and rows:
        since = since or probe.oldest_entry(source.scoped(expression, initial=True))
    if history and history_since is not False and rows and since:
        feed = _history_pages(probe, stamp(str(pd.Timestamp(since))), "gt", size)
    notes = ("the history backfill: HistoryTransactional since the oldest listing's entry",)
    return _plan(source, "sync_listings", "first sync", rows, pages_of(rows, size), feed,
                 probe, notes if feed else ())  # fmt: skip


def _later(
    source: ResoSource, probe: _Probe, expression: str, state: Mapping[str, Any],
    history: bool, reconcile: bool | None,
) -> Plan:  # fmt: skip
    """An incremental sync's plan: the records modified since the watermark, the history since
    its own, the key reconcile when due."""
    size = source.settings.page_size
    ranged = f"({expression}) and ModificationTimestamp ge {state['watermark']}"
    rows = probe.count("/Property", source.scoped(ranged, initial=False))
    pages, notes = pages_of(rows, size), ["rows: the records modified since the last sync"]
    feed = 0
    if history and state.get("history_watermark"):
        feed = _history_pages(probe, state["history_watermark"], "ge", size)
    if reconcile_due(state, reconcile, source.profile.delete_flag):
        keys = pages_of(probe.count("/Property", source.scoped(expression, initial=True)), size)
        pages += keys
        notes.append(f"pages: with the key reconcile's {keys}")
    return _plan(source, "sync_listings", "incremental", rows, pages, feed, probe, tuple(notes))


def _history_pages(probe: _Probe, since: str, op: str, size: int) -> int:
    expression = probe.source.scoped(
        f"ResourceName eq 'Property' and ModificationTimestamp {op} {since}", initial=False
    )
    return pages_of(probe.count("/" + HISTORY, expression), size)
