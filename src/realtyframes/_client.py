"""``rf.Client``: the public face of the toolkit (hosts, credentials, cache settings).

>>> import realtyframes as rf
>>> client = rf.Client()            # no credentials: the embedded sandbox  # doctest: +SKIP
>>> client.me()["plan"]  # doctest: +SKIP
'standard'

Below the Client is its :attr:`~Client.session` (ApiClient, ParquetCache or None, settings); the
data methods call :mod:`realtyframes.loaders` with it and keep each result's report as ``last_load``.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pandas as pd

from realtyframes import loaders
from realtyframes._client_reso import ResoMixin
from realtyframes._client_settings import (
    TTL,
    ClientSettings,
    _check_credentials,
    _configured,
    _embedded_sandbox,
    _settings,
    refuse_source_options,
    require_api_key,
    session_of,
    split_options,
    start_before_requests,
    unchanged_while_idle,
)
from realtyframes.api import (
    DEFAULT_API_KEY_HEADER,
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_TIMEOUT,
    ApiClient,
    ErrorFormat,
    RateLimitState,
    RetryPolicy,
)
from realtyframes.oauth import Token
from realtyframes.schemas import Analytics, OnInvalid

if TYPE_CHECKING:
    from realtyframes.loaders.mcp import McpHost, McpSession
    from realtyframes.sandbox import EmbeddedSandbox

logger = logging.getLogger("realtyframes")


class Client(ResoMixin):
    """The realtyframes client: one account on one service (or the embedded sandbox).

    With no ``base_url`` and no credentials it uses the embedded sandbox (one per process, started
    before its first request: a run the cache answers alone starts no server).
    ``token`` (an OAuth access token or :class:`~realtyframes.oauth.Token`) is sent as Bearer;
    ``api_key`` as ``X-API-Key`` on the main host and as ``api_key`` on the legacy host.
    ``legacy_url`` and ``auth_url`` default to ``base_url``. Loader settings (``cache_dir``,
    ``cache``, ``ttl``, ``progress``, ``on_invalid``) are kept in :attr:`settings`. Keyword-only
    extras: ``api_key_header``, ``docs_url``, ``error_format`` ("json" or "problem"), ``retry``
    (:class:`~realtyframes.api.RetryPolicy`), ``pace``, ``transport`` and ``event_hooks`` (httpx),
    ``on_invalid`` ("quarantine" (default): invalid rows go to ``last_load.quarantine``;
    "raise": :class:`~realtyframes.SchemaValidationError`; "keep": kept, with a warning).

    >>> with Client() as client:  # doctest: +SKIP
    ...     client.me()["email"]
    'demo@demo-realty.example'
    """

    def __init__(
        self,
        base_url: str | None = None,
        token: str | Token | None = None,
        api_key: str | None = None,
        legacy_url: str | None = None,
        auth_url: str | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        cache: bool = True,
        ttl: TTL | Mapping[str, TTL] = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        max_retries: int | None = None,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
        progress: bool | None = None,
        *,
        api_key_header: str = DEFAULT_API_KEY_HEADER,
        docs_url: str | None = None,
        error_format: ErrorFormat = "json",
        retry: RetryPolicy | None = None,
        pace: bool = True,
        transport: httpx.BaseTransport | None = None,
        event_hooks: Mapping[str, list[Callable[..., Any]]] | None = None,
        on_invalid: OnInvalid = "quarantine",
        _explicit_sandbox: bool = False,
    ) -> None:
        access_token = token.access_token if isinstance(token, Token) else token
        _check_credentials(access_token, api_key, retry, max_retries)
        self._sandbox: EmbeddedSandbox | None = None
        cache_identity: str | None = None
        if base_url is None and not _explicit_sandbox:
            base_url, access_token, api_key, legacy_url, auth_url, cache_dir = _configured(
                access_token, api_key, legacy_url, auth_url, cache_dir
            )
        if base_url is None:  # the server itself starts before the first request, if one comes
            sandbox = _embedded_sandbox()
            base_url, cache_identity = sandbox.url, sandbox.identity
            event_hooks = start_before_requests(sandbox, event_hooks)
            self._sandbox = sandbox
        self._settings = _settings(cache_dir, cache, ttl, progress, on_invalid)
        self._local = threading.local()
        api = ApiClient(
            base_url, token=access_token, api_key=api_key, api_key_header=api_key_header,
            legacy_url=legacy_url, auth_url=auth_url, docs_url=docs_url, timeout=timeout,
            max_retries=max_retries, max_concurrency=max_concurrency, retry=retry, pace=pace,
            error_format=error_format, transport=transport, event_hooks=event_hooks,
            cache_identity=cache_identity, prepare=loaders.prepare,
        )  # fmt: skip
        self._session = session_of(api, self._settings, unchanged_while_idle(self._sandbox))

    @classmethod
    def from_env(cls, **overrides: Any) -> Client:
        """Alias of ``Client(**overrides)``, which reads the ``REALTYFRAMES_*`` variables and the
        config file for what the arguments leave out (kept for code written before it did).

        >>> client = Client.from_env(max_concurrency=8)  # doctest: +SKIP
        """
        return cls(**overrides)

    @classmethod
    def sandbox(cls, **options: Any) -> Client:
        """A client on the embedded sandbox (synthetic data), explicitly: whatever the environment
        says, and without the warning ``Client()`` gives when it falls back to it. ``options``:
        the client's own (``cache_dir``, ``progress``, ``max_concurrency`` ...).

        >>> with Client.sandbox(progress=False) as client:  # doctest: +SKIP
        ...     client.embedded
        True
        """
        refuse_source_options(options, "the sandbox client", "client options")
        return cls(_explicit_sandbox=True, **options)

    # -- properties ----------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        """The main host in use (the embedded sandbox's URL when none was given)."""
        return self._session.api.base_url

    @property
    def embedded(self) -> bool:
        """True when this client talks to the embedded sandbox started for this process."""
        return self._sandbox is not None

    @property
    def settings(self) -> ClientSettings:
        """Loader settings: cache_dir, cache, ttl, progress, on_invalid."""
        return self._settings

    @property
    def api(self) -> ApiClient:
        """The HTTP layer (advanced use: raw JSON, custom paging)."""
        return self._session.api

    @property
    def session(self) -> loaders.Session:
        """What every load, sync and plan of this client takes (advanced use: ``api``, ``cache``,
        ``progress``, ``on_invalid``); the :mod:`realtyframes.loaders` functions return results.

        >>> rf.loaders.sync_listings(client.session, {"City": "Miami"}).changes  # doctest: +SKIP
        """
        return self._session

    @property
    def rate_limit(self) -> RateLimitState | None:
        """The latest limit / remaining / reset seen (None before the first answer).

        >>> client.rate_limit.remaining  # doctest: +SKIP
        59
        """
        return self._session.api.rate_limit

    # -- operations of this layer --------------------------------------------------------------
    def me(self) -> dict[str, Any]:
        """The current user (``GET /v1/me``): the legacy user fields plus plan and scopes.

        >>> client.me()["plan"]  # doctest: +SKIP
        'standard'
        """
        return self.api.call("me")  # type: ignore[no-any-return]

    def legacy_me(self) -> dict[str, Any]:
        """The current user from the legacy host (``GET /api/me?api_key=...``; deprecated there).

        >>> client.legacy_me()["domain"]  # doctest: +SKIP
        'demo-realty.example'
        """
        require_api_key(self.api, "legacy_me")
        return self.api.call("legacy_me")  # type: ignore[no-any-return]

    # -- data: the loaders ------------------------------------------------------------------------
    def _kept(self, result: loaders.LoadResult) -> loaders.LoadResult:
        """``result``, its report kept as this thread's :attr:`last_load`."""
        self._local.last_load = result.info
        return result

    def _load(self, name: str, params: Mapping[str, Any], refresh: bool,
              on_invalid: OnInvalid | None, **options: Any) -> pd.DataFrame:  # fmt: skip
        """The valid frame of endpoint ``name`` loaded with ``params``."""
        endpoint = loaders.ENDPOINTS[name]
        result = loaders.run_load(
            self._session, endpoint, params, refresh=refresh, on_invalid=on_invalid, **options
        )
        return self._kept(result).frame

    @property
    def last_load(self) -> loaders.LoadInfo | None:
        """What the latest data call of this client (in this thread) did: a
        :class:`~realtyframes.loaders.LoadInfo` with ``rows``, ``quarantined``, ``requests``,
        ``from_cache``, ``fetched_at``, ``total``, ``warnings``, the ``quarantine`` frame (invalid
        rows with ``_quarantine_reason``) and, for listings, the ``media`` frame.

        >>> client.listings(City="Miami"); client.last_load.requests  # doctest: +SKIP
        9
        """
        return getattr(self._local, "last_load", None)

    def listings(
        self,
        *,
        max_results: int | None = None,
        details: bool = False,
        refresh: bool = False,
        on_invalid: OnInvalid | None = None,
        **filters: Any,
    ) -> pd.DataFrame:
        """Every listing matching ``filters`` (the spec's names: ``City=``, ``MinListPrice=``,
        ``Status=``, ``PropertyType=`` ...), one row per ListingId.

        Paged 50 at a time with the fewest requests (the first page's total plans the rest,
        fetched concurrently within the rate budget); a listing seen twice keeps its newest
        ``ModificationTimestamp``; the row count is checked against the server's total, and if
        the data moved while paging the gap is re-read, else a
        :class:`~realtyframes.loaders.DriftWarning` says what is missing. ``max_results``: stop
        after that many. ``details=True``: fetch every listing's detail (concurrently) and
        return every detail field; their Media is in ``client.last_load.media`` (ListingId,
        Order, MediaURL, ShortDescription). Invalid rows go to ``client.last_load.quarantine``
        (``on_invalid``: the client's setting by default). Cached (``refresh=True`` refetches).
        Bad filters raise :class:`~realtyframes.QueryError` before any request.

        >>> miami = client.listings(City="Miami", MinListPrice=500_000)  # doctest: +SKIP
        >>> top = client.listings(Status="Closed", max_results=100, details=True)  # doctest: +SKIP
        >>> photos = client.last_load.media  # doctest: +SKIP
        """
        if self._reso is not None:  # Client.reso: the RESO source's search
            return self._reso_listings(filters, max_results, details, refresh, on_invalid)
        loaders.refuse_none(filters)
        options = {"max_results": max_results, "details": details}
        return self._load("listings", filters, refresh, on_invalid, **options)

    def listing(
        self, listing_id: str, *, refresh: bool = False, on_invalid: OnInvalid | None = None
    ) -> pd.DataFrame:
        """One listing with every detail field (one row); its Media in ``client.last_load.media``.

        >>> client.listing("A10459460")[["ListPrice", "PublicRemarks"]]  # doctest: +SKIP
        """
        return self._load("listing", {"ListingId": listing_id}, refresh, on_invalid)

    def listing_changes(
        self,
        listing_ids: str | Iterable[str],
        since: str | date | datetime,
        change_type: str | None = None,
        *,
        refresh: bool = False,
        on_invalid: OnInvalid | None = None,
    ) -> pd.DataFrame:
        """Every price or status change of ``listing_ids`` after ``since`` (an ISO 8601
        timestamp, a date, or a tz-aware datetime); ``change_type``: "price_change" or
        "status_change". One row per change. Ids go 100 per request, each chunk paged.

        >>> ids = client.listings(City="Miami")["ListingId"]  # doctest: +SKIP
        >>> client.listing_changes(ids, "2026-05-01", change_type="price_change")  # doctest: +SKIP
        """
        params = loaders.changes_params(listing_ids, since, change_type)
        return self._load("listing_changes", params, refresh, on_invalid)

    def contacts(
        self, *, refresh: bool = False, on_invalid: OnInvalid | None = None
    ) -> pd.DataFrame:
        """Every CRM contact (``GET /v1/contacts``, paged): one row per contact.

        >>> client.contacts()[["name", "stage", "source"]]  # doctest: +SKIP
        """
        return self._load("contacts", {}, refresh, on_invalid)

    def contact(
        self, contact_id: str, *, refresh: bool = False, on_invalid: OnInvalid | None = None
    ) -> pd.DataFrame:
        """One contact (one row).

        >>> client.contact("6aee0d40422d25b1399de766")  # doctest: +SKIP
        """
        return self._load("contact", {"contactId": contact_id}, refresh, on_invalid)

    def contact_activity(
        self, contact_id: str, *, refresh: bool = False, on_invalid: OnInvalid | None = None
    ) -> pd.DataFrame:
        """A contact's activity: one row per event (contactId, id, type, timestamp, ...).

        >>> client.contact_activity("6aee0d40422d25b1399de766")  # doctest: +SKIP
        """
        return self._load("contact_activity", {"contactId": contact_id}, refresh, on_invalid)

    def legacy_contacts(
        self, *, refresh: bool = False, on_invalid: OnInvalid | None = None
    ) -> pd.DataFrame:
        """The contacts from the legacy host (``GET /api/getContacts?api_key=...``; deprecated).
        Its 404 (no contacts for the domain or key) gives an empty frame with the contact
        columns. Needs ``api_key``.

        >>> client.legacy_contacts()  # doctest: +SKIP
        """
        require_api_key(self.api, "legacy_contacts")
        return self._load("legacy_contacts", {}, refresh, on_invalid)

    def analytics(
        self,
        period: str = "30d",
        *,
        refresh: bool = False,
        on_invalid: OnInvalid | None = None,
        **filters: Any,
    ) -> Analytics:
        """Website analytics of ``period`` ("24h", "7d", "30d", "90d", "1y") with the spec's
        filters (``Page=``, ``Referrer=``, ``Device=``, ``Country=``, ``UtmSource=`` ...), as
        :class:`~realtyframes.Analytics` (overview, timelines, pages, referrers, countries,
        browsers, os, devices, utm).

        >>> client.analytics("7d", Device="mobile").overview  # doctest: +SKIP
        """
        analytics, result = loaders.load_analytics(
            self._session, period, filters, refresh=refresh, on_invalid=on_invalid
        )
        self._kept(result)
        return analytics

    def sync_listings(
        self,
        *,
        refresh: bool = False,
        history_since: Any = None,
        wait: float | None = loaders.SYNC_WAIT,
        **scope: Any,
    ) -> pd.DataFrame:
        """The whole market of a scope (``PropertyType=``, ``City=``, ``PostalCode=`` ... all
        but ``Status`` and the price / days ranges), every status, kept current incrementally in
        the cache; ``refresh=True`` reloads it in full (the history is kept). The first sync
        backfills the history from the change feed (since the oldest listing's entry, or
        ``history_since=`` a date; ``False`` skips it): see :meth:`listing_history`. After an
        incremental sync, ``client.last_load.changes`` lists what changed (new, price_cut,
        pending, closed, back_on_market ...). How it works and what it costs: ``docs/sync.md``.
        One sync of a scope at a time, in every process: while another syncs it, this call waits
        (``wait`` seconds, default 900; None: no limit; then :class:`ScopeBusyError`) and takes
        that sync's market from the cache (``last_load.from_cache``, no request).

        >>> market = client.sync_listings(PropertyType="Residential", City="Miami")  # doctest: +SKIP
        >>> market[market.StandardStatus == "Active"].ListPrice.median()  # doctest: +SKIP
        """
        synced = loaders.sync_listings(
            self._session, scope, refresh=refresh, history_since=history_since, wait=wait
        )
        return self._kept(synced).frame

    def listing_history(self, **scope: Any) -> pd.DataFrame:
        """Every change the service reported for a scope's listings (backfilled by the first sync,
        extended by each later one): ListingId, ChangeType, ChangeTimestamp, old and new price /
        status, from the cache; no request. Feed it to :func:`realtyframes.price_drops`.

        >>> history = client.listing_history(PropertyType="Residential", City="Miami")  # doctest: +SKIP
        """
        if self._reso is not None:
            return self._reso_history(scope)
        return loaders.listing_history(self._session, scope)

    def sync_state(self, **scope: Any) -> dict[str, Any] | None:
        """The sync state of a scope (watermarks, id chunk size, syncs, last requests), or None.

        >>> client.sync_state(City="Miami")["last_requests"]  # doctest: +SKIP
        """
        if self._reso is not None:
            return self._reso_sync_state(scope)
        return loaders.sync_state(self._session, scope)

    def mcp(self, host: McpHost = "main") -> McpSession:
        """An MCP session on the service (a context manager): ``host="main"`` the product tools
        (``<base_url>/mcp``), ``"docs"`` the documentation MCP. It uses this client's credentials,
        rate budget, retries and masking. ``.tools()`` -> DataFrame; ``.call(name, **arguments)``
        -> DataFrame (a list of records) or dict; see :mod:`realtyframes.loaders.mcp`.

        >>> with client.mcp() as mcp:  # doctest: +SKIP
        ...     mcp.call("search_listings", City="Miami")
        """
        from realtyframes.loaders.mcp import McpSession

        return McpSession(self.api, host, self._session.on_invalid)

    def dataset_path(self, resource: str) -> Path:
        """The root of ``resource``'s cache (``"listings"``, ``"market"`` ..., or a companion such
        as ``"listings.media"``): a hive-partitioned Parquet dataset, partition columns ``account``
        and ``scope``, that DuckDB, Polars, pyarrow and Spark read as one table (docs/cache.md).
        Nothing is fetched; the folder exists once something was cached.

        >>> root = client.dataset_path("listings")  # doctest: +SKIP
        >>> duckdb.sql(f"FROM read_parquet('{root}/**/*.parquet', hive_partitioning=true)")  # doctest: +SKIP
        """
        return loaders.dataset_path(self._session, resource)

    def plan_listings(
        self, *, max_results: int | None = None, details: bool = False, **filters: Any
    ) -> loaders.Plan:
        """What ``listings(**filters, max_results=, details=)`` will cost when fetched, from one
        ``Limit=1`` search: rows, pages of 50, detail requests, and the time at the account's
        rate limit (the server's ``RateLimit-Policy``). A :class:`~realtyframes.Plan`
        (``plan.requests`` or ``plan["requests"]``). A fresh cache entry would answer with none.

        >>> client.plan_listings(City="Miami", details=True)  # doctest: +SKIP
        Plan(listings details: 412 rows -> 421 requests (9 pages, 412 details, 0 feed), 7 min 1 s at 60 requests / 60 s)
        """
        return loaders.plan_listings(
            self._session, filters, max_results=max_results, details=details
        )

    def plan_sync(
        self, *, refresh: bool = False, history_since: Any = None, **scope: Any
    ) -> loaders.Plan:
        """What ``sync_listings(**scope)`` will cost, from a few cheap requests: a first sync (or
        ``refresh=True``) reads one page of each status and asks the change feed the changes of
        those listings (``Limit=1``: their count) to foresee the history backfill; a later sync
        asks each status for its new listings since the last sync (``Limit=1``) and samples the
        change feed once. See ``docs/loading.md``, "Know the cost before paying it".

        >>> client.plan_sync(City="Miami").requests  # doctest: +SKIP
        114
        """
        return loaders.plan_sync(self._session, scope, refresh=refresh, history_since=history_since)

    def runs(self, *, last: int | None = None, failed: bool = False) -> pd.DataFrame:
        """The run history of this client's cache (every load, sync, report and watch run of
        every client on it): one row per run, oldest first; ``last=N`` keeps the N latest,
        ``failed=True`` only failed runs. Columns: ``docs/cache.md``, "The run history".

        >>> client.runs(last=3)[["started", "kind", "resource", "requests", "rows", "outcome"]]  # doctest: +SKIP
        """
        return loaders.run_history(self._session, last=last, failed=failed)

    # -- copies and lifetime -------------------------------------------------------------------
    def with_options(self, **options: Any) -> Client:
        """A copy with other options of ``Client(...)`` (``timeout``, ``max_concurrency``, ``cache``,
        ``ttl``, ``on_invalid`` ...): it shares the connection pool and the rate budget.

        >>> fast = client.with_options(max_concurrency=8, cache=False)  # doctest: +SKIP
        """
        api_options, changes = split_options(options)
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__)
        copy._local = threading.local()
        api = self.api.with_options(**api_options)
        copy._session = replace(self._session, api=api)
        if changes:
            copy._settings = _settings(**{**self._settings.__dict__, **changes})
            copy._session = session_of(api, copy._settings, self._session.unchanged)
        copy._session = copy._sourced(copy._session)  # a RESO copy syncs with its own settings
        return copy

    def close(self) -> None:
        """Close the connection pool (the embedded sandbox keeps running for the process)."""
        self.api.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        where = "embedded sandbox" if self.embedded else self.base_url
        return self.api.mask(
            f"Client(base_url={where!r}, auth={self.api.auth_kind!r}, cache={self._settings.cache})"
        )
