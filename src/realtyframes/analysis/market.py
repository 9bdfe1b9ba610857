"""Market comparisons: per-market metrics over a trailing window, side-by-side tables.

Every metric's formula, window and its relation to Redfin's Data Center definition is in
docs/metrics.md.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import narwhals as nw
import numpy as np
import pandas as pd

from realtyframes._deprecation import renamed
from realtyframes.analysis._common import (
    AnalysisInputError,
    as_key,
    check_number,
    check_segment,
    normalize_by,
    safe_div,
    to_timestamp,
)
from realtyframes.analysis._kernel import (
    aggregate,
    base_frame,
    collect,
    frame_of,
    in_background,
    is_pandas,
    markets_of,
    newest,
    stamp_columns,
    window_rows,
)
from realtyframes.analysis._summary_numpy import pandas_base, window_aggregate
from realtyframes.errors import QueryError

#: The metrics of :func:`market_summary`, in column order.
MARKET_METRICS: tuple[str, ...] = (
    "active_listings",
    "new_listings",
    "pending_sales",
    "homes_sold",
    "median_list_price",
    "median_list_ppsf",
    "median_sale_price",
    "median_sale_ppsf",
    "median_dom",
    "avg_sale_to_list",
    "pct_sold_above_list",
    "months_of_supply",
    "pct_active_with_price_drop",
)
#: The count behind each median or ratio (its sample size ``n``): the population it is taken over.
SAMPLE_SIZE_OF: dict[str, str] = {
    "median_list_price": "active_listings",
    "median_list_ppsf": "active_listings",
    "median_sale_price": "homes_sold",
    "median_sale_ppsf": "homes_sold",
    "median_dom": "homes_sold",
    "avg_sale_to_list": "homes_sold",
    "pct_sold_above_list": "homes_sold",
    "months_of_supply": "homes_sold",
    "pct_active_with_price_drop": "active_listings",
}
#: Count metrics (int64 in :func:`market_summary`).
COUNT_METRICS: tuple[str, ...] = ("active_listings", "new_listings", "pending_sales", "homes_sold")
#: Metrics that describe the listings' current status (a snapshot), not events in the window:
#: a listings frame cannot tell what was active in an earlier window, so their ``_prev`` is NaN.
SNAPSHOT_METRICS: tuple[str, ...] = (
    "active_listings",
    "median_list_price",
    "median_list_ppsf",
    "months_of_supply",
    "pct_active_with_price_drop",
)
#: Metrics that also get a relative change (``_pct_change``) with ``compare_previous=True``: the
#: counts and the medians.
LEVEL_METRICS: tuple[str, ...] = tuple(
    m for m in MARKET_METRICS if m in COUNT_METRICS or m.startswith("median_")
)
#: Sale-to-list ratios outside this closed interval are left out of the ratio metrics.
SALE_TO_LIST_RANGE: tuple[float, float] = (0.5, 1.5)
#: Label of the whole-data-set column in :func:`compare_markets`.
REFERENCE_LABEL = "All markets"

#: Listing columns the market metrics read.
NEEDED_COLUMNS: tuple[str, ...] = (
    "StandardStatus",
    "PropertyType",
    "ListPrice",
    "PreviousListPrice",
    "ClosePrice",
    "LivingArea",
    "DaysOnMarket",
    "OriginalEntryTimestamp",
    "MajorChangeTimestamp",
    "CloseDate",
)
_TIMESTAMPS = (
    "OriginalEntryTimestamp",
    "ModificationTimestamp",
    "MajorChangeTimestamp",
    "CloseDate",
)


@renamed(listings="market")
def market_summary(
    market: Any,
    by: str | Sequence[str] = "City",
    as_of: Any = None,
    window_days: float = 90,
    segment: str = "sale",
    compare_previous: bool = False,
) -> pd.DataFrame:
    """One row per market with the market metrics over the window (as_of - window_days, as_of].

    ``by``: any column or list of columns (City, PostalCode, PropertySubType ...); the result is
    indexed by it. ``as_of`` (naive = UTC; a bare date means the end of that day) defaults to the
    newest timestamp in the data. ``segment``: 'sale' (default: the spec's sale types plus
    Land/Boat Docks), 'rent' (Residential Lease, Commercial Lease) or 'both' (each summarised on its
    own, with ``segment`` as the first index level); sale and rent are never mixed, rows of another
    or unknown PropertyType are left out.

    Columns (counts int64, the rest float64, fractions as fractions, NaN where a market has nothing
    to measure): active_listings, new_listings, pending_sales, homes_sold, median_list_price,
    median_list_ppsf, median_sale_price, median_sale_ppsf, median_dom, avg_sale_to_list,
    pct_sold_above_list, months_of_supply, pct_active_with_price_drop. With
    ``compare_previous=True`` also ``<metric>_prev`` (the window before), ``<metric>_change``
    (current - previous) and, for counts, prices and days, ``<metric>_pct_change``
    (current / previous - 1). ``attrs`` records as_of, window_start, window_days and segment.

    ``market``: every status of a market (``client.sync_listings(...)``; a snapshot of active
    listings has no sales to count). ``listings=`` is its old name: it still works, with a
    DeprecationWarning. It may also be a Polars DataFrame or LazyFrame, a DuckDB relation or a PySpark
    DataFrame with typed columns (numbers numeric, timestamps as timestamps): the engine computes
    the metrics and the result is the same pandas frame (docs/scale.md).

    >>> rf.market_summary(market, by="City", window_days=90)  # doctest: +SKIP
    >>> rf.market_summary(spark.read.parquet("market.parquet"), by="City")  # doctest: +SKIP
    >>> rf.market_summary(market, by=["City", "PropertySubType"], compare_previous=True)  # doctest: +SKIP
    """
    func = "market_summary"
    per_market, _ = _summaries(
        market,
        by,
        as_of=as_of,
        window_days=window_days,
        segment=segment,
        compare_previous=compare_previous,
        with_total=False,
        func=func,
    )
    return per_market


def _refuse_duplicates(markets: Sequence[Hashable] | None) -> None:
    """A market asked for twice is a :class:`~realtyframes.QueryError` naming ``markets`` and it
    (a table cannot have the same column twice)."""
    if markets is None:
        return
    seen: set[Hashable] = set()
    for market in markets:
        key = tuple(market) if isinstance(market, list) else market
        if key in seen:
            raise QueryError("markets", f"duplicate market {market!r}", "each market at most once")
        seen.add(key)


@renamed(listings="market")
def compare_markets(
    market: Any,
    markets: Sequence[Hashable] | None = None,
    by: str | Sequence[str] = "City",
    metrics: Sequence[str] | None = None,
    *,
    as_of: Any = None,
    window_days: float = 90,
    segment: str = "sale",
    compare_previous: bool = False,
) -> pd.DataFrame:
    """Side-by-side table: metrics as rows, the chosen markets as columns, plus the whole data set
    (all markets of the segment together) as the reference column ``"All markets"``.

    ``markets``: values of ``by`` (tuples when ``by`` is a list); None = every market; a market
    given twice is a :class:`~realtyframes.QueryError`. A market with no listings gives a column
    of NaN. ``metrics``: names from :func:`market_summary`'s columns (default: all).
    ``as_of``, ``window_days``, ``segment`` and ``compare_previous`` are
    :func:`market_summary`'s; the window is the same for every column. With ``segment="both"``
    the columns are (segment, market). ``market`` may be any frame :func:`market_summary` takes
    (``listings=`` is its old name: it still works, with a DeprecationWarning).

    >>> rf.compare_markets(market, ["Miami Beach", "Coral Gables"], metrics=["median_sale_price"])  # doctest: +SKIP
    """
    func = "compare_markets"
    keys = normalize_by(by, func)
    if isinstance(markets, str):
        raise AnalysisInputError(
            f"{func}(): `markets` must be a list of market values, got {markets!r} "
            f"(for one market: [{markets!r}])"
        )
    _refuse_duplicates(markets)
    window = {"as_of": as_of, "window_days": window_days, "segment": segment}
    per_market, total = _summaries(
        market, keys, **window, compare_previous=compare_previous, with_total=True, func=func
    )
    available = list(per_market.columns)
    chosen = available if metrics is None else list(metrics)
    bad = [m for m in chosen if m not in available]
    if bad or not chosen or isinstance(metrics, str):
        raise AnalysisInputError(
            f"{func}(): `metrics` must be a list of names from: {', '.join(available)}; "
            f"got {metrics!r}"
        )
    reference: Hashable = REFERENCE_LABEL if len(keys) == 1 else (REFERENCE_LABEL,) * len(keys)
    segmented = per_market.attrs["segment"] == "both"

    def table(rows: pd.DataFrame, tot: pd.Series) -> pd.DataFrame:
        wanted = list(dict.fromkeys(rows.index)) if markets is None else list(markets)
        picked = rows.reindex(pd.Index(wanted, tupleize_cols=True))[chosen].astype("float64")
        out = picked.T
        out[reference] = tot[chosen].astype("float64")
        return out

    if segmented:
        seg_of = per_market.index.get_level_values("segment")
        parts = {}
        for seg in ("sale", "rent"):
            rows = per_market[np.asarray(seg_of == seg, dtype=bool)].droplevel("segment")
            tot = total.loc[seg] if seg in total.index else pd.Series(np.nan, index=available)
            parts[seg] = table(rows, tot)
        result = pd.concat(parts, axis=1, names=["segment", *keys])
    else:
        tot = total.iloc[0] if len(total) else pd.Series(np.nan, index=available)
        result = table(per_market, tot)
        result.columns.names = keys
    result.index.name = "metric"
    result = _count_rows(result)
    result.attrs = dict(per_market.attrs)
    return result


def _frame(
    market: Any, keys: list[str], as_of: Any, days: float, segment: str, func: str
) -> tuple[Any, Any, pd.Timestamp | None, pd.Timestamp | None]:
    """The market as a narwhals frame with the window-independent per-row columns
    (:func:`base_frame`), the input's schema (for the timestamps' form), and the window
    (start, end]; ``as_of`` defaults to the newest timestamp (one small query on an engine).

    pandas: only the needed columns, numbers and timestamps read from loose types too (CSV text,
    pyarrow dtypes). Other engines: the columns must already be typed; nothing is collected but
    the newest timestamp when ``as_of`` is not given."""
    frame = frame_of(market, [*keys, *NEEDED_COLUMNS], "market", func, _TIMESTAMPS)
    end = to_timestamp(as_of, "as_of", func, end_of_day=True)
    found = None
    if end is None:
        found = in_background(frame, newest, frame, stamp_columns(frame, _TIMESTAMPS))
    if isinstance(frame, nw.DataFrame) and is_pandas(frame.to_native()):
        base = nw.from_native(pandas_base(frame.to_native(), keys, segment))
    else:
        base = base_frame(frame, keys, segment)  # while the newest timestamp is found
    if found is not None:
        end = found.result()
    start = None if end is None else end - pd.Timedelta(days=days)
    return base, frame.collect_schema(), start, end


def _summaries(
    market: Any,
    by: str | Sequence[str],
    *,
    as_of: Any = None,
    window_days: float = 90,
    segment: str = "sale",
    compare_previous: bool = False,
    with_total: bool,
    func: str,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    keys = normalize_by(by, func)
    segment = check_segment(segment, func)
    days = check_number(window_days, "window_days", func, low=0.0, low_inclusive=False)
    if not isinstance(compare_previous, bool):
        raise AnalysisInputError(
            f"{func}(): `compare_previous` must be True or False, got {compare_previous!r}"
        )
    if segment == "both" and "segment" in keys:
        raise AnalysisInputError(
            f"{func}(): with segment='both' the result has a `segment` index level; "
            "rename the `segment` column before grouping by it"
        )
    frame, schema, start, end = _frame(market, keys, as_of, days, segment, func)
    names = ["segment", *keys] if segment == "both" else keys
    window = pd.Timedelta(days=days)

    markets_job = in_background(frame, markets_of, frame, names)  # while the window is cut

    def run(start: pd.Timestamp | None, stop: pd.Timestamp | None) -> tuple[pd.DataFrame, Any]:
        if isinstance(frame, nw.DataFrame) and is_pandas(frame.to_native()):
            native = frame.to_native()  # pandas: the same metrics in numpy, fewer passes

            def measure(markets: pd.DataFrame) -> pd.DataFrame:
                return window_aggregate(native, markets, start, stop, SALE_TO_LIST_RANGE)
        else:
            rows = window_rows(frame, names, schema, start, stop, SALE_TO_LIST_RANGE)

            def measure(markets: pd.DataFrame) -> pd.DataFrame:
                return aggregate(rows, markets)

        markets = markets_job.result()
        if not with_total:
            return _metrics(measure(markets), days), None
        whole = in_background(frame, measure, _whole(markets, segment))
        per = _metrics(measure(markets), days)
        return per, _metrics(whole.result(), days)

    per, tot = run(start, end)
    if compare_previous:
        prev_end = start
        prev_start = None if prev_end is None else prev_end - window
        per_prev, tot_prev = run(prev_start, prev_end)
        per = _with_previous(per, per_prev)
        if with_total:
            tot = _with_previous(tot, tot_prev)
    attrs = {
        "as_of": end,
        "window_start": start,
        "window_days": days,
        "segment": segment,
        "by": keys,
    }
    per.attrs = dict(attrs)
    return per, tot if tot is not None else pd.DataFrame()


def _whole(markets: pd.DataFrame, segment: str) -> pd.DataFrame:
    """The whole data set's "markets" (:func:`~._kernel.markets_of` with fewer names), from the
    markets found already: each segment with 'both', else one row when there is any market."""
    if segment == "both":
        return markets[["segment"]].drop_duplicates(ignore_index=True)
    return pd.DataFrame(index=range(min(1, len(markets))))


def _metrics(agg: pd.DataFrame, days: float) -> pd.DataFrame:
    """The market metrics from the kernel's sums, medians and means (one row per market)."""
    active = agg["active"].to_numpy(dtype="int64")
    sold = agg["sold"].to_numpy(dtype="int64")
    return pd.DataFrame(
        {
            "active_listings": active,
            "new_listings": agg["new"].to_numpy(dtype="int64"),
            "pending_sales": agg["pending"].to_numpy(dtype="int64"),
            "homes_sold": sold,
            "median_list_price": agg["list_price"].to_numpy(dtype="float64"),
            "median_list_ppsf": agg["list_ppsf"].to_numpy(dtype="float64"),
            "median_sale_price": agg["sale_price"].to_numpy(dtype="float64"),
            "median_sale_ppsf": agg["sale_ppsf"].to_numpy(dtype="float64"),
            "median_dom": agg["dom"].to_numpy(dtype="float64"),
            "avg_sale_to_list": agg["ratio"].to_numpy(dtype="float64"),
            "pct_sold_above_list": agg["above"].to_numpy(dtype="float64"),
            # active listings / homes sold per 30 days of the window
            "months_of_supply": safe_div(active, sold * 30.0 / days),
            "pct_active_with_price_drop": safe_div(agg["dropped"].to_numpy(), active),
        },
        index=agg.index,
    )


