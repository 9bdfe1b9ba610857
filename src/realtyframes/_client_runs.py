"""The cost and the history of ``rf.Client``'s loads: ``plan_listings``, ``plan_sync`` and
``runs`` (a mixin of :class:`~realtyframes.Client`; the runs are recorded by :mod:`._runs`).

>>> client.plan_sync(City="Miami")  # doctest: +SKIP
Plan(sync_listings first sync: 1,506 rows -> 114 requests (32 pages, 0 details, 82 feed), 1 min 54 s at 60 requests / 60 s)
>>> client.runs(last=5)  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from realtyframes.cache import read_runs
from realtyframes.errors import QueryError
from realtyframes.loaders import Plan, plan_listings

if TYPE_CHECKING:
    from realtyframes.api import ApiClient
    from realtyframes.cache import ParquetCache
    from realtyframes.loaders import LoadContext

__all__ = ["RunsMixin"]


class RunsMixin:
    """``plan_listings``, ``plan_sync`` and ``runs`` of :class:`~realtyframes.Client`."""

    _api: ApiClient
    _cache: ParquetCache | None
    _settings: Any

    def _context(self) -> LoadContext:  # pragma: no cover - the Client's
        raise NotImplementedError

    def plan_listings(
        self, *, max_results: int | None = None, details: bool = False, **filters: Any
    ) -> Plan:
        """What ``listings(**filters, max_results=, details=)`` will cost when fetched, from one
        ``Limit=1`` search: rows, pages of 50, detail requests, and the time at the account's
        rate limit (the server's ``RateLimit-Policy``). A :class:`~realtyframes.Plan`
        (``plan.requests`` or ``plan["requests"]``). A fresh cache entry would answer with none.

        >>> client.plan_listings(City="Miami", details=True)  # doctest: +SKIP
        Plan(listings details: 412 rows -> 421 requests (9 pages, 412 details, 0 feed), 7 min 1 s at 60 requests / 60 s)
        """
        return plan_listings(self._context(), filters, max_results=max_results, details=details)

    def plan_sync(self, *, refresh: bool = False, history_since: Any = None, **scope: Any) -> Plan:
        """What ``sync_listings(**scope)`` will cost, from a few cheap requests: a first sync (or
        ``refresh=True``) reads one page of each status and asks the change feed the changes of
        those listings (``Limit=1``: their count) to foresee the history backfill; a later sync
        asks each status for its new listings since the last sync (``Limit=1``) and samples the
        change feed once. See ``docs/loading.md``, "Know the cost before paying it".

        >>> client.plan_sync(City="Miami").requests  # doctest: +SKIP
        114
        """
        from realtyframes.loaders import plan_sync

        return plan_sync(self, scope, refresh=refresh, history_since=history_since)

    def runs(self, *, last: int | None = None, failed: bool = False) -> pd.DataFrame:
        """The run history of this client's cache (every load, sync, report and watch run of
        every client on it): one row per run, oldest first; ``last=N`` keeps the N latest,
        ``failed=True`` only failed runs. Columns: ``docs/cache.md``, "The run history".

        >>> client.runs(last=3)[["started", "kind", "resource", "requests", "rows", "outcome"]]  # doctest: +SKIP
        """
        if last is not None and (isinstance(last, bool) or not isinstance(last, int) or last < 0):
            raise QueryError("last", f"{last!r} is not a count", "an int >= 0, or None")
        if not isinstance(failed, bool):
            raise QueryError("failed", f"{failed!r} is not a flag", "True or False")
        if self._cache is None:
            raise ValueError("runs: this client keeps no cache (it was made with cache=False)")
        frame = read_runs(self._cache.root)
        if failed:
            frame = frame[frame["outcome"] == "failed"]
        if last is not None:
            frame = frame.iloc[max(0, len(frame) - last) :]
        return frame.reset_index(drop=True)
