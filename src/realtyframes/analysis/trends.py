"""Market trends: ``rf.market_trends`` — one row per period (week, month, quarter) × market.

Like Redfin Data Center's series (``period_begin``, ``period_end``, the same metrics per region and
property type), built from a market frame (``client.sync_listings``) and its history
(``client.listing_history``). Every metric is defined in docs/metrics.md; the flows and the sale
medians of a period are ``rf.market_summary``'s over the same dates. Everything is vectorised:
group-bys and cumulative sums over periods, no loop over listings or markets.

Modules: this one (periods, flows, medians, changes, small samples); :mod:`._stocks` (the
point-in-time stocks rebuilt from each listing's status timeline).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from realtyframes.analysis._common import (
    AnalysisInputError,
    as_key,
    check_columns,
    check_frame,
    check_segment,
    normalize_by,
    safe_div,
    segment_mask,
    to_float,
    to_timestamp,
    to_utc,
)
from realtyframes.analysis._stocks import cuts_in_periods, status_intervals, stocks_at
from realtyframes.analysis.market import SALE_TO_LIST_RANGE

__all__ = ["FREQS", "TREND_METRICS", "market_trends"]

#: ``freq`` values: weeks ending Sunday, calendar months, calendar quarters (pandas period codes).
FREQS: dict[str, str] = {"W": "W-SUN", "M": "M", "Q": "Q-DEC"}
#: Columns of a trend row after the period and the ``by`` columns, in order.
TREND_METRICS: tuple[str, ...] = (
    "active_listings",
    "pending_listings",
    "new_listings",
    "pending_sales",
    "homes_sold",
    "price_drops",
    "pct_active_with_price_drop",
    "median_list_price",
    "median_sale_price",
    "median_sale_ppsf",
    "median_dom",
    "avg_sale_to_list",
    "pct_sold_above_list",
    "months_of_supply",
)
#: Medians and ratios, each with its sample size ``<metric>_n`` and blanked below ``min_sample``.
SAMPLED: tuple[str, ...] = (
    "pct_active_with_price_drop",
    "median_list_price",
    "median_sale_price",
    "median_sale_ppsf",
    "median_dom",
    "avg_sale_to_list",
    "pct_sold_above_list",
    "months_of_supply",
)
#: Ratios and shares: their changes are differences (points), not relative changes.
_RATIOS = ("pct_active_with_price_drop", "avg_sale_to_list", "pct_sold_above_list")
_NEEDED = (
    "ListingId",
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
_HISTORY = ("ListingId", "ChangeType", "ChangeTimestamp")
_MARKET = "_market"
_PERIOD = "_period"


def _periods(start: pd.Timestamp, end: pd.Timestamp, freq: str) -> pd.PeriodIndex:
    return pd.period_range(start.tz_localize(None), end.tz_localize(None), freq=FREQS[freq])


def _period_of(stamps: pd.Series, freq: str) -> pd.Series:
    """The period of each (UTC) timestamp, NaT-safe."""
    return stamps.dt.tz_convert("UTC").dt.tz_localize(None).dt.to_period(FREQS[freq])


def _check(freq: object, min_sample: object, func: str) -> None:
    if freq not in FREQS:
        raise AnalysisInputError(f"{func}(): `freq` must be one of {list(FREQS)}, got {freq!r}")
    if not isinstance(min_sample, int) or isinstance(min_sample, bool) or min_sample < 0:
        raise AnalysisInputError(
            f"{func}(): `min_sample` must be an integer >= 0, got {min_sample!r}"
        )


def market_trends(
    market: pd.DataFrame,
    history: pd.DataFrame | None = None,
    *,
    freq: str = "M",
    by: str | Sequence[str] | None = None,
    segment: str = "sale",
    start: Any = None,
    end: Any = None,
    min_sample: int = 5,
) -> pd.DataFrame:
    """One row per period × market: point-in-time stocks at period end, flows in the period,
    medians and ratios with their sample sizes, and month-over-month / year-over-year changes.

    ``market``: every status of a market (``client.sync_listings(...)``); ``history``: its price
    and status changes (``client.listing_history(...)``; without it the stocks and cuts are
    estimated from ``MajorChangeTimestamp`` and ``attrs["stocks"]`` says so). ``freq``: ``"W"``
    (weeks ending Sunday), ``"M"``, ``"Q"``. ``by``: market columns (None: the whole frame).
    ``start`` / ``end``: the first and last period (default: the 24 months to the newest
    timestamp in the data). ``min_sample``: a median or ratio on fewer than this many listings is
    blanked (NaN); ``attrs["blanked"]`` counts them. Columns: ``period_begin``, ``period_end``,
    ``complete``, the ``by`` columns, :data:`TREND_METRICS`, ``<metric>_n`` for each median and
    ratio, ``<metric>_mom`` and ``<metric>_yoy``.

    >>> trends = rf.market_trends(market, history, freq="M", by="City")  # doctest: +SKIP
    >>> trends[["period_begin", "City", "median_sale_price", "median_sale_price_n"]]  # doctest: +SKIP
    """
    func = "market_trends"
    check_frame(market, "market", func)
    _check(freq, min_sample, func)
    keys = [] if by is None else normalize_by(by, func)
    segment = check_segment(segment, func)
    if segment == "both":
        raise AnalysisInputError(
            f"{func}(): `segment` must be 'sale' or 'rent' (a series mixes no segments: call it "
            "once per segment)"
        )
    check_columns(market, [*keys, *_NEEDED], "market", func)
    if history is not None:
        check_frame(history, "history", func)
        check_columns(history, _HISTORY, "history", func)
    rows = segment_mask(market["PropertyType"], segment)
    frame = market[rows]
    listing = _listing_table(frame, keys, segment, func)
    first, last = _span(listing, start, end, freq, func)
    periods = _periods(first, last, freq)
    markets = _markets(listing)
    grid = pd.MultiIndex.from_product([markets, periods], names=[_MARKET, _PERIOD])
    out = pd.DataFrame(index=grid)
    intervals, estimated = status_intervals(listing, history)
    ends = periods.end_time.floor("us").tz_localize("UTC")
    out = out.join(stocks_at(intervals, ends, markets, periods))
    out = out.join(_flows(listing, intervals, freq))
    cuts = cuts_in_periods(listing, history, intervals, periods, freq)
    out = out.join(cuts)
    out = out.join(_medians(listing, _entry_prices(listing, history), freq))
    out = _finish(out, periods, last, freq, min_sample, keys, markets)
    out.attrs = {
        "freq": freq,
        "by": keys,
        "segment": segment,
        "min_sample": min_sample,
        "blanked": out.attrs.get("blanked", 0),
        "stocks": "estimated from MajorChangeTimestamp (no history)"
        if estimated
        else "rebuilt from the history",
        "as_of": last,
    }
    return out


def _listing_table(frame: pd.DataFrame, keys: list[str], segment: str, func: str) -> pd.DataFrame:
    """One row per listing with what the metrics need (UTC timestamps, floats, market key)."""
    num = {
        c: to_float(frame[c], c, func).to_numpy()
        for c in ("ListPrice", "PreviousListPrice", "ClosePrice", "LivingArea", "DaysOnMarket")
    }
    parts = [as_key(frame[k]) for k in keys]
    if parts:
        market = pd.Series(
            list(zip(*[p.to_numpy() for p in parts], strict=True)), index=frame.index
        )
        if len(parts) == 1:
            market = parts[0]
    else:
        market = pd.Series("All", index=frame.index)
    area = num["LivingArea"]
    return pd.DataFrame(
        {
            "ListingId": frame["ListingId"].astype("string").to_numpy(),
            _MARKET: market.to_numpy(),
            "status": frame["StandardStatus"].astype("string").to_numpy(),
            "list": num["ListPrice"],
            "prev_list": num["PreviousListPrice"],
            "close": num["ClosePrice"],
            "area": np.where(area > 0, area, np.nan),
            "dom": num["DaysOnMarket"],
            "entered": to_utc(frame["OriginalEntryTimestamp"], "OriginalEntryTimestamp", func),
            "major": to_utc(frame["MajorChangeTimestamp"], "MajorChangeTimestamp", func),
            "closed_at": to_utc(frame["CloseDate"], "CloseDate", func),
        }
    ).reset_index(drop=True)


def _markets(listing: pd.DataFrame) -> pd.Index:
    values = listing[_MARKET].dropna().unique().tolist()
    try:
        values = sorted(values)
    except TypeError:
        values = sorted(values, key=str)
    return pd.Index(values, tupleize_cols=False, name=_MARKET)


def _span(
    listing: pd.DataFrame, start: Any, end: Any, freq: str, func: str
) -> tuple[pd.Timestamp, pd.Timestamp]:
    last = to_timestamp(end, "end", func, end_of_day=True)
    if last is None:
        newest = [listing[c].max() for c in ("entered", "major", "closed_at")]
        known = [t for t in newest if not pd.isna(t)]
        if not known:
            raise AnalysisInputError(f"{func}(): `market` has no timestamps to place in periods")
        last = pd.Timestamp(max(known))
    first = to_timestamp(start, "start", func)
    if first is None:
        first = last - pd.DateOffset(months=24) + pd.Timedelta(days=1)
    if first > last:
        raise AnalysisInputError(f"{func}(): `start` ({first}) is after `end` ({last})")
    return pd.Timestamp(first), pd.Timestamp(last)


def _count(listing: pd.DataFrame, mask: np.ndarray, stamps: pd.Series, freq: str) -> pd.Series:
    part = pd.DataFrame({_MARKET: listing[_MARKET][mask], _PERIOD: _period_of(stamps[mask], freq)})
    return part.groupby([_MARKET, _PERIOD], sort=False, dropna=True).size()


def _flows(listing: pd.DataFrame, intervals: pd.DataFrame, freq: str) -> pd.DataFrame:
    """new_listings and homes_sold per (market, period) (market_summary's definitions with the
    period as the window), and pending_sales: listings whose status became Pending in the period
    (from the history; without one, market_summary's estimate: Pending now, MajorChangeTimestamp
    in the period)."""
    status = listing["status"].to_numpy()
    everyone = np.ones(len(listing), dtype=bool)
    went = intervals[(intervals["status"] == "Pending").to_numpy()]
    went = went.assign(**{_PERIOD: _period_of(went["start"], freq)})
    went = went.drop_duplicates(["ListingId", _PERIOD])
    return pd.DataFrame(
        {
            "new_listings": _count(listing, everyone, listing["entered"], freq),
            "pending_sales": went.groupby([_MARKET, _PERIOD], sort=False).size(),
            "homes_sold": _count(listing, status == "Closed", listing["closed_at"], freq),
        }
    )


def _entry_prices(listing: pd.DataFrame, history: pd.DataFrame | None) -> np.ndarray:
    """Each listing's list price when it entered: the old price of its first price change in the
    history, else its ListPrice (no change seen, or no history)."""
    price = listing["list"].to_numpy().copy()
    if history is None or len(history) == 0:
        return price
    changes = history[history["ChangeType"].astype("string") == "price_change"]
    changes = changes.sort_values("ChangeTimestamp", kind="stable")
    first = changes.drop_duplicates("ListingId", keep="first")
    before = pd.to_numeric(first["PreviousListPrice"], errors="coerce")
    by_id = pd.Series(before.to_numpy(), index=first["ListingId"].astype("string").to_numpy())
    at_entry = by_id.reindex(listing["ListingId"].to_numpy()).to_numpy(dtype="float64")
    return np.where(np.isnan(at_entry), price, at_entry)


def _medians(listing: pd.DataFrame, entry_price: np.ndarray, freq: str) -> pd.DataFrame:
    """Medians and ratios of the period's sales (by CloseDate) and new listings (by entry)."""
    sold = listing[(listing["status"] == "Closed").to_numpy() & listing["closed_at"].notna()]
    ratio = safe_div(sold["close"].to_numpy(), sold["list"].to_numpy())
    lo, hi = SALE_TO_LIST_RANGE
    with np.errstate(invalid="ignore"):
        in_range = (ratio >= lo) & (ratio <= hi)
    sales = pd.DataFrame(
        {
            _MARKET: sold[_MARKET].to_numpy(),
            _PERIOD: _period_of(sold["closed_at"], freq).to_numpy(),
            "median_sale_price": sold["close"].to_numpy(),
            "median_sale_ppsf": safe_div(sold["close"].to_numpy(), sold["area"].to_numpy()),
            "median_dom": sold["dom"].to_numpy(),
            "avg_sale_to_list": np.where(in_range, ratio, np.nan),
            "pct_sold_above_list": np.where(in_range, (ratio > 1.0).astype("float64"), np.nan),
        }
    )
    grouped = sales.groupby([_MARKET, _PERIOD], sort=False)
    medians = grouped[["median_sale_price", "median_sale_ppsf", "median_dom"]].median()
    means = grouped[["avg_sale_to_list", "pct_sold_above_list"]].mean()
    counts = grouped.count().add_suffix("_n")
    new = pd.DataFrame(
        {
            _MARKET: listing[_MARKET].to_numpy(),
            _PERIOD: _period_of(listing["entered"], freq).to_numpy(),
            "median_list_price": entry_price,
        }
    ).groupby([_MARKET, _PERIOD], sort=False)["median_list_price"]
    listed = pd.DataFrame({"median_list_price": new.median(), "median_list_price_n": new.count()})
    return pd.concat([medians, means, counts, listed], axis=1)


