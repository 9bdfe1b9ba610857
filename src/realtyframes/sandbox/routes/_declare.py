"""How a route is declared: its path, methods, handler, query parameters, access and documentation.

Every route family (``v1``, ``legacy``, ``oauth``, ``admin``, ``docs``) lists its
:class:`Endpoint` declarations; the app is routed from them and ``/openapi.json`` is written from
them, so a path, its parameters and its scope rule are stated once.

>>> Access("listings").api_key_ok
True
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from realtyframes.sandbox._auth import ANONYMOUS, Principal
from realtyframes.sandbox._errors import SandboxError, bad_param
from realtyframes.sandbox._query import Param, check_names

if TYPE_CHECKING:
    from realtyframes.sandbox._admin import SandboxAdmin

__all__ = ["Access", "Doc", "Endpoint", "admin_of", "check_version", "operation", "query"]

Handler = Callable[[Request], Awaitable[Response]]
V1Handler = Callable[[Request, Principal, dict[str, str]], Awaitable[Response]]


@dataclass(frozen=True)
class Access:
    """The spec's scope rule of a /v1 operation: the scope needed (None: any valid credential)."""

    scope: str | None
    api_key_ok: bool = True


@dataclass(frozen=True)
class Doc:
    """What ``/openapi.json`` says about an operation (its first method)."""

    operation_id: str
    summary: str
    tag: str
    ok: Mapping[str, Any]  # the 200 answer's content: media type -> {"schema": ...}
    description: str | None = None
    ok_description: str = "OK"
    path_params: tuple[Mapping[str, Any], ...] = ()
    html_400: bool = False  # a refused request may also get an HTML page
    body: tuple[Param, ...] = ()  # form fields of the request body
    # codes other than the spec's, by status (the token endpoint's RFC 6749 5.2 codes)
    error_codes: Mapping[int, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Endpoint:
    """One route: path, methods, handler; what it reads and who may call it."""

    path: str
    handler: Handler
    methods: tuple[str, ...] = ("GET",)
    params: tuple[Param, ...] = ()  # query parameters; anything else is a 400
    access: Access | None = None  # /v1 operations; None: open (index, auth, docs, admin)
    legacy: bool = False  # the deprecated legacy host (api_key in the query)
    doc: Doc | None = None  # None: not in /openapi.json
    index: tuple[str, str] | None = None  # (group, name) in the index document
    faults: bool = True  # False: no fault (not even latency) touches it


def admin_of(request: Request) -> SandboxAdmin:
    """The app's state (stores, auth, limiter, fault counters)."""
    return request.app.state.admin  # type: ignore[no-any-return]


def check_version(request: Request) -> None:
    """Service-Api-Version: optional; a positive integer. The path wins over its value."""
    raw = request.headers.get("service-api-version")
    if raw is None:
        return
    text = raw.strip()
    if not (text.isascii() and text.isdigit() and int(text) >= 1):
        raise bad_param("Service-Api-Version", f"header value {raw!r} is not a version number", "1")


def query(request: Request, params: Sequence[Param]) -> dict[str, str]:
    """The request's query: only the declared names, each once (else a 400)."""
    return check_names(request.query_params.multi_items(), params)


def authorize(request: Request, access: Access) -> Principal:
    """The caller of a /v1 operation, checked against the spec's scope rules in protected mode."""
    admin = admin_of(request)
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
    needed = access.scope
    if needed is None:
        return principal
    if principal.kind == "api_key" and not access.api_key_ok:
        raise SandboxError(
            403,
            f"an API key cannot reach {needed}; use an OAuth token with scope {needed}",
            scope=needed,
        )
    if needed not in principal.scopes:
        have = ",".join(principal.scopes) or "none"
        raise SandboxError(403, f"scope {needed} required; the credential has {have}", scope=needed)
    return principal


def operation(
    path: str,
    handler: V1Handler,
    access: Access,
    params: tuple[Param, ...] = (),
    **declared: Any,
) -> Endpoint:
    """A /v1 endpoint: version header, authentication and scope, then the declared query."""

    async def endpoint(request: Request) -> Response:
        check_version(request)
        principal = authorize(request, access)
        return await handler(request, principal, query(request, params))

    endpoint.__name__ = handler.__name__
    endpoint.__doc__ = handler.__doc__
    return Endpoint(path, endpoint, params=params, access=access, **declared)
