"""Per-row inputs of ``rf.price_index`` and what the groups' fits report (:mod:`.price_index`).

:class:`HedonicRows`: each sale's log price, characteristics, subtype / location codes and period;
:class:`PairRows`: each sale's property key (normalised address and living area), log price, day
and period, paired per group. Their ``fit`` picks the group's base period, runs the regression
(:mod:`._index_fit`) and returns the estimates, ``n`` and the support ``min_sample`` counts per
period; :class:`Info` gathers the counts and fits for ``attrs``.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
import pandas as pd

from realtyframes.analysis._common import as_key, to_float
from realtyframes.analysis._index_cells import Cells, cells_of_rows, fit_cells
from realtyframes.analysis._index_fit import (
    Z95,
    Fit,
    fit_repeat_sales,
    flag_columns,
    years,
)
from realtyframes.errors import AnalysisInputError, DataQualityWarning

__all__ = [
    "WIDE_BASE_BAND",
    "HedonicRows",
    "Info",
    "PairRows",
    "Rows",
    "default_base",
    "hedonic_group",
    "pair_group",
    "rolling_sum",
]

#: A base whose own 95 % band (its level against the index's average level, in log) is wider than
#: this (about ±10 %) is warned about: every period's index carries the base's error.
WIDE_BASE_BAND = 0.10


def rolling_sum(values: np.ndarray, window: int) -> np.ndarray:
    """The sum of each period's ``window`` periods ending at it; 0 where the window is not
    complete (before the ``window``-th period)."""
    if window == 1:
        return values
    total = np.convolve(values, np.ones(window, dtype=values.dtype))[: len(values)]
    total[: window - 1] = 0
    return total


def default_base(support: np.ndarray, per_year: int, min_sample: int) -> int | None:
    """The default base: the best-covered period (most sales; the earliest of ties) of the first
    year from the first period with any, if it has ``min_sample`` or more; else the first period
    that has; None if none has (docs/metrics.md, "Base period").

    >>> default_base(np.array([0, 3, 40, 90, 60, 200]), per_year=4, min_sample=5)
    3
    """
    has = np.flatnonzero(support > 0)
    if not len(has):
        return None
    year = support[has[0] : has[0] + per_year]
    best = int(has[0] + np.argmax(year))
    if support[best] >= min_sample:
        return best
    enough = np.flatnonzero(support >= min_sample)
    return int(enough[0]) if len(enough) else None


class Info:
    """What the groups' fits report, gathered for ``attrs``."""

    def __init__(
        self, min_sample: int, left_out: dict[str, int], grouped: bool, per_year: int,
        rolling: int = 1,
    ) -> None:  # fmt: skip
        self.min_sample, self.grouped = min_sample, grouped
        self.per_year, self.rolling = per_year, rolling
        self.not_fitted: dict[tuple[Hashable, ...], str] = {}
        self.left_out: Counter[str] = Counter(left_out)
        self.bases: dict[tuple[Hashable, ...], pd.Timestamp | None] = {}
        self.base_n: dict[tuple[Hashable, ...], int] = {}
        self.base_band: dict[tuple[Hashable, ...], float] = {}
        self.r2: dict[tuple[Hashable, ...], float] = {}
        self.used = self.pairs = self.blanked = 0
        self.extra: dict[tuple[Hashable, ...], dict[str, object]] = {}

    def choose_base(self, support: np.ndarray, base: int | None) -> int | None:
        """The base period (with ``rolling``, the last period of the base window): the given one
        if its window has ``min_sample`` or more, else None; without one, :func:`default_base`
        on the windows' support."""
        window = rolling_sum(support, self.rolling)
        if base is not None:
            return base if window[base] >= self.min_sample else None
        return default_base(window, self.per_year, self.min_sample)

    def reference(self, support: np.ndarray, at: int | None) -> int | None:
        """The regression's reference period for the base ``at``: ``at`` itself, with
        ``rolling`` the best-covered period of its window (the index is renormalised on the
        window's average afterwards)."""
        if at is None or self.rolling == 1:
            return at
        low = at - self.rolling + 1
        return low + int(np.argmax(support[low : at + 1]))

    def attempt(self, key: tuple[Hashable, ...], fit: Callable[[], Fit]) -> Fit | None:
        """``fit()``; with ``by``, a group whose regression cannot be identified (too few sales,
        collinear) gets None and its reason in ``attrs["not_fitted"]``; without, it raises."""
        try:
            return fit()
        except AnalysisInputError as exc:
            if not self.grouped:
                raise
            self.not_fitted[key] = str(exc).removeprefix("price_index(): ")
            return None

    def record(
        self, key: tuple[Hashable, ...], base: pd.Timestamp | None, fit: Fit | None, used: int
    ) -> None:
        self.bases[key] = base
        self.base_n.setdefault(key, 0)
        if fit is not None:
            self.r2[key] = fit.r2
            self.used += used
            extra = {k: v for k, v in fit.extra.items() if k != "used"}
            if extra:
                self.extra[key] = extra

    def attrs(self, method: str, freq: str, keys: list[str], n_sales: int) -> dict[str, Any]:
        no_base = [k for k, b in self.bases.items() if b is None]
        if no_base:
            warnings.warn(
                f"price_index(): {len(no_base)} of {len(self.bases)} group(s) have no base "
                f"period with min_sample={self.min_sample} or more sales; their index is NaN "
                "(attrs['no_base'])",
                DataQualityWarning,
                stacklevel=3,
            )
        if self.not_fitted:
            warnings.warn(
                f"price_index(): the regression of {len(self.not_fitted)} of {len(self.bases)} "
                "group(s) cannot be identified; their index is NaN (attrs['not_fitted'])",
                DataQualityWarning,
                stacklevel=3,
            )
        wide = {k: b for k, b in self.base_band.items() if b > WIDE_BASE_BAND}
        if wide:
            worst = max(wide, key=lambda k: wide[k])
            warnings.warn(
                f"price_index(): the base period of {len(wide)} of {len(self.bases)} group(s) is "
                f"thinly covered (at worst {self.bases[worst]:%Y-%m-%d}, {self.base_n[worst]} "
                f"sales: its level is known to ±{100 * wide[worst]:.0f} %, and every period's "
                "index carries that error); pass `base=` a better covered period, or a longer "
                "`freq` or `rolling` (attrs['base_band'])",
                DataQualityWarning,
                stacklevel=3,
            )
        single = not keys

        def named(table: dict[tuple[Hashable, ...], Any]) -> dict[Hashable, Any]:
            return {k[0] if len(k) == 1 else k: v for k, v in table.items()}

        return {
            "method": method,
            "freq": freq,
            "by": keys,
            "min_sample": self.min_sample,
            "base": self.bases.get((), None) if single else named(self.bases),
            "base_n": self.base_n.get((), 0) if single else named(self.base_n),
            "base_band": (
                self.base_band.get((), float("nan")) if single else named(self.base_band)
            ),
            "rolling": self.rolling,
            "sales": n_sales,
            "rows_used": self.used,
            "left_out": dict(self.left_out),
            "r2": self.r2.get((), float("nan")) if single else named(self.r2),
            "blanked": self.blanked,
            "no_base": list(named(dict.fromkeys(no_base))),
            "not_fitted": named(self.not_fitted),
            "band": f"95 %: 100·exp(δ ± {Z95:.6f}·se)",
            "fit": self.extra.get((), {}) if single else named(self.extra),
            **({"pairs": self.pairs} if method == "repeat_sales" else {}),
        }