def _finish(
    out: pd.DataFrame,
    periods: pd.PeriodIndex,
    last: pd.Timestamp,
    freq: str,
    min_sample: int,
    keys: list[str],
    markets: pd.Index,
) -> pd.DataFrame:
    counts = ["active_listings", "pending_listings", "new_listings", "pending_sales",
              "homes_sold", "price_drops"]  # fmt: skip
    out[counts] = out[counts].fillna(0).astype("int64")
    out["pct_active_with_price_drop"] = safe_div(
        out.pop("_active_cut").fillna(0).to_numpy(), out["active_listings"].to_numpy()
    )
    days = (periods.end_time - periods.start_time).round("D").days.to_numpy()
    per_row = np.tile(days, len(markets))
    out["months_of_supply"] = safe_div(
        out["active_listings"].to_numpy(), out["homes_sold"].to_numpy() * 30.0 / per_row
    )
    out["months_of_supply_n"] = out["homes_sold"]
    out["pct_active_with_price_drop_n"] = out["active_listings"]
    for metric in SAMPLED:
        n = f"{metric}_n"
        out[n] = out[n].fillna(0).astype("int64")
    blanked = 0
    for metric in SAMPLED:
        thin = (out[f"{metric}_n"] < min_sample).to_numpy() & out[metric].notna().to_numpy()
        blanked += int(thin.sum())
        out.loc[thin, metric] = np.nan
    out = _changes(out, len(periods), freq)
    out = out.reset_index()
    begin = out[_PERIOD].dt.start_time
    out.insert(0, "period_begin", begin.dt.normalize().astype("datetime64[us]"))
    out.insert(1, "period_end", out[_PERIOD].dt.end_time.dt.normalize().astype("datetime64[us]"))
    out.insert(2, "complete", (out[_PERIOD].dt.end_time <= last.tz_localize(None)).to_numpy())
    out = _market_columns(out, keys)
    ordered = ["period_begin", "period_end", "complete", *keys, *TREND_METRICS]
    ordered += [f"{m}_n" for m in SAMPLED]
    ordered += [f"{m}_{s}" for m in TREND_METRICS for s in ("mom", "yoy")]
    out = out[ordered]
    out.attrs["blanked"] = blanked
    return out


