"""A constant-quality price index: ``rf.price_index`` — 100 at a base period, with a 95 % band.

A median sale price moves with the mix of homes sold; this index holds quality constant, by one of
the two standard methods (docs/metrics.md, "Price index"):

- ``"hedonic"``: time-dummy regression of log(ClosePrice) on the home's characteristics (beds,
  baths, log living area, age at sale, waterfront, subtype and location dummies) and period dummies;
- ``"repeat_sales"``: consecutive sales of the same property (same normalised address and living
  area), by Bailey-Muth-Nourse, optionally with Case-Shiller's interval weights.

The regressions are in :mod:`._index_fit` and :mod:`._index_cells` (numpy); this module reads
the frame, finds the sales, their periods and the pairs, picks the base period and assembles the
result. The hedonic regression runs on cells (per group, period, subtype and location: counts,
sums and cross products): on another engine's frame (Polars, DuckDB, PySpark) the engine makes
them (:mod:`._index_engine`) and only they come back; with ``history`` (sales dated from it) and
for repeat sales, the engine reduces the frame to the sale segment's sales and the columns read,
which are collected.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import narwhals as nw
import numpy as np
import pandas as pd

from realtyframes.analysis._common import (
    AnalysisInputError,
    as_key,
    normalize_by,
    to_timestamp,
    to_utc,
)
from realtyframes.analysis._engine_frames import one_engine
from realtyframes.analysis._index_engine import dated_sales, engine_cells
from realtyframes.analysis._index_fit import Z95, Fit, HedonicInputs
from realtyframes.analysis._index_pairs import engine_pairs
from realtyframes.analysis._index_rows import (
    HedonicRows,
    Info,
    PairRows,
    Rows,
    default_base,
    hedonic_group,
    pair_group,
    rolling_sum,
)
from realtyframes.analysis._kernel import collect, frame_of, is_pandas, segment_filter

__all__ = [
    "INDEX_COLUMNS",
    "INDEX_FREQS",
    "INDEX_LOCATIONS",
    "INDEX_METHODS",
    "INDEX_WEIGHTS",
    "hedonic_inputs",
    "price_index",
]

#: ``method`` values.
INDEX_METHODS: tuple[str, ...] = ("hedonic", "repeat_sales")
#: ``freq`` values: weeks ending Sunday, calendar months, calendar quarters (pandas period codes).
INDEX_FREQS: dict[str, str] = {"W": "W-SUN", "M": "M", "Q": "Q-DEC"}
#: Periods in a year per ``freq``: the default base is the best-covered period of the first year.
PERIODS_PER_YEAR: dict[str, int] = {"W": 52, "M": 12, "Q": 4}
#: ``rolling``: the longest window, in periods.
MAX_ROLLING = 12
#: ``location`` values (the hedonic location dummies; None: none).
INDEX_LOCATIONS: tuple[str, ...] = ("City", "PostalCode")
#: ``weights`` values for repeat sales (None: equal weights, plain BMN).
INDEX_WEIGHTS: tuple[str, ...] = ("case_shiller",)
#: Columns of the result after the period and the ``by`` columns, in order.
INDEX_COLUMNS: tuple[str, ...] = ("index", "index_low", "index_high", "n")
#: The characteristics the hedonic regression reads (besides the location).
CHARACTERISTICS: tuple[str, ...] = (
    "BedroomsTotal",
    "BathroomsTotalInteger",
    "LivingArea",
    "YearBuilt",
    "PropertySubType",
)
_HISTORY = ("ListingId", "ChangeType", "ChangeTimestamp", "StandardStatus")


def _check(
    freq: object,
    method: object,
    min_sample: object,
    location: object,
    weights: object,
    rolling: object,
    func: str,
) -> None:
    """Every argument that does not depend on the data, before anything is read."""
    if rolling is not None and (
        not isinstance(rolling, int) or isinstance(rolling, bool) or not 2 <= rolling <= MAX_ROLLING
    ):
        raise AnalysisInputError(
            f"{func}(): `rolling` must be None or a whole number of periods from 2 to "
            f"{MAX_ROLLING}, got {rolling!r}"
        )
    if method not in INDEX_METHODS:
        raise AnalysisInputError(
            f"{func}(): `method` must be one of {list(INDEX_METHODS)}, got {method!r}"
        )
    if freq not in INDEX_FREQS:
        raise AnalysisInputError(
            f"{func}(): `freq` must be one of {list(INDEX_FREQS)}, got {freq!r}"
        )
    if not isinstance(min_sample, int) or isinstance(min_sample, bool) or min_sample < 1:
        raise AnalysisInputError(
            f"{func}(): `min_sample` must be an integer >= 1, got {min_sample!r}"
        )
    if location is not None and location not in INDEX_LOCATIONS:
        raise AnalysisInputError(
            f"{func}(): `location` must be one of {list(INDEX_LOCATIONS)} or None, got {location!r}"
        )
    if method == "repeat_sales" and location != "City":
        raise AnalysisInputError(
            f"{func}(): `location` applies to method='hedonic' only (a repeat-sales pair is one "
            f"property, its location fixed), got {location!r}"
        )
    if weights is not None and weights not in INDEX_WEIGHTS:
        raise AnalysisInputError(
            f"{func}(): `weights` must be None or one of {list(INDEX_WEIGHTS)}, got {weights!r}"
        )
    if weights is not None and method != "repeat_sales":
        raise AnalysisInputError(
            f"{func}(): `weights` applies to method='repeat_sales' only, got {weights!r} with "
            f"method={method!r}"
        )


def price_index(
    market: Any,
    history: Any = None,
    *,
    freq: str = "M",
    method: str = "hedonic",
    by: str | Sequence[str] | None = None,
    base: Any = None,
    min_sample: int = 5,
    location: str | None = "City",
    weights: str | None = None,
    rolling: int | None = None,
) -> pd.DataFrame:
    """A constant-quality price index per period (and per ``by`` group), 100 at the base period.

    ``market``: every status of a market (``client.sync_listings(...)``); a sale is a row of the
    sale segment with ClosePrice > 0 and a CloseDate, in the calendar period of its CloseDate
    (``freq``: ``"W"`` weeks ending Sunday, ``"M"``, ``"Q"``). ``history``
    (``client.listing_history(...)``, optional) is used for one thing only: a sale without a
    CloseDate is dated by its listing's last status change to Closed (``attrs
    ["dated_from_history"]``); without it such sales are left out (``attrs["left_out"]``).

    ``method="hedonic"``: log(ClosePrice) on beds, baths, log LivingArea, age at sale, subtype
    and ``location`` (``"City"``, ``"PostalCode"`` or None) dummies and period dummies; sales with
    a missing characteristic are left out and counted. ``n``: the sales in the period.
    ``method="repeat_sales"``: consecutive sales of one property (same address lower-cased with
    whitespace collapsed, and the same LivingArea), by Bailey-Muth-Nourse; ``weights=
    "case_shiller"`` weights each pair by the inverse of its variance fitted on the time between
    the sales. ``n``: the pairs whose second sale is in the period; ``n_in_pairs``: the sales in
    the period that are in a pair.

    ``base``: a date in the base period (default: the best-covered period of the first year of
    sales if it has ``min_sample`` or more, pairs' sales for repeat sales; docs/metrics.md). A
    thinly covered base (its own 95 % band wider than ±10 %) is warned about. A period with
    fewer than ``min_sample`` gets NaN index and band (it is still in the regression). The band:
    ``100·exp(δ ± 1.959964·se)``. ``rolling=3``: each row is the average log level of its
    period and the 2 before (a 3-period moving average, as Case-Shiller's 3-month index), its
    band from the estimates' covariance, ``n`` the window's; 100 at the base's window.
    ``by``: a separate index per group. Columns: ``period_begin``, ``period_end``, the ``by``
    columns, ``index``, ``index_low``, ``index_high``, ``n`` (and ``n_in_pairs``); ``attrs``:
    method, freq, rolling, base, base_n (its sales), base_band, rows used, left out (by reason),
    R², pairs. On Polars, DuckDB and PySpark the hedonic
    index's grouped sums are made by the engine (only they come back; with ``history``, and for
    repeat sales, the sales are collected).

    >>> idx = rf.price_index(market, freq="Q", method="repeat_sales")  # doctest: +SKIP
    >>> idx[["period_begin", "index", "index_low", "index_high", "n"]]  # doctest: +SKIP
    """
    func = "price_index"
    _check(freq, method, min_sample, location, weights, rolling, func)
    keys = [] if by is None else normalize_by(by, func)
    base_at = to_timestamp(base, "base", func)
    hedonic = method == "hedonic"
    needed, optional = _columns(keys, hedonic, location, history is not None)
    on_engine = None if is_pandas(market) else _engine_sales(market, history, needed, optional)
    if on_engine is not None:
        info = Info(min_sample, {}, bool(keys), PERIODS_PER_YEAR[freq], rolling or 1)
        if hedonic:
            out = _engine_hedonic(on_engine[0], keys, location, freq, base_at, info)
        else:
            out = _engine_pairs(on_engine[0], keys, freq, base_at, info, weights)
        if history is not None:
            out.attrs["dated_from_history"] = on_engine[1]
        return out
    sales = _read_sales(market, needed, optional, func)
    changes = None if history is None else collect(frame_of(history, _HISTORY, "history", func))
    when, dated = _sale_dates(sales, changes, func)
    known = when.notna().to_numpy()
    left = {"no_close_date": int((~known).sum())}
    info = Info(min_sample, left, bool(keys), PERIODS_PER_YEAR[freq], rolling or 1)
    sales, when = sales[known].reset_index(drop=True), when[known].reset_index(drop=True)
    periods, code = _periods(when, INDEX_FREQS[freq])
    base_code = _base_code(base_at, periods, func)
    if hedonic:
        rows_data: Rows = HedonicRows(sales, when, code, location, func)
    else:
        rows_data = PairRows(sales, when, code, func)
    pieces = []
    for key, rows in _groups(sales, keys, info):
        fit, n, support, at = rows_data.fit(rows, base_code, periods, info, key, weights)
        pieces.append(_assemble(fit, n, support, at, periods, keys, key, info, hedonic))
    out = pd.concat(pieces, ignore_index=True) if pieces else _assemble_empty(keys, hedonic)
    out.attrs = info.attrs(method, freq, keys, len(sales))
    out.attrs.update({"location": location} if hedonic else {"weights": weights})
    if history is not None:
        out.attrs["dated_from_history"] = dated
    return out


def _columns(
    keys: list[str], hedonic: bool, location: str | None, dated_by_history: bool
) -> tuple[list[str], list[str]]:
    """The columns the method reads: needed, and optional (read when the frame has them)."""
    needed = [*keys, "PropertyType", "ClosePrice", "CloseDate"]
    if hedonic:
        needed += [*CHARACTERISTICS, *([location] if location else [])]
    else:
        needed += ["UnparsedAddress"]
    if dated_by_history:
        needed.append("ListingId")
    return needed, ["WaterfrontYN"] if hedonic else ["LivingArea"]


def _engine_sales(
    market: Any, history: Any, needed: list[str], optional: list[str]
) -> tuple[Any, int] | None:
    """Another engine's sale segment with ClosePrice > 0 (lazy), its missing CloseDates taken
    from ``history`` on the same engine (:func:`~._index_engine.dated_sales`), and how many
    were; None where the history cannot meet the market there (read locally instead)."""
    func = "price_index"
    frame = frame_of(market, needed, "market", func, optional)
    sold = frame.filter(segment_filter("sale") & (nw.col("ClosePrice") > 0).fill_null(False))
    if history is None:
        return sold, 0
    changes = frame_of(history, _HISTORY, "history", func)
    if is_pandas(history) or not one_engine(sold, changes):
        return None
    return dated_sales(sold, changes)


def _engine_hedonic(
    sales: Any, keys: list[str], location: str | None, freq: str,
    base_at: pd.Timestamp | None, info: Info,
) -> pd.DataFrame:  # fmt: skip
    """The hedonic index of another engine's sales: the engine makes the cells
    (:mod:`._index_engine`), the regression runs on them (:mod:`._index_cells`)."""
    func = "price_index"
    cells = engine_cells(sales, keys, location, INDEX_FREQS[freq])
    periods = cells.periods
    info.left_out["no_close_date"] += round(float(cells.n[~cells.dated].sum()))
    base_code = _base_code(base_at, periods, func)
    dated = np.flatnonzero(cells.dated)
    pieces = []
    for key, rows in _groups(cells.frame.iloc[dated], keys, info, cells.n[dated]):
        at = dated[rows]
        incomplete = round(float(cells.n[at][~cells.complete[at]].sum()))
        group = cells.cells(at)
        fit, n, support, at_base = hedonic_group(group, incomplete, base_code, periods, info, key)
        pieces.append(_assemble(fit, n, support, at_base, periods, keys, key, info, True))
    out = pd.concat(pieces, ignore_index=True) if pieces else _assemble_empty(keys, True)
    out.attrs = info.attrs("hedonic", freq, keys, round(float(cells.n[dated].sum())))
    out.attrs["location"] = location
    return out


def _engine_pairs(
    sales: Any, keys: list[str], freq: str, base_at: pd.Timestamp | None, info: Info,
    weights: str | None,
) -> pd.DataFrame:  # fmt: skip
    """The repeat-sales index of another engine's sales: the engine makes the pairs (with the
    years between their sales, :mod:`._index_pairs`), the regression runs on them."""
    func = "price_index"
    made = engine_pairs(sales, keys, INDEX_FREQS[freq])
    periods, dated = made.periods, made.dated
    info.left_out["no_close_date"] += int(made.n[~dated].sum())
    base_code = _base_code(base_at, periods, func)
    at_dated = np.flatnonzero(dated)
    counts = made.counts.iloc[at_dated]
    pieces = []
    for key, rows in _groups(counts, keys, info, made.n[at_dated].astype(np.float64)):
        at = at_dated[rows]
        blank = int(made.n[at][made.blank[at]].sum())
        info.left_out["no_address"] += blank
        p1, p2, ratio, gap, chain, same = made.group(key)
        info.left_out["same_period_pairs"] += same
        in_pairs = 2 * len(p1) - int((chain >= 0).sum())
        info.left_out["not_paired"] += int(made.n[at].sum()) - blank - in_pairs
        fit, n, support, at_base = pair_group(
            p1, p2, ratio, gap, chain, base_code, periods, info, key, weights
        )
        pieces.append(_assemble(fit, n, support, at_base, periods, keys, key, info, False))
    out = pd.concat(pieces, ignore_index=True) if pieces else _assemble_empty(keys, False)
    out.attrs = info.attrs("repeat_sales", freq, keys, int(made.n[dated].sum()))
    out.attrs["weights"] = weights
    return out


def _read_sales(market: Any, needed: list[str], optional: list[str], func: str) -> pd.DataFrame:
    """The sale segment's rows with ClosePrice > 0 and the columns read, as pandas (the engine
    filters and selects; pandas input is read as :func:`frame_of` reads it)."""
    frame = frame_of(market, needed, "market", func, optional)
    sold = segment_filter("sale") & (nw.col("ClosePrice") > 0).fill_null(False)
    return collect(frame.filter(sold))


def _sale_dates(
    sales: pd.DataFrame, changes: pd.DataFrame | None, func: str
) -> tuple[pd.Series, int]:
    """Each sale's CloseDate (UTC); a missing one taken from the history's last status change to
    Closed of its listing when ``changes`` is given. Returns the dates and how many came from the
    history."""
    when = to_utc(sales["CloseDate"], "CloseDate", func)
    if changes is None or not when.isna().any():
        return when, 0
    kind = changes["ChangeType"].astype("str").to_numpy()
    status = changes["StandardStatus"].astype("str").to_numpy()
    closed = changes[(kind == "status_change") & (status == "Closed")]
    at = to_utc(closed["ChangeTimestamp"], "ChangeTimestamp", func)
    last = at.groupby(closed["ListingId"].astype("str").to_numpy()).max()
    missing = when.isna().to_numpy()
    found = sales["ListingId"].astype("str")[missing].map(last)
    when = when.copy()
    when[missing] = found.to_numpy()
    return when, int(found.notna().sum())


def _periods(when: pd.Series, code: str) -> tuple[pd.PeriodIndex, np.ndarray]:
    """Every period from the first sale's to the last sale's, and each sale's position in it."""
    if not len(when):
        return pd.PeriodIndex([], freq=code), np.zeros(0, dtype=np.int64)
    of = pd.PeriodIndex(when.dt.tz_convert(None), freq=code)
    periods = pd.period_range(of.min(), of.max(), freq=code)
    return periods, np.asarray(of.asi8 - periods[0].ordinal, dtype=np.int64)


