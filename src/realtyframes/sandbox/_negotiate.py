"""Error negotiation: the one renderer of every 4xx/5xx answer, in the shape the caller gets.

The legacy operations answer ``{"error": <type name>, "message"}`` with deprecation headers;
elsewhere Problem (application/problem+json) when the Accept header prefers it, else ApiError.
An :class:`ErrorRenderer` is bound to the app's legacy paths and documentation page
(``app.state.render_error``); middleware and routes render through it.

>>> negotiate("application/problem+json", ["application/json", "application/problem+json"])
'application/problem+json'
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from email.utils import format_datetime

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Scope

from realtyframes.sandbox._discovery import bearer_challenge, metadata_url
from realtyframes.sandbox._errors import CODES, OAUTH_CODES, SandboxError
from realtyframes.sandbox._spec import ERRORS

__all__ = ["PROBLEM_JSON", "SUNSET", "ErrorRenderer", "negotiate"]

PROBLEM_JSON = "application/problem+json"
#: Earliest removal day of the deprecated legacy operations (RFC 8594 Sunset).
SUNSET = datetime(2027, 12, 31, 23, 59, 59, tzinfo=UTC)


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
    ranges = _ranges(accept)
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


def _ranges(accept: str | None) -> list[tuple[str, str, float, int]]:
    """The media ranges of an Accept header: (type, subtype, q, position)."""
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
    return ranges


class ErrorRenderer:
    """Renders SandboxErrors for one app: knows its legacy paths and its documentation page."""

    def __init__(
        self,
        legacy_paths: Iterable[str],
        docs_path: str,
        *,
        protected: bool = False,
        mcp_path: str = "/mcp",
    ) -> None:
        self.legacy_paths = frozenset(legacy_paths)
        self.docs_path = docs_path
        self.protected = protected  # 401s link the protected resource metadata (RFC 9728 5.1)
        self.mcp_path = mcp_path

    def docs_url(self, scope: Scope) -> str:
        """The documentation page of this sandbox ({docs_url}): ``<base>/docs``."""
        return f"{str(Request(scope).base_url).rstrip('/')}{self.docs_path}"

    def deprecation_headers(self, scope: Scope) -> dict[str, str]:
        """Deprecation, Sunset (HTTP-date) and Link rel=deprecation for the legacy operations."""
        return {
            "Deprecation": "true",
            "Sunset": format_datetime(SUNSET, usegmt=True),
            "Link": f'<{self.docs_url(scope)}#deprecation>; rel="deprecation"; type="text/html"',
        }

    def challenge(self, scope: Scope, error: SandboxError) -> str:
        """The Bearer challenge of a 401/403 (RFC 6750 3): no error code when the request
        carried no credential; in protected mode a 401 links the resource's metadata."""
        if error.status == 403:
            return bearer_challenge("insufficient_scope", scope=error.scope)
        request = Request(scope)
        sent = "authorization" in request.headers or "x-api-key" in request.headers
        path = scope.get("path", "")
        link = None
        if self.protected and (path == self.mcp_path or path == "/v1" or path.startswith("/v1/")):
            base = str(request.base_url).rstrip("/")
            link = metadata_url(base, self.mcp_path if path == self.mcp_path else "")
        return bearer_challenge("invalid_token" if sent else None, resource_metadata=link)

    def __call__(
        self, scope: Scope, error: SandboxError, headers: Mapping[str, str] | None = None
    ) -> Response:
        """The single renderer of every 4xx/5xx: legacy body, Problem or ApiError."""
        request = Request(scope)
        out = {**error.headers, **(headers or {})}
        message = f"{error.message}: {error.detail}" if error.detail else error.message
        if scope.get("path", "") in self.legacy_paths:
            out.update(self.deprecation_headers(scope))
            legacy_name = ERRORS.get(error.status, ERRORS[500])[2]
            body = {"error": legacy_name, "message": message}
            return JSONResponse(body, status_code=error.status, headers=out)
        if error.code in ("invalid_token", "insufficient_scope"):
            out.setdefault("WWW-Authenticate", self.challenge(scope, error))
        offers = ["application/json", PROBLEM_JSON]
        if negotiate(request.headers.get("accept"), offers) == PROBLEM_JSON:
            problem: dict[str, object] = {
                "type": f"{self.docs_url(scope)}#{error.code}",
                "title": error.code.replace("_", " "),
                "status": error.status,
                "detail": message,
                "code": error.code,
            }
            if error.code in OAUTH_CODES:  # RFC 6749 5.2 members, beside the spec's
                problem.update(error=error.code, error_description=message)
            return JSONResponse(
                problem, status_code=error.status, headers=out, media_type=PROBLEM_JSON
            )
        api_error = {"error": {"code": error.code, "message": message, "status": error.status}}
        return JSONResponse(api_error, status_code=error.status, headers=out)


def render(request: Request, error: SandboxError) -> Response:
    """Render ``error`` with the app's renderer."""
    renderer: ErrorRenderer = request.app.state.render_error
    return renderer(request.scope, error)


async def sandbox_error(request: Request, exc: Exception) -> Response:
    """Exception handler: a SandboxError raised by a route."""
    assert isinstance(exc, SandboxError)
    return render(request, exc)


async def http_error(request: Request, exc: Exception) -> Response:
    """Exception handler: Starlette's 404 and 405 (and any other HTTP error) in the spec's shapes."""
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        error = SandboxError(404, f"no operation at {request.url.path}")
    elif exc.status_code == 405:  # RFC 9110 15.5.6: the methods the path takes, in Allow
        declared = (exc.headers or {}).get("Allow", "GET").split(",")
        allowed = ", ".join(sorted({m.strip().upper() for m in declared if m.strip()}))
        error = SandboxError(
            405,
            f"{request.method} is not supported on {request.url.path}; allowed: {allowed}",
            code="method_not_allowed",
            headers={"Allow": allowed},
        )
    else:
        status = exc.status_code if exc.status_code in CODES else 500
        error = SandboxError(status, str(exc.detail) if status != 500 else None)
    return render(request, error)
