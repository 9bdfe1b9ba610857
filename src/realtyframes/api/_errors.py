"""Map a failed request to its typed error, in one function: :func:`error_for` (an error answer,
through :func:`error_from_response`; a transport failure; a bad answer whose retries are spent).

Accepted bodies: the spec's ApiError (``{"error": {"code", "message", "status"}}``), Problem
(``application/problem+json``: ``type``, ``title``, ``status``, ``detail``, ``code``), the legacy
host's ``{"error": "Unauthorized", "message": ...}``, other JSON with a ``message``/``detail``, and
non-JSON bodies (an HTML 502 from a proxy: the status plus a short excerpt).

>>> import httpx
>>> exc = error_from_response(httpx.Response(404, json={"error": {
...     "code": "not_found", "message": "Resource not found", "status": 404}}))
>>> type(exc).__name__, exc.code, exc.message
('NotFoundError', 'not_found', 'Resource not found')
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable
from typing import Any

import httpx

from realtyframes.api._auth import mask_text, mask_value
from realtyframes.api._constants import EXCERPT_CHARS, REQUEST_ID_HEADERS
from realtyframes.api._retry import parse_retry_after
from realtyframes.api._transports import DeadlinePassed, TransientAnswer
from realtyframes.errors import (
    ApiError,
    BadRequestError,
    BadResponseError,
    ConnectError,
    InsufficientScopeError,
    InvalidTokenError,
    NotFoundError,
    RateLimitError,
    RealtyFramesError,
    RequestTimeoutError,
    ResponseMismatchError,
    ServerError,
    TransportError,
)

#: The spec's codes -> exception class.
CODE_CLASSES: dict[str, type[ApiError]] = {
    "bad_request": BadRequestError,
    "invalid_token": InvalidTokenError,
    "insufficient_scope": InsufficientScopeError,
    "not_found": NotFoundError,
    "rate_limit_exceeded": RateLimitError,
    "server_error": ServerError,
}
#: Status -> (code, message) of the spec, used when the body does not say.
STATUS_CODES: dict[int, tuple[str, str]] = {
    400: ("bad_request", "Invalid or missing parameters"),
    401: ("invalid_token", "Invalid or expired access token"),
    403: ("insufficient_scope", "Token is missing the required OAuth scope"),
    404: ("not_found", "Resource not found"),
    429: ("rate_limit_exceeded", "Rate limit exceeded"),
    500: ("server_error", "Internal server error"),
}
#: The legacy host's error type names -> spec code.
LEGACY_CODES: dict[str, str] = {
    "unauthorized": "invalid_token",
    "notfounderror": "not_found",
    "servererror": "server_error",
    "badrequest": "bad_request",
    "badrequesterror": "bad_request",
    "forbidden": "insufficient_scope",
    "toomanyrequests": "rate_limit_exceeded",
}

_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_TAGS = re.compile(r"<(script|style)\b.*?</\1\s*>|<[^>]+>", re.IGNORECASE | re.DOTALL)
_SPACES = re.compile(r"\s+")
_CODE_SHAPE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


def _class_for(code: str, status: int) -> type[ApiError]:
    if code in CODE_CLASSES:
        return CODE_CLASSES[code]
    if status >= 500:
        return ServerError
    default = STATUS_CODES.get(status)
    return CODE_CLASSES[default[0]] if default else ApiError


def _excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """A short readable excerpt of a (possibly HTML) body."""
    title = _TITLE.search(text)
    stripped = _SPACES.sub(" ", html.unescape(_TAGS.sub(" ", text))).strip()
    if title:
        title_text = _SPACES.sub(" ", html.unescape(title.group(1))).strip()
        if title_text and not stripped.startswith(title_text):
            stripped = f"{title_text}: {stripped}"
    return stripped if len(stripped) <= limit else stripped[: limit - 3].rstrip() + "..."


def _str(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _code_from(value: Any) -> str | None:
    text = _str(value)
    if text is None:
        return None
    text = text.lower().replace(" ", "_").replace("-", "_")
    return text if _CODE_SHAPE.match(text) else None


def _parse_body(response: httpx.Response) -> tuple[Any, bool]:
    """(parsed JSON or text excerpt, whether it was JSON)."""
    content = response.content
    if not content.strip():
        return None, False
    try:
        return json.loads(content), True
    except (ValueError, UnicodeDecodeError):
        return _excerpt(content[:65536].decode("utf-8", errors="replace")), False


def _fields(body: Any, status: int) -> tuple[str | None, str | None, str | None]:
    """(code, message, request id) found in a parsed JSON body of any known shape."""
    if not isinstance(body, dict):
        return None, _str(body) if isinstance(body, str) else None, None
    request_id = _str(body.get("request_id")) or _str(body.get("requestId"))
    error = body.get("error")
    if isinstance(error, dict):  # ApiError shape
        code = _code_from(error.get("code"))
        message = _str(error.get("message")) or _str(error.get("detail"))
        request_id = request_id or _str(error.get("request_id")) or _str(error.get("requestId"))
        return code, message, request_id
    if "type" in body or "title" in body or "detail" in body:  # Problem shape
        code = _code_from(body.get("code"))
        if code is None:
            type_uri = _str(body.get("type"))
            if type_uri and "#" in type_uri:
                code = _code_from(type_uri.rsplit("#", 1)[1])
        if code is None:
            code = _code_from(body.get("title"))
        message = _str(body.get("detail")) or _str(body.get("title")) or _str(body.get("message"))
        return code, message, request_id
    if isinstance(error, str):  # legacy shape: {"error": "Unauthorized", "message": "..."}
        legacy = LEGACY_CODES.get(error.strip().lower().replace("_", "").replace(" ", ""))
        code = legacy or _code_from(error)
        return code, _str(body.get("message")) or _str(error), request_id
    return (
        _code_from(body.get("code")),
        _str(body.get("message")) or _str(body.get("detail")),
        request_id,
    )


#: What a 401 means for each way of signing in (the server's own words follow).
_401_MEANING = {
    "none": "no credentials configured: set REALTYFRAMES_API_KEY or REALTYFRAMES_TOKEN (or pass "
    "api_key= / token=, or add them to the config file)",
    "api_key": "API key rejected",
}


def error_from_response(
    response: httpx.Response,
    *,
    method: str | None = None,
    url: str | None = None,
    secrets: Iterable[str] = (),
    auth_kind: str | None = None,
) -> ApiError:
    """The exception for an error ``response`` (status >= 400), whatever its body.

    The class follows the body's code when it is one of the spec's, else the status (any other
    5xx is a :class:`ServerError`, an unknown 4xx a plain :class:`ApiError`). ``secrets`` are masked
    out of the message and body; ``method``/``url`` name the request in the text. With
    ``auth_kind`` (``"none"``, ``"api_key"``, ``"token"``) a 401 says what to do first.

    >>> exc = error_from_response(httpx.Response(502, text="<html><title>502 Bad Gateway</title></html>"))
    >>> type(exc).__name__, exc.code, exc.message
    ('ServerError', 'server_error', 'non-JSON 502 answer: 502 Bad Gateway')
    """
    secrets = tuple(s for s in secrets if s)
    status = response.status_code
    body, is_json = _parse_body(response)
    default_code, default_message = STATUS_CODES.get(
        status, ("server_error", "Server error") if status >= 500 else (f"http_{status}", "")
    )
    if is_json:
        code, message, request_id = _fields(body, status)
        if not message:
            message = default_message or response.reason_phrase or f"HTTP {status}"
    else:
        code, request_id = None, None
        excerpt = body or response.reason_phrase or "empty body"
        message = f"non-JSON {status} answer: {excerpt}"
        body = excerpt
    code = code or default_code
    for name in REQUEST_ID_HEADERS:
        if request_id:
            break
        request_id = _str(response.headers.get(name))
    retry_after = parse_retry_after(response.headers.get("retry-after"))
    message = mask_text(message, secrets)
    if status == 401 and (meaning := _401_MEANING.get(auth_kind or "")) is not None:
        message = f"{meaning} (the server said: {message})"
    return _class_for(code, status)(
        message,
        status=status,
        code=code,
        request_id=mask_text(request_id, secrets) if request_id else None,
        body=mask_value(body, secrets),
        retry_after=retry_after,
        method=method,
        url=mask_text(url, secrets) if url else None,
    )


def error_for(
    failure: httpx.Response | BaseException,
    *,
    url: str,
    secrets: Iterable[str] = (),
    auth_kind: str = "none",
) -> RealtyFramesError:
    """The typed error of a GET of ``url`` (secrets already masked) that failed for good: an
    ``ApiError`` subclass for an error answer, a ``TransportError`` branch for a transport failure,
    a ``BadResponseError`` (or ``ResponseMismatchError``) for a bad 2xx answer. Read it by type
    and attributes (``status``, ``code``), never by its message.

    >>> error = error_for(httpx.Response(414), url="/v1/listings/changes")
    >>> type(error).__name__, error.status, error.code
    ('ApiError', 414, 'http_414')
    >>> type(error_for(httpx.ReadTimeout("slow"), url="/v1/me")).__name__
    'RequestTimeoutError'
    """
    secrets = tuple(s for s in secrets if s)
    if isinstance(failure, httpx.Response):
        return error_from_response(
            failure, method="GET", url=url, secrets=secrets, auth_kind=auth_kind
        )
    if isinstance(failure, DeadlinePassed):
        text = "the deadline of the whole call passed before this request was sent"
        return RequestTimeoutError(text, method="GET", url=url)
    if isinstance(failure, TransientAnswer):
        cause = failure.cause
        if isinstance(cause, ResponseMismatchError):
            return cause.at("GET", url, mask_text(cause.message, secrets))
        text = f"{failure.status} answer with a broken body: {cause}"
        return BadResponseError(mask_text(text, secrets), method="GET", url=url)
    return _transport_error(failure, url, secrets)


def _transport_error(failure: BaseException, url: str, secrets: tuple[str, ...]) -> TransportError:
    name = type(failure).__name__
    text = mask_text(f"{name}: {failure}" if str(failure) else name, secrets)
    if isinstance(failure, httpx.TimeoutException):
        return RequestTimeoutError(f"timed out ({text})", method="GET", url=url)
    if isinstance(failure, httpx.NetworkError | httpx.RemoteProtocolError):
        return ConnectError(f"connection failed ({text})", method="GET", url=url)
    if isinstance(failure, httpx.DecodingError):
        return BadResponseError(f"undecodable body ({text})", method="GET", url=url)
    return TransportError(text, method="GET", url=url)
