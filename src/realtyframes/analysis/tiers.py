"""Price tiers of ``rf.market_trends(..., tiers=True)``: every series per bottom / middle / top tier.

Zillow's bands: the 5th–35th, 35th–65th and 65th–95th percentile of a market's prices in a
period; prices below the 5th or above the 95th percentile are in no tier. Two prices, so a
listing may sit in one tier for its sale and another for its listing (docs/metrics.md):

- **sale tier** (the sale metrics, :data:`SALE_SIDE`): the ClosePrice against the bands of the
  sale prices of the same market and period of close;
- **list tier** (every other metric: listings, inventory, flows and stocks): the list price at
  entry (the kernel's ``median_list_price`` price) against the bands of the entry prices of the
  listings that entered the same market in the same period; a listing keeps that tier for life.

Bands are group-by quantiles over the listings (no loop over listings; on an engine the
engine's exact quantiles, :mod:`._tiers_engine`); the trends then run once, with ``tier`` as
one more market key, over the list-tiered listings and a copy of each sale-tiered sale under its
own id (docs/scale.md). Columns ``sale_band_low`` / ``sale_band_high`` and ``list_band_low`` /
``list_band_high`` give each row's band edges.

>>> edges = [np.full(3, q) for q in (2.0, 4.0, 8.0, 10.0)]  # 5th, 35th, 65th, 95th percentile
>>> band_tier(np.array([1.0, 5.0, 9.0]), *edges).tolist()  # below the 5th: no tier
[nan, 1.0, 2.0]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import narwhals as nw
import numpy as np
import pandas as pd
import pyarrow as pa

from realtyframes.analysis._common import (
    AnalysisInputError,
    as_key,
    segment_mask,
    to_float,
    to_utc,
)
from realtyframes.analysis._engine_frames import one_engine
from realtyframes.analysis._kernel import collect, frame_of, is_pandas, segment_filter
from realtyframes.analysis._order import Ids, match_last
from realtyframes.analysis._tiers_engine import LIST_CODES, SALE_CODES, EngineTiers

__all__ = ["SALE_SIDE", "TIERS", "TIER_BANDS", "TIER_FREQS", "band_tier", "tiered_trends"]

#: The tiers, low to high.
TIERS: tuple[str, ...] = ("bottom", "middle", "top")
#: Each tier's percentile band (Zillow's): from the low percentile (included) to the high one.
TIER_BANDS: dict[str, tuple[float, float]] = {
    "bottom": (0.05, 0.35),
    "middle": (0.35, 0.65),
    "top": (0.65, 0.95),
}
#: The freqs tiers take (periods that do not overlap: a listing enters or sells in one of them).
TIER_FREQS: tuple[str, ...] = ("W", "M", "Q")
#: Metrics of the closed sales, tiered by sale price (the others by list price at entry); the
#: names not in the trends' metrics are skipped.
SALE_SIDE: tuple[str, ...] = (
    "homes_sold",
    "median_sale_price",
    "median_sale_ppsf",
    "median_dom",
    "avg_sale_to_list",
    "pct_sold_above_list",
    "median_days_to_close",
)
_EDGES = (0.05, 0.35, 0.65, 0.95)
_TIMES = ("OriginalEntryTimestamp", "MajorChangeTimestamp", "CloseDate")
_HISTORY = ("ListingId", "ChangeType", "ChangeTimestamp")
_HISTORY_OPTIONAL = ("PreviousListPrice", "ListPrice", "StandardStatus")


def band_tier(
    price: np.ndarray, q05: np.ndarray, q35: np.ndarray, q65: np.ndarray, q95: np.ndarray
) -> np.ndarray:
    """Tier code per price (0 bottom, 1 middle, 2 top; NaN outside the 5th–95th percentile or
    unknown): ``[q05, q35)``, ``[q35, q65)``, ``[q65, q95]``."""
    with np.errstate(invalid="ignore"):
        conditions = [
            (price >= q05) & (price < q35),
            (price >= q35) & (price < q65),
            (price >= q65) & (price <= q95),
        ]
    return np.select(conditions, [0.0, 1.0, 2.0], default=np.nan)


def _bands(price: pd.Series, groups: dict[str, pd.Series]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The 5th, 35th, 65th and 95th percentile of ``price`` per group (one row per group with a
    price: the ``groups`` columns, ``q05`` ... ``q95``), and the same per row of ``price`` (NaN
    where the row has no price or no group)."""
    frame = pd.DataFrame({**groups, "_price": price}).dropna()
    names = list(groups)
    edges = [f"q{round(q * 100):02d}" for q in _EDGES]
    if frame.empty:  # no price: no band
        table = pd.DataFrame({**{n: frame[n] for n in names}, **dict.fromkeys(edges, np.nan)})
    else:
        table = frame.groupby(names, sort=False)["_price"].quantile(list(_EDGES)).unstack()
        table.columns = edges
        table = table.reset_index()
    per_row = pd.DataFrame(groups).merge(table, on=names, how="left")
    return table, per_row[table.columns[len(names) :]].set_axis(price.index)


