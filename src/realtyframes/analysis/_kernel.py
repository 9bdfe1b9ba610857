"""Frames of any engine, and the market metrics written once as narwhals expressions: the same
definitions run on pandas, Polars, DuckDB and PySpark (docs/metrics.md, docs/scale.md).

Input: :func:`frame_of` takes a pandas frame (numbers and timestamps read from loose types too,
only where a column is not typed already) or an engine's frame (:func:`engine_frame`: columns
checked by name and type, nothing computed) and gives a narwhals frame, lazy where the engine is.

The market metrics, in three steps that each compute a sub-expression once:

1. :func:`base_frame`: per row, what does not depend on the window (the segment, the status
   flags, the prices as floats);
2. :func:`window_rows`: the rows in a population of the window (active, new, pending, sold),
   with the flags and the values each median and mean reads;
3. :func:`aggregate`: the flags summed and the medians and means per market (:func:`markets_of`
   finds every market of the segment, with or without rows in the window). One small pandas
   row per market comes back; :mod:`.market` derives the ratios.

On an eager frame, independent steps may run on a second thread (:func:`in_background`).

>>> import narwhals as nw, pandas as pd
>>> frame = nw.from_native(pd.DataFrame({"StandardStatus": ["Active", "Closed"]}))
>>> active = (nw.col("StandardStatus") == "Active").cast(nw.Int64)
>>> int(frame.select(active.sum()).item())  # the same expression on any engine
1
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from typing import Any, TypeVar

import narwhals as nw
import pandas as pd

from realtyframes._environment import THREADS_VARIABLE
from realtyframes._spec import RENT_TYPES, SALE_SEGMENT
from realtyframes.analysis._common import FrameTypeError, as_key, to_float, to_utc
from realtyframes.errors import AnalysisInputError, ColumnTypeError, MissingColumnsError

__all__ = [
    "COUNTS",
    "MEANS",
    "MEDIANS",
    "NUMBERS",
    "STAMPS",
    "THREADS_VARIABLE",
    "after",
    "aggregate",
    "as_text",
    "base_frame",
    "collect",
    "concurrently",
    "engine_frame",
    "frame_of",
    "in_background",
    "is_pandas",
    "markets_of",
    "newest",
    "sale_to_list",
    "second_thread",
    "segment_filter",
    "segment_label",
    "value_inputs",
    "window_rows",
    "within",
]

#: Number columns the analysis reads (listings and change records).
NUMBERS: tuple[str, ...] = (
    "ListPrice",
    "PreviousListPrice",
    "ClosePrice",
    "LivingArea",
    "DaysOnMarket",
)
#: Timestamp columns the analysis reads (listings and change records).
STAMPS: tuple[str, ...] = (
    "OriginalEntryTimestamp",
    "ModificationTimestamp",
    "MajorChangeTimestamp",
    "CloseDate",
    "ChangeTimestamp",
)
#: Per-row inputs summed (flags), taken the median of, and averaged, per market.
COUNTS: tuple[str, ...] = ("active", "new", "pending", "sold", "dropped")
MEDIANS: tuple[str, ...] = ("list_price", "list_ppsf", "sale_price", "sale_ppsf", "dom")
MEANS: tuple[str, ...] = ("ratio", "above")
_STAMP_TYPES = nw.Datetime | nw.Date | nw.Unknown
_WINDOW_STAMPS = ("OriginalEntryTimestamp", "MajorChangeTimestamp", "CloseDate")
_TICK = pd.Timedelta(microseconds=1)
_T = TypeVar("_T")


def is_pandas(obj: object) -> bool:
    """Whether ``obj`` is a pandas DataFrame (the default path, which also reads loose types)."""
    return isinstance(obj, pd.DataFrame)


#: Rows below which :func:`concurrently` stays on one thread (a thread costs more than it saves).
_THREADED_ROWS = 50_000


def second_thread() -> bool:
    """Whether the analysis may use a second thread: unless ``REALTYFRAMES_THREADS`` is 1."""
    raw = os.environ.get(THREADS_VARIABLE, "").strip()
    if not raw:
        return True
    if not raw.isdigit() or int(raw) < 1:
        raise AnalysisInputError(
            f"{THREADS_VARIABLE} must be a whole number of threads, 1 or more (1: the calling "
            f"thread only; the analysis uses at most 2), got {raw!r}"
        )
    return int(raw) > 1


def in_background(frame: Any, step: Callable[..., _T], *args: Any) -> Future[_T]:
    """``step(*args)`` on a second thread when ``frame`` is eager (pandas, numpy and pyarrow
    release the GIL in their loops, so two steps share two cores), else now: a lazy engine runs
    its own threads, and a DuckDB connection one query at a time. ``.result()`` gives the value
    or raises the step's error."""
    if isinstance(frame, nw.DataFrame) and second_thread():
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="realtyframes")
        try:
            return pool.submit(step, *args)
        finally:
            pool.shutdown(wait=False)  # the step runs on; the thread ends with it
    done: Future[_T] = Future()
    try:
        done.set_result(step(*args))
    except Exception as exc:  # raised again by .result(), as from the thread
        done.set_exception(exc)
    return done


