"""Query parameters of every operation: declared once, validated and documented from the same list.

A :class:`Param` knows its kind (text, choice, number, integer, boolean, timestamp, list, string),
its bounds, default and description. :func:`check_names` refuses names an operation does not take
(the HTTP layer), :func:`parse` turns raw query strings into values or a 400 naming the parameter
(the stores), and :meth:`Param.openapi` is the parameter's entry in ``/openapi.json``.

>>> parse(PAGING, {"Limit": "5"})
{'Offset': 0, 'Limit': 5}
>>> parse(PAGING, {"Limit": "51"})
Traceback (most recent call last):
...
realtyframes.sandbox._errors.SandboxError: 400 bad_request: Limit: at most 50, got 51; allowed: an integer from 1 to 50
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from realtyframes.sandbox._errors import bad_param
from realtyframes.sandbox._spec import (
    ANALYTICS_FILTERS,
    CHANGE_TYPES,
    DEFAULT_LIMIT,
    DEFAULT_PERIOD,
    DEVICES,
    FEATURE_FILTERS,
    MAX_LIMIT,
    MAX_LISTING_IDS,
    PERIODS,
    PROPERTY_TYPES,
    RANGE_FILTERS,
    SCOPES,
    SENIOR_COMMUNITY,
    SORTS,
    STATUSES,
    SUBTYPES,
)

__all__ = ["Param", "check_names", "names", "parse", "single"]

_NUMBER = re.compile(r"(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_INTEGER = re.compile(r"[0-9]+")
ISO_HINT = "an ISO 8601 timestamp, e.g. 2026-01-01T00:00:00Z or 2026-01-01"


@dataclass(frozen=True)
class Param:
    """One query parameter of an operation: how to read it and how to document it."""

    name: str
    kind: str  # text, string, choice, number, integer, boolean, timestamp, list
    description: str
    choices: tuple[str, ...] = ()
    default: str | int | None = None
    minimum: int = 0
    maximum: int | None = None
    required: bool = False
    fold_case: bool = False  # choices match case-insensitively (the value comes back lowered)
    item: str = "item"  # list: what one item is called in messages
    max_items: int | None = None
    item_schema: Mapping[str, Any] = field(default_factory=dict)  # list: extra item schema

    # -- reading ----------------------------------------------------------------------------------
    def parse(self, params: Mapping[str, str]) -> Any:
        """The value of this parameter in ``params`` (its default when absent), or a 400."""
        raw = params.get(self.name)
        if raw is None:
            if self.required:
                raise bad_param(self.name, "required", self._required_hint())
            return self.default
        return getattr(self, f"_{self.kind}")(raw)

    def _required_hint(self) -> str:
        if self.kind == "timestamp":
            return ISO_HINT
        return f"1 to {self.max_items} comma-separated {self.name}"

    def _string(self, raw: str) -> str:
        return raw

    def _text(self, raw: str) -> str:
        if raw.strip() == "":
            raise bad_param(
                self.name, "must not be empty", "a non-empty value, or omit the parameter"
            )
        return raw

    def _choice(self, raw: str) -> str:
        value = raw.lower() if self.fold_case else raw
        if value not in self.choices:
            raise bad_param(self.name, f"unknown value {raw!r}", self.choices)
        return value

    def _number(self, raw: str) -> float:
        if raw.startswith("-") and _NUMBER.fullmatch(raw[1:]):
            raise bad_param(self.name, f"must not be negative, got {raw!r}", "a number >= 0")
        if not _NUMBER.fullmatch(raw) or not math.isfinite(value := float(raw)):
            raise bad_param(self.name, f"not a number: {raw!r}", "a finite number >= 0")
        return value

    def _integer(self, raw: str) -> int:
        lo, hi = self.minimum, self.maximum
        allowed = f"an integer from {lo} to {hi}" if hi is not None else f"an integer >= {lo}"
        if not _INTEGER.fullmatch(raw):
            raise bad_param(self.name, f"not an integer: {raw!r}", allowed)
        value = int(raw)
        if hi is not None and value > hi:
            raise bad_param(self.name, f"at most {hi}, got {value}", allowed)
        if value < lo:
            raise bad_param(self.name, f"at least {lo}, got {value}", allowed)
        return value

    def _boolean(self, raw: str) -> bool:
        if raw.lower() not in ("true", "false"):
            raise bad_param(self.name, f"not a boolean: {raw!r}", ["true", "false"])
        return raw.lower() == "true"

    def _timestamp(self, raw: str) -> float:
        """Seconds since the epoch; naive times are UTC."""
        try:
            dt = datetime.fromisoformat(raw)
        except ValueError:
            raise bad_param(self.name, f"not an ISO 8601 timestamp: {raw!r}", ISO_HINT) from None
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=UTC)
        return dt.timestamp()

    def _list(self, raw: str) -> list[str]:
        """Comma-separated items; items of a list with choices are the consumer's to check."""
        items = [s.strip() for s in self._text(raw).split(",")]
        limit = self.max_items
        if not self.choices and any(not s for s in items):
            hint = f"1 to {limit} comma-separated {self.name}" if limit else None
            raise bad_param(self.name, f"empty {self.item} in the list", hint)
        if limit is not None and len(items) > limit:
            problem = f"at most {limit} {self.item}s, got {len(items)}"
            raise bad_param(self.name, problem, f"1 to {limit} {self.item}s")
        return items

    # -- documenting ------------------------------------------------------------------------------
    def schema(self) -> dict[str, Any]:
        """The JSON schema of the parameter's value."""
        kind = self.kind
        if kind == "text":
            return {"type": "string", "pattern": r"\S"}
        if kind == "list":
            items: dict[str, Any] = {"type": "string", **self.item_schema}
            if self.choices:
                items["enum"] = list(self.choices)
            out: dict[str, Any] = {"type": "array", "items": items, "minItems": 1}
            return out if self.max_items is None else {**out, "maxItems": self.max_items}
        if kind == "integer":
            bounds = {"minimum": self.minimum}
            if self.maximum is not None:
                bounds["maximum"] = self.maximum
            return {"type": "integer", **bounds, "default": self.default}
        schemas: dict[str, dict[str, Any]] = {
            "choice": {"type": "string", "enum": list(self.choices)},
            "number": {"type": "number", "minimum": 0},
            "boolean": {"type": "boolean"},
            "timestamp": {"type": "string", "format": "date-time"},
        }
        schema = schemas.get(kind, {"type": "string"})
        return schema if self.default is None else {**schema, "default": self.default}

    def openapi(self) -> dict[str, Any]:
        """The parameter's OpenAPI object (``in: query``)."""
        out: dict[str, Any] = {
            "name": self.name,
            "in": "query",
            "required": self.required,
            "description": self.description,
            "schema": self.schema(),
        }
        if self.kind == "list":
            out.update(style="form", explode=False)
        return out


