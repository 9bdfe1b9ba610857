"""How a request is checked, on the loaders' floor, before any request: value checkers (each
returns the value as sent or raises QueryError naming the parameter and what it allows; the
tables of :mod:`._operations` are built from them), a table's check (:func:`_validate`), the
spec's :class:`Operation`, and a load's :class:`Call` (:func:`prepare_call`).

>>> prepare_call(ENDPOINTS["listings"], {"City": "Miami"}, {}).key_params  # doctest: +SKIP
{'City': 'Miami', 'max_results': None, 'details': False}
"""

from __future__ import annotations

import difflib
import math
import numbers
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any, Protocol
from urllib.parse import quote

from realtyframes._spec import (
    PROPERTY_TYPES,
    SUBTYPES,
)
from realtyframes.api import Host
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
    """A filter given as ``None`` is an error, not "not given" (``PropertyType=None`` dropped
    would search Residential).

    >>> refuse_none({"PropertyType": None})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    realtyframes.errors.QueryError: PropertyType: None is not a value; ...
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


# -- checking a table of parameters ----------------------------------------------------------------
#: The longest text a parameter takes.
_MAX_TEXT = 500


def _text(name: str, value: Any, what: str = "a non-empty string") -> str:
    if not isinstance(value, str):
        hint = ""
        if isinstance(value, numbers.Number) and not isinstance(value, bool):
            hint = f" (write it as a string, e.g. {str(value)!r})"
        raise QueryError(name, f"expected a string, got {_type_name(value)} {value!r}{hint}", what)
    if not value.strip():
        raise QueryError(name, "empty string", what)
    if value != value.strip():
        raise QueryError(name, f"{value!r} has spaces at its ends", what)
    if _CONTROL.search(value):
        raise QueryError(name, f"{value!r} contains control characters", what)
    if len(value) > _MAX_TEXT:
        raise QueryError(name, f"too long ({len(value)} characters)", f"at most {_MAX_TEXT}")
    return str(value)


#: A parameter's checker: (name, value) -> the value as sent.
Checker = Callable[[str, Any], str]
#: An operation's validator: its parameters -> the query as sent.
Validator = Callable[[Mapping[str, Any] | None], dict[str, str]]


def _suggest(name: str, allowed: Iterable[str]) -> str | None:
    allowed = list(allowed)
    squash = name.replace("_", "").replace("-", "").replace(" ", "").lower()
    for candidate in allowed:
        if candidate.lower() == squash or candidate.lower() == name.lower():
            return candidate
    near = difflib.get_close_matches(name, allowed, n=1, cutoff=0.6)
    if not near:
        lowered = {a.lower(): a for a in allowed}
        near = [lowered[m] for m in difflib.get_close_matches(squash, lowered, n=1, cutoff=0.6)]
    return near[0] if near else None


def _validate(
    operation: str,
    table: Mapping[str, Checker],
    params: Mapping[str, Any] | None,
    required: Iterable[str] = (),
) -> dict[str, str]:
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise QueryError("params", f"expected a mapping of parameters, got {_type_name(params)}")
    result: dict[str, str] = {}
    for name, value in params.items():
        if not isinstance(name, str):
            raise QueryError(str(name), "parameter names must be strings", sorted(table))
        checker = table.get(name)
        if checker is None:
            near = _suggest(name, table)
            hint = f"did you mean {near!r}?" if near else "its names are in .allowed"
            raise QueryError(
                name, f"unknown parameter for {operation}; {hint}", list(table), brief=True
            )
        if value is None:
            continue
        result[name] = checker(name, value)
    for name in required:
        if name not in result:
            raise QueryError(name, f"required by {operation}", _REQUIRED.get(name, "a value"))
    return result


_REQUIRED = {
    "Since": "an ISO 8601 timestamp with a time zone, a date, or a tz-aware datetime",
    "ListingIds": "a non-empty list of MLS listing numbers",
}


def validate_path_id(name: str, value: Any) -> str:
    """A path identifier (ListingId, contactId), percent-encoded for the URL.

    >>> validate_path_id("ListingId", "A1234")
    'A1234'
    """
    text = _text(name, value, "a non-empty identifier string")
    if "/" in text or "\\" in text:
        raise QueryError(name, f"{value!r} contains a slash", "an identifier without '/'")
    if text in (".", ".."):
        raise QueryError(name, f"{value!r} is not an identifier", "an identifier")
    if name == "ListingId" and text == "changes":
        raise QueryError(
            name, "'changes' is the change-feed path, not a ListingId", "an MLS number"
        )
    return quote(text, safe="")


# -- operations -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Operation:
    """One operation of the spec: where it lives and how its parameters are checked.

    ``path`` is a template whose ``{}`` is the ``path_param`` (given under its spec name);
    ``validate`` checks the query parameters (None: the operation takes none); ``parameters``
    is the table of query parameters it checks them with (name -> checker, read by the command
    line and the MCP tools) and ``defaults`` what the service applies when one is omitted.
    """

    name: str
    host: Host
    path: str
    validate: Validator | None = None
    path_param: str | None = None
    summary: str = ""
    parameters: Mapping[str, Checker] = field(default_factory=dict)
    defaults: Mapping[str, str] = field(default_factory=dict)

    def prepare(self, params: Mapping[str, Any] | None = None) -> PreparedRequest:
        """The validated request: the path template's ``{}`` filled with ``params[path_param]``
        (percent-encoded), the query checked by ``validate``; QueryError before any I/O.

        >>> Operation("contact", "base", "/v1/contacts/{}", path_param="contactId").prepare(
        ...     {"contactId": "c 1"}).path
        '/v1/contacts/c%201'
        """
        params, path = dict(params or {}), self.path
        if self.path_param is not None:
            if params.get(self.path_param) is None:
                raise QueryError(
                    self.path_param, f"required by {self.name}", "a non-empty identifier"
                )
            path = path.format(validate_path_id(self.path_param, params.pop(self.path_param)))
        validate = self.validate
        query = validate(params) if validate is not None else _validate(self.name, {}, params)
        return PreparedRequest(self.name, path, query, self.host)

    def at(self, identifier: str) -> str:
        """The path of the resource ``identifier`` names (``path_param`` operations).

        >>> Operation("activity", "base", "/v1/contacts/{}/activity", path_param="contactId").at("c 1")
        '/v1/contacts/c%201/activity'
        """
        return self.prepare({self.path_param or "id": identifier}).path


@dataclass(frozen=True)
class Call:
    """One validated load of an endpoint: the request, the loader's options, the cache key's
    parameters, and what the answer must echo (top-level field -> value asked)."""

    path: str
    query: dict[str, str]
    options: dict[str, Any] = field(default_factory=dict)
    key_params: dict[str, Any] = field(default_factory=dict)
    echo: dict[str, str] = field(default_factory=dict)


class Declared(Protocol):
    """What :func:`prepare_call` reads of an endpoint (``loaders.Endpoint``)."""

    @property
    def operation(self) -> Operation: ...
    @property
    def refused(self) -> Mapping[str, tuple[str, str]]: ...
    @property
    def options(self) -> Mapping[str, tuple[Any, Callable[[str, Any], Any]]]: ...
    @property
    def key(self) -> Callable[[Mapping[str, str]], dict[str, Any]] | None: ...
    @property
    def echo(self) -> tuple[str, str] | None: ...


def prepare_call(endpoint: Declared, params: Mapping[str, Any], options: Mapping[str, Any]) -> Call:
    """A validated load of ``endpoint``: its request, its checked loader options and the cache
    key's parameters; QueryError (a refused or invalid parameter) before any request.

    >>> from realtyframes.loaders import ENDPOINTS
    >>> prepare_call(ENDPOINTS["listing"], {"ListingId": "A1"}, {}).path
    '/v1/listings/A1'
    """
    operation = endpoint.operation
    for name, (why, instead) in endpoint.refused.items():
        if name in params:
            raise QueryError(name, why, instead)
    request = operation.prepare(params)
    unknown = set(options) - set(endpoint.options)
    if unknown:
        raise TypeError(f"{operation.name}: unexpected options {sorted(unknown)}")
    checked = {
        name: check(name, options.get(name, default))
        for name, (default, check) in endpoint.options.items()
    }
    key = endpoint.key(request.params) if endpoint.key is not None else dict(request.params)
    if operation.path_param is not None:
        key = {operation.path_param: params[operation.path_param], **key}
    echo: dict[str, str] = {}
    if endpoint.echo is not None:
        member, param = endpoint.echo
        in_path = param == operation.path_param
        asked = params.get(param) if in_path else request.params.get(param)
        if asked is not None:
            echo[member] = str(asked)
    return Call(request.path, request.params, checked, {**key, **checked}, echo)
