"""Excel workbooks: one sheet per frame, typed columns, frozen headers, number formats.

Analysts forward workbooks. :func:`write_workbook` writes frames (and, for a report, a
"Definitions" sheet of every metric, from ``docs/metrics.md``) into one ``.xlsx`` with openpyxl,
atomically. Excel has no time zones, no lists and no categories, so :func:`excel_ready` states how
each is written: timestamps as UTC wall time (the header says ``(UTC)``), lists as JSON text,
categories as text. ``pandas.read_excel`` reads the workbook back to the same values.

>>> excel_ready(pd.DataFrame({"t": pd.to_datetime(["2026-06-30 12:00"], utc=True)})).columns.tolist()
['t (UTC)']
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from realtyframes._files import PRIVATE_MODE, atomic_path
from realtyframes.report._plain import csv_ready, plain_frame

__all__ = [
    "KIND_FORMATS",
    "SHEET_NAME_MAX",
    "excel_ready",
    "number_format",
    "sheet_names",
    "write_workbook",
]

#: Excel's limit on a sheet name's length.
SHEET_NAME_MAX = 31
_BAD_SHEET_CHARS = re.compile(r"[\[\]:*?/\\]")
_MONEY = re.compile(r"(price|amount|fee|ppsf|tax)", re.I)
_SHARE = re.compile(r"(pct|rate|share|_to_list|ratio)", re.I)
_UTC = " (UTC)"


def number_format(column: str, dtype: object) -> str | None:
    """The Excel number format of a column, from its name and dtype (None: Excel's default).

    >>> number_format("median_sale_price", "float64"), number_format("drop_pct", "float64")
    ('"$"#,##0', '0.0%')
    >>> number_format("homes_sold", "Int64"), number_format("CloseDate (UTC)", "datetime64[us]")
    ('#,##0', 'yyyy-mm-dd hh:mm')
    """
    kind = pd.api.types
    if kind.is_datetime64_any_dtype(dtype):
        return "yyyy-mm-dd hh:mm"
    if kind.is_bool_dtype(dtype) or not kind.is_numeric_dtype(dtype):
        return None
    if _SHARE.search(column):
        return "0.0%"
    if _MONEY.search(column):
        return '"$"#,##0'
    if kind.is_integer_dtype(dtype):
        return "#,##0"
    return "#,##0.00"


def excel_ready(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy Excel can hold: tz-aware timestamps as naive UTC (column renamed ``... (UTC)``),
    lists as JSON text, categories and other objects as text."""
    out = csv_ready(plain_frame(frame))
    renames = {}
    for column in out.columns:
        values = out[column]
        if isinstance(values.dtype, pd.DatetimeTZDtype):
            out[column] = values.dt.tz_convert("UTC").dt.tz_localize(None)
            renames[column] = f"{column}{_UTC}"
        elif isinstance(values.dtype, pd.CategoricalDtype) or values.dtype == object:
            out[column] = values.astype("string")
    return out.rename(columns=renames)


def sheet_names(names: list[str]) -> list[str]:
    """Unique sheet names Excel accepts (31 characters, none of ``[]:*?/\\``).

    >>> sheet_names(["analytics-breakdowns-by-referrer-and-utm", "a/b", "a:b"])
    ['analytics-breakdowns-by-referre', 'a_b', 'a_b 2']
    """
    out: list[str] = []
    for name in names:
        base = _BAD_SHEET_CHARS.sub("_", str(name))[:SHEET_NAME_MAX] or "sheet"
        candidate, n = base, 1
        while candidate in out:
            n += 1
            suffix = f" {n}"
            candidate = base[: SHEET_NAME_MAX - len(suffix)] + suffix
        out.append(candidate)
    return out


def write_workbook(
    frames: Mapping[str, pd.DataFrame],
    path: str | os.PathLike[str],
    *,
    definitions: pd.DataFrame | None = None,
    private: bool = False,
    source: str | None = None,
) -> Path:
    """Write ``frames`` as one workbook (a sheet per frame, in order; then "Definitions");
    ``private``: the file is created ``0600`` (a sheet of personal data); ``source``: where the
    data came from, in the workbook's properties (title and description).

    >>> write_workbook({"listings": client.listings(City="Miami")}, "miami.xlsx")  # doctest: +SKIP
    PosixPath('miami.xlsx')
    """
    from openpyxl import Workbook
    from openpyxl.utils import get_column_letter

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    book = Workbook()
    book.remove(book.active)
    book.properties.creator = "realtyframes"
    if source is not None:
        book.properties.title = f"realtyframes data from {source}"
        book.properties.description = f"realtyframes.source: {source}"
    items = list(frames.items())
    if definitions is not None:
        items.append(("Definitions", definitions))
    for sheet_name, (_, frame) in zip(sheet_names([n for n, _ in items]), items, strict=True):
        sheet = book.create_sheet(sheet_name)
        if "kinds" in frame.attrs:  # a table the report shows: each cell in its own format
            _shown_table(sheet, frame)
            continue
        data = excel_ready(frame)
        sheet.append([str(c) for c in data.columns])
        for row in data.itertuples(index=False):
            sheet.append([None if _missing(v) else _cell(v) for v in row])
        sheet.freeze_panes = "A2"
        for i, column in enumerate(data.columns, start=1):
            letter = get_column_letter(i)
            fmt = number_format(str(column), data[column].dtype)
            if fmt is not None:
                for cell in sheet[letter][1:]:
                    cell.number_format = fmt
            width = max([len(str(column)), *(len(str(v)) for v in data[column].head(200))])
            sheet.column_dimensions[letter].width = min(60, max(8, width + 2))
    with atomic_path(target, mode=PRIVATE_MODE if private else None) as tmp:
        book.save(tmp)
    return target


#: The number format of each kind of value the report shows (``report._html.KINDS``).
KIND_FORMATS: dict[str, str | None] = {
    "count": "#,##0",
    "days": "#,##0",
    "money": '"$"#,##0',
    "percent": "0.0%",
    "number": "#,##0.0",
    "date": "yyyy-mm-dd",
    "text": None,
}


def _shown_table(sheet: Any, frame: pd.DataFrame) -> None:
    """A table of the report as the page shows it: its header, each cell's exact value (blank
    where the page shows "—") in the number format of its kind."""
    from openpyxl.utils import get_column_letter

    sheet.append([str(c) for c in frame.columns])
    kinds = frame.attrs["kinds"]
    for values, row_kinds in zip(frame.itertuples(index=False), kinds, strict=True):
        cells = []
        for value in values:
            if isinstance(value, pd.Timestamp) and value.tz is not None:
                value = value.tz_convert("UTC").tz_localize(None)  # Excel has no time zones
            cells.append(None if _missing(value) else _cell(value))
        sheet.append(cells)
        for cell, kind in zip(sheet[sheet.max_row], row_kinds, strict=True):
            fmt = KIND_FORMATS.get(kind)
            if fmt is not None:
                cell.number_format = fmt
    sheet.freeze_panes = "B2"
    for i, column in enumerate(frame.columns, start=1):
        width = max([len(str(column)), *(len(str(v)) for v in frame.iloc[:200, i - 1])])
        sheet.column_dimensions[get_column_letter(i)].width = min(60, max(8, width + 2))


def _missing(value: object) -> bool:
    try:
        return bool(pd.isna(value))  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return False


def _cell(value: object) -> object:
    if isinstance(value, pd.Timestamp):
        return value.to_pydatetime()
    item = getattr(value, "item", None)  # numpy scalars -> Python
    return item() if callable(item) else value
