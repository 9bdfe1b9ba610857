"""The hedonic index's regression from grouped sums (:mod:`.price_index`): a *cell* is one group's
sales of one period, subtype and location; its count, the sums of the numeric characteristics
and of the log price, their cross products, and each characteristic's min and max are all the
time-dummy OLS needs.

``X'X`` and ``X'y`` follow from the cells: the dummies' blocks are counts, a dummy against a
numeric column is a sum over the cells that have the dummy, the numeric block and the total sum
of squares are the sums of cross products less the means' part (the numeric columns are centred,
as :func:`._index_fit.fit_hedonic` centres them). The residual sum of squares is ``y'y - b'X'y``.
The cells are built by the engine (:mod:`._index_engine`) or from pandas rows
(:func:`cells_of_rows`); either way only they reach numpy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from realtyframes.analysis._index_fit import (
    OPTIONAL_NUMERIC,
    Fit,
    _period_cov,
    _se,
    _solve,
)
from realtyframes.errors import AnalysisInputError

__all__ = ["SHIFT", "Y_SHIFT", "Cells", "cells_of_rows", "fit_cells"]

#: Constants taken off the numeric characteristics (beds, baths, log area, age, waterfront yes /
#: unknown) and the log price before their sums are made: a centre near the data keeps the sums
#: of squares from cancelling when the means are taken out.
SHIFT = np.array([3.0, 2.0, 7.5, 30.0, 0.0, 0.0])
Y_SHIFT = 12.5


@dataclass
class Cells:
    """Cells (one per row of each array): period, subtype and location codes (0..), the count
    ``n``, sums ``s`` (cells × k) of the shifted characteristics, ``ss`` (cells × k × k) of their
    products, ``sy`` of their products with the shifted log price, ``y`` and ``yy`` of it, and
    each characteristic's ``lo`` / ``hi`` (min / max, unshifted)."""

    period: np.ndarray
    subtype: np.ndarray
    location: np.ndarray
    n: np.ndarray
    s: np.ndarray
    ss: np.ndarray
    sy: np.ndarray
    y: np.ndarray
    yy: np.ndarray
    lo: np.ndarray
    hi: np.ndarray

    def take(self, at: np.ndarray) -> Cells:
        """The cells at ``at`` (positions or a mask)."""
        return Cells(*(getattr(self, f)[at] for f in self.__dataclass_fields__))

    def numeric(self, cols: np.ndarray | slice) -> Cells:
        """The same cells with only the characteristics ``cols``."""
        idx = np.arange(self.s.shape[1])[cols]
        return Cells(
            self.period, self.subtype, self.location, self.n, self.s[:, idx],
            self.ss[:, idx][:, :, idx], self.sy[:, idx], self.y, self.yy, self.lo[:, idx],
            self.hi[:, idx],
        )  # fmt: skip


