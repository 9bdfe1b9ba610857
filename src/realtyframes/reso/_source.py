"""A RESO Web API source under the loaders: its searches are loader endpoints
(:class:`~realtyframes.loaders.Endpoint`) run by :func:`~realtyframes.loaders.run_load`, so
the cache, the checkpoints and the validation are the platform source's own.

``Property`` pages are translated record by record into the platform's listing objects through
the field map (:mod:`._fields`) and shaped by the platform's shaper
(:func:`realtyframes.schemas.listings_from_pages`): the same columns and dtypes by construction.

>>> source = ResoSource(client.api, settings)  # doctest: +SKIP
>>> run_load(client.session, source.endpoint("listings"), {"City": "Miami"})  # doctest: +SKIP
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import pandas as pd

from realtyframes.api import ApiClient, error_from_response
from realtyframes.cache import Checkpoint
from realtyframes.errors import QueryError, ResponseMismatchError
from realtyframes.loaders import LISTING_SEARCH, Call, Endpoint, Loaded, Operation, Session
from realtyframes.reso._budgets import Budgets
from realtyframes.reso._fields import EXTRA_PROPERTY_FIELDS, PROPERTY_FIELDS
from realtyframes.reso._metadata import (
    LOOKUP,
    Lookups,
    ServerMetadata,
    lookup_filter,
    read_metadata,
    server_lookups,
)
from realtyframes.reso._models import RESOURCES, shape_records
from realtyframes.reso._pages import iter_pages, read_all
from realtyframes.reso._query import check_names, literal, names_in, property_filter
from realtyframes.reso._settings import ResoSettings
from realtyframes.schemas import Listing, listings_from_pages

__all__ = ["ResoSource", "listing_objects", "with_reso_fields", "with_source"]


def listing_objects(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """DD Property records -> the platform's listing objects (its search's field names).

    >>> listing_objects([{"ListingId": "A1", "Latitude": 25.7, "Longitude": -80.2}])[0]["coordinates"]
    {'lat': 25.7, 'lng': -80.2}
    """
    out = []
    for record in records:
        obj = {name: record.get(dd) for name, dd in PROPERTY_FIELDS.items()}
        lat, lng = obj.pop("Latitude"), obj.pop("Longitude")
        obj["coordinates"] = {"lat": lat, "lng": lng} if lat is not None else None
        out.append(obj)
    return out


def _max_results(name: str, value: Any) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise QueryError(name, f"expected an integer >= 1, got {value!r}", "1 or more, or None")
    return value


class ResoSource:
    """One RESO server read by one client: its settings, its ``$metadata`` (read once, when a
    filter needs it) and its loader endpoints."""

    def __init__(
        self, api: ApiClient, settings: ResoSettings, budgets: Budgets | None = None
    ) -> None:
        self.api = api
        self.settings = settings
        self.budgets = budgets
        self._metadata: ServerMetadata | None = None
        self._lookups: Lookups | None = None
        self.lookup_requests = 0  #: the pages of the Lookup resource :meth:`lookups` read
        self._lock = threading.Lock()

    @property
    def profile(self) -> Any:
        """The vendor profile (:class:`~realtyframes.reso.VendorProfile`)."""
        return self.settings.profile

    @property
    def has_metadata(self) -> bool:
        """Whether ``$metadata`` was read already (a call of :meth:`metadata` sends no request)."""
        return self._metadata is not None

    def metadata(self) -> dict[str, dict[str, str]]:
        """Entity type -> {field: EDM type}, from the server's ``$metadata`` (one request, kept)."""
        with self._lock:
            if self._metadata is None:
                if self.budgets is not None:
                    self.budgets.admit()
                url = self.api.base_url + "/$metadata"
                answer = self.api.http.get(
                    url, auth=self.api.auth_for("base"), headers={"Accept": "application/xml"}
                )
                if not answer.is_success:
                    raise error_from_response(answer, url=url, secrets=self.api.secrets)
                self._metadata = read_metadata(answer.content)
            return self._metadata.types

    @property
    def has_lookups(self) -> bool:
        """Whether the lookups were read already (a call of :meth:`lookups` sends no request)."""
        return self._lookups is not None

    def lookups(self) -> Lookups:
        """The server's values of StandardStatus and PropertyType mapped to the platform's
        (from ``$metadata``'s enum types, or its ``Lookup`` resource; read once, kept)."""
        if self._lookups is None:
            self.metadata()
            assert self._metadata is not None
            self._lookups = server_lookups(self._metadata, self._lookup_rows)
        return self._lookups

    def _lookup_rows(self, names: list[str]) -> list[dict[str, Any]]:
        query = {"$filter": lookup_filter(names), "$orderby": "LookupKey asc", **self.paging()}
        size = self.settings.page_size
        rows, self.lookup_requests = read_all(
            self.api, "/" + LOOKUP, query, page_size=size, budgets=self.budgets
        )
        return rows

    def requests_since(self, before: tuple[bool, bool]) -> int:
        """The ``$metadata`` and Lookup requests made since ``before`` (``has_metadata``,
        ``has_lookups`` then), for a run's request count."""
        return (0 if before[0] or not self.has_metadata else 1) + (
            0 if before[1] or not self.has_lookups else self.lookup_requests
        )

    def fields(self, resource: str = "Property") -> dict[str, str]:
        """The fields ``$metadata`` gives ``resource``."""
        types = self.metadata()
        if resource not in types:
            raise QueryError("resource", f"not in the server's $metadata: {resource!r}", types)
        return types[resource]

    # -- queries -------------------------------------------------------------------------------
    def scoped(self, expression: str, *, initial: bool) -> str:
        """``expression`` and-ed with the vendor's required filters."""
        terms = [expression] if expression else []
        system = self.settings.originating_system
        if system is not None:
            quoted = system.replace("'", "''")
            terms.insert(0, f"OriginatingSystemName eq '{quoted}'")
        if initial and self.profile.initial_filter:
            terms.append(self.profile.initial_filter)
        return " and ".join(terms)

    def paging(self) -> dict[str, str]:
        """The page-size option of the vendor's paging rule (``$top``, or nothing: the
        ``Prefer`` header carries it)."""
        if self.profile.paging == "top":
            return {"$top": str(self.settings.page_size)}
        return {}

    def listings_query(self, params: Mapping[str, Any] | None) -> dict[str, str]:
        """The validated query of a listings search (QueryError before any data request)."""
        filters = dict(params or {})
        raw = filters.pop("filter", None)
        needs_fields = raw is not None or any(
            k not in PROPERTY_FIELDS and not _is_platform(k) for k in filters
        )
        fields = self.fields("Property") if needs_fields else None
        expression, orderby = property_filter(filters, fields=fields, raw=raw, lookups=self.lookups)
        return {
            "$filter": self.scoped(expression, initial=True),
            "$orderby": f"{orderby},ListingKey asc",
            "$count": "true",
            **self.paging(),
        }

    def endpoint(self) -> Endpoint:
        """The listings search as a loader endpoint (cache folder ``listings``)."""
        operation = Operation(
            "reso_listings",
            "base",
            "/Property",
            validate=self.listings_query,
            summary="RESO Property search",
        )
        return Endpoint(
            operation,
            model=Listing,
            fetch=self._fetch_listings,
            resource="listings",
            paged=True,
            options={"max_results": (None, _max_results), "reso_fields": (False, _flag)},
        )

    def resource_query(self, resource: str, params: Mapping[str, Any] | None) -> dict[str, str]:
        """The validated query of a Member / Office / OpenHouse / Media read: DD fields compared
        with ``eq`` and raw ``filter=`` text, checked against ``$metadata``."""
        filters = dict(params or {})
        raw = filters.pop("filter", None)
        terms = []
        if filters or raw is not None:
            fields = self.fields(resource)
            check_names(list(filters), fields)
            terms = [f"{name} eq {literal(value)}" for name, value in filters.items()]
            if raw is not None:
                check_names(names_in(raw), fields, param="filter")
                terms.append(f"({raw})")
        key = RESOURCES[resource][2]
        query = {"$orderby": f"{key} asc", **self.paging()}
        expression = self.scoped(" and ".join(terms), initial=False)
        if expression:
            query["$filter"] = expression
        return query

    def resource_endpoint(self, resource: str) -> Endpoint:
        """The read of ``resource`` (Member, Office, OpenHouse, Media) as a loader endpoint."""
        model, _, _, folder = RESOURCES[resource]
        operation = Operation(
            f"reso_{folder}",
            "base",
            f"/{resource}",
            validate=lambda params: self.resource_query(resource, params),
            summary=f"RESO {resource} records",
        )

        def fetch(
            session: Session, endpoint: Endpoint, call: Call, checkpoint: Checkpoint | None
        ) -> Loaded:
            records: list[dict[str, Any]] = []
            requests = 0
            for page in self._pages(call, checkpoint):
                requests += 1
                records.extend(page.records)
            frame = shape_records(resource, records)
            return Loaded(frame, requests, total=len(frame))

        return Endpoint(operation, model=model, fetch=fetch, resource=f"reso_{folder}", paged=True)

    # -- fetch -----------------------------------------------------------------------------------
    def _pages(self, call: Call, checkpoint: Checkpoint | None) -> Iterator[Any]:
        """The pages of ``call`` by the profile's page rule, through the checkpoint and budgets."""
        return iter_pages(
            self.api,
            call.path,
            call.query,
            page_size=self.settings.page_size,
            full_pages=True,
            checkpoint=checkpoint,
            budgets=self.budgets,
        )

    def _fetch_listings(
        self, session: Session, endpoint: Endpoint, call: Call, checkpoint: Checkpoint | None
    ) -> Loaded:
        max_results = call.options.get("max_results")
        kept: list[dict[str, Any]] = []
        bodies: list[bytes] = []
        total: int | None = None
        rows = requests = 0
        for page in self._pages(call, checkpoint):
            requests += 1
            total = page.count if total is None else total
            self.lookups().decode("Property", page.records)
            bodies.append(json.dumps({"listings": listing_objects(page.records)}).encode())
            if call.options.get("reso_fields"):
                kept.extend(page.records)
            rows += len(page.records)
            if max_results is not None and rows >= max_results:
                break
        if max_results is None and total is not None and rows < total:
            # the pages ended before the server's count: a page rule other than the profile's
            # (Bridge's $top became the collection size), never a short load
            raise ResponseMismatchError.of(
                "rows", total, rows, detail=f"vendor {self.profile.name!r}'s paging rule"
            )
        frame, media = listings_from_pages(bodies) if bodies else listings_from_pages([b"[]"])
        if call.options.get("reso_fields"):
            frame = with_reso_fields(frame, kept)
        if max_results is not None and len(frame) > max_results:
            frame = frame.iloc[:max_results].reset_index(drop=True)
        expected = total if max_results is None or total is None else min(total, max_results)
        return Loaded(frame, requests, total=total, expected=expected, media=media)