class Rows:
    """Per-row inputs of one method, fitted per group by :meth:`fit`: the fit (None without a
    base period), ``n`` per period, the support per period (what ``min_sample`` counts) and the
    base period's position (None: none)."""

    def fit(
        self, rows: np.ndarray, base: int | None, periods: pd.PeriodIndex, info: Info,
        key: tuple[Hashable, ...], weights: str | None,
    ) -> tuple[Fit | None, np.ndarray, np.ndarray, int | None]:  # fmt: skip
        raise NotImplementedError


def _begin(periods: pd.PeriodIndex, at: int | None) -> pd.Timestamp | None:
    return None if at is None else pd.Timestamp(periods[at].start_time)


def _flags(values: pd.Series | None, n: int) -> np.ndarray:
    """A yes/no column (bool, or text true/false/yes/no/1/0, any case) as 1.0 / 0.0; NaN where
    unknown or absent (``values`` None: the frame has no such column)."""
    if values is None:
        return np.full(n, np.nan)
    text = values.astype("string").str.strip().str.lower()
    return text.map(_YES_NO).astype("float64").to_numpy()


_YES_NO = {"true": 1.0, "yes": 1.0, "y": 1.0, "1": 1.0, "1.0": 1.0,
           "false": 0.0, "no": 0.0, "n": 0.0, "0": 0.0, "0.0": 0.0}  # fmt: skip