def _base_code(base_at: pd.Timestamp | None, periods: pd.PeriodIndex, func: str) -> int | None:
    """The position of the period holding ``base`` (None: chosen per group from the data)."""
    if base_at is None:
        return None
    if not len(periods):
        raise AnalysisInputError(f"{func}(): `base` given, but `market` has no sales")
    at = base_at.tz_convert(None).to_period(periods.freq)
    if at < periods[0] or at > periods[-1]:
        raise AnalysisInputError(
            f"{func}(): `base` ({base_at:%Y-%m-%d}) is outside the sales' periods, "
            f"{periods[0]} to {periods[-1]}"
        )
    return int(at.ordinal - periods[0].ordinal)


def _groups(
    sales: pd.DataFrame, keys: list[str], info: Info, count: np.ndarray | None = None
) -> list[tuple[tuple[Hashable, ...], np.ndarray]]:
    """(group key, row positions) per ``by`` group, in sorted order; rows with a missing key are
    left out (counted; ``count``: the sales each row stands for, one each by default)."""
    if not keys:
        return [((), np.arange(len(sales)))]
    frame = pd.DataFrame({k: as_key(sales[k]) for k in keys}).reset_index(drop=True)
    missing = frame.isna().any(axis=1).to_numpy()
    weight = np.ones(len(frame)) if count is None else count
    info.left_out["no_group"] += round(float(weight[missing].sum()))
    kept = np.flatnonzero(~missing)
    found = frame[~missing].groupby(keys, sort=True).indices
    return [(key if isinstance(key, tuple) else (key,), kept[rows]) for key, rows in found.items()]


