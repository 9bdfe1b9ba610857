"""OAuth 2.0 authorization-code flow: authorization URL, code exchange, a loopback ``login()``.

Every flow uses PKCE (RFC 7636, S256): :func:`authorization_url` makes a fresh ``code_verifier``
(kept on its result, never in its repr) and sends its challenge; :func:`exchange_code` sends the
verifier, so a stolen code is useless without it.

>>> request = authorization_url("my-app", "http://127.0.0.1:8765/callback", ["listings"],
...                             auth_url="https://auth.example")
>>> url, state = request  # unpacks as before
>>> url.startswith("https://auth.example/authorize?client_id=my-app&")
True
>>> "code_challenge_method=S256" in url and request.code_verifier not in repr(request)
True

Typical notebook use::

    token = rf.oauth.login(CLIENT_ID, CLIENT_SECRET, ["listings", "contacts"],
                           auth_url=AUTH_URL, token_path="~/.config/realtyframes/token.json")
    client = rf.Client(base_url=BASE_URL, token=token)

The token exchange is never retried once sent (a code is single-use). Secrets (the client secret,
the code, the PKCE verifier, the access token) never appear in reprs, logs or exception text; a token file is
created with mode 0600 and :func:`load_token` refuses one that others can read.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import os
import re
import secrets
import webbrowser
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx

from realtyframes._environment import SETTING_VARIABLES
from realtyframes._files import PRIVATE_MODE, atomic_write_text
from realtyframes.api import (
    JSON,
    SERVICE_API_VERSION,
    USER_AGENT,
    error_from_response,
    mask_text,
)
from realtyframes.errors import (
    BadResponseError,
    ConnectError,
    OAuthError,
    QueryError,
    RequestTimeoutError,
    TransportError,
)
from realtyframes.oauth._listener import CALLBACK_PATH as CALLBACK_PATH
from realtyframes.oauth._listener import _callback_server, _listen_target, wait_for_callback

__all__ = [
    "SCOPES",
    "AuthorizationRequest",
    "Token",
    "authorization_url",
    "exchange_code",
    "load_token",
    "login",
    "save_token",
]

logger = logging.getLogger("realtyframes.oauth")

#: The spec's OAuth scopes.
SCOPES: tuple[str, ...] = ("listings", "contacts", "analytics")
AUTHORIZE_PATH = "/authorize"
TOKEN_PATH = "/api/oauth/token"
DEFAULT_LOGIN_TIMEOUT = 300.0
#: RFC 7636 4.1: a code_verifier is 43 to 128 unreserved characters.
_VERIFIER = re.compile(r"[A-Za-z0-9\-._~]{43,128}")


class AuthorizationRequest(tuple[str, str]):
    """What :func:`authorization_url` returns: unpacks as ``(url, state)``; ``code_verifier`` is
    the PKCE secret to give :func:`exchange_code` (left out of the repr).

    >>> request = AuthorizationRequest("https://a.example/authorize?x=1", "st", "v" * 43)
    >>> request
    AuthorizationRequest(url='https://a.example/authorize?x=1', state='st')
    >>> request.state, len(request.code_verifier)
    ('st', 43)
    """

    code_verifier: str

    def __new__(cls, url: str, state: str, code_verifier: str) -> AuthorizationRequest:
        self = super().__new__(cls, (url, state))
        self.code_verifier = code_verifier
        return self

    @property
    def url(self) -> str:
        """The consent page's URL."""
        return self[0]

    @property
    def state(self) -> str:
        """The ``state`` to expect back on the callback."""
        return self[1]

    def __repr__(self) -> str:
        return f"AuthorizationRequest(url={self.url!r}, state={self.state!r})"

    def __reduce__(self) -> Any:
        raise TypeError("an AuthorizationRequest holds a secret and is not pickled")


