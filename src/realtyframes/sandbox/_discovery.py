"""OAuth discovery and challenges: the metadata documents and ``WWW-Authenticate``.

- RFC 9728 protected resource metadata, at ``/.well-known/oauth-protected-resource`` (the host:
  ``/v1`` and ``/mcp``) and ``/.well-known/oauth-protected-resource/mcp`` (the MCP endpoint, the
  well-known string inserted before the resource's path as RFC 9728 3.1 says); protected mode only.
- RFC 8414 authorization server metadata at ``/.well-known/oauth-authorization-server`` (the
  sandbox is its own authorization server: issuer = base URL).
- The Bearer challenge of a 401/403 (RFC 6750 3): no ``error`` when the request carried no
  credential at all, ``invalid_token`` for a bad one, ``insufficient_scope`` with ``scope`` on a
  403; ``resource_metadata`` (RFC 9728 5.1, the MCP authorization spec) links the metadata.

>>> bearer_challenge(None)
'Bearer realm="realtyframes"'
>>> bearer_challenge("insufficient_scope", scope="contacts")
'Bearer realm="realtyframes", error="insufficient_scope", scope="contacts"'
"""

from __future__ import annotations

from typing import Any

from realtyframes.sandbox._spec import SCOPES

__all__ = [
    "AS_METADATA_PATH",
    "PKCE_METHODS",
    "PRM_PATH",
    "REALM",
    "authorization_server_metadata",
    "bearer_challenge",
    "discovery_schemas",
    "metadata_url",
    "protected_resource_metadata",
]

REALM = "realtyframes"
PRM_PATH = "/.well-known/oauth-protected-resource"
AS_METADATA_PATH = "/.well-known/oauth-authorization-server"
#: PKCE methods the authorize endpoint takes: S256 only (RFC 9700 2.1.1, MCP: S256).
PKCE_METHODS: tuple[str, ...] = ("S256",)
AUTHORIZE_PATH = "/authorize"
TOKEN_PATH = "/api/oauth/token"


def metadata_url(base_url: str, resource_path: str = "") -> str:
    """Where the protected resource metadata of ``base_url + resource_path`` is (RFC 9728 3.1).

    >>> metadata_url("http://127.0.0.1:9", "/mcp")
    'http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp'
    """
    return f"{base_url.rstrip('/')}{PRM_PATH}{resource_path}"


def protected_resource_metadata(base_url: str, resource_path: str = "") -> dict[str, Any]:
    """The RFC 9728 document of the resource ``base_url + resource_path``.

    >>> protected_resource_metadata("http://h", "/mcp")["resource"]
    'http://h/mcp'
    """
    base = base_url.rstrip("/")
    return {
        "resource": f"{base}{resource_path}",
        "authorization_servers": [base],
        "scopes_supported": list(SCOPES),
        "bearer_methods_supported": ["header"],
        "resource_name": "realtyframes sandbox" + (" MCP" if resource_path else " API"),
        "resource_documentation": f"{base}/docs",
    }


def authorization_server_metadata(base_url: str) -> dict[str, Any]:
    """The RFC 8414 document of the sandbox's authorization server (issuer: ``base_url``).

    >>> authorization_server_metadata("http://h")["code_challenge_methods_supported"]
    ['S256']
    """
    base = base_url.rstrip("/")
    return {
        "issuer": base,
        "authorization_endpoint": f"{base}{AUTHORIZE_PATH}",
        "token_endpoint": f"{base}{TOKEN_PATH}",
        "scopes_supported": list(SCOPES),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
        "code_challenge_methods_supported": list(PKCE_METHODS),
        "service_documentation": f"{base}/docs",
    }


def bearer_challenge(
    error: str | None, *, scope: str | None = None, resource_metadata: str | None = None
) -> str:
    """A ``WWW-Authenticate: Bearer`` value; ``error`` None when no credential was sent.

    >>> bearer_challenge("invalid_token", resource_metadata="http://h/m")
    'Bearer realm="realtyframes", error="invalid_token", resource_metadata="http://h/m"'
    """
    params = [f'realm="{REALM}"']
    if error is not None:
        params.append(f'error="{error}"')
    if scope is not None:
        params.append(f'scope="{scope}"')
    if resource_metadata is not None:
        params.append(f'resource_metadata="{resource_metadata}"')
    return "Bearer " + ", ".join(params)


def discovery_schemas() -> dict[str, Any]:
    """The OpenAPI schemas of the RFC 9728 and RFC 8414 metadata documents served here."""
    strings = {"type": "array", "items": {"type": "string"}}
    url = {"type": "string", "format": "uri"}
    return {
        "ProtectedResourceMetadata": _object(
            {
                "resource": url,
                "authorization_servers": strings,
                "scopes_supported": strings,
                "bearer_methods_supported": strings,
                "resource_name": {"type": "string"},
                "resource_documentation": url,
            },
            ["resource", "authorization_servers", "scopes_supported", "bearer_methods_supported"],
        ),
        "AuthorizationServerMetadata": _object(
            {
                "issuer": url,
                "authorization_endpoint": url,
                "token_endpoint": url,
                "scopes_supported": strings,
                "response_types_supported": strings,
                "response_modes_supported": strings,
                "grant_types_supported": strings,
                "token_endpoint_auth_methods_supported": strings,
                "code_challenge_methods_supported": strings,
                "service_documentation": url,
            },
            ["issuer", "authorization_endpoint", "token_endpoint", "response_types_supported"],
        ),
    }


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}
