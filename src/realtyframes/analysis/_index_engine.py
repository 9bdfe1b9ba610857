"""The hedonic index's cells made by the engine (Polars, DuckDB, PySpark; :mod:`.price_index`).

Each sale's characteristics are computed by narwhals expressions (log living area, age at sale,
the waterfront indicators, as :class:`._index_rows.HedonicRows` computes them on pandas), then
grouped by the ``by`` columns, period, subtype and location: counts, sums, cross products, min
and max (:class:`._index_cells.Cells`). Sales with a missing characteristic are one cell per
group and period (their count only), so the left-out counts stay exact. Only the cells come back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import narwhals as nw
import numpy as np
import pandas as pd

from realtyframes.analysis._common import as_key
from realtyframes.analysis._index_cells import SHIFT, Y_SHIFT, Cells
from realtyframes.analysis._kernel import after, collect

__all__ = ["EngineCells", "dated_sales", "engine_cells", "period_of"]

_TICK = pd.Timedelta(1, "us")
_YES = ["true", "yes", "y", "1", "1.0"]
_NO = ["false", "no", "n", "0", "0.0"]
_K = len(SHIFT)
_X = [f"_x{i}" for i in range(_K)]
_PAIRS = [(i, j) for i in range(_K) for j in range(i, _K)]


class EngineCells:
    """The engine's cells as pandas: ``keys`` (the ``by`` columns per cell), the period's
    position in ``periods`` (−1: no close date), ``complete``, the subtype and location values, and the
    sums; :meth:`cells` gives the numpy :class:`Cells` of some rows with period codes."""

    def __init__(self, frame: pd.DataFrame, keys: list[str], periods: pd.PeriodIndex) -> None:
        self.frame, self.keys, self.periods = frame, keys, periods
        self.n = frame["_n"].to_numpy(dtype=np.float64)
        self.code = frame["_period"].fillna(-1).to_numpy(dtype=np.int64)
        self.dated = self.code >= 0
        self.complete = frame["_complete"].fillna(False).to_numpy(dtype=bool) & self.dated
        self.subtype = _codes(frame["_subtype"])
        self.location = _codes(frame["_location"])

    def cells(self, rows: np.ndarray) -> Cells:
        """The complete cells among ``rows`` (positions) as :class:`Cells`."""
        rows = rows[self.complete[rows]]
        f = self.frame.iloc[rows]
        ss = np.empty((len(rows), _K, _K))
        for i, j in _PAIRS:
            ss[:, i, j] = ss[:, j, i] = f[f"_ss{i}_{j}"].to_numpy(dtype=np.float64)

        def block(prefix: str, shift: np.ndarray | float = 0.0) -> np.ndarray:
            cols = [f[f"{prefix}{i}"].to_numpy(dtype=np.float64) for i in range(_K)]
            return np.column_stack(cols).reshape(len(rows), _K) + shift

        return Cells(
            self.code[rows], self.subtype[rows], self.location[rows], self.n[rows], block("_s"),
            ss, block("_sy"), f["_y"].to_numpy(dtype=np.float64),
            f["_yy"].to_numpy(dtype=np.float64), block("_lo", SHIFT), block("_hi", SHIFT),
        )  # fmt: skip


def _codes(values: pd.Series) -> np.ndarray:
    """Codes of the values in sorted order (as pandas' rows are coded); −1 where missing."""
    return np.asarray(pd.factorize(as_key(values), sort=True)[0], dtype=np.int64)


def _stamp_range(sales: Any) -> tuple[pd.Timestamp, pd.Timestamp] | None:
    """The first and last CloseDate of the sales (UTC), None without any."""
    row = collect(sales.select(nw.col("CloseDate").min().alias("a"), nw.col("CloseDate").max()))
    first, last = (pd.Timestamp(v) for v in row.iloc[0].tolist())
    if pd.isna(first):
        return None
    return tuple(
        t.tz_localize("UTC") if t.tz is None else t.tz_convert("UTC") for t in (first, last)
    )  # type: ignore[return-value]


def dated_sales(sales: Any, changes: Any) -> tuple[Any, int] | None:
    """``sales`` (lazy) with a missing CloseDate taken from the history's last status change to
    Closed of the listing, joined on the engine, and how many were dated so (one count comes
    back); None where ChangeTimestamp and CloseDate differ in type (the caller reads them
    locally, as it reads a history on another engine)."""
    if changes.collect_schema()["ChangeTimestamp"] != sales.collect_schema()["CloseDate"]:
        return None
    closed = (nw.col("ChangeType").cast(nw.String) == "status_change") & (
        nw.col("StandardStatus").cast(nw.String) == "Closed"
    )
    last = changes.filter(closed.fill_null(False)).select(
        nw.col("ListingId").cast(nw.String).alias("_lid"), nw.col("ChangeTimestamp").alias("_at")
    ).group_by("_lid").agg(nw.col("_at").max())  # fmt: skip
    rows = sales.with_columns(nw.col("ListingId").cast(nw.String).alias("_lid"))
    rows = rows.join(last, on="_lid", how="left")
    missing = nw.col("CloseDate").is_null()
    found = collect(rows.select((missing & ~nw.col("_at").is_null()).cast(nw.Int64).sum()))
    rows = rows.with_columns(
        nw.when(missing).then(nw.col("_at")).otherwise(nw.col("CloseDate")).alias("CloseDate")
    )
    value = found.iloc[0, 0]
    return rows.drop("_lid", "_at"), 0 if pd.isna(value) else int(value)


def _position(starts: Sequence[pd.Timestamp], dtype: Any) -> nw.Expr:
    """How many of ``starts`` (UTC) are at or before each CloseDate: its period's position
    counted by comparisons with UTC bounds, so no engine's session time zone enters; null where
    the date is."""
    stamp = nw.col("CloseDate")
    if not starts:
        return nw.when(~stamp.is_null()).then(nw.lit(0))
    hits = [after("CloseDate", t - _TICK, dtype).cast(nw.Int32) for t in starts]
    return nw.when(~stamp.is_null()).then(nw.sum_horizontal(*hits))


def period_of(sales: Any, code: str) -> tuple[pd.PeriodIndex, nw.Expr, nw.Expr]:
    """Every period from the first CloseDate's to the last's (pandas ``code``), and expressions
    of each sale's period position and calendar year (UTC; null without a CloseDate)."""
    span = _stamp_range(sales)
    if span is None:
        periods = pd.PeriodIndex([], freq=code)
        first_year, years = 0, []
    else:
        naive = [t.tz_convert(None) for t in span]
        periods = pd.period_range(naive[0].to_period(code), naive[1].to_period(code), freq=code)
        first_year = naive[0].year
        years = [pd.Timestamp(y, 1, 1, tz="UTC") for y in range(first_year + 1, naive[1].year + 1)]
    starts = [p.start_time.tz_localize("UTC") for p in periods[1:]]
    dtype = sales.collect_schema()["CloseDate"]
    return periods, _position(starts, dtype), nw.lit(first_year) + _position(years, dtype)


def _inputs(schema: Any, location: str | None, year: nw.Expr) -> list[nw.Expr]:
    """Per sale: the six characteristics (shifted), the shifted log price, subtype, location."""
    area = nw.col("LivingArea").cast(nw.Float64)
    built = nw.col("YearBuilt").cast(nw.Float64)
    age = year.cast(nw.Float64) - built
    if "WaterfrontYN" in schema:
        text = nw.col("WaterfrontYN").cast(nw.String).str.strip_chars().str.to_lowercase()
        yes = text.is_in(_YES).fill_null(False)
        known = (yes | text.is_in(_NO)).fill_null(False)
        water = [
            nw.when(yes).then(nw.lit(1.0)).otherwise(nw.lit(0.0)),
            nw.when(known).then(nw.lit(0.0)).otherwise(nw.lit(1.0)),
        ]
    else:
        water = [nw.lit(0.0), nw.lit(1.0)]
    values = [
        nw.col("BedroomsTotal").cast(nw.Float64),
        nw.col("BathroomsTotalInteger").cast(nw.Float64),
        nw.when(area > 0).then(area.log()),
        nw.when(age < 0).then(nw.lit(0.0)).otherwise(age),
        *water,
    ]
    out = [v.alias(name) for v, name in zip(values, _X, strict=True)]
    out.append(nw.col("ClosePrice").cast(nw.Float64).log().alias("_logy"))
    out.append(nw.col("PropertySubType").cast(nw.String).alias("_subtype"))
    place = nw.col(location).cast(nw.String) if location else nw.lit("")
    out.append(place.alias("_location"))
    return out


def _missing(name: str) -> nw.Expr:
    c = nw.col(name)
    return c.is_null() | c.is_nan().fill_null(False)


def engine_cells(sales: Any, keys: list[str], location: str | None, code: str) -> EngineCells:
    """The cells of the sales (a narwhals lazy frame of the sale segment with ClosePrice > 0):
    one per ``by`` key, period (pandas ``code``), subtype and location for complete sales, one
    per key and period for the others; collected."""
    schema = sales.collect_schema()
    periods, period, year = period_of(sales, code)
    rows = sales.select(
        *(nw.col(k) for k in keys),
        period.alias("_period"),
        *_inputs(schema, location, year),
    )
    bad = [_missing(x) for x in _X]
    bad += [nw.col("_subtype").is_null(), nw.col("_location").is_null()]
    complete = ~nw.any_horizontal(*bad, ignore_nulls=True)
    kept = [nw.when(nw.col("_complete")).then(nw.col(c)) for c in ("_subtype", "_location")]
    rows = rows.with_columns(complete.alias("_complete")).with_columns(
        *(
            nw.when(nw.col("_complete")).then(nw.col(x) - SHIFT[i]).alias(x)
            for i, x in enumerate(_X)
        ),
        nw.when(nw.col("_complete")).then(nw.col("_logy") - Y_SHIFT).alias("_logy"),
        kept[0].alias("_subtype"),
        kept[1].alias("_location"),
    )
    rows = rows.with_columns(
        *((nw.col(_X[i]) * nw.col(_X[j])).alias(f"_ss{i}_{j}") for i, j in _PAIRS),
        *((nw.col(_X[i]) * nw.col("_logy")).alias(f"_sy{i}") for i in range(_K)),
        (nw.col("_logy") * nw.col("_logy")).alias("_yy"),
    )
    sums = [
        nw.len().alias("_n"),
        nw.col("_logy").sum().alias("_y"),
        nw.col("_yy").sum(),
        *(nw.col(x).sum().alias(f"_s{i}") for i, x in enumerate(_X)),
        *(nw.col(x).min().alias(f"_lo{i}") for i, x in enumerate(_X)),
        *(nw.col(x).max().alias(f"_hi{i}") for i, x in enumerate(_X)),
        *(nw.col(f"_ss{i}_{j}").sum() for i, j in _PAIRS),
        *(nw.col(f"_sy{i}").sum() for i in range(_K)),
    ]
    group = [*keys, "_period", "_complete", "_subtype", "_location"]
    frame = collect(rows.group_by(group, drop_null_keys=False).agg(*sums))
    return EngineCells(frame, keys, periods)