def concurrently(steps: Sequence[Callable[[], _T]], rows: int) -> list[_T]:
    """The results of independent ``steps``, in order, on two threads when they each handle
    ``rows`` rows or more (numpy, pandas and pyarrow loops release the GIL), else one by one."""
    if not second_thread() or rows < _THREADED_ROWS or len(steps) < 2:
        return [step() for step in steps]
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="realtyframes") as pool:
        return list(pool.map(lambda step: step(), steps))


def engine_frame(
    obj: object, needed: Sequence[str], frame: str, func: str, optional: Sequence[str] = ()
) -> Any:
    """``obj`` (a Polars DataFrame or LazyFrame, a DuckDB relation, a PySpark DataFrame ...) as a
    narwhals frame, lazy where the engine is; its needed columns (and the ``optional`` ones it
    has) checked by name and type, nothing computed."""
    try:
        native: Any = nw.from_native(obj)  # type: ignore[call-overload]
    except TypeError:
        raise FrameTypeError(
            f"{func}(): `{frame}` must be a pandas or Polars DataFrame, a Polars LazyFrame, a "
            f"DuckDB relation or a PySpark DataFrame, got {type(obj).__name__}"
        ) from None
    lazy = native.lazy() if isinstance(native, nw.DataFrame) else native
    schema = lazy.collect_schema()
    missing = [c for c in dict.fromkeys(needed) if c not in schema]
    if missing:
        raise MissingColumnsError(missing, frame=frame, func=func, available=list(schema))
    checked = [*needed, *(c for c in optional if c in schema)]
    for column in NUMBERS:
        if column in checked and not schema[column].is_numeric():
            raise ColumnTypeError(
                f"{func}(): column {column!r} must be numeric on this engine, got {schema[column]}"
            )
    # a type narwhals does not name (Unknown: DuckDB's TIMESTAMPTZ_NS) is left to the engine
    for column in STAMPS:
        dtype = schema[column] if column in checked else None
        if dtype is not None and not isinstance(dtype, _STAMP_TYPES):
            raise ColumnTypeError(
                f"{func}(): column {column!r} must be a timestamp on this engine, got {dtype}"
            )
    return lazy


def _typed(s: pd.Series, column: str, func: str) -> pd.Series:
    """A pandas column as the expressions read it: numbers float64, timestamps as datetime64 of
    any unit, aware or naive (kept as they are; text, dates and pyarrow types are read)."""
    if column in NUMBERS:
        return s if s.dtype == "float64" else to_float(s, column, func)
    if column in STAMPS:
        datetime64 = pd.api.types.is_datetime64_any_dtype(s.dtype)
        return (
            s if datetime64 and not isinstance(s.dtype, pd.ArrowDtype) else to_utc(s, column, func)
        )
    return s


def frame_of(
    obj: Any, needed: Sequence[str], frame: str, func: str, optional: Sequence[str] = ()
) -> Any:
    """The ``needed`` columns (and the ``optional`` ones present) of ``obj`` as a narwhals frame.

    pandas: only these columns, numbers and timestamps read where they are not typed already
    (CSV text, pyarrow types), no copy of a typed column. Other engines: :func:`engine_frame`,
    with StandardStatus and PropertyType cast to text (:func:`as_text`) when present."""
    if not is_pandas(obj):
        lazy = engine_frame(obj, needed, frame, func, optional)
        return lazy.with_columns(*as_text(lazy.collect_schema()))
    missing = [c for c in dict.fromkeys(needed) if c not in obj.columns]
    if missing:
        raise MissingColumnsError(missing, frame=frame, func=func, available=obj.columns)
    names = [*dict.fromkeys(needed), *(c for c in optional if c in obj.columns)]
    columns = {c: _typed(obj[c], c, func) for c in dict.fromkeys(names)}
    return nw.from_native(pd.DataFrame(columns, copy=False).reset_index(drop=True))


