"""Market comparisons: per-market metrics over a trailing window, side-by-side tables.

Every metric's formula, window and its relation to Redfin's Data Center definition is in
docs/metrics.md.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from realtyframes.analysis._common import (
    AnalysisInputError,
    as_key,
    check_columns,
    check_frame,
    check_number,
    check_segment,
    isin,
    naive_bound,
    naive_utc,
    normalize_by,
    safe_div,
    segment_labels,
    segment_mask,
    to_float,
    to_timestamp,
    to_utc,
)

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


def market_summary(
    listings: pd.DataFrame,
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

    >>> rf.market_summary(listings, by="City", window_days=90)  # doctest: +SKIP
    >>> rf.market_summary(listings, by=["City", "PropertySubType"], compare_previous=True)  # doctest: +SKIP
    """
    func = "market_summary"
    per_market, _ = _summaries(
        listings,
        by,
        as_of=as_of,
        window_days=window_days,
        segment=segment,
        compare_previous=compare_previous,
        with_total=False,
        func=func,
    )
    return per_market


def compare_markets(
    listings: pd.DataFrame,
    markets: Sequence[Hashable] | None = None,
    by: str | Sequence[str] = "City",
    metrics: Sequence[str] | None = None,
    **kw: Any,
) -> pd.DataFrame:
    """Side-by-side table: metrics as rows, the chosen markets as columns, plus the whole data set
    (all markets of the segment together) as the reference column ``"All markets"``.

    ``markets``: values of ``by`` (tuples when ``by`` is a list); None = every market. A market with
    no listings gives a column of NaN. ``metrics``: names from :func:`market_summary`'s columns
    (default: all). Other keywords (as_of, window_days, segment, compare_previous) go to
    :func:`market_summary`; the window is the same for every column. With ``segment="both"`` the
    columns are (segment, market).

    >>> rf.compare_markets(listings, ["Miami Beach", "Coral Gables"], metrics=["median_sale_price"])  # doctest: +SKIP
    """
    func = "compare_markets"
    keys = normalize_by(by, func)
    unknown = set(kw) - {"as_of", "window_days", "segment", "compare_previous"}
    if unknown:
        raise TypeError(
            f"{func}() got unexpected keyword argument(s): {', '.join(sorted(unknown))}"
        )
    if isinstance(markets, str):
        raise AnalysisInputError(
            f"{func}(): `markets` must be a list of market values, got {markets!r} "
            f"(for one market: [{markets!r}])"
        )
    per_market, total = _summaries(listings, keys, with_total=True, func=func, **kw)
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


def _window(
    listings: pd.DataFrame, as_of: Any, days: float, func: str
) -> tuple[dict[str, pd.Series], pd.Timestamp | None, pd.Timestamp | None]:
    """The listings' timestamps as UTC, and the window (start, end]; as_of defaults to the newest."""
    stamps = {c: to_utc(listings[c], c, func) for c in _TIMESTAMPS if c in listings.columns}
    end = to_timestamp(as_of, "as_of", func, end_of_day=True)
    if end is None:
        newest = [s.max() for s in stamps.values() if s.notna().any()]
        end = pd.Timestamp(max(newest)).as_unit("us") if newest else None
    start = None if end is None else end - pd.Timedelta(days=days)
    return stamps, start, end


