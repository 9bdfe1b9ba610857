"""PKCE (RFC 7636) at the sandbox's authorization server: S256 only.

The authorize step may send ``code_challenge`` with ``code_challenge_method=S256``; the code then
carries the challenge and the token request must send the matching ``code_verifier``. A verifier
for a code issued without a challenge is refused too (the downgrade RFC 9700 2.1.1 warns of).

>>> challenge = s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")  # RFC 7636 appendix B
>>> challenge
'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'
>>> verify(challenge, "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") is None
True
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re

from realtyframes.sandbox._discovery import PKCE_METHODS

__all__ = ["check_challenge", "s256", "verify"]

#: RFC 7636 4.1 / 4.2: 43 to 128 unreserved characters.
_UNRESERVED = re.compile(r"[A-Za-z0-9\-._~]{43,128}")


def s256(verifier: str) -> str:
    """BASE64URL(SHA256(verifier)) without padding (RFC 7636 4.2)."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def check_challenge(challenge: str | None, method: str | None) -> tuple[str, str] | None:
    """(param, problem) when the authorize request's PKCE parameters are refused, else None.

    >>> check_challenge("x" * 43, None)
    ('code_challenge_method', 'missing: plain (the default) is not supported; send S256')
    >>> check_challenge(None, None) is None
    True
    """
    if challenge is None:
        if method is not None:
            return "code_challenge", "missing: code_challenge_method needs a code_challenge"
        return None
    if method is None:
        return "code_challenge_method", "missing: plain (the default) is not supported; send S256"
    if method not in PKCE_METHODS:
        return "code_challenge_method", f"{method[:20]!r} is not supported; send S256"
    if not _UNRESERVED.fullmatch(challenge):
        return "code_challenge", "not 43 to 128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636 4.2)"
    return None


def verify(challenge: str | None, verifier: str | None) -> str | None:
    """Why the token request's ``code_verifier`` is refused for a code's ``challenge``, or None.

    >>> verify(None, "v" * 43)
    'code_verifier: sent, but the authorize step had no code_challenge'
    >>> verify("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", None)
    'code_verifier: missing; the authorize step sent a code_challenge'
    """
    if challenge is None:
        if verifier is not None:
            return "code_verifier: sent, but the authorize step had no code_challenge"
        return None
    if verifier is None:
        return "code_verifier: missing; the authorize step sent a code_challenge"
    if not _UNRESERVED.fullmatch(verifier):
        return "code_verifier: not 43 to 128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636 4.1)"
    if not hmac.compare_digest(s256(verifier).encode(), challenge.encode()):
        return "code_verifier: does not match the code_challenge of the authorize step"
    return None
