"""The adjustments behind ``rf.comps`` (:mod:`.comps`): a broker's grid from a hedonic fit.

:func:`fit_adjustments` fits the price index's hedonic model (docs/metrics.md, "Price index") on
the market's closed sales of the subject's PropertyType — log(ClosePrice) on log living area, year
built, beds, baths, waterfront, subtype and location (ZIP code, else city) dummies — with one linear time term
(log price per year) in place of the index's period dummies, so that the time adjustment is a
smooth market drift and not one month's noise. A characteristic whose fitted worth is negative is
left out and the model fitted again (a broker never adjusts a comp up for having more rooms). :func:`adjust` turns its coefficients into dollar adjustments of each comp
to the subject, one column per characteristic, as a broker's grid shows them:

    adjustment_k = ClosePrice × (exp(b_k × (subject_k − comp_k)) − 1)
    adjusted_price = ClosePrice + Σ_k adjustment_k

:func:`weighted_quantile` gives the estimate (the weighted median of the adjusted prices) and its
range (their weighted 25th and 75th percentiles), which therefore always contains it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from realtyframes.analysis._common import as_key, to_float

__all__ = ["ADJUSTMENTS", "Adjustments", "adjust", "fit_adjustments", "weighted_quantile"]

#: Adjustment columns, the characteristic each adjusts for, and how the page names it.
ADJUSTMENTS: dict[str, tuple[str, str]] = {
    "adj_size": ("LivingArea", "size"),
    "adj_age": ("YearBuilt", "age"),
    "adj_beds": ("BedroomsTotal", "bedrooms"),
    "adj_baths": ("BathroomsTotalInteger", "bathrooms"),
    "adj_water": ("WaterfrontYN", "waterfront"),
    "adj_time": ("CloseDate", "market change since the sale"),
}
#: Fewest closed sales per coefficient for a fit (fewer: the comps are not adjusted).
SALES_PER_COEFFICIENT = 5
_MIN_SALES = 30
#: A characteristic known for fewer of the sales is not fitted (it would cost the others' rows).
_MIN_KNOWN = 0.8
_DAYS_PER_YEAR = 365.25
#: The location dummies: the ZIP code where the market has it, else the city.
_LOCATIONS = ("PostalCode", "City")


@dataclass(frozen=True)
class Adjustments:
    """The fitted coefficients (log price per unit; 0 where a characteristic was not in the data)
    and what they were fitted on; ``reason`` says why there is no fit (then all are 0)."""

    coefficients: dict[str, float] = field(default_factory=dict)
    n: int = 0
    r2: float = float("nan")
    reason: str | None = None
    location: str | None = None

    def as_dict(self) -> dict[str, object]:
        return {"coefficients": dict(self.coefficients), "n": self.n, "r2": self.r2,
                "reason": self.reason, "location": self.location}  # fmt: skip


def _numeric(sales: pd.DataFrame, column: str, func: str) -> np.ndarray:
    if column not in sales.columns:
        return np.full(len(sales), np.nan)
    return to_float(sales[column], column, func).to_numpy(dtype="float64")


def _flag(frame: pd.DataFrame, column: str) -> np.ndarray:
    """A yes/no column as 1.0 / 0.0 (NaN where unknown or not a yes/no)."""
    if column not in frame.columns:
        return np.full(len(frame), np.nan)
    try:
        values = frame[column].astype("boolean")
    except (TypeError, ValueError):
        return np.full(len(frame), np.nan)
    return np.asarray(values.astype("Float64").to_numpy(dtype="float64", na_value=np.nan))


def _characteristics(frame: pd.DataFrame, func: str) -> dict[str, np.ndarray]:
    """The regressors of each row, by adjustment column (log area; year built; beds; baths;
    waterfront 1 / 0)."""
    area = _numeric(frame, "LivingArea", func)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_area = np.where(area > 0, np.log(area), np.nan)
    return {
        "adj_size": log_area,
        "adj_age": _numeric(frame, "YearBuilt", func),
        "adj_beds": _numeric(frame, "BedroomsTotal", func),
        "adj_baths": _numeric(frame, "BathroomsTotalInteger", func),
        "adj_water": _flag(frame, "WaterfrontYN"),
    }


def _dummies(values: pd.Series) -> np.ndarray:
    """One-hot columns of ``values`` without its most frequent value (the reference)."""
    codes = pd.factorize(as_key(values))[0]
    if not len(codes) or codes.max() < 1:
        return np.zeros((len(codes), 0))
    counts = np.bincount(codes[codes >= 0], minlength=codes.max() + 1)
    keep = [c for c in range(len(counts)) if c != int(np.argmax(counts))]
    return (codes[:, None] == np.asarray(keep)[None, :]).astype("float64")


def fit_adjustments(
    sales: pd.DataFrame, closed_at: pd.Series, newest: pd.Timestamp, func: str
) -> Adjustments:
    """Fit the coefficients on ``sales`` (closed sales of one PropertyType, closed at
    ``closed_at``); a characteristic missing from the data (or known for under 80 % of the
    sales), constant, or whose fitted worth is
    negative (more room or a newer home worth less: noise or a missing factor, never an
    adjustment a broker could defend) gets 0 and the model is fitted again without it."""
    x = _characteristics(sales, func)
    price = _numeric(sales, "ClosePrice", func)
    years = ((closed_at - newest).dt.total_seconds() / 86400 / _DAYS_PER_YEAR).to_numpy()
    used = [k for k, v in x.items() if np.isfinite(v).mean() >= _MIN_KNOWN] if len(sales) else []
    ok = (price > 0) & np.isfinite(years)
    for k in used:
        ok &= np.isfinite(x[k])
    used = [k for k in used if np.nanstd(x[k][ok]) > 0] if ok.any() else []
    fixed = [np.ones(int(ok.sum())), years[ok]]
    location = next((c for c in _LOCATIONS if c in sales.columns), None)
    for column in ("PropertySubType", location):
        if column is not None and column in sales.columns:
            fixed.append(_dummies(sales.loc[ok, column]))
    zero = dict.fromkeys(ADJUSTMENTS, 0.0)
    while True:
        design = np.column_stack([*fixed[:2], *[x[k][ok] for k in used], *fixed[2:]])
        n, k = design.shape
        if n < max(_MIN_SALES, SALES_PER_COEFFICIENT * k):
            return Adjustments(zero, n, reason=f"{n} closed sales with every characteristic "
                               f"known, too few to estimate {k} coefficients")  # fmt: skip
        y = np.log(price[ok])
        beta, _, rank, _ = np.linalg.lstsq(design, y, rcond=None)
        if int(rank) < k:
            return Adjustments(zero, n, reason="the characteristics of the sales are collinear")
        worth = {name: float(beta[2 + i]) for i, name in enumerate(used)}
        negative = [name for name, b in worth.items() if b < 0]
        if not negative:
            break
        used.remove(min(negative, key=lambda name: worth[name]))
    resid = y - design @ beta
    tss = float(((y - y.mean()) ** 2).sum())
    r2 = 1.0 - float(resid @ resid) / tss if tss > 0 else float("nan")
    return Adjustments(zero | worth | {"adj_time": float(beta[1])}, n, r2, location=location)


def adjust(
    comps: pd.DataFrame, subject: pd.Series, months_ago: np.ndarray, fit: Adjustments, func: str
) -> pd.DataFrame:
    """Each comp's dollar adjustment per characteristic (0 where the subject's or the comp's
    value is unknown, or there is no fit) and its adjusted price."""
    price = _numeric(comps, "ClosePrice", func)
    mine = _characteristics(subject.to_frame().T, func)
    theirs = _characteristics(comps, func)
    out = pd.DataFrame(index=comps.index)
    total = price.copy()
    for column in ADJUSTMENTS:
        if column == "adj_time":
            gap = np.asarray(months_ago, dtype="float64") / 12.0
        else:
            gap = mine[column][0] - theirs[column]
        log_change = np.nan_to_num(fit.coefficients.get(column, 0.0) * gap)
        out[column] = price * np.expm1(log_change) + 0.0  # never a negative zero
        total = total + out[column].to_numpy()
    out["adjusted_price"] = total
    return out


def weighted_quantile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    """The ``q`` quantile of ``values`` weighted by ``weights``: each value sits at the middle of
    its cumulative weight, linear in between, clamped at the ends (increasing in ``q``, and the
    ordinary median for equal weights).

    >>> weighted_quantile(np.array([1.0, 2.0, 3.0]), np.ones(3), 0.5)
    2.0
    """
    ok = np.isfinite(values) & np.isfinite(weights) & (weights > 0)
    if not ok.any():
        return float("nan")
    order = np.argsort(values[ok], kind="stable")
    x, w = values[ok][order], weights[ok][order]
    at = (np.cumsum(w) - w / 2) / w.sum()
    return float(np.interp(q, at, x))
