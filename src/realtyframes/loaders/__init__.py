"""Loaders: endpoint -> paged raw JSON -> validated DataFrame, cached as Parquet.

One small module per endpoint family (``_listings``, ``_changes``, ``_crm``, ``_analytics``) over
the shared machinery: paging (``_paging``), cache lookup / validation / quarantine / load report
(``_base``). Users call them through :class:`realtyframes.Client`.

>>> import realtyframes as rf
>>> client = rf.Client()  # doctest: +SKIP
>>> client.listings(City="Miami"); client.last_load  # doctest: +SKIP
"""

from realtyframes.loaders._analytics import load_analytics
from realtyframes.loaders._base import (
    LOADER_TTLS,
    LoadContext,
    LoadInfo,
    check_on_invalid,
    default_cache_dir,
    make_cache,
)
from realtyframes.loaders._changes import MAX_IDS_PER_REQUEST, load_changes
from realtyframes.loaders._crm import (
    load_activity,
    load_contact,
    load_contacts,
    load_legacy_contacts,
)
from realtyframes.loaders._listings import fetch_details, load_listing, load_listings
from realtyframes.loaders._paging import (
    PAGE_SIZE,
    DriftWarning,
    Paged,
    fetch_pages,
    fetch_pages_many,
)

__all__ = [
    "LOADER_TTLS",
    "MAX_IDS_PER_REQUEST",
    "PAGE_SIZE",
    "DriftWarning",
    "LoadContext",
    "LoadInfo",
    "Paged",
    "check_on_invalid",
    "default_cache_dir",
    "fetch_details",
    "fetch_pages",
    "fetch_pages_many",
    "load_activity",
    "load_analytics",
    "load_changes",
    "load_contact",
    "load_contacts",
    "load_legacy_contacts",
    "load_listing",
    "load_listings",
    "make_cache",
]
