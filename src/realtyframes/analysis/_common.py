"""Input handling shared by the analysis functions.

Every analysis function accepts the loaders' typed frames *and* looser frames (read from CSV, with
strings for numbers and timestamps; read back from Parquet, possibly with pyarrow-backed dtypes).
This module:

- checks that the columns a function needs are there (:class:`MissingColumnsError`, naming them);
- reads number and timestamp columns into ``float64`` / ``datetime64[us, UTC]``, raising
  :class:`ColumnTypeError` (naming the column and showing bad values) instead of silently turning
  unreadable values into NaN;
- splits listings into the sale and rent segments (:data:`SALE_TYPES`, :data:`RENT_TYPES`).

Exception tree::

    ValueError
     └── AnalysisInputError            bad input to an analysis function (argument or frame)
          ├── MissingColumnsError      (also a KeyError) a needed column is absent
          ├── ColumnTypeError          a column's values cannot be read as numbers / timestamps
          └── FrameTypeError           (also a TypeError) a frame argument is not a frame
"""

from __future__ import annotations

import datetime as dt
import math
import numbers
import re
from collections.abc import Iterable, Sequence
from typing import Literal

import numpy as np
import pandas as pd

from realtyframes._spec import RENT_TYPES, SALE_SEGMENT
from realtyframes.errors import AnalysisInputError, ColumnTypeError, MissingColumnsError

#: Property types summarised as the sale segment. The spec lists Residential, Residential Income,
#: Land, Commercial Sale and Business Opportunity; it leaves ``Land/Boat Docks`` unclassified. We
#: classify it as *sale*: it is the MLS's class for land and boat slips offered for sale (lease
#: classes are the ones named "Lease"), and its prices are sale prices. See docs/metrics.md.
SALE_TYPES: tuple[str, ...] = SALE_SEGMENT

Segment = Literal["sale", "rent", "both"]
#: Allowed values of the ``segment`` argument.
SEGMENTS: tuple[str, ...] = ("sale", "rent", "both")

_TS_UNIT = "datetime64[us, UTC]"
_DATE_ONLY = re.compile(r"^\s*\d{4}-\d{2}-\d{2}\s*$")


class FrameTypeError(AnalysisInputError, TypeError):
    """A frame argument is not a frame of a supported engine (also a ``TypeError``)."""


def check_frame(obj: object, frame: str, func: str) -> pd.DataFrame:
    """Return ``obj`` if it is a DataFrame, else raise a TypeError naming the argument."""
    if not isinstance(obj, pd.DataFrame):
        raise TypeError(f"{func}(): `{frame}` must be a pandas DataFrame, got {type(obj).__name__}")
    return obj


def check_columns(df: pd.DataFrame, columns: Iterable[str], frame: str, func: str) -> None:
    """Raise :class:`MissingColumnsError` naming every needed column absent from ``df``."""
    missing = [c for c in dict.fromkeys(columns) if c not in df.columns]
    if missing:
        raise MissingColumnsError(missing, frame=frame, func=func, available=df.columns)


def normalize_by(by: str | Sequence[str], func: str) -> list[str]:
    """``by`` as a non-empty list of column names."""
    keys = [by] if isinstance(by, str) else list(by)
    if not keys or not all(isinstance(k, str) for k in keys):
        raise AnalysisInputError(
            f"{func}(): `by` must be a column name or a list of column names, got {by!r}"
        )
    if len(set(keys)) != len(keys):
        raise AnalysisInputError(f"{func}(): `by` names a column twice: {keys!r}")
    return keys


def check_segment(segment: object, func: str) -> str:
    """Validate the ``segment`` argument."""
    if not isinstance(segment, str) or segment not in SEGMENTS:
        raise AnalysisInputError(
            f"{func}(): `segment` must be one of {', '.join(map(repr, SEGMENTS))}, got {segment!r}"
        )
    return segment


