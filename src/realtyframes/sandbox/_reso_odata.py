"""The RESO face's collection queries: system query options, the vendor's rules, paging.

:class:`ResoService` answers ``GET {base}/{Resource}?$filter=...`` with the OData v4 JSON body
(``@odata.context``, ``value``, ``@odata.count``, ``@odata.nextLink``) and its headers
(``Preference-Applied``), enforcing the vendor profile (:mod:`~realtyframes.sandbox._reso_vendors`):
``$top`` caps, the required filter, the ``or`` limit, the page semantics of ``$top`` and
``odata.maxpagesize``. Errors are :class:`~realtyframes.sandbox._errors.SandboxError` 400s naming
the option; the route renders them as OData error JSON.

>>> from datetime import UTC, datetime
>>> from realtyframes.sandbox._store import ListingStore
>>> from realtyframes.sandbox._reso_vendors import profile
>>> svc = ResoService(ListingStore(n=80, as_of=datetime(2026, 5, 1, tzinfo=UTC)), profile("generic"))
>>> body, headers = svc.query("Property", {"$top": "5", "$count": "true"}, None, False, "http://x/reso/odata")
>>> len(body["value"]), body["@odata.count"] >= 80
(5, True)
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlencode

from realtyframes.sandbox._errors import SandboxError
from realtyframes.sandbox._reso_data import ResoData
from realtyframes.sandbox._reso_fields import MLG_CAN_VIEW, RESOURCES, ResoField, Resource
from realtyframes.sandbox._reso_filter import epoch, parse_filter, parse_orderby, parse_select
from realtyframes.sandbox._reso_lookups import with_lookups
from realtyframes.sandbox._reso_metadata import EXPANDS
from realtyframes.sandbox._reso_usage import Usage
from realtyframes.sandbox._reso_vendors import VendorProfile
from realtyframes.sandbox._store import ListingStore

__all__ = ["OPTIONS", "ResoService"]

#: The system query options a collection takes.
OPTIONS = ("$filter", "$orderby", "$top", "$skip", "$select", "$expand", "$count")
_MAXPAGESIZE = re.compile(r"odata\.maxpagesize\s*=\s*(\S+)", re.I)
#: How many queries' ordered matches are kept for their next pages (a server-side cursor).
CURSORS = 8


def _bad(option: str, problem: str) -> SandboxError:
    return SandboxError(400, f"{option}: {problem}", param=option)


def _int_option(params: Mapping[str, str], name: str) -> int | None:
    raw = params.get(name)
    if raw is None:
        return None
    if not raw.isdigit():
        raise _bad(name, f"not a non-negative integer: {raw!r}")
    return int(raw)


def _sort(
    records: list[dict[str, Any]], order: list[tuple[str, bool]], types: Mapping[str, str]
) -> list[dict[str, Any]]:
    """Stable sort by ``order`` (nulls first ascending, as OData orders them)."""
    out = list(records)
    for name, desc in reversed(order):
        if types[name] == "Edm.DateTimeOffset":

            def key(r: Mapping[str, Any], n: str = name) -> tuple[bool, Any]:
                return (r.get(n) is not None, epoch(r[n]) if r.get(n) is not None else 0)
        else:

            def key(r: Mapping[str, Any], n: str = name) -> tuple[bool, Any]:
                return (r.get(n) is not None, r.get(n) if r.get(n) is not None else 0)

        out.sort(key=key, reverse=desc)
    return out


class ResoService:
    """The OData face over one listing store under one vendor profile."""

    def __init__(
        self,
        store: ListingStore,
        vendor: VendorProfile,
        *,
        shared_timestamps: int = 0,
        hidden_share: float = 0.0,
        manual_clock: bool = False,
        lookups: str = "string",
    ) -> None:
        self.vendor = vendor
        resources = with_lookups(RESOURCES, lookups)
        self.usage = Usage(vendor, manual=manual_clock)
        self.data = ResoData(
            store,
            shared_timestamps=shared_timestamps,
            hidden_share=hidden_share,
            local_fields=vendor.local_fields,
            lookups=lookups,
        )
        if MLG_CAN_VIEW in vendor.local_fields:
            local = ResoField(MLG_CAN_VIEW, "Edm.Boolean", "MLS Grid local field (share of keys)")
            resources["Property"] = resources["Property"].with_field(local)
        self.resources: dict[str, Resource] = resources
        self._cursors: OrderedDict[tuple[Any, ...], tuple[list[Any], list[Any]]] = OrderedDict()
        self._cursor_lock = threading.Lock()

    def resource(self, name: str) -> Resource:
        """The entity set ``name`` or a 404 naming the ones there are."""
        if name not in self.resources:
            raise SandboxError(
                404, f"no entity set {name!r}; there are {', '.join(self.resources)}"
            )
        return self.resources[name]

    def change_records(self, hide: Any, delete: Any) -> dict[str, int]:
        """A server-side change (``POST /_sandbox/reso/records``): ``hide`` keys flipped to
        ``MlgCanView = false`` (profiles with that field only), ``delete`` keys deleted."""
        for name, keys in (("hide", hide), ("delete", delete)):
            if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
                raise _bad(name, "give a list of ListingKey strings")
        if hide and MLG_CAN_VIEW not in self.vendor.local_fields:
            raise _bad("hide", f"{self.vendor.name} has no {MLG_CAN_VIEW} field; use delete")
        try:
            self.data.change(hide=hide, delete=delete)
        except ValueError as exc:
            raise _bad("hide" if hide else "delete", str(exc)) from None
        return {"hidden": len(hide), "deleted": len(delete)}

    def query(
        self,
        name: str,
        params: Mapping[str, str],
        prefer: str | None,
        replication: bool,
        base: str,
    ) -> tuple[dict[str, Any], dict[str, str]]:
        """One page of entity set ``name``: the JSON body and the extra headers."""
        res = self.resource(name)
        for option in params:
            if option.startswith("$") and option not in OPTIONS:
                raise _bad(option, f"not supported; allowed: {', '.join(OPTIONS)}")
        top, skip = _int_option(params, "$top"), _int_option(params, "$skip") or 0
        expand = self._expand(name, params.get("$expand"))
        count = params.get("$count", "false")
        if count not in ("true", "false"):
            raise _bad("$count", f"not a boolean: {count!r}; allowed: true, false")
        self._check_top(top, bool(expand), replication)
        records = self._ordered(res, params)
        headers: dict[str, str] = {}
        size, end = self._page(top, skip, len(records), prefer, headers)
        page = records[skip : min(skip + size, end)]
        select = parse_select(params["$select"], res.types) if "$select" in params else None
        body: dict[str, Any] = {"@odata.context": self._context(base, name, select, expand)}
        if count == "true":
            body["@odata.count"] = len(records)
        body["value"] = [self._shape(r, res, select, expand) for r in page]
        if size > 0 and skip + size < end:  # $top=0 (page semantics) is an empty last page
            body["@odata.nextLink"] = self._next(base, name, params, skip + size, size, end)
        return body, headers

    # -- options ---------------------------------------------------------------------------------
    def _expand(self, name: str, raw: str | None) -> list[str]:
        if raw is None:
            return []
        navs = EXPANDS.get(name, {})
        items = [s.strip() for s in raw.split(",")]
        for item in items:
            if item not in navs:
                allowed = ", ".join(navs) or "none on this entity set"
                raise _bad("$expand", f"unknown navigation property {item!r}; allowed: {allowed}")
        return items

    def _check_top(self, top: int | None, expand: bool, replication: bool) -> None:
        v = self.vendor
        cap = v.top_limit(expand, replication)
        if top is None or cap is None or top <= cap:
            return
        why = f"{v.name} allows at most {cap}"
        if v.top_cap_no_role is not None and not replication:
            why += " without the replication role"
        elif expand and v.top_cap_expand is not None:
            why += " with $expand"
        raise _bad("$top", f"{top} is too large: {why}")

    def _ordered(self, res: Resource, params: Mapping[str, str]) -> list[dict[str, Any]]:
        """The records matching ``$filter`` in ``$orderby`` order (ties by the key). Kept for
        the query's next pages while the data do not change: a next link differs only in
        ``$skip``/``$top``, so the market is filtered and sorted once per query, not per page. A
        new snapshot (a rebuild) or ``data.generation`` (records changed in place) drops them."""
        records = self.data.records(res.name)
        key = (res.name, params.get("$filter"), params.get("$orderby"), id(records),
               self.data.generation)  # fmt: skip
        with self._cursor_lock:
            kept = self._cursors.get(key)
            if kept is not None and kept[0] is records:
                self._cursors.move_to_end(key)
                return kept[1]
        matched = self._matching(res, params, records)
        order = parse_orderby(params["$orderby"], res.types) if "$orderby" in params else []
        if not any(n == res.key for n, _ in order):
            order.append((res.key, False))  # a total order: pages never overlap
        if order != [(res.key, False)]:
            matched = _sort(matched, order, res.types)
        with self._cursor_lock:
            self._cursors[key] = (records, matched)  # the data it came from, and the answer
            self._cursors.move_to_end(key)
            while len(self._cursors) > CURSORS:
                self._cursors.popitem(last=False)
        return matched

    def _matching(
        self, res: Resource, params: Mapping[str, str], records: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        raw = params.get("$filter")
        v = self.vendor
        if raw is None:
            if v.required_filter and v.required_filter in res.types:
                raise _bad(
                    "$filter",
                    f"{v.name} requires a filter on {v.required_filter} (eq) in every {res.name} request",
                )
            return records
        flt = parse_filter(raw, res.types)
        if v.max_or_terms is not None and flt.or_terms > v.max_or_terms:
            raise _bad(
                "$filter", f"{flt.or_terms} or-terms; {v.name} allows at most {v.max_or_terms}"
            )
        required = v.required_filter
        if required and required in res.types and required not in flt.eq_fields:
            raise _bad(
                "$filter",
                f"{v.name} requires '{required} eq ...' (and-ed) in every {res.name} request",
            )
        return [r for r in records if flt.test(r)]

    def _page(
        self, top: int | None, skip: int, total: int, prefer: str | None, headers: dict[str, str]
    ) -> tuple[int, int]:
        """(page size, end of the answer) under the profile's meaning of ``$top``."""
        v = self.vendor
        wanted = self._maxpagesize(prefer)
        if v.top_means == "page":
            return (top if top is not None else v.default_page), total
        end = total if top is None else min(total, skip + top)
        size = v.default_page if top is None or v.name != "bridge" else top
        if wanted is not None and v.honours_maxpagesize:
            size = wanted
        if v.max_page is not None and size > v.max_page:
            size = v.max_page
        if wanted is not None and v.honours_maxpagesize:
            headers["Preference-Applied"] = f"odata.maxpagesize={size}"
        return max(size, 1), end

    def _maxpagesize(self, prefer: str | None) -> int | None:
        if prefer is None:
            return None
        m = _MAXPAGESIZE.search(prefer)
        if m is None:
            return None
        raw = m.group(1).rstrip(",;")
        if not raw.isdigit() or int(raw) < 1:
            raise _bad("Prefer", f"odata.maxpagesize must be a positive integer, got {raw!r}")
        return int(raw)

    # -- the answer ------------------------------------------------------------------------------
    def _shape(
        self, rec: dict[str, Any], res: Resource, select: list[str] | None, expand: list[str]
    ) -> dict[str, Any]:
        out = rec if select is None else {k: rec.get(k) for k in select}
        if expand:
            out = dict(out)
            for nav in expand:
                out[nav] = self.data.media_of(rec[res.key])
        return out

    def _context(self, base: str, name: str, select: list[str] | None, expand: list[str]) -> str:
        parts = list(select or [])
        parts += [f"{nav}()" for nav in expand]
        return f"{base}/$metadata#{name}" + (f"({','.join(parts)})" if parts else "")

    def _next(
        self, base: str, name: str, params: Mapping[str, str], skip: int, size: int, end: int
    ) -> str:
        query = {k: v for k, v in params.items() if k not in ("$skip", "$top")}
        query["$skip"] = str(skip)
        if self.vendor.top_means == "page":
            query["$top"] = str(size)
        elif "$top" in params:
            query["$top"] = str(end - skip)
        return f"{base}/{name}?" + urlencode(query, quote_via=quote, safe="$,'()")
