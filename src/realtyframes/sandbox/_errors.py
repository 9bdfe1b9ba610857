"""Errors raised inside the sandbox; the HTTP layer renders them in the spec's two shapes.

Every 4xx/5xx the sandbox answers comes from one :class:`SandboxError`. Data modules raise
:func:`bad_param` for an invalid parameter so that the 400 names the parameter and what is allowed.
The token endpoint speaks RFC 6749's codes (:func:`oauth_error`) inside the same envelopes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from realtyframes.sandbox._discovery import REALM
from realtyframes.sandbox._spec import ERRORS

#: The spec's codes and messages (Errors part), by HTTP status.
CODES: dict[int, tuple[str, str]] = {status: (c, m) for status, (c, m, _) in ERRORS.items()}
#: Codes the spec's table does not list: HTTP's 405 and the token endpoint's RFC 6749 5.2 codes.
EXTRA_CODES: dict[str, tuple[int, str]] = {
    "method_not_allowed": (405, "Method not allowed"),
    "invalid_request": (400, "Invalid or missing parameters of the token request"),
    "invalid_client": (401, "Client authentication failed"),
    "invalid_grant": (400, "Invalid authorization grant"),
    "unsupported_grant_type": (400, "The grant type is not supported"),
}
#: The token endpoint's codes (RFC 6749 5.2): a Problem body also carries them as ``error``.
OAUTH_CODES = frozenset(EXTRA_CODES) - {"method_not_allowed"}


class SandboxError(Exception):
    """An error answer: ``status`` picks the spec's code and message; ``detail`` adds specifics.

    ``code`` (one of :data:`EXTRA_CODES`) replaces the spec's code and message of the status;
    ``headers`` go on the answer; ``scope`` is the scope a 403 lacks (its ``WWW-Authenticate``).
    """

    def __init__(
        self,
        status: int,
        detail: str | None = None,
        *,
        param: str | None = None,
        code: str | None = None,
        headers: Mapping[str, str] | None = None,
        scope: str | None = None,
    ) -> None:
        if code is not None:
            status, message = EXTRA_CODES[code]
        else:
            code, message = CODES.get(status, CODES[500])
        super().__init__(f"{status} {code}: {detail or message}")
        self.status = status
        self.code = code
        self.message = message
        self.detail = detail
        self.param = param
        self.headers: dict[str, str] = dict(headers or {})
        self.scope = scope


def bad_param(param: str, problem: str, allowed: str | Iterable[str] | None = None) -> SandboxError:
    """A 400 naming the parameter, what is wrong and what is allowed.

    >>> bad_param("Status", "unknown value 'Sold'", ["Active", "Pending"]).detail
    "Status: unknown value 'Sold'; allowed: Active, Pending"
    """
    text = f"{param}: {problem}"
    if allowed is not None:
        text += "; allowed: " + (allowed if isinstance(allowed, str) else ", ".join(allowed))
    return SandboxError(400, text, param=param)


def oauth_error(code: str, detail: str, *, param: str | None = None) -> SandboxError:
    """A token endpoint error with its RFC 6749 5.2 code; ``invalid_client`` is a 401 with
    ``WWW-Authenticate: Basic`` (the client authentication scheme the endpoint takes).

    >>> error = oauth_error("invalid_client", "client_secret: wrong secret")
    >>> error.status, error.code, error.headers["WWW-Authenticate"]
    (401, 'invalid_client', 'Basic realm="realtyframes"')
    """
    headers = {"WWW-Authenticate": f'Basic realm="{REALM}"'} if code == "invalid_client" else {}
    return SandboxError(400, detail, param=param, code=code, headers=headers)
