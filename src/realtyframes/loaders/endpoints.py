"""How the client side loads each operation of the spec: records' key, schema, shaper, fetch
strategy, cache folder and lifetime, added to the row of :data:`realtyframes.api.OPERATIONS`
(name, host, path, path parameter, validator) that each :class:`Endpoint` carries.

:data:`ENDPOINTS` (name -> :class:`Endpoint`) is what the client side reads: :func:`run_load` (the
loaders and the ``Client``'s data methods), the cache's lifetimes (:data:`TTLS`), and whatever
mirrors the REST operations (MCP tools, the ``fetch`` command). ``ApiClient.call`` and
:func:`realtyframes.api.prepare` read the operations table itself: nothing registers anything.

>>> [e.path for e in ENDPOINTS.values() if e.paged]
['/v1/listings', '/v1/listings/changes', '/v1/contacts']
>>> ENDPOINTS["listing"].prepare({"ListingId": "A1"}).path
'/v1/listings/A1'
>>> result = run_load(ctx, ENDPOINTS["contacts"], {})  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

from realtyframes.api import OPERATIONS
from realtyframes.cache import ParquetCache
from realtyframes.loaders import _fetch
from realtyframes.loaders._base import (
    LoadContext,
    LoadSpec,
    Result,
    default_cache_dir,
    load,
)
from realtyframes.loaders._checks import check_count, check_flag
from realtyframes.loaders._endpoint import Endpoint
from realtyframes.schemas import (
    ANALYTICS_MODELS,
    Contact,
    ContactActivity,
    Listing,
    ListingChange,
    OnInvalid,
)

__all__ = ["ENDPOINTS", "MARKET", "TTLS", "Endpoint", "make_cache", "run_load"]

_PAGING_REFUSED = (
    "paging is done by the loader (pages of 50, all of them)",
    "max_results=N to stop after N listings",
)


def _table(*endpoints: Endpoint) -> dict[str, Endpoint]:
    return {e.name: e for e in endpoints}


#: The spec's operations by name, in the spec's order.
ENDPOINTS: dict[str, Endpoint] = _table(
    Endpoint(
        OPERATIONS["listings"],
        item_key="listings",
        model=Listing,
        shape=_fetch.shape_listings,
        fetch=_fetch.fetch_listings,
        resource="listings",
        paged=True,
        options={"max_results": (None, check_count), "details": (False, check_flag)},
        refused={"Offset": _PAGING_REFUSED, "Limit": _PAGING_REFUSED},
    ),
    Endpoint(
        OPERATIONS["listing"],
        model=Listing,
        shape=_fetch.shape_listing,
        fetch=_fetch.fetch_one,
        resource="listing",
        ttl=timedelta(days=1),
        echo=("ListingId", "ListingId"),
    ),
    Endpoint(
        OPERATIONS["listing_changes"],
        item_key="changes",
        model=ListingChange,
        shape=_fetch.shape_changes,
        fetch=_fetch.fetch_changes,
        resource="changes",
        ttl=timedelta(minutes=15),
        paged=True,
        key=_fetch.changes_key,
    ),
    Endpoint(
        OPERATIONS["contacts"],
        item_key="contacts",
        model=Contact,
        shape=_fetch.shape_contacts,
        fetch=_fetch.fetch_paged,
        resource="contacts",
        paged=True,
    ),
    Endpoint(
        OPERATIONS["contact"],
        model=Contact,
        shape=_fetch.shape_contact,
        fetch=_fetch.fetch_one,
        resource="contact",
        echo=("id", "contactId"),
    ),
    Endpoint(
        OPERATIONS["contact_activity"],
        model=ContactActivity,
        shape=_fetch.shape_activity,
        fetch=_fetch.fetch_one,
        resource="activity",
        echo=("contactId", "contactId"),
    ),
    Endpoint(
        OPERATIONS["analytics"],
        model=ANALYTICS_MODELS["overview"],
        shape=_fetch.shape_analytics,
        fetch=_fetch.fetch_one,
        resource="analytics",
        echo=("period", "Period"),
    ),
    Endpoint(OPERATIONS["me"]),
    Endpoint(OPERATIONS["legacy_me"]),
    Endpoint(
        OPERATIONS["legacy_contacts"],
        model=Contact,
        shape=_fetch.shape_legacy_contacts,
        fetch=_fetch.fetch_or_empty,
        resource="legacy_contacts",
    ),
)

#: Cache folder of the synced markets (``sync_listings``): kept current by the sync itself.
MARKET = "market"
#: Lifetime of the loaders' cache entries, per cache folder (``Client(ttl=...)`` overrides).
TTLS: dict[str, timedelta | None] = {
    **{e.resource: e.ttl for e in ENDPOINTS.values() if e.resource is not None},
    MARKET: None,
}


def make_cache(
    cache_dir: Path | None, ttl: float | timedelta | Mapping[str, Any] | None
) -> ParquetCache:
    """The client's cache: ``cache_dir`` (else :func:`default_cache_dir`) with the endpoints'
    lifetimes, overridden by ``ttl`` (one duration for every loader resource, or a mapping)."""
    ttls: dict[str, Any] = dict(TTLS)
    if isinstance(ttl, Mapping):
        ttls.update(ttl)
    elif ttl is not None:
        ttls.update(dict.fromkeys((e.resource for e in ENDPOINTS.values() if e.resource), ttl))
    return ParquetCache(cache_dir if cache_dir is not None else default_cache_dir(), ttl=ttls)


def run_load(
    ctx: LoadContext,
    endpoint: Endpoint,
    params: Mapping[str, Any],
    *,
    refresh: bool = False,
    on_invalid: OnInvalid = "quarantine",
    **options: Any,
) -> Result:
    """Load ``endpoint`` with ``params`` (spec names; path identifiers too): validate (QueryError
    before any request), answer from the cache when fresh, else fetch + shape + validate + store.

    >>> result = run_load(ctx, ENDPOINTS["listings"], {"City": "Miami"}, max_results=100)  # doctest: +SKIP
    >>> result.frame, result.info.requests  # doctest: +SKIP
    """
    if endpoint.fetch is None or endpoint.resource is None:
        raise ValueError(f"{endpoint.name} is not a loader endpoint (raw JSON: ApiClient.call)")
    call = endpoint.call(params, options)
    refresh = check_flag("refresh", refresh)
    spec = LoadSpec(
        endpoint.resource,
        endpoint.name,
        call.key_params,
        endpoint.model,
        on_invalid,
        refresh,
        endpoint.host,
    )
    fetch = endpoint.fetch
    return load(ctx, spec, lambda: fetch(ctx, endpoint, call))
