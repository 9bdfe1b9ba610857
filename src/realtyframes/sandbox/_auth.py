"""Credentials of the sandbox: API keys, OAuth clients, codes and tokens, scopes, users.

Protected mode accepts a Bearer token (from the OAuth flow or the admin mint route) or a personal
API key (header ``X-API-Key``, or ``Authorization: Bearer <key>``). Scope rules of the spec:
listings operations need ``listings``, analytics needs ``analytics``, contacts need ``contacts``,
``/v1/me`` only a valid credential; an API key reaches listings, analytics and ``/v1/me``.

Secrets (tokens, codes, the client secret) never appear in reprs, logs or error texts.

>>> reg = AuthRegistry()
>>> grant = reg.mint_token(["listings"], ttl_seconds=60)
>>> reg.principal_for_token(grant.access_token).scopes
('listings',)
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from realtyframes.sandbox._errors import SandboxError, bad_param, oauth_error
from realtyframes.sandbox._options import DEMO
from realtyframes.sandbox._pkce import check_challenge, verify
from realtyframes.sandbox._spec import API_KEY_SCOPES, SCOPES

TOKEN_TTL_SECONDS = 3600
CODE_TTL_SECONDS = 600
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
EMPTY_DOMAIN = "empty-realty.example"


@dataclass(frozen=True)
class User:
    """A sandbox account holder; ``fields()`` is the spec's current-user object."""

    id: str
    email: str
    name: str
    role: str
    domain: str
    created_at: str
    updated_at: str

    def fields(self) -> dict[str, str]:
        """The legacy current-user object (``/api/me``).

        >>> USERS["demo"].fields()["domain"]
        'demo-realty.example'
        """
        return {
            "_id": self.id,
            "email": self.email,
            "name": self.name,
            "role": self.role,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
            "domain": self.domain,
        }


USERS: dict[str, User] = {
    "demo": User(
        "6650a1f0c2d4e5f6a7b8c901",
        DEMO.email,
        "Dana Demo",
        "admin",
        DEMO.domain,
        "2024-03-04T15:20:11.000Z",
        "2026-01-12T09:41:37.000Z",
    ),
    "premium": User(
        "6650a1f0c2d4e5f6a7b8c902",
        f"premium@{DEMO.domain}",
        "Parker Premium",
        "user",
        DEMO.domain,
        "2024-05-19T11:02:45.000Z",
        "2025-11-30T17:08:03.000Z",
    ),
    "empty": User(
        "6650a1f0c2d4e5f6a7b8c903",
        f"new@{EMPTY_DOMAIN}",
        "Noor Newcomer",
        "user",
        EMPTY_DOMAIN,
        "2026-02-02T08:15:00.000Z",
        "2026-02-02T08:15:00.000Z",
    ),
}


@dataclass(frozen=True)
class ApiKey:
    """A personal API key's account: its plan and user."""

    plan: str
    user: User


API_KEYS: dict[str, ApiKey] = {
    DEMO.api_key: ApiKey("standard", USERS["demo"]),
    DEMO.premium_api_key: ApiKey("premium", USERS["premium"]),
    DEMO.empty_api_key: ApiKey("standard", USERS["empty"]),
}


@dataclass(frozen=True)
class Client:
    """A registered OAuth application."""

    client_id: str
    name: str
    redirect_uris: tuple[str, ...]
    secret: str = field(repr=False)


CLIENTS: dict[str, Client] = {
    DEMO.client_id: Client(
        DEMO.client_id, "Realtyframes Demo App", (DEMO.redirect_uri,), DEMO.client_secret
    ),
}


