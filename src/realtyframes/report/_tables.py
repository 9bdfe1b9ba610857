"""The tables a report shows, as frames, collected while it renders (for its workbook).

Every table of the HTML goes through :func:`realtyframes.report._html.render_table` (and the
headline through ``render_cards``); inside :func:`collecting` each is also recorded here as a
frame: the shown columns, the exact values (a value hidden below the minimum sample is missing),
and, in ``attrs["kinds"]``, each cell's kind (count, money, percent ...) for its number format.
So the workbook holds what the page shows, from one declaration of each table.

>>> with collecting() as tables:
...     record("t", ["Metric", "Value"], [["Homes sold", (12, "count")]])
>>> tables["t"].iloc[0].tolist(), tables["t"].attrs["kinds"]
(['Homes sold', 12], [['text', 'count']])
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import pandas as pd

__all__ = ["collecting", "record"]

_COLLECTED: ContextVar[dict[str, pd.DataFrame] | None] = ContextVar("tables", default=None)


@contextmanager
def collecting() -> Iterator[dict[str, pd.DataFrame]]:
    """Record every table rendered inside the block, by table id, in order."""
    tables: dict[str, pd.DataFrame] = {}
    token = _COLLECTED.set(tables)
    try:
        yield tables
    finally:
        _COLLECTED.reset(token)


def record(table_id: str, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Record one table (when collecting): ``rows`` hold plain text (row labels) or
    ``(value, kind)`` pairs."""
    tables = _COLLECTED.get()
    if tables is None:
        return
    values = [[c[0] if isinstance(c, tuple) else c for c in row] for row in rows]
    kinds = [[c[1] if isinstance(c, tuple) else "text" for c in row] for row in rows]
    frame = pd.DataFrame(values, columns=list(header), dtype=object)
    frame.attrs["kinds"] = kinds
    tables[table_id] = frame
