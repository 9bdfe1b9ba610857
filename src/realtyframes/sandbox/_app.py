"""The sandbox's HTTP layer: routes, auth checks, error rendering, versioning, admin routes.

One Starlette app serves every host of the spec (base, auth and legacy share the base URL).
Middleware, outermost first: rate limits (headers on every answer, 429 when a quota is used up,
500 ``server_error`` for unhandled exceptions, never a stack trace) -> faults (``/v1/*`` only) ->
Starlette's exception handling (SandboxError and HTTP errors rendered by :func:`render_error`).
Paths match exactly: a trailing slash (``/v1/listings/``) is a 404, never a redirect.

>>> from realtyframes.sandbox import SandboxOptions
>>> app = create_app(SandboxOptions(listings=200, contacts=20))  # doctest: +SKIP
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any
from urllib.parse import parse_qsl

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from realtyframes.sandbox._auth import (
    ANONYMOUS,
    SCOPES,
    AuthorizePageError,
    AuthRegistry,
    Principal,
    add_query,
    consent_page,
    error_page,
    parse_scopes,
)
from realtyframes.sandbox._errors import CODES, SandboxError, bad_param
from realtyframes.sandbox._faults import FaultCounters, FaultsMiddleware, validate_faults
from realtyframes.sandbox._limits import RateLimiter
from realtyframes.sandbox._options import DEMO, SandboxOptions

_log = logging.getLogger("realtyframes.sandbox")

API_VERSION = "1"
#: Earliest removal day of the deprecated legacy operations (RFC 8594 Sunset).
SUNSET = datetime(2027, 12, 31, 23, 59, 59, tzinfo=UTC)
LEGACY_PATHS = frozenset({"/api/me", "/api/getContacts"})
LEGACY_NAMES = {
    400: "BadRequestError",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFoundError",
    429: "TooManyRequests",
}
PROBLEM_JSON = "application/problem+json"

_PAGING = ("Offset", "Limit")
#: Query parameters of each operation (the spec's tables); anything else is a 400.
SEARCH_PARAMS: tuple[str, ...] = (
    "PropertyType",
    "Status",
    "Subtypes",
    "City",
    "PostalCode",
    "StreetNumber",
    "StreetName",
    "UnitNumber",
    "BuildingName",
    "SubdivisionName",
    *(
        f"{side}{name}"
        for name in (
            "ListPrice",
            "BedroomsTotal",
            "Bathrooms",
            "LivingArea",
            "LotSize",
            "YearBuilt",
            "AssociationFee",
        )
        for side in ("Min", "Max")
    ),
    "Pool",
    "Waterfront",
    "Penthouse",
    "Furnished",
    "PetsAllowed",
    "Gated",
    "TennisCourt",
    "GolfCourse",
    "BoatDock",
    "ShortSale",
    "SeasonalRentals",
    "SeniorCommunity",
    "Agent",
    "Broker",
    "MaxDaysOnMarket",
    "Since",
    "Sort",
    *_PAGING,
)
CHANGES_PARAMS: tuple[str, ...] = ("Since", "ListingIds", "ChangeType", *_PAGING)
ANALYTICS_PARAMS: tuple[str, ...] = (
    "Period",
    "Page",
    "Referrer",
    "Browser",
    "Country",
    "OS",
    "Device",
    "VisitorId",
    "UtmSource",
    "UtmMedium",
    "UtmCampaign",
)
CONTACTS_PARAMS: tuple[str, ...] = _PAGING
TOKEN_PARAMS: tuple[str, ...] = ("grant_type", "code", "client_id", "client_secret", "redirect_uri")
AUTHORIZE_PARAMS: tuple[str, ...] = ("client_id", "redirect_uri", "scope", "state", "response_type")
LEGACY_PARAMS: tuple[str, ...] = ("api_key",)

INDEX_ENDPOINTS: dict[str, dict[str, str]] = {
    "listings": {
        "search": "GET /v1/listings",
        "detail": "GET /v1/listings/{ListingId}",
        "changes": "GET /v1/listings/changes",
    },
    "contacts": {
        "list": "GET /v1/contacts",
        "detail": "GET /v1/contacts/{contactId}",
        "activity": "GET /v1/contacts/{contactId}/activity",
    },
    "analytics": {"query": "GET /v1/analytics"},
    "user": {"me": "GET /v1/me"},
}


# -- shared state ---------------------------------------------------------------------------------
@dataclass
class SandboxAdmin:
    """Everything one sandbox app holds; ``app.state.admin`` (tests read counters from it)."""

    options: SandboxOptions
    listings: Any
    contacts: Any
    analytics: Any
    auth: AuthRegistry = field(default_factory=AuthRegistry)
    limiter: RateLimiter | None = None
    faults: FaultCounters = field(default_factory=FaultCounters)

    def __post_init__(self) -> None:
        if self.limiter is None:
            self.limiter = RateLimiter(self.options.effective_rate_limit)

    @property
    def stores(self) -> tuple[Any, ...]:
        """The data stores whose clocks move together."""
        return (self.listings, self.contacts, self.analytics)

    @property
    def now(self) -> datetime:
        """The sandbox clock (as of which data is visible)."""
        return self.listings.now  # type: ignore[no-any-return]

    def set_now(self, when: datetime) -> None:
        """Move the clock of every store to ``when`` (tz-aware; forward only)."""
        if when.tzinfo is None:
            raise bad_param("now", "needs a time zone (e.g. 2026-07-01T00:00:00Z)")
        when = when.astimezone(UTC)
        if when < self.now:
            raise bad_param("now", f"the clock only moves forward; it is {_iso(self.now)}")
        for store in self.stores:
            store.set_now(when)


def _iso(dt: datetime) -> str:
    return dt.astimezone(UTC).isoformat().replace("+00:00", "Z")


# -- content negotiation and the one error renderer -----------------------------------------------
def negotiate(accept: str | None, offers: Iterable[str]) -> str:
    """The offer the Accept header prefers (q-values, then specificity, then header order).

    Ties and an absent or unmatched Accept give the first offer.

    >>> negotiate("application/problem+json", ["application/json", "application/problem+json"])
    'application/problem+json'
    >>> negotiate("*/*", ["application/json", "application/problem+json"])
    'application/json'
    >>> negotiate("application/problem+json;q=0.5, application/json", ["application/json", "application/problem+json"])
    'application/json'
    """
    offers = list(offers)
    ranges: list[tuple[str, str, float, int]] = []
    for position, part in enumerate((accept or "").split(",")):
        media, *params = (p.strip() for p in part.split(";"))
        if not media:
            continue
        q = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
                q = q if math.isfinite(q) and 0.0 <= q <= 1.0 else 0.0
        main, _, sub = media.lower().partition("/")
        ranges.append((main, sub, q, position))
    if not ranges:
        return offers[0]
    best: tuple[float, int, int, int] | None = None
    choice = offers[0]
    for order, offer in enumerate(offers):
        main, _, sub = offer.partition("/")
        match: tuple[int, float, int] | None = None  # specificity, q, position
        for rmain, rsub, q, position in ranges:
            if (rmain, rsub) == (main, sub):
                spec = 3
            elif rmain == main and rsub == "*":
                spec = 2
            elif rmain == "*" and rsub == "*":
                spec = 1
            else:
                continue
            if match is None or spec > match[0]:
                match = (spec, q, position)
        if match is None or match[1] <= 0:
            continue
        key = (match[1], match[0], -match[2], -order)
        if best is None or key > best:
            best, choice = key, offer
    return choice


def docs_url(scope: Scope) -> str:
    """The documentation page of this sandbox ({docs_url}): ``<base>/docs``."""
    return f"{str(Request(scope).base_url).rstrip('/')}/docs"


def deprecation_headers(scope: Scope) -> dict[str, str]:
    """Deprecation, Sunset (HTTP-date) and Link rel=deprecation for the legacy operations."""
    return {
        "Deprecation": "true",
        "Sunset": format_datetime(SUNSET, usegmt=True),
        "Link": f'<{docs_url(scope)}#deprecation>; rel="deprecation"; type="text/html"',
    }


def render_error(
    scope: Scope, error: SandboxError, headers: Mapping[str, str] | None = None
) -> Response:
    """The single renderer of every 4xx/5xx: legacy body, Problem or ApiError.

    The legacy operations answer ``{"error": <type name>, "message"}`` with deprecation headers;
    elsewhere Problem (application/problem+json) when the Accept header prefers it, else ApiError.
    """
    request = Request(scope)
    path = scope.get("path", "")
    out = dict(headers or {})
    message = f"{error.message}: {error.detail}" if error.detail else error.message
    if path in LEGACY_PATHS:
        out.update(deprecation_headers(scope))
        body = {"error": LEGACY_NAMES.get(error.status, "ServerError"), "message": message}
        return JSONResponse(body, status_code=error.status, headers=out)
    if error.status == 401:
        out.setdefault("WWW-Authenticate", 'Bearer realm="realtyframes", error="invalid_token"')
    elif error.status == 403:
        out.setdefault(
            "WWW-Authenticate", 'Bearer realm="realtyframes", error="insufficient_scope"'
        )
    if negotiate(request.headers.get("accept"), ["application/json", PROBLEM_JSON]) == PROBLEM_JSON:
        problem = {
            "type": f"{docs_url(scope)}#{error.code}",
            "title": error.code.replace("_", " "),
            "status": error.status,
            "detail": message,
            "code": error.code,
        }
        return JSONResponse(problem, status_code=error.status, headers=out, media_type=PROBLEM_JSON)
    api_error = {"error": {"code": error.code, "message": message, "status": error.status}}
    return JSONResponse(api_error, status_code=error.status, headers=out)


async def _sandbox_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, SandboxError)
    return render_error(request.scope, exc)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        error = SandboxError(404, f"no operation at {request.url.path}")
    elif exc.status_code == 405:
        allowed = (exc.headers or {}).get("Allow", "GET")
        error = bad_param(
            "method", f"{request.method} is not supported on {request.url.path}", allowed
        )
    else:
        status = exc.status_code if exc.status_code in CODES else 500
        error = SandboxError(status, str(exc.detail) if status != 500 else None)
    return render_error(request.scope, error)


# -- the outermost middleware: quotas, rate-limit headers, last-resort 500 ------------------------
class LimitsMiddleware:
    """Counts each request against its credential's quota and stamps the headers on every answer.

    Also turns an unhandled exception into a 500 ``server_error`` answer (no stack trace).
    """

    def __init__(self, app: ASGIApp, *, admin: SandboxAdmin) -> None:
        self.app = app
        self.admin = admin

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        api_key = request.query_params.get("api_key") if scope["path"] in LEGACY_PATHS else None
        client = scope.get("client")
        host = str(client[0]) if client else "unknown"
        key, plan = self.admin.auth.quota_identity(request.headers, api_key, host)
        assert self.admin.limiter is not None
        quota = self.admin.limiter.hit(key, plan)
        scope["rf.quota"] = quota
        rate_headers = quota.headers()
        if not quota.allowed:
            window = f"{quota.window:g}"
            detail = f"quota of {quota.limit} requests per {window} s used up; retry in {quota.retry_after} s"
            response = render_error(
                scope,
                SandboxError(429, detail),
                {**rate_headers, "Retry-After": str(quota.retry_after)},
            )
            await response(scope, receive, send)
            return
        started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                present = {k.lower() for k, _ in message.get("headers", [])}
                extra = [
                    (k.lower().encode(), v.encode())
                    for k, v in rate_headers.items()
                    if k.lower().encode() not in present
                ]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except Exception as exc:
            if started:
                raise  # too late for an error answer: the connection is dropped
            _log.error("unhandled error on %s %s", scope["method"], scope["path"], exc_info=exc)
            response = render_error(scope, SandboxError(500))
            await response(scope, receive, send_with_headers)


# -- request helpers ------------------------------------------------------------------------------
def _single(pairs: Iterable[tuple[str, str]], where: str) -> dict[str, str]:
    """Name -> value, refusing a name given twice (never silently keep one of them)."""
    out: dict[str, str] = {}
    for name, value in pairs:
        if name in out:
            raise bad_param(name, f"given more than once in the {where}; give it once")
        out[name] = value
    return out


def query_params(request: Request, allowed: Iterable[str]) -> dict[str, str]:
    """The query parameters as a dict; unknown names and repeated names are a 400."""
    params = _single(request.query_params.multi_items(), "query")
    allowed = tuple(allowed)
    for name in params:
        if name not in allowed:
            near = [a for a in allowed if a.lower() == name.lower()]
            hint = f" (did you mean {near[0]}?)" if near else ""
            raise bad_param(
                name,
                f"not a parameter of this operation{hint}",
                ", ".join(allowed) if allowed else "none",
            )
    return params


def check_version(request: Request) -> None:
    """Service-Api-Version: optional; a positive integer. The path wins over its value."""
    raw = request.headers.get("service-api-version")
    if raw is None:
        return
    text = raw.strip()
    if not (text.isascii() and text.isdigit() and int(text) >= 1):
        raise bad_param("Service-Api-Version", f"header value {raw!r} is not a version number", "1")


def authorize(request: Request, scope_needed: str | None, *, api_key_ok: bool) -> Principal:
    """The caller of a /v1 operation, checked against the spec's scope rules in protected mode."""
    admin: SandboxAdmin = request.app.state.admin
    auth = admin.auth
    if not admin.options.protected:
        try:
            return auth.authenticate(request.headers) or ANONYMOUS
        except SandboxError:
            return ANONYMOUS  # open mode: credentials are ignored
    principal = auth.authenticate(request.headers)
    if principal is None:
        raise SandboxError(
            401, "no credential: send Authorization: Bearer <token> or X-API-Key: <key>"
        )
    if scope_needed is None:
        return principal
    if principal.kind == "api_key" and not api_key_ok:
        raise SandboxError(
            403,
            f"an API key cannot reach {scope_needed}; use an OAuth token with scope {scope_needed}",
        )
    if scope_needed not in principal.scopes:
        have = ",".join(principal.scopes) or "none"
        raise SandboxError(403, f"scope {scope_needed} required; the credential has {have}")
    return principal


