"""The OpenAPI 3.1 document of the sandbox, served at ``/openapi.json``: true to the service spec.

Written from the route declarations (:mod:`realtyframes.sandbox.routes`: paths, methods, scope
rules, the query parameters :mod:`realtyframes.sandbox._query` validates with) and the spec's
enumerations (:mod:`realtyframes.sandbox._spec`); the schemas are in
:mod:`realtyframes.sandbox._openapi_schemas`. Every operation has its 200 body, both error
representations (ApiError as ``application/json``, Problem as ``application/problem+json``; the
legacy host's ``{error, message}``), the rate-limit headers on every answer, ``Retry-After`` on
429, the deprecation headers of the legacy operations, and its security.

>>> doc = openapi_document("http://127.0.0.1:8000")
>>> doc["openapi"], doc["servers"][0]["url"]
('3.1.0', 'http://127.0.0.1:8000')
>>> sorted(doc["paths"])[:3]
['/', '/.well-known/oauth-authorization-server', '/.well-known/oauth-protected-resource']
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from realtyframes.sandbox._errors import EXTRA_CODES
from realtyframes.sandbox._openapi_schemas import headers, ref, schemas
from realtyframes.sandbox._spec import API_VERSION, ERRORS
from realtyframes.sandbox.routes import ENDPOINTS, Endpoint

__all__ = ["openapi_document"]

JSON = "application/json"
PROBLEM = "application/problem+json"
FORM = "application/x-www-form-urlencoded"
HTML = "text/html"
Security = list[dict[str, list[str]]]


RATE_HEADERS = (
    "RateLimit",
    "RateLimit-Policy",
    "X-RateLimit-Limit",
    "X-RateLimit-Remaining",
    "X-RateLimit-Reset",
)
DEPRECATION_HEADERS = ("Deprecation", "Sunset", "Link")


def _header_refs(names: tuple[str, ...]) -> dict[str, Any]:
    return {name: {"$ref": f"#/components/headers/{name}"} for name in names}


def _one_of(values: list[str]) -> dict[str, Any]:
    return {"const": values[0]} if len(values) == 1 else {"enum": values}


def _alternatives(values: list[str]) -> str:
    return values[0] if len(values) == 1 else "(" + "|".join(values) + ")"


def _error_responses(
    *,
    legacy: bool,
    html_400: bool = False,
    overrides: Mapping[int, tuple[str, ...]] | None = None,
) -> dict[str, Any]:
    """The six error answers of the spec for one operation (``overrides``: other codes)."""
    out: dict[str, Any] = {}
    for status, (spec_code, spec_message, legacy_name) in ERRORS.items():
        codes = list((overrides or {}).get(status, (spec_code,)))
        messages = [spec_message if c == spec_code else EXTRA_CODES[c][1] for c in codes]
        code, message = _alternatives(codes), _alternatives(messages)
        names = RATE_HEADERS + (("Retry-After",) if status == 429 else ())
        if legacy:
            content: dict[str, Any] = {
                JSON: {
                    "schema": {
                        "allOf": [
                            ref("LegacyError"),
                            {"properties": {"error": {"const": legacy_name}}},
                        ]
                    }
                }
            }
            names += DEPRECATION_HEADERS
        else:
            content = {
                JSON: {
                    "schema": {
                        "allOf": [
                            ref("ApiError"),
                            {
                                "properties": {
                                    "error": {
                                        "properties": {
                                            "code": _one_of(codes),
                                            "status": {"const": status},
                                            "message": {"pattern": f"^{message}"},
                                        }
                                    }
                                }
                            },
                        ]
                    }
                },
                PROBLEM: {
                    "schema": {
                        "allOf": [
                            ref("Problem"),
                            {
                                "properties": {
                                    "code": _one_of(codes),
                                    "status": {"const": status},
                                    "title": _one_of([c.replace("_", " ") for c in codes]),
                                    "type": {"pattern": f"#{code}$"},
                                    "detail": {"pattern": f"^{message}"},
                                }
                            },
                        ]
                    }
                },
            }
        if html_400 and status == 400:
            content[HTML] = {"schema": {"type": "string"}}
        headers = _header_refs(names)
        if status in (401, 403) and not legacy:
            headers["WWW-Authenticate"] = {"$ref": "#/components/headers/WWW-Authenticate"}
        out[str(status)] = {
            "description": f"{' or '.join(codes)}: the message starts with "
            f"{' or '.join(messages)}, then details",
            "headers": headers,
            "content": content,
        }
    return out


def _security(endpoint: Endpoint, protected: bool) -> Security:
    """Who may call: the scope rule of a /v1 operation, the legacy host's key, or anyone."""
    if endpoint.legacy:
        return [{"apiKeyQuery": []}]
    access = endpoint.access
    if access is None:
        return []
    bearer: dict[str, list[str]] = {"bearer": [access.scope] if access.scope else []}
    schemes: Security = [bearer, {"apiKeyHeader": []}] if access.api_key_ok else [bearer]
    anonymous: Security = [] if protected else [{}]
    return anonymous + schemes