def names(declared: Iterable[Param]) -> tuple[str, ...]:
    """The parameter names of an operation, in declaration order."""
    return tuple(p.name for p in declared)


def parse(declared: Iterable[Param], params: Mapping[str, str]) -> dict[str, Any]:
    """Every declared parameter's value (``None`` when absent without default); unknown names ignored."""
    return {p.name: p.parse(params) for p in declared}


def single(pairs: Iterable[tuple[str, str]], where: str) -> dict[str, str]:
    """Name -> value, refusing a name given twice (never silently keep one of them)."""
    out: dict[str, str] = {}
    for name, value in pairs:
        if name in out:
            raise bad_param(name, f"given more than once in the {where}; give it once")
        out[name] = value
    return out


def check_names(pairs: Iterable[tuple[str, str]], declared: Sequence[Param]) -> dict[str, str]:
    """The query as a dict; a name the operation does not take, or a repeated name, is a 400."""
    params = single(pairs, "query")
    allowed = names(declared)
    for name in params:
        if name not in allowed:
            near = [a for a in allowed if a.lower() == name.lower()]
            hint = f" (did you mean {near[0]}?)" if near else ""
            raise bad_param(
                name,
                f"not a parameter of this operation{hint}",
                ", ".join(allowed) if allowed else "none",
            )
    return params


