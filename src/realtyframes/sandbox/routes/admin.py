"""The sandbox's own admin routes (``/_sandbox/*``): the clock, minted tokens, fault counters.

Not part of the spec and not in ``/openapi.json``; no fault touches them.

>>> [e.path for e in ENDPOINTS]
['/_sandbox/clock', '/_sandbox/tokens', '/_sandbox/faults']
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from realtyframes.sandbox._auth import parse_scopes
from realtyframes.sandbox._errors import bad_param
from realtyframes.sandbox._spec import PLANS, SCOPES
from realtyframes.sandbox.routes._declare import Endpoint, admin_of

__all__ = ["ENDPOINTS", "iso"]


def iso(dt: datetime) -> str:
    """An aware datetime as ISO 8601 UTC with 'Z'."""
    return dt.astimezone(UTC).isoformat().replace("+00:00", "Z")


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
    return JSONResponse(admin_of(request).faults.as_dict())


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("/_sandbox/clock", clock, methods=("GET", "POST"), faults=False),
    Endpoint("/_sandbox/tokens", mint_token, methods=("POST",), faults=False),
    Endpoint("/_sandbox/faults", fault_counts, faults=False),
)
