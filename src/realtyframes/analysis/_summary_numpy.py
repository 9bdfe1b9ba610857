"""The market metrics of :mod:`.market` over a pandas frame, in numpy: the same table as the
narwhals kernel's :func:`~._kernel.window_rows` then :func:`~._kernel.aggregate`, with the same
definitions (docs/metrics.md), in fewer passes.

The flags are numpy masks (timestamps compared as integers in their own unit, to the microsecond
as :func:`~._kernel.after` does), only the rows in a population are grouped (one factorisation of
their keys), the counts and means are ``bincount`` sums and each median reads one sort of its
population's values (no per-column group-by). The engines keep the narwhals kernel
(docs/scale.md); tests/analysis/test_engines.py holds both to the same numbers.

>>> import numpy as np
>>> group_medians(np.array([0, 0, 1, 0]), np.array([3.0, 1.0, 5.0, 2.0]), 2).tolist()
[2.0, 5.0]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from realtyframes.analysis._common import as_key, segment_labels, segment_mask
from realtyframes.analysis._kernel import COUNTS, MEANS, MEDIANS, NUMBERS

__all__ = ["group_medians", "pandas_base", "window_aggregate"]

_FACTOR = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}


def pandas_base(frame: pd.DataFrame, keys: Sequence[str], segment: str) -> pd.DataFrame:
    """:func:`~._kernel.base_frame` of a pandas frame read by :func:`~._kernel.frame_of` (numbers
    float64, timestamps datetime64), in numpy: the same columns, no copy of a typed column."""

    def status(value: str) -> np.ndarray:
        return (frame["StandardStatus"] == value).to_numpy(dtype=bool, na_value=False)

    kind = frame["PropertyType"]
    label = {"segment": segment_labels(kind).astype("str")} if segment == "both" else {}
    columns = {
        **label,
        **{k: frame[k] for k in keys},
        "_in": segment_mask(kind, segment),
        "_is_active": status("Active"),
        "_is_pending": status("Pending"),
        "_is_closed": status("Closed"),
        **{c: frame[c] for c in ("OriginalEntryTimestamp", "MajorChangeTimestamp", "CloseDate")},
        **{c: frame[c] for c in NUMBERS},
    }
    return pd.DataFrame(columns, copy=False)


def group_medians(codes: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """The median of ``values`` per group ``codes`` (0 .. n-1; NaN values skipped, NaN for a group
    without values): the mean of the two middle values, as pandas takes it."""
    out = np.full(n, np.nan)
    keep = ~np.isnan(values)
    codes, values = codes[keep], values[keep]
    if not len(values):
        return out
    order = np.argsort(values)
    small = codes.astype(np.int16 if n < 2**15 else np.int64)[order]
    order = order[np.argsort(small, kind="stable")]  # by group, values ascending in each
    ranked = values[order]
    counts = np.bincount(codes, minlength=n)
    has = counts > 0
    starts = (np.cumsum(counts) - counts)[has]
    size = counts[has]
    out[has] = (ranked[starts + (size - 1) // 2] + ranked[starts + size // 2]) / 2
    return out


def _bound(ts: pd.Timestamp, unit: str) -> int:
    """The first integer time of ``unit`` after ``ts`` read to the microsecond
    (:func:`~._kernel.after`: a finer time counts as its microsecond)."""
    return -(-(ts + pd.Timedelta(microseconds=1)).value // _FACTOR[unit])


def _within(stamps: pd.Series, start: pd.Timestamp | None, stop: pd.Timestamp | None) -> np.ndarray:
    """``start < stamps <= stop`` to the microsecond (a missing time: False), in one unsigned
    comparison: ``low <= t < high`` is ``t - low < high - low`` with the difference unsigned."""
    if start is None or stop is None:
        return np.zeros(len(stamps), dtype=bool)
    unit = stamps.dt.unit
    low, high = _bound(start, unit), _bound(stop, unit)
    if high <= low:
        return np.zeros(len(stamps), dtype=bool)
    shifted = stamps.array.asi8 - np.int64(low)  # NaT (the smallest int64) wraps above the range
    return shifted.view(np.uint64) < np.uint64(high - low)


def _flags(
    base: pd.DataFrame, start: pd.Timestamp | None, stop: pd.Timestamp | None
) -> dict[str, np.ndarray]:
    """Per row of :func:`~._kernel.base_frame`: active, new, pending, sold (the populations)."""

    def flag(column: str) -> np.ndarray:
        return np.asarray(base[column], dtype=bool)

    segment = flag("_in")
    return {
        "active": segment & flag("_is_active"),
        "new": segment & _within(base["OriginalEntryTimestamp"], start, stop),
        "pending": segment
        & flag("_is_pending")
        & _within(base["MajorChangeTimestamp"], start, stop),
        "sold": segment & flag("_is_closed") & _within(base["CloseDate"], start, stop),
    }


def _inputs(
    base: pd.DataFrame,
    rows: np.ndarray,
    flags: dict[str, np.ndarray],
    ratio_range: tuple[float, float],
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per metric input (:func:`~._kernel.value_inputs`): its population mask and values over
    the selected ``rows``."""

    def number(column: str) -> np.ndarray:
        values = base[column]
        if values.dtype == "float64":  # typed already: no copy before the rows are taken
            return values.to_numpy()[rows]
        return values.to_numpy(dtype="float64", na_value=np.nan)[rows]

    active, sold = flags["active"][rows], flags["sold"][rows]
    price, close, area = number("ListPrice"), number("ClosePrice"), number("LivingArea")
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = close / price
        low, high = ratio_range
        rated = sold & (price != 0) & (ratio >= low) & (ratio <= high)
        dropped = active & (number("PreviousListPrice") > price)
        sized = area > 0
        return {
            "dropped": (dropped, dropped),
            "list_price": (active, price),
            "list_ppsf": (active & sized, price / area),
            "sale_price": (sold, close),
            "sale_ppsf": (sold & sized, close / area),
            "dom": (sold, number("DaysOnMarket")),
            "ratio": (rated, ratio),
            "above": (rated, (ratio > 1).astype("float64")),
        }