@dataclass(frozen=True)
class Token:
    """An OAuth access token: use it as ``rf.Client(base_url=..., token=token)``.

    The access token itself is hidden from ``repr``/``str``.

    >>> Token("secret-value", scopes=("listings",))
    Token(token_type='Bearer', scopes=('listings',), expires_at=None)
    """

    access_token: str = field(repr=False)
    token_type: str = "Bearer"
    scopes: tuple[str, ...] = ()
    expires_at: datetime | None = None

    @property
    def expired(self) -> bool:
        """True once ``expires_at`` has passed (False when the expiry is unknown)."""
        return self.expires_at is not None and datetime.now(UTC) >= self.expires_at

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready form (contains the secret: written only by :func:`save_token`)."""
        return {
            "access_token": self.access_token,
            "token_type": self.token_type,
            "scopes": list(self.scopes),
            "expires_at": self.expires_at.isoformat() if self.expires_at else None,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Token:
        """Build a Token from :meth:`to_dict` output."""
        access_token = data.get("access_token")
        if not isinstance(access_token, str) or not access_token:
            raise ValueError("token data has no access_token")
        expires = data.get("expires_at")
        expires_at = datetime.fromisoformat(expires) if isinstance(expires, str) else None
        scopes = data.get("scopes") or ()
        return cls(
            access_token=access_token,
            token_type=str(data.get("token_type") or "Bearer"),
            scopes=tuple(str(s) for s in scopes),
            expires_at=expires_at,
        )


def _resolve_auth_url(auth_url: str | None) -> str:
    url = auth_url or os.environ.get(SETTING_VARIABLES["auth_url"]) or ""
    if not url.strip():
        raise QueryError(
            "auth_url", "not given and REALTYFRAMES_AUTH_URL is not set", "the OAuth host URL"
        )
    parsed = urlsplit(url.strip())
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise QueryError("auth_url", f"{url!r} is not an http(s) URL", "the OAuth host URL")
    return url.strip().rstrip("/")


def _scopes(scopes: Iterable[str] | str) -> tuple[str, ...]:
    items = scopes.replace(" ", ",").split(",") if isinstance(scopes, str) else list(scopes)
    names = []
    for item in items:
        if not isinstance(item, str):
            raise QueryError("scopes", f"items must be strings, got {item!r}", SCOPES)
        if item.strip():
            if item.strip() not in SCOPES:
                raise QueryError("scopes", f"unknown scope {item.strip()!r}", SCOPES)
            names.append(item.strip())
    if not names:
        raise QueryError("scopes", "at least one scope is needed", SCOPES)
    return tuple(dict.fromkeys(names))


def _nonempty(name: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise QueryError(name, "expected a non-empty string", "a string")
    return value


def _verifier(value: object) -> str:
    """A checked PKCE code_verifier (the value itself is never echoed in the error)."""
    if not isinstance(value, str) or not _VERIFIER.fullmatch(value):
        raise QueryError(
            "code_verifier",
            "not 43 to 128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636 4.1)",
            "the code_verifier of authorization_url's result",
        )
    return value


def _s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def authorization_url(
    client_id: str,
    redirect_uri: str,
    scopes: Iterable[str] | str,
    state: str | None = None,
    auth_url: str | None = None,
    *,
    code_verifier: str | None = None,
) -> AuthorizationRequest:
    """The URL of the consent page and the ``state`` to expect back (fresh and unguessable).

    The URL carries a PKCE S256 ``code_challenge``; its ``code_verifier`` (fresh from
    ``secrets``, 86 characters, unless one is given) is on the result: pass it to
    :func:`exchange_code`. The result unpacks as ``(url, state)``. ``auth_url`` defaults to
    ``REALTYFRAMES_AUTH_URL``.

    >>> request = authorization_url("app", "http://127.0.0.1:1/cb", "listings", auth_url="https://a.example")
    >>> url, state = request
    >>> len(state) >= 32 and len(request.code_verifier) == 86
    True
    """
    base = _resolve_auth_url(auth_url)
    _nonempty("client_id", client_id)
    _nonempty("redirect_uri", redirect_uri)
    state = secrets.token_urlsafe(32) if state is None else _nonempty("state", state)
    verifier = secrets.token_urlsafe(64) if code_verifier is None else _verifier(code_verifier)
    query = urlencode(
        {
            "client_id": client_id,
            "redirect_uri": redirect_uri,
            "scope": ",".join(_scopes(scopes)),
            "state": state,
            "code_challenge": _s256(verifier),
            "code_challenge_method": "S256",
        }
    )
    return AuthorizationRequest(f"{base}{AUTHORIZE_PATH}?{query}", state, verifier)


def _token_from_response(data: object, requested: tuple[str, ...] = ()) -> Token:
    if not isinstance(data, dict) or not isinstance(data.get("access_token"), str):
        raise BadResponseError("the token response has no access_token")
    scope = data.get("scope")
    scopes = (
        tuple(s for s in scope.replace(" ", ",").split(",") if s)
        if isinstance(scope, str)
        else tuple(s for s in scope if isinstance(s, str))
        if isinstance(scope, list)
        else requested
    )
    expires_in = data.get("expires_in")
    expires_at = None
    if isinstance(expires_in, int | float) and not isinstance(expires_in, bool) and expires_in >= 0:
        expires_at = datetime.now(UTC) + timedelta(seconds=float(expires_in))
    token_type = data.get("token_type")
    return Token(
        access_token=data["access_token"],
        token_type=token_type if isinstance(token_type, str) and token_type else "Bearer",
        scopes=scopes,
        expires_at=expires_at,
    )


def exchange_code(
    code: str,
    *,
    client_id: str,
    client_secret: str,
    redirect_uri: str,
    state: str,
    expected_state: str,
    auth_url: str | None = None,
    timeout: float = 30.0,
    transport: httpx.BaseTransport | None = None,
    code_verifier: str | None = None,
) -> Token:
    """Exchange an authorization code for a :class:`Token` (form-encoded POST, never retried).

    ``state`` (from the callback) is compared with ``expected_state`` (from
    :func:`authorization_url`) in constant time first: a mismatch raises :class:`OAuthError`
    and nothing is sent. ``code_verifier``: the PKCE secret of :func:`authorization_url`'s
    result (required by a server that got its challenge). Error answers raise the typed
    :class:`~realtyframes.errors.ApiError` (a wrong client secret: ``code`` ``invalid_client``;
    a wrong or missing verifier: ``invalid_grant``).

    >>> exchange_code("c", client_id="a", client_secret="s", redirect_uri="http://127.0.0.1:1/cb",
    ...               state="x", expected_state="y", auth_url="https://a.example")
    Traceback (most recent call last):
    ...
    realtyframes.errors.OAuthError: state mismatch: the callback's state is not the one sent (possible forgery); nothing was exchanged
    """
    if not isinstance(state, str) or not isinstance(expected_state, str) or not expected_state:
        raise OAuthError("state missing: both state and expected_state are required")
    if not hmac.compare_digest(state.encode(), expected_state.encode()):
        raise OAuthError(
            "state mismatch: the callback's state is not the one sent (possible forgery); "
            "nothing was exchanged"
        )
    base = _resolve_auth_url(auth_url)
    _nonempty("code", code)
    _nonempty("client_id", client_id)
    _nonempty("client_secret", client_secret)
    _nonempty("redirect_uri", redirect_uri)
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "client_id": client_id,
        "client_secret": client_secret,
        "redirect_uri": redirect_uri,
    }
    if code_verifier is not None:
        form["code_verifier"] = _verifier(code_verifier)
    url = f"{base}{TOKEN_PATH}"
    hidden = (client_secret, code, code_verifier or "")
    headers = {"Accept": JSON, "Service-Api-Version": SERVICE_API_VERSION, "User-Agent": USER_AGENT}
    try:
        with httpx.Client(transport=transport, timeout=timeout, follow_redirects=False) as http:
            response = http.post(url, data=form, headers=headers)
    except httpx.TimeoutException as exc:
        raise RequestTimeoutError(
            mask_text(f"token exchange timed out ({type(exc).__name__})", hidden),
            method="POST",
            url=url,
        ) from None
    except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
        raise ConnectError(
            mask_text(f"token exchange failed ({type(exc).__name__}: {exc})", hidden),
            method="POST",
            url=url,
        ) from None
    except httpx.HTTPError as exc:
        raise TransportError(
            mask_text(f"token exchange failed ({type(exc).__name__}: {exc})", hidden),
            method="POST",
            url=url,
        ) from None
    if response.status_code >= 300:
        raise error_from_response(response, method="POST", url=url, secrets=hidden)
    try:
        data = response.json()
    except ValueError:
        raise BadResponseError("the token response is not JSON", method="POST", url=url) from None
    token = _token_from_response(data)
    logger.info("OAuth code exchanged for a token with scopes %s", ",".join(token.scopes) or "-")
    return token


def login(
    client_id: str,
    client_secret: str,
    scopes: Iterable[str] | str,
    auth_url: str | None = None,
    open_browser: bool | Callable[[str], Any] = True,
    token_path: str | os.PathLike[str] | None = None,
    timeout: float = DEFAULT_LOGIN_TIMEOUT,
    *,
    redirect_uri: str | None = None,
    show_url: Callable[[str], Any] | None = None,
    transport: httpx.BaseTransport | None = None,
) -> Token:
    """Run the whole flow: a one-shot loopback listener, the consent page, the exchange (PKCE
    S256: a fresh verifier for each call).

    The redirect URI is ``http://127.0.0.1:<ephemeral port>/callback`` unless ``redirect_uri``
    names another one registered for the application; the listener then takes its host, port
    and path. Only loopback ``http`` URIs (127.0.0.0/8, ``[::1]``, ``localhost``) are accepted,
    else :class:`QueryError` naming ``redirect_uri``; without a port, an ephemeral port is
    used (loopback redirects may use any port, RFC 8252 7.3). ``open_browser``: True
    opens the system browser, False does not, a callable is given the URL (tests, custom
    launchers). When no browser was opened, the URL is given to ``show_url`` (a command line
    prints it), else logged as a WARNING on ``realtyframes.oauth`` (shown on stderr in a
    terminal or a notebook when logging is not configured). With ``token_path`` the token is
    saved with mode 0600. Raises :class:`OAuthError` when consent is refused or no callback
    arrives within ``timeout`` seconds.

    >>> token = login("rf-demo-app", "...", ["listings"], auth_url=sandbox_url)  # doctest: +SKIP
    >>> token = login("rf-demo-app", "...", "listings", auth_url=sandbox_url,
    ...               redirect_uri="http://127.0.0.1:8765/callback")  # doctest: +SKIP
    """
    requested = _scopes(scopes)
    _nonempty("client_id", client_id)
    _nonempty("client_secret", client_secret)
    if not timeout > 0:
        raise QueryError("timeout", f"{timeout!r} is not positive", "seconds > 0")
    target = _listen_target(redirect_uri)
    _resolve_auth_url(auth_url)  # a bad auth_url fails before the port is taken
    server = _callback_server(target)
    try:
        redirect_uri = target.uri(server.server_address[1])
        request = authorization_url(client_id, redirect_uri, requested, auth_url=auth_url)
    except BaseException:
        server.server_close()
        raise
    result = wait_for_callback(
        server, timeout, lambda: _present(request.url, open_browser, show_url)
    )
    if "error" in result:
        raise OAuthError(f"authorization refused: {result['error'][:100]}")
    if not result.get("code"):
        raise OAuthError("the callback carried no authorization code")
    token = exchange_code(
        result["code"],
        client_id=client_id,
        client_secret=client_secret,
        redirect_uri=redirect_uri,
        state=result.get("state", ""),
        expected_state=request.state,
        auth_url=auth_url,
        transport=transport,
        code_verifier=request.code_verifier,
    )
    if token_path is not None:
        save_token(token, token_path)
    return token


def _present(
    url: str, open_browser: bool | Callable[[str], Any], show_url: Callable[[str], Any] | None
) -> None:
    """Get the consent page in front of the user: a browser, else ``show_url``, else a log line."""
    if callable(open_browser):
        open_browser(url)
    elif open_browser and _open_browser(url):
        logger.info("opened the browser for the consent page")
    elif show_url is not None:
        show_url(url)
    else:
        logger.warning("Open this address in a browser to authorize realtyframes:\n%s", url)


def _open_browser(url: str) -> bool:
    try:
        return bool(webbrowser.open(url))
    except webbrowser.Error:
        return False


# -- token files ----------------------------------------------------------------------------------
def save_token(token: Token, path: str | os.PathLike[str]) -> Path:
    """Write ``token`` as JSON to ``path`` with mode 0600 (atomically); returns the path.

    >>> save_token(Token("t"), "/tmp/rf-token.json")  # doctest: +SKIP
    """
    target = Path(path).expanduser()
    target.parent.mkdir(parents=True, exist_ok=True)
    return atomic_write_text(target, json.dumps(token.to_dict()), mode=PRIVATE_MODE)


def load_token(path: str | os.PathLike[str]) -> Token:
    """Read a token saved by :func:`save_token`; refuses a file the group or others can read.

    >>> client = rf.Client(base_url=BASE_URL, token=load_token("~/.config/rf/token.json"))  # doctest: +SKIP
    """
    target = Path(path).expanduser()
    mode = target.stat().st_mode
    if os.name != "nt" and mode & 0o077:
        raise OAuthError(
            f"{target} is readable or writable by others (mode {oct(mode & 0o777)}); "
            f"run: chmod 600 {target}"
        )
    try:
        return Token.from_dict(json.loads(target.read_text(encoding="utf-8")))
    except (ValueError, TypeError, AttributeError) as exc:
        raise OAuthError(f"{target} is not a token file ({type(exc).__name__})") from None
