"""The RESO Web API face (OData v4) under ``/reso/odata`` and its admin route.

``GET /reso/odata`` (service document), ``/reso/odata/$metadata`` (CSDL XML), ``/reso/odata/{Set}``
(a page of an entity set), ``/reso/odata/{Set}('{key}')`` (one entity); the vendor profile's budgets
are counted per token before the query runs. Every error is OData error JSON
(``{"error": {"code", "message"}}``). ``GET /_sandbox/reso/usage`` reports the counts;
``POST`` it ``{"advance_seconds": n}`` moves the budget clock. ``POST /_sandbox/reso/records``
``{"hide": [keys], "delete": [keys]}`` changes records on the server (MLS Grid's MlgCanView flip,
a deletion).

>>> [e.path for e in ENDPOINTS]
['/reso/odata', '/reso/odata/{resource}', '/_sandbox/reso/usage', '/_sandbox/reso/records']
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from realtyframes.sandbox._errors import SandboxError
from realtyframes.sandbox._query import single
from realtyframes.sandbox._reso_metadata import metadata_xml, service_document
from realtyframes.sandbox._reso_odata import OPTIONS, ResoService
from realtyframes.sandbox._reso_usage import Usage, token_label
from realtyframes.sandbox._reso_vendors import SPARK_REPLICATION_TOKEN
from realtyframes.sandbox.routes._declare import Access, Endpoint, admin_of, authorize
from realtyframes.sandbox.routes.admin import guard

__all__ = ["BASE_PATH", "ENDPOINTS"]

#: Where the face lives.
BASE_PATH = "/reso/odata"
_ENTITY = re.compile(r"(\w+)\('((?:[^']|'')*)'\)")
_READ = Access("listings")
_HEADERS = {"OData-Version": "4.0"}
_JSON = "application/json;odata.metadata=minimal"
#: Methods routed to the face so that a write gets an OData 405, not another shape.
_ANY = ("GET", "POST", "PUT", "PATCH", "DELETE")


def _error(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Response:
    return JSONResponse(
        {"error": {"code": code, "message": message}},
        status_code=status,
        headers={**_HEADERS, **(headers or {})},
    )


def _read_only(request: Request) -> Response | None:
    if request.method in ("GET", "HEAD"):
        return None
    text = f"{request.method} is not allowed: the RESO face is read-only; allowed: GET, HEAD"
    return _error(405, "method_not_allowed", text, {"Allow": "GET, HEAD"})


def _from(exc: SandboxError) -> Response:
    return _error(exc.status, exc.code, exc.detail or exc.message, exc.headers)


def _service(request: Request) -> ResoService:
    return admin_of(request).reso  # type: ignore[no-any-return]


def _bearer(request: Request) -> str | None:
    auth = request.headers.get("authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip()
    return request.headers.get("x-api-key")


def _base(request: Request) -> str:
    return f"{request.url.scheme}://{request.url.netloc}{BASE_PATH}"


def _json(body: Any, usage: Usage, label: str, headers: dict[str, str], started: float) -> Response:
    raw = json.dumps(body, separators=(",", ":")).encode()
    usage.add_bytes(label, len(raw))
    usage.add_time(label, time.perf_counter() - started)
    return Response(raw, media_type=_JSON, headers={**_HEADERS, **headers})


async def service_root(request: Request) -> Response:
    """GET /reso/odata: the service document."""
    if (refused := _read_only(request)) is not None:
        return refused
    try:
        authorize(request, _READ)
    except SandboxError as exc:
        return _from(exc)
    return JSONResponse(
        service_document(_base(request), _service(request).resources), headers=_HEADERS
    )


async def resource(request: Request) -> Response:
    """GET /reso/odata/{resource}: $metadata, a collection page or one entity."""
    if (refused := _read_only(request)) is not None:
        return refused
    svc = _service(request)
    token = _bearer(request)
    label = token_label(token)
    started = time.perf_counter()
    try:
        authorize(request, _READ)
        admission = svc.usage.admit(label)
        if admission.status != 200:
            code = "token_suspended" if admission.status == 403 else "budget_exceeded"
            retry = {"Retry-After": str(admission.retry_after)}
            return _error(admission.status, code, admission.detail, retry)
        name = request.path_params["resource"]
        if name == "$metadata":
            xml = metadata_xml(svc.resources)
            svc.usage.add_bytes(label, len(xml.encode()))
            svc.usage.add_time(label, time.perf_counter() - started)
            return Response(xml, media_type="application/xml", headers=_HEADERS)
        params = single(request.query_params.multi_items(), "query")
        for option in params:
            if not option.startswith("$"):
                raise SandboxError(
                    400,
                    f"{option}: not a query option of this service; allowed: {', '.join(OPTIONS)}",
                    param=option,
                )
        entity = _ENTITY.fullmatch(name)
        if entity is not None:
            return _json(
                _one(svc, _base(request), entity.group(1), entity.group(2).replace("''", "'")),
                svc.usage,
                label,
                {},
                started,
            )
        replication = token == SPARK_REPLICATION_TOKEN
        body, headers = svc.query(
            name, params, request.headers.get("prefer"), replication, _base(request)
        )
        return _json(body, svc.usage, label, headers, started)
    except SandboxError as exc:
        return _from(exc)


def _one(svc: ResoService, base: str, name: str, key: str) -> dict[str, Any]:
    res = svc.resource(name)
    for rec in svc.data.records(name):
        if rec[res.key] == key:
            return {"@odata.context": f"{base}/$metadata#{name}/$entity", **rec}
    raise SandboxError(404, f"no {name} with {res.key} {key!r}")


async def usage(request: Request) -> Response:
    """GET /_sandbox/reso/usage: budget counts per token; POST {"advance_seconds": n}."""
    guard(request)
    svc = _service(request)
    if request.method == "POST":
        try:
            data = json.loads(await request.body() or b"{}")
        except ValueError:
            raise SandboxError(400, "body: not valid JSON", param="body") from None
        seconds = data.get("advance_seconds") if isinstance(data, dict) else None
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
            raise SandboxError(400, "advance_seconds: give a number >= 0", param="advance_seconds")
        svc.usage.advance(float(seconds))
    return JSONResponse(svc.usage.report())


async def records(request: Request) -> Response:
    """POST /_sandbox/reso/records {"hide": [ListingKey ...], "delete": [ListingKey ...]}."""
    guard(request)
    try:
        data = json.loads(await request.body() or b"{}")
    except ValueError:
        raise SandboxError(400, "body: not valid JSON", param="body") from None
    if not isinstance(data, dict) or set(data) - {"hide", "delete"}:
        raise SandboxError(400, 'body: give {"hide": [...], "delete": [...]}', param="body")
    done = _service(request).change_records(data.get("hide", []), data.get("delete", []))
    return JSONResponse(done)


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint(BASE_PATH, service_root, methods=_ANY),
    Endpoint(BASE_PATH + "/{resource}", resource, methods=_ANY),
    Endpoint("/_sandbox/reso/usage", usage, methods=("GET", "POST"), faults=False),
    Endpoint("/_sandbox/reso/records", records, methods=("POST",), faults=False),
)
