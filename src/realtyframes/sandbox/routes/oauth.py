"""The OAuth 2.0 authorization code flow: the consent page, the token exchange, discovery.

``GET /authorize`` shows the consent page, ``POST /authorize`` records the decision and redirects
back with a code; ``POST /api/oauth/token`` exchanges the code (form body, also the query), with
PKCE S256 (RFC 7636) and the RFC 6749 5.2 error codes. The discovery documents
(:mod:`realtyframes.sandbox._discovery`): RFC 8414 authorization server metadata, and in protected
mode the RFC 9728 protected resource metadata of the host and of ``/mcp``.

>>> [e.path for e in ENDPOINTS][:2]
['/authorize', '/api/oauth/token']
"""

from __future__ import annotations

import base64
from urllib.parse import parse_qsl, unquote_plus

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from realtyframes.sandbox import _query as q
from realtyframes.sandbox._auth import AuthorizePageError, add_query
from realtyframes.sandbox._discovery import (
    AS_METADATA_PATH,
    PRM_PATH,
    authorization_server_metadata,
    protected_resource_metadata,
)
from realtyframes.sandbox._errors import SandboxError, bad_param, oauth_error
from realtyframes.sandbox._negotiate import PROBLEM_JSON, negotiate, render
from realtyframes.sandbox._pages import consent_page, error_page
from realtyframes.sandbox.routes._declare import Doc, Endpoint, admin_of, check_version, query
from realtyframes.sandbox.routes.v1 import ok

__all__ = ["AUTHORIZE_PATH", "ENDPOINTS"]

AUTHORIZE_PATH = "/authorize"
MCP_RESOURCE = "/mcp"  # the product MCP endpoint (routes.docs.MCP_PATH)
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
        return render(request, bad_param(exc.param, exc.problem))
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
    auth = admin_of(request).auth
    if request.method == "GET":
        params = query(request, q.AUTHORIZE)
    else:
        params = q.single(await _form(request), "form")
    try:
        _check_resource(request, params.get("resource"), AuthorizePageError)
        validated = auth.validate_authorize(params)
    except AuthorizePageError as exc:
        return _authorize_refusal(request, exc)
    if request.method == "GET":
        page = consent_page(validated, AUTHORIZE_PATH, auth.issue_form_token(validated))
        return HTMLResponse(page, headers=_PAGE_HEADERS)
    if not auth.take_form_token(params.get("csrf_token", ""), validated):
        problem = "missing or stale consent form: open the authorization page again"
        return _authorize_refusal(request, AuthorizePageError("csrf_token", problem))
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


def _check_resource(
    request: Request, resource: str | None, refusal: type[AuthorizePageError] | None = None
) -> None:
    """RFC 8707 ``resource`` (MCP clients send it): this host's URL or its ``/mcp`` URL."""
    if resource is None:
        return
    base = str(request.base_url).rstrip("/")
    ours = (base, f"{base}/", f"{base}{MCP_RESOURCE}")
    if resource in ours:
        return
    problem = f"not a resource of this server; allowed: {base} or {base}{MCP_RESOURCE}"
    if refusal is not None:
        raise refusal("resource", problem)
    raise bad_param("resource", problem)


def _basic_client(request: Request) -> tuple[str, str] | None:
    """``Authorization: Basic`` client credentials (RFC 6749 2.3.1: form-urlencoded, then
    base64), or None when the header is absent; anything else there is ``invalid_client``."""
    header = request.headers.get("authorization")
    if header is None:
        return None
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic":
        raise oauth_error(
            "invalid_client", "Authorization: the token endpoint takes HTTP Basic credentials"
        )
    try:
        client_id, sep, secret = (
            base64.b64decode(encoded.strip(), validate=True).decode().partition(":")
        )
    except (ValueError, UnicodeDecodeError):
        raise oauth_error("invalid_client", "Authorization: not valid Basic credentials") from None
    if not sep:
        detail = "Authorization: Basic credentials need client_id:client_secret"
        raise oauth_error("invalid_client", detail)
    return unquote_plus(client_id), unquote_plus(secret)


