"""The inputs of :mod:`._trends_engine`, kept on the engine: the market's listings and the
history's records with their times as integer microseconds (naive UTC), and each listing's status
intervals, built with the engine's window functions (narwhals ``over``).

Timestamps become integers through the one engine-specific step of the trends
(:func:`epoch_micros`: Polars ``dt.epoch``, DuckDB ``epoch_us``, Spark ``unix_micros``); after it
every step is a narwhals expression, so the periods, stocks, flows and medians are the same
expressions on every engine. Status codes are :mod:`._trends_kernel`'s.

>>> import datetime as dt, narwhals as nw, polars as pl
>>> frame = nw.from_native(pl.LazyFrame({"t": [dt.datetime(1970, 1, 2, tzinfo=dt.UTC)]}))
>>> epoch_micros(frame, ["t"]).collect()["t"].to_list()
[86400000000]
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Sequence
from typing import Any

import narwhals as nw
import numpy as np
import pandas as pd

from realtyframes.analysis._kernel import segment_filter
from realtyframes.analysis._trends_kernel import ACTIVE, CLOSED, OTHER, PENDING, UNDER_CONTRACT

__all__ = [
    "DAY",
    "collected",
    "epoch_micros",
    "first_old",
    "has_rows",
    "held_medians",
    "history_frame",
    "intervals_frame",
    "listing_frame",
    "market_codes",
    "one_engine",
    "persist",
    "rank_medians",
    "release",
    "since_pending",
]

DAY = 86_400_000_000  # microseconds
_TIMES = {"ent": "OriginalEntryTimestamp", "maj": "MajorChangeTimestamp", "clo": "CloseDate"}
_NUMBERS = {
    "list": "ListPrice",
    "prev": "PreviousListPrice",
    "close": "ClosePrice",
    "area": "LivingArea",
    "dom": "DaysOnMarket",
}
_CODES = {
    "Active": ACTIVE,
    "Pending": PENDING,
    "Closed": CLOSED,
    "Active Under Contract": UNDER_CONTRACT,
}


def epoch_micros(frame: Any, columns: Sequence[str]) -> Any:
    """``frame`` (narwhals, lazy) with the timestamp ``columns`` as integer microseconds since
    the epoch in UTC (a naive timestamp read as UTC, a date as its midnight), null kept."""
    native = nw.to_native(frame)
    module = type(native).__module__
    if module.startswith("polars"):
        import polars as pl

        schema = native.collect_schema()
        out: Any = native.with_columns(
            (pl.col(c).cast(pl.Datetime("us")) if schema[c] == pl.Date else pl.col(c))
            .dt.epoch("us")
            .alias(c)
            for c in columns
        )
    elif module.startswith("duckdb"):
        types = dict(zip(native.columns, native.types, strict=True))
        parts = []
        for c in native.columns:
            quoted = '"' + c.replace('"', '""') + '"'
            if c in columns:
                kind = str(types[c]).upper()
                zoned = "TIME ZONE" in kind or "TIMESTAMPTZ" in kind
                target = "TIMESTAMPTZ" if zoned else "TIMESTAMP"  # nanoseconds cut to micro
                value = quoted if kind == "DATE" else f"CAST({quoted} AS {target})"
                parts.append(f"epoch_us({value}) AS {quoted}")
            else:
                parts.append(quoted)
        out = native.project(", ".join(parts))
    elif module.startswith("pyspark"):
        from pyspark.sql import functions as F

        out = native.withColumns({c: F.unix_micros(F.col(c).cast("timestamp")) for c in columns})
    else:  # pragma: no cover - every lazy engine narwhals reads is one of these
        raise TypeError(f"no epoch conversion for {module}")
    return nw.from_native(out)


def collected(frame: Any) -> pd.DataFrame:
    """A narwhals frame's rows as pandas (an aggregate: small)."""
    if isinstance(frame, nw.LazyFrame):
        frame = frame.collect()
    return frame.to_pandas().reset_index(drop=True)


