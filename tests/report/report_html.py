"""Reading a rendered report back: every cell with its exact ``data-value``, images, links."""

from __future__ import annotations

import math
from html.parser import HTMLParser
from typing import Any

import pandas as pd


class _Collector(HTMLParser):
    """Cells with data-value (by table, row, col), images, scripts, links and resources."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[str] = []
        self.values: dict[tuple[str, str, str | None], tuple[str, str]] = {}
        self.images: list[dict[str, str | None]] = []
        self.tags: set[str] = set()
        self.urls: list[str] = []
        self._open: list[tuple[str, str, str | None, str]] = []
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.add(tag)
        for name in ("src", "href", "action", "srcset", "poster"):
            if a.get(name):
                self.urls.append(str(a[name]))
        if tag == "img":
            self.images.append(a)
        if "data-table" in a:
            self.tables.append(str(a["data-table"]))
        if "data-value" in a:
            self._open.append(
                (self.tables[-1], str(a.get("data-row")), a.get("data-col"), str(a["data-value"]))
            )
            self._text = []

    def handle_data(self, data: str) -> None:
        if self._open:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if self._open and tag in ("td", "div"):
            table, row, col, value = self._open.pop()
            text = "".join(self._text).strip()
            key = (table, row, col)
            assert key not in self.values, f"duplicate cell {key}"
            self.values[key] = (value, text)


def parse(html: str) -> _Collector:
    collector = _Collector()
    collector.feed(html)
    return collector


def same(shown: str, expected: Any) -> bool:
    """A data-value equals the recomputed value (exact for floats, as written by repr)."""
    if expected is None or (not isinstance(expected, str) and pd.isna(expected)):
        return shown == ""
    if isinstance(expected, str):
        return shown == expected
    return shown != "" and math.isclose(float(shown), float(expected), rel_tol=1e-12, abs_tol=0)
