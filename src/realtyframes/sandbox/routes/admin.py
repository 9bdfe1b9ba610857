"""The sandbox's own admin routes (``/_sandbox/*``): the clock, minted tokens, fault counters.

Not part of the spec and not in ``/openapi.json``; no fault touches them. They take JSON only
(``Content-Type: application/json`` on every POST, so a browser cannot send one cross-site without
a preflight), refuse an ``Origin`` other than the server's own, and in protected mode every POST
needs the admin secret in ``X-Sandbox-Admin`` (``SandboxOptions.admin_secret``, by default
``DEMO.admin_secret``; ``realtyframes sandbox --protected`` makes a random one per run).

>>> [e.path for e in ENDPOINTS]
['/_sandbox/clock', '/_sandbox/tokens', '/_sandbox/faults']
"""

from __future__ import annotations

import hmac
import json
import math
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from realtyframes.sandbox._admin import iso
from realtyframes.sandbox._auth import parse_scopes
from realtyframes.sandbox._errors import SandboxError, bad_param
from realtyframes.sandbox._spec import PLANS, SCOPES
from realtyframes.sandbox.routes._declare import Endpoint, admin_of

__all__ = ["ADMIN_HEADER", "ENDPOINTS", "guard"]


#: The header that carries the admin secret in protected mode.
ADMIN_HEADER = "X-Sandbox-Admin"


def guard(request: Request) -> None:
    """Refuse an admin request from another origin, a POST that is not JSON, and in protected
    mode a POST without the admin secret."""
    origin = request.headers.get("origin")
    own = f"{request.url.scheme}://{request.url.netloc}"
    if origin is not None and origin.rstrip("/") != own:
        raise SandboxError(403, f"admin routes refuse cross-origin requests (Origin {origin})")
    if request.method == "GET":
        return
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise bad_param("Content-Type", f"admin routes take JSON only, got {kind or 'none'!r}",
                        "application/json")  # fmt: skip
    options = admin_of(request).options
    given = request.headers.get(ADMIN_HEADER, "")
    if options.protected and not hmac.compare_digest(given.encode(), options.admin_secret.encode()):
        raise SandboxError(401, f"admin routes need the admin secret in the {ADMIN_HEADER} header")


async def _json_body(request: Request) -> dict[str, Any]:
    body = await request.body()
    if not body:
        return {}
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise bad_param("body", "not valid JSON") from None
    if not isinstance(data, dict):
        raise bad_param("body", "must be a JSON object")
    return data


def _number(data: Mapping[str, Any], name: str) -> float:
    value = data[name]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise bad_param(name, f"{value!r} is not a number")
    return float(value)


async def clock(request: Request) -> Response:
    """GET /_sandbox/clock; POST it {"advance_days": x} | {"advance_seconds": x} | {"now": iso}."""
    guard(request)
    admin = admin_of(request)
    if request.method == "GET":
        return JSONResponse({"now": iso(admin.now)})
    data = await _json_body(request)
    allowed = ("advance_days", "advance_seconds", "now")
    given = [k for k in data if k in allowed]
    unknown = [k for k in data if k not in allowed]
    if unknown:
        raise bad_param(unknown[0], "not a clock field", allowed)
    if len(given) != 1:
        raise bad_param("body", "give exactly one clock field", allowed)
    previous = admin.now
    name = given[0]
    if name == "now":
        if not isinstance(data["now"], str):
            raise bad_param("now", "must be an ISO 8601 string")
        try:
            target = datetime.fromisoformat(data["now"])
        except ValueError:
            raise bad_param("now", f"{data['now']!r} is not an ISO 8601 timestamp") from None
    else:
        amount = _number(data, name)
        seconds = amount * 86_400 if name == "advance_days" else amount
        if seconds < 0:
            raise bad_param(name, "must be >= 0; the clock only moves forward")
        target = previous + timedelta(seconds=seconds)
    admin.set_now(target)
    return JSONResponse({"now": iso(admin.now), "previous": iso(previous)})


async def mint_token(request: Request) -> Response:
    """POST /_sandbox/tokens {"scopes": [...], "ttl_seconds": 3600, "plan": "standard"}."""
    guard(request)
    data = await _json_body(request)
    allowed = ("scopes", "ttl_seconds", "plan")
    for name in data:
        if name not in allowed:
            raise bad_param(name, "not a token field", allowed)
    scopes_value = data.get("scopes", list(SCOPES))
    if isinstance(scopes_value, list) and all(isinstance(s, str) for s in scopes_value):
        scopes = parse_scopes(",".join(scopes_value), "scopes") if scopes_value else ()
    elif isinstance(scopes_value, str):
        scopes = parse_scopes(scopes_value, "scopes")
    else:
        raise bad_param("scopes", "must be a list of scope names", SCOPES)
    ttl = _number(data, "ttl_seconds") if "ttl_seconds" in data else 3600.0
    if ttl <= 0:
        raise bad_param("ttl_seconds", "must be > 0")
    plan = data.get("plan", PLANS[0])
    if plan not in PLANS:
        raise bad_param("plan", f"unknown plan {plan!r}", list(PLANS))
    grant = admin_of(request).auth.mint_token(scopes, ttl, plan=plan)
    return JSONResponse({**grant.response(), "plan": plan}, headers={"Cache-Control": "no-store"})


async def fault_counts(request: Request) -> Response:
    """GET /_sandbox/faults: what the fault layer injected so far."""
    guard(request)
    return JSONResponse(admin_of(request).faults.as_dict())


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("/_sandbox/clock", clock, methods=("GET", "POST"), faults=False),
    Endpoint("/_sandbox/tokens", mint_token, methods=("POST",), faults=False),
    Endpoint("/_sandbox/faults", fault_counts, faults=False),
)
