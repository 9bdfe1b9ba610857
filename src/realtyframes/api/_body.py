"""Checking a 2xx body where it is parsed: a broken one (empty, not JSON, cut short) raises
:class:`BrokenBody`, retried as a ``TransientAnswer``, then a ``BadResponseError``.

A raw body (pages, details: the caller parses it) is not decoded when avoidable (~0.25 ms of the
GIL per 50 kB page): :func:`whole_document` proves from its brackets outside strings that it is
one whole JSON value, which a body cut short never is; when it cannot tell, the body is decoded.

>>> whole_document(b'{"total": 2, "listings": [{"ListingId": "A1"}]}')
True
>>> whole_document(b'{"total": 2, "listings": [{"ListingId": "A1", "Media": [{"Order": 1}]}')
False
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

#: Every byte but the ones that delimit structure: ``translate`` deletes them (at C speed).
_NOT_STRUCTURE = bytes(c for c in range(256) if c not in b'"\\{}[]')
#: Nesting levels the scan checks (one pass each) before it leaves a body to the decoder.
_MAX_DEPTH = 32


class BrokenBody(Exception):
    """A 2xx body that is not what was asked for (retried like a transient error)."""


def looks_like_json(content: bytes) -> bool:
    """Cheap check of a raw body: a JSON object or array, not cut short at its end.

    >>> looks_like_json(b"<html>maintenance</html>")
    False
    """
    head = content[:64].lstrip()
    tail = content[-64:].rstrip()
    if not head or not tail:
        return False
    return (head[:1], tail[-1:]) in ((b"{", b"}"), (b"[", b"]"))


def whole_document(content: bytes) -> bool | None:
    """Whether ``content`` is one whole JSON object or array, from its brackets outside strings:
    True, False (cut short, or not one value), or None when a string holds a bracket, a quote or
    a backslash (decode instead). Strings reduce to ``""``; the rest must balance.

    >>> whole_document(b'[{"a": 1}, {"b": [2, 3]}]'), whole_document(b'{"a": 1}{"b": 2}')
    (True, False)
    >>> whole_document(b'{"remarks": "a {rare} string"}') is None
    True
    """
    reduced = content.translate(None, _NOT_STRUCTURE)
    if b"\\" in reduced:
        return None
    skeleton = reduced.replace(b'""', b"")
    if b'"' in skeleton:
        return None
    if len(skeleton) < 2 or skeleton[:1] + skeleton[-1:] not in (b"{}", b"[]"):
        return False
    inner = skeleton[1:-1]  # balanced, so the first bracket closes at the very end
    for _ in range(_MAX_DEPTH):  # each pass removes one level of nesting
        if not inner:
            return True
        shorter = inner.replace(b"{}", b"").replace(b"[]", b"")
        if len(shorter) == len(inner):
            return False
        inner = shorter
    return None if inner else True  # deeper than any page: let the decoder decide


def body_problem(content: bytes, exc: Exception | None) -> str:
    """What is wrong with a broken body, for the error message (its first bytes shown)."""
    if not content.strip():
        return "empty body"
    start = content[:60].decode("utf-8", errors="replace").strip()
    where = f" ({exc})" if exc is not None else ""
    return f"not a whole JSON document{where}; {len(content)} bytes starting {start[:40]!r}"


def _loads(content: bytes) -> Any:
    try:
        return json.loads(content)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BrokenBody(body_problem(content, exc)) from None


def check_body(content: bytes, *, raw: bool, parse: Callable[[bytes], Any] | None) -> Any:
    """A 2xx body as the caller asked for it: decoded JSON, the raw bytes (``raw``), or
    ``parse(content)``; raises :class:`BrokenBody` (a ``ValueError`` from ``parse`` too)."""
    if not raw:
        return _loads(content)
    if not looks_like_json(content):
        raise BrokenBody(body_problem(content, None))
    whole = whole_document(content)
    if whole is None:  # a body cut right after an inner "}" still ends with "}": decode it
        _loads(content)
    elif not whole:
        raise BrokenBody(body_problem(content, ValueError("its brackets do not close at its end")))
    if parse is None:
        return content
    try:
        return parse(content)
    except ValueError as exc:
        raise BrokenBody(f"{type(exc).__name__}: {exc}"[:300]) from None
