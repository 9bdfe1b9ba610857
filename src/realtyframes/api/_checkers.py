"""Value checkers of query parameters (enumerations, booleans, numbers, ranges, timestamps, lists):
each returns the value as sent or raises QueryError naming the parameter and what it allows; the
parameter tables of :mod:`._operations` are built from them. And the validated request's type."""

from __future__ import annotations

import difflib
import math
import numbers
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

from realtyframes._spec import (
    PROPERTY_TYPES,
    SUBTYPES,
)
from realtyframes.errors import QueryError

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
#: Number text, as Python's float() reads it less the names (``nan``, ``inf``) and ``_``: a value
#: from the command line is judged like the same value given in Python (``"1e30"`` too large).
_NUMBER_TEXT = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


# -- value checkers ---------------------------------------------------------------------------------
def _type_name(value: object) -> str:
    return type(value).__name__


def _enum(name: str, value: Any, allowed: Iterable[str]) -> str:
    allowed = tuple(allowed)
    if not isinstance(value, str):
        raise QueryError(name, f"expected a string, got {_type_name(value)} {value!r}", allowed)
    if value in allowed:
        return str(value)
    near = [a for a in allowed if a.lower() == value.strip().lower()]
    near = near or difflib.get_close_matches(value, allowed, n=1, cutoff=0.6)
    hint = f"; did you mean {near[0]!r}?" if near else ""
    raise QueryError(name, f"unknown value {value!r}{hint}", allowed)


def _property_type(name: str, value: Any) -> str:
    """A PropertyType; a subtype given in its place (``'Condo'``) gets the ``Subtypes=`` hint.

    >>> _property_type("PropertyType", "Condo")
    Traceback (most recent call last):
    ...
    realtyframes.errors.QueryError: PropertyType: 'Condo' is a subtype, not a PropertyType; did you mean Subtypes='Condominium' (with PropertyType 'Residential' or 'Residential Lease')?; allowed: ...
    """
    if isinstance(value, str) and value not in PROPERTY_TYPES:
        subtypes = dict.fromkeys(s for group in SUBTYPES.values() for s in group)
        text = value.strip().lower()
        near = [s for s in subtypes if s.lower() == text or s.lower().startswith(text)]
        near = near or difflib.get_close_matches(value, list(subtypes), n=1, cutoff=0.75)
        if text and near and not difflib.get_close_matches(value, PROPERTY_TYPES, n=1, cutoff=0.75):
            types = " or ".join(repr(t) for t, group in SUBTYPES.items() if near[0] in group)
            raise QueryError(
                name,
                f"{value!r} is a subtype, not a PropertyType; did you mean "
                f"Subtypes={near[0]!r} (with PropertyType {types})?",
                PROPERTY_TYPES,
            )
    return _enum(name, value, PROPERTY_TYPES)


