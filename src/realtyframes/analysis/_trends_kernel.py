"""Market trends on any engine (:func:`realtyframes.analysis.market_trends`): what the engine
reduces, and the arrays the local computation (:mod:`._stocks`, :mod:`.trends`) works on.

On the engine (narwhals expressions, the same for pandas, Polars, DuckDB and PySpark):

- the market: the rows of the segment with a market key, the columns the metrics read, the
  status as three flags (:func:`listing_rows`);
- the history: the ``status_change`` and ``price_change`` records, their listing, time, new
  status (as flags) and prices (:func:`history_rows`).

Locally (a pandas frame; an engine's frame is reduced on the engine: :mod:`._trends_engine`): :class:`Listings` (one row per listing as numpy arrays: market code, status code,
prices, naive UTC times in microseconds), :class:`Changes` (the history's records as arrays)
and :class:`History` (the records of those listings, each with its listing's row, matched by
ListingId: :func:`~._order.match_last`).

>>> import numpy as np
>>> int(status_codes(np.array([True]), np.array([False]), np.array([False]))[0])  # Active
0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import narwhals as nw
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from realtyframes.analysis._common import as_key, to_utc
from realtyframes.analysis._kernel import collect, segment_filter
from realtyframes.analysis._order import Ids, match_last

__all__ = [
    "ACTIVE",
    "CLOSED",
    "OTHER",
    "PENDING",
    "UNDER_CONTRACT",
    "Changes",
    "History",
    "Listings",
    "history_rows",
    "listing_rows",
    "status_codes",
    "status_of",
    "text_codes",
]

#: Status codes of the timelines: Active, Pending, Closed, any other status (OTHER) and Active
#: Under Contract (under contract, not Active: docs/metrics.md).
ACTIVE, PENDING, CLOSED, OTHER, UNDER_CONTRACT = 0, 1, 2, 3, 4
#: The statuses read, each as a flag column ``_<name>``.
_FLAGS: dict[str, str] = {
    "Active": "_Active",
    "Pending": "_Pending",
    "Closed": "_Closed",
    "Active Under Contract": "_UnderContract",
}
#: The change types read from a history: status changes, then price changes.
_KINDS = ("status_change", "price_change")
_NUMBERS = ("ListPrice", "PreviousListPrice", "ClosePrice", "LivingArea", "DaysOnMarket")
_TIMES = {
    "entered": "OriginalEntryTimestamp",
    "major": "MajorChangeTimestamp",
    "closed_at": "CloseDate",
}


def _status_flags(column: str) -> list[nw.Expr]:
    """The status flags (:data:`_FLAGS`) from a status column: text, or a pandas categorical
    compared as it is (engines' dictionary types are text already: :func:`~._kernel.frame_of`)."""
    status = nw.col(column)
    return [(status == s).fill_null(False).alias(flag) for s, flag in _FLAGS.items()]


def _text(column: str, schema: Any) -> nw.Expr:
    """A text column as text (cast only when the engine's type is another)."""
    col = nw.col(column)
    return col if schema[column] == nw.String else col.cast(nw.String)


def listing_rows(frame: Any, keys: Sequence[str], segment: str) -> pd.DataFrame:
    """The listings of ``segment`` (PropertyType) as pandas: ListingId (text), the ``keys``, the
    status flags (``_Active``, ``_Pending``, ``_Closed``, ``_UnderContract``), the numbers and the
    three timestamps."""
    schema = frame.collect_schema()
    rows = frame.filter(segment_filter(segment)).select(
        _text("ListingId", schema),
        *keys,
        *_status_flags("StandardStatus"),
        *(nw.col(c).cast(nw.Float64) for c in _NUMBERS),
        *_TIMES.values(),
    )
    return collect(rows)


def history_rows(frame: Any) -> pd.DataFrame:
    """The status and price changes of a history as pandas: ListingId (text), ``_status``
    (a status change, else a price change), ChangeTimestamp, the new StandardStatus (as the
    frame holds it: :func:`status_of` reads it; absent where the history lacks it), and the old
    and new prices (null where the history lacks the column)."""
    native = frame.to_native() if isinstance(frame, nw.DataFrame) else None
    if isinstance(native, pd.DataFrame):
        return _pandas_history_rows(native)
    schema = frame.collect_schema()
    kind = nw.col("ChangeType").cast(nw.String)
    is_status = (kind == "status_change").fill_null(False)
    keep = is_status | (kind == "price_change").fill_null(False)

    def price(column: str) -> nw.Expr:
        value = nw.col(column) if column in schema else nw.lit(None)
        return value.cast(nw.Float64).alias(column)

    status = ["StandardStatus"] if "StandardStatus" in schema else []
    rows = frame.filter(keep).select(
        _text("ListingId", schema),
        is_status.alias("_status"),
        "ChangeTimestamp",
        *status,
        price("PreviousListPrice"),
        price("ListPrice"),
    )
    return collect(rows)


def _pandas_history_rows(native: pd.DataFrame) -> pd.DataFrame:
    """:func:`history_rows` of a pandas frame (typed by ``frame_of``): the change types coded in
    one pass over their text (:func:`text_codes`), the rows filtered only when some are
    neither kind."""
    kind = text_codes(native["ChangeType"], _KINDS)
    columns = {"ListingId": native["ListingId"], "_status": kind == 0}
    columns["ChangeTimestamp"] = native["ChangeTimestamp"]
    if "StandardStatus" in native.columns:
        columns["StandardStatus"] = native["StandardStatus"]
    for column in ("PreviousListPrice", "ListPrice"):
        present = column in native.columns
        columns[column] = native[column] if present else np.full(len(native), np.nan)
    rows = pd.DataFrame(columns, copy=False).reset_index(drop=True)
    keep = kind < len(_KINDS)
    return rows if keep.all() else rows[keep].reset_index(drop=True)


#: The status codes of :data:`_FLAGS`' statuses, in its order.
_CODES = np.array([ACTIVE, PENDING, CLOSED, UNDER_CONTRACT], dtype="int8")


def text_codes(values: pd.Series, names: Sequence[str]) -> np.ndarray:
    """Each value's place in ``names`` (int8; ``len(names)`` for any other value and a missing
    one), from text or a pandas categorical (its categories looked up once): one pass over the
    values' text, where a comparison per name would make one each."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        categories = pd.Series(values.cat.categories.astype("str"))
        table = np.append(text_codes(categories, names), np.int8(len(names)))  # code -1: last
        return table[values.cat.codes.to_numpy()]
    try:
        text = pa.array(values, from_pandas=True)
        found = pc.index_in(text, value_set=pa.array(list(names), type=text.type))
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        code = np.full(len(values), len(names), dtype="int8")
        for i, name in enumerate(names):  # not text: compared as it is
            code[(values == name).to_numpy(dtype=bool, na_value=False)] = i
        return code
    return pc.fill_null(found, len(names)).to_numpy().astype("int8")


def status_of(values: pd.Series | None) -> np.ndarray:
    """The status codes of a status column as text or a pandas categorical (OTHER for any other
    status and a missing one; all OTHER without the column): :func:`text_codes`."""
    if values is None:
        return np.full(0, OTHER, dtype="int8")
    return np.append(_CODES, np.int8(OTHER))[text_codes(values, list(_FLAGS))]


def status_codes(
    active: np.ndarray,
    pending: np.ndarray,
    closed: np.ndarray,
    under_contract: np.ndarray | None = None,
) -> np.ndarray:
    """ACTIVE, PENDING, CLOSED, UNDER_CONTRACT or OTHER per row from the status flags."""
    code = np.full(len(active), OTHER, dtype="int8")
    if under_contract is not None:
        code[under_contract] = UNDER_CONTRACT
    code[closed] = CLOSED
    code[pending] = PENDING
    code[active] = ACTIVE
    return code


def _micros(values: pd.Series, column: str) -> np.ndarray:
    """Timestamps as naive UTC microseconds (int64; NaT as numpy's NaT value)."""
    if isinstance(values.dtype, pd.DatetimeTZDtype):  # read as it is, in UTC (no unit cast)
        naive = values.dt.tz_convert(None).to_numpy()
    elif isinstance(values.dtype, np.dtype) and values.dtype.kind == "M":  # naive: UTC
        naive = values.to_numpy()
    else:
        naive = to_utc(values, column, "market_trends").dt.tz_convert(None).to_numpy()
    if naive.dtype != np.dtype("datetime64[ns]"):
        return naive.astype("datetime64[us]", copy=False).view("int64")
    nanos = naive.view("int64")  # nanoseconds: floored to microseconds, as numpy's cast does
    micros = nanos // 1_000
    micros[nanos == NAT] = NAT  # NaT is the smallest int64 in any unit
    return micros


def _market_codes(rows: pd.DataFrame, keys: Sequence[str]) -> tuple[np.ndarray, pd.Index]:
    """Each row's market (code into the markets, sorted by their plain values; -1: a missing
    key, in no market) and the markets. One key of categorical type is coded from its
    categories (no pass over the values' text)."""
    if not keys:
        markets = pd.Index(["All"] if len(rows) else [], dtype=object)
        return np.zeros(len(rows), dtype="int64"), markets
    first = rows[keys[0]]
    if len(keys) == 1 and isinstance(first.dtype, pd.CategoricalDtype):
        seen = np.zeros(len(first.cat.categories) + 1, dtype=bool)
        seen[first.cat.codes.to_numpy() + 1] = True
        names = as_key(pd.Series(first.cat.categories))
        order, uniques = pd.factorize(names[seen[1:]], sort=True)  # observed ones only
        remap = np.full(len(seen), -1)
        remap[1:][seen[1:]] = order
        return remap[first.cat.codes.to_numpy() + 1], pd.Index(uniques, tupleize_cols=False)
    parts = [as_key(rows[k]) for k in keys]
    if len(parts) > 1:
        return _combined_codes(parts)
    codes, markets = pd.factorize(parts[0], sort=True, use_na_sentinel=True)
    return np.asarray(codes, dtype="int64"), pd.Index(markets, tupleize_cols=False)


def _combined_codes(parts: Sequence[pd.Series]) -> tuple[np.ndarray, pd.Index]:
    """:func:`_market_codes` of several keys: each key factorised (sorted), the codes combined
    into one integer per row (in the order of the tuples; -1 where a key is missing, as on the
    engines), and only the markets seen made tuples (no tuple per row)."""
    combined = np.zeros(len(parts[0]), dtype="int64")
    missing = np.zeros(len(parts[0]), dtype=bool)
    uniques = []
    for part in parts:
        codes, values = pd.factorize(part, sort=True, use_na_sentinel=True)
        missing |= codes < 0
        combined = combined * len(values) + codes
        uniques.append(pd.Index(values).to_numpy())  # the values as the rows hold them
    combined[missing] = -1
    order, seen = pd.factorize(combined, sort=True, use_na_sentinel=False)
    kept = np.asarray(seen, dtype="int64")
    if missing.any():  # -1 sorts first: those rows in no market
        order, kept = np.asarray(order) - 1, kept[1:]
    digits = np.unravel_index(kept, [len(u) for u in uniques])
    markets = list(zip(*[u[d] for u, d in zip(uniques, digits, strict=True)], strict=True))
    return np.asarray(order, dtype="int64"), pd.Index(markets, tupleize_cols=False)


class Listings:
    """One row per listing of the segment with a market: ``ids`` (:class:`~._order.Ids`), ``market``
    (code), ``status`` (code), the prices, ``area`` (NaN unless positive), ``dom``, and the
    times ``entered``, ``major``, ``closed_at`` (naive UTC microseconds, int64)."""

    def __init__(self, rows: pd.DataFrame, keys: Sequence[str]) -> None:
        codes, self.markets = _market_codes(rows, keys)
        kept = codes >= 0  # a missing market key: in no market
        rows = rows[kept] if not kept.all() else rows
        self.market = codes[kept]
        self.ids = Ids(pa.array(rows["ListingId"].astype("str")))
        flags = [rows[flag].to_numpy(dtype=bool) for flag in _FLAGS.values()]
        self.status = status_codes(*flags)
        self.list, self.prev_list, self.close, area, self.dom = (
            rows[c].to_numpy(dtype="float64") for c in _NUMBERS
        )
        self.area = np.where(area > 0, area, np.nan)
        self.entered, self.major, self.closed_at = (_micros(rows[c], c) for c in _TIMES.values())

    def __len__(self) -> int:
        return len(self.market)


#: numpy's NaT as an int64 microsecond value (the smallest int64).
NAT = np.datetime64("NaT", "us").view("int64")


class Changes:
    """A history's status and price changes as arrays, before they meet the listings: ``ids``
    (:class:`~._order.Ids`), ``at`` (naive UTC microseconds), ``is_status``, ``status`` (code of
    the new status), ``old_price`` and ``new_price``."""

    def __init__(self, rows: pd.DataFrame) -> None:
        self.ids = Ids(pa.array(rows["ListingId"].astype("str")))
        self.at = _micros(rows["ChangeTimestamp"], "ChangeTimestamp")
        self.is_status = rows["_status"].to_numpy(dtype=bool)
        if "StandardStatus" in rows.columns:
            self.status = status_of(rows["StandardStatus"])
        else:  # no StandardStatus column: no status is known
            self.status = np.full(len(rows), OTHER, dtype="int8")
        self.old_price = rows["PreviousListPrice"].to_numpy(dtype="float64")
        self.new_price = rows["ListPrice"].to_numpy(dtype="float64")


class History:
    """The status and price changes of the listings as arrays: ``pos`` (the listing's row in
    :class:`Listings`; a ListingId repeated in the market matches its last row), ``at`` (naive
    UTC microseconds), ``is_status``, ``status`` (code of the new status), ``is_price``,
    ``is_cut`` (a price change down), ``old_price`` and ``new_price``. Records of listings not in the table are
    left out."""

    def __init__(self, changes: Changes, listings: Listings) -> None:
        pos = match_last(changes.ids, listings.ids)
        known = pos >= 0
        everyone = bool(known.all())

        def mine(values: np.ndarray) -> np.ndarray:
            return values if everyone else values[known]

        self.pos, self.at, self.is_status = mine(pos), mine(changes.at), mine(changes.is_status)
        self.status, self.old_price = mine(changes.status), mine(changes.old_price)
        self.new_price = mine(changes.new_price)
        self.is_price = ~self.is_status
        with np.errstate(invalid="ignore"):
            self.is_cut = self.is_price & (self.new_price < self.old_price)
