"""Stable orders of big arrays by numpy's radix sort (16 bits per pass), for the analysis kernels.

A stable ``argsort`` of int64 or float64 keys is a merge sort (O(n log n), about 30 ms for
400,000 floats here); numpy sorts 16-bit keys by radix instead. :func:`radix_order` sorts
non-negative integers 16 bits at a time; :func:`descending_order` maps floats to such integers
in an order-preserving way first.

>>> import numpy as np
>>> radix_order(np.array([3, 1, 3, 0])).tolist()  # stable: the two 3s keep their order
[3, 1, 0, 2]
>>> descending_order(np.array([0.1, np.nan, 0.3, 0.1])).tolist()  # NaN last, ties stable
[2, 0, 3, 1]
"""

from __future__ import annotations

import numpy as np

__all__ = ["descending_order", "radix_order"]

_SIGN = np.uint64(1 << 63)


def radix_order(keys: np.ndarray) -> np.ndarray:
    """The stable order of non-negative integer ``keys`` (as ``np.argsort(kind="stable")``),
    one radix pass per 16 bits of the largest key."""
    order = np.arange(len(keys))
    top = int(keys.max(initial=0))
    shift = 0
    while shift == 0 or top >> shift:
        digit = ((keys[order] >> shift) & 0xFFFF).astype("uint16")
        order = order[np.argsort(digit, kind="stable")]
        shift += 16
    return order


def descending_order(values: np.ndarray) -> np.ndarray:
    """The stable order of float ``values``, biggest first and NaN last (as
    ``np.argsort(-values, kind="stable")``): the floats' bits as order-preserving unsigned
    integers (0.0 and -0.0 alike), reversed, less their smallest, by :func:`radix_order`."""
    bits = (np.asarray(values, dtype="float64") + 0.0).view("uint64")  # -0.0 + 0.0 is 0.0
    negative = (bits & _SIGN) != 0
    ascending = np.where(negative, ~bits, bits | _SIGN)
    key = ~ascending
    nan = np.isnan(values)
    if nan.any():
        key[nan] = key[~nan].max(initial=0) + np.uint64(1)
    if len(key):
        key -= key.min()
    return radix_order(key)