def fingerprint(secret: str) -> str:
    """A short non-reversible label for a secret (quota keys, logs).

    >>> len(fingerprint("abc"))
    12
    """
    return hashlib.sha256(secret.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Principal:
    """Who is calling: ``kind`` is "token", "api_key" or "anonymous" (open mode without one)."""

    kind: str
    plan: str
    scopes: tuple[str, ...]
    user: User
    label: str  # fingerprint of the credential, never the credential

    def me(self) -> dict[str, object]:
        """The ``/v1/me`` object: the legacy user fields plus ``plan`` and ``scopes``."""
        return {**self.user.fields(), "plan": self.plan, "scopes": list(self.scopes)}


ANONYMOUS = Principal("anonymous", "standard", SCOPES, USERS["demo"], "anonymous")


@dataclass(frozen=True)
class TokenGrant:
    """A minted access token and what it carries (``access_token`` is hidden from the repr)."""

    access_token: str = field(repr=False)
    scopes: tuple[str, ...]
    expires_at: float  # wall-clock seconds (time.time)
    plan: str
    user: User
    expires_in: int

    def response(self) -> dict[str, object]:
        """The token response body of the sandbox (design.md)."""
        return {
            "access_token": self.access_token,
            "token_type": "Bearer",
            "expires_in": self.expires_in,
            "scope": ",".join(self.scopes),
        }


@dataclass
class _Code:
    client_id: str
    redirect_uri: str
    scopes: tuple[str, ...]
    issued_at: float
    code_challenge: str | None = None  # PKCE S256 (RFC 7636)
    used: bool = False
    token: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class AuthorizeRequest:
    """A validated ``/authorize`` request."""

    client: Client
    redirect_uri: str
    scopes: tuple[str, ...]
    state: str | None
    code_challenge: str | None = None  # PKCE: S256 of the client's code_verifier


class AuthorizePageError(Exception):
    """An ``/authorize`` request that must not redirect (bad client, redirect_uri or scope)."""

    def __init__(self, param: str, problem: str) -> None:
        super().__init__(f"{param}: {problem}")
        self.param = param
        self.problem = problem


def parse_scopes(text: str | None, param: str = "scope") -> tuple[str, ...]:
    """Parse a comma- (or space-) separated scope list, refusing unknown names.

    >>> parse_scopes("listings, analytics")
    ('listings', 'analytics')
    """
    if text is None or not text.strip():
        raise bad_param(param, "missing; give a comma-separated list", SCOPES)
    names = [s for s in text.replace(" ", ",").split(",") if s]
    unknown = [s for s in names if s not in SCOPES]
    if unknown:
        raise bad_param(param, f"unknown scope {', '.join(map(repr, unknown))}", SCOPES)
    return tuple(dict.fromkeys(names))


def redirect_uri_allowed(requested: str, registered: Iterable[str]) -> bool:
    """Exact match, or for loopback hosts any port with the same scheme and path (RFC 8252 7.3).

    >>> redirect_uri_allowed("http://localhost:5000/callback", ["http://127.0.0.1:8765/callback"])
    True
    >>> redirect_uri_allowed("http://evil.example/callback", ["http://127.0.0.1:8765/callback"])
    False
    >>> redirect_uri_allowed("http://user:pw@127.0.0.1:8765/callback", ["http://127.0.0.1:8765/callback"])
    False
    """
    try:
        req = urlsplit(requested)
        req_port = req.port
    except ValueError:
        return False
    if req.fragment or not req.scheme or not req.hostname or "@" in req.netloc:
        return False  # userinfo in a redirect URI hides where the code really goes
    for uri in registered:
        if requested == uri:
            return True
        reg = urlsplit(uri)
        if (
            reg.hostname in LOOPBACK_HOSTS
            and req.hostname in LOOPBACK_HOSTS
            and req.scheme == reg.scheme == "http"
            and (req.path or "/") == (reg.path or "/")
            and req.query == reg.query
            and (req_port is None or 0 < req_port < 65536)
        ):
            return True
    return False


def add_query(uri: str, params: Mapping[str, str | None]) -> str:
    """``uri`` with ``params`` appended to its query (None values left out).

    >>> add_query("http://127.0.0.1:1/cb?x=1", {"code": "c", "state": None})
    'http://127.0.0.1:1/cb?x=1&code=c'
    """
    parts = urlsplit(uri)
    query = parse_qsl(parts.query, keep_blank_values=True)
    query += [(k, v) for k, v in params.items() if v is not None]
    return urlunsplit(parts._replace(query=urlencode(query)))


class AuthRegistry:
    """Tokens and authorization codes of one sandbox; thread-safe.

    Expiry is checked against the real wall clock (``time.time``), not the sandbox clock.
    """

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock  # wall time for expiry checks (replaceable in tests)
        self._lock = threading.Lock()
        self._tokens: dict[str, TokenGrant] = {}
        self._codes: dict[str, _Code] = {}
        self._forms: dict[str, tuple[AuthorizeRequest, float]] = {}  # anti-forgery tokens

    # -- tokens -------------------------------------------------------------------------------
    def mint_token(
        self,
        scopes: Iterable[str],
        ttl_seconds: float = TOKEN_TTL_SECONDS,
        *,
        plan: str = "standard",
        user: User | None = None,
    ) -> TokenGrant:
        """Issue a random Bearer token carrying ``scopes`` that expires after ``ttl_seconds``."""
        grant = TokenGrant(
            access_token=secrets.token_urlsafe(32),
            scopes=tuple(scopes),
            expires_at=self.clock() + ttl_seconds,
            plan=plan,
            user=user or USERS["demo"],
            expires_in=max(0, round(ttl_seconds)),
        )
        with self._lock:
            self._tokens[grant.access_token] = grant
        return grant

    def principal_for_token(self, token: str) -> Principal | None:
        """The principal of a live token, None when unknown or expired."""
        with self._lock:
            grant = self._tokens.get(token)
            if grant is not None and grant.expires_at <= self.clock():
                del self._tokens[token]
                grant = None
        if grant is None:
            return None
        return Principal("token", grant.plan, grant.scopes, grant.user, fingerprint(token))

    @staticmethod
    def principal_for_api_key(key: str) -> Principal | None:
        """The principal of a personal API key, None when unknown."""
        account = API_KEYS.get(key)
        if account is None:
            return None
        return Principal("api_key", account.plan, API_KEY_SCOPES, account.user, fingerprint(key))

    def authenticate(self, headers: Mapping[str, str]) -> Principal | None:
        """The caller from ``Authorization: Bearer`` or ``X-API-Key``; None when none is sent.

        Raises SandboxError 401 when a credential is sent but is malformed, unknown or expired.
        """
        authorization = headers.get("authorization")
        api_key = headers.get("x-api-key")
        if authorization is not None:
            scheme, _, value = authorization.strip().partition(" ")
            value = value.strip()
            if scheme.lower() != "bearer" or not value:
                raise SandboxError(401, "Authorization: expected 'Bearer <token or API key>'")
            principal = self.principal_for_api_key(value) or self.principal_for_token(value)
            if principal is None:
                raise SandboxError(401, "Authorization: unknown or expired access token")
            return principal
        if api_key is not None:
            principal = self.principal_for_api_key(api_key.strip())
            if principal is None:
                raise SandboxError(401, "X-API-Key: unknown API key")
            return principal
        return None

    def quota_identity(
        self, headers: Mapping[str, str], api_key: str | None, host: str
    ) -> tuple[str, str]:
        """(quota key, plan) of a request: per credential sent, else per client host."""
        authorization = headers.get("authorization")
        credential = None
        if authorization is not None:
            credential = authorization.strip().partition(" ")[2].strip() or authorization
        credential = credential or headers.get("x-api-key") or api_key
        if not credential:
            return f"host:{host}", "standard"
        account = API_KEYS.get(credential)
        if account is not None:
            return f"key:{fingerprint(credential)}", account.plan
        with self._lock:
            grant = self._tokens.get(credential)
        plan = grant.plan if grant is not None else "standard"
        return f"cred:{fingerprint(credential)}", plan

    # -- OAuth authorization code flow --------------------------------------------------------
    @staticmethod
    def validate_authorize(params: Mapping[str, str]) -> AuthorizeRequest:
        """Check an authorize request; AuthorizePageError when it must not redirect."""
        client_id = params.get("client_id", "")
        client = CLIENTS.get(client_id)
        if client is None:
            raise AuthorizePageError("client_id", "unknown application; register it first")
        redirect_uri = params.get("redirect_uri", "")
        if not redirect_uri:
            raise AuthorizePageError("redirect_uri", "missing")
        if not redirect_uri_allowed(redirect_uri, client.redirect_uris):
            raise AuthorizePageError(
                "redirect_uri",
                "not registered for this application; registered: "
                + ", ".join(client.redirect_uris)
                + " (loopback: any port)",
            )
        response_type = params.get("response_type", "code")
        if response_type != "code":
            raise AuthorizePageError("response_type", "must be code")
        try:
            scopes = parse_scopes(params.get("scope"))
        except SandboxError as exc:
            raise AuthorizePageError("scope", str(exc.detail).partition(": ")[2]) from None
        challenge = params.get("code_challenge")
        refused = check_challenge(challenge, params.get("code_challenge_method"))
        if refused is not None:
            raise AuthorizePageError(*refused)
        return AuthorizeRequest(client, redirect_uri, scopes, params.get("state"), challenge)

    def issue_form_token(self, request: AuthorizeRequest) -> str:
        """An anti-forgery token for one consent form, bound to its request (10 minutes)."""
        token = secrets.token_urlsafe(24)
        with self._lock:
            now = self.clock()
            for stale in [k for k, (_, t) in self._forms.items() if now - t > CODE_TTL_SECONDS]:
                del self._forms[stale]
            self._forms[token] = (request, now)
        return token

    def take_form_token(self, token: str, request: AuthorizeRequest) -> bool:
        """Whether ``token`` was issued for this very request and is fresh; single use."""
        with self._lock:
            issued = self._forms.pop(token, None)
        if issued is None:
            return False
        bound, at = issued
        return bound == request and self.clock() - at <= CODE_TTL_SECONDS

    def issue_code(self, request: AuthorizeRequest) -> str:
        """A one-time authorization code for an approved request (valid 10 minutes)."""
        code = secrets.token_urlsafe(24)
        with self._lock:
            self._codes[code] = _Code(
                request.client.client_id,
                request.redirect_uri,
                request.scopes,
                self.clock(),
                request.code_challenge,
            )
        return code

    def exchange_code(self, params: Mapping[str, str]) -> TokenGrant:
        """The token endpoint: check client, secret, code, redirect_uri and PKCE; issue a token.

        Raises SandboxError with the RFC 6749 5.2 codes: ``invalid_client`` (401) for an unknown
        client or a wrong secret; ``unsupported_grant_type``, ``invalid_request`` (a missing
        code or redirect_uri) and ``invalid_grant`` (a code unknown, expired, already used, of
        another client or redirect_uri, or a wrong, missing or unexpected ``code_verifier``).
        A code used twice also revokes the token of its first use.
        """
        grant_type = params.get("grant_type") or "authorization_code"
        if grant_type != "authorization_code":
            detail = f"grant_type: unsupported {grant_type[:40]!r}; allowed: authorization_code"
            raise oauth_error("unsupported_grant_type", detail, param="grant_type")
        client = CLIENTS.get(params.get("client_id", ""))
        secret = params.get("client_secret", "")
        if client is None:
            raise oauth_error("invalid_client", "client_id: unknown application")
        if not hmac.compare_digest(secret.encode(), client.secret.encode()):
            raise oauth_error("invalid_client", "client_secret: wrong secret for this client_id")
        code_value = params.get("code", "")
        if not code_value:
            detail = "code: missing; give the code from the authorize redirect"
            raise oauth_error("invalid_request", detail, param="code")
        redirect_uri = params.get("redirect_uri")
        if redirect_uri is None:  # required: authorize had one (RFC 6749 4.1.3)
            detail = "redirect_uri: missing; give the redirect_uri of the authorize step"
            raise oauth_error("invalid_request", detail, param="redirect_uri")
        with self._lock:
            code = self._take_code(code_value, client.client_id, redirect_uri)
            refused = verify(code.code_challenge, params.get("code_verifier"))
            if refused is not None:  # the code stays usable: the verifier is unguessable
                raise oauth_error("invalid_grant", refused, param="code_verifier")
            code.used = True
        grant = self.mint_token(code.scopes, TOKEN_TTL_SECONDS)
        with self._lock:
            code.token = grant.access_token
        return grant

    def _take_code(self, value: str, client_id: str, redirect_uri: str) -> _Code:
        """The live, unused code ``value`` of this client and redirect_uri (under the lock)."""
        code = self._codes.get(value)
        if code is None or code.client_id != client_id:
            raise oauth_error("invalid_grant", "code: unknown authorization code", param="code")
        if code.used:
            if code.token is not None:
                self._tokens.pop(code.token, None)
            raise oauth_error(
                "invalid_grant", "code: already used; codes are single-use", param="code"
            )
        if self.clock() - code.issued_at > CODE_TTL_SECONDS:
            detail = f"code: expired; codes live {CODE_TTL_SECONDS // 60} minutes"
            raise oauth_error("invalid_grant", detail, param="code")
        if redirect_uri != code.redirect_uri:
            detail = "redirect_uri: differs from the authorize step's (RFC 6749 4.1.3)"
            raise oauth_error("invalid_grant", detail, param="redirect_uri")
        return code
