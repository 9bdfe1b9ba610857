"""Market trends: ``rf.market_trends`` — one row per period (week, rolling 4 weeks, month,
quarter) × market.

Like Redfin Data Center's series (``period_begin``, ``period_end``, the same metrics per region and
property type), built from a market frame (``client.sync_listings``) and its history
(``client.listing_history``). Every metric is defined in docs/metrics.md; the flows and the sale
medians of a period are ``rf.market_summary``'s over the same dates. Everything is vectorised:
group-bys and cumulative sums over periods, no loop over listings or markets.

Modules: this one (the periods' grid, ratios, changes, small samples, :func:`keyed_trends`);
:mod:`._periods` (calendar periods and rolling windows). The cells are computed where the data
live (:func:`trend_source`): on Polars, DuckDB or PySpark by :mod:`._trends_engine` (narwhals
group-bys and window functions over :mod:`._engine_frames`; only periods × markets come back);
on pandas by :mod:`._trends_local` (flows and medians) over the arrays of :mod:`._trends_kernel`,
with :mod:`._stocks` (the status timelines), :mod:`._cuts` (price cuts per period) and
:mod:`._competition` (the competition columns).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import narwhals as nw
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
    derive,
)
from realtyframes.analysis._definitions import DEFINITIONS, check_definitions
from realtyframes.analysis._engine_frames import one_engine
from realtyframes.analysis._kernel import frame_of
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
from realtyframes.analysis._trends_engine import EngineTrends
from realtyframes.analysis._trends_local import LocalTrends
from realtyframes.analysis.market import NEEDED_COLUMNS
from realtyframes.analysis.seasonal import seasonally_adjust
from realtyframes.analysis.tiers import tiered_trends

__all__ = ["DEFINITIONS", "FREQS", "TREND_METRICS", "keyed_trends", "market_trends"]

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
    """The trends per tier (:func:`~.tiers.tiered_trends`): the untiered trends run once with
    the tier as a key."""
    min_sample = options[0]

    def run(frame: Any, by: list[str], past: Any, last: Any) -> pd.DataFrame:
        return _trends(frame, past, freq, by, segment, start, last, options, lead)

    return tiered_trends(
        run, market, history, keys=keys, freq=freq, code=FREQS[freq], segment=segment, end=end,
        metrics=TREND_METRICS, sampled=SAMPLED, min_sample=min_sample, needed=_NEEDED,
    )  # fmt: skip


def keyed_trends(
    market: Any,
    history: Any,
    keys: list[str],
    *,
    freq: str = "M",
    segment: str = "sale",
    start: Any = None,
    end: Any = None,
    min_sample: int = 5,
    definitions: str = "default",
) -> pd.DataFrame:
    """The trends with ``keys`` as the markets, computed where ``market`` lives: on the engine
    for a Polars, DuckDB or PySpark frame (only periods × markets come back), locally for pandas.
    A key may be a column assigned on the engine (a price tier from group-by quantiles), so a
    tiered run is one call per side. Arguments as :func:`market_trends`' (checked by the caller);
    the changes read the year before ``start``; ``attrs["rows_from"]`` is the first requested
    period (:func:`_requested` keeps the rows from it).

    >>> keyed_trends(lazy_with_tier, history, ["City", "tier"])  # doctest: +SKIP
    """
    options = (min_sample, definitions)
    return _trends(market, history, freq, keys, segment, start, end, options)


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
    source = trend_source(frame, changes, keys, segment)
    markets, past = source.markets, source.history
    earliest, newest = source.bounds()
    first, last = _span(newest, start, end, func)
    rows_from = pd.Timestamp(spans(base_periods(first.tz_localize(None), first.tz_localize(None),
                                                freq))[0][0], unit="us")  # fmt: skip
    earliest_ts = None if earliest is None else pd.Timestamp(earliest, unit="us")
    begin = read_from(earliest_ts, first, freq, lead)
    base = base_periods(begin.tz_localize(None), last.tz_localize(None), freq)
    grid = Grid(len(markets), *spans(base), width=WIDTHS[freq])
    as_of = int(last.tz_localize(None).as_unit("us").asm8.view("int64"))
    counts, stats = source.cells(grid, freq, as_of, definitions)
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


def _span(newest: int | None, start: Any, end: Any, func: str) -> tuple[pd.Timestamp, pd.Timestamp]:
    last = to_timestamp(end, "end", func, end_of_day=True)
    if last is None:
        if newest is None:
            raise AnalysisInputError(f"{func}(): `market` has no timestamps to place in periods")
        last = pd.Timestamp(newest, unit="us").tz_localize("UTC")
    first = to_timestamp(start, "start", func)
    if first is None:
        first = last - pd.DateOffset(months=24) + pd.Timedelta(days=1)
    if first > last:
        raise AnalysisInputError(f"{func}(): `start` ({first}) is after `end` ({last})")
    return pd.Timestamp(first), pd.Timestamp(last)


def trend_source(frame: Any, changes: Any, keys: Sequence[str], segment: str) -> Any:
    """Where the cells are computed: on the engine for a lazy frame (Polars, DuckDB, PySpark:
    :class:`~._trends_engine.EngineTrends`), else as arrays (:class:`~._trends_local.LocalTrends`:
    a pandas frame, or a history on another engine or DuckDB connection than the market's)."""
    if isinstance(frame, nw.LazyFrame) and one_engine(frame, changes):
        return EngineTrends(frame, changes, keys, segment)
    return LocalTrends(frame, changes, keys, segment)


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
        sizes = out[n].fillna(0).astype("int64")
        out[n] = sizes
        values = out[metric].to_numpy(dtype="float64")
        thin = (sizes.to_numpy() < min_sample) & ~np.isnan(values)
        if thin.any():  # the column replaced only where some value is blanked
            blanked += int(thin.sum())
            out[metric] = np.where(thin, np.nan, values)
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
