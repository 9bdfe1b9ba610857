"""Market trends: ``rf.market_trends`` — one row per period (week, rolling 4 weeks, month,
quarter) × market.

Like Redfin Data Center's series (``period_begin``, ``period_end``, the same metrics per region and
property type), built from a market frame (``client.sync_listings``) and its history
(``client.listing_history``). Every metric is defined in docs/metrics.md; the flows and the sale
medians of a period are ``rf.market_summary``'s over the same dates. Everything is vectorised:
group-bys and cumulative sums over periods, no loop over listings or markets.

Modules: this one (flows, medians, changes, small samples); :mod:`._periods` (calendar periods
and rolling windows); :mod:`._trends_kernel` (what the engine reduces, the listings and history as
arrays); :mod:`._stocks` (the point-in-time stocks rebuilt from each listing's status timeline);
:mod:`._cuts` (price cuts per period) and :mod:`._competition` (the competition columns).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any

import numpy as np
import pandas as pd

from realtyframes.analysis._common import (
    AnalysisInputError,
    check_segment,
    normalize_by,
    safe_div,
    to_timestamp,
)
from realtyframes.analysis._competition import (
    COMPETITION_COUNTS,
    COMPETITION_SAMPLED,
    NEEDS_HISTORY,
    active_any,
    contract_stats,
    derive,
    inventory_age,
    no_contract_stats,
)
from realtyframes.analysis._cuts import cuts_in_periods, price_cut_share
from realtyframes.analysis._definitions import DEFINITIONS, Prices, check_definitions
from realtyframes.analysis._drops_kernel import is_empty
from realtyframes.analysis._kernel import concurrently, frame_of, in_background
from realtyframes.analysis._periods import (
    FREQS,
    PREVIOUS,
    WIDTHS,
    YEAR,
    Grid,
    base_periods,
    read_from,
    spans,
)
from realtyframes.analysis._stocks import (
    Intervals,
    distinct,
    event_order,
    status_intervals,
    stocks_at,
)
from realtyframes.analysis._trends_kernel import (
    CLOSED,
    NAT,
    PENDING,
    Changes,
    History,
    Listings,
    history_rows,
    listing_rows,
)
from realtyframes.analysis.market import NEEDED_COLUMNS, SALE_TO_LIST_RANGE
from realtyframes.analysis.seasonal import seasonally_adjust
from realtyframes.analysis.tiers import tiered_trends

__all__ = ["DEFINITIONS", "FREQS", "TREND_METRICS", "market_trends"]

#: Counts of a trend row (no sample size of their own).
_COUNTS: tuple[str, ...] = (
    "active_listings",
    "pending_listings",
    "new_listings",
    "pending_sales",
    "homes_sold",
    "price_drops",
    *COMPETITION_COUNTS,
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
    *COMPETITION_SAMPLED,
)
#: Columns of a trend row after the period and the ``by`` columns, in order.
TREND_METRICS: tuple[str, ...] = _COUNTS + SAMPLED
#: Ratios and shares: their changes are differences (points), not relative changes.
_RATIOS = (
    "pct_active_with_price_drop",
    "avg_sale_to_list",
    "pct_sold_above_list",
    "off_market_in_two_weeks",
    "price_cut_share",
    "median_cut_pct",
    "pending_ratio",
    "absorption_rate",
)
_NEEDED = ("ListingId", *NEEDED_COLUMNS)
_HISTORY = ("ListingId", "ChangeType", "ChangeTimestamp")
_HISTORY_OPTIONAL = ("PreviousListPrice", "ListPrice", "StandardStatus")
_DAY = 86_400_000_000  # microseconds


def _check(freq: object, min_sample: object, func: str) -> None:
    if freq not in FREQS:
        raise AnalysisInputError(f"{func}(): `freq` must be one of {list(FREQS)}, got {freq!r}")
    if not isinstance(min_sample, int) or isinstance(min_sample, bool) or min_sample < 0:
        raise AnalysisInputError(
            f"{func}(): `min_sample` must be an integer >= 0, got {min_sample!r}"
        )


def market_trends(
    market: Any,
    history: Any = None,
    *,
    freq: str = "M",
    by: str | Sequence[str] | None = None,
    segment: str = "sale",
    start: Any = None,
    end: Any = None,
    min_sample: int = 5,
    tiers: bool = False,
    seasonally_adjusted: bool | Sequence[str] = False,
    definitions: str = "default",
) -> pd.DataFrame:
    """One row per period × market: point-in-time stocks at period end, flows in the period,
    medians and ratios with their sample sizes, the competition columns (days to pending, off
    market in two weeks, price-cut share, ...), and period-over-period / year-over-year changes.

    ``market``: every status of a market (``client.sync_listings(...)``); ``history``: its price
    and status changes (``client.listing_history(...)``; without it the stocks and cuts are
    estimated from ``MajorChangeTimestamp`` and ``attrs["stocks"]`` says so, and the columns that
    read contract dates are blank: ``attrs["blank_without_history"]``). ``freq``: ``"W"`` (weeks
    ending Sunday), ``"4W"`` (rolling 4-week windows ending each Sunday), ``"M"``, ``"Q"``.
    ``by``: market columns (None: the whole frame). ``start`` / ``end``: the first and last
    period (default: the 24 months to the newest timestamp in the data). ``min_sample``: a median or ratio on fewer than this many listings is
    blanked (NaN); ``attrs["blanked"]`` counts them. Columns: ``period_begin``, ``period_end``,
    ``complete``, the ``by`` columns, :data:`TREND_METRICS`, ``<metric>_n`` for each median and
    ratio, ``<metric>_mom`` (against the previous period that does not overlap: the week, 4
    weeks, month or quarter before; the name is kept for every ``freq``) and ``<metric>_yoy``;
    ``attrs["lags"]`` gives both lags in rows (``attrs["changes"]``, its old name, too until 0.3).

    ``market`` and ``history`` may each be a pandas or Polars DataFrame, a Polars LazyFrame, a
    DuckDB relation or a PySpark DataFrame (typed columns): the engine keeps the segment's
    listings and the status and price changes, with the columns the metrics read; the periods are
    computed locally and the result is the same pandas frame (docs/scale.md).

    ``tiers=True``: one row per period × market × ``tier`` (bottom / middle / top: Zillow's 5th–35th,
    35th–65th, 65th–95th percentile bands of the market's prices in the period; sale metrics by
    sale price, the others by list price at entry; band edges in ``sale_band_low`` ...
    ``list_band_high``; :mod:`.tiers`). ``definitions="redfin"``: Redfin's definitions where
    ours differ (pending sales without listings under contract more than 90 days after entry,
    the most recent list price for ``median_list_price``, sale-to-list on the original list
    price; docs/metrics.md); any other value but ``"default"`` is a ``QueryError``.
    ``seasonally_adjusted``: True (every metric) or a list of
    metrics: adds ``<metric>_sa`` by :func:`~.seasonal.seasonally_adjust`, fitted on every
    period the data cover (monthly or weekly, at least 3 years), the rows asked for returned.
    The changes read the periods before ``start`` where the data cover them (``attrs
    ["read_from"]``: the first period computed).

    >>> trends = rf.market_trends(market, history, freq="M", by="City")  # doctest: +SKIP
    >>> rf.market_trends(market, history, freq="4W")[["period_end", "off_market_in_two_weeks"]]  # doctest: +SKIP
    >>> rf.market_trends(pl.scan_parquet("market.parquet"), pl.scan_parquet("history.parquet"))  # doctest: +SKIP
    >>> trends[["period_begin", "City", "median_sale_price", "median_sale_price_n"]]  # doctest: +SKIP
    """
    func = "market_trends"
    _check(freq, min_sample, func)
    options = (min_sample, check_definitions(definitions, func))
    keys = [] if by is None else normalize_by(by, func)
    segment = check_segment(segment, func)
    if segment == "both":
        raise AnalysisInputError(
            f"{func}(): `segment` must be 'sale' or 'rent' (a series mixes no segments: call it "
            "once per segment)"
        )
    if not isinstance(tiers, bool):
        raise AnalysisInputError(f"{func}(): `tiers` must be True or False, got {tiers!r}")
    if not isinstance(seasonally_adjusted, bool) and (
        isinstance(seasonally_adjusted, str)
        or not all(isinstance(c, str) for c in seasonally_adjusted)
        or not seasonally_adjusted
    ):
        raise AnalysisInputError(
            f"{func}(): `seasonally_adjusted` must be True, False or a list of metric names, "
            f"got {seasonally_adjusted!r}"
        )
    lead = "year" if seasonally_adjusted is False else "all"
    if tiers:
        out = _tiered(market, history, freq, keys, segment, start, end, options, lead)
    else:
        out = _trends(market, history, freq, keys, segment, start, end, options, lead)
    if seasonally_adjusted is not False:
        columns = list(TREND_METRICS) if seasonally_adjusted is True else seasonally_adjusted
        out = seasonally_adjust(out, columns)
    return _requested(out, min_sample)


def _requested(out: pd.DataFrame, min_sample: int) -> pd.DataFrame:
    """The requested periods of a frame computed from ``attrs["read_from"]`` (the periods before
    ``start`` the data cover, read by the changes and the seasonal fit): the rows from
    ``attrs["rows_from"]``, ``blanked`` counting theirs."""
    attrs = dict(out.attrs)
    begin = attrs.pop("rows_from")
    before = (out["period_begin"] < begin).to_numpy()
    if not before.any():
        out.attrs = attrs
        return out
    dropped = out[before]
    for metric in SAMPLED:
        n = dropped[f"{metric}_n"]
        attrs["blanked"] -= int(((n > 0) & (n < min_sample)).sum())
    out = out[~before].reset_index(drop=True)
    out.attrs = attrs
    return out


def _tiered(market: Any, history: Any, freq: str, keys: list[str], segment: str, start: Any,
            end: Any, options: tuple[int, str], lead: str) -> pd.DataFrame:  # fmt: skip
    """The trends per tier (:func:`~.tiers.tiered_trends`): the untiered trends run per side."""
    min_sample = options[0]

    def run(frame: pd.DataFrame, by: list[str], last: Any) -> pd.DataFrame:
        return _trends(frame, history, freq, by, segment, start, last, options, lead)

    return tiered_trends(
        run, market, history, keys=keys, freq=freq, code=FREQS[freq], segment=segment, end=end,
        metrics=TREND_METRICS, sampled=SAMPLED, min_sample=min_sample, needed=_NEEDED,
    )  # fmt: skip


def _trends(market: Any, history: Any, freq: str, keys: list[str], segment: str, start: Any,
            end: Any, options: tuple[int, str], lead: str = "year") -> pd.DataFrame:  # fmt: skip
    """The untiered trends (the arguments checked), from ``attrs["read_from"]``: the year before
    the first requested period (``lead="year"``, for the changes) or every period (``"all"``,
    for a seasonal fit) the data cover; ``attrs["rows_from"]``: the first requested period."""
    func = "market_trends"
    min_sample, definitions = options
    frame = frame_of(market, [*keys, *_NEEDED], "market", func)
    changes = None
    if history is not None:
        changes = frame_of(history, _HISTORY, "history", func, _HISTORY_OPTIONAL)
    listings_job = in_background(frame, _listings, frame, keys, segment, changes is not None)
    try:
        records = _records(changes)  # while the listings are read
    finally:
        listings = listings_job.result()  # the market's error first, as on one thread
    markets = listings.markets
    first, last = _span(listings, start, end, func)
    rows_from = pd.Timestamp(spans(base_periods(first.tz_localize(None), first.tz_localize(None),
                                                freq))[0][0], unit="us")  # fmt: skip
    begin = _read_from(listings, first, freq, lead)
    base = base_periods(begin.tz_localize(None), last.tz_localize(None), freq)
    past = None if records is None else History(records, listings)
    grid = Grid(len(markets), *spans(base), width=WIDTHS[freq])
    as_of = int(last.tz_localize(None).as_unit("us").asm8.view("int64"))
    counts, stats = _cells(listings, past, grid, as_of, definitions)
    out = _assemble(counts, stats, grid, markets, keys)
    blanked = _finish(out, grid, as_of, min_sample)
    out = _changes(out, grid.n_periods, freq)
    done = grid.ends <= as_of
    out.insert(2, "complete", np.tile(done, len(markets)))
    out = out[_column_order(keys)].reset_index(drop=True)
    out.attrs = {
        "freq": freq,
        "by": keys,
        "segment": segment,
        "min_sample": min_sample,
        "definitions": definitions,
        "blanked": blanked,
        "stocks": "rebuilt from the history"
        if past is not None
        else "estimated from MajorChangeTimestamp (no history)",
        "as_of": last,
        "read_from": pd.Timestamp(grid.starts[0], unit="us") if grid.n_periods else rows_from,
        "rows_from": rows_from,
        "lags": {"mom": PREVIOUS[freq], "yoy": YEAR[freq]},
        "changes": {"mom": PREVIOUS[freq], "yoy": YEAR[freq]},  # the old name of "lags", until 0.3
        "blank_without_history": [] if past is not None else list(NEEDS_HISTORY),
    }
    return out


def _listings(frame: Any, keys: list[str], segment: str, matched: bool) -> Listings:
    """The market's listings as arrays; their ids ordered for the history's match if
    ``matched``."""
    listings = Listings(listing_rows(frame, keys, segment), keys)
    if matched:
        listings.ids.ordered()
    return listings


def _records(changes: Any) -> Changes | None:
    """The history's status and price changes as arrays, or None when there is none to use
    (absent or empty)."""
    if changes is None:
        return None
    rows = history_rows(changes)
    if len(rows) == 0 and is_empty(changes):
        return None
    return Changes(rows)


def _cells(
    listings: Listings, past: History | None, grid: Grid, as_of: int, definitions: str
) -> tuple[dict[str, np.ndarray], pd.DataFrame]:
    """The counts (markets × periods arrays) and the medians (by flat cell), on two threads in a
    big market: the status intervals, then the stocks, flows, active listings at any point and
    age of inventory on one; the medians, then the cuts and the contract-date metrics (which
    wait for the intervals) on the other."""
    shared: Future[Intervals] = Future()
    prices = Prices(definitions, _entry_prices(listings, past), listings.list)

    def timelines() -> tuple[dict[str, np.ndarray], list[pd.DataFrame]]:
        try:
            intervals = status_intervals(listings, past)
        except BaseException as exc:  # the other step waits for them: it raises it too
            shared.set_exception(exc)
            raise
        shared.set_result(intervals)
        base = grid.width - 1  # the stocks at the windows' ends: the base periods ending there
        counts = {
            **stocks_at(intervals, grid.base_starts[base:], grid.ends, grid.n_markets),
            **_flows(listings, intervals, grid, prices.pending_days),
            **active_any(intervals, grid),
        }
        return counts, [inventory_age(listings, intervals, grid, as_of)]

    def sales() -> tuple[dict[str, np.ndarray], list[pd.DataFrame]]:
        stats = _medians(listings, prices, grid)
        intervals = shared.result()
        cut_any, cut_pct = price_cut_share(listings, past, intervals, grid)
        counts = {**cuts_in_periods(listings, past, intervals, grid), "_cut_any": cut_any}
        contracts = (
            no_contract_stats()
            if past is None
            else contract_stats(listings, intervals, grid, as_of)
        )
        return counts, [stats, cut_pct, contracts]

    steps: list[Callable[[], Any]] = [timelines, sales]  # in this order when on one thread
    (counts, stats), (more, medians) = concurrently(steps, len(listings))
    return {**counts, **more}, pd.concat([*medians, *stats], axis=1)


def _span(listings: Listings, start: Any, end: Any, func: str) -> tuple[pd.Timestamp, pd.Timestamp]:
    last = to_timestamp(end, "end", func, end_of_day=True)
    if last is None:
        times = (listings.entered, listings.major, listings.closed_at)
        known = [int(t.max()) for t in times if len(t) and t.max() != NAT]
        if not known:
            raise AnalysisInputError(f"{func}(): `market` has no timestamps to place in periods")
        last = pd.Timestamp(max(known), unit="us").tz_localize("UTC")
    first = to_timestamp(start, "start", func)
    if first is None:
        first = last - pd.DateOffset(months=24) + pd.Timedelta(days=1)
    if first > last:
        raise AnalysisInputError(f"{func}(): `start` ({first}) is after `end` ({last})")
    return pd.Timestamp(first), pd.Timestamp(last)


def _read_from(listings: Listings, first: pd.Timestamp, freq: str, lead: str) -> pd.Timestamp:
    """:func:`~._periods.read_from` of the data's earliest timestamp."""
    times = (listings.entered, listings.major, listings.closed_at)
    known = [int(t[t != NAT].min()) for t in times if (t != NAT).any()]
    earliest = pd.Timestamp(min(known), unit="us") if known else None
    return read_from(earliest, first, freq, lead)


