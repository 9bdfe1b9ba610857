"""Credentials as ``httpx.Auth`` classes, and the masking that keeps secrets out of text.

Each auth class only sets a header or a query parameter in ``auth_flow`` (no I/O of its own) and
hides its secret from ``repr``.

>>> import httpx
>>> request = httpx.Request("GET", "https://api.example/v1/me")
>>> next(BearerAuth("s3cret").auth_flow(request)).headers["Authorization"]
'Bearer s3cret'
>>> BearerAuth("s3cret")
BearerAuth(token=***)
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Generator, Iterable
from typing import Any

import httpx

from realtyframes.api._constants import (
    DEFAULT_API_KEY_HEADER,
    LEGACY_KEY_PARAM,
    SECRET_QUERY_PARAMS,
)
from realtyframes.errors import QueryError

MASK = "***"

_SECRET_QUERY = re.compile(
    r"(?P<name>(?:[?&;]|\b)(?:" + "|".join(SECRET_QUERY_PARAMS) + r")=)(?P<value>[^&#\s\"'<>]+)",
    re.IGNORECASE,
)
#: The password of a URL's user information (``https://user:password@host``).
_USERINFO = re.compile(r"(?P<name>://[^/\s:@]*:)(?P<value>[^@\s/]+)(?=@)")
_BEARER = re.compile(r"(?P<name>\bBearer\s+)(?P<value>[A-Za-z0-9._~+/=-]+)", re.IGNORECASE)


def mask_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with secret query values, URL passwords, Bearer values and the given secrets
    replaced by ``***``.

    >>> mask_text("GET https://h/api/me?api_key=abc123&x=1")
    'GET https://h/api/me?api_key=***&x=1'
    >>> mask_text("token xyz987 leaked", ["xyz987"])
    'token *** leaked'
    >>> mask_text("ApiClient(base_url='https://me:pw@h/v1')")
    "ApiClient(base_url='https://me:***@h/v1')"
    """
    for secret in secrets:
        if secret:
            text = text.replace(secret, MASK)
    text = _SECRET_QUERY.sub(lambda m: m.group("name") + MASK, text)
    text = _USERINFO.sub(lambda m: m.group("name") + MASK, text)
    return _BEARER.sub(lambda m: m.group("name") + MASK, text)


def mask_value(value: Any, secrets: Iterable[str] = ()) -> Any:
    """A copy of a parsed JSON value with every string passed through :func:`mask_text`."""
    secrets = tuple(secrets)
    if isinstance(value, str):
        return mask_text(value, secrets)
    if isinstance(value, dict):
        return {k: mask_value(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [mask_value(v, secrets) for v in value]
    return value


class SecretMaskingFilter(logging.Filter):
    """A logging filter that masks secret query values (``api_key=...``) and Bearer values.

    It rewrites the record's message in place, so handlers see only the masked text.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: leave it to logging's own error handling
            return True
        masked = mask_text(message)
        if masked != message:
            record.msg = masked
            record.args = None
        return True


#: Loggers of httpx and httpcore (filters do not apply to records of child loggers, so each
#: logger that emits records is listed).
HTTP_LOGGERS = (
    "httpx",
    "httpcore",
    "httpcore.connection",
    "httpcore.http11",
    "httpcore.http2",
    "httpcore.proxy",
    "httpcore.socks",
)


def install_log_filter(names: Iterable[str] = HTTP_LOGGERS) -> None:
    """Install :class:`SecretMaskingFilter` once on each named logger (idempotent)."""
    for name in names:
        logger = logging.getLogger(name)
        if not any(isinstance(f, SecretMaskingFilter) for f in logger.filters):
            logger.addFilter(SecretMaskingFilter())


def fingerprint(secret: str) -> str:
    """A short non-reversible label of a secret (cache keys, reprs): 12 hex characters.

    >>> len(fingerprint("abc"))
    12
    """
    return hashlib.sha256(("realtyframes:" + secret).encode()).hexdigest()[:12]


def _check_secret(name: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise TypeError(f"{name} must be a non-empty string")
    if value != value.strip() or any(c in value for c in "\r\n\x00"):
        raise QueryError(  # never shows the value: it is a secret
            name, "has whitespace at its ends or a line break", "the secret as issued, on one line"
        )
    return value


class _SecretAuth(httpx.Auth):
    """Credentials of one secret, checked when given and never shown."""

    def __init__(self, name: str, secret: str) -> None:
        self._secret = _check_secret(name, secret)

    @property
    def secret(self) -> str:
        """The secret (for masking; never printed)."""
        return self._secret


class BearerAuth(_SecretAuth):
    """``Authorization: Bearer <token>`` (an OAuth access token).

    >>> BearerAuth("t").secret
    't'
    """

    def __init__(self, token: str) -> None:
        super().__init__("token", token)

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Bearer {self._secret}"
        yield request

    def __repr__(self) -> str:
        return f"BearerAuth(token={MASK})"


class ApiKeyAuth(_SecretAuth):
    """A personal API key in a header (``X-API-Key`` by default).

    >>> ApiKeyAuth("k", header="X-Key")
    ApiKeyAuth(header='X-Key', key=***)
    """

    def __init__(self, key: str, header: str = DEFAULT_API_KEY_HEADER) -> None:
        super().__init__("api_key", key)
        if not isinstance(header, str) or not re.fullmatch(r"[A-Za-z0-9!#$%&'*+.^_`|~-]+", header):
            raise ValueError(f"api_key_header must be an HTTP header name, got {header!r}")
        self.header = header

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        if self.header.lower() == "authorization":
            request.headers["Authorization"] = f"Bearer {self._secret}"
        else:
            request.headers[self.header] = self._secret
        yield request

    def __repr__(self) -> str:
        return f"ApiKeyAuth(header={self.header!r}, key={MASK})"


class LegacyKeyAuth(_SecretAuth):
    """The legacy host's ``api_key`` query parameter.

    >>> request = httpx.Request("GET", "https://legacy.example/api/me")
    >>> str(next(LegacyKeyAuth("k1").auth_flow(request)).url)
    'https://legacy.example/api/me?api_key=k1'
    """

    def __init__(self, key: str) -> None:
        super().__init__("api_key", key)

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.url = request.url.copy_set_param(LEGACY_KEY_PARAM, self._secret)
        yield request

    def __repr__(self) -> str:
        return f"LegacyKeyAuth(key={MASK})"


class ShownURL:
    """The request URL for logs and errors, secrets masked; built only when printed."""

    __slots__ = ("_params", "_secrets", "_text", "_url")

    def __init__(self, url: str, params: Any, secrets: tuple[str, ...]) -> None:
        self._url, self._params, self._secrets = url, params, secrets
        self._text: str | None = None

    def __str__(self) -> str:
        if self._text is None:
            try:
                text = str(httpx.URL(self._url, params=self._params or None))
            except Exception:
                text = self._url
            self._text = mask_text(text, self._secrets)
        return self._text