def _operation(endpoint: Endpoint, protected: bool) -> dict[str, Any]:
    doc = endpoint.doc
    assert doc is not None
    legacy = endpoint.legacy
    query = () if legacy or doc.body else endpoint.params
    ok_headers = RATE_HEADERS + (DEPRECATION_HEADERS if legacy else ())
    op: dict[str, Any] = {
        "operationId": doc.operation_id,
        "summary": doc.summary,
        "tags": [doc.tag],
        "parameters": [
            {"$ref": "#/components/parameters/ServiceApiVersion"},
            *doc.path_params,
            *(p.openapi() for p in query),
        ],
        "responses": {
            "200": {
                "description": doc.ok_description,
                "headers": _header_refs(ok_headers),
                "content": doc.ok,
            },
            **_error_responses(legacy=legacy, html_400=doc.html_400, overrides=doc.error_codes),
        },
    }
    if doc.description is not None:
        op["description"] = doc.description
    if doc.body:
        op["requestBody"] = {"required": True, "content": {FORM: {"schema": _form(doc)}}}
    op["security"] = _security(endpoint, protected)
    if legacy:
        op["deprecated"] = True
    return op


def _form(doc: Any) -> dict[str, Any]:
    """The form body of an operation, from its declared fields."""
    properties: dict[str, Any] = {}
    for p in doc.body:
        properties[p.name] = p.schema()
        if p.description:
            properties[p.name]["description"] = p.description
    return {
        "type": "object",
        "properties": properties,
        "required": [p.name for p in doc.body if p.required],
        "additionalProperties": False,
    }


def _paths(protected: bool) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for endpoint in ENDPOINTS:
        if endpoint.doc is not None:
            method = endpoint.methods[0].lower()
            paths.setdefault(endpoint.path, {})[method] = _operation(endpoint, protected)
    return paths


#: What the API is, for the document's ``info``.
_DESCRIPTION = (
    "JSON REST API of a real-estate website platform: MLS listings (search, detail, "
    "change feed), CRM contacts, website analytics and the current user, with OAuth 2.0 "
    "and personal API keys. Every error comes as ApiError (application/json) or, when "
    "the Accept header prefers it, as Problem (application/problem+json). Every answer "
    "carries the rate-limit headers. The legacy host's operations are deprecated. "
    "MCP (streamable HTTP, JSON-RPC): the product tools at /mcp mirror these "
    "operations with the same auth, scopes, quota and 400 rules; the documentation "
    "MCP is at /docs/mcp."
)


def openapi_document(base_url: str | None = None, *, protected: bool = True) -> dict[str, Any]:
    """The OpenAPI 3.1 document; ``base_url`` goes in ``servers``.

    ``protected=False`` describes the open sandbox: every operation also accepts no credential
    (the legacy host's ``api_key`` stays required).

    >>> openapi_document(protected=False)["paths"]["/v1/listings"]["get"]["security"][0]
    {}
    """
    doc: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {
            "title": "Listings, Contacts and Analytics REST API (realtyframes sandbox)",
            "version": API_VERSION,
            "description": _DESCRIPTION,
        },
        "x-mcp": {
            "transport": "streamable-http",
            "product": {"path": "/mcp", "auth": "as the /v1 operations"},
            "docs": {"path": "/docs/mcp", "auth": "none"},
        },
        "servers": [{"url": base_url or "/"}],
        "tags": [
            {"name": "listings", "description": "Scope listings, or an API key"},
            {"name": "contacts", "description": "Scope contacts (OAuth only)"},
            {"name": "analytics", "description": "Scope analytics, or an API key"},
            {"name": "user", "description": "The authenticated user"},
            {"name": "auth", "description": "OAuth 2.0 authorization code flow"},
            {"name": "legacy", "description": "API-key-only legacy host (deprecated)"},
            {"name": "meta", "description": "Index document"},
        ],
        "paths": _paths(protected),
        "components": {
            "schemas": schemas(),
            "headers": headers(),
            "parameters": {
                "ServiceApiVersion": {
                    "name": "Service-Api-Version",
                    "in": "header",
                    "required": False,
                    "description": "API version (1). When it and the path disagree, the path wins.",
                    "schema": {"type": "integer", "minimum": 1, "default": 1},
                },
                "contactId": {
                    "name": "contactId",
                    "in": "path",
                    "required": True,
                    "description": "Contact identifier",
                    "schema": {"type": "string"},
                },
            },
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "OAuth 2.0 access token (scopes listings, contacts, analytics) "
                    "from /authorize and /api/oauth/token; a personal API key is also accepted here",
                },
                "apiKeyHeader": {
                    "type": "apiKey",
                    "in": "header",
                    "name": "X-API-Key",
                    "description": "Personal API key: listings, analytics and /v1/me",
                },
                "apiKeyQuery": {
                    "type": "apiKey",
                    "in": "query",
                    "name": "api_key",
                    "description": "API key of the legacy host; identifies the user and its domain",
                },
            },
        },
    }
    return copy.deepcopy(doc)  # no node shared with module constants