def _summaries(
    listings: pd.DataFrame,
    by: str | Sequence[str],
    *,
    as_of: Any = None,
    window_days: float = 90,
    segment: str = "sale",
    compare_previous: bool = False,
    with_total: bool,
    func: str,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    check_frame(listings, "listings", func)
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
    check_columns(listings, [*keys, *NEEDED_COLUMNS], "listings", func)

    stamps, start, end = _window(listings, as_of, days, func)
    window = pd.Timedelta(days=days)

    rows = segment_mask(listings["PropertyType"], segment)
    frame = listings[rows]
    prep = _prepare(frame, {c: s[rows] for c, s in stamps.items()}, func)
    group: dict[str, pd.Series] = {}
    if segment == "both":
        group["segment"] = segment_labels(frame["PropertyType"])
    for k in keys:
        group[k] = as_key(frame[k])
    names = list(group)

    def run(start: pd.Timestamp | None, stop: pd.Timestamp | None) -> tuple[pd.DataFrame, Any]:
        work = _masked(prep, start, stop)
        per = _aggregate(work, [group[n] for n in names], names, days)
        tot = None
        if with_total:
            tot_keys = (
                [group["segment"]] if segment == "both" else [pd.Series("all", index=frame.index)]
            )
            tot = _aggregate(work, tot_keys, ["segment"] if segment == "both" else ["_all"], days)
        return per, tot

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


def _prepare(frame: pd.DataFrame, stamps: dict[str, pd.Series], func: str) -> pd.DataFrame:
    num = {
        c: to_float(frame[c], c, func).to_numpy()
        for c in ("ListPrice", "PreviousListPrice", "ClosePrice", "LivingArea", "DaysOnMarket")
    }
    status = frame["StandardStatus"]
    return pd.DataFrame(
        {
            "active": isin(status, ["Active"]),
            "pending": isin(status, ["Pending"]),
            "closed": isin(status, ["Closed"]),
            "list": num["ListPrice"],
            "prev_list": num["PreviousListPrice"],
            "close": num["ClosePrice"],
            "area": np.where(num["LivingArea"] > 0, num["LivingArea"], np.nan),
            "dom": num["DaysOnMarket"],
            "entered": naive_utc(stamps["OriginalEntryTimestamp"]),
            "major": naive_utc(stamps["MajorChangeTimestamp"]),
            "closed_at": naive_utc(stamps["CloseDate"]),
        },
        index=frame.index,
    )


def _in_window(ts: pd.Series, start: pd.Timestamp | None, stop: pd.Timestamp | None) -> np.ndarray:
    """(start, stop] on naive-UTC timestamps; NaT is never inside."""
    if start is None or stop is None:
        return np.zeros(len(ts), dtype=bool)
    values = ts.to_numpy()
    return (values > naive_bound(start)) & (values <= naive_bound(stop))


def _masked(p: pd.DataFrame, start: pd.Timestamp | None, stop: pd.Timestamp | None) -> pd.DataFrame:
    """Per-row inputs of each metric; NaN where the row is not part of the metric's population."""
    active = p["active"].to_numpy()
    sold = p["closed"].to_numpy() & _in_window(p["closed_at"], start, stop)
    pending = p["pending"].to_numpy() & _in_window(p["major"], start, stop)
    new = _in_window(p["entered"], start, stop)
    list_price, close, area = p["list"].to_numpy(), p["close"].to_numpy(), p["area"].to_numpy()
    ratio = safe_div(close, list_price)
    lo, hi = SALE_TO_LIST_RANGE
    with np.errstate(invalid="ignore"):
        ratio_ok = sold & (ratio >= lo) & (ratio <= hi)
        dropped = active & (p["prev_list"].to_numpy() > list_price)
    nan = np.nan
    return pd.DataFrame(
        {
            "active": active,
            "new": new,
            "pending": pending,
            "sold": sold,
            "list_price": np.where(active, list_price, nan),
            "list_ppsf": np.where(active, safe_div(list_price, area), nan),
            "sale_price": np.where(sold, close, nan),
            "sale_ppsf": np.where(sold, safe_div(close, area), nan),
            "dom": np.where(sold, p["dom"].to_numpy(), nan),
            "ratio": np.where(ratio_ok, ratio, nan),
            "above": np.where(ratio_ok, (ratio > 1).astype("float64"), nan),
            "dropped": dropped,
        },
        index=p.index,
    )


def _aggregate(
    work: pd.DataFrame, keys: list[pd.Series], names: list[str], days: float
) -> pd.DataFrame:
    grouped = work.groupby([k.rename(n) for k, n in zip(keys, names, strict=True)], dropna=False)
    # one cythonised pass per kind of aggregate (much cheaper than a named agg per column)
    sums = grouped[["active", "new", "pending", "sold", "dropped"]].sum()
    medians = grouped[["list_price", "list_ppsf", "sale_price", "sale_ppsf", "dom"]].median()
    means = grouped[["ratio", "above"]].mean()
    active = sums["active"].to_numpy(dtype="int64")
    sold = sums["sold"].to_numpy(dtype="int64")
    out = pd.DataFrame(
        {
            "active_listings": active,
            "new_listings": sums["new"].to_numpy(dtype="int64"),
            "pending_sales": sums["pending"].to_numpy(dtype="int64"),
            "homes_sold": sold,
            "median_list_price": medians["list_price"].to_numpy(dtype="float64"),
            "median_list_ppsf": medians["list_ppsf"].to_numpy(dtype="float64"),
            "median_sale_price": medians["sale_price"].to_numpy(dtype="float64"),
            "median_sale_ppsf": medians["sale_ppsf"].to_numpy(dtype="float64"),
            "median_dom": medians["dom"].to_numpy(dtype="float64"),
            "avg_sale_to_list": means["ratio"].to_numpy(dtype="float64"),
            "pct_sold_above_list": means["above"].to_numpy(dtype="float64"),
            # active listings / homes sold per 30 days of the window
            "months_of_supply": safe_div(active, sold * 30.0 / days),
            "pct_active_with_price_drop": safe_div(sums["dropped"].to_numpy(), active),
        },
        index=sums.index,
    )
    return out


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
    out = table.astype("float64").astype(object)
    counts = {*COUNT_METRICS, *(f"{m}_{s}" for m in COUNT_METRICS for s in ("prev", "change"))}
    for row in out.index:
        if row in counts:
            out.loc[row] = [v if pd.isna(v) else round(v) for v in out.loc[row]]
    return out


def ppsf_values(
    listings: pd.DataFrame,
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

    >>> rf.analysis.ppsf_values(listings, by="City", price="sale")  # doctest: +SKIP
    """
    func = "ppsf_values"
    if price not in ("list", "sale"):
        raise AnalysisInputError(f"{func}(): `price` must be 'list' or 'sale', got {price!r}")
    check_frame(listings, "listings", func)
    keys = normalize_by(by, func)
    segment = check_segment(segment, func)
    days = check_number(window_days, "window_days", func, low=0.0, low_inclusive=False)
    check_columns(listings, [*keys, *NEEDED_COLUMNS], "listings", func)
    stamps, start, end = _window(listings, as_of, days, func)
    rows = segment_mask(listings["PropertyType"], segment)
    frame = listings[rows]
    work = _masked(_prepare(frame, {c: s[rows] for c, s in stamps.items()}, func), start, end)
    column = "list_ppsf" if price == "list" else "sale_ppsf"
    out = pd.DataFrame({k: as_key(frame[k]) for k in keys}, index=frame.index)
    if segment == "both":
        out.insert(0, "segment", segment_labels(frame["PropertyType"]))
    out["ppsf"] = work[column].to_numpy()
    return out[out["ppsf"].notna().to_numpy()].reset_index(drop=True)
