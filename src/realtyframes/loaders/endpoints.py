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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from realtyframes.api import OPERATIONS, Host, Operation, PreparedRequest
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
    """One operation of the spec (:data:`realtyframes.api.OPERATIONS`: name, host, path, path
    parameter, validator) and how the client side loads it.

    Loader endpoints (``resource`` set) also have the ``model`` their rows are validated against,
    the ``shape`` of raw bodies into frames, the ``fetch`` strategy, the cache folder ``resource``
    and its ``ttl`` (None: never expires). ``item_key``: the records' member of a page
    (``paged``). ``options``: the loader's own arguments, their defaults and checks; ``refused``: spec
    parameters the loader manages itself (name -> (why, what instead)); ``key``: the cache key's
    parameters from the validated query (default: the query itself). ``echo``: what the answer
    says back, as (top-level field of the body, the request's parameter): the load refuses an
    answer whose field is present and differs (:mod:`realtyframes.loaders._answers`).
    """

    operation: Operation
    item_key: str | None = None
    model: Any = None
    shape: Shaper | None = None
    fetch: Fetcher | None = None
    resource: str | None = None
    ttl: timedelta | None = _HOUR
    paged: bool = False
    options: Mapping[str, tuple[Any, Callable[[str, Any], Any]]] = field(default_factory=dict)
    refused: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    key: Callable[[Mapping[str, str]], dict[str, Any]] | None = None
    echo: tuple[str, str] | None = None

    @property
    def name(self) -> str:
        """The operation's name (``listings``)."""
        return self.operation.name

    @property
    def host(self) -> Host:
        """The host the operation lives on (``base``, ``legacy``)."""
        return self.operation.host

    @property
    def path(self) -> str:
        """The path template (``/v1/listings/{}``)."""
        return self.operation.path

    @property
    def path_param(self) -> str | None:
        """The spec name of the identifier in the path, if any (``ListingId``)."""
        return self.operation.path_param

    @property
    def summary(self) -> str:
        """One line on what the operation returns."""
        return self.operation.summary

    def at(self, identifier: str) -> str:
        """The path of the resource ``identifier`` names (``path_param`` endpoints).

        >>> ENDPOINTS["contact_activity"].at("c 1")
        '/v1/contacts/c%201/activity'
        """
        return self.operation.at(identifier)

    def prepare(self, params: Mapping[str, Any] | None = None) -> PreparedRequest:
        """The validated request (path filled in); QueryError before any I/O."""
        return self.operation.prepare(params)

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
