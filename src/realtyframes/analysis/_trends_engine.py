"""``market_trends`` computed on the engine (Polars, DuckDB, PySpark): the status timelines,
stocks, flows, medians and competition columns reduced by the engine's group-bys and window
functions (narwhals expressions); only the (market, period) aggregates come back to pandas, and
:mod:`.trends` finishes them as on the pandas path (ratios, blanking, changes).

The periods are integer arithmetic on each time's day number (:class:`Periods`: the week ending
Sunday, the calendar month or quarter, with no join); a rolling window of ``width`` base periods
holds an event of base period ``b`` in windows ``b - width + 1 .. b`` (the rows repeated once per
window: :meth:`Periods.windows`). The stocks come back as the differences at each interval's
first and last window, the age of inventory's median entry day per market and window, the
medians exact from ranks (:func:`~._engine_frames.rank_medians`: a window that spills, never a
holistic median). :func:`trend_cells`, the entry point, also takes extra keys (a tier) as markets.

>>> Periods.week(4)  # 1970-01-05, a Monday: the week after the first
1
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import narwhals as nw
import numpy as np
import pandas as pd

from realtyframes.analysis._common import as_key
from realtyframes.analysis._competition import TWO_WEEKS
from realtyframes.analysis._definitions import REDFIN_PENDING_DAYS
from realtyframes.analysis._engine_frames import (
    DAY,
    first_old,
    has_rows,
    held_medians,
    history_frame,
    intervals_frame,
    listing_frame,
    market_codes,
    persist,
    rank_medians,
    release,
    since_pending,
)
from realtyframes.analysis._engine_frames import (
    collected as _collect,
)
from realtyframes.analysis._periods import Grid
from realtyframes.analysis._trends_kernel import ACTIVE, CLOSED, PENDING, UNDER_CONTRACT
from realtyframes.analysis.market import SALE_TO_LIST_RANGE

__all__ = ["EngineTrends", "Periods", "trend_cells"]

#: The history's records the trends read.
_RECORDS = (
    nw.col("ChangeType").cast(nw.String).is_in(["status_change", "price_change"]).fill_null(False)
)


class Periods:
    """A :class:`~._periods.Grid`'s base periods and windows as engine expressions."""

    def __init__(self, grid: Grid, freq: str) -> None:
        self.freq, self.width, self.n = freq, grid.width, grid.n_periods
        starts = [int(t) for t in grid.base_starts]
        self.bounds = [*starts, int(grid.base_ends[-1]) + 1] if starts else []
        self.origin = self.week(starts[0] // DAY) if starts else 0

    @staticmethod
    def week(day: Any) -> Any:
        """The week (Monday to Sunday) of a day number (days since 1970-01-01, a Thursday):
        Python ints or engine expressions."""
        return (day + 3) // 7

    def compute(self, micros: nw.Expr) -> nw.Expr:
        """The base period of a time (0: the grid's first; −1 before it, the number of base
        periods after them). Weeks by arithmetic on the day; months and quarters by counting
        the period starts at or before the time (a small sum, the same on every engine)."""
        if self.freq in ("W", "4W"):
            return self.week(micros // DAY) - self.origin
        passed = [(micros >= bound).cast(nw.Int64) for bound in self.bounds]
        counted = nw.sum_horizontal(*passed) - 1 if passed else micros * 0 - 1
        return nw.when(~micros.is_null()).then(counted)  # a sum reads null as 0

    def add(self, frame: Any, columns: Sequence[str]) -> Any:
        """``frame`` with each time column's base period as ``b_<column>`` (computed once, read
        by every step; ``stop`` also as ``b_stop1``, the period of the instant before it)."""
        exprs = [self.compute(nw.col(c)).alias(f"b_{c}") for c in columns]
        if "stop" in columns:
            exprs.append(self.compute(nw.col("stop") - 1).alias("b_stop1"))
        return frame.with_columns(*exprs)

    @staticmethod
    def base(column: str) -> nw.Expr:
        """The base period of the time ``column`` (:meth:`add` put it on the frame)."""
        return nw.col(f"b_{column}")

    def window_of(self, column: str) -> nw.Expr:
        """The first window ending at or after a time (``Grid.window_of``; null: never)."""
        b = self.base(column) - (self.width - 1)
        return b.clip(0, self.n).fill_null(self.n)

    def starts_before(self, column: str) -> nw.Expr:
        """How many windows start before a time (``Grid.starts_before``; null: all)."""
        return (self.base(f"{column}1") + 1).clip(0, self.n).fill_null(self.n)

    def windows(self, frame: Any, micros: str, name: str = "win") -> Any:
        """The rows of ``frame`` once per window holding the time ``micros`` (as ``name``)."""
        b = self.base(micros)
        copies = [frame.with_columns((b - k).alias(name)) for k in range(self.width)]
        rows = copies[0] if len(copies) == 1 else nw.concat(copies, how="vertical")
        return rows.filter((nw.col(name) >= 0) & (nw.col(name) < self.n))


class EngineTrends:
    """A market frame (and its history) on the engine, ready for :func:`trend_cells`."""

    def __init__(self, frame: Any, changes: Any | None, keys: Sequence[str], segment: str):
        self.keys = list(keys)
        self._kept: list[Any] = []
        self.listings = self.keep(listing_frame(frame, self.keys, segment))
        self.history = None
        if changes is not None and has_rows(changes.filter(_RECORDS)):
            self.history = history_frame(changes, self.listings, keys)
        self.markets = self._markets()
        self.intervals: Any = None

    def prepare(self, periods: Periods) -> None:
        """The listings, history and status intervals with their times' base periods, each
        computed once on the engine."""
        self.listings = self.keep(periods.add(self.listings, ["ent", "maj", "clo"]))
        if self.history is not None:
            self.history = self.keep(periods.add(self.history, ["at"]))
        intervals = intervals_frame(self.listings, self.history, self.keys)
        self.intervals = self.keep(periods.add(intervals, ["start", "stop"]))

    def keep(self, frame: Any) -> Any:
        """``frame`` computed once on the engine (read by several steps), until :meth:`close`."""
        kept = persist(frame)
        self._kept.append(kept)
        return kept

    def drop(self, frame: Any) -> None:
        """Drop what the engine kept for ``frame`` (:meth:`keep`) once no step reads it."""
        for i, kept in enumerate(self._kept):
            if kept is frame:
                release(self._kept.pop(i))
                return

    def close(self) -> None:
        """Drop what the engine kept for these trends."""
        while self._kept:
            release(self._kept.pop())

    def _markets(self) -> pd.Index:
        if not self.keys:
            seen = _collect(self.listings.select(nw.len()))
            return pd.Index(["All"] if int(seen.iloc[0, 0]) else [], dtype=object)
        found = _collect(self.listings.select(*self.keys).unique())
        values = [as_key(found[k]) for k in self.keys]
        if len(self.keys) == 1:
            return pd.Index(sorted(values[0].tolist()), tupleize_cols=False)
        tuples = sorted(zip(*(v.tolist() for v in values), strict=True))
        return pd.Index(tuples, tupleize_cols=False)

    def bounds(self) -> tuple[int | None, int | None]:
        """The earliest and the newest time of the listings (microseconds), None if none."""
        times = ("ent", "maj", "clo")
        row = _collect(
            self.listings.select(
                *(nw.col(c).min().alias(f"lo_{c}") for c in times),
                *(nw.col(c).max().alias(f"hi_{c}") for c in times),
            )
        ).iloc[0]
        lows = [int(row[f"lo_{c}"]) for c in times if pd.notna(row[f"lo_{c}"])]
        highs = [int(row[f"hi_{c}"]) for c in times if pd.notna(row[f"hi_{c}"])]
        return (min(lows) if lows else None, max(highs) if highs else None)

    def codes(self, table: pd.DataFrame) -> np.ndarray:
        """The market code of each row of a fetched aggregate (by its key columns)."""
        if not self.keys:
            return np.zeros(len(table), dtype="int64")
        if len(self.keys) == 1:
            return self.markets.get_indexer(as_key(table[self.keys[0]]))
        return market_codes(self.markets, [as_key(table[k]) for k in self.keys])

    def cells(
        self, grid: Grid, freq: str, as_of: int, definitions: str
    ) -> tuple[dict[str, np.ndarray], pd.DataFrame]:
        """:func:`trend_cells` of this frame; then what the engine kept is dropped."""
        try:
            return trend_cells(self, grid, freq, as_of, definitions)
        finally:
            self.close()


class _Fetch:
    """Aggregates by (keys, a window or a position column) fetched into markets × positions."""

    def __init__(self, engine: EngineTrends, grid: Grid) -> None:
        self.engine, self.grid = engine, grid

    def table(self, frame: Any, by: Sequence[str], aggs: Sequence[nw.Expr]) -> pd.DataFrame:
        keys = self.engine.keys
        out = _collect(frame.group_by(*keys, *by).agg(*aggs))
        out["_market"] = self.engine.codes(out)
        return out[out["_market"] >= 0]

    def cells(self, table: pd.DataFrame, column: str, win: str = "win") -> np.ndarray:
        """A value per flat cell (NaN where no row)."""
        out = np.full(self.grid.size, np.nan)
        flat = table["_market"].to_numpy() * self.grid.n_periods + table[win].to_numpy()
        out[flat.astype("int64")] = table[column].to_numpy(dtype="float64")
        return out

    def grid_counts(self, table: pd.DataFrame, column: str, at: str, width: int) -> np.ndarray:
        """Counts by (market, position 0 .. width - 1) as an int array."""
        out = np.zeros(self.grid.n_markets * width, dtype="int64")
        flat = table["_market"].to_numpy() * width + table[at].to_numpy().astype("int64")
        np.add.at(out, flat, table[column].to_numpy().astype("int64"))
        return out.reshape(self.grid.n_markets, width)

    def differences(self, frame: Any, lo: str, hi: str, extra: Sequence[str] = ()) -> pd.DataFrame:
        """+1 at ``lo``, −1 at ``hi`` per (keys, ``extra``, position), as one table ``d``."""
        up = self.table(frame, [*extra, lo], [nw.len().alias("d")]).rename(columns={lo: "at"})
        down = self.table(frame, [*extra, hi], [nw.len().alias("d")]).rename(columns={hi: "at"})
        up["d"] = up["d"].astype("int64")
        down["d"] = -down["d"].astype("int64")  # counts may come back unsigned
        return pd.concat([up, down], ignore_index=True)


def trend_cells(
    engine: EngineTrends, grid: Grid, freq: str, as_of: int, definitions: str
) -> tuple[dict[str, np.ndarray], pd.DataFrame]:
    """The counts (markets × periods arrays) and the medians and ratios (by flat cell, with their
    ``_n``) of ``market_trends`` computed on the engine: the same as the pandas path's cells."""
    periods, fetch = Periods(grid, freq), _Fetch(engine, grid)
    engine.prepare(periods)
    counts = {**_stocks(engine, periods, fetch), **_flows(engine, periods, fetch, definitions)}
    stats = [_sales(engine, periods, fetch, definitions), _age(engine, periods, fetch, as_of)]
    more, cut_stats = _cuts(engine, periods, fetch)
    counts.update(more)
    stats.append(cut_stats)
    if engine.history is not None:
        stats.append(_contracts(engine, periods, fetch, as_of))
    else:
        from realtyframes.analysis._competition import no_contract_stats

        stats.append(no_contract_stats())
    return counts, pd.concat(stats, axis=1)


def _stocks(engine: EngineTrends, periods: Periods, fetch: _Fetch) -> dict[str, np.ndarray]:
    """The stocks at the windows' ends and the listings Active at any point in them."""
    n = periods.n
    layer = {ACTIVE: 0, PENDING: 1, UNDER_CONTRACT: 2}
    spans = engine.intervals.filter(nw.col("st").is_in(list(layer))).with_columns(
        periods.window_of("start").alias("lo"),
        periods.window_of("stop").alias("hi"),
    )
    diff = fetch.differences(spans, "lo", "hi", ["st"])
    out: dict[str, np.ndarray] = {}
    for name, code in (("active_listings", ACTIVE), ("pending_listings", PENDING),
                       ("_under_contract", UNDER_CONTRACT)):  # fmt: skip
        part = diff[diff["st"] == code]
        out[name] = np.cumsum(fetch.grid_counts(part, "d", "at", n + 1), axis=1)[:, :n]
    active = engine.intervals.filter(nw.col("st") == ACTIVE).with_columns(
        periods.window_of("start").alias("lo"),
        periods.starts_before("stop").alias("hi"),
    )
    before = nw.col("hi").shift(1).over("id", order_by=["start"])
    active = active.with_columns(
        nw.when(before.is_null()).then(nw.col("lo")).otherwise(nw.max_horizontal("lo", before))
        .alias("lo")
    ).filter(nw.col("hi") > nw.col("lo"))  # fmt: skip
    diff = fetch.differences(active, "lo", "hi")
    out["active_listings_any"] = np.cumsum(fetch.grid_counts(diff, "d", "at", n + 1), axis=1)[:, :n]
    return out


def _flows(
    engine: EngineTrends, periods: Periods, fetch: _Fetch, definitions: str
) -> dict[str, np.ndarray]:
    """new_listings, homes_sold (base counts summed over each window) and pending_sales
    (distinct listings that went Pending in the window)."""
    n = periods.n
    out: dict[str, np.ndarray] = {}
    listings = engine.listings
    sold = listings.filter((nw.col("st") == CLOSED) & ~nw.col("clo").is_null())
    for name, frame, at in (("new_listings", listings, "ent"), ("homes_sold", sold, "clo")):
        rows = periods.windows(frame.filter(~nw.col(at).is_null()), at)
        table = fetch.table(rows, ["win"], [nw.len().alias("k")])
        out[name] = fetch.grid_counts(table, "k", "win", n)
    went = engine.intervals.filter(nw.col("st") == PENDING)
    if definitions == "redfin":
        days = nw.col("start") // DAY - nw.col("ent") // DAY
        went = went.filter(days <= REDFIN_PENDING_DAYS)
    rows = periods.windows(went, "start")
    table = fetch.table(rows, ["win"], [nw.col("id").n_unique().alias("k")])
    out["pending_sales"] = fetch.grid_counts(table, "k", "win", n)
    return out


def _entry_price(engine: EngineTrends) -> Any:
    """Each listing with ``entry``: the old price of its first price change, else ListPrice."""
    listings = engine.listings
    if engine.history is None:
        return listings.with_columns(nw.col("list").alias("entry"))
    joined = listings.join(first_old(engine.history.filter(~nw.col("is_status"))), on="id",
                           how="left")  # fmt: skip
    return joined.with_columns(
        nw.when(nw.col("_old").is_null()).then(nw.col("list")).otherwise(nw.col("_old"))
        .alias("entry")
    )  # fmt: skip


def _ratio(num: nw.Expr, den: nw.Expr) -> nw.Expr:
    """num / den, null where den is 0 or null (``safe_div``)."""
    return nw.when(~den.is_null() & (den != 0)).then(num / den)


def _sales(engine: EngineTrends, periods: Periods, fetch: _Fetch, definitions: str) -> pd.DataFrame:
    """The sale medians and means by CloseDate's window and median_list_price by entry's."""
    redfin = definitions == "redfin"
    priced = engine.keep(_entry_price(engine))
    against = nw.col("entry") if redfin else nw.col("list")
    listed = nw.col("list") if redfin else nw.col("entry")
    low, high = SALE_TO_LIST_RANGE
    sold = priced.filter((nw.col("st") == CLOSED) & ~nw.col("clo").is_null())
    ratio, above = _ratio(nw.col("close"), against), _ratio(nw.col("close"), nw.col("list"))
    sold = sold.with_columns(
        nw.col("close").alias("median_sale_price"),
        _ratio(nw.col("close"), nw.when(nw.col("area") > 0).then(nw.col("area"))).alias(
            "median_sale_ppsf"
        ),
        nw.col("dom").alias("median_dom"),
        nw.when((ratio >= low) & (ratio <= high)).then(ratio).alias("avg_sale_to_list"),
        nw.when((above >= low) & (above <= high))
        .then((above > 1.0).cast(nw.Float64))
        .alias("pct_sold_above_list"),
    )
    rows = periods.windows(sold, "clo")
    medians = ("median_sale_price", "median_sale_ppsf", "median_dom")
    means = ("avg_sale_to_list", "pct_sold_above_list")
    table = fetch.table(
        rows,
        ["win"],
        [
            *(nw.col(c).mean().alias(c) for c in means),
            *(nw.col(c).count().alias(f"{c}_n") for c in (*medians, *means)),
        ],
    )
    on = [*engine.keys, "win"]  # the medians by ranks (spill), not the engine's median
    table = table.merge(rank_medians(rows, on, medians), on=on, how="left")
    skip = {"win", "_market", *engine.keys}
    out = {c: fetch.cells(table, c) for c in table.columns if c not in skip}
    entered = periods.windows(priced.filter(~nw.col("ent").is_null()), "ent")
    entered = entered.with_columns(listed.alias("median_list_price"))
    out.update(_median(fetch, entered, "median_list_price"))
    engine.drop(priced)
    return pd.DataFrame(out)


def _age(engine: EngineTrends, periods: Periods, fetch: _Fetch, as_of: int) -> pd.DataFrame:
    """age_of_inventory: the window's last day (the data's end for the running one) minus the
    median entry day of the listings Active at its end (:func:`~._engine_frames.held_medians`
    over the windows each Active interval spans at their end: only markets × windows come back)."""
    grid = fetch.grid
    active = engine.intervals.filter(nw.col("st") == ACTIVE).with_columns(
        periods.window_of("start").alias("lo"),
        periods.window_of("stop").alias("hi"),
        (nw.col("ent") // DAY).alias("day"),
    ).filter(nw.col("hi") > nw.col("lo"))  # fmt: skip
    table = held_medians(active.select(*engine.keys, "day", "lo", "hi"), engine.keys, "day")
    table = table.assign(_market=engine.codes(table)).query("_market >= 0")
    end_day = np.minimum(grid.ends, as_of) // DAY
    table["age"] = end_day[table["win"].to_numpy(dtype="int64")] - table["median"]
    n = np.nan_to_num(fetch.cells(table, "n")).astype("int64")  # no row: none Active
    return pd.DataFrame({"age_of_inventory": fetch.cells(table, "age"), "age_of_inventory_n": n})


def _changes(engine: EngineTrends) -> Any:
    """The price changes (``id``, keys, ``at``, ``new``) with ``before``: the listing's price
    before each (the previous change's new price, else its price at entry)."""
    keys = engine.keys
    if engine.history is None:
        moved = (nw.col("prev") != nw.col("list")) & (nw.col("prev") > 0)
        moved = moved & ~nw.col("maj").is_null() & ~nw.col("list").is_null()
        return engine.listings.filter(moved).select(
            "id", *keys, nw.col("maj").alias("at"), nw.col("b_maj").alias("b_at"),
            nw.col("list").alias("new"),
            nw.col("prev").alias("before"), (nw.col("prev") > nw.col("list")).alias("cut"),
        )  # fmt: skip
    changes = engine.history.filter(~nw.col("is_status"))
    first_old = nw.col("old").max().over("id", "at")  # at the listing's first time: entry
    is_first = nw.col("at") == nw.col("at").min().over("id")
    previous = nw.col("new").shift(1).over("id", order_by=["at", "new"])
    return changes.with_columns(
        nw.when(is_first).then(first_old).otherwise(previous).alias("before"),
        (nw.col("new") < nw.col("old")).fill_null(False).alias("cut"),
    ).select("id", *keys, "at", "b_at", "new", "before", "cut")


def _cuts(
    engine: EngineTrends, periods: Periods, fetch: _Fetch
) -> tuple[dict[str, np.ndarray], pd.DataFrame]:
    """price_drops and the listings cut in the window and Active at its end; the listings
    Active at some point in the window whose price at its end is below that at its start, and
    the median cut among them."""
    keys, n = engine.keys, periods.n
    changes = engine.keep(periods.windows(_changes(engine), "at"))
    active = engine.intervals.filter(nw.col("st") == ACTIVE).select(
        "id",
        periods.window_of("start").alias("lo"),
        periods.window_of("stop").alias("hi"),
        periods.starts_before("stop").alias("upto"),
    )
    cut = changes.filter(nw.col("cut")).select("id", *keys, "win").unique()
    still = cut.join(active, on="id", how="inner")
    still = still.filter((nw.col("lo") <= nw.col("win")) & (nw.col("win") < nw.col("hi")))
    still = still.select("id", *keys, "win").unique()
    out = {}
    for name, frame in (("price_drops", cut), ("_active_cut", still)):
        table = fetch.table(frame, ["win"], [nw.len().alias("k")])
        out[name] = fetch.grid_counts(table, "k", "win", n)
    first = nw.col("at") == nw.col("at").min().over("id", "win")
    last = nw.col("at") == nw.col("at").max().over("id", "win")
    pairs = changes.with_columns(
        nw.when(first).then(nw.col("before")).alias("_b"),
        nw.when(last).then(nw.col("new")).alias("_a"),
    ).group_by("id", *keys, "win").agg(
        nw.col("_b").max().alias("b"), nw.col("_a").min().alias("a")
    )  # fmt: skip
    pairs = pairs.filter(nw.col("a") < nw.col("b"))
    during = pairs.join(active.select("id", "upto", nw.col("lo").alias("lo2")), on="id")
    during = during.filter((nw.col("lo2") <= nw.col("win")) & (nw.col("win") < nw.col("upto")))
    during = during.select("id", *keys, "win", "a", "b").unique()
    during = during.with_columns(_ratio(nw.col("b") - nw.col("a"), nw.col("b")).alias("pct"))
    during = during.with_columns(nw.col("pct").alias("median_cut_pct"))
    table = _median_table(fetch, during, "median_cut_pct", [nw.len().alias("k")])
    out["_cut_any"] = fetch.grid_counts(table, "k", "win", n)
    stats = pd.DataFrame({c: fetch.cells(table, c) for c in ("median_cut_pct", "median_cut_pct_n")})
    engine.drop(changes)
    return out, stats


def _contracts(engine: EngineTrends, periods: Periods, fetch: _Fetch, as_of: int) -> pd.DataFrame:
    """off_market_in_two_weeks, median_days_to_pending and median_days_to_close
    (:func:`~._competition.contract_stats` on the engine)."""
    keys, intervals = engine.keys, engine.intervals
    day = nw.col("ent") // DAY
    under = nw.col("st").is_in([PENDING, UNDER_CONTRACT])
    went = intervals.filter(under | (nw.col("st") == CLOSED))
    contract = went.group_by("id").agg(nw.col("start").min().alias("_contract"))
    cohort = engine.listings.filter(~nw.col("ent").is_null() & (as_of // DAY - day >= TWO_WEEKS))
    cohort = cohort.join(contract, on="id", how="left")
    quick = (~nw.col("_contract").is_null()) & (nw.col("_contract") // DAY - day <= TWO_WEEKS)
    cohort = periods.windows(cohort.with_columns(quick.cast(nw.Float64).alias("q")), "ent")
    name = "off_market_in_two_weeks"
    table = fetch.table(cohort, ["win"], [nw.col("q").mean().alias(name),
                                          nw.len().alias(f"{name}_n")])  # fmt: skip
    out = {name: fetch.cells(table, name), f"{name}_n": fetch.cells(table, f"{name}_n")}

    previous = under.shift(1).over("id", order_by=["start"]).fill_null(False)
    spells = intervals.with_columns(previous.alias("_after")).filter(under & ~nw.col("_after"))
    spells = periods.windows(spells, "start")
    spells = spells.group_by("id", *keys, "win").agg(
        nw.col("start").min().alias("_s"), nw.col("ent").min().alias("_e")
    )
    days = nw.col("_s") // DAY - nw.col("_e") // DAY
    out.update(_median(fetch, spells.with_columns(days.alias("median_days_to_pending")),
                       "median_days_to_pending"))  # fmt: skip

    sold = since_pending(engine.listings, engine.intervals, engine.keys)
    sold = engine.keep(periods.windows(sold, "clo"))
    days = nw.col("clo") // DAY - nw.col("since") // DAY
    out.update(_median(fetch, sold.with_columns(days.alias("median_days_to_close")),
                       "median_days_to_close"))  # fmt: skip
    engine.drop(sold)
    return pd.DataFrame(out)


def _median_table(
    fetch: _Fetch, frame: Any, name: str, more: Sequence[nw.Expr] = ()
) -> pd.DataFrame:
    """Per market × window, the median of the column ``name`` (nulls left out), its n
    (``<name>_n``) and the aggregates ``more``: the median from ranks
    (:func:`~._engine_frames.rank_medians`, a sort the engine spills), not the engine's median
    aggregate (DuckDB's holds every value of every group in memory)."""
    on = [*fetch.engine.keys, "win"]
    value = nw.col(name).cast(nw.Float64)
    table = fetch.table(frame, ["win"], [value.count().alias(f"{name}_n"), *more])
    return table.merge(rank_medians(frame.with_columns(value), on, [name]), on=on, how="left")


def _median(fetch: _Fetch, frame: Any, name: str) -> dict[str, np.ndarray]:
    """:func:`_median_table`'s median and n as flat cells."""
    table = _median_table(fetch, frame, name)
    return {name: fetch.cells(table, name), f"{name}_n": fetch.cells(table, f"{name}_n")}