def _groups(
    base: pd.DataFrame, names: list[str], rows: np.ndarray
) -> tuple[np.ndarray, pd.DataFrame]:
    """The group code of each selected row and the groups' keys (plain values: ``as_key``)."""
    if not names:
        return np.zeros(len(rows), dtype=np.int64), pd.DataFrame(index=range(1))
    if len(names) == 1:  # one key: a factorisation (missing values a group of their own)
        codes, uniques = pd.factorize(base[names[0]].iloc[rows], use_na_sentinel=False)
        table = pd.DataFrame({names[0]: as_key(pd.Series(uniques))})
        return codes.astype(np.int64), table
    keys = base[names].iloc[rows]
    grouped = keys.groupby(names, dropna=False, sort=False, observed=True)
    codes = grouped.ngroup().to_numpy(dtype=np.int64)
    _, first = np.unique(codes, return_index=True)
    table = keys.iloc[first].reset_index(drop=True)
    for key in names:
        table[key] = as_key(table[key])
    return codes, table


def window_aggregate(
    base: pd.DataFrame,
    markets: pd.DataFrame,
    start: pd.Timestamp | None,
    stop: pd.Timestamp | None,
    ratio_range: tuple[float, float],
) -> pd.DataFrame:
    """``aggregate(window_rows(base, ...), markets)`` over the pandas frame of
    :func:`~._kernel.base_frame`: per market (the columns of ``markets``), the flags summed, the
    medians and means over the window (start, stop]."""
    names = list(markets.columns)
    flags = _flags(base, start, stop)
    rows = np.flatnonzero(flags["active"] | flags["new"] | flags["pending"] | flags["sold"])
    codes, measured = _groups(base, names, rows)
    n = len(measured)
    sums = {c: np.bincount(codes, weights=flags[c][rows], minlength=n) for c in COUNTS[:4]}
    inputs = _inputs(base, rows, flags, ratio_range)
    sums["dropped"] = np.bincount(codes, weights=inputs["dropped"][0], minlength=n)
    for column in MEDIANS:
        mask, values = inputs[column]
        measured[column] = group_medians(codes[mask], values[mask], n)
    for column in MEANS:
        mask, values = inputs[column]
        count = np.bincount(codes[mask], minlength=n)
        with np.errstate(invalid="ignore", divide="ignore"):
            measured[column] = np.bincount(codes[mask], weights=values[mask], minlength=n) / count
    for column in COUNTS:
        measured[column] = sums[column]
    return _on_markets(measured, markets, names)


def _on_markets(
    measured: pd.DataFrame, markets: pd.DataFrame, names: Sequence[str]
) -> pd.DataFrame:
    """The measured groups on every market, in ``markets``' order (:func:`~._kernel.aggregate`'s
    form: counts int64 (0 where a market has no row), the rest float64, indexed by the keys)."""
    names = list(names)
    if names:
        table = markets.merge(measured, on=names, how="left", sort=False)
    else:
        table = measured.iloc[: len(markets)].reset_index(drop=True)
    for column in COUNTS:
        table[column] = table[column].fillna(0).astype("int64")
    for column in (*MEDIANS, *MEANS):
        table[column] = table[column].astype("float64")
    table = table[[*names, *COUNTS, *MEDIANS, *MEANS]]
    return table.set_index(names if len(names) > 1 else names[0]) if names else table
