"""Listings: the search (``GET /v1/listings``, paged) and the detail (``GET /v1/listings/{id}``).

>>> frame, info = load_listings(ctx, {"City": "Miami"})  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from realtyframes.api._params import prepare, refuse_none, validate_listing_search
from realtyframes.errors import QueryError
from realtyframes.loaders._base import (
    LoadContext,
    Loaded,
    LoadSpec,
    Result,
    check_flag,
    check_max_results,
    run_load,
)
from realtyframes.loaders._paging import _Bar, fetch_pages, progress_enabled
from realtyframes.schemas import Listing, OnInvalid, listings_from_records, shape_pages

__all__ = ["fetch_details", "load_listing", "load_listings"]

SEARCH_PATH = "/v1/listings"
_PAGING = ("Offset", "Limit")


def search_params(filters: Mapping[str, Any]) -> dict[str, str]:
    """The validated search filters (QueryError before any request; no Offset/Limit: the loader
    pages itself)."""
    for name in _PAGING:
        if name in filters:
            raise QueryError(
                name,
                "paging is done by the loader (pages of 50, all of them)",
                "max_results=N to stop after N listings",
            )
    refuse_none(filters)
    return validate_listing_search(filters)


def fetch_details(
    ctx: LoadContext, ids: list[str], *, desc: str = "details"
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each listing's detail, fetched concurrently within the rate budget -> (listings, media)."""
    if not ids:
        return listings_from_records([], detail=True)
    paths = [prepare("listing", {"ListingId": i}).path for i in ids]
    bar = _Bar(progress_enabled(ctx.progress), desc)
    bar.plan(len(paths))
    try:
        bodies = ctx.api.get_many(
            [(p, None) for p in paths], raw=True, on_result=lambda _i, _r: bar.update()
        )
    finally:
        bar.close()
    return listings_from_records(bodies, detail=True)


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
    ``ModificationTimestamp`` of a listing seen twice), validated, cached.

    >>> result = load_listings(ctx, {"City": "Miami"}, max_results=100)  # doctest: +SKIP
    """
    params = search_params(filters)
    max_results = check_max_results(max_results)
    details = check_flag("details", details)
    refresh = check_flag("refresh", refresh)
    key_params = {**params, "max_results": max_results, "details": details}
    spec = LoadSpec("listings", "listings", key_params, Listing, on_invalid, refresh)

    def fetch() -> Loaded:
        paged = fetch_pages(
            ctx.api,
            SEARCH_PATH,
            params,
            item_key="listings",
            max_results=max_results,
            progress=ctx.progress,
            desc="listings",
        )
        shaped = shape_pages(paged.pages, "listings")
        frame, media = shaped.frame, shaped.media
        if max_results is not None and len(frame) > max_results:
            frame = frame.iloc[:max_results].reset_index(drop=True)
        expected = paged.total if max_results is None else min(paged.total, max_results)
        requests = paged.requests
        if details:
            known = frame["ListingId"].notna()
            ids = list(dict.fromkeys(frame.loc[known, "ListingId"].astype(str)))
            detail, media = fetch_details(ctx, ids)
            requests += len(ids)
            if (~known).any():  # rows without an id cannot be looked up: validation reports them
                detail = pd.concat([detail, frame.loc[~known]], ignore_index=True)
            frame = detail
        return Loaded(
            frame,
            requests,
            total=paged.total,
            expected=expected,
            media=media,
            warnings=paged.warnings,
            meta={"merged": shaped.merged},
        )

    return run_load(ctx, spec, fetch)


def load_listing(
    ctx: LoadContext,
    listing_id: str,
    *,
    refresh: bool = False,
    on_invalid: OnInvalid = "quarantine",
) -> Result:
    """One listing with every detail field (one row) and its Media.

    >>> result = load_listing(ctx, "A10459460")  # doctest: +SKIP
    """
    prepared = prepare("listing", {"ListingId": listing_id})
    refresh = check_flag("refresh", refresh)
    spec = LoadSpec("listing", "listing", {"ListingId": listing_id}, Listing, on_invalid, refresh)

    def fetch() -> Loaded:
        body = ctx.api.get_bytes(prepared.path)
        frame, media = listings_from_records([body], detail=True)
        return Loaded(frame, 1, total=1, expected=1, media=media)

    return run_load(ctx, spec, fetch)