def has_rows(frame: Any) -> bool:
    """Whether a narwhals frame has a row (one count on the engine)."""
    return int(collected(frame.select(nw.len())).iloc[0, 0]) > 0


def persist(frame: Any) -> Any:
    """``frame`` computed once and kept by the engine, for the steps that read it again
    (Polars: collected; DuckDB: a temporary table of the relation's connection; Spark: a local
    checkpoint).
    :func:`release` drops what this kept."""
    native = nw.to_native(frame)
    module = type(native).__module__
    if module.startswith("polars"):
        return nw.from_native(native.collect().lazy())
    if module.startswith("duckdb"):
        name = f"_realtyframes_trends_{uuid.uuid4().hex}"
        native.query("_rows", f'CREATE TEMP TABLE "{name}" AS SELECT * FROM _rows').fetchall()
        return nw.from_native(native.query("_rows", f'SELECT * FROM "{name}"'))
    if module.startswith("pyspark"):  # computed now, and the plan cut: a later step's plan
        return nw.from_native(native.localCheckpoint(eager=True))  # is not re-analysed
    return frame  # pragma: no cover - every lazy engine narwhals reads is one of these


def release(frame: Any) -> None:
    """Drop what :func:`persist` kept for ``frame`` (a DuckDB temporary table, a Spark
    checkpoint's blocks)."""
    native = nw.to_native(frame)
    module = type(native).__module__
    if module.startswith("duckdb"):
        name = native.sql_query().rpartition("FROM ")[2].strip().split()[0]
        if name.startswith('"_realtyframes_trends_'):
            native.query("_rows", f"DROP TABLE IF EXISTS {name}").fetchall()
    elif module.startswith("pyspark"):
        native.unpersist()


