"""The price tiers of :mod:`.tiers` assigned on the engine (Polars, DuckDB, PySpark): each
market × period's 5th, 35th, 65th and 95th percentile, exact and linear between the two
closest ranks as pandas' default (:func:`_quantiles`: each price ranked in its group by a
window, not the engine's quantile aggregate), the tier of each row as a column, and the
rows of both sides as one frame (:func:`tagged_rows`) for a single run of the trends with the
tier as a key. Only the bands (markets × periods) come back to pandas.

Tier codes: :data:`LIST_CODES` (the list tier, by the list price at entry) and
:data:`SALE_CODES` (the sale tier, by ClosePrice); a sale's copy carries its own listing id
(``ListingId`` + :data:`SALE_COPY`) so that both copies are separate listings to the trends.

>>> LIST_CODES, SALE_CODES
((0, 1, 2), (10, 11, 12))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import narwhals as nw
import numpy as np
import pandas as pd

from realtyframes.analysis._engine_frames import epoch_micros, first_old, persist, release
from realtyframes.analysis._kernel import collect, newest, segment_filter
from realtyframes.analysis._periods import Grid, base_periods, spans
from realtyframes.analysis._trends_engine import Periods
from realtyframes.analysis.market import NEEDED_COLUMNS

__all__ = ["LIST_CODES", "SALE_CODES", "SALE_COPY", "EngineTiers"]

#: Tier codes of the list side (bottom, middle, top) and of the sale side.
LIST_CODES: tuple[int, ...] = (0, 1, 2)
SALE_CODES: tuple[int, ...] = (10, 11, 12)
#: Appended to a sale copy's ListingId (a character no listing id holds).
SALE_COPY = "\x1fsale"
_EDGES = (0.05, 0.35, 0.65, 0.95)
_NAMES = tuple(f"q{round(q * 100):02d}" for q in _EDGES)
_TIMES = ("OriginalEntryTimestamp", "MajorChangeTimestamp", "CloseDate")
#: The history's columns the tiers and the trends read (the others stay in the files).
_HISTORY = ("ListingId", "ChangeType", "ChangeTimestamp", "PreviousListPrice", "ListPrice",
            "StandardStatus")  # fmt: skip


def _tier(price: str, codes: Sequence[int]) -> nw.Expr:
    """The tier code of ``price`` against the row's band edges ``q05`` .. ``q95`` (null
    outside them): ``[q05, q35)``, ``[q35, q65)``, ``[q65, q95]`` (:func:`~.tiers.band_tier`)."""
    p = nw.col(price)
    q05, q35, q65, q95 = (nw.col(n) for n in _NAMES)
    return (
        nw.when((p >= q05) & (p < q35))
        .then(nw.lit(codes[0]))
        .otherwise(
            nw.when((p >= q35) & (p < q65))
            .then(nw.lit(codes[1]))
            .otherwise(nw.when((p >= q65) & (p <= q95)).then(nw.lit(codes[2])))
        )
        .cast(nw.Int64)
    )


def _quantiles(rows: Any, groups: list[str], price: str) -> Any:
    """The :data:`_EDGES` quantiles of ``price`` per ``groups`` (``q05`` .. ``q95``), linear
    between the two closest ranks as pandas' ``quantile``: each row ranked within its group by
    a window (a sort the engine spills to disk: DuckDB's holistic ``quantile_cont`` held every
    value of every group in memory, 4 copies, and ran out of memory at 10M listings), then only
    the rows at the ranks the edges read (at most 8 per group) are aggregated."""
    ranked = rows.select(*groups, nw.col(price).alias("_p")).with_columns(
        (nw.col("_p").rank("ordinal").over(*groups).cast(nw.Int64) - 1).alias("_r"),
        nw.col("_p").count().over(*groups).cast(nw.Int64).alias("_n"),
    )
    at = {n: nw.lit(q) * (nw.col("_n") - 1).cast(nw.Float64) for q, n in zip(_EDGES, _NAMES,
                                                                             strict=True)}  # fmt: skip
    low = {n: pos.floor().cast(nw.Int64) for n, pos in at.items()}
    read = nw.lit(False)
    for lo in low.values():
        read = read | (nw.col("_r") == lo) | (nw.col("_r") == lo + 1)
    picked = ranked.filter(read).group_by(*groups).agg(
        *(nw.when(nw.col("_r") == lo).then(nw.col("_p")).max().alias(f"_a{n}")
          for n, lo in low.items()),
        *(nw.when(nw.col("_r") == lo + 1).then(nw.col("_p")).max().alias(f"_b{n}")
          for n, lo in low.items()),
        nw.col("_n").max().alias("_n"),
    )  # fmt: skip
    out = []
    for n, pos in at.items():
        a, b, frac = nw.col(f"_a{n}"), nw.col(f"_b{n}"), pos - pos.floor()
        out.append(nw.when(b.is_null()).then(a).otherwise(a + (b - a) * frac).alias(n))
    return picked.select(*groups, *out)


class EngineTiers:
    """The tiers of a market frame on the engine (``frame``: :func:`~._kernel.frame_of`'s,
    ``changes``: the history's, on the same engine, or None)."""

    def __init__(self, frame: Any, changes: Any | None, keys: Sequence[str], segment: str):
        self.keys = list(keys)
        self._kept: list[Any] = []
        listed = segment_filter(segment)
        for key in self.keys:
            listed &= ~nw.col(key).is_null()
        # only the columns read: every step that keeps rows on the engine keeps these
        self.frame = frame.filter(listed).select(
            *dict.fromkeys(["ListingId", *self.keys, *NEEDED_COLUMNS])
        )
        if changes is not None:
            schema = changes.collect_schema()
            changes = changes.select(*(c for c in _HISTORY if c in schema))
        self.changes = changes
        self.bands: dict[str, pd.DataFrame] = {}
        self.untiered = {"sales": 0, "listings": 0}

    def newest(self) -> pd.Timestamp | None:
        """The newest timestamp of the listed rows (UTC; the trends' default end)."""
        return newest(self.frame, list(_TIMES))

    def close(self) -> None:
        """Drop what the engine kept for the tiers."""
        while self._kept:
            release(self._kept.pop())

    def _keep(self, frame: Any) -> Any:
        """``frame`` computed once (:func:`~._engine_frames.persist`; on Spark a local
        checkpoint, which also cuts the plan: the trends' every step would re-analyse the
        bands, joins and union under it)."""
        kept = persist(frame)
        self._kept.append(kept)
        return kept

    def _spark(self) -> bool:
        return type(nw.to_native(self.frame)).__module__.startswith("pyspark")

    def _entry(self) -> nw.Expr:
        """The list price at entry: the old price of the first price change, else ListPrice."""
        return (
            nw.when(nw.col("_old").is_null())
            .then(nw.col("ListPrice").cast(nw.Float64).fill_nan(None))
            .otherwise(nw.col("_old"))
        )

    def _with_entry(self, rows: Any) -> Any:
        """``rows`` with ``_id`` (text) and ``_entry`` (the list price at entry)."""
        rows = rows.with_columns(nw.col("ListingId").cast(nw.String).alias("_id"))
        if self.changes is None or "PreviousListPrice" not in self.changes.collect_schema():
            return rows.with_columns(nw.lit(None, nw.Float64).alias("_old")).with_columns(
                self._entry().alias("_entry")
            )
        kind = nw.col("ChangeType").cast(nw.String)
        changes = self.changes.filter((kind == "price_change").fill_null(False)).select(
            nw.col("ListingId").cast(nw.String).alias("_id"),
            nw.col("ChangeTimestamp").alias("_at"),
            nw.col("PreviousListPrice").cast(nw.Float64).fill_nan(None).alias("_old"),
        )
        rows = rows.join(first_old(changes, "_id", "_at", "_old"), on="_id", how="left")
        return rows.with_columns(self._entry().alias("_entry"))

    def _periods(self, rows: Any, freq: str) -> tuple[Any, dict[str, np.ndarray]]:
        """``rows`` with each side's period (``_sp``: CloseDate's, ``_lp``: entry's; the base
        period's number), and each side's period starts (naive microseconds)."""
        micros = epoch_micros(
            rows.with_columns(
                nw.col("CloseDate").alias("_sc"), nw.col("OriginalEntryTimestamp").alias("_lc")
            ),
            ["_sc", "_lc"],
        )
        times = ("_sc", "_lc")
        span = collect(
            micros.select(
                *(nw.col(c).min().alias(f"lo{c}") for c in times),
                *(nw.col(c).max().alias(f"hi{c}") for c in times),
            )
        ).iloc[0]
        lows = [span[f"lo{c}"] for c in times if pd.notna(span[f"lo{c}"])]
        highs = [span[f"hi{c}"] for c in times if pd.notna(span[f"hi{c}"])]
        if not lows:
            starts = np.zeros(0, dtype="int64")
            micros = micros.with_columns(nw.lit(None, nw.Int64).alias("_sp"),
                                         nw.lit(None, nw.Int64).alias("_lp"))  # fmt: skip
            return micros, {"sale": starts, "list": starts}
        first, last = (pd.Timestamp(int(v), unit="us") for v in (min(lows), max(highs)))
        base = base_periods(first, last, freq)
        grid = Grid(1, *spans(base), width=1)
        periods = Periods(grid, freq)
        micros = micros.with_columns(
            periods.compute(nw.col("_sc")).alias("_sp"), periods.compute(nw.col("_lc")).alias("_lp")
        )
        return micros, {"sale": grid.base_starts, "list": grid.base_starts}

    def tag(self, freq: str) -> Any:
        """Every listed row with ``_sale`` and ``_list`` (tier codes, null: none); the bands
        of each side in :attr:`bands` (``keys``, ``period_begin``, ``q05`` .. ``q95``)."""
        rows = self._with_entry(self.frame)
        rows, starts = self._periods(rows, freq)
        closed = nw.col("StandardStatus") == "Closed"
        rows = rows.with_columns(
            nw.when(closed.fill_null(False))
            .then(nw.col("ClosePrice").cast(nw.Float64).fill_nan(None))
            .alias("_close")
        )
        rows = self._keep(rows)
        for side, price, period, codes in (
            ("sale", "_close", "_sp", SALE_CODES),
            ("list", "_entry", "_lp", LIST_CODES),
        ):
            known = rows.filter(~nw.col(price).is_null() & ~nw.col(period).is_null())
            edges = self._keep(_quantiles(known, [*self.keys, period], price))
            table = collect(edges)
            where = table[period].to_numpy(dtype="int64")
            table[period] = starts[side][where].astype("datetime64[us]")
            self.bands[side] = table.rename(columns={period: "period_begin"})
            rows = rows.join(edges, on=[*self.keys, period], how="left").with_columns(
                _tier(price, codes).alias(f"_{side}")
            ).drop(*_NAMES)  # fmt: skip
        rows = self._keep(rows)
        counts = collect(
            rows.select(
                (closed.fill_null(False) & nw.col("_sale").is_null()).cast(nw.Int64).sum()
                .alias("sales"),
                nw.col("_list").is_null().cast(nw.Int64).sum().alias("listings"),
            )
        ).iloc[0]  # fmt: skip
        self.untiered = {k: int(counts[k]) for k in ("sales", "listings")}
        return rows

    def tagged_rows(self, rows: Any, columns: Sequence[str]) -> tuple[Any, Any | None]:
        """The rows of both sides as one frame with ``tier`` (a code): the list-tiered rows,
        then a copy of each sale-tiered row under its own id; and the history to match (the
        changes of each copied sale again under the copy's id)."""
        names = [c for c in columns if c not in ("ListingId", "tier")]
        both = nw.concat(
            [
                rows.filter(~nw.col("_list").is_null()).select(
                    nw.col("_id").alias("ListingId"), *names, nw.col("_list").alias("tier")
                ),
                rows.filter(~nw.col("_sale").is_null()).select(
                    nw.concat_str(nw.col("_id"), nw.lit(SALE_COPY)).alias("ListingId"),
                    *names,
                    nw.col("_sale").alias("tier"),
                ),
            ],
            how="vertical",
        )
        if self._spark():
            both = self._keep(both)
        if self.changes is None:
            return both, None
        fields = [c for c in self.changes.collect_schema() if c != "ListingId"]
        history = self.changes.with_columns(nw.col("ListingId").cast(nw.String).alias("_id"))
        sold = rows.filter(~nw.col("_sale").is_null()).select("_id").unique()
        copies = history.join(sold, on="_id", how="inner")
        history = nw.concat(
            [
                history.select(nw.col("_id").alias("ListingId"), *fields),
                copies.select(
                    nw.concat_str(nw.col("_id"), nw.lit(SALE_COPY)).alias("ListingId"), *fields
                ),
            ],
            how="vertical",
        )
        return both, self._keep(history) if self._spark() else history
