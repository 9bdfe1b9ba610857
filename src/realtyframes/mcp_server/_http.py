"""``mcp serve --port``: the bearer token of the HTTP transport and the address it binds.

Over HTTP any local process (or, on another address, any host) could call ``sync_market`` and
spend the account's quota, so the server takes a token of its own (:class:`AuthToken`:
``--auth-token``, else ``REALTYFRAMES_MCP_AUTH_TOKEN``; not the API credential ``--token``).
:class:`BearerGuard` answers 401 with ``WWW-Authenticate: Bearer`` to every request without
``Authorization: Bearer <token>`` (compared in constant time; RFC 6750: no error code when no
credential was sent, ``error="invalid_token"`` for a wrong one). Without a token the server
binds a loopback address only (:func:`check_bind`); stdio needs none.

>>> token = AuthToken("s3cret-value")
>>> token, token.matches("Bearer s3cret-value"), token.matches("Bearer other")
(AuthToken('***'), True, False)
>>> is_loopback("127.0.0.1"), is_loopback("localhost"), is_loopback("0.0.0.0")
(True, True, False)
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Mapping

from starlette.types import ASGIApp, Receive, Scope, Send

from realtyframes._environment import MCP_AUTH_TOKEN_VARIABLE
from realtyframes.errors import ConfigError

__all__ = ["AUTH_ENV", "REALM", "AuthToken", "BearerGuard", "check_bind", "is_loopback"]

#: Environment variable of the HTTP transport's bearer token (when ``--auth-token`` is not given).
AUTH_ENV = MCP_AUTH_TOKEN_VARIABLE
REALM = "realtyframes-mcp"


class AuthToken:
    """The bearer token clients must send; never shown (``repr``/``str`` are ``***``)."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        if not value or any(c.isspace() or not c.isprintable() for c in value):
            raise ConfigError(
                "auth token", "empty or not a header value", "printable characters, no spaces"
            )
        self._value = value.encode()

    def matches(self, authorization: str | None) -> bool:
        """Whether an ``Authorization`` header carries this token (constant-time comparison)."""
        scheme, _, presented = (authorization or "").strip().partition(" ")
        if scheme.lower() != "bearer":
            return False
        return hmac.compare_digest(presented.strip().encode(), self._value)

    @classmethod
    def from_options(cls, given: str | None, env: Mapping[str, str]) -> AuthToken | None:
        """The token of ``--auth-token`` (``given``), else of :data:`AUTH_ENV`, else None."""
        value = given if given is not None else env.get(AUTH_ENV)
        return None if value is None else cls(value)

    def __repr__(self) -> str:
        return "AuthToken('***')"

    __str__ = __repr__


def is_loopback(host: str) -> bool:
    """Whether ``host`` names a loopback interface only (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: AuthToken | None) -> None:
    """Refuse to serve a non-loopback ``host`` without a token (:class:`ConfigError`)."""
    if token is None and not is_loopback(host):
        raise ConfigError(
            "--host",
            f"{host} is not a loopback address and no bearer token is set",
            f"--auth-token or {AUTH_ENV} (or a loopback --host such as 127.0.0.1)",
        )


class BearerGuard:
    """ASGI middleware: HTTP requests without the bearer token get 401; the rest pass on."""

    def __init__(self, app: ASGIApp, token: AuthToken) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        sent = [v for k, v in scope.get("headers", []) if k.lower() == b"authorization"]
        presented = sent[0].decode("latin-1") if len(sent) == 1 else None
        if presented is not None and self.token.matches(presented):
            await self.app(scope, receive, send)
            return
        challenge = f'Bearer realm="{REALM}"'
        if sent:  # RFC 6750 §3.1: an error code only when a credential was sent
            challenge += ', error="invalid_token", error_description="wrong bearer token"'
        message = (
            "wrong bearer token"
            if sent
            else "a bearer token is required: send Authorization: Bearer <the --auth-token>"
        )
        body = json.dumps({"error": "unauthorized", "message": message}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", challenge.encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