def _flows(
    listings: Listings, intervals: Any, grid: Grid, pending_days: int | None
) -> dict[str, np.ndarray]:
    """new_listings and homes_sold per cell (market_summary's definitions with the period as the
    window), and pending_sales: listings whose status became Pending in the period (from the
    history; without one, market_summary's estimate: Pending now, MajorChangeTimestamp in it),
    with ``pending_days`` only those that became Pending within that many days of entry."""
    market = listings.market
    closed = listings.status == CLOSED
    went = intervals.status == PENDING
    if pending_days is not None:
        entered = listings.entered[intervals.pos]
        went &= intervals.start // _DAY - entered // _DAY <= pending_days
    rows, cells = grid.pairs(intervals.market[went], intervals.start[went])
    once = distinct(intervals.pos[went][rows] * grid.size + cells) % grid.size  # per listing
    return {
        "new_listings": grid.tally(grid.pairs(market, listings.entered)[1]),
        "pending_sales": grid.tally(once),
        "homes_sold": grid.tally(grid.pairs(market[closed], listings.closed_at[closed])[1]),
    }


def _entry_prices(listings: Listings, history: History | None) -> np.ndarray:
    """Each listing's list price when it entered: the old price of its first price change in the
    history, else its ListPrice (no change seen, or no history)."""
    price = listings.list.copy()
    if history is None or not history.is_price.any():
        return price
    pos, at = history.pos[history.is_price], history.at[history.is_price]
    order = event_order(pos, at)
    pos, old = pos[order], history.old_price[history.is_price][order]
    first = np.ones(len(pos), dtype=bool)
    first[1:] = pos[1:] != pos[:-1]
    at_entry = np.full(len(price), np.nan)
    at_entry[pos[first]] = old[first]
    return np.where(np.isnan(at_entry), price, at_entry)


