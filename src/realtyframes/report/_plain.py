"""Frames made plain for files: no index or ``attrs`` (:func:`plain_frame`), lists as JSON text
(:func:`csv_ready`), what every writer of the report and of ``realtyframes fetch`` starts from.

>>> plain_frame(pd.DataFrame({"a": [1]}, index=[7])).index.tolist()
[0]
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

__all__ = ["csv_ready", "csv_times", "plain_frame"]


def plain_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy with a RangeIndex and no ``attrs`` (what is written to files)."""
    out = frame.reset_index(drop=True)
    out.attrs = {}
    return out


def csv_ready(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy whose list values (phones, languages ...) are JSON arrays: CSV has no lists.

    >>> csv_ready(pd.DataFrame({"phones": [["1", "2"]]}))["phones"][0]
    '["1", "2"]'
    """

    def encode(value: object) -> object:
        if isinstance(value, np.ndarray):
            value = value.tolist()
        return json.dumps(list(value)) if isinstance(value, list | tuple) else value

    text = frame.copy()
    for column in text.columns:
        if text[column].dtype == object:
            text[column] = text[column].map(encode)
    return text


def csv_times(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (changed in place, returned) with its UTC timestamp columns as the text
    ``to_csv`` would write for them: the same bytes, without pandas' slow tz-aware path.

    >>> csv_times(pd.DataFrame({"t": pd.to_datetime(["2026-06-30 14:01"], utc=True)}))["t"][0]
    '2026-06-30 14:01:00+00:00'
    """
    for column in frame.columns:
        if (text := _utc_text(frame[column])) is not None:
            frame[column] = text
    return frame


def _utc_text(column: pd.Series) -> pd.Series | None:
    """A UTC timestamp column of whole seconds as the text ``to_csv`` writes for it
    (``2026-06-30 14:01:15+00:00``), formatted without the tz-aware per-value path (about 30x
    faster; the same bytes); None for other columns, and for sub-second values."""
    dtype = column.dtype
    if not isinstance(dtype, pd.DatetimeTZDtype) or str(dtype.tz) != "UTC":
        return None
    naive = column.dt.tz_localize(None)
    present = naive.notna()
    if (naive[present] != naive[present].dt.floor("s")).any():
        return None
    text = naive.dt.strftime("%Y-%m-%d %H:%M:%S+00:00")
    return text.astype(object).where(present, None)
