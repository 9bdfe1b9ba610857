"""The five tools: what each reads, which analysis it runs, and its result as JSON.

Market tools (``market_summary``, ``price_drops``, ``compare_markets``) take a **scope** (the
listing search filters of a market: ``City``, ``PostalCode``, ``PropertyType`` ...) plus the
analysis function's own arguments. They read the scope's market with
``client.sync_listings(**scope)``: the first question about a scope syncs it into the cache (every
status, with its change history); later ones start from the cache and fetch only what changed.
``sync_market`` runs that sync and says what it did. ``traffic_summary`` reads
``client.analytics(Period, **filters)``.

A table comes back as ``{"columns": [...], "row_count": n, "rows": [records], "truncated":
bool}`` (at most :data:`MAX_ROWS` rows; index levels become columns; timestamps ISO 8601, NaN
null). Bad arguments raise :class:`~realtyframes.QueryError` or
:class:`~realtyframes.AnalysisInputError`; :func:`error_body` turns any failure into the JSON of
a tool error, secrets masked.

>>> sorted(TOOLS)
['compare_markets', 'market_summary', 'price_drops', 'sync_market', 'traffic_summary']
>>> import pandas as pd
>>> table(pd.DataFrame({"x": [1.5, None]}, index=pd.Index(["a", "b"], name="City")))["rows"]
[{'City': 'a', 'x': 1.5}, {'City': 'b', 'x': None}]
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from realtyframes.analysis import (
    compare_markets,
    market_as_of,
    market_summary,
    price_drops,
    traffic_summary,
)
from realtyframes.errors import AnalysisInputError, ApiError, QueryError
from realtyframes.loaders import sync_listings
from realtyframes.loaders.mcp import check_arguments
from realtyframes.mcp_server._schemas import (
    SYNC_MANAGED,
    analysis_properties,
    analytics_properties,
    object_schema,
    scope_properties,
)

if TYPE_CHECKING:
    import pandas as pd

    from realtyframes._client import Client

__all__ = ["MAX_ROWS", "TOOLS", "ToolSpec", "check_call", "error_body", "table"]

#: Rows of a table result at most (``row_count`` still says how many there were).
MAX_ROWS = 500


def _flat_name(column: Any) -> str:
    return " / ".join(str(c) for c in column) if isinstance(column, tuple) else str(column)


def table(frame: pd.DataFrame, max_rows: int = MAX_ROWS) -> dict[str, Any]:
    """A frame as JSON records with its columns and row count (see the module docstring)."""
    flat = frame.copy()
    flat.columns = [_flat_name(c) for c in flat.columns]
    named = any(name is not None for name in flat.index.names)
    flat = flat.reset_index(drop=not named)
    flat.columns = [_flat_name(c) for c in flat.columns]
    text = flat.head(max_rows).to_json(orient="records", date_format="iso", date_unit="s")
    out = {
        "columns": list(flat.columns),
        "row_count": len(flat),
        "rows": json.loads(text or "[]"),
        "truncated": len(flat) > max_rows,
    }
    if frame.attrs:
        out["attrs"] = json.loads(json.dumps(frame.attrs, default=str))
    return out


def _split(arguments: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(scope filters, analysis arguments) of a market tool's arguments."""
    scope_names = set(scope_properties())
    scope = {k: v for k, v in arguments.items() if k in scope_names and v is not None}
    rest = {k: v for k, v in arguments.items() if k not in scope_names and v is not None}
    return scope, rest


def _market_as_of(client: Client, scope: dict[str, Any], rest: dict[str, Any]) -> pd.DataFrame:
    """The scope's market as of ``rest["as_of"]`` (popped; its end then in ``rest``), by the rule
    the report and the Python API use too (:func:`~realtyframes.analysis.market_as_of`)."""
    market = client.sync_listings(**scope)
    at = market_as_of(market, client.listing_history(**scope), rest.pop("as_of", None))
    if "as_of" in at.attrs:
        rest["as_of"] = at.attrs["as_of"]
    return at


def _market_summary(client: Client, arguments: Mapping[str, Any]) -> dict[str, Any]:
    scope, rest = _split(arguments)
    return table(market_summary(_market_as_of(client, scope, rest), **rest))


def _price_drops(client: Client, arguments: Mapping[str, Any]) -> dict[str, Any]:
    scope, rest = _split(arguments)
    market = client.sync_listings(**scope)
    history = client.listing_history(**scope)
    return table(price_drops(market, history if len(history) else None, **rest))


def _compare_markets(client: Client, arguments: Mapping[str, Any]) -> dict[str, Any]:
    scope, rest = _split(arguments)
    if rest.get("markets") is not None:  # JSON has no tuples: [["Miami", "Condominium"]]
        rest["markets"] = [tuple(m) if isinstance(m, list) else m for m in rest["markets"]]
    return table(compare_markets(_market_as_of(client, scope, rest), **rest))