class HedonicRows(Rows):
    """log price, beds, baths, log area, age at sale, waterfront (yes / unknown indicators),
    subtype and location codes per sale."""

    def __init__(
        self, sales: pd.DataFrame, when: pd.Series, code: np.ndarray, location: str | None,
        func: str,
    ) -> None:  # fmt: skip
        area = to_float(sales["LivingArea"], "LivingArea", func).to_numpy()
        built = to_float(sales["YearBuilt"], "YearBuilt", func).to_numpy()
        with np.errstate(divide="ignore", invalid="ignore"):
            log_area = np.where(area > 0, np.log(area), np.nan)
        age = np.maximum(when.dt.year.to_numpy(dtype="float64") - built, 0.0)
        self.numeric = np.column_stack([
            to_float(sales["BedroomsTotal"], "BedroomsTotal", func).to_numpy(),
            to_float(sales["BathroomsTotalInteger"], "BathroomsTotalInteger", func).to_numpy(),
            log_area, age, *flag_columns(_flags(sales.get("WaterfrontYN"), len(sales))).T,
        ])  # fmt: skip
        self.log_price = np.log(to_float(sales["ClosePrice"], "ClosePrice", func).to_numpy())
        self.subtype = pd.factorize(as_key(sales["PropertySubType"]), sort=True)[0]
        none = np.zeros(len(sales), dtype=np.int64)
        self.location = pd.factorize(as_key(sales[location]), sort=True)[0] if location else none
        self.period = code
        self.complete = ~np.isnan(self.numeric).any(axis=1) & (self.subtype >= 0)
        self.complete &= self.location >= 0

    def fit(
        self, rows: np.ndarray, base: int | None, periods: pd.PeriodIndex, info: Info,
        key: tuple[Hashable, ...], weights: str | None,
    ) -> tuple[Fit | None, np.ndarray, np.ndarray, int | None]:  # fmt: skip
        ok = rows[self.complete[rows]]
        cells = cells_of_rows(self.log_price[ok], self.numeric[ok], self.subtype[ok],
                              self.location[ok], self.period[ok])  # fmt: skip
        return hedonic_group(cells, len(rows) - len(ok), base, periods, info, key)


def hedonic_group(
    cells: Cells, incomplete: int, base: int | None, periods: pd.PeriodIndex, info: Info,
    key: tuple[Hashable, ...],
) -> tuple[Fit | None, np.ndarray, np.ndarray, int | None]:  # fmt: skip
    """One group's hedonic fit from its complete sales' cells (``incomplete``: its sales left
    out for a missing characteristic): the fit, ``n`` per period, the same as support, the base."""
    info.left_out["missing_characteristics"] += incomplete
    n = np.rint(np.bincount(cells.period, cells.n, minlength=len(periods))).astype(np.int64)
    used = int(n.sum())
    at = info.choose_base(n, base)
    ref = info.reference(n, at)
    fit = None
    if ref is None:
        info.left_out["no_base"] += used
    else:
        fit = info.attempt(key, lambda: fit_cells(cells, ref, len(periods)))
        if fit is None:
            info.left_out["not_fitted"] += used
    info.record(key, _begin(periods, at), fit, used)
    return fit, n, n, at


def _property_keys(sales: pd.DataFrame, func: str) -> np.ndarray:
    """One code per property: the address lower-cased with whitespace collapsed, and the
    LivingArea when the frame has it (a missing area matches only a missing area); −1 where the
    address is missing or blank."""
    text = sales["UnparsedAddress"].astype("string").str.lower()
    text = text.str.replace(r"\s+", " ", regex=True).str.strip()
    blank = (text.isna() | (text == "")).to_numpy(dtype=bool)
    parts = {"address": pd.factorize(text)[0]}
    if "LivingArea" in sales.columns:
        parts["area"] = to_float(sales["LivingArea"], "LivingArea", func).to_numpy()
    keys = pd.DataFrame(parts).groupby(list(parts), dropna=False, sort=False).ngroup()
    return np.where(blank, -1, keys.to_numpy())


