"""The types of the endpoint table: :class:`Endpoint` (an operation of the spec and how the client
side loads it) and :class:`Call` (one validated load of an endpoint).

The table itself is :data:`realtyframes.loaders.endpoints.ENDPOINTS`; the fetch strategies and
shapers it names are in :mod:`realtyframes.loaders._fetch`, which takes these types from here.

>>> from realtyframes.loaders import ENDPOINTS
>>> ENDPOINTS["listing"].call({"ListingId": "A1"}, {}).path
'/v1/listings/A1'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from realtyframes.api import Host, Operation, PreparedRequest
from realtyframes.cache import Checkpoint
from realtyframes.errors import QueryError
from realtyframes.loaders._base import Loaded, Session

__all__ = ["Call", "Endpoint", "Fetcher", "Shaper", "Sync"]

Shaper = Callable[[Sequence[bytes]], Loaded]
Fetcher = Callable[[Session, "Endpoint", "Call", Checkpoint | None], Loaded]

_HOUR = timedelta(hours=1)


@dataclass(frozen=True)
class Call:
    """One validated load of an endpoint: the request, the loader's options, the cache key's
    parameters, and what the answer must echo (top-level field -> value asked)."""

    path: str
    query: dict[str, str]
    options: dict[str, Any] = field(default_factory=dict)
    key_params: dict[str, Any] = field(default_factory=dict)
    echo: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Sync:
    """How a list endpoint's whole collection is kept current (``Endpoint.sync``; the runner is
    :mod:`realtyframes.loaders._sync_steps`).

    ``key``: the records' identity; ``cursor``: (the field a new record's entry is read from, the
    field its last change is read from): their newest values are the watermarks, the ``Since`` of
    the next search and of the change feed; ``partition``: (parameter, values): one search per
    value (each status); ``terminal``: the value of ``status`` that leaves the feed (a record in
    it never changes again); ``feed``: the change feed's endpoint and ``feed_ids`` its id-list
    parameter, asked ``chunk`` ids at a time (the spec's 100); ``apply``: the step that applies
    changes to the rows -> (rows, touched ids, ids whose detail must be read: the ``closing``
    ones, from the endpoint's ``details``); ``sort``: a static order to page in.
    """

    key: str
    cursor: tuple[str, str]
    partition: tuple[str, tuple[str, ...]]
    status: str
    terminal: str
    feed: Endpoint
    feed_ids: str
    chunk: int
    apply: Callable[[Any, Any], tuple[Any, list[str], list[str]]]
    sort: str


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
    ``details``: the endpoint each record's full detail is read from when the load is asked for
    them (the ``details`` option: the search's rows replaced by the detail rows, named by the
    detail endpoint's ``path_param``). ``sync``: how ``sync_listings`` keeps the whole
    collection current (:class:`Sync`).
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
    details: Endpoint | None = None
    sync: Sync | None = None

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

        >>> from realtyframes.loaders import ENDPOINTS
        >>> ENDPOINTS["contact_activity"].at("c 1")
        '/v1/contacts/c%201/activity'
        """
        return self.operation.at(identifier)

    def prepare(self, params: Mapping[str, Any] | None = None) -> PreparedRequest:
        """The validated request (path filled in); QueryError before any I/O."""
        return self.operation.prepare(params)

    def call(self, params: Mapping[str, Any], options: Mapping[str, Any]) -> Call:
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
        return Call(request.path, request.params, checked, {**key, **checked}, echo)