def _traffic_summary(client: Client, arguments: Mapping[str, Any]) -> dict[str, Any]:
    filters = {k: v for k, v in arguments.items() if k != "top_n" and v is not None}
    options = {"top_n": arguments["top_n"]} if arguments.get("top_n") is not None else {}
    period = {"period": filters.pop("Period")} if "Period" in filters else {}
    summary = traffic_summary(client.analytics(**period, **filters), **options)
    tables = {"headline": summary.headline, "timeline": summary.timeline, **summary.breakdowns}
    tables["utm"] = summary.utm
    return {"period": summary.period, "tables": {k: table(v) for k, v in tables.items()}}


def _sync_market(client: Client, arguments: Mapping[str, Any]) -> dict[str, Any]:
    scope, rest = _split(arguments)
    synced = sync_listings(client.session, scope, refresh=bool(rest.get("refresh", False)))
    state = client.sync_state(**scope) or {}
    return {
        "scope": scope,
        "rows": synced.rows,
        "quarantined": synced.quarantined,
        "requests": synced.requests,
        "mode": state.get("mode"),
        "syncs": state.get("syncs"),
        "last_requests": state.get("last_requests"),
        "changes": None if synced.changes is None else len(synced.changes),
    }


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its name, description, ``inputSchema`` and runner ``(client, arguments) -> JSON``."""

    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    run: Callable[[Client, Mapping[str, Any]], dict[str, Any]]
    read_only: bool = True
    scoped: bool = True  # takes a market scope


_SCOPE_NOTE = (
    " The market is a scope of listing search filters (City, PostalCode, PropertyType, "
    "Subtypes ...); it is synced into the local cache on first use and kept current."
)
_REFRESH = {"refresh": {"type": "boolean", "default": False, "description": "reload in full"}}

TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        ToolSpec(
            "market_summary",
            "Market metrics per market",
            "One row per market (by City, PostalCode ...): active, new, pending, sold, median "
            "prices and $/sqft, days on market, sale-to-list, months of supply, share with a "
            "price drop, over a window; as rf.market_summary." + _SCOPE_NOTE,
            object_schema(scope_properties(), analysis_properties(market_summary)),
            _market_summary,
        ),
        ToolSpec(
            "price_drops",
            "Listings whose price was cut",
            "One row per listing with a price cut, biggest cut first (previous and current "
            "price, drop amount and %, number of cuts, days on market), from the market's change "
            "history; as rf.price_drops." + _SCOPE_NOTE,
            object_schema(scope_properties(), analysis_properties(price_drops)),
            _price_drops,
        ),
        ToolSpec(
            "compare_markets",
            "Markets side by side",
            "Metrics as rows, the chosen markets as columns, plus the whole scope as 'All "
            "markets'; as rf.compare_markets." + _SCOPE_NOTE,
            object_schema(
                scope_properties(),
                analysis_properties(
                    compare_markets, ("markets", "by", "metrics", "as_of", "window_days", "segment")
                ),
            ),
            _compare_markets,
        ),
        ToolSpec(
            "traffic_summary",
            "Website traffic summary",
            "Headline traffic numbers (visitors, pageviews, sessions, bounce and conversion "
            "rates), the daily timeline and top-N tables (pages, referrers, countries, browsers, "
            "os, devices, utm) of an analytics period; as rf.traffic_summary.",
            object_schema(analytics_properties(), analysis_properties(traffic_summary)),
            _traffic_summary,
            scoped=False,
        ),
        ToolSpec(
            "sync_market",
            "Sync a market into the cache",
            "Bring the market of a scope up to date in the local cache (the first sync loads "
            "every status and backfills the change history; later ones fetch only what changed) "
            "and say what it did: rows, requests, mode, changes." + _SCOPE_NOTE,
            object_schema(scope_properties(), _REFRESH),
            _sync_market,
            read_only=False,
        ),
    )
}


def check_call(spec: ToolSpec, arguments: Mapping[str, Any]) -> None:
    """Refuse arguments the tool does not take (QueryError, before anything runs); a filter a
    sync manages itself (Status, MinListPrice ...) is refused with the sync's reason."""
    properties = spec.input_schema["properties"]
    for name in arguments:
        if spec.scoped and name in SYNC_MANAGED and name not in properties:
            allowed = "scope filters other than " + ", ".join(SYNC_MANAGED)
            raise QueryError(name, f"not allowed in a market scope: {SYNC_MANAGED[name]}", allowed)
    check_arguments(spec.name, spec.input_schema, dict(arguments))


def error_body(error: BaseException, mask: Callable[[str], str]) -> dict[str, Any]:
    """The JSON of a tool error for ``error``: type, message, and the parameter when known."""
    body: dict[str, Any] = {"type": type(error).__name__, "message": mask(str(error))}
    if isinstance(error, QueryError):
        body["param"] = error.param
        if error.allowed is not None:
            body["allowed"] = mask(error.allowed)
    elif isinstance(error, AnalysisInputError) and error.param is not None:
        body["param"] = error.param
    if isinstance(error, ApiError):
        body["status"], body["code"] = error.status, error.code
    return {"error": body}
