"""The regressions behind ``rf.price_index`` (:mod:`.price_index`), on numpy arrays.

Both methods give, per period of a group, the log price level ``delta`` against the base period
(0 there), its standard error and the number of observations behind it:

- :func:`fit_hedonic`: time-dummy OLS of log(ClosePrice) on the characteristics and the period
  dummies. Most of the design is one-hot (subtype, location, period), so its Gram matrix ``X'X``
  and ``X'y`` are computed from the codes (:func:`hedonic_gram`: weighted counts) without the
  dense matrix (:func:`design_block` builds it, for checks and the benchmark's baseline); the
  normal equations are solved by Cholesky (the numeric columns are centred, which keeps ``X'X``
  well conditioned); the residual sum of squares comes from the Gram matrix (``y'y - b'X'y``),
  so there is no second pass over the rows.
- :func:`fit_repeat_sales`: Bailey-Muth-Nourse OLS without intercept on pairs (−1 at the first
  sale's period, +1 at the second's), optionally with Case-Shiller's interval weights (a second
  stage regresses the squared first-stage residuals on the time between the sales; the third
  stage weights each pair by the inverse of its fitted variance). Its Gram matrix is made
  directly from the pairs' two periods, again with no dense design.

Standard errors are the classical OLS / WLS ones: ``sqrt(s² · diag((X'WX)⁻¹))``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from realtyframes.errors import AnalysisInputError

__all__ = [
    "Z95",
    "Fit",
    "HedonicInputs",
    "design_block",
    "fit_hedonic",
    "fit_repeat_sales",
    "flag_columns",
    "hedonic_gram",
    "hedonic_layout",
]

#: Largest condition number of ``X'X`` accepted before calling the design collinear.
_MAX_CONDITION = 1e12
_DAYS_PER_YEAR = 365.25
#: The 97.5 % quantile of the standard normal: every 95 % band of the index is ``δ ± Z95·se``
#: (docs/metrics.md writes it 1.959964).
Z95 = 1.959963984540054


@dataclass
class Fit:
    """One group's estimates per period (``n_periods`` long; NaN where not estimated); ``cov``:
    the covariance of the deltas (``n_periods`` square, 0 at the base, NaN where not estimated),
    for averages of periods (the rolling index); ``s2``: the residuals' variance."""

    delta: np.ndarray
    se: np.ndarray
    r2: float
    used: int
    extra: dict[str, object] = field(default_factory=dict)
    cov: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    s2: float = float("nan")


@dataclass
class HedonicInputs:
    """One group's complete sales: the log price, the numeric characteristics (rows × 6: beds,
    baths, log living area, age at sale, waterfront yes, waterfront unknown; see
    :func:`flag_columns`), subtype and location codes (−1: none), period codes."""

    log_price: np.ndarray
    numeric: np.ndarray
    subtype: np.ndarray
    location: np.ndarray
    period: np.ndarray


@dataclass
class Layout:
    """Where each variable goes in the design: kept numeric columns (centred by ``means``), the
    column of each subtype / location / period code (−1: the reference, no column)."""

    numeric: np.ndarray
    means: np.ndarray
    subtype_col: np.ndarray
    location_col: np.ndarray
    period_col: np.ndarray
    width: int


def flag_columns(values: np.ndarray) -> np.ndarray:
    """A yes/no characteristic (1.0 / 0.0 / NaN unknown) as two indicator columns (rows × 2):
    yes, and unknown. An unknown value is its own level, so a sale is not left out for it and no
    value is guessed; a column that does not vary (every value known, or the column absent) is
    left out of the fit like any constant characteristic.

    >>> flag_columns(np.array([1.0, 0.0, np.nan])).tolist()
    [[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]]
    """
    unknown = np.isnan(values)
    return np.column_stack([np.where(unknown, 0.0, values), unknown.astype(np.float64)])