def _entry_prices(table: pd.DataFrame, history: Any, func: str) -> pd.Series:
    """Each listing's list price when it entered: the old price of its first price change in
    the history, else its ListPrice (the kernel's ``median_list_price`` price). The changes are
    matched to the listings as the trends kernel matches them (:func:`~._order.match_last`)."""
    price = to_float(table["ListPrice"], "ListPrice", func)
    if history is None:
        return price
    changes = frame_of(history, _HISTORY, "history", func, ("PreviousListPrice",))
    if "PreviousListPrice" not in changes.collect_schema():
        return price
    rows = collect(
        changes.filter(
            (nw.col("ChangeType").cast(nw.String) == "price_change").fill_null(False)
        ).select(
            nw.col("ListingId").cast(nw.String),
            "ChangeTimestamp",
            nw.col("PreviousListPrice").cast(nw.Float64),
        )
    )
    if rows.empty:
        return price
    at = to_utc(rows["ChangeTimestamp"], "ChangeTimestamp", func).array.asi8
    ids = pa.array(table["ListingId"].astype("str").array)
    pos = match_last(pa.array(rows["ListingId"].array), ids)  # the listing's row (text sorted)
    seen = pos >= 0
    order = np.lexsort((at[seen], pos[seen]))  # per listing, its changes in time order (stable)
    pos, old = pos[seen][order], rows["PreviousListPrice"].to_numpy(dtype="float64")[seen][order]
    first = np.ones(len(pos), dtype=bool)
    first[1:] = pos[1:] != pos[:-1]
    at_entry = np.full(len(table), np.nan)
    at_entry[pos[first]] = old[first]
    return price.where(np.isnan(at_entry), pd.Series(at_entry, index=price.index))


def _tiers(
    table: pd.DataFrame, history: Any, keys: list[str], segment: str, code: str, func: str
) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """Per row of the market: whether it is listed (segment, market) and its sale and list tier
    (codes, NaN: none); and per side the bands of each market × period × tier."""
    listed = pd.Series(segment_mask(table["PropertyType"], segment), index=table.index)
    for key in keys:
        listed &= table[key].notna()
    markets = {
        k: pd.Series(as_key(table[k]).to_numpy(dtype=object), index=table.index) for k in keys
    }
    closed = _closed(table) & listed
    close = to_float(table["ClosePrice"], "ClosePrice", func).where(closed)
    entry = _entry_prices(table, history, func).where(listed)
    out: dict[str, Any] = {"listed": listed.to_numpy()}
    bands = {}
    for side, price, column in (
        ("sale", close, "CloseDate"),
        ("list", entry, "OriginalEntryTimestamp"),
    ):
        naive = to_utc(table[column], column, func).dt.tz_convert(None)
        period = naive.dt.to_period(code).dt.start_time.dt.as_unit("us")
        groups = {**markets, "period_begin": period}
        table_, edges = _bands(price, groups)
        out[f"{side}_tier"] = band_tier(
            price.to_numpy(dtype="float64"), *(edges[c].to_numpy(dtype="float64") for c in edges)
        )
        bands[side] = _band_rows(table_, [*keys, "period_begin"], side)
    return pd.DataFrame(out, index=table.index), bands