Handler = Callable[[Request, Principal], Awaitable[Response]]


def operation(scope_needed: str | None, *, api_key_ok: bool = True) -> Callable[[Handler], Any]:
    """Wrap a /v1 handler: version header, then authentication and scope."""

    def wrap(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            check_version(request)
            principal = authorize(request, scope_needed, api_key_ok=api_key_ok)
            return await handler(request, principal)

        endpoint.__name__ = handler.__name__
        endpoint.__doc__ = handler.__doc__
        return endpoint

    return wrap


def _admin(request: Request) -> SandboxAdmin:
    return request.app.state.admin  # type: ignore[no-any-return]


# -- /v1 operations -------------------------------------------------------------------------------
@operation("listings")
async def search_listings(request: Request, principal: Principal) -> Response:
    """GET /v1/listings."""
    params = query_params(request, SEARCH_PARAMS)
    return JSONResponse(_admin(request).listings.search(params))


@operation("listings")
async def listing_changes(request: Request, principal: Principal) -> Response:
    """GET /v1/listings/changes."""
    params = query_params(request, CHANGES_PARAMS)
    return JSONResponse(_admin(request).listings.changes(params))


@operation("listings")
async def listing_detail(request: Request, principal: Principal) -> Response:
    """GET /v1/listings/{ListingId}."""
    query_params(request, ())
    return JSONResponse(_admin(request).listings.detail(request.path_params["ListingId"]))


@operation("analytics")
async def analytics(request: Request, principal: Principal) -> Response:
    """GET /v1/analytics."""
    params = query_params(request, ANALYTICS_PARAMS)
    return JSONResponse(_admin(request).analytics.query(params))


@operation("contacts", api_key_ok=False)
async def contacts_list(request: Request, principal: Principal) -> Response:
    """GET /v1/contacts."""
    params = query_params(request, CONTACTS_PARAMS)
    return JSONResponse(_admin(request).contacts.list(params))


def _found(value: Any, what: str) -> Any:
    if value is None:
        raise SandboxError(404, f"{what} not found")
    return value


@operation("contacts", api_key_ok=False)
async def contact_detail(request: Request, principal: Principal) -> Response:
    """GET /v1/contacts/{contactId}."""
    query_params(request, ())
    contact_id = request.path_params["contactId"]
    return JSONResponse(_found(_admin(request).contacts.get(contact_id), f"contact {contact_id!r}"))


@operation("contacts", api_key_ok=False)
async def contact_activity(request: Request, principal: Principal) -> Response:
    """GET /v1/contacts/{contactId}/activity."""
    query_params(request, ())
    contact_id = request.path_params["contactId"]
    return JSONResponse(
        _found(_admin(request).contacts.activity(contact_id), f"contact {contact_id!r}")
    )


@operation(None)
async def me(request: Request, principal: Principal) -> Response:
    """GET /v1/me: the user fields plus plan and scopes."""
    query_params(request, ())
    return JSONResponse(principal.me())


# -- legacy host ----------------------------------------------------------------------------------
def _legacy_principal(request: Request) -> Principal:
    check_version(request)
    params = query_params(request, LEGACY_PARAMS)
    key = params.get("api_key", "")
    principal = AuthRegistry.principal_for_api_key(key) if key else None
    if principal is None:
        raise SandboxError(401, "api_key: missing or unknown API key")
    return principal


async def legacy_me(request: Request) -> Response:
    """GET /api/me (deprecated): the key's user."""
    principal = _legacy_principal(request)
    return JSONResponse(principal.user.fields(), headers=deprecation_headers(request.scope))


async def legacy_contacts(request: Request) -> Response:
    """GET /api/getContacts (deprecated): the contacts of the key's domain; 404 when none."""
    principal = _legacy_principal(request)
    contacts = _admin(request).contacts.for_domain(principal.user.domain)
    if not contacts:
        raise SandboxError(404, f"no contacts for the domain {principal.user.domain}")
    return JSONResponse(contacts, headers=deprecation_headers(request.scope))


# -- OAuth ----------------------------------------------------------------------------------------
_PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
    "Referrer-Policy": "no-referrer",
}


