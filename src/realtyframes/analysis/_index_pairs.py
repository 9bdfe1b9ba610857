"""Repeat-sales pairs made by the engine (Polars, DuckDB, PySpark; :mod:`.price_index`).

A property is the address lower-cased with whitespace collapsed and the LivingArea (as
:class:`._index_rows.PairRows` keys it on pandas); the engine orders each property's sales by
CloseDate within its ``by`` group (a window), pairs each with the one before, and sends back the
pairs only: their two periods (by UTC bounds), the log price ratio, whether they are in the same
period, and the period of the sale before the first when that one was a pair too (so the sales in
pairs are counted without the sales). The counts of sales without a date, a group or an address
come back as one small table. Each pair also carries the days between its sales, which
Case-Shiller's interval weights read.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import narwhals as nw
import numpy as np
import pandas as pd

from realtyframes.analysis._common import as_key
from realtyframes.analysis._engine_frames import DAY, epoch_micros
from realtyframes.analysis._index_engine import period_of
from realtyframes.analysis._index_fit import years
from realtyframes.analysis._kernel import collect

__all__ = ["EnginePairs", "engine_pairs"]


class EnginePairs:
    """The engine's pairs (``pairs``: ``by`` keys, ``_p1``, ``_p2``, ``_ratio``, ``_days``,
    ``_cross``, ``_chain``) and sale counts (``counts``: ``by`` keys, ``_dated``, ``_blank``, ``_n``)."""

    def __init__(
        self, pairs: pd.DataFrame, counts: pd.DataFrame, keys: list[str], periods: pd.PeriodIndex
    ) -> None:
        self.pairs, self.counts, self.keys, self.periods = pairs, counts, keys, periods
        self.dated = counts["_dated"].to_numpy(dtype=bool)
        self.blank = counts["_blank"].to_numpy(dtype=bool)
        self.n = counts["_n"].to_numpy(dtype=np.int64)
        self._at = self._index(pairs)

    def _index(self, frame: pd.DataFrame) -> dict[tuple[Hashable, ...], np.ndarray]:
        if not self.keys:
            return {(): np.arange(len(frame))}
        found = (
            pd.DataFrame({k: as_key(frame[k]) for k in self.keys})
            .groupby(self.keys, sort=False, dropna=True)
            .indices
        )
        return {k if isinstance(k, tuple) else (k,): v for k, v in found.items()}

    def group(
        self, key: tuple[Hashable, ...]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
        """A group's cross-period pairs: first and second period, log ratio, years between the
        sales, the chain period (−1: none); and how many same-period pairs it had."""
        f = self.pairs.iloc[self._at.get(key, np.zeros(0, dtype=np.int64))]
        cross = f["_cross"].to_numpy(dtype=bool)
        f = f[cross]
        chain = f["_chain"].astype("float64").fillna(-1).to_numpy().astype(np.int64)
        return (
            f["_p1"].to_numpy(dtype=np.int64),
            f["_p2"].to_numpy(dtype=np.int64),
            f["_ratio"].to_numpy(dtype=np.float64),
            years(f["_days"].to_numpy(dtype=np.float64)),
            chain,
            int((~cross).sum()),
        )


def _address() -> nw.Expr:
    text = nw.col("UnparsedAddress").cast(nw.String).str.to_lowercase()
    return text.str.replace_all(r"\s+", " ").str.strip_chars()


def engine_pairs(sales: Any, keys: list[str], code: str) -> EnginePairs:
    """The pairs of the sales (a narwhals lazy frame of the sale segment with ClosePrice > 0)
    and the sales' counts, collected."""
    schema = sales.collect_schema()
    periods, period, _ = period_of(sales, code)
    area = nw.col("LivingArea").cast(nw.Float64) if "LivingArea" in schema else nw.lit(0.0)
    rows = sales.select(
        *(nw.col(k) for k in keys),
        period.alias("_p"),
        nw.col("CloseDate").alias("_t"),
        nw.col("ClosePrice").cast(nw.Float64).log().alias("_y"),
        _address().alias("_a"),
        area.alias("_area"),
    ).with_columns(
        (nw.col("_a").is_null() | (nw.col("_a") == "")).fill_null(True).alias("_blank"),
        (~nw.col("_p").is_null()).alias("_dated"),
        nw.col("_t").alias("_us"),
    )
    rows = epoch_micros(rows, ["_us"])
    counts = collect(
        rows.group_by([*keys, "_dated", "_blank"], drop_null_keys=False).agg(nw.len().alias("_n"))
    )
    keep = nw.col("_dated") & ~nw.col("_blank")
    for k in keys:
        keep = keep & ~nw.col(k).is_null()
    part = [*keys, "_a", "_area"]
    paired = (
        rows.filter(keep)
        .with_columns(
            nw.col("_p").shift(1).over(*part, order_by="_t").alias("_p1"),
            nw.col("_p").shift(2).over(*part, order_by="_t").alias("_p0"),
            nw.col("_y").shift(1).over(*part, order_by="_t").alias("_y1"),
            nw.col("_us").shift(1).over(*part, order_by="_t").alias("_us1"),
        )
        .filter(~nw.col("_p1").is_null())
    )
    chained = ~nw.col("_p0").is_null() & (nw.col("_p0") != nw.col("_p1"))
    pairs = collect(
        paired.select(
            *(nw.col(k) for k in keys),
            nw.col("_p1"),
            nw.col("_p").alias("_p2"),
            (nw.col("_y") - nw.col("_y1")).alias("_ratio"),
            ((nw.col("_us") - nw.col("_us1")).cast(nw.Float64) / DAY).alias("_days"),
            (nw.col("_p1") != nw.col("_p")).alias("_cross"),
            nw.when(chained.fill_null(False)).then(nw.col("_p0")).alias("_chain"),
        )
    )
    return EnginePairs(pairs, counts, keys, periods)