def _dummy_columns(codes: np.ndarray, start: int, reference: int | None = None) -> np.ndarray:
    """Column of each code (codes 0..max): the reference (given, else the most frequent) gets −1,
    the others consecutive columns from ``start``."""
    if not len(codes) or codes.max() < 0:
        return np.full(0, -1, dtype=np.int64)
    counts = np.bincount(codes[codes >= 0], minlength=codes.max() + 1)
    ref = int(np.argmax(counts)) if reference is None else reference
    present = counts > 0
    present[ref] = False
    cols = np.full(len(counts), -1, dtype=np.int64)
    cols[present] = start + np.arange(int(present.sum()))
    return cols


def hedonic_layout(inputs: HedonicInputs, base: int) -> Layout:
    """The design's columns: intercept, the numeric characteristics that vary (centred), subtype
    and location dummies (the most frequent omitted), the dummies of the periods with sales
    (``base`` omitted)."""
    width = inputs.numeric.shape[1]
    spread = inputs.numeric.std(axis=0) if len(inputs.numeric) else np.zeros(width)
    # a constant column's std is not always 0 in floating point (log 1500 repeated: 9e-16)
    scale = np.abs(inputs.numeric).max(axis=0) if len(inputs.numeric) else np.ones(width)
    numeric = np.flatnonzero(spread > 1e-9 * np.maximum(scale, 1.0))
    means = inputs.numeric[:, numeric].mean(axis=0)
    start = 1 + len(numeric)
    subtype_col = _dummy_columns(inputs.subtype, start)
    start += int((subtype_col >= 0).sum())
    location_col = _dummy_columns(inputs.location, start)
    start += int((location_col >= 0).sum())
    period_col = _dummy_columns(inputs.period, start, reference=base)
    width = start + int((period_col >= 0).sum())
    return Layout(numeric, means, subtype_col, location_col, period_col, width)


def design_block(inputs: HedonicInputs, layout: Layout, rows: slice) -> np.ndarray:
    """The dense design matrix of ``rows`` (float64, rows × ``layout.width``)."""
    numeric = inputs.numeric[rows][:, layout.numeric] - layout.means
    x = np.zeros((len(numeric), layout.width))
    x[:, 0] = 1.0
    x[:, 1 : 1 + len(layout.numeric)] = numeric
    at = np.arange(len(numeric))
    for codes, cols in (
        (inputs.subtype[rows], layout.subtype_col),
        (inputs.location[rows], layout.location_col),
        (inputs.period[rows], layout.period_col),
    ):
        if not len(cols):
            continue
        col = np.where(codes >= 0, cols[np.maximum(codes, 0)], -1)
        hit = col >= 0
        x[at[hit], col[hit]] = 1.0
    return x


