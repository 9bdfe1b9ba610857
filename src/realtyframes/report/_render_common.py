"""Shared pieces of the report's sections: labels of market keys, frame tables, metric kinds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from realtyframes.report._html import Cell
from realtyframes.report._html import render_table as _table

__all__ = ["frame_table", "label", "metric_kind"]


def label(key: Any) -> str:
    parts = key if isinstance(key, tuple) else (key,)
    return " / ".join("(missing)" if pd.isna(p) else str(p) for p in parts)


def frame_table(
    name: str, first: str, frame: pd.DataFrame, spec: Sequence[tuple[str, str, str]], caption: str
) -> str:
    """A table of ``frame`` by its index: one row per label, one column per ``(column, header,
    kind)`` of ``spec``."""
    rows: list[list[Cell | str]] = []
    for key, row in frame.iterrows():
        name_ = label(key)
        rows.append([name_, *[Cell(row[c], k, row=name_, col=c) for c, _, k in spec]])
    return _table(
        name,
        [first, *[h for _, h, _ in spec]],
        rows,
        caption=caption,
        numeric_header=[False] + [True] * len(spec),
    )


def metric_kind(metric: str) -> str:
    from realtyframes.plots import METRIC_LABELS

    kind = METRIC_LABELS[metric][2]
    return {"count": "count", "money": "money", "percent": "percent"}.get(kind, "number")