def _assemble(
    fit: Fit | None, n: np.ndarray, support: np.ndarray, at: int | None,
    periods: pd.PeriodIndex, keys: list[str], key: tuple[Hashable, ...], info: Info,
    hedonic: bool,
) -> pd.DataFrame:  # fmt: skip
    """One group's rows: the periods, its key, the index and band (NaN below ``min_sample`` or
    without an estimate), ``n`` (and ``n_in_pairs``), over ``info.rolling`` periods each."""
    size, k = len(periods), info.rolling
    window = rolling_sum(support, k)
    level, se = _levels(fit, at, k, size)
    estimated = np.isfinite(level)
    shown = estimated & (window >= info.min_sample)
    info.blanked += int((estimated & ~shown).sum())
    if at is not None:
        info.base_n[key] = int(window[at])
        if fit is not None:
            info.base_band[key] = _base_band(fit, at, k, shown)
    out = pd.DataFrame(
        {
            "period_begin": periods.start_time.as_unit("us"),
            "period_end": periods.end_time.normalize().as_unit("us"),
        }
    )
    for name, value in zip(keys, key, strict=True):
        out[name] = pd.Series([value] * size, dtype=object)
    with np.errstate(invalid="ignore"):
        out["index"] = np.where(shown, 100.0 * np.exp(level), np.nan)
        out["index_low"] = np.where(shown, 100.0 * np.exp(level - Z95 * se), np.nan)
        out["index_high"] = np.where(shown, 100.0 * np.exp(level + Z95 * se), np.nan)
    out["n"] = _window_counts(n, k)
    if not hedonic:
        out["n_in_pairs"] = _window_counts(support, k)
    return out