def _changes(out: pd.DataFrame, n_periods: int, freq: str) -> pd.DataFrame:
    """``<metric>_mom`` (against the previous period) and ``<metric>_yoy`` (the same period a
    year earlier): relative changes for counts and levels, differences for ratios and shares."""
    year = {"W": 52, "M": 12, "Q": 4}[freq]
    added: dict[str, np.ndarray] = {}
    for metric in TREND_METRICS:
        values = out[metric].astype("float64").to_numpy().reshape(-1, n_periods)
        for suffix, lag in (("mom", 1), ("yoy", year)):
            before = np.full_like(values, np.nan)
            if lag < n_periods:
                before[:, lag:] = values[:, :-lag]
            change = values - before if metric in _RATIOS else safe_div(values - before, before)
            added[f"{metric}_{suffix}"] = change.reshape(-1)
    return pd.concat([out, pd.DataFrame(added, index=out.index)], axis=1)


def _market_columns(out: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    if not keys:
        return out
    values = out[_MARKET].to_numpy()
    if len(keys) == 1 and not isinstance(values[0] if len(values) else None, tuple):
        out.insert(3, keys[0], values)
        return out
    for i, key in enumerate(keys):
        out.insert(3 + i, key, [v[i] if isinstance(v, tuple) else v for v in values])
    return out
