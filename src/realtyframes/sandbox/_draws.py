"""Faster, exact equivalents of the numpy draws the generators make most: same stream, same values.

:func:`choice` is ``rng.choice(len(p), size, p=p)`` (one uniform per value, as numpy draws them)
with the inverse-CDF search done through a guide table instead of ``searchsorted``;
:func:`by_group` makes one draw per group in group order (as a loop over masks would) and puts
the values on their rows at once. Both keep the order of the generator's draws, so a market is the
same whichever way it is computed.

>>> p = np.array([0.5, 0.3, 0.2])
>>> a = choice(np.random.default_rng(3), p, 1000)
>>> b = np.random.default_rng(3).choice(3, 1000, p=p)
>>> bool((a == b).all())
True
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

__all__ = ["by_group", "choice"]

_GUIDE_BITS = 16  # 65,536 buckets: few values of a CDF share one, so one or two steps refine
_COUNTED = 16  # a CDF this short is searched by counting the values <= u


def choice(rng: np.random.Generator, p: np.ndarray | list[float], size: int) -> np.ndarray:
    """``rng.choice(len(p), size, p=p)``, the same values (int64) from the same draws, faster."""
    cdf = np.asarray(p, dtype=np.float64).cumsum()
    cdf /= cdf[-1]
    return _search(cdf, rng.random(size))


def _search(cdf: np.ndarray, u: np.ndarray) -> np.ndarray:
    """``cdf.searchsorted(u, side="right")`` for ``0 <= u < 1``: how many CDF values are <= u.

    A bucket ``j`` holds the u with ``j / G <= u < (j + 1) / G`` exactly (G a power of two, so
    ``u * G`` is exact); the answer lies between the counts at the bucket's two edges and is
    refined one comparison at a time where they differ. A short CDF is simply counted.
    """
    if len(cdf) <= _COUNTED:
        count = np.zeros(len(u), dtype=np.int8)
        for c in cdf.tolist():
            count += u >= c
        return count.astype(np.int64)
    g = 1 << _GUIDE_BITS
    edges = np.arange(g + 1, dtype=np.float64) / g
    lo = cdf.searchsorted(edges[:-1], side="right")
    hi = cdf.searchsorted(edges[1:], side="left")
    bucket = (u * g).astype(np.int64)
    idx = lo[bucket]
    todo = np.flatnonzero(hi[bucket] > idx)
    last = len(cdf) - 1
    while len(todo):
        at = idx[todo]
        step = cdf[np.minimum(at, last)] <= u[todo]
        step &= at <= last
        idx[todo[step]] += 1
        todo = todo[step]
    return idx


def by_group(
    group: np.ndarray, groups: int, draw: Callable[[int, int], np.ndarray], dtype: npt.DTypeLike
) -> np.ndarray:
    """Values drawn group by group, ``draw(g, count)`` for g = 0, 1, ... in order, on their rows.

    The same as ``out[group == g] = draw(g, (group == g).sum())`` in a loop over the groups, with
    one stable sort instead of a mask per group.

    >>> g = np.array([1, 0, 1, 1, 0])
    >>> by_group(g, 2, lambda k, n: np.arange(n) + 10 * k, np.int64).tolist()
    [10, 0, 11, 12, 1]
    """
    counts = np.bincount(group, minlength=groups)
    parts = [np.asarray(draw(k, int(c))) for k, c in enumerate(counts.tolist())]
    out: np.ndarray = np.empty(len(group), dtype=dtype)
    out[np.argsort(group, kind="stable")] = np.concatenate(parts) if parts else []
    return out
