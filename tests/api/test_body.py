"""The check of a raw 2xx body (``api/_body.py``): a body cut short anywhere is broken, a whole
one passes, without decoding it when its brackets tell (examples and fuzzing).

Retrying a broken body, and the error that names the request, are tested in test_retry.py and
against the sandbox's truncate fault in test_faults.py.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from realtyframes.api._body import BrokenBody, check_body, whole_document

PAGE = json.dumps(
    {
        "total": 3,
        "offset": 0,
        "limit": 50,
        "listings": [
            {"ListingId": "A1", "coordinates": {"lat": 25.7, "lng": -80.2}, "Media": []},
            {"ListingId": "A2", "Media": [{"Order": 1, "MediaURL": "https://x/1.jpg"}]},
            {"ListingId": "A3", "PublicRemarks": "pool, 3/2, \u00e9t\u00e9", "Pool": True},
        ],
    },
    separators=(",", ":"),
    ensure_ascii=False,
).encode()

#: JSON values: text may hold brackets, quotes, backslashes and non-ASCII characters.
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=25,
)
DOCUMENTS = st.one_of(
    st.lists(VALUES, max_size=4), st.dictionaries(st.text(max_size=6), VALUES, max_size=4)
)


def _encode(value: Any, compact: bool, ascii_only: bool) -> bytes:
    separators = (",", ":") if compact else (", ", ": ")
    return json.dumps(value, separators=separators, ensure_ascii=ascii_only).encode()


def test_a_whole_page_passes_without_decoding_and_every_cut_is_broken() -> None:
    assert whole_document(PAGE) is True
    assert check_body(PAGE, raw=True, parse=None) == PAGE
    for end in range(1, len(PAGE)):
        with pytest.raises(BrokenBody):
            check_body(PAGE[:end], raw=True, parse=None)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"a": 1}', True),
        (b'  [1, [2, {"b": []}], {}]\n', True),
        (b'{"a": 1}{"b": 2}', False),  # two documents
        (b'[{"a": 1}]]', False),
        (b'{"a": [}]', False),  # crossed brackets
        (b'{"total": 2, "listings": [{"ListingId": "A1", "Media": [{"Order": 1}]}', False),
        (b'{"remarks": "a {rare} string"}', None),  # a bracket inside a string: decode instead
        (b'{"remarks": "say \\"hi\\""}', None),  # an escape: decode instead
        (b"[" * 40 + b"]" * 40, None),  # deeper than the scan goes: decode instead
        (b"[" * 30 + b"]" * 30, True),
    ],
)
def test_whole_document_examples(body: bytes, expected: bool | None) -> None:
    assert whole_document(body) is expected


def test_undecided_bodies_are_decoded_so_a_cut_one_is_still_broken() -> None:
    body = b'{"listings": [{"ListingId": "A1", "PublicRemarks": "{open} house"}]}'
    assert check_body(body, raw=True, parse=None) == body
    with pytest.raises(BrokenBody):
        check_body(body[:-2], raw=True, parse=None)  # ends with "}" after the cut
    with pytest.raises(BrokenBody):
        check_body(b'{"a": "x"}{"b": "}"}', raw=True, parse=None)


@settings(max_examples=300, deadline=None)
@given(DOCUMENTS, st.booleans(), st.booleans())
def test_every_whole_document_passes(value: Any, compact: bool, ascii_only: bool) -> None:
    body = _encode(value, compact, ascii_only)
    assert whole_document(body) in (True, None)
    assert check_body(body, raw=True, parse=None) == body
    assert check_body(body, raw=False, parse=None) == value


@settings(max_examples=300, deadline=None)
@given(DOCUMENTS, st.booleans(), st.booleans(), st.data())
def test_every_cut_document_is_broken(
    value: Any, compact: bool, ascii_only: bool, data: st.DataObject
) -> None:
    body = _encode(value, compact, ascii_only)
    end = data.draw(st.integers(min_value=0, max_value=len(body) - 1))
    assert whole_document(body[:end]) is not True
    with pytest.raises(BrokenBody):
        check_body(body[:end], raw=True, parse=None)


def test_parse_errors_are_broken_bodies() -> None:
    def parse(body: bytes) -> int:
        raise ValueError("not a page")

    with pytest.raises(BrokenBody, match="ValueError: not a page"):
        check_body(PAGE, raw=True, parse=parse)
    assert check_body(PAGE, raw=True, parse=len) == len(PAGE)