def _medians(listings: Listings, prices: Prices, grid: Grid) -> pd.DataFrame:
    """Medians and ratios of each cell's sales (by CloseDate) and new listings (by entry), with
    their sample sizes, indexed by flat cell; the list prices as ``prices`` define them."""
    sold = np.flatnonzero(listings.status == CLOSED)
    rows, cell = grid.pairs(listings.market[sold], listings.closed_at[sold])
    sold = sold[rows]
    close = listings.close[sold]
    ratio, above = (safe_div(close, p[sold]) for p in (prices.against, listings.list))
    lo, hi = SALE_TO_LIST_RANGE
    with np.errstate(invalid="ignore"):
        in_range = (ratio >= lo) & (ratio <= hi)
        above_range = (above >= lo) & (above <= hi)
    sales = pd.DataFrame(
        {
            "median_sale_price": close,
            "median_sale_ppsf": safe_div(close, listings.area[sold]),
            "median_dom": listings.dom[sold],
            "avg_sale_to_list": np.where(in_range, ratio, np.nan),
            "pct_sold_above_list": np.where(above_range, (above > 1.0).astype("float64"), np.nan),
        },
        copy=False,
    )
    grouped = sales.groupby(cell, sort=False)
    medians = grouped[["median_sale_price", "median_sale_ppsf", "median_dom"]].median()
    means = grouped[["avg_sale_to_list", "pct_sold_above_list"]].mean()
    counts = grouped.count().add_suffix("_n")
    rows, entered = grid.pairs(listings.market, listings.entered)
    listed = pd.Series(prices.listed[rows]).groupby(entered, sort=False)
    stats = pd.DataFrame(
        {"median_list_price": listed.median(), "median_list_price_n": listed.count()}
    )
    return pd.concat([medians, means, counts, stats], axis=1)


