"""Loaders: endpoint -> paged raw JSON -> validated DataFrame, cached as Parquet.

Every load, sync and plan takes a :class:`Session` (the HTTP layer, the cache, the settings)
explicitly and returns its result (a :class:`LoadResult`: the frame and its report); each load
and sync is one run of the run history (``_runs``). Each operation is declared once in
:mod:`~realtyframes.loaders.endpoints` (``ENDPOINTS``) and loaded by ``run_load`` over the
shared machinery: fetch strategies and shapers (``_fetch``),
paging (``_paging``), the load top to bottom (``_load``: ``run_load`` -> ``load``: cache lookup,
fetch, validation with a quarantine, store), the shared types (``_base``), argument checks
(``_checks``, each argument in one place); ``_sync`` keeps whole markets current.
Users call them through :class:`realtyframes.Client`.

>>> import realtyframes as rf
>>> client = rf.Client()  # doctest: +SKIP
>>> result = run_load(client.session, ENDPOINTS["listings"], {"City": "Miami"})  # doctest: +SKIP
>>> result.frame, result.requests  # doctest: +SKIP
"""

from realtyframes.loaders._base import (
    Call,
    Loaded,
    LoadInfo,
    LoadResult,
    Session,
    default_cache_dir,
)
from realtyframes.loaders._checks import check_flag, check_on_invalid
from realtyframes.loaders._fetch import MAX_IDS_PER_REQUEST, fetch_details
from realtyframes.loaders._load import Run, recorded, run_load
from realtyframes.loaders._paging import (
    PAGE_SIZE,
    DriftWarning,
    Paged,
    fetch_pages,
    fetch_pages_many,
)
from realtyframes.loaders._plan import Plan, duration, plan_listings, plan_sync
from realtyframes.loaders._runs import changes_params, dataset_path, load_analytics, run_history
from realtyframes.loaders._sync import RESOURCE as SYNC_RESOURCE
from realtyframes.loaders._sync import (
    SYNC_REFUSED,
    SYNC_WAIT,
    listing_history,
    sync_listings,
    sync_lock,
    sync_scope,
    sync_state,
    synced_market,
)
from realtyframes.loaders._sync_apply import data_time_of, grow_days_on_market
from realtyframes.loaders._sync_lock import changes_between, check_wait, describe_scope, scope_lock
from realtyframes.loaders.endpoints import ENDPOINTS, Endpoint, make_cache
from realtyframes.loaders.endpoints import TTLS as LOADER_TTLS

__all__ = [
    "ENDPOINTS",
    "LOADER_TTLS",
    "MAX_IDS_PER_REQUEST",
    "PAGE_SIZE",
    "SYNC_REFUSED",
    "SYNC_RESOURCE",
    "SYNC_WAIT",
    "Call",
    "DriftWarning",
    "Endpoint",
    "LoadInfo",
    "LoadResult",
    "Loaded",
    "Paged",
    "Plan",
    "Run",
    "Session",
    "changes_between",
    "changes_params",
    "check_flag",
    "check_on_invalid",
    "check_wait",
    "data_time_of",
    "dataset_path",
    "default_cache_dir",
    "describe_scope",
    "duration",
    "fetch_details",
    "fetch_pages",
    "fetch_pages_many",
    "grow_days_on_market",
    "listing_history",
    "load_analytics",
    "make_cache",
    "plan_listings",
    "plan_sync",
    "recorded",
    "run_history",
    "run_load",
    "scope_lock",
    "sync_listings",
    "sync_lock",
    "sync_scope",
    "sync_state",
    "synced_market",
]
