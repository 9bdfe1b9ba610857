"""The market metrics, written once as narwhals expressions: the same definitions run on pandas,
Polars, DuckDB and PySpark (docs/metrics.md, docs/scale.md).

A metric is a per-row input (a flag to count, or a value where the row belongs to the metric's
population and null elsewhere) aggregated per market by one sum, median or mean. The engine does
the row work and the aggregation; what comes back is one small pandas row per market, from which
:mod:`realtyframes.analysis.market` derives the ratios (months of supply, price-drop share).

Columns the kernel reads (after :func:`typed`): ``StandardStatus`` and ``PropertyType`` (text),
``ListPrice``, ``PreviousListPrice``, ``ClosePrice``, ``LivingArea``, ``DaysOnMarket`` (numbers),
``OriginalEntryTimestamp``, ``MajorChangeTimestamp``, ``CloseDate`` (timestamps).

>>> import narwhals as nw, pandas as pd
>>> frame = nw.from_native(pd.DataFrame({"StandardStatus": ["Active", "Closed"]}))
>>> active = (nw.col("StandardStatus") == "Active").cast(nw.Int64)
>>> int(frame.select(active.sum()).item())  # the same expression on any engine
1
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import narwhals as nw
import pandas as pd

from realtyframes._spec import RENT_TYPES, SALE_SEGMENT
from realtyframes.analysis._common import as_key
from realtyframes.errors import AnalysisInputError, ColumnTypeError, MissingColumnsError

__all__ = [
    "COUNTS",
    "MEANS",
    "MEDIANS",
    "NUMBERS",
    "STAMPS",
    "aggregate",
    "as_text",
    "engine_frame",
    "is_pandas",
    "metric_inputs",
    "newest",
    "segment_filter",
    "segment_label",
]

#: Number columns of the listings the metrics read.
NUMBERS: tuple[str, ...] = (
    "ListPrice",
    "PreviousListPrice",
    "ClosePrice",
    "LivingArea",
    "DaysOnMarket",
)
#: Timestamp columns of the listings the metrics read.
STAMPS: tuple[str, ...] = ("OriginalEntryTimestamp", "MajorChangeTimestamp", "CloseDate")
#: Per-row inputs summed (flags), taken the median of, and averaged, per market.
COUNTS: tuple[str, ...] = ("active", "new", "pending", "sold", "dropped")
MEDIANS: tuple[str, ...] = ("list_price", "list_ppsf", "sale_price", "sale_ppsf", "dom")
MEANS: tuple[str, ...] = ("ratio", "above")


def is_pandas(obj: object) -> bool:
    """Whether ``obj`` is a pandas DataFrame (the default path, which also reads loose types)."""
    return isinstance(obj, pd.DataFrame)


def engine_frame(obj: object, needed: Sequence[str], frame: str, func: str) -> Any:
    """``obj`` (a Polars DataFrame or LazyFrame, a DuckDB relation, a PySpark DataFrame ...) as a
    narwhals frame, lazy where the engine is; its needed columns checked by name and type."""
    try:
        native: Any = nw.from_native(obj)  # type: ignore[call-overload]
    except TypeError:
        raise AnalysisInputError(
            f"{func}(): `{frame}` must be a pandas or Polars DataFrame, a Polars LazyFrame, a "
            f"DuckDB relation or a PySpark DataFrame, got {type(obj).__name__}"
        ) from None
    lazy = native.lazy() if isinstance(native, nw.DataFrame) else native
    schema = lazy.collect_schema()
    missing = [c for c in dict.fromkeys(needed) if c not in schema]
    if missing:
        raise MissingColumnsError(missing, frame=frame, func=func, available=list(schema))
    for column in NUMBERS:
        if column in needed and not schema[column].is_numeric():
            raise ColumnTypeError(
                f"{func}(): column {column!r} must be numeric on this engine, got {schema[column]}"
            )
    # a type narwhals does not name (Unknown: DuckDB's TIMESTAMPTZ_NS) is left to the engine
    stamp_types = nw.Datetime | nw.Date | nw.Unknown
    for column in STAMPS:
        dtype = schema[column] if column in needed else None
        if dtype is not None and not isinstance(dtype, stamp_types):
            raise ColumnTypeError(
                f"{func}(): column {column!r} must be a timestamp on this engine, got {dtype}"
            )
    return lazy


def newest(frame: Any, columns: Sequence[str]) -> pd.Timestamp | None:
    """The newest value of the timestamp ``columns`` (UTC), or None when all are null."""
    if not columns:
        return None
    row = frame.select(*(nw.col(c).max() for c in columns)).collect().to_pandas().iloc[0]
    stamps = [pd.Timestamp(v) for v in row.tolist() if v is not None and not pd.isna(v)]
    if not stamps:
        return None
    utc = [s.tz_localize("UTC") if s.tz is None else s.tz_convert("UTC") for s in stamps]
    return max(utc).as_unit("us")


def as_text() -> list[nw.Expr]:
    """StandardStatus and PropertyType as text, once, for engines whose dictionary or enum types
    do not compare with text (pandas categoricals do, and are left as they are)."""
    return [nw.col(c).cast(nw.String) for c in ("StandardStatus", "PropertyType")]


def segment_filter(segment: str) -> nw.Expr:
    """Rows of ``segment`` ('sale', 'rent', 'both') by PropertyType (text: :func:`as_text`)."""
    types = {"sale": SALE_SEGMENT, "rent": RENT_TYPES}.get(segment, SALE_SEGMENT + RENT_TYPES)
    return nw.col("PropertyType").is_in(list(types)).fill_null(False)


def segment_label() -> nw.Expr:
    """'sale' or 'rent' per row from PropertyType (text; null for any other type)."""
    kind = nw.col("PropertyType")
    return (
        nw.when(kind.is_in(list(SALE_SEGMENT)))
        .then(nw.lit("sale"))
        .otherwise(nw.when(kind.is_in(list(RENT_TYPES))).then(nw.lit("rent")))
    )


def _bound(ts: pd.Timestamp, dtype: Any) -> datetime:
    """A UTC bound in the form a timestamp column of ``dtype`` compares with."""
    if isinstance(dtype, nw.Datetime) and dtype.time_zone is None:
        return ts.tz_convert(None).to_pydatetime()
    return ts.to_pydatetime()


def metric_inputs(
    schema: Any,
    start: pd.Timestamp | None,
    stop: pd.Timestamp | None,
    ratio_range: tuple[float, float],
) -> list[nw.Expr]:
    """Each metric's per-row input over the window (start, stop]: a 0/1 flag for the counts, the
    value or null for medians and means. ``schema``: the frame's, for the timestamps' form."""

    def within(column: str) -> nw.Expr:
        if start is None or stop is None:
            return nw.lit(False)
        col = nw.col(column)
        dtype = schema[column]
        return (col > _bound(start, dtype)) & (col <= _bound(stop, dtype))

    status = nw.col("StandardStatus")
    price, close = nw.col("ListPrice").cast(nw.Float64), nw.col("ClosePrice").cast(nw.Float64)
    area = nw.col("LivingArea").cast(nw.Float64)
    active = (status == "Active").fill_null(False)
    sold = ((status == "Closed") & within("CloseDate")).fill_null(False)
    pending = ((status == "Pending") & within("MajorChangeTimestamp")).fill_null(False)
    new = within("OriginalEntryTimestamp").fill_null(False)
    ratio = nw.when(price != 0).then(close / price)
    low, high = ratio_range
    ratio_ok = (sold & (ratio >= low) & (ratio <= high)).fill_null(False)
    dropped = (active & (nw.col("PreviousListPrice").cast(nw.Float64) > price)).fill_null(False)
    return [
        active.cast(nw.Int64).alias("active"),
        new.cast(nw.Int64).alias("new"),
        pending.cast(nw.Int64).alias("pending"),
        sold.cast(nw.Int64).alias("sold"),
        dropped.cast(nw.Int64).alias("dropped"),
        nw.when(active).then(price).alias("list_price"),
        nw.when(active & (area > 0)).then(price / area).alias("list_ppsf"),
        nw.when(sold).then(close).alias("sale_price"),
        nw.when(sold & (area > 0)).then(close / area).alias("sale_ppsf"),
        nw.when(sold).then(nw.col("DaysOnMarket").cast(nw.Float64)).alias("dom"),
        nw.when(ratio_ok).then(ratio).alias("ratio"),
        nw.when(ratio_ok).then((ratio > 1).cast(nw.Float64)).alias("above"),
    ]


def aggregate(inputs: Any, keys: Sequence[str]) -> pd.DataFrame:
    """Per market (``keys``): the sums of the flags, the medians and the means of
    :func:`metric_inputs`, as a pandas frame indexed by the keys (sorted, missing keys last)."""
    aggs = [
        *(nw.col(c).sum() for c in COUNTS),
        *(nw.col(c).median() for c in MEDIANS),
        *(nw.col(c).mean() for c in MEANS),
    ]
    out = inputs.group_by(*keys, drop_null_keys=False).agg(*aggs)
    if isinstance(out, nw.LazyFrame):
        out = out.collect()
    table = out.to_pandas()
    for key in keys:  # categoricals and pyarrow strings as plain values, sorted as such
        table[key] = as_key(table[key])
    for column in COUNTS:
        table[column] = table[column].fillna(0).astype("int64")
    for column in (*MEDIANS, *MEANS):
        table[column] = table[column].astype("float64")
    table = table.sort_values(list(keys), na_position="last", kind="stable")
    return table.set_index(list(keys) if len(keys) > 1 else keys[0])