def collect(frame: Any) -> pd.DataFrame:
    """A narwhals frame (lazy or not) as pandas, with a fresh index."""
    if isinstance(frame, nw.LazyFrame):
        frame = frame.collect()
    return frame.to_pandas().reset_index(drop=True)


def newest(frame: Any, columns: Sequence[str]) -> pd.Timestamp | None:
    """The newest value of the timestamp ``columns`` (UTC), or None when all are null."""
    if not columns:
        return None
    row = collect(frame.select(*(nw.col(c).max() for c in columns))).iloc[0]
    stamps = [pd.Timestamp(v) for v in row.tolist() if v is not None and not pd.isna(v)]
    if not stamps:
        return None
    utc = [s.tz_localize("UTC") if s.tz is None else s.tz_convert("UTC") for s in stamps]
    return max(utc).as_unit("us")


def stamp_columns(frame: Any, names: Sequence[str]) -> list[str]:
    """Those of ``names`` that ``frame`` has as timestamps."""
    schema = frame.collect_schema()
    return [c for c in names if isinstance(schema.get(c), _STAMP_TYPES)]


def as_text(schema: Any = None) -> list[nw.Expr]:
    """StandardStatus and PropertyType as text (those of ``schema`` when given), for engines
    whose dictionary or enum types do not compare with text."""
    names = ("StandardStatus", "PropertyType")
    return [nw.col(c).cast(nw.String) for c in names if schema is None or c in schema]


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


def bound(ts: pd.Timestamp, dtype: Any) -> datetime:
    """A UTC bound in the form a timestamp column of ``dtype`` compares with."""
    if isinstance(dtype, nw.Datetime) and dtype.time_zone is None:
        return ts.tz_convert(None).to_pydatetime()
    return ts.to_pydatetime()


def after(column: str, ts: pd.Timestamp, dtype: Any) -> nw.Expr:
    """``column > ts`` with the column read to the microsecond, as every bound is (a nanosecond
    time counts as its microsecond, as :func:`~._common.to_utc` cuts it); null stays null."""
    return nw.col(column) >= bound(ts + _TICK, dtype)


def within(
    column: str, start: pd.Timestamp | None, stop: pd.Timestamp | None, schema: Any
) -> nw.Expr:
    """``start < column <= stop`` to the microsecond (:func:`after`), False where null or
    without a window."""
    if start is None or stop is None:
        return nw.lit(False)
    dtype = schema[column]
    return (after(column, start, dtype) & ~after(column, stop, dtype)).fill_null(False)


def base_frame(frame: Any, keys: Sequence[str], segment: str) -> Any:
    """Step 1, per row and whatever the window: the ``keys`` (with 'both' the ``segment`` label
    first), ``_in`` (the row is in ``segment``), the status flags, the timestamps and the numbers
    as floats (cast once here: the later steps read them as they are)."""
    status = nw.col("StandardStatus")
    label = [segment_label().alias("segment")] if segment == "both" else []
    return frame.select(
        *label,
        *keys,
        segment_filter(segment).alias("_in"),
        (status == "Active").fill_null(False).alias("_is_active"),
        (status == "Pending").fill_null(False).alias("_is_pending"),
        (status == "Closed").fill_null(False).alias("_is_closed"),
        *(c for c in _WINDOW_STAMPS),
        *(nw.col(c).cast(nw.Float64) for c in NUMBERS),
    )


def window_rows(
    frame: Any,
    names: Sequence[str],
    schema: Any,
    start: pd.Timestamp | None,
    stop: pd.Timestamp | None,
    ratio_range: tuple[float, float],
) -> Any:
    """Step 2, over the window (start, stop]: the rows of :func:`base_frame` in a population
    (the others add nothing to any metric) with the ``names`` columns and the metric inputs of
    :func:`value_inputs`. ``schema``: the input's, for the timestamps' form."""

    def inside(column: str) -> nw.Expr:
        return within(column, start, stop, schema)

    segment = nw.col("_in")
    flags = {
        "active": segment & nw.col("_is_active"),
        "new": segment & inside("OriginalEntryTimestamp"),
        "pending": segment & nw.col("_is_pending") & inside("MajorChangeTimestamp"),
        "sold": segment & nw.col("_is_closed") & inside("CloseDate"),
    }
    rows = frame.select(*names, *(flag.alias(name) for name, flag in flags.items()), *NUMBERS)
    rows = rows.filter(nw.col("active") | nw.col("new") | nw.col("pending") | nw.col("sold"))
    rows = rows.with_columns(sale_to_list(ratio_range).alias("_ratio"))  # once, read twice
    return rows.select(*names, *value_inputs())