def rank_medians(frame: Any, groups: Sequence[str], columns: Sequence[str]) -> pd.DataFrame:
    """Per ``groups``, the exact median of each of ``columns`` (nulls left out; the mean of the
    two middle values of an even count, as pandas), collected: each value ranked in its group by
    a window (a sort the engine spills to disk; DuckDB's ``median``, a holistic aggregate, holds
    every value of every group in memory and ran out at 10M listings), then only the middle
    rows aggregated."""
    out: pd.DataFrame | None = None
    for column in columns:
        rows = frame.filter(~nw.col(column).is_null()).select(*groups, nw.col(column).alias("_v"))
        rows = rows.with_columns(
            (nw.col("_v").rank("ordinal").over(*groups).cast(nw.Int64) - 1).alias("_r"),
            nw.col("_v").count().over(*groups).cast(nw.Int64).alias("_k"),
        )
        middle = (nw.col("_r") == (nw.col("_k") - 1) // 2) | (nw.col("_r") == nw.col("_k") // 2)
        found = collected(rows.filter(middle).group_by(*groups).agg(nw.col("_v").mean()))
        found = found.rename(columns={"_v": column})
        out = found if out is None else out.merge(found, on=list(groups), how="outer")
    return pd.DataFrame(columns=[*groups]) if out is None else out


def market_codes(markets: pd.Index, columns: Sequence[pd.Series]) -> np.ndarray:
    """The position in ``markets`` (an index of key tuples) of each row's keys (``columns``,
    one per key; −1: none): each key's distinct values coded against the markets' values, the
    codes combined into one integer and looked up. No tuple per row: for the millions of rows of the age of inventory's
    counts at 10M listings a row's tuple held hundreds of MB in the driver.

    >>> market_codes(pd.Index([("a", 1), ("b", 2)], tupleize_cols=False),
    ...              [pd.Series(["b", "a", "a"]), pd.Series([2, 1, 2])]).tolist()
    [1, 0, -1]
    """
    rows = np.zeros(len(columns[0]), dtype="int64")
    known = np.zeros(len(markets), dtype="int64")
    missing = np.zeros(len(rows), dtype=bool)
    stride = 1
    for i, column in enumerate(columns):
        values = [market[i] for market in markets]
        level = pd.Index(list(dict.fromkeys(values)), tupleize_cols=False)
        found, uniques = pd.factorize(column)  # each distinct value looked up once
        code = np.append(level.get_indexer(uniques), -1)[found]  # found −1 (null): −1
        missing |= code < 0
        rows += code * stride
        known += level.get_indexer(pd.Index(values, tupleize_cols=False)) * stride
        stride *= max(1, len(level))
        if stride > 2**62:  # pragma: no cover - more key combinations than an int64 holds
            tuples = pd.Index(list(zip(*(c.tolist() for c in columns), strict=True)),
                              tupleize_cols=False)  # fmt: skip
            return markets.get_indexer(tuples)
    found = pd.Index(known).get_indexer(rows)
    found[missing] = -1
    return found


def _each_window(spans: Any, longest: int) -> Any:
    """Each row of ``spans`` once per window ``lo`` .. ``hi`` − 1 (as ``win``): the offset
    ``win − lo = a·step + b``, the rows copied ``step`` times for ``b`` then for ``a``, so
    about 2·√``longest`` copies of a small table, not ``longest``."""
    step = math.isqrt(longest - 1) + 1  # ceil(sqrt(longest))
    inner = [spans.filter(nw.col("lo") + b < nw.col("hi")).with_columns(
        (nw.col("lo") + b).alias("win")) for b in range(min(step, longest))]  # fmt: skip
    rows = inner[0] if len(inner) == 1 else nw.concat(inner, how="vertical")
    outer = [rows.filter(nw.col("win") + a * step < nw.col("hi")).with_columns(
        (nw.col("win") + a * step).alias("win")) for a in range(-(-longest // step))]  # fmt: skip
    return outer[0] if len(outer) == 1 else nw.concat(outer, how="vertical")


def held_medians(rows: Any, groups: Sequence[str], value: str) -> pd.DataFrame:
    """Per ``groups`` × window ``win``, the median of the integer ``value`` over the rows held
    at the end of windows ``lo`` .. ``hi`` − 1 (``lo < hi``), as ``median`` (the mean of the
    two middle values of an even count) and their count ``n``, collected: the rows counted per
    (``groups``, ``value``, ``lo``, ``hi``), spread over their windows, counted per value, and
    the middle values found by a running sum in value order. Only ``groups`` × windows come
    back (the age of inventory: the counts per entry day were millions of rows at 10M)."""
    spans = persist(rows.group_by(*groups, value, "lo", "hi").agg(
        nw.len().cast(nw.Int64).alias("_k")))  # fmt: skip
    try:
        longest = collected(spans.select((nw.col("hi") - nw.col("lo")).max().alias("j")))
        if longest.empty or pd.isna(longest.iloc[0, 0]):
            return pd.DataFrame(columns=[*groups, "win", "median", "n"])
        part = [*groups, "win"]
        counts = _each_window(spans, int(longest.iloc[0, 0])).group_by(*part, value).agg(
            nw.col("_k").sum())  # fmt: skip
        counts = counts.with_columns(
            nw.col("_k").cum_sum().over(*part, order_by=value).alias("_c"),
            nw.col("_k").sum().over(*part).alias("_n"),
        )
        below, above = ((nw.col("_n") - 1) // 2, nw.col("_n") // 2)  # 0-based middle ranks
        table = collected(counts.group_by(*part).agg(
            nw.when(nw.col("_c") > below).then(nw.col(value)).min().alias("_a"),
            nw.when(nw.col("_c") > above).then(nw.col(value)).min().alias("_b"),
            nw.col("_n").max().alias("n"),
        ))  # fmt: skip
    finally:
        release(spans)
    table["median"] = (table["_a"].astype("float64") + table["_b"].astype("float64")) / 2
    return table.drop(columns=["_a", "_b"])


def first_old(changes: Any, id_: str = "id", at: str = "at", old: str = "old") -> Any:
    """Per listing (``id_``), ``_old``: the largest old price among its price changes at the
    first change time. Group-bys and a join, which the engines spill to disk (a window over
    every listing's changes ran DuckDB out of memory at 10M listings)."""
    firsts = changes.group_by(id_).agg(nw.col(at).min())
    first = changes.select(id_, at, old).join(firsts, on=[id_, at], how="inner")
    return first.group_by(id_).agg(nw.col(old).max().alias("_old"))


def one_engine(frame: Any, other: Any | None) -> bool:
    """Whether two lazy frames can meet in one query: the same engine (and for DuckDB the same
    connection; relations of two connections do not join)."""
    if other is None:
        return True
    a, b = nw.to_native(frame), nw.to_native(other)
    if type(a) is not type(b):
        return False
    if type(a).__module__.startswith("duckdb"):
        import duckdb

        try:
            a.limit(0).cross(b.limit(0))
        except duckdb.Error:
            return False
    return True


def _codes(column: str) -> nw.Expr:
    """The status code of a text status column (:data:`_CODES`, else OTHER)."""
    status = nw.col(column)
    code: Any = nw.lit(OTHER)
    for name, value in reversed(_CODES.items()):
        code = nw.when(status == name).then(nw.lit(value)).otherwise(code)
    return code.cast(nw.Int64)


def _float(column: str) -> nw.Expr:
    return nw.col(column).cast(nw.Float64).fill_nan(None)


def listing_frame(frame: Any, keys: Sequence[str], segment: str) -> Any:
    """The listings of ``segment`` with a value in every key: ``id`` (text), the keys, ``st``
    (status code), the numbers (``list``, ``prev``, ``close``, ``area``, ``dom``; NaN as null)
    and the times ``ent``, ``maj``, ``clo`` (microseconds)."""
    schema = frame.collect_schema()
    rows = frame.filter(segment_filter(segment))
    for key in keys:
        rows = rows.filter(~nw.col(key).is_null())
    identity = nw.col("ListingId")
    rows = rows.select(
        (identity if schema["ListingId"] == nw.String else identity.cast(nw.String)).alias("id"),
        *keys,
        _codes("StandardStatus").alias("st"),
        *(_float(c).alias(name) for name, c in _NUMBERS.items()),
        *(nw.col(c).alias(name) for name, c in _TIMES.items()),
    )
    return epoch_micros(rows, list(_TIMES))


def history_frame(changes: Any, listings: Any, keys: Sequence[str]) -> Any:
    """The status and price changes of the ``listings`` (:func:`listing_frame`): ``id``, the
    keys, ``ent``, ``at`` (microseconds), ``is_status``, ``hst`` (the new status's code),
    ``old`` and ``new`` (prices, null where the history lacks them)."""
    schema = changes.collect_schema()
    kind = nw.col("ChangeType").cast(nw.String)
    is_status = (kind == "status_change").fill_null(False)
    keep = is_status | (kind == "price_change").fill_null(False)

    def price(column: str) -> nw.Expr:
        value = _float(column) if column in schema else nw.lit(None, nw.Float64)
        return value

    status = _codes("StandardStatus") if "StandardStatus" in schema else nw.lit(OTHER, nw.Int64)
    identity = nw.col("ListingId")
    rows = changes.filter(keep).select(
        (identity if schema["ListingId"] == nw.String else identity.cast(nw.String)).alias("id"),
        nw.col("ChangeTimestamp").alias("at"),
        is_status.alias("is_status"),
        status.alias("hst"),
        price("PreviousListPrice").alias("old"),
        price("ListPrice").alias("new"),
    )
    rows = epoch_micros(rows, ["at"])
    return rows.join(listings.select("id", *keys, "ent"), on="id", how="inner")


def intervals_frame(listings: Any, history: Any | None, keys: Sequence[str]) -> Any:
    """Each listing's status intervals (:func:`~._stocks.status_intervals` on the engine):
    ``id``, the keys, ``ent``, ``st``, ``start``, ``stop`` (null: not ended). Active from entry,
    then each status event at or after entry, in time order (the entry first at the same
    instant); a closing the history lacks at CloseDate; without a history the current status
    from MajorChangeTimestamp (CloseDate for a closed listing)."""
    cols = ["id", *keys, "ent"]
    has_close = (nw.col("st") == CLOSED) & ~nw.col("clo").is_null()
    entries = listings.filter(~nw.col("ent").is_null()).select(
        *cols, nw.col("ent").alias("start"), nw.lit(ACTIVE, nw.Int64).alias("code"),
        nw.lit(0, nw.Int64).alias("seq"),
    )  # fmt: skip
    if history is None:
        moved = listings.filter(nw.col("st") != ACTIVE).select(
            *cols,
            nw.when(has_close).then(nw.col("clo")).otherwise(nw.col("maj")).alias("start"),
            nw.col("st").alias("code"),
            nw.lit(1, nw.Int64).alias("seq"),
        )
        events = [moved]
    else:
        status = history.filter(nw.col("is_status"))
        closing = status.filter(nw.col("hst") == CLOSED).select("id").unique()
        closing = closing.with_columns(nw.lit(True).alias("_seen"))
        extra = listings.filter(has_close).join(closing, on="id", how="left")
        extra = extra.filter(nw.col("_seen").is_null()).select(
            *cols, nw.col("clo").alias("start"), nw.lit(CLOSED, nw.Int64).alias("code"),
            nw.lit(1, nw.Int64).alias("seq"),
        )  # fmt: skip
        logged = status.select(
            *cols, nw.col("at").alias("start"), nw.col("hst").alias("code"),
            nw.lit(1, nw.Int64).alias("seq"),
        )  # fmt: skip
        events = [logged, extra]
    after = [
        e.filter(~nw.col("start").is_null() & ~nw.col("ent").is_null()).filter(
            nw.col("start") >= nw.col("ent")
        )
        for e in events
    ]
    timeline = nw.concat([entries, *after], how="vertical")
    stop = nw.col("start").shift(-1).over("id", order_by=["start", "seq", "code"])
    timeline = timeline.with_columns(stop.alias("stop"))
    kept = timeline.filter(nw.col("stop").is_null() | (nw.col("stop") > nw.col("start")))
    return kept.select(*cols, nw.col("code").alias("st"), "start", "stop")


def since_pending(listings: Any, intervals: Any, keys: Sequence[str]) -> Any:
    """The sold ``listings`` (``id``, keys, ``clo``, ``b_clo``) with ``since``: the latest
    start of a Pending interval (:func:`intervals_frame`) at or before CloseDate (none: left
    out). One window over each listing's Pending starts and its close in time order (a sort
    the engine spills; two joins on the text id ran DuckDB out of memory), a Pending start at
    the close's instant counted."""
    never = -(2**62)  # before any time; a null would stay null in Polars
    sold = listings.filter((nw.col("st") == CLOSED) & ~nw.col("clo").is_null()).select(
        "id", *keys, nw.col("clo").alias("t"), nw.lit(never, nw.Int64).alias("p"),
        nw.lit(1, nw.Int64).alias("kind"), "b_clo",
    )  # fmt: skip
    pending = intervals.filter(nw.col("st") == PENDING).select(
        "id", *keys, nw.col("start").alias("t"), nw.col("start").alias("p"),
        nw.lit(0, nw.Int64).alias("kind"), nw.lit(None, nw.Int64).alias("b_clo"),
    )  # fmt: skip
    rows = nw.concat([sold, pending], how="vertical")
    since = nw.col("p").cum_max().over("id", order_by=["t", "kind"])
    rows = rows.with_columns(since.alias("since")).filter(
        (nw.col("kind") == 1) & (nw.col("since") > never)
    )
    return rows.select("id", *keys, nw.col("t").alias("clo"), "b_clo", "since")