class PairRows(Rows):
    """Property key, log price, day and period per sale; pairs made per group."""

    def __init__(self, sales: pd.DataFrame, when: pd.Series, code: np.ndarray, func: str) -> None:
        self.key = _property_keys(sales, func)
        self.log_price = np.log(to_float(sales["ClosePrice"], "ClosePrice", func).to_numpy())
        self.day = when.dt.tz_convert(None).to_numpy().astype("datetime64[us]").astype(np.int64)
        self.day = self.day / 86_400_000_000
        self.period = code

    def pairs(self, rows: np.ndarray, info: Info) -> tuple[np.ndarray, np.ndarray]:
        """Consecutive sales of one property in ``rows`` (first, second), in different periods."""
        has = rows[self.key[rows] >= 0]
        info.left_out["no_address"] += len(rows) - len(has)
        ordered = has[np.lexsort((self.day[has], self.key[has]))]
        same = self.key[ordered[1:]] == self.key[ordered[:-1]]
        first, second = ordered[:-1][same], ordered[1:][same]
        apart = self.period[first] != self.period[second]
        info.left_out["same_period_pairs"] += int((~apart).sum())
        first, second = first[apart], second[apart]
        info.left_out["not_paired"] += len(has) - len(np.union1d(first, second))
        return first, second

    def fit(
        self, rows: np.ndarray, base: int | None, periods: pd.PeriodIndex, info: Info,
        key: tuple[Hashable, ...], weights: str | None,
    ) -> tuple[Fit | None, np.ndarray, np.ndarray, int | None]:  # fmt: skip
        first, second = self.pairs(rows, info)
        shared = np.zeros(len(first), dtype=bool)
        shared[1:] = first[1:] == second[:-1]
        p1, p2 = self.period[first], self.period[second]
        chain = np.where(shared, np.concatenate([[-1], p1[:-1]]), -1)
        log_ratio = self.log_price[second] - self.log_price[first]
        gap = years(self.day[second] - self.day[first])
        return pair_group(p1, p2, log_ratio, gap, chain, base, periods, info, key, weights)


def pair_group(
    p1: np.ndarray, p2: np.ndarray, log_ratio: np.ndarray, gap: np.ndarray, chain: np.ndarray,
    base: int | None, periods: pd.PeriodIndex, info: Info, key: tuple[Hashable, ...],
    weights: str | None,
) -> tuple[Fit | None, np.ndarray, np.ndarray, int | None]:  # fmt: skip
    """One group's repeat-sales fit from its cross-period pairs (periods, log ratio, years
    between; ``chain`` ≥ 0 where the pair's first sale is the previous pair's second, so the
    sales in pairs are counted as ``2·pairs - chained``): the fit, ``n`` (pairs by their second
    sale's period), the support (sales in pairs per period), the base."""
    size = len(periods)
    support = np.bincount(p1, minlength=size) + np.bincount(p2, minlength=size)
    at = info.choose_base(support, base)
    ref = info.reference(support, at)
    shared = chain >= 0
    if ref is None:
        info.left_out["no_base"] += 2 * len(p1) - int(shared.sum())
        info.record(key, None, None, 0)
        return None, np.bincount(p2, minlength=size), support, None
    fit = info.attempt(key, lambda: fit_repeat_sales(p1, p2, log_ratio, gap, ref, size, weights))
    if fit is None:
        info.left_out["not_fitted"] += len(p1)
        info.record(key, _begin(periods, at), None, 0)
        return None, np.bincount(p2, minlength=size), support, at
    used = np.asarray(fit.extra["used"], dtype=bool)
    info.left_out["pairs_not_linked"] += int((~used).sum())
    # a used pair's chained first sale is linked, so the pair before it is used too
    sales = 2 * int(used.sum()) - int((shared & used).sum())
    p1, p2 = p1[used], p2[used]
    info.pairs += int(used.sum())
    info.record(key, _begin(periods, at), fit, sales)
    support = np.bincount(p1, minlength=size) + np.bincount(p2, minlength=size)
    return fit, np.bincount(p2, minlength=size), support, at
