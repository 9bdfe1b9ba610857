"""The legacy host's operations (deprecated): API key in the query, ``{error, message}`` errors.

They answer with ``Deprecation``, ``Sunset`` and a ``Link`` to the documentation's deprecation
section; their successors are the /v1 operations ``user.me`` and ``contacts.list``.

>>> sorted(LEGACY_PATHS)
['/api/getContacts', '/api/me']
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from realtyframes.sandbox import _query as q
from realtyframes.sandbox._auth import AuthRegistry, Principal
from realtyframes.sandbox._errors import SandboxError
from realtyframes.sandbox._negotiate import ErrorRenderer
from realtyframes.sandbox.routes._declare import Doc, Endpoint, admin_of, check_version, query
from realtyframes.sandbox.routes.v1 import JSON, ok, path_of

__all__ = ["ENDPOINTS", "LEGACY_PATHS"]


def _legacy_principal(request: Request) -> Principal:
    check_version(request)
    key = query(request, q.LEGACY).get("api_key", "")
    principal = AuthRegistry.principal_for_api_key(key) if key else None
    if principal is None:
        raise SandboxError(401, "api_key: missing or unknown API key")
    return principal


def _deprecation(request: Request) -> dict[str, str]:
    renderer: ErrorRenderer = request.app.state.render_error
    return renderer.deprecation_headers(request.scope)


async def legacy_me(request: Request) -> Response:
    """GET /api/me (deprecated): the key's user."""
    principal = _legacy_principal(request)
    return JSONResponse(principal.user.fields(), headers=_deprecation(request))


async def legacy_contacts(request: Request) -> Response:
    """GET /api/getContacts (deprecated): the contacts of the key's domain; 404 when none."""
    principal = _legacy_principal(request)
    contacts = admin_of(request).contacts.for_domain(principal.user.domain)
    if not contacts:
        raise SandboxError(404, f"no contacts for the domain {principal.user.domain}")
    return JSONResponse(contacts, headers=_deprecation(request))


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint(
        "/api/me",
        legacy_me,
        params=q.LEGACY,
        legacy=True,
        doc=Doc(
            "legacyGetMe",
            "Current user (legacy host, API key in the query; deprecated: use "
            f"{path_of('user', 'me')})",
            "legacy",
            ok("User"),
        ),
    ),
    Endpoint(
        "/api/getContacts",
        legacy_contacts,
        params=q.LEGACY,
        legacy=True,
        doc=Doc(
            "legacyGetContacts",
            "Contacts of the key's domain (legacy host; deprecated: use "
            f"{path_of('contacts', 'list')}); "
            "404 when the domain has none",
            "legacy",
            {JSON: {"schema": {"type": "array", "items": ok("Contact")[JSON]["schema"]}}},
        ),
    ),
)
LEGACY_PATHS = frozenset(e.path for e in ENDPOINTS)