def segment_labels(property_type: pd.Series) -> pd.Series:
    """'sale' / 'rent' per row from PropertyType; NaN where the type is in neither list."""
    values = np.full(len(property_type), np.nan, dtype=object)
    values[isin(property_type, SALE_TYPES)] = "sale"
    values[isin(property_type, RENT_TYPES)] = "rent"
    return pd.Series(values, index=property_type.index, name="segment", dtype=object)


def segment_mask(property_type: pd.Series, segment: str) -> np.ndarray:
    """Rows of ``segment`` ('both' = every row that is sale or rent)."""
    if segment == "sale":
        return isin(property_type, SALE_TYPES)
    if segment == "rent":
        return isin(property_type, RENT_TYPES)
    return isin(property_type, SALE_TYPES + RENT_TYPES)


def isin(s: pd.Series, values: Iterable[object]) -> np.ndarray:
    """``s.isin(values)`` as a plain numpy bool array, whatever the dtype (NA counts as False)."""
    if isinstance(s.dtype, pd.CategoricalDtype):  # per category, then by code (-1, NA: False)
        hit = np.append(np.asarray(s.cat.categories.isin(list(values)), dtype=bool), False)
        return hit[s.cat.codes.to_numpy()]
    out = s.isin(list(values))
    return np.asarray(out.fillna(False) if out.dtype != bool else out, dtype=bool)


def as_key(s: pd.Series) -> pd.Series:
    """A grouping column with plain values: categoricals and pyarrow strings become ``str``."""
    dtype = s.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return s.astype(dtype.categories.dtype)
    if isinstance(dtype, pd.ArrowDtype):
        import pyarrow as pa

        t = dtype.pyarrow_dtype
        if pa.types.is_dictionary(t) or pa.types.is_string(t) or pa.types.is_large_string(t):
            return s.astype("str")
    return s


def _bad_examples(s: pd.Series, bad: np.ndarray) -> str:
    shown = list(dict.fromkeys(s[bad].astype(str).tolist()))[:5]
    return ", ".join(repr(v) for v in shown)


def to_float(s: pd.Series, column: str, func: str) -> pd.Series:
    """Column as ``float64`` with NaN for missing values.

    Numeric dtypes (numpy, nullable, pyarrow) are converted directly; text (from CSV) is parsed,
    empty strings count as missing. Text that is not a number raises :class:`ColumnTypeError`.
    """
    if pd.api.types.is_bool_dtype(s.dtype):
        raise ColumnTypeError(f"{func}(): column {column!r} holds booleans, expected numbers")
    if pd.api.types.is_numeric_dtype(s.dtype):
        return s.astype("float64")
    if isinstance(s.dtype, pd.CategoricalDtype):
        s = s.astype(s.dtype.categories.dtype)
    text = s.astype("str")
    blank = s.isna().to_numpy(dtype=bool) | (text.str.strip() == "").to_numpy(dtype=bool)
    parsed = pd.to_numeric(text.where(~blank), errors="coerce").astype("float64")
    bad = parsed.isna().to_numpy() & ~blank
    if bad.any():
        raise ColumnTypeError(
            f"{func}(): column {column!r} must hold numbers; cannot read {_bad_examples(s, bad)}"
        )
    return pd.Series(parsed.to_numpy(), index=s.index, name=s.name)


