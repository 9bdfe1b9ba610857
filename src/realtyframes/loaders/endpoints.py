"""How the client side loads each operation of the spec: records' key, schema, shaper, fetch
strategy, loader options, cache folder and lifetime, and which endpoint gives a record's details,
added to the row of :data:`realtyframes.loaders.OPERATIONS` (name, host, path, path parameter,
validator) that each :class:`Endpoint` carries. The table only: the load that reads it is
:func:`realtyframes.loaders._load.run_load`.

:data:`ENDPOINTS` (name -> :class:`Endpoint`) is what the client side reads: ``run_load`` (the
``Client``'s data methods), the cache's lifetimes (:data:`TTLS`), and whatever mirrors the REST
operations (MCP tools, the ``fetch`` command). :func:`realtyframes.loaders.prepare` (and
``ApiClient.call`` through it) reads the operations table itself: nothing registers anything.

>>> [e.path for e in ENDPOINTS.values() if e.paged]
['/v1/listings', '/v1/listings/changes', '/v1/contacts']
>>> ENDPOINTS["listings"].details.name
'listing'
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

from realtyframes.api import MAX_LISTING_IDS
from realtyframes.cache import ParquetCache
from realtyframes.loaders import _fetch
from realtyframes.loaders._base import Endpoint, Sync, default_cache_dir
from realtyframes.loaders._checks import check_count, check_flag
from realtyframes.loaders._operations import OPERATIONS
from realtyframes.loaders._page_info import PAGE_SIZE
from realtyframes.loaders._sync_apply import apply_changes
from realtyframes.schemas import (
    ANALYTICS_MODELS,
    STANDARD_STATUSES,
    Contact,
    ContactActivity,
    Listing,
    ListingChange,
)

__all__ = ["ENDPOINTS", "MARKET", "TTLS", "Endpoint", "make_cache"]

_PAGING_REFUSED = (
    f"paging is done by the loader (pages of {PAGE_SIZE}, all of them)",
    "max_results=N to stop after N listings",
)

#: One listing with every detail field: its own operation, and the details of the search.
_LISTING = Endpoint(
    OPERATIONS["listing"],
    model=Listing,
    shape=_fetch.shape_listing,
    fetch=_fetch.fetch_one,
    resource="listing",
    ttl=timedelta(days=1),
    echo=("ListingId", "ListingId"),
)


_CHANGES = Endpoint(
    OPERATIONS["listing_changes"],
    item_key="changes",
    model=ListingChange,
    shape=_fetch.shape_changes,
    fetch=_fetch.fetch_changes,
    resource="changes",
    ttl=timedelta(minutes=15),
    paged=True,
    key=_fetch.changes_key,
)

#: How ``sync_listings`` keeps a market current: one search per status, then the change feed
#: over the ids not closed, 100 at a time (docs/sync.md).
_MARKET_SYNC = Sync(
    key="ListingId",
    cursor=("OriginalEntryTimestamp", "ModificationTimestamp"),
    partition=("Status", STANDARD_STATUSES),
    status="StandardStatus",
    terminal="Closed",
    feed=_CHANGES,
    feed_ids="ListingIds",
    chunk=MAX_LISTING_IDS,
    apply=apply_changes,
    sort="-listdate",  # static: price changes during paging do not reshuffle the pages
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
        fetch=_fetch.fetch_paged,
        resource="listings",
        paged=True,
        options={"max_results": (None, check_count), "details": (False, check_flag)},
        refused={"Offset": _PAGING_REFUSED, "Limit": _PAGING_REFUSED},
        details=_LISTING,
        sync=_MARKET_SYNC,
    ),
    _LISTING,
    _CHANGES,
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
