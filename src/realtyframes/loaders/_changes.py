"""The change feed (``GET /v1/listings/changes``): ids in chunks of 100, each chunk paged.

>>> result = load_changes(ctx, ["A1", "A2"], "2026-01-01")  # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import pandas as pd

from realtyframes.api._params import validate_listing_changes
from realtyframes.loaders._base import LoadContext, Loaded, LoadSpec, Result, check_flag, run_load
from realtyframes.loaders._paging import fetch_pages_many
from realtyframes.schemas import ListingChange, OnInvalid, changes_from_pages

__all__ = ["MAX_IDS_PER_REQUEST", "load_changes"]

CHANGES_PATH = "/v1/listings/changes"
#: ListingIds one change-feed request may carry (design.md; more is a 400).
MAX_IDS_PER_REQUEST = 100
#: A change record's identity (the same record read twice while paging is kept once).
CHANGE_KEY = ["ListingId", "ChangeType", "ChangeTimestamp"]


def _ids_label(ids: list[str]) -> str:
    """A short, stable stand-in for a long id list in the cache key and metadata."""
    digest = hashlib.sha256(",".join(sorted(ids)).encode()).hexdigest()[:24]
    return f"{len(ids)} ids sha256:{digest}"


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
    per change, validated, cached. Ids are deduplicated and sent 100 per request.

    >>> result = load_changes(ctx, ids, "2026-05-01", change_type="price_change")  # doctest: +SKIP
    """
    if isinstance(listing_ids, pd.Series | pd.Index):
        listing_ids = listing_ids.dropna().astype(str).tolist()
    params = validate_listing_changes(
        {"Since": since, "ListingIds": listing_ids, "ChangeType": change_type}
    )
    refresh = check_flag("refresh", refresh)
    ids = params.pop("ListingIds").split(",")
    chunks = [ids[i : i + MAX_IDS_PER_REQUEST] for i in range(0, len(ids), MAX_IDS_PER_REQUEST)]
    key_params = {**params, "ListingIds": _ids_label(ids)}
    spec = LoadSpec("changes", "listing_changes", key_params, ListingChange, on_invalid, refresh)

    def fetch() -> Loaded:
        queries = [{**params, "ListingIds": ",".join(chunk)} for chunk in chunks]
        paged = fetch_pages_many(
            ctx.api,
            CHANGES_PATH,
            queries,
            item_key="changes",
            progress=ctx.progress,
            desc="changes",
        )
        frame = changes_from_pages([body for p in paged for body in p.pages])
        complete = frame[CHANGE_KEY].notna().all(axis=1)
        duplicated = frame[CHANGE_KEY].duplicated(keep="last") & complete
        if duplicated.any():
            frame = frame.loc[~duplicated].reset_index(drop=True)
        total = sum(p.total for p in paged)
        return Loaded(
            frame,
            sum(p.requests for p in paged),
            total=total,
            expected=total,
            warnings=tuple(w for p in paged for w in p.warnings),
            meta={"chunks": len(chunks)},
        )

    return run_load(ctx, spec, fetch)
