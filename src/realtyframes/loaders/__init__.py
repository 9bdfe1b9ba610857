"""Loaders: endpoint -> paged raw JSON -> validated DataFrame, cached as Parquet.

The spec's operations and their validation (``OPERATIONS``, ``prepare``, ``validate_*``) are
here, above the api: a load's parameters are validated and keyed on this floor, then handed down
once. Every load, sync and plan takes a :class:`Session` explicitly and returns its result (a
:class:`LoadResult`); each is one run of the run history. Each operation is declared once in
:mod:`~realtyframes.loaders.endpoints` (``ENDPOINTS``) and loaded by ``run_load`` (``_load``) over
fetch strategies (``_fetch``) and paging (``_paging``); ``_sync`` keeps whole markets current.
Each name is imported on first use (one line each below), so the command line's help reads the
parameter tables without pandas.

>>> import realtyframes as rf
>>> client = rf.Client()  # doctest: +SKIP
>>> result = run_load(client.session, ENDPOINTS["listings"], {"City": "Miami"})  # doctest: +SKIP
>>> result.frame, result.requests  # doctest: +SKIP
"""

from typing import TYPE_CHECKING

from realtyframes._lazy import lazy_declared

if TYPE_CHECKING:  # the package's names, one line each: the only place they are declared
    from realtyframes.loaders._base import Loaded as Loaded
    from realtyframes.loaders._base import LoadInfo as LoadInfo
    from realtyframes.loaders._base import LoadResult as LoadResult
    from realtyframes.loaders._base import Session as Session
    from realtyframes.loaders._base import default_cache_dir as default_cache_dir
    from realtyframes.loaders._checkers import Call as Call
    from realtyframes.loaders._checkers import Operation as Operation
    from realtyframes.loaders._checkers import PreparedRequest as PreparedRequest
    from realtyframes.loaders._checkers import prepare_call as prepare_call
    from realtyframes.loaders._checkers import refuse_none as refuse_none
    from realtyframes.loaders._checks import check_flag as check_flag
    from realtyframes.loaders._checks import check_on_invalid as check_on_invalid
    from realtyframes.loaders._fetch import MAX_IDS_PER_REQUEST as MAX_IDS_PER_REQUEST
    from realtyframes.loaders._fetch import fetch_details as fetch_details
    from realtyframes.loaders._load import Run as Run
    from realtyframes.loaders._load import recorded as recorded
    from realtyframes.loaders._load import run_load as run_load
    from realtyframes.loaders._operations import ANALYTICS as ANALYTICS
    from realtyframes.loaders._operations import CONTACTS as CONTACTS
    from realtyframes.loaders._operations import LISTING_CHANGES as LISTING_CHANGES
    from realtyframes.loaders._operations import LISTING_DEFAULTS as LISTING_DEFAULTS
    from realtyframes.loaders._operations import LISTING_SEARCH as LISTING_SEARCH
    from realtyframes.loaders._operations import OPERATIONS as OPERATIONS
    from realtyframes.loaders._operations import PAGING_PARAMETERS as PAGING_PARAMETERS
    from realtyframes.loaders._operations import RANGE_PAIRS as RANGE_PAIRS
    from realtyframes.loaders._operations import SUBTYPES as SUBTYPES
    from realtyframes.loaders._operations import prepare as prepare
    from realtyframes.loaders._operations import validate_analytics as validate_analytics
    from realtyframes.loaders._operations import (
        validate_listing_changes as validate_listing_changes,
    )
    from realtyframes.loaders._operations import validate_listing_search as validate_listing_search
    from realtyframes.loaders._operations import validate_paging as validate_paging
    from realtyframes.loaders._paging import PAGE_SIZE as PAGE_SIZE
    from realtyframes.loaders._paging import DriftWarning as DriftWarning
    from realtyframes.loaders._paging import Paged as Paged
    from realtyframes.loaders._paging import fetch_pages as fetch_pages
    from realtyframes.loaders._paging import fetch_pages_many as fetch_pages_many
    from realtyframes.loaders._plan import Plan as Plan
    from realtyframes.loaders._plan import duration as duration
    from realtyframes.loaders._plan import plan_listings as plan_listings
    from realtyframes.loaders._plan import plan_sync as plan_sync
    from realtyframes.loaders._runs import changes_params as changes_params
    from realtyframes.loaders._runs import dataset_path as dataset_path
    from realtyframes.loaders._runs import load_analytics as load_analytics
    from realtyframes.loaders._runs import run_history as run_history
    from realtyframes.loaders._sync import RESOURCE as SYNC_RESOURCE  # noqa: F401
    from realtyframes.loaders._sync import SYNC_REFUSED as SYNC_REFUSED
    from realtyframes.loaders._sync import SYNC_WAIT as SYNC_WAIT
    from realtyframes.loaders._sync import listing_history as listing_history
    from realtyframes.loaders._sync import sync_listings as sync_listings
    from realtyframes.loaders._sync import sync_lock as sync_lock
    from realtyframes.loaders._sync import sync_scope as sync_scope
    from realtyframes.loaders._sync import sync_state as sync_state
    from realtyframes.loaders._sync import synced_market as synced_market
    from realtyframes.loaders._sync_apply import append_history as append_history
    from realtyframes.loaders._sync_apply import data_time_of as data_time_of
    from realtyframes.loaders._sync_apply import grow_days_on_market as grow_days_on_market
    from realtyframes.loaders._sync_entry import changes_between as changes_between
    from realtyframes.loaders._sync_entry import check_wait as check_wait
    from realtyframes.loaders._sync_entry import describe_scope as describe_scope
    from realtyframes.loaders._sync_entry import scope_lock as scope_lock
    from realtyframes.loaders.endpoints import ENDPOINTS as ENDPOINTS
    from realtyframes.loaders.endpoints import Endpoint as Endpoint
    from realtyframes.loaders.endpoints import make_cache as make_cache

__getattr__, __dir__ = lazy_declared(__name__, __file__, globals(), [])