def _window_counts(values: np.ndarray, k: int) -> np.ndarray:
    """Each row's count over its ``k`` periods (those there are, at the start)."""
    return np.convolve(values, np.ones(k, dtype=np.int64))[: len(values)].astype("int64")


def _weights(k: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows' averaging weights over the periods (``size`` square: 1/k over each row's window)
    and which rows have a whole window."""
    a = np.zeros((size, size))
    for lag in range(k):
        a += np.eye(size, k=-lag) / k
    whole = np.arange(size) >= k - 1
    a[~whole] = 0.0
    return a, whole


def _levels(fit: Fit | None, at: int | None, k: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's log level against the base row (the average of its window's deltas minus the
    base window's) and its standard error from the deltas' covariance; NaN where a window holds
    a period not estimated."""
    nan = np.full(size, np.nan)
    if fit is None or at is None:
        return nan, nan
    if k == 1:  # the regression's reference is the base: its own estimates
        return fit.delta, fit.se
    a, whole = _weights(k, size)
    est = np.isfinite(fit.delta)
    covered = whole & ((a > 0) <= est).all(axis=1)
    if not covered[at]:
        return nan, nan
    m = a - a[at]
    level = m @ np.where(est, fit.delta, 0.0)
    cov = np.where(est[:, None] & est[None, :], fit.cov, 0.0)
    with np.errstate(invalid="ignore"):
        se = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", m, cov, m), 0.0))
    return np.where(covered, level, np.nan), np.where(covered, se, np.nan)