def cells_of_rows(
    log_price: np.ndarray,
    numeric: np.ndarray,
    subtype: np.ndarray,
    location: np.ndarray,
    period: np.ndarray,
) -> Cells:
    """The cells of complete rows (pandas input): one per (period, subtype, location)."""
    code = np.column_stack([period, subtype, location])
    if not len(code):
        k = numeric.shape[1]
        z = np.zeros(0)
        return Cells(z.astype(np.int64), z.astype(np.int64), z.astype(np.int64), z,
                     np.zeros((0, k)), np.zeros((0, k, k)), np.zeros((0, k)), z, z,
                     np.zeros((0, k)), np.zeros((0, k)))  # fmt: skip
    size = code.max(axis=0) + 1
    flat = (code[:, 0] * size[1] + code[:, 1]) * size[2] + code[:, 2]
    ids, cell = np.unique(flat, return_inverse=True)
    keys = np.column_stack([ids // (size[1] * size[2]), ids // size[2] % size[1], ids % size[2]])
    m, k = len(keys), numeric.shape[1]
    x = numeric - SHIFT[:k]
    y = log_price - Y_SHIFT

    def total(values: np.ndarray) -> np.ndarray:
        return np.bincount(cell, values, minlength=m)

    ss = np.empty((m, k, k))
    for i in range(k):
        for j in range(i, k):
            ss[:, i, j] = ss[:, j, i] = total(x[:, i] * x[:, j])
    order = np.argsort(cell, kind="stable")
    starts = np.flatnonzero(np.diff(cell[order], prepend=-1))
    lo = np.minimum.reduceat(numeric[order], starts, axis=0)
    hi = np.maximum.reduceat(numeric[order], starts, axis=0)
    return Cells(
        keys[:, 0], keys[:, 1], keys[:, 2], total(np.ones(len(y))),
        np.column_stack([total(x[:, i]) for i in range(k)]).reshape(m, k), ss,
        np.column_stack([total(x[:, i] * y) for i in range(k)]).reshape(m, k),
        total(y), total(y * y), lo, hi,
    )  # fmt: skip


def _dummy_columns(
    codes: np.ndarray, n: np.ndarray, start: int, reference: int | None
) -> np.ndarray:
    """Column of each code: the reference (given, else the most frequent, the lowest code of
    ties) gets −1, the other codes present consecutive columns from ``start``."""
    if not len(codes):
        return np.full(0, -1, dtype=np.int64)
    counts = np.bincount(codes, n, minlength=int(codes.max()) + 1)
    ref = int(np.argmax(counts)) if reference is None else reference
    present = counts > 0
    present[ref] = False
    cols = np.full(len(counts), -1, dtype=np.int64)
    cols[present] = start + np.arange(int(present.sum()))
    return cols


def _layout(cells: Cells, base: int) -> tuple[np.ndarray, list[np.ndarray], int]:
    """The numeric columns that vary (max − min above 1e-9 of their size), each cell's column
    for its subtype, location and period dummy (−1: the reference), and the design's width."""
    lo, hi = cells.lo.min(axis=0), cells.hi.max(axis=0)
    scale = np.maximum(np.maximum(np.abs(lo), np.abs(hi)), 1.0)
    numeric = np.flatnonzero(hi - lo > 1e-9 * scale)
    start = 1 + len(numeric)
    sets = []
    for codes, ref in ((cells.subtype, None), (cells.location, None), (cells.period, base)):
        cols = _dummy_columns(codes, cells.n, start, ref)
        start += int((cols >= 0).sum())
        sets.append(cols[codes])
    return numeric, sets, start


def cell_gram(
    cells: Cells, numeric: np.ndarray, sets: list[np.ndarray], k: int
) -> tuple[np.ndarray, np.ndarray, float]:
    """``X'X`` and ``X'y`` of the centred design (intercept, the centred ``numeric`` columns,
    the dummies of ``sets``) and the total sum of squares, from the cells' sums."""
    n = cells.n
    total = n.sum()
    s, sy, ss = cells.s[:, numeric], cells.sy[:, numeric], cells.ss[:, numeric][:, :, numeric]
    mean, ybar = s.sum(axis=0) / total, cells.y.sum() / total
    d = 1 + len(numeric)
    dense = np.column_stack([n, s - n[:, None] * mean])  # per cell: Σ1, Σ(x − x̄)
    dy = cells.y - n * ybar  # per cell: Σ(y − ȳ)
    gram, xty = np.zeros((k, k)), np.zeros(k)
    gram[0, :d] = gram[:d, 0] = dense.sum(axis=0)
    gram[1:d, 1:d] = ss.sum(axis=0) - total * np.outer(mean, mean)
    xty[0] = dy.sum()
    xty[1:d] = sy.sum(axis=0) - mean * cells.y.sum() - ybar * s.sum(axis=0) + total * mean * ybar
    for i, col in enumerate(sets):
        hit = col >= 0
        at = col[hit]
        for j in range(d):
            gram[:, j] += np.bincount(at, dense[hit, j], minlength=k)
        xty += np.bincount(at, dy[hit], minlength=k)
        for other in sets[i:]:
            both = hit & (other >= 0)
            pairs = np.bincount(col[both] * k + other[both], n[both], minlength=k * k)
            pairs = pairs.reshape(k, k)
            gram += pairs if other is col else pairs + pairs.T
    gram[:d, d:] = gram[d:, :d].T
    tss = float(cells.yy.sum() - total * ybar * ybar)
    return gram, xty, tss


def fit_cells(cells: Cells, base: int, n_periods: int) -> Fit:
    """Time-dummy hedonic OLS on the cells, as :func:`._index_fit.fit_hedonic` on the rows: a
    group unidentified only with the waterfront terms is fitted without them
    (``extra["without_waterfront"]``)."""
    try:
        return _fit_cells(cells, base, n_periods)
    except AnalysisInputError:
        if cells.s.shape[1] <= OPTIONAL_NUMERIC.start:
            raise
        fit = _fit_cells(cells.numeric(slice(0, OPTIONAL_NUMERIC.start)), base, n_periods)
        fit.extra["without_waterfront"] = True
        return fit


def _fit_cells(cells: Cells, base: int, n_periods: int) -> Fit:
    numeric, sets, k = _layout(cells, base)
    n = round(float(cells.n.sum()))
    if n <= k:
        raise AnalysisInputError(
            f"price_index(): {n} complete sales for {k} hedonic coefficients; a group needs more "
            "sales than coefficients (use a coarser `by`, `location=None` or a longer `freq`)"
        )
    gram, xty, tss = cell_gram(cells, numeric, sets, k)
    beta, inverse = _solve(
        gram,
        xty,
        "the hedonic characteristics are collinear with the periods (for example a location or "
        "subtype sold in one period only); try `location=None`, a coarser `by` or a longer `freq`",
    )
    rss = max(tss - float(beta @ xty), 0.0)
    s2 = rss / (n - k)
    delta = np.full(n_periods, np.nan)
    period_col = np.full(n_periods, -1, dtype=np.int64)
    period_col[cells.period] = sets[2]
    has = np.flatnonzero(period_col >= 0)
    delta[has] = beta[period_col[has]]
    delta[base] = 0.0
    cov = _period_cov(n_periods, has, s2 * inverse[np.ix_(period_col[has], period_col[has])], base)
    r2 = 1.0 - rss / tss if tss > 0 else float("nan")
    return Fit(delta, _se(cov), r2, n, {"coefficients": k}, cov, s2)
