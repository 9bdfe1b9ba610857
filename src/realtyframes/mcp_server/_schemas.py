"""The tools' ``inputSchema``: the analysis functions' own parameters plus the market's scope.

Written from what the package already declares, never restated:

- the **scope** (which market a tool reads) is the listing search's parameters of
  :mod:`realtyframes.api` (``LISTING_SEARCH``) minus the ones a sync manages itself
  (:func:`realtyframes.loaders._sync.sync_scope` refuses them); enumerations come from
  :mod:`realtyframes._spec`, ranges from ``RANGE_PAIRS``;
- the **analysis** arguments are read from the function's signature (name, type, default), with
  the enumerations the analysis layer exports (``SEGMENTS``, ``MARKET_METRICS``);
- the **traffic** filters are the analytics parameters (``Period``, ``Device`` ... ).

>>> schema = analysis_properties(market_summary_func())
>>> schema["window_days"]["type"], schema["window_days"]["default"]
('number', 90)
>>> scope_properties()["PropertyType"]["enum"][:2]
['Residential', 'Residential Income']
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from realtyframes._spec import DEVICES, FEATURE_FLAGS, PERIODS, PROPERTY_TYPES, SUBTYPES
from realtyframes.analysis import MARKET_METRICS, SEGMENTS
from realtyframes.analysis import market as _market
from realtyframes.loaders import ANALYTICS, LISTING_SEARCH, RANGE_PAIRS
from realtyframes.loaders import SYNC_REFUSED as SYNC_MANAGED

__all__ = [
    "MAX_LIST_ITEMS",
    "SYNC_MANAGED",
    "analysis_properties",
    "analytics_properties",
    "market_summary_func",
    "object_schema",
    "scope_properties",
]

#: Items of any list argument at most (markets, metrics, by, Subtypes ...); each item once.
MAX_LIST_ITEMS = 50
_LIST = {"type": "array", "minItems": 1, "maxItems": MAX_LIST_ITEMS, "uniqueItems": True}
_TEXT_LIST = {**_LIST, "items": {"type": "string"}}
#: JSON schema of each annotation the analysis functions use (``from __future__`` strings).
_BY_ANNOTATION: dict[str, dict[str, Any]] = {
    "str": {"type": "string"},
    "float": {"type": "number"},
    "int": {"type": "integer"},
    "bool": {"type": "boolean"},
    "Any": {"type": "string"},
    "str | Sequence[str]": {"anyOf": [{"type": "string"}, _TEXT_LIST]},
    "Sequence[str] | None": _TEXT_LIST,
    "Sequence[Hashable] | None": _TEXT_LIST,
}
#: What each analysis argument means (the functions' docstrings say more).
_HELP: dict[str, str] = {
    "by": "column(s) that define a market: City, PostalCode, PropertySubType ...",
    "as_of": "end of the window (ISO 8601 date, meaning the end of that day, or timestamp; UTC); "
    "default: the end of today, as in the report",
    "window_days": "length of the window in days",
    "segment": "sale, rent, or both (summarised apart)",
    "compare_previous": "also the window before, with changes",
    "markets": f"values of `by` to compare, each once, at most {MAX_LIST_ITEMS}; default: every "
    "market",
    "metrics": "metric rows to keep, each once; default: all",
    "since": "keep price cuts after this date or timestamp (ISO 8601, UTC)",
    "min_drop_pct": "keep cuts of at least this fraction (0.05 = 5%)",
    "top_n": "rows of each breakdown table",
}
#: Bounds and enumerations of analysis arguments, from the analysis layer's constants.
_EXTRA: dict[str, dict[str, Any]] = {
    "segment": {"enum": list(SEGMENTS)},
    "metrics": {"items": {"type": "string", "enum": list(MARKET_METRICS)}},
    # a market of a several-column `by` is a list of values, one per column
    "markets": {
        "items": {
            "anyOf": [
                {"type": "string"},
                {"type": "array", "items": {}, "maxItems": MAX_LIST_ITEMS},
            ]
        }
    },
    "window_days": {"exclusiveMinimum": 0},
    "min_drop_pct": {"minimum": 0, "maximum": 1},
    "top_n": {"minimum": 1},
}
#: Inputs of the functions that are not JSON arguments (frames the server supplies itself).
_FRAMES = {"market", "listings", "history", "analytics", "previous"}


def market_summary_func() -> Callable[..., Any]:
    """:func:`realtyframes.market_summary` (for the doctest)."""
    return _market.market_summary


def analysis_properties(
    func: Callable[..., Any], only: tuple[str, ...] | None = None
) -> dict[str, dict[str, Any]]:
    """JSON-schema properties of ``func``'s JSON arguments (``only``: these names, in order)."""
    params = dict(inspect.signature(func).parameters)
    names = [n for n in params if n not in _FRAMES] if only is None else list(only)
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        param = params[name]
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            continue
        base = _BY_ANNOTATION[str(param.annotation)]
        prop = {**base, **_EXTRA.get(name, {}), "description": _HELP.get(name, name)}
        if param.default is not inspect.Parameter.empty and param.default is not None:
            prop["default"] = param.default
        out[name] = prop
    return out


def scope_properties() -> dict[str, dict[str, Any]]:
    """JSON-schema properties of a market scope (the listing search filters a sync follows)."""
    subtypes = list(dict.fromkeys(s for group in SUBTYPES.values() for s in group))
    bounds = {
        bound: {
            "type": "integer" if rng.integer else "number",
            **({"minimum": rng.minimum} if rng.minimum is not None else {}),
            **({"maximum": rng.maximum} if rng.maximum is not None else {}),
            "description": f"{'lower' if bound == low else 'upper'} bound of {field}",
        }
        for field, (low, high, rng) in RANGE_PAIRS.items()
        for bound in (low, high)
    }
    out: dict[str, dict[str, Any]] = {}
    for name in LISTING_SEARCH:
        if name in SYNC_MANAGED:
            continue
        if name == "PropertyType":
            out[name] = {"type": "string", "enum": list(PROPERTY_TYPES), "default": "Residential"}
        elif name == "Subtypes":
            out[name] = {**_LIST, "items": {"type": "string", "enum": subtypes}}
        elif name in bounds:
            out[name] = bounds[name]
        elif name in FEATURE_FLAGS:
            out[name] = {"type": "boolean", "description": f"only listings with {name}"}
        elif name == "SeniorCommunity":
            out[name] = {"type": ["boolean", "string"], "description": "true, or 'exclude'"}
        else:
            out[name] = {"type": "string", "description": f"market filter: {name}"}
    return out


def analytics_properties() -> dict[str, dict[str, Any]]:
    """JSON-schema properties of the analytics filters (``Period`` first)."""
    enums = {"Period": list(PERIODS), "Device": list(DEVICES)}
    out: dict[str, dict[str, Any]] = {}
    for name in ANALYTICS:
        prop: dict[str, Any] = {"type": "string", "description": f"analytics filter: {name}"}
        if name in enums:
            prop["enum"] = enums[name]
        out[name] = prop
    out["Period"]["default"] = "30d"
    return out


def object_schema(*groups: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """One ``inputSchema`` object from property groups; no other argument is accepted."""
    properties: dict[str, Any] = {}
    for group in groups:
        properties.update(group)
    return {"type": "object", "properties": properties, "additionalProperties": False}
