"""OData v4 query options of the RESO face: ``$filter`` (to a predicate), ``$orderby``, ``$select``.

``$filter`` takes ``eq ne gt ge lt le``, ``and or not``, parentheses, ``in (...)``,
``contains/startswith/endswith(Field,'text')``, string, number, boolean, ``null``, Date and
DateTimeOffset literals and enum literals (``Namespace.Type'Value'``). A bad query is a 400 naming
the option and the token.

>>> types = {"City": "Edm.String", "ListPrice": "Edm.Decimal"}
>>> f = parse_filter("City eq 'Miami' and (ListPrice ge 5e5 or ListPrice eq null)", types)
>>> f.test({"City": "Miami", "ListPrice": 600000}), f.test({"City": "Doral", "ListPrice": 1})
(True, False)
>>> f.eq_fields, f.or_terms
({'City': ['Miami']}, 2)
"""

from __future__ import annotations

import difflib
import functools
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from realtyframes.sandbox._errors import SandboxError

__all__ = ["Filter", "epoch", "parse_filter", "parse_orderby", "parse_select", "unknown_field"]

Record = Mapping[str, Any]
Pred = Callable[[Record], bool]

_TOKEN = re.compile(
    r"""\s*(?:
    (?P<string>'(?:[^']|'')*')
   |(?P<datetime>\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:\d\d))
   |(?P<date>\d{4}-\d\d-\d\d)
   |(?P<number>-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
   |(?P<typed>[A-Za-z_][\w.]*'(?:[^']|'')*')
   |(?P<name>[A-Za-z_][\w]*)
   |(?P<punct>[(),])
   )""",
    re.X,
)
_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "eq": operator.eq,
    "ne": operator.ne,
    "gt": operator.gt,
    "ge": operator.ge,
    "lt": operator.lt,
    "le": operator.le,
}
_FLIP = {"eq": "eq", "ne": "ne", "gt": "lt", "ge": "le", "lt": "gt", "le": "ge"}
_FUNCS: dict[str, Callable[[str, str], bool]] = {
    "contains": lambda a, b: b in a,
    "startswith": str.startswith,
    "endswith": str.endswith,
}
_NUMERIC = ("Edm.Decimal", "Edm.Int32", "Edm.Int64", "Edm.Double")


@functools.lru_cache(maxsize=200_000)
def epoch(text: str) -> float:
    """An ISO 8601 timestamp as seconds since the epoch (naive = UTC).

    >>> epoch("1970-01-02T00:00:00Z")
    86400.0
    """
    dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return (dt if dt.tzinfo else dt.replace(tzinfo=UTC)).timestamp()


def unknown_field(option: str, name: str, types: Mapping[str, str]) -> SandboxError:
    """A 400 for a field the resource does not have, naming the close matches."""
    near = difflib.get_close_matches(name, list(types), n=3)
    hint = f"; did you mean {', '.join(near)}?" if near else ""
    return SandboxError(400, f"{option}: unknown field {name!r}{hint}", param=option)


@dataclass
class _Lit:
    kind: str  # string, number, boolean, null, date, datetime
    value: Any
    text: str


@dataclass
class Filter:
    """A parsed ``$filter``: ``test(record)``; what it pins with ``eq`` and how many ``or`` terms."""

    test: Pred
    eq_fields: dict[str, list[Any]] = field(default_factory=dict)
    or_terms: int = 1


