"""The platform's search filters as an OData ``$filter``, and the names a filter may use.

:func:`property_filter` validates the platform's filters with the platform's own checks
(:func:`realtyframes.loaders.validate_listing_search`: same values, same errors), applies its
defaults (Status Active, PropertyType Residential, Sort -listprice), and writes each through
the field map (:mod:`._fields`). A keyword that is no platform filter is taken as a Data
Dictionary field compared with ``eq``; raw OData text goes in ``filter=``. Names unknown to the
server's ``$metadata`` are a :class:`~realtyframes.QueryError` naming the close matches.

>>> property_filter({"City": "Miami", "MinListPrice": 500000}, fields=None)[0]
"StandardStatus eq 'Active' and PropertyType eq 'Residential' and City eq 'Miami' and ListPrice ge 500000"
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Collection, Mapping
from typing import Any

from realtyframes.errors import QueryError
from realtyframes.loaders import LISTING_DEFAULTS, LISTING_SEARCH, validate_listing_search
from realtyframes.reso._fields import FILTERS, SORTS, UNMAPPED_FILTERS
from realtyframes.reso._metadata import Lookups

__all__ = ["check_names", "literal", "names_in", "property_filter"]

_KEYWORDS = frozenset(
    [
        "and",
        "or",
        "not",
        "eq",
        "ne",
        "gt",
        "ge",
        "lt",
        "le",
        "in",
        "has",
        "true",
        "false",
        "null",
        "asc",
        "desc",
        "any",
        "all",
    ]
)
_TOKEN = re.compile(r"'(?:[^']|'')*'|[A-Za-z_][\w.]*(?=\s*\()|[A-Za-z_]\w*(?:/\w+)?")
_DATETIME = re.compile(r"\d{4}-\d\d-\d\dT[\d:.]+(Z|[+-]\d\d:\d\d)$")
_NUMBER = re.compile(r"-?\d+(\.\d+)?$")


def literal(value: Any) -> str:
    """An OData literal: booleans, numbers and timestamps bare, text quoted (``'`` doubled).

    >>> literal("O'Hare"), literal(True), literal(5), literal("2026-01-01T00:00:00Z")
    ("'O''Hare'", 'true', '5', '2026-01-01T00:00:00Z')
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"{value:g}" if isinstance(value, float) else str(value)
    text = str(value)
    if _DATETIME.match(text):
        return text
    return "'" + text.replace("'", "''") + "'"


def _term(name: str, value: str, lookups: Callable[[], Lookups] | None = None) -> str:
    field, op = FILTERS[name]
    if lookups is not None and op in ("eq", "in") and field in lookups().encoding:
        table = lookups()  # the server's values of a lookup field (enum literals included)
        if op == "in":
            return (
                f"{field} in (" + ",".join(table.literal(field, v) for v in value.split(",")) + ")"
            )
        return f"{field} eq {table.literal(field, value)}"
    if op == "in":
        return f"{field} in (" + ",".join(literal(v) for v in value.split(",")) + ")"
    if op == "contains":
        return f"contains({field},{literal(value)})"
    if op == "senior":
        return f"{field} eq {'true' if value == 'true' else 'false'}"
    if value in ("true", "false"):
        return f"{field} {op} {value}"
    if _NUMBER.match(value) and name not in ("PostalCode", "StreetNumber", "UnitNumber"):
        return f"{field} {op} {value}"
    return f"{field} {op} {literal(value)}"


def property_filter(
    filters: Mapping[str, Any],
    *,
    fields: Collection[str] | None,
    raw: str | None = None,
    every_status: bool = False,
    lookups: Callable[[], Lookups] | None = None,
) -> tuple[str, str]:
    """``(filter, orderby)`` for the platform's search ``filters`` (spec names; other names are
    DD fields compared with ``eq``, checked against ``fields`` when given) and raw OData text.
    ``lookups``: the server's lookups (asked for once the filters are valid), so Status and
    PropertyType are sent as the server's values (enum literals, local lookup values).

    >>> property_filter({"Status": "Closed", "Subtypes": ["Condominium"]}, fields=None)
    ("StandardStatus eq 'Closed' and PropertyType eq 'Residential' and PropertySubType in ('Condominium')", 'ListPrice desc')
    """
    platform = {k: v for k, v in filters.items() if k in LISTING_SEARCH}
    for name in platform:
        if name in UNMAPPED_FILTERS:
            raise QueryError(
                name,
                "has no RESO Data Dictionary 2.0 field in Property",
                "filter= with the server's own field (see client.reso_fields())",
            )
        if name in ("Offset", "Limit"):
            raise QueryError(name, "paging is done by the loader", "page_size= on Client.reso")
    checked = validate_listing_search(platform)
    for name in ("PropertyType",) if every_status else ("Status", "PropertyType"):
        checked.setdefault(name, LISTING_DEFAULTS[name])
    sort = checked.pop("Sort", LISTING_DEFAULTS["Sort"])
    others = {k: v for k, v in filters.items() if k not in LISTING_SEARCH}
    if others and fields is not None:
        check_names(others, fields, extra=FILTERS)
    if raw is not None and fields is not None:
        check_names(names_in(raw), fields, param="filter")
    first = [name for name in ("Status", "PropertyType") if name in checked]
    terms = [_term(name, checked[name], lookups) for name in first]
    terms += [_term(n, v, lookups) for n, v in checked.items() if n not in first]
    terms += [f"{name} eq {literal(value)}" for name, value in others.items()]
    if raw is not None:
        terms.append(f"({raw})")
    return " and ".join(terms), SORTS[sort]


def names_in(text: str) -> list[str]:
    """The field names an OData expression uses (not its keywords, functions or literals).

    >>> names_in("City eq 'Miami' and contains(StreetName,'Ocean') or ListPrice gt 5")
    ['City', 'StreetName', 'ListPrice']
    """
    if not isinstance(text, str) or not text.strip():
        raise QueryError("filter", "empty OData text", "an OData $filter expression")
    found: list[str] = []
    for match in _TOKEN.finditer(text):
        token = match.group(0)
        if token.startswith("'") or token.lower() in _KEYWORDS or "." in token:
            continue
        end = match.end()
        if text[end:].lstrip().startswith("("):
            continue  # a function: contains(...), tolower(...)
        if token not in found:
            found.append(token)
    return found


def check_names(
    names: Collection[str],
    fields: Collection[str],
    *,
    param: str | None = None,
    extra: Collection[str] = (),
) -> None:
    """Refuse a name the resource's ``$metadata`` does not have, naming the close matches."""
    for name in names:
        if name in fields:
            continue
        near = difflib.get_close_matches(name, [*fields, *extra], n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        raise QueryError(
            param or name,
            f"unknown field {name!r} (not in the server's $metadata){hint}",
            "a field of the server's $metadata or a platform filter",
            brief=True,
        )
