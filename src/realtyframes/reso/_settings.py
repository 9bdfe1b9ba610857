"""The checked settings of a RESO source: vendor profile, system, page size, credentials.

Everything here is checked before any request (:func:`reso_settings`): an unknown vendor, a
missing ``originating_system`` where the vendor requires it, a page size above the vendor's
cap, missing or half-given credentials are each one :class:`~realtyframes.QueryError`.

>>> reso_settings("http://h/reso/odata", vendor="mlsgrid", token="t", originating_system=None)
Traceback (most recent call last):
...
realtyframes.errors.QueryError: originating_system: required by vendor 'mlsgrid' (every query filters OriginatingSystemName); allowed: the MLS's system name, e.g. originating_system='mfrmls'
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from realtyframes.errors import OAuthError, QueryError
from realtyframes.reso._profiles import VendorProfile, vendor_profile

__all__ = ["HISTORY_MODES", "ResoSettings", "client_credentials_token", "reso_settings"]

#: Where a sync's history comes from: ``auto`` (the server's HistoryTransactional when its
#: ``$metadata`` has it, else synthesised from successive versions) or ``synthesised``.
HISTORY_MODES: tuple[str, ...] = ("auto", "synthesised")


@dataclass(frozen=True)
class ResoSettings:
    """A RESO source's checked settings."""

    base_url: str
    profile: VendorProfile
    originating_system: str | None
    page_size: int
    token: str | None
    client_id: str | None
    client_secret: str | None
    token_url: str | None
    history: str = "auto"

    @property
    def label(self) -> str:
        """What the frames' ``source`` attr says: ``reso:<vendor>``."""
        return f"reso:{self.profile.name}"

    def request_hook(self) -> Callable[[httpx.Request], None]:
        """An httpx request hook: ``Prefer: odata.maxpagesize`` for vendors that page by it."""
        size = self.page_size

        def prefer(request: httpx.Request) -> None:
            if self.profile.paging == "maxpagesize":
                request.headers["Prefer"] = f"odata.maxpagesize={size}"

        return prefer


def _text(name: str, value: Any, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise QueryError(name, f"expected a non-empty string, got {value!r}", what)
    return value


def reso_settings(
    base_url: Any,
    *,
    vendor: Any = "generic",
    token: Any = None,
    client_id: Any = None,
    client_secret: Any = None,
    token_url: Any = None,
    originating_system: Any = None,
    page_size: Any = None,
    history: Any = "auto",
) -> ResoSettings:
    """Check a RESO source's arguments (no request)."""
    profile = vendor_profile(vendor)
    url = _text("base_url", base_url, "the service root, e.g. https://api.mlsgrid.com/v2")
    if url is None or not url.startswith(("http://", "https://")):
        raise QueryError("base_url", f"not an http(s) URL: {base_url!r}", "the service root URL")
    system = _text("originating_system", originating_system, "the MLS's system name")
    if profile.requires_system and system is None:
        raise QueryError(
            "originating_system",
            f"required by vendor {profile.name!r} (every query filters OriginatingSystemName)",
            "the MLS's system name, e.g. originating_system='mfrmls'",
        )
    size = profile.page if page_size is None else page_size
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        raise QueryError("page_size", f"expected an integer >= 1, got {page_size!r}", "1 or more")
    cap = profile.page_cap
    if cap is not None and size > cap:
        raise QueryError(
            "page_size",
            f"{size} is above vendor {profile.name!r}'s cap ($top at most {cap})",
            f"1 to {cap}",
        )
    token = _text("token", token, "an access token")
    cid = _text("client_id", client_id, "an OAuth client id")
    secret = _text("client_secret", client_secret, "an OAuth client secret")
    turl = _text("token_url", token_url, "the vendor's OAuth token endpoint")
    if token is None and (cid is None or secret is None or turl is None):
        given = [n for n, v in (("client_id", cid), ("client_secret", secret)) if v]
        raise QueryError(
            "token" if not given else "client_secret" if cid else "client_id",
            "credentials missing: a RESO server needs an access token",
            "token=..., or client_id=, client_secret= and token_url= (client credentials)",
        )
    if history not in HISTORY_MODES:
        raise QueryError("history", f"unknown value {history!r}", HISTORY_MODES)
    return ResoSettings(url.rstrip("/"), profile, system, size, token, cid, secret, turl, history)


def client_credentials_token(settings: ResoSettings, *, timeout: float = 30.0) -> str:
    """An access token from the vendor's token endpoint (OAuth 2 client credentials grant)."""
    assert settings.token_url is not None
    data = {
        "grant_type": "client_credentials",
        "client_id": settings.client_id or "",
        "client_secret": settings.client_secret or "",
        "scope": "api",
    }
    try:
        answer = httpx.post(settings.token_url, data=data, timeout=timeout)
    except httpx.HTTPError as exc:
        failed = f"token request to {settings.token_url} failed: {type(exc).__name__}"
        raise OAuthError(failed) from None
    body: Any = None
    with contextlib.suppress(ValueError):
        body = answer.json()
    if answer.status_code != 200 or not isinstance(body, dict) or "access_token" not in body:
        problem = body.get("error") if isinstance(body, dict) else None
        raise OAuthError(
            f"token request to {settings.token_url} refused: HTTP {answer.status_code}"
            + (f" ({problem})" if problem else "")
        )
    return str(body["access_token"])