def to_utc(s: pd.Series, column: str, func: str) -> pd.Series:
    """Column as ``datetime64[us, UTC]``.

    Accepts tz-aware timestamps (converted to UTC), naive timestamps and dates (taken as UTC),
    ISO 8601 text (CSV), and pyarrow timestamp / date types. Unreadable text raises
    :class:`ColumnTypeError`.
    """
    dtype = s.dtype
    try:
        if isinstance(dtype, pd.DatetimeTZDtype):
            out = s.dt.tz_convert("UTC")
        elif pd.api.types.is_datetime64_dtype(dtype):
            out = s.dt.tz_localize("UTC")
        elif isinstance(dtype, pd.ArrowDtype):
            out = pd.to_datetime(s, utc=True)
        else:
            if isinstance(dtype, pd.CategoricalDtype):
                s = s.astype(dtype.categories.dtype)
            obj = s.astype(object)
            blank = obj.isna().to_numpy(dtype=bool) | (
                obj.astype("str").str.strip() == ""
            ).to_numpy(dtype=bool)
            try:
                out = pd.to_datetime(obj.where(~blank), utc=True, format="ISO8601")
            except (ValueError, TypeError, OverflowError):
                loose = pd.to_datetime(
                    obj.where(~blank), utc=True, format="ISO8601", errors="coerce"
                )
                bad = loose.isna().to_numpy() & ~blank
                raise ColumnTypeError(
                    f"{func}(): column {column!r} must hold ISO 8601 timestamps or dates; "
                    f"cannot read {_bad_examples(s, bad)}"
                ) from None
    except ColumnTypeError:
        raise
    except (ValueError, TypeError, OverflowError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ColumnTypeError(
            f"{func}(): column {column!r} must hold timestamps or dates ({first})"
        ) from None
    return out.astype(_TS_UNIT)


def naive_utc(s: pd.Series) -> np.ndarray:
    """A ``datetime64[us, UTC]`` Series as a naive UTC ``datetime64[us]`` numpy array (fast)."""
    return s.dt.tz_convert(None).to_numpy()


def naive_bound(ts: pd.Timestamp) -> np.datetime64:
    """A UTC Timestamp as a naive UTC ``numpy.datetime64`` for comparing with :func:`naive_utc`."""
    return ts.tz_convert(None).as_unit("us").to_datetime64()


def to_timestamp(
    value: object, param: str, func: str, *, end_of_day: bool = False
) -> pd.Timestamp | None:
    """An argument such as ``as_of`` or ``since`` as a UTC Timestamp (None stays None).

    Naive values are taken as UTC. With ``end_of_day=True`` a bare date (``datetime.date`` or a
    'YYYY-MM-DD' string) means the end of that day (the last microsecond), so the day is included.
    """
    if value is None:
        return None
    date_only = (isinstance(value, dt.date) and not isinstance(value, dt.datetime)) or (
        isinstance(value, str) and _DATE_ONLY.match(value) is not None
    )
    try:
        ts = pd.Timestamp(value)  # type: ignore[arg-type]
    except (ValueError, TypeError) as exc:
        raise AnalysisInputError(
            f"{func}(): `{param}` must be a timestamp, date or ISO 8601 string, got {value!r} ({exc})"
        ) from None
    if ts is pd.NaT:
        raise AnalysisInputError(f"{func}(): `{param}` must be a timestamp, got {value!r}")
    ts = ts.tz_localize("UTC") if ts.tz is None else ts.tz_convert("UTC")
    if end_of_day and date_only:
        ts = ts + pd.Timedelta(days=1) - pd.Timedelta(microseconds=1)
    return ts.as_unit("us")


def check_number(
    value: object,
    param: str,
    func: str,
    *,
    low: float,
    high: float | None = None,
    low_inclusive: bool = True,
    high_inclusive: bool = False,
    hint: str = "",
) -> float:
    """Validate a real-number argument within a range; the error names the range."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if ok:
        x = float(value)  # type: ignore[arg-type]
        ok = not math.isnan(x)
        ok = ok and (x >= low if low_inclusive else x > low)
        if high is not None:
            ok = ok and (x <= high if high_inclusive else x < high)
    if not ok:
        lo = "[" if low_inclusive else "("
        hi = ("]" if high_inclusive else ")") if high is not None else ")"
        rng = f"{lo}{low:g}, {'inf' if high is None else f'{high:g}'}{hi}"
        raise AnalysisInputError(
            f"{func}(): `{param}` must be a number in {rng}{hint}, got {value!r}"
        )
    return float(value)  # type: ignore[arg-type]


def safe_div(num: pd.Series | np.ndarray, den: pd.Series | np.ndarray) -> np.ndarray:
    """num / den as float, NaN where den is 0 or missing (never inf, never a warning)."""
    n = np.asarray(num, dtype="float64")
    d = np.asarray(den, dtype="float64")
    out = np.full(np.broadcast(n, d).shape, np.nan)
    ok = np.isfinite(d) & (d != 0)
    np.divide(n, d, out=out, where=ok)
    return out