def _band_rows(table: pd.DataFrame, names: list[str], side: str) -> pd.DataFrame:
    """One row per group × tier: the tier's ``<side>_band_low`` and ``<side>_band_high``."""
    parts = []
    for tier, (low, high) in TIER_BANDS.items():
        part = table[names].assign(tier=tier)
        part[f"{side}_band_low"] = table[f"q{round(low * 100):02d}"].to_numpy()
        part[f"{side}_band_high"] = table[f"q{round(high * 100):02d}"].to_numpy()
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def _as_of(table: pd.DataFrame, keys: list[str], segment: str, func: str) -> pd.Timestamp:
    """The newest timestamp of the segment's listings with a market (the kernel's default
    end), so that both runs cover the same periods."""
    rows = pd.Series(segment_mask(table["PropertyType"], segment), index=table.index)
    for key in keys:
        rows &= table[key].notna()
    known = [to_utc(table.loc[rows, c], c, func).max() for c in _TIMES]
    known = [t for t in known if pd.notna(t)]
    if not known:
        raise AnalysisInputError(f"{func}(): `market` has no timestamps to place in periods")
    return pd.Timestamp(max(known))


def _family(column: str, metrics: Sequence[str]) -> str | None:
    """The metric a column belongs to (itself, ``<metric>_n``, ``<metric>_yoy`` ...)."""
    best = None
    for metric in metrics:
        if (column == metric or column.startswith(f"{metric}_")) and (
            best is None or len(metric) > len(best)
        ):
            best = metric
    return best


def tiered_trends(
    run: Callable[[Any, list[str], Any, Any], pd.DataFrame],
    market: Any,
    history: Any,
    *,
    keys: list[str],
    freq: str,
    code: str,
    segment: str,
    end: Any,
    metrics: Sequence[str],
    sampled: Sequence[str],
    min_sample: int,
    needed: Sequence[str],
    func: str = "market_trends",
) -> pd.DataFrame:
    """The trends per market × tier × period: ``run(frame, by, history, end)`` is the untiered
    ``market_trends`` with the caller's other options, run once on the list-tiered listings and
    a copy of each sale-tiered sale (under its own id, with a tier code of its own) with
    ``tier`` as one more key; the sale metrics come from the sales' tiers, the rest from the
    listings'. On an engine the bands and tiers are computed there (:mod:`._tiers_engine`)."""
    if freq not in TIER_FREQS:
        raise AnalysisInputError(
            f"{func}(): `tiers=True` takes `freq` in {list(TIER_FREQS)} (periods that do not "
            f"overlap, so each sale and entry falls in one), got {freq!r}"
        )
    if "tier" in keys:
        raise AnalysisInputError(f"{func}(): `by` may not name 'tier' with `tiers=True`")
    frame = frame_of(market, [*keys, *needed], "market", func)  # checked before any work
    columns = list(dict.fromkeys([*keys, *needed]))
    changes = None
    if history is not None:
        changes = frame_of(history, _HISTORY, "history", func, _HISTORY_OPTIONAL)
    if not is_pandas(market) and (changes is None or one_engine(frame, changes)):
        out, bands, untiered = _on_engine(run, frame, changes, keys, segment, freq, end, columns)
    else:
        table = market if is_pandas(market) else _segment_rows(frame, keys, segment)
        table = table.drop(columns=[c for c in ("tier",) if c in table.columns])
        table = table.reset_index(drop=True)
        tiers, bands = _tiers(table, history, keys, segment, code, func)
        last = _as_of(table, keys, segment, func) if end is None else end
        both, past = _tagged(table, tiers, history, changes, columns)
        out = run(both, [*keys, "tier"], past, last)
        untiered = {
            "sales": int((tiers["listed"] & _closed(table) & tiers["sale_tier"].isna()).sum()),
            "listings": int((tiers["listed"] & tiers["list_tier"].isna()).sum()),
        }
    attrs = dict(out.attrs)
    runs = _split(out)
    out = _with_bands(_combine(runs, keys, metrics), bands, keys)
    out.attrs = {
        **attrs,
        "by": keys,
        "blanked": _blanked(out, sampled, min_sample),
        "tiers": {
            "bands": {t: list(b) for t, b in TIER_BANDS.items()},
            "sale_metrics": [m for m in metrics if m in SALE_SIDE],
            "sale_price": "ClosePrice, against the sales of the market and period of close",
            "list_price": "list price at entry, against the listings that entered the market "
            "in the same period; a listing keeps that tier for life",
            "untiered_sales": untiered["sales"],
            "untiered_listings": untiered["listings"],
        },
    }
    return out