def _authorize_refusal(request: Request, exc: AuthorizePageError) -> Response:
    """A 400 for a refused authorize request: an HTML page, JSON if the caller prefers it."""
    offers = ["text/html", "application/json", PROBLEM_JSON]
    if negotiate(request.headers.get("accept"), offers) != "text/html":
        return render_error(request.scope, bad_param(exc.param, exc.problem))
    return HTMLResponse(error_page(exc.param, exc.problem), status_code=400, headers=_PAGE_HEADERS)


async def _form(request: Request) -> list[tuple[str, str]]:
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    body = await request.body()
    if not body:
        return []
    if content_type not in ("", "application/x-www-form-urlencoded"):
        raise bad_param(
            "Content-Type",
            f"{content_type!r} is not supported",
            "application/x-www-form-urlencoded",
        )
    try:
        return parse_qsl(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False)
    except UnicodeDecodeError:
        raise bad_param("body", "not UTF-8 form data") from None


async def authorize_endpoint(request: Request) -> Response:
    """GET /authorize shows the consent page; POST /authorize records the decision."""
    check_version(request)
    auth = _admin(request).auth
    if request.method == "GET":
        params = query_params(request, AUTHORIZE_PARAMS)
    else:
        params = _single(await _form(request), "form")
    try:
        validated = auth.validate_authorize(params)
    except AuthorizePageError as exc:
        return _authorize_refusal(request, exc)
    if request.method == "GET":
        return HTMLResponse(consent_page(validated), headers=_PAGE_HEADERS)
    decision = params.get("decision")
    if decision == "approve":
        target = add_query(
            validated.redirect_uri, {"code": auth.issue_code(validated), "state": validated.state}
        )
    elif decision == "deny":
        target = add_query(
            validated.redirect_uri, {"error": "access_denied", "state": validated.state}
        )
    else:
        return _authorize_refusal(
            request, AuthorizePageError("decision", "must be approve or deny")
        )
    return RedirectResponse(target, status_code=302, headers={"Cache-Control": "no-store"})


