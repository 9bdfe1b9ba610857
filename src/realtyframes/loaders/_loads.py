"""The loaders by name: thin calls of :func:`~realtyframes.loaders.endpoints.run_load` over the
declared endpoints (what ``rf.Client``'s data methods call).

>>> result = load_listings(ctx, {"City": "Miami"}, max_results=100)  # doctest: +SKIP
>>> analytics, info = load_analytics(ctx, "7d", {"Device": "mobile"})  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from realtyframes.api import refuse_none
from realtyframes.errors import QueryError
from realtyframes.loaders._base import LoadContext, LoadInfo, Result
from realtyframes.loaders.endpoints import ENDPOINTS, run_load
from realtyframes.schemas import Analytics, OnInvalid

__all__ = [
    "changes_params",
    "load_activity",
    "load_analytics",
    "load_changes",
    "load_contact",
    "load_contacts",
    "load_legacy_contacts",
    "load_listing",
    "load_listings",
]


def load_listings(
    ctx: LoadContext,
    filters: Mapping[str, Any],
    *,
    max_results: int | None = None,
    details: bool = False,
    refresh: bool = False,
    on_invalid: OnInvalid = "quarantine",
) -> Result:
    """Every listing matching ``filters``: one row per ListingId (the newest
    ``ModificationTimestamp`` of a listing seen twice), validated, cached."""
    refuse_none(filters)
    return run_load(
        ctx,
        ENDPOINTS["listings"],
        filters,
        refresh=refresh,
        on_invalid=on_invalid,
        max_results=max_results,
        details=details,
    )


def load_listing(
    ctx: LoadContext,
    listing_id: str,
    *,
    refresh: bool = False,
    on_invalid: OnInvalid = "quarantine",
) -> Result:
    """One listing with every detail field (one row) and its Media."""
    params = {"ListingId": listing_id}
    return run_load(ctx, ENDPOINTS["listing"], params, refresh=refresh, on_invalid=on_invalid)


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


def load_changes(
    ctx: LoadContext,
    listing_ids: str | Iterable[str],
    since: Any,
    change_type: str | None = None,
    *,
    refresh: bool = False,
    on_invalid: OnInvalid = "quarantine",
) -> Result:
    """Every change of ``listing_ids`` after ``since`` (optionally one ``change_type``): one row
    per change, validated, cached. Ids are deduplicated and sent 100 per request."""
    params = changes_params(listing_ids, since, change_type)
    return run_load(
        ctx, ENDPOINTS["listing_changes"], params, refresh=refresh, on_invalid=on_invalid
    )


def load_contacts(
    ctx: LoadContext, *, refresh: bool = False, on_invalid: OnInvalid = "quarantine"
) -> Result:
    """Every CRM contact of the account (paged)."""
    return run_load(ctx, ENDPOINTS["contacts"], {}, refresh=refresh, on_invalid=on_invalid)


def load_contact(
    ctx: LoadContext,
    contact_id: str,
    *,
    refresh: bool = False,
    on_invalid: OnInvalid = "quarantine",
) -> Result:
    """One contact: one row."""
    params = {"contactId": contact_id}
    return run_load(ctx, ENDPOINTS["contact"], params, refresh=refresh, on_invalid=on_invalid)


def load_activity(
    ctx: LoadContext,
    contact_id: str,
    *,
    refresh: bool = False,
    on_invalid: OnInvalid = "quarantine",
) -> Result:
    """A contact's activity: one row per event."""
    params = {"contactId": contact_id}
    endpoint = ENDPOINTS["contact_activity"]
    return run_load(ctx, endpoint, params, refresh=refresh, on_invalid=on_invalid)


def load_legacy_contacts(
    ctx: LoadContext, *, refresh: bool = False, on_invalid: OnInvalid = "quarantine"
) -> Result:
    """The legacy contacts list (deprecated); its 404 ("no contacts for the domain or key",
    spec) is an empty frame with the contact columns."""
    endpoint = ENDPOINTS["legacy_contacts"]
    return run_load(ctx, endpoint, {}, refresh=refresh, on_invalid=on_invalid)


def load_analytics(
    ctx: LoadContext,
    period: str,
    filters: Mapping[str, Any],
    *,
    refresh: bool = False,
    on_invalid: OnInvalid = "quarantine",
) -> tuple[Analytics, LoadInfo]:
    """Analytics of ``period`` with ``filters`` (spec names: Page, Referrer, Device ...); every
    member frame validated against its model; cached as the overview plus one companion file
    per member."""
    if "Period" in filters:
        raise QueryError("Period", "give the period as period=...", "period='7d', '30d' ...")
    refuse_none({"period": period, **filters})
    params = {"Period": period, **filters}
    loaded = run_load(ctx, ENDPOINTS["analytics"], params, refresh=refresh, on_invalid=on_invalid)
    period_text = str(loaded.meta.get("period") or period)
    return Analytics(period=period_text, overview=loaded.frame, **loaded.members), loaded.info