def _with_previous(cur: pd.DataFrame, prev: pd.DataFrame) -> pd.DataFrame:
    prev = prev.reindex(cur.index).astype("float64")
    prev[list(SNAPSHOT_METRICS)] = np.nan
    blocks = [cur]
    blocks.append(prev.add_suffix("_prev"))
    change = cur.astype("float64") - prev
    blocks.append(change.add_suffix("_change"))
    rel = pd.DataFrame(
        {
            f"{m}_pct_change": safe_div(cur[m].astype("float64") - prev[m], prev[m])
            for m in LEVEL_METRICS
        },
        index=cur.index,
    )
    blocks.append(rel)
    out = pd.concat(blocks, axis=1)
    # counts stay whole numbers: the previous window's and the change (NA where unknown)
    counts = [f"{m}_{s}" for m in COUNT_METRICS for s in ("prev", "change")]
    out[counts] = out[counts].round().astype("Int64")
    return out


def _count_rows(table: pd.DataFrame) -> pd.DataFrame:
    """A metrics-as-rows table whose count rows hold whole numbers (object columns: a column
    mixes counts, prices and ratios); other rows stay floats, missing values NaN."""
    numbers = table.astype("float64").to_numpy()
    values = numbers.astype(object)
    counts = {*COUNT_METRICS, *(f"{m}_{s}" for m in COUNT_METRICS for s in ("prev", "change"))}
    for i, row in enumerate(table.index):
        if row in counts:
            values[i] = [v if np.isnan(v) else round(v) for v in numbers[i]]
    return pd.DataFrame(values, index=table.index, columns=table.columns, dtype=object)


