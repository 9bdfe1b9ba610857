"""What ``rf.Client``'s data methods need beside a load (:func:`~realtyframes.loaders.run_load`):
the change feed's parameters from an id list or Series (:func:`changes_params`), the analytics
load, whose result is several frames (:func:`load_analytics`), where a resource's dataset is
(:func:`dataset_path`), and the run history of the session's cache (:func:`run_history`; runs are
recorded by :func:`~realtyframes.loaders.recorded`).

>>> run_history(client.session, last=3)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from realtyframes.cache import read_runs
from realtyframes.errors import QueryError
from realtyframes.loaders._base import LoadResult, Session
from realtyframes.loaders._checkers import refuse_none
from realtyframes.loaders._load import run_load
from realtyframes.loaders.endpoints import ENDPOINTS, TTLS
from realtyframes.schemas import Analytics, OnInvalid

__all__ = ["changes_params", "dataset_path", "load_analytics", "run_history"]


def changes_params(
    listing_ids: str | Iterable[str], since: Any, change_type: Any
) -> dict[str, Any]:
    """The change feed's parameters (a Series or Index of ids: its non-null values as text).

    >>> changes_params(pd.Series(["A1", None]), "2026-01-01", None)["ListingIds"]
    ['A1']
    """
    if isinstance(listing_ids, pd.Series | pd.Index):
        listing_ids = listing_ids.dropna().astype(str).tolist()
    return {"Since": since, "ListingIds": listing_ids, "ChangeType": change_type}


def load_analytics(
    session: Session,
    period: str,
    filters: Mapping[str, Any],
    *,
    refresh: bool = False,
    on_invalid: OnInvalid | None = None,
) -> tuple[Analytics, LoadResult]:
    """Analytics of ``period`` with ``filters`` (spec names: Page, Referrer, Device ...); every
    member frame validated against its model; cached as the overview plus one companion file
    per member; one run of the run history."""
    if "Period" in filters:
        raise QueryError("Period", "give the period as period=...", "period='7d', '30d' ...")
    refuse_none({"period": period, **filters})
    params = {"Period": period, **filters}
    loaded = run_load(
        session, ENDPOINTS["analytics"], params, refresh=refresh, on_invalid=on_invalid
    )
    period_text = str(loaded.meta.get("period") or period)
    return Analytics(period=period_text, overview=loaded.frame, **loaded.members), loaded


def dataset_path(session: Session, resource: str) -> Path:
    """The root of ``resource``'s dataset in the session's cache (``rf.Client.dataset_path``):
    a known resource or companion (``"listings.media"``), else a QueryError.

    >>> dataset_path(client.session, "listings").name  # doctest: +SKIP
    'listings'
    """
    if not isinstance(resource, str) or resource.partition(".")[0] not in TTLS:
        raise QueryError("resource", f"unknown resource {resource!r}", sorted(TTLS))
    return session.own_cache("dataset_path").dataset_path(resource)


def run_history(session: Session, *, last: int | None = None, failed: bool = False) -> pd.DataFrame:
    """The run history of the session's cache, oldest first; ``last=N`` keeps the N latest,
    ``failed=True`` only failed runs (``rf.Client.runs``).

    >>> run_history(client.session, last=3)  # doctest: +SKIP
    """
    if last is not None and (isinstance(last, bool) or not isinstance(last, int) or last < 0):
        raise QueryError("last", f"{last!r} is not a count", "an int >= 0, or None")
    if not isinstance(failed, bool):
        raise QueryError("failed", f"{failed!r} is not a flag", "True or False")
    frame = read_runs(session.own_cache("runs").root)
    if failed:
        frame = frame[frame["outcome"] == "failed"]
    if last is not None:
        frame = frame.iloc[max(0, len(frame) - last) :]
    return frame.reset_index(drop=True)