# -- the operations' parameters (the spec's tables) -----------------------------------------------
PAGING: tuple[Param, ...] = (
    Param("Offset", "integer", "Results to skip. Default 0.", default=0),
    Param(
        "Limit",
        "integer",
        f"Results per page. Default {DEFAULT_LIMIT}, maximum {MAX_LIMIT}.",
        default=DEFAULT_LIMIT,
        minimum=1,
        maximum=MAX_LIMIT,
    ),
)
_SUBTYPES_TEXT = (
    "Comma-separated. For Residential: Single Family Residence, Condominium, Townhouse, "
    "Villa, Condo - Hotel, 1/2 Duplex, Mobile Home. For Residential Lease: Single Family "
    "Residence, Condominium, Townhouse, Villa, Apartment, Efficiency. Valid only for those "
    "two property types; a subtype of the other one is a 400."
)
_REQUIRED_DEFAULT = (
    "The spec marks it required and gives a default; the default applies when it is omitted."
)
SEARCH: tuple[Param, ...] = (
    Param(
        "PropertyType",
        "choice",
        "Sale types: Residential, Residential Income, Land, Commercial Sale, Business Opportunity. "
        f"Rent types: Residential Lease, Commercial Lease. {_REQUIRED_DEFAULT}",
        PROPERTY_TYPES,
        default=PROPERTY_TYPES[0],
    ),
    Param("Status", "choice", f"Listing status. {_REQUIRED_DEFAULT}", STATUSES, STATUSES[0]),
    Param("Subtypes", "list", _SUBTYPES_TEXT, SUBTYPES),
    Param("City", "text", "City name filter"),
    Param("PostalCode", "text", "Postal code filter"),
    Param("StreetNumber", "text", "Address search"),
    Param("StreetName", "text", "Address search"),
    Param("UnitNumber", "text", "Unit number"),
    Param("BuildingName", "text", "Phrase match"),
    Param("SubdivisionName", "text", "Subdivision filter"),
    *(
        Param(f"{side}{name}", "number", f"{text}: {bound} bound, inclusive")
        for name, text in RANGE_FILTERS.items()
        for side, bound in (("Min", "lower"), ("Max", "upper"))
    ),
    *(Param(name, "boolean", text) for name, text in FEATURE_FILTERS.items()),
    Param(
        "SeniorCommunity",
        "choice",
        "true = include only 55+ communities; exclude = leave them out; omitted = no filter",
        SENIOR_COMMUNITY,
        fold_case=True,
    ),
    Param("Agent", "text", "Agent MLS ID"),
    Param("Broker", "text", "Broker/office MLS ID"),
    Param("MaxDaysOnMarket", "number", "Maximum days on market"),
    Param("Since", "timestamp", "ISO 8601 timestamp; only listings added after it"),
    Param("Sort", "choice", "Sort order", SORTS, SORTS[0]),
    *PAGING,
)


@functools.lru_cache(maxsize=8)
def changes_params(max_ids: int = MAX_LISTING_IDS) -> tuple[Param, ...]:
    """The change feed's parameters, with at most ``max_ids`` ListingIds (the spec's 100 unless
    the sandbox is started with another ``max_listing_ids``)."""
    return (
        Param(
            "Since", "timestamp", "ISO 8601 timestamp; listings modified after it", required=True
        ),
        Param(
            "ListingIds",
            "list",
            f"Comma-separated MLS numbers, at most {max_ids}",
            required=True,
            item="id",
            max_items=max_ids,
            item_schema={"pattern": r"^[^,]*[^,\s][^,]*$"},
        ),
        Param("ChangeType", "choice", "Only this kind of change", CHANGE_TYPES),
        *PAGING,
    )


CHANGES: tuple[Param, ...] = changes_params()
ANALYTICS: tuple[Param, ...] = (
    Param("Period", "choice", "The window ending now", tuple(PERIODS), DEFAULT_PERIOD),
    Param("Device", "choice", "Device type", DEVICES),
    *(Param(name, "string", text) for name, text in ANALYTICS_FILTERS.items()),
)
CONTACTS: tuple[Param, ...] = PAGING
NONE: tuple[Param, ...] = ()
LEGACY: tuple[Param, ...] = (Param("api_key", "string", "API key of the legacy host"),)
AUTHORIZE: tuple[Param, ...] = (
    Param("client_id", "string", "Application credential", required=True),
    Param(
        "redirect_uri",
        "string",
        "Must match a URI registered for the application",
        required=True,
    ),
    Param(
        "scope",
        "list",
        f"Comma-separated from: {', '.join(SCOPES)}",
        SCOPES,
        required=True,
    ),
    Param("state", "string", "Opaque anti-forgery value, echoed back unchanged"),
    Param("response_type", "choice", "OAuth response type (authorization code)", ("code",), "code"),
    Param("code_challenge", "string", "PKCE (RFC 7636): BASE64URL(SHA256(code_verifier))"),
    Param("code_challenge_method", "choice", "PKCE method (S256 only)", ("S256",)),
    Param("resource", "string", "RFC 8707: this server's URL or its /mcp URL"),
)
#: The token request's fields (form body; the sandbox also reads them from the query).
TOKEN: tuple[Param, ...] = (
    Param(
        "grant_type",
        "choice",
        "",
        ("authorization_code",),
        "authorization_code",
        required=True,
    ),
    Param("code", "string", "Code from the callback redirect", required=True),
    Param("client_id", "string", "", required=True),
    Param("client_secret", "string", "", required=True),
    Param("redirect_uri", "string", "Must equal the URI used in the authorize step"),
    Param("code_verifier", "string", "PKCE: required when the authorize step sent a challenge"),
    Param("resource", "string", "RFC 8707: this server's URL or its /mcp URL"),
)

SEARCH_PARAMS = names(SEARCH)
CHANGES_PARAMS = names(CHANGES)
ANALYTICS_PARAMS = names(ANALYTICS)
CONTACTS_PARAMS = names(CONTACTS)
AUTHORIZE_PARAMS = names(AUTHORIZE)
TOKEN_PARAMS = names(TOKEN)
LEGACY_PARAMS = names(LEGACY)
