"""Every operation of the spec, declared once: host, path, parameter validator, records' key,
schema, shaper, fetch strategy, cache folder and lifetime.

:data:`ENDPOINTS` (name -> :class:`Endpoint`) is what the client side reads: :func:`run_load` (the
loaders and the ``Client``'s data methods), ``ApiClient.call`` / :func:`realtyframes.api.prepare`
(each endpoint is registered there), the cache's lifetimes (:data:`TTLS`), and whatever mirrors
the REST operations (MCP tools, the ``fetch`` command). Each path is written here and nowhere else.

>>> [e.path for e in ENDPOINTS.values() if e.paged]
['/v1/listings', '/v1/listings/changes', '/v1/contacts']
>>> ENDPOINTS["listing"].prepare({"ListingId": "A1"}).path
'/v1/listings/A1'
>>> result = run_load(ctx, ENDPOINTS["contacts"], {})  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from realtyframes.api._http import Host
from realtyframes.api._params import (
    PreparedRequest,
    Validator,
    build_request,
    register,
    validate_analytics,
    validate_listing_changes,
    validate_listing_search,
    validate_paging,
)
from realtyframes.cache import ParquetCache
from realtyframes.errors import QueryError
from realtyframes.loaders import _fetch
from realtyframes.loaders._base import (
    LoadContext,
    Loaded,
    LoadSpec,
    Result,
    default_cache_dir,
    load,
)
from realtyframes.loaders._checks import check_count, check_flag
from realtyframes.schemas import (
    ANALYTICS_MODELS,
    Contact,
    ContactActivity,
    Listing,
    ListingChange,
    OnInvalid,
)

__all__ = ["ENDPOINTS", "MARKET", "TTLS", "Endpoint", "make_cache", "run_load"]

Shaper = Callable[[Sequence[bytes]], Loaded]
Fetcher = Callable[[LoadContext, "Endpoint", _fetch.Call], Loaded]

_HOUR = timedelta(hours=1)
_PAGING_REFUSED = (
    "paging is done by the loader (pages of 50, all of them)",
    "max_results=N to stop after N listings",
)


@dataclass(frozen=True)
class Endpoint:
    """One operation of the spec and how the client side loads it.

    ``path`` is a template whose ``{}`` is the ``path_param`` (given under its spec name).
    ``validate``: the query parameters' validator (:mod:`realtyframes.api._params`). Loader
    endpoints (``resource`` set) also have the ``model`` their rows are validated against, the
    ``shape`` of raw bodies into frames, the ``fetch`` strategy, the cache folder ``resource``
    and its ``ttl`` (None: never expires). ``item_key``: the records' member of a page
    (``paged``). ``options``: the loader's own arguments, their defaults and checks; ``refused``: spec
    parameters the loader manages itself (name -> (why, what instead)); ``key``: the cache key's
    parameters from the validated query (default: the query itself). ``echo``: what the answer
    says back, as (top-level field of the body, the request's parameter): the load refuses an
    answer whose field is present and differs (:mod:`realtyframes.loaders._answers`).
    """

    name: str
    host: Host
    path: str
    validate: Validator | None = None
    path_param: str | None = None
    item_key: str | None = None
    model: Any = None
    shape: Shaper | None = None
    fetch: Fetcher | None = None
    resource: str | None = None
    ttl: timedelta | None = _HOUR
    paged: bool = False
    summary: str = ""
    options: Mapping[str, tuple[Any, Callable[[str, Any], Any]]] = field(default_factory=dict)
    refused: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    key: Callable[[Mapping[str, str]], dict[str, Any]] | None = None
    echo: tuple[str, str] | None = None

    def at(self, identifier: str) -> str:
        """The path of the resource ``identifier`` names (``path_param`` endpoints).

        >>> ENDPOINTS["contact_activity"].at("c 1")
        '/v1/contacts/c%201/activity'
        """
        return self.prepare({self.path_param or "id": identifier}).path

    def prepare(self, params: Mapping[str, Any] | None = None) -> PreparedRequest:
        """The validated request (path filled in); QueryError before any I/O."""
        return build_request(
            self.name,
            self.path,
            params,
            host=self.host,
            path_param=self.path_param,
            validate=self.validate,
        )

    def call(self, params: Mapping[str, Any], options: Mapping[str, Any]) -> _fetch.Call:
        """A validated load: request, checked loader options and the cache key's parameters."""
        for name, (why, instead) in self.refused.items():
            if name in params:
                raise QueryError(name, why, instead)
        request = self.prepare(params)
        unknown = set(options) - set(self.options)
        if unknown:
            raise TypeError(f"{self.name}: unexpected options {sorted(unknown)}")
        checked = {
            name: check(name, options.get(name, default))
            for name, (default, check) in self.options.items()
        }
        key = self.key(request.params) if self.key is not None else dict(request.params)
        if self.path_param is not None:
            key = {self.path_param: params[self.path_param], **key}
        echo: dict[str, str] = {}
        if self.echo is not None:
            field, param = self.echo
            asked = params.get(param) if param == self.path_param else request.params.get(param)
            if asked is not None:
                echo[field] = str(asked)
        return _fetch.Call(request.path, request.params, checked, {**key, **checked}, echo)


def _declare(*endpoints: Endpoint) -> dict[str, Endpoint]:
    for endpoint in endpoints:
        register(endpoint)
    return {e.name: e for e in endpoints}


#: The spec's operations by name, in the spec's order.
ENDPOINTS: dict[str, Endpoint] = _declare(
    Endpoint(
        "listings",
        "base",
        "/v1/listings",
        validate_listing_search,
        item_key="listings",
        model=Listing,
        shape=_fetch.shape_listings,
        fetch=_fetch.fetch_listings,
        resource="listings",
        paged=True,
        summary="Search listings (every page): one row per ListingId",
        options={"max_results": (None, check_count), "details": (False, check_flag)},
        refused={"Offset": _PAGING_REFUSED, "Limit": _PAGING_REFUSED},
    ),
    Endpoint(
        "listing",
        "base",
        "/v1/listings/{}",
        path_param="ListingId",
        model=Listing,
        shape=_fetch.shape_listing,
        fetch=_fetch.fetch_one,
        resource="listing",
        ttl=timedelta(days=1),
        summary="One listing with every detail field and its Media",
        echo=("ListingId", "ListingId"),
    ),
    Endpoint(
        "listing_changes",
        "base",
        "/v1/listings/changes",
        validate_listing_changes,
        item_key="changes",
        model=ListingChange,
        shape=_fetch.shape_changes,
        fetch=_fetch.fetch_changes,
        resource="changes",
        ttl=timedelta(minutes=15),
        paged=True,
        summary="Price and status changes of listings since a time: one row per change",
        key=_fetch.changes_key,
    ),
    Endpoint(
        "contacts",
        "base",
        "/v1/contacts",
        validate_paging,
        item_key="contacts",
        model=Contact,
        shape=_fetch.shape_contacts,
        fetch=_fetch.fetch_paged,
        resource="contacts",
        paged=True,
        summary="Every CRM contact: one row per contact",
    ),
    Endpoint(
        "contact",
        "base",
        "/v1/contacts/{}",
        path_param="contactId",
        model=Contact,
        shape=_fetch.shape_contact,
        fetch=_fetch.fetch_one,
        resource="contact",
        summary="One CRM contact",
        echo=("id", "contactId"),
    ),
    Endpoint(
        "contact_activity",
        "base",
        "/v1/contacts/{}/activity",
        path_param="contactId",
        model=ContactActivity,
        shape=_fetch.shape_activity,
        fetch=_fetch.fetch_one,
        resource="activity",
        summary="A contact's activity: one row per event",
        echo=("contactId", "contactId"),
    ),
    Endpoint(
        "analytics",
        "base",
        "/v1/analytics",
        validate_analytics,
        model=ANALYTICS_MODELS["overview"],
        shape=_fetch.shape_analytics,
        fetch=_fetch.fetch_one,
        resource="analytics",
        summary="Website analytics of a period: overview plus breakdowns",
        echo=("period", "Period"),
    ),
    Endpoint("me", "base", "/v1/me", summary="The current user, plan and scopes"),
    Endpoint("legacy_me", "legacy", "/api/me", summary="The current user (legacy host)"),
    Endpoint(
        "legacy_contacts",
        "legacy",
        "/api/getContacts",
        model=Contact,
        shape=_fetch.shape_legacy_contacts,
        fetch=_fetch.fetch_or_empty,
        resource="legacy_contacts",
        summary="The contacts list of the legacy host (deprecated)",
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
