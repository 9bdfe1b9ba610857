"""The age of inventory of :mod:`._trends_engine` from its differences, a block of markets at a
time: the counts per (market, window, entry day) are a markets × windows × days table, 130 MB for
300 markets (a city × tier market) × 37 months × 4 years of entry days, and its running sums and
median ranks as much again each; in blocks of ``REALTYFRAMES_AGE_BLOCK_CELLS`` cells (4,000,000,
int64: 32 MB) the driver holds at most a block's worth, with the same numbers.

>>> import pandas as pd
>>> diff = pd.DataFrame({"_market": [0, 0], "at": [0, 1], "day": [10, 10], "d": [1, -1]})
>>> age, n = age_cells(diff, n_markets=1, n_periods=1, end_day=np.array([12]))
>>> age.tolist(), n.tolist()
([2.0], [1])
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from realtyframes._tuning import AGE_BLOCK_CELLS
from realtyframes.analysis._competition import _histogram_median

__all__ = ["age_cells"]


def age_cells(
    diff: pd.DataFrame, n_markets: int, n_periods: int, end_day: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per flat cell (market-major): ``end_day`` of its window minus the median entry day of
    the listings Active at the window's end, and how many they are. ``diff``: +1 / −1 per
    (``_market``, window ``at`` 0 .. ``n_periods``, entry ``day``) in ``d``."""
    low = int(diff["day"].min())
    span = int(diff["day"].max()) - low + 1
    market = diff["_market"].to_numpy()
    at = diff["at"].to_numpy().astype("int64")
    day = diff["day"].to_numpy().astype("int64") - low
    d = diff["d"].to_numpy().astype("int64")
    age = np.full(n_markets * n_periods, np.nan)
    total = np.zeros(n_markets * n_periods, dtype="int64")
    block = max(1, AGE_BLOCK_CELLS.get() // ((n_periods + 1) * span))
    for first in range(0, n_markets, block):
        last = min(first + block, n_markets)
        mine = (market >= first) & (market < last)
        table = np.zeros((last - first, n_periods + 1, span), dtype="int64")
        np.add.at(table, (market[mine] - first, at[mine], day[mine]), d[mine])
        counts = np.cumsum(table, axis=1)[:, :n_periods].reshape(-1, span)
        del table
        n = counts.sum(axis=1)
        cells = slice(first * n_periods, last * n_periods)
        total[cells] = n
        age[cells] = np.tile(end_day, last - first) - (_histogram_median(counts, n) + low)
    return age, total
