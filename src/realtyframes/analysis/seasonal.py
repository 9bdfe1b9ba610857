"""Seasonally adjusted series: ``rf.seasonally_adjust(trends, columns)`` adds ``<metric>_sa``.

STL (Cleveland et al. 1990, ``statsmodels.tsa.seasonal.STL``) on each series of a
``rf.market_trends`` frame — one per market (the ``by`` columns) and tier — with a period of 12
months or 52 weeks. Prices are adjusted multiplicatively (STL on the log; the adjusted value is
the price divided by its seasonal factor), everything else additively (the value minus its
seasonal component). Rules (docs/metrics.md):

- a series needs at least :data:`MIN_YEARS` years of values (36 months, 156 weeks) from its first
  value to its last, else :class:`AnalysisInputError` naming the length needed and given;
- only complete periods are adjusted (the period not over yet has ``<metric>_sa`` NaN);
- a blanked value inside the series (a small sample) is interpolated for the fit only, its
  ``_sa`` stays NaN, and ``attrs["seasonal"]["interpolated"]`` counts them; more than
  :data:`MAX_GAP_SHARE` of a series missing is refused.

Pandas only, after the kernel (docs/scale.md). STL runs once per series (per market × column).

>>> sa = rf.seasonally_adjust(trends, ["homes_sold", "median_sale_price"])  # doctest: +SKIP
>>> sa[["period_begin", "homes_sold", "homes_sold_sa"]]  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from realtyframes.analysis._common import AnalysisInputError

__all__ = [
    "MAX_GAP_SHARE",
    "MIN_YEARS",
    "MULTIPLICATIVE",
    "SEASONAL_FREQS",
    "SEASONAL_MODELS",
    "seasonally_adjust",
]

#: Periods per year of the freqs that can be adjusted.
SEASONAL_FREQS: dict[str, int] = {"M": 12, "W": 52}
#: Years of values a series needs.
MIN_YEARS = 3
#: The largest share of a series' periods that may be missing (blanked) and interpolated.
MAX_GAP_SHARE = 0.1
#: Columns adjusted multiplicatively by default (price levels); the others additively.
MULTIPLICATIVE: tuple[str, ...] = (
    "median_list_price",
    "median_sale_price",
    "median_sale_ppsf",
)
#: ``model`` values: by column (:data:`MULTIPLICATIVE` or not), or one for every column.
SEASONAL_MODELS: tuple[str, ...] = ("auto", "additive", "multiplicative")
_FUNC = "seasonally_adjust"


def _check(trends: Any, columns: Any, freq: Any, model: Any) -> tuple[list[str], str]:
    if not isinstance(trends, pd.DataFrame) or "period_begin" not in trends.columns:
        raise AnalysisInputError(
            f"{_FUNC}(): `trends` must be a frame of rf.market_trends (with period_begin), "
            f"got {type(trends).__name__}"
        )
    names = [columns] if isinstance(columns, str) else list(columns)
    if not names or not all(isinstance(c, str) for c in names):
        raise AnalysisInputError(
            f"{_FUNC}(): `columns` must be a column name or a list of them, got {columns!r}"
        )
    missing = [c for c in names if c not in trends.columns]
    if missing:
        raise AnalysisInputError(f"{_FUNC}(): `columns` names columns not in `trends`: {missing}")
    for name in names:
        if not pd.api.types.is_numeric_dtype(trends[name].dtype):
            raise AnalysisInputError(f"{_FUNC}(): column {name!r} must hold numbers")
    freq = trends.attrs.get("freq") if freq is None else freq
    if freq not in SEASONAL_FREQS:
        raise AnalysisInputError(
            f"{_FUNC}(): `freq` must be one of {list(SEASONAL_FREQS)} (monthly or weekly series), "
            f"got {freq!r}"
        )
    if model not in SEASONAL_MODELS:
        raise AnalysisInputError(
            f"{_FUNC}(): `model` must be one of {list(SEASONAL_MODELS)}, got {model!r}"
        )
    return names, str(freq)


def seasonally_adjust(
    trends: pd.DataFrame,
    columns: str | Sequence[str],
    *,
    freq: str | None = None,
    model: str = "auto",
    robust: bool = False,
) -> pd.DataFrame:
    """A copy of ``trends`` with ``<column>_sa``: each series (per market in ``attrs["by"]`` and
    tier) seasonally adjusted by STL.

    ``columns``: the metrics to adjust. ``freq``: ``"M"`` or ``"W"`` (default:
    ``trends.attrs["freq"]``). ``model``: ``"auto"`` (multiplicative for the price levels in
    :data:`MULTIPLICATIVE`, additive for counts, shares and the rest), ``"additive"`` or
    ``"multiplicative"`` for every column. ``robust``: STL's robust fit (an outlier month does
    not bend the season, but the season then keeps less of each month's level; off by default). A series shorter than 3 years raises :class:`AnalysisInputError`;
    ``attrs["seasonal"]`` says the method, period, model per column and interpolated values.

    >>> trends = rf.market_trends(market, history, freq="M", start="2022-07-01")  # doctest: +SKIP
    >>> rf.seasonally_adjust(trends, ["homes_sold", "median_sale_price"])  # doctest: +SKIP
    """
    names, freq = _check(trends, columns, freq, model)
    period = SEASONAL_FREQS[freq]
    keys = [k for k in [*trends.attrs.get("by", []), "tier"] if k in trends.columns]
    series = _series(trends, keys, freq)
    complete = (
        trends["complete"].to_numpy(dtype=bool)
        if "complete" in trends.columns
        else np.ones(len(trends), dtype=bool)
    )
    out = trends.copy()
    models, filled = {}, {}
    for name in names:
        log = model == "multiplicative" or (model == "auto" and name in MULTIPLICATIVE)
        models[name] = "multiplicative" if log else "additive"
        values = trends[name].to_numpy(dtype="float64")
        adjusted = np.full(len(out), np.nan)
        filled[name] = 0
        for at, label in series:
            at = at[complete[at]]
            adjusted[at], gaps = _adjust(values[at], period, log, robust, f"{name!r}{label}", freq)
            filled[name] += gaps
        out[f"{name}_sa"] = adjusted
    out.attrs = {
        **trends.attrs,
        "seasonal": {
            "method": "STL (statsmodels), robust" if robust else "STL (statsmodels)",
            "period": period,
            "models": models,
            "interpolated": filled,
        },
    }
    return out


def _series(trends: pd.DataFrame, keys: list[str], freq: str) -> list[tuple[np.ndarray, str]]:
    """Each series' rows (positions, in period order) and its label (`` for City='Doral'``),
    checked to have one row per period without a gap."""
    frame = trends[[*keys, "period_begin"]].reset_index(drop=True)
    frame = frame.sort_values([*keys, "period_begin"], kind="stable")
    parts = [frame] if not keys else [g for _, g in frame.groupby(keys, sort=False, observed=True)]
    out = []
    for part in parts:
        at = part.index.to_numpy()
        label = _label(trends, keys, at)
        _consecutive(part["period_begin"].to_numpy(), freq, label)
        out.append((at, label))
    return out


def _label(out: pd.DataFrame, keys: list[str], at: np.ndarray) -> str:
    if not keys or not len(at):
        return ""
    first = out.iloc[at[0]]
    return " for " + ", ".join(f"{k}={first[k]!r}" for k in keys)


def _consecutive(begins: np.ndarray, freq: str, label: str) -> None:
    """A series must have one row per period, periods following each other without a gap (a
    frame filtered by rows, or several markets without ``attrs["by"]``, would not)."""
    periods = pd.DatetimeIndex(begins).to_period("M" if freq == "M" else "W-SUN")
    gaps = np.diff(periods.asi8)
    if (gaps != 1).any():
        raise AnalysisInputError(
            f"{_FUNC}(): the series{label} must have one row per period with no period missing "
            "(a market_trends frame as it comes: its markets in attrs['by']); "
            f"{int((gaps == 0).sum())} repeated and {int((gaps > 1).sum())} missing periods"
        )


def _adjust(
    values: np.ndarray, period: int, log: bool, robust: bool, what: str, freq: str
) -> tuple[np.ndarray, int]:
    """The adjusted series (NaN where the value is missing) and how many values inside it were
    interpolated for the fit."""
    from statsmodels.tsa.seasonal import STL  # imported on first use (a heavy import)

    present = np.flatnonzero(~np.isnan(values))
    needed = MIN_YEARS * period
    length = int(present[-1] - present[0] + 1) if len(present) else 0
    unit = "months" if freq == "M" else "weeks"
    if length < needed:
        raise AnalysisInputError(
            f"{_FUNC}(): {what} needs at least {needed} {unit} ({MIN_YEARS} years) of complete "
            f"periods from its first value to its last to be seasonally adjusted, got {length} "
            "(rf.market_trends fits on every period its data cover)"
        )
    span = values[present[0] : present[-1] + 1]
    gaps = np.isnan(span)
    if gaps.sum() > MAX_GAP_SHARE * len(span):
        raise AnalysisInputError(
            f"{_FUNC}(): {what} misses {int(gaps.sum())} of its {len(span)} {unit} (blanked small "
            f"samples); at most {MAX_GAP_SHARE:.0%} may be interpolated: lower `min_sample`, "
            "use a larger market or a monthly series"
        )
    if log and (span[~gaps] <= 0).any():
        raise AnalysisInputError(
            f"{_FUNC}(): {what} has values <= 0: it cannot be adjusted multiplicatively "
            "(use model='additive')"
        )
    series = np.log(span) if log else span.copy()
    if gaps.any():
        inside = np.arange(len(span))
        series[gaps] = np.interp(inside[gaps], inside[~gaps], series[~gaps])
    seasonal = STL(series, period=period, robust=robust).fit().seasonal
    fitted = np.exp(series - seasonal) if log else series - seasonal
    fitted[gaps] = np.nan
    out = np.full(len(values), np.nan)
    out[present[0] : present[-1] + 1] = fitted
    return out, int(gaps.sum())
