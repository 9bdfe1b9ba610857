"""Frames made plain for files: no index or ``attrs`` (:func:`plain_frame`), lists as JSON text
(:func:`csv_ready`), what every writer of the report and of ``realtyframes fetch`` starts from.

>>> plain_frame(pd.DataFrame({"a": [1]}, index=[7])).index.tolist()
[0]
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

__all__ = ["csv_ready", "plain_frame"]


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