def _on_engine(run: Callable[[Any, list[str], Any, Any], pd.DataFrame], frame: Any,
               changes: Any, keys: list[str], segment: str, freq: str, end: Any,
               columns: list[str]) -> tuple[pd.DataFrame, dict[str, pd.DataFrame], dict[str, int]]:  # fmt: skip
    """The one run of the trends on the engine's tagged rows (:mod:`._tiers_engine`), the
    bands per side and the untiered counts; what the engine kept for the tiers is dropped."""
    engine = EngineTiers(frame, changes, keys, segment)
    try:
        rows = engine.tag(freq)
        both, past = engine.tagged_rows(rows, columns)
        newest = engine.newest()
        if newest is None:
            raise AnalysisInputError(
                "market_trends(): `market` has no timestamps to place in periods"
            )
        last = newest if end is None else end
        native = None if past is None else nw.to_native(past)
        out = run(nw.to_native(both), [*keys, "tier"], native, last)
    finally:
        engine.close()
    names = [*keys, "period_begin"]
    bands = {side: _band_rows(table, names, side) for side, table in engine.bands.items()}
    return out, bands, engine.untiered


def _tagged(
    table: pd.DataFrame, tiers: pd.DataFrame, history: Any, changes: Any, columns: list[str]
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The pandas rows of both sides with ``tier`` (a code: :data:`~._tiers_engine.LIST_CODES`,
    :data:`~._tiers_engine.SALE_CODES`), each sale-tiered sale copied, and the history to match
    (:meth:`~._tiers_engine.EngineTiers.tagged_rows` on pandas). Each row gets its row number
    as its ListingId (short text: the trends match the history by sorted integer keys, not by
    hashing), and each change the number of the row it belongs to on each side, matched as the
    trends match them (the last row of its ListingId); a change of no row gets ``-1``."""
    ids = pa.array(table["ListingId"].astype("str").array)
    rows, codes, matched = [], [], []
    for side, side_codes in (("list", LIST_CODES), ("sale", SALE_CODES)):
        tier = tiers[f"{side}_tier"].to_numpy()
        keep = np.flatnonzero(~np.isnan(tier))
        rows.append(keep)
        codes.append(np.asarray(side_codes, dtype="int64")[tier[keep].astype("int64")])
        matched.append(ids.take(keep))
    taken = np.concatenate(rows)
    both = table[[c for c in columns if c != "ListingId"]].take(taken).reset_index(drop=True)
    both["ListingId"] = _numbers(np.arange(len(taken)))
    both["tier"] = np.concatenate(codes)
    if changes is None:
        return both, None
    if is_pandas(history):  # the history as given (its types: no conversion of every column)
        past = history[[c for c in changes.collect_schema()]].reset_index(drop=True)
    else:
        past = collect(changes)
    change_ids = Ids(pa.array(past["ListingId"].astype("str").array))  # keys made once
    listed = match_last(change_ids, matched[0])  # every change: its list row, or -1
    sold = match_last(change_ids, matched[1])
    copies = np.flatnonzero(sold >= 0)  # the changes of the sales copied, again for the copy
    number = np.concatenate([listed, sold[copies] + len(rows[0])])
    out = past.take(np.concatenate([np.arange(len(past)), copies])).reset_index(drop=True)
    out["ListingId"] = _numbers(number)
    return both, out


def _numbers(values: np.ndarray) -> pd.Series:
    """Integers as text (``str``, through Arrow's cast)."""
    text = pa.array(values, type=pa.int64()).cast(pa.string())
    dtype = pd.StringDtype("pyarrow", na_value=np.nan)
    return pd.Series(text.to_pandas(types_mapper=lambda t: dtype if t == pa.string() else None))


def _split(out: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The one run's rows per side, the tier codes as names."""
    code = out["tier"].to_numpy(dtype="int64")
    runs = {}
    for side, codes in (("sale", SALE_CODES), ("list", LIST_CODES)):
        mine = np.isin(code, codes)
        names = np.asarray(TIERS, dtype=object)[code[mine] - codes[0]]
        runs[side] = out[mine].assign(tier=names).reset_index(drop=True)
    return runs


def _segment_rows(frame: Any, keys: list[str], segment: str) -> pd.DataFrame:
    """An engine's rows that can be tiered (the segment's, with every key), only the columns
    the trends read: the engine filters and selects, the rest is left where it is (a history
    on another engine than the market's)."""
    keep = segment_filter(segment)
    for key in keys:
        keep &= ~nw.col(key).is_null()
    return collect(frame.filter(keep))


def _closed(table: pd.DataFrame) -> pd.Series:
    """Closed rows (compared as stored: a categorical is not converted to text first)."""
    closed = (table["StandardStatus"] == "Closed").to_numpy(dtype=bool, na_value=False)
    return pd.Series(closed, index=table.index)


def _combine(
    runs: dict[str, pd.DataFrame], keys: list[str], metrics: Sequence[str]
) -> pd.DataFrame:
    """The sale metrics of the sale run beside the others of the list run, on every market ×
    tier × period (a combination with no listings: counts 0, the rest NaN)."""
    base = ["period_begin", "period_end", "complete", *keys, "tier"]
    # empty: float; one column converted (``astype`` with a dict copied every column)
    runs = {side: run.assign(tier=run["tier"].astype(object)) for side, run in runs.items()}
    columns = [c for c in runs["list"].columns if c not in base]
    sale = [c for c in columns if _family(c, metrics) in SALE_SIDE]
    rest = [c for c in columns if c not in sale]
    periods = runs["list"][["period_begin", "period_end", "complete"]].drop_duplicates()
    if periods.empty:
        periods = runs["sale"][["period_begin", "period_end", "complete"]].drop_duplicates()
    markets = pd.concat([runs[s][keys] for s in runs]).drop_duplicates()
    if not keys:  # one market (the whole frame)
        markets = pd.DataFrame(index=range(1))
    grid = markets.merge(pd.DataFrame({"tier": np.asarray(TIERS, dtype=object)}), how="cross")
    grid = grid.merge(periods, how="cross")
    on = ["period_begin", *keys, "tier"]
    out = grid.merge(runs["list"][[*on, *rest]], on=on, how="left")
    out = out.merge(runs["sale"][[*on, *sale]], on=on, how="left")
    source = {c: runs["sale" if c in sale else "list"] for c in columns}
    counts = [c for c in columns if pd.api.types.is_integer_dtype(source[c][c].dtype)]
    for column in counts:  # the counts and sample sizes: 0 where a tier has nothing
        out[column] = out[column].fillna(0).astype("int64")
    out["tier"] = pd.Categorical(out["tier"], categories=list(TIERS), ordered=True)
    out = out.sort_values([*keys, "tier", "period_begin"], kind="stable")
    return out[[*base, *columns]].reset_index(drop=True)


def _with_bands(out: pd.DataFrame, bands: dict[str, pd.DataFrame], keys: list[str]) -> pd.DataFrame:
    """Each row's band edges per side (NaN where the market had no price in the period)."""
    on = [*keys, "tier", "period_begin"]
    if out.empty:
        return out.assign(**{c: np.nan for e in bands.values() for c in e.columns if c not in on})
    for edges in bands.values():
        edges = edges.assign(
            tier=pd.Categorical(edges["tier"], categories=list(TIERS), ordered=True),
            period_begin=edges["period_begin"].astype(out["period_begin"].dtype),
        )
        out = out.merge(edges, on=on, how="left")
    return out


def _blanked(out: pd.DataFrame, sampled: Sequence[str], min_sample: int) -> int:
    """Values blanked below ``min_sample`` (a sample of 1 to ``min_sample - 1``)."""
    total = 0
    for metric in sampled:
        n = out[f"{metric}_n"]
        total += int(((n > 0) & (n < min_sample)).sum())
    return total