async def _token_form(request: Request) -> dict[str, str]:
    """The token request's fields: form body and query merged, HTTP Basic folded in."""
    form = q.single(await _form(request), "form body")
    for name, value in query(request, q.TOKEN).items():
        if form.setdefault(name, value) != value:
            raise bad_param(name, "differs between the query and the form body")
    for name in form:
        if name not in q.TOKEN_PARAMS:
            raise bad_param(name, "not a parameter of the token request", q.TOKEN_PARAMS)
    _check_resource(request, form.get("resource"))
    basic = _basic_client(request)
    if basic is not None:
        if "client_secret" in form:
            raise bad_param("client_secret", "given twice: use HTTP Basic or the form, not both")
        if form.setdefault("client_id", basic[0]) != basic[0]:
            raise bad_param("client_id", "differs between HTTP Basic and the form body")
        form["client_secret"] = basic[1]
    return form


async def token_endpoint(request: Request) -> Response:
    """POST /api/oauth/token: exchange an authorization code (form body, also the query).

    Every refusal carries an RFC 6749 5.2 code: a malformed request is ``invalid_request``.
    """
    try:
        check_version(request)
        form = await _token_form(request)
    except SandboxError as exc:
        if exc.code != "bad_request":
            raise
        raise oauth_error("invalid_request", exc.detail or exc.message, param=exc.param) from None
    grant = admin_of(request).auth.exchange_code(form)
    return JSONResponse(
        grant.response(), headers={"Cache-Control": "no-store", "Pragma": "no-cache"}
    )


def _base(request: Request) -> str:
    return str(request.base_url).rstrip("/")


async def authorization_server(request: Request) -> Response:
    """GET /.well-known/oauth-authorization-server (RFC 8414)."""
    return JSONResponse(authorization_server_metadata(_base(request)))


def _protected_only(request: Request) -> None:
    if not admin_of(request).options.protected:
        raise SandboxError(404, "the open sandbox protects no resource (start it protected)")


async def protected_resource(request: Request) -> Response:
    """GET /.well-known/oauth-protected-resource (RFC 9728): the host (``/v1`` and ``/mcp``)."""
    _protected_only(request)
    return JSONResponse(protected_resource_metadata(_base(request)))


async def protected_mcp(request: Request) -> Response:
    """GET /.well-known/oauth-protected-resource/mcp (RFC 9728 3.1): the ``/mcp`` resource."""
    _protected_only(request)
    return JSONResponse(protected_resource_metadata(_base(request), MCP_RESOURCE))


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint(
        AUTHORIZE_PATH,
        authorize_endpoint,
        methods=("GET", "POST"),
        params=q.AUTHORIZE,
        doc=Doc(
            "authorize",
            "Start the OAuth flow: the consent page (a browser redirect target)",
            "auth",
            {"text/html": {"schema": {"type": "string"}}},
            html_400=True,
            ok_description="The consent page; approving redirects to redirect_uri with code and state",
        ),
    ),
    Endpoint(
        "/api/oauth/token",
        token_endpoint,
        methods=("POST",),
        doc=Doc(
            "exchangeToken",
            "Exchange an authorization code for an access token",
            "auth",
            ok("Token"),
            description="client_id and client_secret go in the form body (the sandbox also "
            "reads them from the query, or HTTP Basic as RFC 6749 2.3.1 says). redirect_uri is "
            "required and must equal the authorize step's. Codes are single-use. When the "
            "authorize step sent a PKCE code_challenge (S256), code_verifier is required; "
            "without one it is refused. Errors carry the RFC 6749 5.2 codes (invalid_client "
            "is a 401 with WWW-Authenticate: Basic).",
            body=q.TOKEN,
            error_codes={
                400: ("invalid_request", "invalid_grant", "unsupported_grant_type"),
                401: ("invalid_client",),
            },
        ),
    ),
    Endpoint(
        AS_METADATA_PATH,
        authorization_server,
        faults=False,
        doc=Doc(
            "authorizationServerMetadata",
            "OAuth 2.0 authorization server metadata (RFC 8414)",
            "auth",
            ok("AuthorizationServerMetadata"),
        ),
    ),
    Endpoint(
        PRM_PATH,
        protected_resource,
        faults=False,
        doc=Doc(
            "protectedResourceMetadata",
            "Protected resource metadata of this host (RFC 9728); protected mode only",
            "auth",
            ok("ProtectedResourceMetadata"),
            description="The open sandbox answers 404: it protects nothing.",
        ),
    ),
    Endpoint(
        PRM_PATH + MCP_RESOURCE,
        protected_mcp,
        faults=False,
        doc=Doc(
            "mcpProtectedResourceMetadata",
            "Protected resource metadata of the /mcp endpoint (RFC 9728); protected mode only",
            "auth",
            ok("ProtectedResourceMetadata"),
            description="Linked from the resource_metadata parameter of /mcp's 401. The open "
            "sandbox answers 404.",
        ),
    ),
)