async def token_endpoint(request: Request) -> Response:
    """POST /api/oauth/token: exchange an authorization code (form body, also the query)."""
    check_version(request)
    form = _single(await _form(request), "form body")
    query = query_params(request, TOKEN_PARAMS)
    for name, value in query.items():
        if form.setdefault(name, value) != value:
            raise bad_param(name, "differs between the query and the form body")
    for name in form:
        if name not in TOKEN_PARAMS:
            raise bad_param(name, "not a parameter of the token request", TOKEN_PARAMS)
    grant = _admin(request).auth.exchange_code(form)
    return JSONResponse(
        grant.response(), headers={"Cache-Control": "no-store", "Pragma": "no-cache"}
    )


# -- index, OpenAPI, docs -------------------------------------------------------------------------
async def index(request: Request) -> Response:
    """GET / and /v1: the index document."""
    check_version(request)
    return JSONResponse(
        {
            "name": "realtyframes sandbox: listings, contacts and analytics API",
            "version": API_VERSION,
            "endpoints": INDEX_ENDPOINTS,
            "mcp": "/mcp",
        }
    )


async def openapi(request: Request) -> Response:
    """GET /openapi.json."""
    from realtyframes.sandbox._openapi import openapi_document

    base_url = str(request.base_url).rstrip("/")
    protected = _admin(request).options.protected
    return JSONResponse(openapi_document(base_url=base_url, protected=protected))