def sale_to_list(ratio_range: tuple[float, float]) -> nw.Expr:
    """A sold row's ClosePrice / ListPrice within ``ratio_range`` (inclusive), else null (the
    prices as floats: :func:`base_frame`)."""
    sold = nw.col("sold")
    price, close = nw.col("ListPrice"), nw.col("ClosePrice")
    ratio = nw.when(price != 0).then(close / price)
    low, high = ratio_range
    return nw.when((sold & (ratio >= low) & (ratio <= high)).fill_null(False)).then(ratio)


def value_inputs() -> list[nw.Expr]:
    """Step 3's inputs, from :func:`window_rows` (with ``_ratio``, :func:`sale_to_list`): the
    flags as 0/1 (``dropped``: an active listing whose last price change was a cut), and each
    median's and mean's value where the row is in its population, else null."""
    active, sold = nw.col("active"), nw.col("sold")
    price, close, area = nw.col("ListPrice"), nw.col("ClosePrice"), nw.col("LivingArea")
    ratio = nw.col("_ratio")
    dropped = (active & (nw.col("PreviousListPrice") > price)).fill_null(False)
    return [
        *(nw.col(c).cast(nw.Int64) for c in ("active", "new", "pending", "sold")),
        dropped.cast(nw.Int64).alias("dropped"),
        nw.when(active).then(price).alias("list_price"),
        nw.when(active & (area > 0)).then(price / area).alias("list_ppsf"),
        nw.when(sold).then(close).alias("sale_price"),
        nw.when(sold & (area > 0)).then(close / area).alias("sale_ppsf"),
        nw.when(sold).then(nw.col("DaysOnMarket")).alias("dom"),
        ratio.alias("ratio"),
        nw.when(~ratio.is_null()).then((ratio > 1).cast(nw.Float64)).alias("above"),
    ]


def markets_of(frame: Any, names: Sequence[str]) -> pd.DataFrame:
    """The markets (distinct ``names`` values, plain and sorted, missing last) that have a row of
    the segment (``_in``); with no names, one row when any row is in the segment, else none."""
    if not names:
        seen = collect(frame.select(nw.col("_in").cast(nw.Int64).sum())).iloc[0, 0]
        return pd.DataFrame(index=range(min(1, int(seen or 0))))
    inside = frame.select(*names, "_in").filter(nw.col("_in"))
    if len(names) == 1 and isinstance(inside, nw.DataFrame):  # eager: a column's unique, 2x faster
        out = collect(inside.select(nw.col(names[0]).unique()))
    else:
        out = collect(inside.select(*names).unique())
    for key in names:  # categoricals and pyarrow strings as plain values, sorted as such
        out[key] = as_key(out[key])
    out = out.sort_values(list(names), na_position="last", kind="stable")
    return out.reset_index(drop=True)


def aggregate(rows: Any, markets: pd.DataFrame) -> pd.DataFrame:
    """Step 3, per market (the columns of ``markets``, from :func:`markets_of`; none: the whole
    frame) over :func:`window_rows`: the flags summed, the medians and means. A pandas frame
    indexed by the markets' keys, in their order."""
    names = list(markets.columns)
    aggs = [
        *(nw.col(c).sum() for c in COUNTS),
        *(nw.col(c).median() for c in MEDIANS),
        *(nw.col(c).mean() for c in MEANS),
    ]
    if names:
        measured = collect(rows.group_by(*names, drop_null_keys=False).agg(*aggs))
        for key in names:
            measured[key] = as_key(measured[key])
        table = markets.merge(measured, on=names, how="left", sort=False)
    else:
        table = collect(rows.select(*aggs)).iloc[: len(markets)].reset_index(drop=True)
    for column in COUNTS:
        table[column] = table[column].fillna(0).astype("int64")
    for column in (*MEDIANS, *MEANS):
        table[column] = table[column].astype("float64")
    return table.set_index(names if len(names) > 1 else names[0]) if names else table