@renamed(listings="market")
def ppsf_values(
    market: Any,
    by: str | Sequence[str] = "City",
    price: str = "list",
    *,
    as_of: Any = None,
    window_days: float = 90,
    segment: str = "sale",
) -> pd.DataFrame:
    """Price per square foot of each listing, long (market columns + ``ppsf``), for box plots.

    ``price="list"``: ListPrice / LivingArea of active listings (the population of
    ``median_list_ppsf``); ``price="sale"``: ClosePrice / LivingArea of homes sold in the window
    (the population of ``median_sale_ppsf``). Rows without a positive LivingArea are left out.
    ``listings=`` is the old name of ``market``: it still works, with a DeprecationWarning.

    >>> rf.analysis.ppsf_values(market, by="City", price="sale")  # doctest: +SKIP
    """
    func = "ppsf_values"
    if price not in ("list", "sale"):
        raise AnalysisInputError(f"{func}(): `price` must be 'list' or 'sale', got {price!r}")
    keys = normalize_by(by, func)
    segment = check_segment(segment, func)
    days = check_number(window_days, "window_days", func, low=0.0, low_inclusive=False)
    frame, schema, start, end = _frame(market, keys, as_of, days, segment, func)
    names = ["segment", *keys] if segment == "both" else keys
    rows = window_rows(frame, names, schema, start, end, SALE_TO_LIST_RANGE)
    column = "list_ppsf" if price == "list" else "sale_ppsf"
    values = rows.filter(~nw.col(column).is_null()).select(*names, nw.col(column).alias("ppsf"))
    out = collect(values)
    for key in keys:
        out[key] = as_key(out[key])
    return out[out["ppsf"].notna().to_numpy()].reset_index(drop=True)