def _assemble(
    counts: dict[str, np.ndarray],
    stats: pd.DataFrame,
    grid: Grid,
    markets: pd.Index,
    keys: list[str],
) -> pd.DataFrame:
    """The (market, period) rows, markets in order, periods in order within each."""
    size = grid.n_markets * grid.n_periods
    out = pd.DataFrame(
        {
            "period_begin": np.tile(grid.starts.astype("datetime64[us]"), grid.n_markets),
            "period_end": np.tile((grid.ends // _DAY * _DAY).astype("datetime64[us]"), grid.n_markets),
        }
    )  # fmt: skip
    values = np.repeat(np.arange(grid.n_markets), grid.n_periods)
    for i, key in enumerate(keys):
        column = [markets[m][i] if len(keys) > 1 else markets[m] for m in range(len(markets))]
        out[key] = np.asarray(column, dtype=object)[values] if len(markets) else []
    for name, table in counts.items():
        out[name] = table.reshape(size)
    stats = stats.reindex(np.arange(size))
    for name in stats.columns:
        out[name] = stats[name].to_numpy()
    return out


def _finish(out: pd.DataFrame, grid: Grid, as_of: int, min_sample: int) -> int:
    """Counts as int64, supply and the share from the stocks, sample sizes, and blanking below
    ``min_sample`` (in place); returns how many values were blanked. A rate per month takes the
    days the period has had by ``as_of`` (a period not over has had fewer than its length)."""
    counts = list(_COUNTS)
    out[counts] = out[counts].astype("int64")
    active = out["active_listings"].to_numpy()
    out["pct_active_with_price_drop"] = safe_div(out.pop("_active_cut").to_numpy(), active)
    whole = ((grid.ends - grid.starts) / _DAY).round()
    so_far = (np.minimum(grid.ends, as_of) - grid.starts) / _DAY
    days = np.tile(np.where(grid.ends <= as_of, whole, so_far), grid.n_markets)  # per row
    out["months_of_supply"] = safe_div(active, out["homes_sold"].to_numpy() * 30.0 / days)
    derive(out, days)
    out["months_of_supply_n"] = out["homes_sold"]
    out["pct_active_with_price_drop_n"] = out["active_listings"]
    blanked = 0
    for metric in SAMPLED:
        n = f"{metric}_n"
        out[n] = out[n].fillna(0).astype("int64")
        thin = (out[n] < min_sample).to_numpy() & out[metric].notna().to_numpy()
        blanked += int(thin.sum())
        out.loc[thin, metric] = np.nan
    return blanked


def _changes(out: pd.DataFrame, n_periods: int, freq: str) -> pd.DataFrame:
    """``<metric>_mom`` (against the previous period) and ``<metric>_yoy`` (the same period a
    year earlier): relative changes for counts and levels, differences for ratios and shares."""
    year, previous = YEAR[freq], PREVIOUS[freq]
    added: dict[str, np.ndarray] = {}
    for metric in TREND_METRICS:
        values = out[metric].astype("float64").to_numpy().reshape(-1, n_periods)
        for suffix, lag in (("mom", previous), ("yoy", year)):
            before = np.full_like(values, np.nan)
            if lag < n_periods:
                before[:, lag:] = values[:, :-lag]
            change = values - before if metric in _RATIOS else safe_div(values - before, before)
            added[f"{metric}_{suffix}"] = change.reshape(-1)
    return pd.concat([out, pd.DataFrame(added, index=out.index)], axis=1)


def _column_order(keys: list[str]) -> list[str]:
    ordered = ["period_begin", "period_end", "complete", *keys, *TREND_METRICS]
    ordered += [f"{m}_n" for m in SAMPLED]
    ordered += [f"{m}_{s}" for m in TREND_METRICS for s in ("mom", "yoy")]
    return ordered
