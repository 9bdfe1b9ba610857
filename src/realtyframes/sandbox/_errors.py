"""Errors raised inside the sandbox; the HTTP layer renders them in the spec's two shapes.

Every 4xx/5xx the sandbox answers comes from one :class:`SandboxError`. Data modules raise
:func:`bad_param` for an invalid parameter so that the 400 names the parameter and what is allowed.
"""

from __future__ import annotations

from collections.abc import Iterable

from realtyframes.sandbox._spec import ERRORS

#: The spec's codes and messages (Errors part), by HTTP status.
CODES: dict[int, tuple[str, str]] = {status: (c, m) for status, (c, m, _) in ERRORS.items()}


class SandboxError(Exception):
    """An error answer: ``status`` picks the spec's code and message; ``detail`` adds specifics."""

    def __init__(self, status: int, detail: str | None = None, *, param: str | None = None) -> None:
        code, message = CODES.get(status, CODES[500])
        super().__init__(f"{status} {code}: {detail or message}")
        self.status = status
        self.code = code
        self.message = message
        self.detail = detail
        self.param = param


def bad_param(param: str, problem: str, allowed: str | Iterable[str] | None = None) -> SandboxError:
    """A 400 naming the parameter, what is wrong and what is allowed.

    >>> bad_param("Status", "unknown value 'Sold'", ["Active", "Pending"]).detail
    "Status: unknown value 'Sold'; allowed: Active, Pending"
    """
    text = f"{param}: {problem}"
    if allowed is not None:
        text += "; allowed: " + (allowed if isinstance(allowed, str) else ", ".join(allowed))
    return SandboxError(400, text, param=param)
