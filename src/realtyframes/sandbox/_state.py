"""The listings' state at the sandbox clock, recomputed whenever the clock moves.

The generated event columns (price and status changes) say what each listing looked like at any
time; :func:`compute_state` evaluates them at one time with numpy (ListPrice, StandardStatus,
DaysOnMarket, ...). A :class:`Snapshot` pairs the columns with that state and caches sort orders;
the store replaces it as a whole so readers never see a mix.

>>> from realtyframes.sandbox._pricing import INF_TS
>>> cols = {"entry": np.array([0]), "pc_ts": np.full((1, 3), INF_TS), "prices": np.ones((1, 4)),
...         "st_ts": np.full((1, 4), INF_TS), "st_code": np.zeros((1, 5), dtype=np.int8),
...         "close_ts": np.array([INF_TS]), "ptype": np.array([0], dtype=np.int8)}
>>> compute_state(cols, 86_400 * 3).dom.tolist()
[3]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from realtyframes.sandbox._pricing import CLOSED, DAY

__all__ = ["Snapshot", "State", "compute_state", "order", "subset"]


@dataclass
class State:
    """Listing fields at one clock time (all arrays over every generated row)."""

    now: int
    visible: np.ndarray
    list_price: np.ndarray
    prev_price: np.ndarray
    status: np.ndarray
    major_ts: np.ndarray
    dom: np.ndarray
    group: np.ndarray  # ptype * 4 + status, -1 when not yet entered
    orders: dict[str, np.ndarray] = field(default_factory=dict)
    subsets: dict[tuple[int, str], np.ndarray] = field(default_factory=dict)


def compute_state(c: Mapping[str, np.ndarray], now: int) -> State:
    rows = np.arange(len(c["entry"]))
    entry = c["entry"]
    k = (c["pc_ts"] <= now).sum(axis=1)
    list_price = c["prices"][rows, k]
    prev = np.where(k > 0, c["prices"][rows, np.maximum(k - 1, 0)], np.nan)
    j = (c["st_ts"] <= now).sum(axis=1)
    status = c["st_code"][rows, j]
    last_pc = np.where(k > 0, c["pc_ts"][rows, np.maximum(k - 1, 0)], entry)
    last_st = np.where(j > 0, c["st_ts"][rows, np.maximum(j - 1, 0)], entry)
    major = np.maximum(np.maximum(entry, last_pc), last_st)
    closed = status == CLOSED
    dom = (np.where(closed, c["close_ts"], now) - entry) // DAY
    visible = entry <= now
    group = np.where(visible, c["ptype"].astype(np.int16) * 4 + status, -1).astype(np.int16)
    return State(now, visible, list_price, prev, status, major, dom, group)


@dataclass
class Snapshot:
    """Columns plus the state at the clock; replaced as a whole so readers never see a mix."""

    cols: dict[str, np.ndarray]
    state: State
    static_orders: dict[str, np.ndarray]


def order(snap: Snapshot, sort: str) -> np.ndarray:
    """Row indices of every listing in ``sort`` order, ties by ListingId (= row order)."""
    c, st = snap.cols, snap.state
    if sort in ("-listprice", "listprice"):
        cache = st.orders
        key = -st.list_price if sort == "-listprice" else st.list_price
    else:
        cache = snap.static_orders
        key = {
            "-listdate": lambda: -c["entry"],
            "beds": lambda: c["beds"],
            "baths": lambda: c["baths"],
        }[sort]()
    rows = cache.get(sort)
    if rows is None:
        rows = np.argsort(key, kind="stable")
        cache[sort] = rows
    return rows


def subset(snap: Snapshot, group: int, sort: str) -> np.ndarray:
    st = snap.state
    key = (group, sort)
    idx = st.subsets.get(key)
    if idx is None:
        rows = order(snap, sort)
        idx = rows[st.group[rows] == group]
        st.subsets[key] = idx
    return idx