class _Parser:
    def __init__(self, text: str, types: Mapping[str, str]) -> None:
        self.text, self.types = text, types
        self.tokens: list[tuple[str, str, int]] = []
        pos = 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            m = _TOKEN.match(text, pos)
            if m is None or m.lastgroup is None:
                self.fail(f"unexpected text {text[pos:].strip()[:20]!r}", pos)
            assert m is not None and m.lastgroup is not None
            self.tokens.append((m.lastgroup, m.group(m.lastgroup), m.start(m.lastgroup)))
            pos = m.end()
        self.i = 0
        self.or_count = 0
        self.eq_fields: dict[str, list[Any]] = {}

    def fail(self, problem: str, pos: int | None = None) -> None:
        where = f" at position {pos}" if pos is not None else ""
        raise SandboxError(400, f"$filter: {problem}{where}", param="$filter")

    def peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> tuple[str, str, int]:
        tok = self.peek()
        if tok is None:
            self.fail("unexpected end of the expression")
        assert tok is not None
        self.i += 1
        return tok

    def word(self, *words: str) -> bool:
        tok = self.peek()
        if tok is not None and tok[0] == "name" and tok[1] in words:
            self.i += 1
            return True
        return False

    def expect(self, punct: str) -> None:
        kind, text, pos = self.take()
        if kind != "punct" or text != punct:
            self.fail(f"expected {punct!r}, got {text!r}", pos)

    def parse(self) -> Filter:
        pred = self.or_expr(top=True)
        tok = self.peek()
        if tok is not None:
            self.fail(f"unexpected token {tok[1]!r}", tok[2])
        return Filter(pred, self.eq_fields, self.or_count + 1)

    def or_expr(self, top: bool = False) -> Pred:
        parts = [self.and_expr(top)]
        while self.word("or"):
            self.or_count += 1
            parts.append(self.and_expr(False))
        if len(parts) == 1:
            return parts[0]
        if top:  # an eq under an or pins nothing
            self.eq_fields.clear()
        return lambda r: any(p(r) for p in parts)

    def and_expr(self, top: bool) -> Pred:
        parts = [self.unary(top)]
        while self.word("and"):
            parts.append(self.unary(top))
        return parts[0] if len(parts) == 1 else (lambda r: all(p(r) for p in parts))

    def unary(self, top: bool) -> Pred:
        if self.word("not"):
            inner = self.unary(False)
            return lambda r: not inner(r)
        tok = self.peek()
        if tok is not None and tok[0] == "punct" and tok[1] == "(":
            self.take()
            inner = self.or_expr(top=False)
            self.expect(")")
            return inner
        if tok is not None and tok[0] == "name" and tok[1] in _FUNCS:
            return self.function()
        return self.comparison(top)

    def function(self) -> Pred:
        name = self.take()[1]
        self.expect("(")
        fname, get = self.field()
        self.expect(",")
        lit = self.literal()
        self.expect(")")
        if self.types[fname] != "Edm.String" or lit.kind != "string":
            self.fail(f"{name} takes a string field and a string literal, got {fname}")
        fn, needle = _FUNCS[name], lit.value
        return lambda r: (v := get(r)) is not None and fn(v, needle)

    def field(self) -> tuple[str, Callable[[Record], Any]]:
        kind, text, pos = self.take()
        if kind != "name":
            self.fail(f"expected a field name, got {text!r}", pos)
        if text not in self.types:
            raise unknown_field("$filter", text, self.types)
        if self.types[text] == "Edm.DateTimeOffset":
            return text, lambda r: None if r.get(text) is None else epoch(r[text])
        return text, lambda r: r.get(text)

    def literal(self) -> _Lit:
        kind, text, pos = self.take()
        if kind == "string":
            return _Lit("string", text[1:-1].replace("''", "'"), text)
        if kind == "typed":
            return _Lit("string", text[text.index("'") + 1 : -1].replace("''", "'"), text)
        if kind == "number":
            return _Lit("number", float(text), text)
        if kind == "datetime":
            return _Lit("datetime", epoch(text), text)
        if kind == "date":
            return _Lit("date", text, text)
        if kind == "name" and text in ("true", "false", "null"):
            return _Lit(
                "null" if text == "null" else "boolean",
                {"true": True, "false": False}.get(text),
                text,
            )
        self.fail(f"expected a literal, got {text!r}", pos)
        raise AssertionError  # unreachable

    def check(self, fname: str, lit: _Lit) -> None:
        edm = self.types[fname]
        want = {
            "Edm.String": "string",
            "Edm.Boolean": "boolean",
            "Edm.DateTimeOffset": "datetime",
            "Edm.Date": "date",
        }.get(edm, "number" if edm in _NUMERIC else edm if edm.startswith("Edm.") else "string")
        # a field of an EnumType (not Edm.*) takes a string or an enum literal (its member name)
        if lit.kind not in (want, "null"):
            self.fail(f"{fname} is {edm}; {lit.text!r} is a {lit.kind} literal")

    def comparison(self, top: bool) -> Pred:
        tok = self.peek()
        if tok is not None and tok[0] == "name" and tok[1] not in ("true", "false", "null"):
            fname, get = self.field()
            _, op, pos = self.take()
            if op == "in":
                return self.in_list(fname, get)
            if op not in _OPS:
                self.fail(f"unknown operator {op!r}; allowed: {', '.join(_OPS)}, in", pos)
            lit = self.literal()
        else:
            lit = self.literal()
            _, op, pos = self.take()
            if op not in _OPS:
                self.fail(f"unknown operator {op!r}; allowed: {', '.join(_OPS)}", pos)
            op = _FLIP[op]
            fname, get = self.field()
        self.check(fname, lit)
        if lit.kind == "null" and op not in ("eq", "ne"):
            self.fail(f"{op} null is not defined; use eq null or ne null", pos)
        if op == "eq" and top:
            self.eq_fields.setdefault(fname, []).append(lit.value)
        fn, value = _OPS[op], lit.value
        if lit.kind == "null":
            return (lambda r: get(r) is None) if op == "eq" else (lambda r: get(r) is not None)
        if op == "ne":
            return lambda r: get(r) != value
        return lambda r: (v := get(r)) is not None and fn(v, value)

    def in_list(self, fname: str, get: Callable[[Record], Any]) -> Pred:
        self.expect("(")
        values = []
        while True:
            lit = self.literal()
            self.check(fname, lit)
            values.append(lit.value)
            if self.peek() is not None and self.peek()[1] == ",":  # type: ignore[index]
                self.take()
                continue
            break
        self.expect(")")
        chosen = frozenset(values)
        return lambda r: get(r) in chosen