_DOCS = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>realtyframes sandbox API</title></head>
<body>
<h1>realtyframes sandbox API</h1>
<p>The embedded sandbox of the listings, contacts and analytics REST API. Machine-readable
description: <a href="/openapi.json">/openapi.json</a>.</p>
<h2>Errors</h2>
<dl>
{codes}
</dl>
<h2 id="deprecation">Deprecation</h2>
<p>The legacy operations <code>GET /api/me</code> and <code>GET /api/getContacts</code> are deprecated
and answer with <code>Deprecation</code>, <code>Sunset: {sunset}</code> and a <code>Link</code> to
this section. Use <code>GET /v1/me</code> and <code>GET /v1/contacts</code> instead.</p>
</body></html>
"""


async def docs(request: Request) -> Response:
    """GET /docs: the documentation page that error types and deprecation links point to."""
    codes = "\n".join(
        f'<dt id="{code}">{status} <code>{code}</code></dt><dd>{message}</dd>'
        for status, (code, message) in sorted(CODES.items())
    )
    page = _DOCS.format(codes=codes, sunset=format_datetime(SUNSET, usegmt=True))
    return HTMLResponse(page)


# -- admin routes ---------------------------------------------------------------------------------
async def _json_body(request: Request) -> dict[str, Any]:
    body = await request.body()
    if not body:
        return {}
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise bad_param("body", "not valid JSON") from None
    if not isinstance(data, dict):
        raise bad_param("body", "must be a JSON object")
    return data


def _number(data: Mapping[str, Any], name: str) -> float:
    value = data[name]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise bad_param(name, f"{value!r} is not a number")
    return float(value)


async def clock(request: Request) -> Response:
    """GET /_sandbox/clock; POST it {"advance_days": x} | {"advance_seconds": x} | {"now": iso}."""
    admin = _admin(request)
    if request.method == "GET":
        return JSONResponse({"now": _iso(admin.now)})
    data = await _json_body(request)
    allowed = ("advance_days", "advance_seconds", "now")
    given = [k for k in data if k in allowed]
    unknown = [k for k in data if k not in allowed]
    if unknown:
        raise bad_param(unknown[0], "not a clock field", allowed)
    if len(given) != 1:
        raise bad_param("body", "give exactly one clock field", allowed)
    previous = admin.now
    name = given[0]
    if name == "now":
        if not isinstance(data["now"], str):
            raise bad_param("now", "must be an ISO 8601 string")
        try:
            target = datetime.fromisoformat(data["now"])
        except ValueError:
            raise bad_param("now", f"{data['now']!r} is not an ISO 8601 timestamp") from None
    else:
        amount = _number(data, name)
        seconds = amount * 86_400 if name == "advance_days" else amount
        if seconds < 0:
            raise bad_param(name, "must be >= 0; the clock only moves forward")
        target = previous + timedelta(seconds=seconds)
    admin.set_now(target)
    return JSONResponse({"now": _iso(admin.now), "previous": _iso(previous)})


async def mint_token(request: Request) -> Response:
    """POST /_sandbox/tokens {"scopes": [...], "ttl_seconds": 3600, "plan": "standard"}."""
    data = await _json_body(request)
    allowed = ("scopes", "ttl_seconds", "plan")
    for name in data:
        if name not in allowed:
            raise bad_param(name, "not a token field", allowed)
    scopes_value = data.get("scopes", list(SCOPES))
    if isinstance(scopes_value, list) and all(isinstance(s, str) for s in scopes_value):
        scopes = parse_scopes(",".join(scopes_value), "scopes") if scopes_value else ()
    elif isinstance(scopes_value, str):
        scopes = parse_scopes(scopes_value, "scopes")
    else:
        raise bad_param("scopes", "must be a list of scope names", SCOPES)
    ttl = _number(data, "ttl_seconds") if "ttl_seconds" in data else 3600.0
    if ttl <= 0:
        raise bad_param("ttl_seconds", "must be > 0")
    plan = data.get("plan", "standard")
    if plan not in ("standard", "premium"):
        raise bad_param("plan", f"unknown plan {plan!r}", ["standard", "premium"])
    grant = _admin(request).auth.mint_token(scopes, ttl, plan=plan)
    return JSONResponse({**grant.response(), "plan": plan}, headers={"Cache-Control": "no-store"})


async def fault_counts(request: Request) -> Response:
    """GET /_sandbox/faults: what the fault layer injected so far."""
    return JSONResponse(_admin(request).faults.as_dict())


# -- the app --------------------------------------------------------------------------------------
ROUTES = [
    Route("/", index, methods=["GET"]),
    Route("/v1", index, methods=["GET"]),
    Route("/openapi.json", openapi, methods=["GET"]),
    Route("/docs", docs, methods=["GET"]),
    Route("/v1/listings", search_listings, methods=["GET"]),
    Route("/v1/listings/changes", listing_changes, methods=["GET"]),  # before {ListingId}
    Route("/v1/listings/{ListingId}", listing_detail, methods=["GET"]),
    Route("/v1/analytics", analytics, methods=["GET"]),
    Route("/v1/contacts", contacts_list, methods=["GET"]),
    Route("/v1/contacts/{contactId}", contact_detail, methods=["GET"]),
    Route("/v1/contacts/{contactId}/activity", contact_activity, methods=["GET"]),
    Route("/v1/me", me, methods=["GET"]),
    Route("/api/me", legacy_me, methods=["GET"]),
    Route("/api/getContacts", legacy_contacts, methods=["GET"]),
    Route("/authorize", authorize_endpoint, methods=["GET", "POST"]),
    Route("/api/oauth/token", token_endpoint, methods=["POST"]),
    Route("/_sandbox/clock", clock, methods=["GET", "POST"]),
    Route("/_sandbox/tokens", mint_token, methods=["POST"]),
    Route("/_sandbox/faults", fault_counts, methods=["GET"]),
]


def build_admin(options: SandboxOptions) -> SandboxAdmin:
    """Generate the data of ``options`` (the slow part) and wrap it in a SandboxAdmin."""
    from realtyframes.sandbox._analytics import AnalyticsStore
    from realtyframes.sandbox._crm import ContactStore
    from realtyframes.sandbox._store import ListingStore

    validate_faults(options.faults)
    if options.as_of.tzinfo is None:
        raise ValueError("as_of: needs a time zone (e.g. datetime(2026, 6, 30, tzinfo=UTC))")
    if options.rate_limit is not None:
        count, window = options.rate_limit
        if count < 1 or window <= 0:
            raise ValueError(
                f"rate_limit: expected (requests >= 1, window > 0), got {options.rate_limit}"
            )
    if options.latency_ms < 0:
        raise ValueError(f"latency_ms: must be >= 0, got {options.latency_ms}")
    as_of = options.as_of.astimezone(UTC)
    return SandboxAdmin(
        options=options,
        listings=ListingStore(options.listings, options.seed, as_of=as_of),
        contacts=ContactStore(options.contacts, options.seed, as_of=as_of, domain=DEMO.domain),
        analytics=AnalyticsStore(options.seed, as_of=as_of),
    )


def create_app(options: SandboxOptions | None = None) -> Starlette:
    """The sandbox as an ASGI app (data generated now); ``app.state.admin`` holds its state.

    >>> app = create_app(SandboxOptions(listings=300, contacts=20))  # doctest: +SKIP
    >>> app.state.admin.now  # doctest: +SKIP
    """
    options = options or SandboxOptions()
    admin = build_admin(options)

    def on_search(count: int) -> None:
        admin.listings.insert_new(count)

    app = Starlette(
        routes=ROUTES,
        middleware=[
            Middleware(LimitsMiddleware, admin=admin),
            Middleware(
                FaultsMiddleware,
                faults=options.faults,
                latency_ms=options.latency_ms,
                seed=options.seed,
                counters=admin.faults,
                render_error=render_error,
                on_search=on_search,
            ),
        ],
        exception_handlers={SandboxError: _sandbox_error, HTTPException: _http_error},
    )
    # No 307 to the slash-less twin: /v1/listings/ is not an operation of the spec, and a
    # redirect would answer before authentication and validation. It is a 404 not_found.
    app.router.redirect_slashes = False
    app.state.admin = admin
    return app