def hedonic_gram(
    inputs: HedonicInputs, layout: Layout, y: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``X'X`` and ``X'y`` of the design :func:`design_block` would build, without building it:
    the dense part (intercept and numeric columns) by a small matrix product, every product with
    a dummy column by a weighted count (:func:`numpy.bincount`) over the rows that have it."""
    k = layout.width
    dense = np.column_stack([np.ones(len(y)), inputs.numeric[:, layout.numeric] - layout.means])
    d = dense.shape[1]
    gram, xty = np.zeros((k, k)), np.zeros(k)
    gram[:d, :d] = dense.T @ dense
    xty[:d] = dense.T @ y
    sets = []
    for codes, cols in (
        (inputs.subtype, layout.subtype_col),
        (inputs.location, layout.location_col),
        (inputs.period, layout.period_col),
    ):
        if len(cols):
            sets.append(np.where(codes >= 0, cols[np.maximum(codes, 0)], -1))
    for i, col in enumerate(sets):
        hit = col >= 0
        at = col[hit]
        for j in range(d):
            gram[:, j] += np.bincount(at, dense[hit, j], minlength=k)
        xty += np.bincount(at, y[hit], minlength=k)
        for other in sets[i:]:
            both = hit & (other >= 0)
            pairs = np.bincount(col[both] * k + other[both], minlength=k * k).reshape(k, k)
            gram += pairs if other is col else pairs + pairs.T
    gram[:d, d:] = gram[d:, :d].T
    return gram, xty


def _solve(gram: np.ndarray, xty: np.ndarray, what: str) -> tuple[np.ndarray, np.ndarray]:
    """``(X'X)⁻¹ X'y`` and ``(X'X)⁻¹`` by Cholesky; a singular or near-singular Gram matrix
    raises (the estimates would not be identified)."""
    try:
        np.linalg.cholesky(gram)
        condition = np.linalg.cond(gram)
    except np.linalg.LinAlgError:
        condition = np.inf
    if not np.isfinite(condition) or condition > _MAX_CONDITION:
        raise AnalysisInputError(f"price_index(): {what}")
    inverse = np.linalg.inv(gram)
    return inverse @ xty, inverse


#: The numeric columns a group fits without when they alone make its design unidentified: the
#: waterfront indicators (:func:`flag_columns`), an addition to the model of beds, baths, area and
#: age, which must not turn a group that could be fitted before into an error.
OPTIONAL_NUMERIC = slice(4, None)


def fit_hedonic(inputs: HedonicInputs, base: int, n_periods: int) -> Fit:
    """Time-dummy hedonic OLS; ``delta`` of the periods without sales is NaN. A group whose
    design is unidentified only with the waterfront terms (every waterfront sale in one location
    or period, say; or one coefficient too many) is fitted without them
    (``extra["without_waterfront"]``)."""
    try:
        return _fit_hedonic(inputs, base, n_periods)
    except AnalysisInputError:
        if inputs.numeric.shape[1] <= OPTIONAL_NUMERIC.start:
            raise
        plain = np.ascontiguousarray(inputs.numeric[:, : OPTIONAL_NUMERIC.start])
        fit = _fit_hedonic(
            HedonicInputs(inputs.log_price, plain, inputs.subtype, inputs.location, inputs.period),
            base,
            n_periods,
        )
        fit.extra["without_waterfront"] = True
        return fit


def _fit_hedonic(inputs: HedonicInputs, base: int, n_periods: int) -> Fit:
    layout = hedonic_layout(inputs, base)
    k, n = layout.width, len(inputs.log_price)
    y = inputs.log_price - inputs.log_price.mean()  # centred: y'y is the total sum of squares
    gram, xty = hedonic_gram(inputs, layout, y)
    if n <= k:
        raise AnalysisInputError(
            f"price_index(): {n} complete sales for {k} hedonic coefficients; a group needs more "
            "sales than coefficients (use a coarser `by`, `location=None` or a longer `freq`)"
        )
    beta, inverse = _solve(
        gram,
        xty,
        "the hedonic characteristics are collinear with the periods (for example a location or "
        "subtype sold in one period only); try `location=None`, a coarser `by` or a longer `freq`",
    )
    tss = float(y @ y)
    rss = max(tss - float(beta @ xty), 0.0)
    s2 = rss / (n - k)
    delta = np.full(n_periods, np.nan)
    cols = layout.period_col
    has = np.flatnonzero(cols >= 0)
    delta[has] = beta[cols[has]]
    delta[base] = 0.0
    cov = _period_cov(n_periods, has, s2 * inverse[np.ix_(cols[has], cols[has])], base)
    r2 = 1.0 - rss / tss if tss > 0 else float("nan")
    return Fit(delta, _se(cov), r2, n, {"coefficients": k}, cov, s2)


def _period_cov(n_periods: int, has: np.ndarray, block: np.ndarray, base: int) -> np.ndarray:
    """The deltas' covariance over every period: ``block`` at the estimated periods ``has``, 0
    at the base, NaN elsewhere."""
    cov = np.full((n_periods, n_periods), np.nan)
    known = np.zeros(n_periods, dtype=bool)
    known[has] = known[base] = True
    cov[np.ix_(known, known)] = 0.0
    cov[np.ix_(has, has)] = block
    return cov


def _se(cov: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return np.sqrt(np.diag(cov).copy())


def _connected(first: np.ndarray, second: np.ndarray, n_periods: int, base: int) -> np.ndarray:
    """Periods linked to ``base`` through chains of pairs (bool per period)."""
    label = np.arange(n_periods)
    while True:
        low = np.minimum(label[first], label[second])
        before = label.copy()
        np.minimum.at(label, first, low)
        np.minimum.at(label, second, low)
        label = label[label]
        if np.array_equal(label, before):
            break
    linked = label == label[base]
    return np.asarray(linked, dtype=bool)


def _pair_gram(
    first: np.ndarray, second: np.ndarray, y: np.ndarray, w: np.ndarray, n_periods: int
) -> tuple[np.ndarray, np.ndarray]:
    """``X'WX`` and ``X'Wy`` of the BMN design (−1 at ``first``, +1 at ``second``), all periods."""
    gram = np.zeros((n_periods, n_periods))
    np.add.at(gram, (first, first), w)
    np.add.at(gram, (second, second), w)
    np.add.at(gram, (first, second), -w)
    np.add.at(gram, (second, first), -w)
    xty = np.bincount(second, w * y, n_periods) - np.bincount(first, w * y, n_periods)
    return gram, xty


def _bmn(
    first: np.ndarray, second: np.ndarray, y: np.ndarray, w: np.ndarray, keep: np.ndarray
) -> tuple[np.ndarray, np.ndarray, float]:
    """Weighted BMN over the periods ``keep`` (the base excluded): delta per period (0 where not
    kept), the covariance of the kept ones (over ``keep``'s positions), and the weighted
    residuals' variance s²."""
    n_periods = len(keep)
    gram, xty = _pair_gram(first, second, y, w, n_periods)
    idx = np.flatnonzero(keep)
    beta, inverse = _solve(gram[np.ix_(idx, idx)], xty[idx], "the repeat-sales design is singular")
    delta = np.zeros(n_periods)
    delta[idx] = beta
    resid = y - (delta[second] - delta[first])
    dof = len(y) - len(idx)  # none left: no standard error (NaN band), never a false zero
    s2 = float(np.sum(w * resid**2)) / dof if dof > 0 else float("nan")
    return delta, s2 * inverse, s2


def fit_repeat_sales(
    first: np.ndarray,
    second: np.ndarray,
    log_ratio: np.ndarray,
    years_between: np.ndarray,
    base: int,
    n_periods: int,
    weights: str | None,
) -> Fit:
    """BMN (``weights=None``) or Case-Shiller interval-weighted repeat sales over the pairs
    linked to ``base``; pairs in a part of the period graph not linked to it are left out
    (``extra["used"]``: which pairs were used)."""
    linked = _connected(first, second, n_periods, base)
    on = linked[first] & linked[second]
    first, second, y, gap = first[on], second[on], log_ratio[on], years_between[on]
    touched = np.zeros(n_periods, dtype=bool)
    touched[first] = touched[second] = True
    keep = touched & linked
    keep[base] = False
    extra: dict[str, object] = {"pairs_not_linked": int((~on).sum())}
    w = np.ones(len(y))
    delta, block, s2 = _bmn(first, second, y, w, keep)
    if weights == "case_shiller":
        resid2 = (y - (delta[second] - delta[first])) ** 2
        z = np.column_stack([np.ones(len(gap)), gap])
        (a, b), *_ = np.linalg.lstsq(z, resid2, rcond=None)
        fitted = a + b * gap
        floor = 0.01 * float(resid2.mean()) if len(resid2) else 0.0
        clipped = fitted < floor
        w = 1.0 / np.where(clipped, floor, fitted) if floor > 0 else w
        extra["case_shiller"] = {
            "intercept": float(a),
            "slope_per_year": float(b),
            "clipped": int(clipped.sum()) if floor > 0 else 0,
        }
        delta, block, s2 = _bmn(first, second, y, w, keep)
    resid = y - (delta[second] - delta[first])
    total = float(np.sum(w * y**2))
    r2 = 1.0 - float(np.sum(w * resid**2)) / total if total > 0 else float("nan")
    out_delta = np.full(n_periods, np.nan)
    out_delta[keep], out_delta[base] = delta[keep], 0.0
    cov = _period_cov(n_periods, np.flatnonzero(keep), block, base)
    extra["used"] = on
    return Fit(out_delta, _se(cov), r2, len(y), extra, cov, s2)


def years(days: np.ndarray) -> np.ndarray:
    """Days as years of 365.25 days."""
    return np.asarray(days, dtype="float64") / _DAYS_PER_YEAR