def _flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise QueryError(name, f"expected True or False, got {value!r}", (True, False))
    return value


def with_reso_fields(frame: pd.DataFrame, records: list[dict[str, Any]]) -> pd.DataFrame:
    """``frame`` with the Property fields the platform has no column for, after its columns:
    the Data Dictionary's (:data:`EXTRA_PROPERTY_FIELDS`: the buyer agent and office of closed
    listings, OriginalListPrice ...) and the server's local ones (``MlgCanView``, ``MRD_*``),
    under their names; timestamps as UTC, numbers as numbers, the rest as text."""
    if not records:
        return frame
    local = sorted(
        {k for r in records for k in r}
        - set(PROPERTY_FIELDS.values())
        - set(EXTRA_PROPERTY_FIELDS)
        - {"@odata.etag", "Media"}
    )
    names = [*EXTRA_PROPERTY_FIELDS, *local]
    extra = pd.DataFrame.from_records(records, columns=["ListingId", *names])
    extra = extra.drop_duplicates("ListingId", keep="last")
    typed: dict[str, pd.Series] = {"ListingId": extra["ListingId"].astype("str")}
    for name in names:
        column = extra[name]
        values = column.dropna()
        if name.endswith("Timestamp") or name.endswith("Date"):
            typed[name] = pd.to_datetime(column, utc=True, format="ISO8601").astype(
                "datetime64[us, UTC]"
            )
        elif len(values) and values.map(lambda v: isinstance(v, bool)).all():
            typed[name] = column.astype("boolean")
        elif len(values) and values.map(lambda v: isinstance(v, int | float)).all():
            typed[name] = pd.to_numeric(column).astype("float64")
        else:
            typed[name] = column.astype("str").where(column.notna())
    added = pd.DataFrame(typed)
    return frame.merge(added, on="ListingId", how="left", validate="one_to_one")


def _is_platform(name: str) -> bool:
    return name in LISTING_SEARCH


def with_source(frame: pd.DataFrame, label: str) -> pd.DataFrame:
    """``frame`` with ``attrs["source"] = label``."""
    frame.attrs["source"] = label
    return frame