def _bool(name: str, value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and value in ("true", "false"):
        return value
    raise QueryError(name, f"expected a boolean, got {_type_name(value)} {value!r}", (True, False))


def _number_value(name: str, value: Any, what: str) -> float | int:
    if isinstance(value, bool) or not isinstance(value, numbers.Real | Decimal | str):
        raise QueryError(name, f"expected a number, got {_type_name(value)} {value!r}", what)
    if isinstance(value, str):
        if not _NUMBER_TEXT.match(value.strip()) or value != value.strip():
            raise QueryError(name, f"{value!r} is not a number", what)
        number: float | int = float(value) if any(c in value for c in ".eE") else int(value)
    elif isinstance(value, numbers.Integral):
        number = int(value)
    else:
        number = float(value)
    if isinstance(number, float) and not math.isfinite(number):
        raise QueryError(name, f"{value!r} is not a finite number", what)
    return number


def _format_number(number: float | int) -> str:
    if isinstance(number, int):
        return str(number)
    if number.is_integer() and abs(number) < 1e15:
        return str(int(number))
    return format(Decimal(repr(number)), "f")


@dataclass(frozen=True)
class _Range:
    minimum: float | None = None
    maximum: float | None = None
    integer: bool = False
    what: str = "a number"

    def describe(self) -> str:
        kind = "an integer" if self.integer else "a number"
        if self.minimum is not None and self.maximum is not None:
            return f"{kind} from {_format_number(self.minimum)} to {_format_number(self.maximum)}"
        if self.minimum is not None:
            return f"{kind} >= {_format_number(self.minimum)}"
        return kind

    def check(self, name: str, value: Any) -> float | int:
        what = self.describe()
        number = _number_value(name, value, what)
        if self.integer and isinstance(number, float):
            if not number.is_integer():
                raise QueryError(name, f"{value!r} is not a whole number", what)
            number = int(number)
        if self.minimum is not None and number < self.minimum:
            raise QueryError(name, f"{value!r} is too small", what)
        if self.maximum is not None and number > self.maximum:
            raise QueryError(name, f"{value!r} is too large", what)
        return number


def _timestamp(name: str, value: Any) -> str:
    """datetime (tz-aware), date (midnight UTC) or an ISO 8601 string -> ``...Z`` in UTC."""
    what = "an ISO 8601 timestamp with a time zone (e.g. '2024-05-01T00:00:00Z'), a date, or a tz-aware datetime"
    when: datetime
    if isinstance(value, datetime):
        when = value
    elif isinstance(value, date):
        when = datetime.combine(value, time(0), tzinfo=UTC)
    elif isinstance(value, str):
        text = value.strip()
        if text != value or not text:
            raise QueryError(name, f"{value!r} is not an ISO 8601 timestamp", what)
        if _DATE_ONLY.match(text):
            try:
                when = datetime.combine(date.fromisoformat(text), time(0), tzinfo=UTC)
            except ValueError:
                raise QueryError(name, f"{value!r} is not a valid date", what) from None
        else:
            try:
                when = datetime.fromisoformat(text[:-1] + "+00:00" if text[-1:] in "zZ" else text)
            except ValueError:
                raise QueryError(name, f"{value!r} is not an ISO 8601 timestamp", what) from None
            if "T" not in text.upper() and " " not in text:
                raise QueryError(name, f"{value!r} is not an ISO 8601 timestamp", what)
    else:
        raise QueryError(name, f"expected a timestamp, got {_type_name(value)} {value!r}", what)
    try:
        offset = when.utcoffset()
    except Exception:
        offset = None
    if offset is None:
        raise QueryError(
            name,
            f"{value!r} has no time zone (give one, e.g. 'Z' or tzinfo=datetime.UTC)",
            what,
        )
    utc = when.astimezone(UTC)
    spec = "seconds" if utc.microsecond == 0 else "microseconds"
    return utc.replace(tzinfo=None).isoformat(timespec=spec) + "Z"


#: How far ahead of this machine's clock a ``Since`` may be (clock skew), before it is a mistake.
SINCE_SKEW = timedelta(days=1)


def _since(name: str, value: Any) -> str:
    """A :func:`_timestamp` at most :data:`SINCE_SKEW` in the future (a future ``Since`` always
    answers nothing, which would read as "no changes")."""
    text = _timestamp(name, value)
    when = datetime.fromisoformat(text[:-1] + "+00:00")
    if when > datetime.now(UTC) + SINCE_SKEW:
        raise QueryError(name, f"{text} is more than a day in the future", "a past timestamp")
    return text


def _list_of_text(name: str, value: Any, what: str) -> list[str]:
    """A list/tuple/set of strings, or one comma-separated string."""
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, Iterable) and not isinstance(value, bytes | Mapping):
        items = list(value)
    else:
        raise QueryError(
            name, f"expected a list of strings, got {_type_name(value)} {value!r}", what
        )
    result = []
    for item in items:
        if not isinstance(item, str):
            raise QueryError(name, f"items must be strings, got {_type_name(item)} {item!r}", what)
        text = item.strip()
        if not text:
            raise QueryError(name, "empty item", what)
        if "," in text:
            raise QueryError(name, f"item {text!r} contains a comma", what)
        if _CONTROL.search(text):
            raise QueryError(name, f"item {text!r} contains control characters", what)
        result.append(text)
    if not result:
        raise QueryError(name, "empty list", what)
    return result


def refuse_none(params: Mapping[str, Any]) -> None:
    """A user's filter given as ``None`` is an error, not "not given": dropping it silently would
    run another query than the one asked (``PropertyType=None`` would search Residential).

    >>> refuse_none({"PropertyType": None})
    Traceback (most recent call last):
    ...
    realtyframes.errors.QueryError: PropertyType: None is not a value; allowed: a value, or leave the parameter out
    """
    for name, value in params.items():
        if value is None:
            raise QueryError(
                str(name), "None is not a value", "a value, or leave the parameter out"
            )


@dataclass(frozen=True)
class PreparedRequest:
    """A validated request: path, query parameters (strings) and host."""

    operation: str
    path: str
    params: dict[str, str]
    host: str = "base"
