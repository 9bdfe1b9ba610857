"""Price-drop reports: which listings cut their price, by how much, where, how long on market.

Definitions (and their windows) are in docs/metrics.md. ``listings`` and ``history`` may be pandas,
Polars, DuckDB or PySpark frames: the engine reduces them (:mod:`._drops_kernel`), the result is
the same pandas frame.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from functools import partial
from typing import Any

import narwhals as nw
import numpy as np
import pandas as pd

from realtyframes._deprecation import renamed
from realtyframes.analysis._common import (
    as_key,
    check_columns,
    check_number,
    check_segment,
    normalize_by,
    safe_div,
    segment_labels,
    segment_mask,
    to_float,
    to_timestamp,
)
from realtyframes.analysis._drops_kernel import (
    CHANGE_COLUMNS,
    CUT_COLUMNS,
    DESCRIPTIVE_COLUMNS,
    align,
    check_ids,
    cuts_from_changes,
    cuts_from_rows,
    drop_order,
    finish,
    is_empty,
    listing_rows,
    price_changes,
    snapshot_pct,
    snapshot_rows,
)
from realtyframes.analysis._kernel import (
    collect,
    engine_frame,
    frame_of,
    is_pandas,
    segment_filter,
)
from realtyframes.analysis._kernel import segment_label as segment_label_expr
from realtyframes.errors import DataQualityWarning

__all__ = [
    "DESCRIPTIVE_COLUMNS",
    "PRICE_DROP_COLUMNS",
    "PRICE_DROP_SUMMARY_COLUMNS",
    "price_drop_summary",
    "price_drops",
]

#: Columns of :func:`price_drops`' result, in order.
PRICE_DROP_COLUMNS: tuple[str, ...] = (
    "ListingId",
    *DESCRIPTIVE_COLUMNS,
    *CUT_COLUMNS,
    "DaysOnMarket",
)

#: Columns of :func:`price_drop_summary`' result, in order.
PRICE_DROP_SUMMARY_COLUMNS: tuple[str, ...] = (
    "price_drops",
    "active_listings",
    "active_with_price_drop",
    "pct_active_with_price_drop",
    "median_drop_pct",
    "median_drop_amount",
)
_CARRIED = (*DESCRIPTIVE_COLUMNS, "DaysOnMarket")
_SNAPSHOT = ("ListingId", "ListPrice", "PreviousListPrice")


@renamed(changes="history")
def price_drops(
    listings: Any,
    history: Any = None,
    since: Any = None,
    min_drop_pct: float = 0.0,
) -> pd.DataFrame:
    """One row per listing whose price was cut, biggest cut (``drop_pct``) first.

    ``listings``: any frame of listings (a search's snapshot or a synced market). Without
    ``history`` a cut is ``PreviousListPrice > ListPrice`` on the listing (the last price change);
    ``last_drop_at`` is then the listing's ``MajorChangeTimestamp`` and ``drop_count`` 1. With
    ``history`` (the sync's record, ``client.listing_history(...)``, or the change feed
    ``client.listing_changes(...)``) every ``price_change`` to a lower price is a cut; per
    listing: the most recent cut (``previous_price`` -> ``current_price``), the number of cuts,
    the first price seen in the feed and the total cut since it (net of any raises).
    Changes of listings absent from ``listings`` are ignored; duplicate change records count once.
    An empty ``history`` falls back to the listing fields, with a ``DataQualityWarning``;
    ``attrs["source"]`` says which was used (``"changes"`` or ``"listing fields"``). ``changes=`` is
    the old name of ``history``: it still works, with a DeprecationWarning.

    ``since`` keeps cuts after it (naive = UTC); ``min_drop_pct`` (a fraction, 0.05 = 5%) keeps
    cuts at or above it. Both filter individual cuts before they are counted.

    ``listings`` and ``history`` may each be a pandas or Polars DataFrame, a Polars LazyFrame, a
    DuckDB relation or a PySpark DataFrame (typed columns): the engine keeps the rows and columns
    the result needs, the result is the same pandas frame (docs/scale.md).

    Columns: ``ListingId``, ``UnparsedAddress``, ``City``, ``PostalCode``, ``PropertyType``,
    ``PropertySubType``, ``StandardStatus`` (copied from ``listings``, as text), ``previous_price``,
    ``current_price``, ``drop_amount`` (previous - current), ``drop_pct`` (drop_amount / previous),
    ``drop_count``, ``first_price``, ``total_drop_amount`` (first - latest price),
    ``total_drop_pct`` (total_drop_amount / first_price), ``last_drop_at`` (UTC), ``DaysOnMarket``.

    >>> drops = rf.price_drops(listings, history, since="2024-05-01", min_drop_pct=0.05)  # doctest: +SKIP
    >>> drops[["UnparsedAddress", "drop_pct", "drop_count"]].head()  # doctest: +SKIP
    >>> rf.price_drops(duckdb.read_parquet("listings.parquet"))  # doctest: +SKIP
    """
    func = "price_drops"
    min_pct = check_number(
        min_drop_pct, "min_drop_pct", func, low=0.0, high=1.0, hint=" (a fraction: 0.05 = 5%)"
    )
    since_ts = to_timestamp(since, "since", func)
    snapshot = [*_SNAPSHOT, *(["MajorChangeTimestamp"] if since_ts is not None else [])]
    optional = (*_CARRIED, "MajorChangeTimestamp", "ListPrice", "PreviousListPrice")
    feed = None if history is None else frame_of(history, CHANGE_COLUMNS, "history", func)
    needed = snapshot if feed is None else ["ListingId"]
    frame = frame_of(listings, needed, "listings", func, optional)
    if feed is not None and is_empty(feed):
        warnings.warn(
            "price_drops(): `history` is empty, so the cuts come from the listing fields "
            "(PreviousListPrice > ListPrice: the last price change of each listing). A first "
            "client.sync_listings() backfills the history; pass client.listing_history(...)",
            DataQualityWarning,
            stacklevel=2,
        )
        feed = None
        frame = frame_of(listings, snapshot, "listings", func, optional)
    if feed is None:
        rows = snapshot_rows(frame, since_ts, min_pct)
        order = drop_order(snapshot_pct(rows), check_ids(rows["ListingId"], func, "price cuts"))
        cuts_in_order = partial(cuts_from_rows, rows, order)
    else:
        cuts = cuts_from_changes(price_changes(feed, since_ts), min_pct)
        rows = listing_rows(frame, cuts["ListingId"].astype("str").unique().tolist())
        rows, cuts, by_id = align(rows, cuts, check_ids(rows["ListingId"], func, "price cuts"))
        order = drop_order(cuts["drop_pct"].to_numpy(), by_id)
        cuts_in_order = partial(_taken, cuts, order)
    out = finish(rows, cuts_in_order, order, PRICE_DROP_COLUMNS)
    out.attrs["source"] = "listing fields" if feed is None else "changes"
    return out


def _taken(cuts: pd.DataFrame, order: np.ndarray) -> pd.DataFrame:
    return cuts.take(order).reset_index(drop=True)


def price_drop_summary(
    drops_or_listings: Any,
    by: str | Sequence[str] = "City",
    *,
    listings: Any = None,
    segment: str = "sale",
) -> pd.DataFrame:
    """Per market: the count of listings with a cut, the share of active listings with one, and
    the median cut.

    Give either a listings frame (cuts are ``PreviousListPrice > ListPrice``, as in
    :func:`price_drops` without a history) or the result of :func:`price_drops`; with a drops frame,
    pass ``listings=`` too for the active-listing share (else those columns are NA). ``segment``
    ('sale', 'rent' or 'both') keeps sale and rent apart, as in ``market_summary``. A listings
    frame (either argument) may be a pandas, Polars, DuckDB or PySpark frame (docs/scale.md).

    Columns: ``price_drops`` (listings with a cut, any status), ``active_listings``,
    ``active_with_price_drop``, ``pct_active_with_price_drop`` (a fraction), ``median_drop_pct``,
    ``median_drop_amount`` (USD); indexed by ``by`` (and ``segment`` first when 'both').

    >>> rf.price_drop_summary(listings, by="City")  # doctest: +SKIP
    >>> rf.price_drop_summary(rf.price_drops(listings, history), listings=listings)  # doctest: +SKIP
    """
    func = "price_drop_summary"
    keys = normalize_by(by, func)
    segment = check_segment(segment, func)
    given = drops_or_listings
    if is_pandas(given):
        is_drops = "drop_pct" in given.columns
    else:
        engine = engine_frame(given, [], "drops_or_listings", func)
        is_drops = "drop_pct" in engine.collect_schema()
        given = collect(engine) if is_drops else given
    if is_drops:
        out = _from_drops(given, keys, listings, segment)
    else:
        out = _from_listings(given, keys, segment)
    out.attrs = {"segment": segment}
    return out


def _names(keys: list[str], segment: str) -> tuple[list[nw.Expr], list[str]]:
    """The grouping columns of a listings frame: ``segment`` first with 'both', then the keys."""
    label = [segment_label_expr().alias("segment")] if segment == "both" else []
    return [*label, *(nw.col(k) for k in keys)], (["segment"] if label else []) + keys


def _per_market(rows: Any, names: list[str], aggs: list[nw.Expr]) -> pd.DataFrame:
    """``rows`` grouped by ``names`` (missing keys kept), as pandas indexed by plain sorted keys."""
    out = collect(rows.group_by(*names, drop_null_keys=False).agg(*aggs))
    for name in names:
        out[name] = as_key(out[name])
    return out.sort_values(names, na_position="last", kind="stable").set_index(names)


def _from_listings(frame: Any, keys: list[str], segment: str) -> pd.DataFrame:
    """The summary of a listings frame (any engine): cuts are PreviousListPrice above ListPrice."""
    func = "price_drop_summary"
    need = [*keys, "ListPrice", "PreviousListPrice", "StandardStatus", "PropertyType"]
    listing = frame_of(frame, need, "drops_or_listings", func)
    columns, names = _names(keys, segment)
    prev = nw.col("PreviousListPrice").cast(nw.Float64)
    cur = nw.col("ListPrice").cast(nw.Float64)
    cut = ((prev > cur) & (prev > 0)).fill_null(False)
    active = (nw.col("StandardStatus") == "Active").fill_null(False)
    rows = listing.filter(segment_filter(segment)).select(
        *columns,
        cut.cast(nw.Int64).alias("price_drops"),
        active.cast(nw.Int64).alias("active_listings"),
        (active & cut).cast(nw.Int64).alias("active_with_price_drop"),
        nw.when(cut).then((prev - cur) / prev).alias("median_drop_pct"),
        nw.when(cut).then(prev - cur).alias("median_drop_amount"),
    )
    sums = [nw.col(c).sum() for c in ("price_drops", "active_listings", "active_with_price_drop")]
    medians = [nw.col(c).median() for c in ("median_drop_pct", "median_drop_amount")]
    out = _per_market(rows, names, [*sums, *medians])
    return _typed_summary(out, with_active=True)


def _typed_summary(out: pd.DataFrame, *, with_active: bool) -> pd.DataFrame:
    """The summary's dtypes and columns; the share from the counts (NA without listings)."""
    if with_active:
        out = out.astype({"active_listings": "Int64", "active_with_price_drop": "Int64"})
        out["pct_active_with_price_drop"] = safe_div(
            out["active_with_price_drop"].astype("float64"),
            out["active_listings"].astype("float64"),
        )
    else:
        out["active_listings"] = pd.array([pd.NA] * len(out), dtype="Int64")
        out["active_with_price_drop"] = pd.array([pd.NA] * len(out), dtype="Int64")
        out["pct_active_with_price_drop"] = np.nan
    out["price_drops"] = out["price_drops"].fillna(0)
    types = {"price_drops": "int64", "median_drop_pct": "float64", "median_drop_amount": "float64"}
    return out.astype(types)[list(PRICE_DROP_SUMMARY_COLUMNS)]


def _from_drops(frame: pd.DataFrame, keys: list[str], listings: Any, segment: str) -> pd.DataFrame:
    """The summary of a ``price_drops`` result; the active-listing columns from ``listings=``
    (any engine; NA without it)."""
    func = "price_drop_summary"
    check_columns(frame, [*keys, "PropertyType", "drop_pct", "drop_amount"], "drops", func)
    base = None
    if listings is not None:
        need = [*keys, "ListingId", "StandardStatus", "PropertyType"]
        base = frame_of(listings, need, "listings", func)
        check_columns(frame, ["ListingId"], "drops", func)
    drops = frame[segment_mask(frame["PropertyType"], segment)]
    names = (["segment"] if segment == "both" else []) + keys
    work = pd.DataFrame({k: as_key(drops[k]) for k in keys}, index=drops.index)
    if segment == "both":
        work.insert(0, "segment", segment_labels(drops["PropertyType"]))
    work["__pct"] = to_float(drops["drop_pct"], "drop_pct", func).to_numpy()
    work["__amount"] = to_float(drops["drop_amount"], "drop_amount", func).to_numpy()
    out = work.groupby(names, dropna=False, sort=True).agg(
        price_drops=("__pct", "size"),
        median_drop_pct=("__pct", "median"),
        median_drop_amount=("__amount", "median"),
    )
    if base is None:
        return _typed_summary(out, with_active=False)
    cut_ids = drops["ListingId"].astype("str").unique().tolist()
    columns, _ = _names(keys, segment)
    active = (nw.col("StandardStatus") == "Active").fill_null(False)
    was_cut = nw.col("ListingId").cast(nw.String).is_in(cut_ids).fill_null(False)
    rows = base.filter(segment_filter(segment)).select(
        *columns,
        active.cast(nw.Int64).alias("active_listings"),
        (active & was_cut).cast(nw.Int64).alias("active_with_price_drop"),
    )
    sums = [nw.col(c).sum() for c in ("active_listings", "active_with_price_drop")]
    actives = _per_market(rows, names, sums)
    return _typed_summary(out.join(actives, how="outer"), with_active=True)