def parse_filter(text: str, types: Mapping[str, str]) -> Filter:
    """``$filter`` text as a :class:`Filter` over records with fields ``types`` (name -> EDM type).

    >>> parse_filter("City eq", {"City": "Edm.String"})
    Traceback (most recent call last):
    ...
    realtyframes.sandbox._errors.SandboxError: 400 bad_request: $filter: unexpected end of the expression
    """
    if not text.strip():
        raise SandboxError(400, "$filter: empty; give an expression or omit it", param="$filter")
    return _Parser(text, types).parse()


def parse_orderby(text: str, types: Mapping[str, str]) -> list[tuple[str, bool]]:
    """``$orderby`` as (field, descending) pairs.

    >>> parse_orderby("ModificationTimestamp desc, ListingKey", {"ModificationTimestamp": "", "ListingKey": ""})
    [('ModificationTimestamp', True), ('ListingKey', False)]
    """
    out = []
    for part in text.split(","):
        words = part.split()
        if not words or len(words) > 2 or (len(words) == 2 and words[1] not in ("asc", "desc")):
            raise SandboxError(
                400,
                f"$orderby: cannot read {part.strip()!r}; allowed: Field [asc|desc], ...",
                param="$orderby",
            )
        if words[0] not in types:
            raise unknown_field("$orderby", words[0], types)
        out.append((words[0], len(words) == 2 and words[1] == "desc"))
    return out


def parse_select(text: str, types: Mapping[str, str]) -> list[str]:
    """``$select`` as field names (each known).

    >>> parse_select("City, ListPrice", {"City": "", "ListPrice": ""})
    ['City', 'ListPrice']
    """
    names = [s.strip() for s in text.split(",")]
    for name in names:
        if name not in types:
            raise unknown_field("$select", name, types)
    return names
