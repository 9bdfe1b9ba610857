"""The search's filters: a parsed ``GET /v1/listings`` query in, the matching rows out.

Rows of one (PropertyType, Status) group come presorted from the snapshot; each filter of the
spec's table then narrows them with numpy.

>>> GROUPS
4
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from realtyframes.sandbox._errors import bad_param
from realtyframes.sandbox._generate import SUBTYPE_CODES, number_code, unit_code
from realtyframes.sandbox._pricing import PROPERTY_TYPE_CODES
from realtyframes.sandbox._spec import (
    FEATURE_FILTERS,
    FILTERABLE_SUBTYPES,
    RANGE_FILTERS,
    STATUSES,
)
from realtyframes.sandbox._state import Snapshot, subset
from realtyframes.sandbox._tables import Tables

__all__ = ["GROUPS", "matching_rows"]

GROUPS = len(STATUSES)  # a (type, status) group is ptype * GROUPS + status
#: The column each range filter bounds, in the order of the spec's RANGE_FILTERS.
_RANGE_COLUMNS = dict(
    zip(RANGE_FILTERS, ("list_price", "beds", "baths", "area", "lot", "year", "hoa"), strict=True)
)
#: The column each feature filter keeps, in the order of the spec's FEATURE_FILTERS.
_FEATURE_COLUMNS = dict(
    zip(
        FEATURE_FILTERS,
        ("pool", "waterfront", "penthouse", "is_furnished", "pets_ok", "gated", "tennis", "golf",
         "boat_dock", "short_sale", "seasonal"),
        strict=True,
    )
)  # fmt: skip


def matching_rows(snap: Snapshot, q: Mapping[str, Any], t: Tables) -> np.ndarray:
    """Row indices of the listings matching the parsed query ``q``, in its Sort order."""
    group = PROPERTY_TYPE_CODES[q["PropertyType"]] * GROUPS + STATUSES.index(q["Status"])
    idx = subset(snap, group, q["Sort"])
    c, st = snap.cols, snap.state
    state_cols = {"list_price": st.list_price, "dom": st.dom}
    for op, (col, arg) in _checks(q, t):
        if len(idx) == 0:
            break
        values = (state_cols[col] if col in state_cols else c[col])[idx]
        if op == "isin":
            keep = values == arg[0] if len(arg) == 1 else np.isin(values, arg)
        elif op == "eq" or op == "flag":
            keep = values == arg
        elif op == "ge":
            keep = values >= arg
        elif op == "le":
            keep = values <= arg
        else:  # "gt"
            keep = values > arg
        idx = idx[keep]
    return idx


def _checks(q: Mapping[str, Any], t: Tables) -> list[tuple[str, Any]]:
    """The search's filters as (operation, (column, argument)), from the parsed query."""
    ptype = q["PropertyType"]
    checks: list[tuple[str, Any]] = []
    wanted = q["Subtypes"]
    if wanted is not None:
        allowed = FILTERABLE_SUBTYPES.get(ptype)
        if allowed is None:
            raise bad_param(
                "Subtypes",
                f"applies to Residential and Residential Lease only, not PropertyType {ptype!r}",
                "omit Subtypes, or use PropertyType Residential or Residential Lease",
            )
        for s in wanted:
            if s not in allowed:
                problem = f"unknown value {s!r} for PropertyType {ptype}"
                raise bad_param("Subtypes", problem if s else "empty item in the list", allowed)
        checks.append(("isin", ("sub", [SUBTYPE_CODES[s] for s in wanted])))
    for name, col, lookup in (
        ("City", "city", lambda v: [t.city_lookup.get(v.lower(), -1)]),
        ("PostalCode", "zip", lambda v: [t.zip_lookup.get(v, -1)]),
        ("StreetName", "street", lambda v: [t.street_lookup.get(v.lower(), -1)]),
        ("SubdivisionName", "subdiv", lambda v: t.sub_lookup.get(v.lower(), [-2])),
        (
            "BuildingName",
            "building",
            lambda v: [i for i, b in enumerate(t.buildings) if v.lower() in b.lower()] or [-2],
        ),
        ("Agent", "agent", lambda v: [t.agent_lookup.get(v.upper(), -1)]),
        ("Broker", "office", lambda v: [t.office_lookup.get(v.upper(), -1)]),
    ):
        if q[name] is not None:
            checks.append(("isin", (col, lookup(q[name]))))
    for name, col, code in (
        ("StreetNumber", "number", number_code),
        ("UnitNumber", "unit", unit_code),
    ):
        if q[name] is not None:
            # the stored numbers' text, compared as numpy compares strings (trailing NULs ignored)
            value = code(q[name].upper().rstrip("\x00"))
            checks.append(("eq", (col, value)) if value is not None else ("isin", (col, [])))
    checks += _bounds(q)
    if q["SeniorCommunity"] is not None:
        checks.append(("flag", ("senior", q["SeniorCommunity"] == "true")))
    if q["MaxDaysOnMarket"] is not None:
        checks.append(("le", ("dom", q["MaxDaysOnMarket"])))
    if q["Since"] is not None:
        checks.append(("gt", ("entry", q["Since"])))
    return checks


def _bounds(q: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The range and feature filters."""
    checks: list[tuple[str, Any]] = []
    for name, col in _RANGE_COLUMNS.items():
        lo_name, hi_name = f"Min{name}", f"Max{name}"
        lo, hi = q[lo_name], q[hi_name]
        if lo is not None and hi is not None and lo > hi:
            raise bad_param(
                lo_name,
                f"{lo_name} {lo:g} is greater than {hi_name} {hi:g}",
                f"{lo_name} <= {hi_name}",
            )
        if lo is not None:
            checks.append(("ge", (col, lo)))
        if hi is not None:
            checks.append(("le", (col, hi)))
    for name, col in _FEATURE_COLUMNS.items():
        if q[name] is not None:
            checks.append(("flag", (col, q[name])))
    return checks