def _base_band(fit: Fit, at: int, k: int, shown: np.ndarray) -> float:
    """The base's own 95 % band (log half-width): ``Z95·se`` of the base row's level against the
    average level of the rows shown; a thin base makes it wide (and every row carries it)."""
    if not shown.any():
        return float("nan")
    a, _ = _weights(k, len(fit.delta)) if k > 1 else (np.eye(len(fit.delta)), None)
    m = a[at] - a[shown].mean(axis=0)
    est = np.isfinite(fit.delta)
    cov = np.where(est[:, None] & est[None, :], fit.cov, 0.0)
    return float(Z95 * np.sqrt(max(float(m @ cov @ m), 0.0)))


def _assemble_empty(keys: list[str], hedonic: bool) -> pd.DataFrame:
    columns = ["period_begin", "period_end", *keys, *INDEX_COLUMNS]
    columns += [] if hedonic else ["n_in_pairs"]
    return pd.DataFrame({c: [] for c in columns})


def hedonic_inputs(
    market: pd.DataFrame, freq: str = "M", location: str | None = "City"
) -> tuple[HedonicInputs, int]:
    """The hedonic regression's inputs for a whole (pandas) market and the base period's position
    as :func:`price_index` picks it by default: for the benchmark, which times a bare
    least-squares solve on the same design (:func:`._index_fit.design_block`)."""
    func = "price_index"
    needed = ["PropertyType", "ClosePrice", "CloseDate", *CHARACTERISTICS]
    sales = _read_sales(
        market, [*needed, *([location] if location else [])], ["WaterfrontYN"], func
    )
    when = to_utc(sales["CloseDate"], "CloseDate", func)
    known = when.notna().to_numpy()
    sales, when = sales[known].reset_index(drop=True), when[known].reset_index(drop=True)
    periods, code = _periods(when, INDEX_FREQS[freq])
    rows = HedonicRows(sales, when, code, location, func)
    ok = np.flatnonzero(rows.complete)
    n = np.bincount(code[ok], minlength=len(periods))
    base = default_base(n, PERIODS_PER_YEAR[freq], 5)
    if base is None:
        raise AnalysisInputError(f"{func}(): no period has 5 or more sales")
    inputs = HedonicInputs(rows.log_price[ok], rows.numeric[ok], rows.subtype[ok],
                           rows.location[ok], code[ok])  # fmt: skip
    return inputs, base
