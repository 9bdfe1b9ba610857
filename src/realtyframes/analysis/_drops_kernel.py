"""Price drops on any engine (:func:`realtyframes.analysis.price_drops`): what the engine reduces,
and what is finished locally in pandas.

On the engine (narwhals expressions, the same for pandas, Polars, DuckDB and PySpark):

- without ``changes``: the rows of the listings with a qualifying cut (PreviousListPrice above
  ListPrice, at or above ``min_drop_pct``, MajorChangeTimestamp after ``since``), with only the
  columns of the result (:func:`snapshot_rows`);
- with ``changes``: the ``price_change`` records after ``since``, four columns
  (:func:`price_changes`); then the rows of the listings whose ListingId has a qualifying cut
  (:func:`listing_rows`).

Locally: the per-listing arithmetic of the change records (:func:`cuts_from_changes`: ordered by
time within each listing), the ListingId checks over the rows that make the result, and the
result's columns and order (:func:`finish`).

>>> import pandas as pd
>>> import numpy as np
>>> rows = pd.DataFrame({"ListingId": ["a"], "_prev": [100.0], "_cur": [90.0], "_at": [pd.NaT]})
>>> float(cuts_from_rows(rows, np.arange(1))["drop_pct"].iloc[0])
0.1
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import narwhals as nw
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from realtyframes.analysis._common import AnalysisInputError, safe_div, to_float, to_utc
from realtyframes.analysis._kernel import after, collect, concurrently
from realtyframes.analysis._order import Ids, descending_order

__all__ = [
    "CHANGE_COLUMNS",
    "CUT_COLUMNS",
    "DESCRIPTIVE_COLUMNS",
    "align",
    "check_ids",
    "cuts_from_changes",
    "cuts_from_rows",
    "drop_order",
    "finish",
    "is_empty",
    "listing_rows",
    "plain_text",
    "price_changes",
    "snapshot_pct",
    "snapshot_rows",
]

#: Columns copied from the listings frame into each price-drop row (null when the frame lacks one).
DESCRIPTIVE_COLUMNS: tuple[str, ...] = (
    "UnparsedAddress",
    "City",
    "PostalCode",
    "PropertyType",
    "PropertySubType",
    "StandardStatus",
)
#: Columns of the change records :func:`price_changes` reads.
CHANGE_COLUMNS = ("ListingId", "ChangeType", "ChangeTimestamp", "PreviousListPrice", "ListPrice")
#: What the result carries per cut, in order (after the listing's columns).
CUT_COLUMNS: tuple[str, ...] = (
    "previous_price",
    "current_price",
    "drop_amount",
    "drop_pct",
    "drop_count",
    "first_price",
    "total_drop_amount",
    "total_drop_pct",
    "last_drop_at",
)
_CARRIED = (*DESCRIPTIVE_COLUMNS, "DaysOnMarket")


def _present(frame: Any, names: Sequence[str]) -> list[str]:
    schema = frame.collect_schema()
    return [c for c in names if c in schema]


def _listing_columns(frame: Any) -> list[nw.Expr]:
    """ListingId as text and the descriptive columns and DaysOnMarket the frame has."""
    return [nw.col("ListingId").cast(nw.String), *(nw.col(c) for c in _present(frame, _CARRIED))]


def snapshot_rows(frame: Any, since: pd.Timestamp | None, min_pct: float) -> pd.DataFrame:
    """The listings with a qualifying cut on the listing fields: PreviousListPrice above
    ListPrice (and positive), the cut at or above ``min_pct``, MajorChangeTimestamp after
    ``since``; the listing's columns, ``_prev``, ``_cur`` and ``_at`` (MajorChangeTimestamp)."""
    prev = nw.col("PreviousListPrice").cast(nw.Float64)
    cur = nw.col("ListPrice").cast(nw.Float64)
    keep = (prev > cur) & (prev > 0)  # a cut: above 0 % of the previous price
    if min_pct > 0:
        keep = keep & ((prev - cur) / prev >= min_pct)
    has_at = bool(_present(frame, ["MajorChangeTimestamp"]))
    if since is not None:
        schema = frame.collect_schema()
        keep = keep & after("MajorChangeTimestamp", since, schema["MajorChangeTimestamp"])
    at = [nw.col("MajorChangeTimestamp").alias("_at")] if has_at else []
    rows = frame.filter(keep.fill_null(False))
    out = collect(
        rows.select(*_listing_columns(frame), prev.alias("_prev"), cur.alias("_cur"), *at)
    )
    if not has_at:
        out["_at"] = pd.Series(pd.NaT, index=out.index, dtype="datetime64[us, UTC]")
    return out


def price_changes(frame: Any, since: pd.Timestamp | None) -> pd.DataFrame:
    """The ``price_change`` records after ``since``: ListingId (text), ``at``, ``old``, ``new``."""
    keep = (nw.col("ChangeType").cast(nw.String) == "price_change").fill_null(False)
    if since is not None:
        schema = frame.collect_schema()
        keep = keep & after("ChangeTimestamp", since, schema["ChangeTimestamp"]).fill_null(False)
    return collect(
        frame.filter(keep).select(
            nw.col("ListingId").cast(nw.String),
            nw.col("ChangeTimestamp").alias("at"),
            nw.col("PreviousListPrice").cast(nw.Float64).alias("old"),
            nw.col("ListPrice").cast(nw.Float64).alias("new"),
        )
    )


def is_empty(frame: Any) -> bool:
    """Whether ``frame`` has no rows (one count on an engine)."""
    if isinstance(frame, nw.DataFrame):
        return len(frame) == 0
    return int(collect(frame.select(nw.len())).iloc[0, 0]) == 0


def listing_rows(frame: Any, ids: Sequence[str]) -> pd.DataFrame:
    """The rows of the listings whose ListingId (as text) is one of ``ids``: the listing's
    columns only."""
    found = nw.col("ListingId").cast(nw.String).is_in(list(ids)).fill_null(False)
    return collect(frame.filter(found).select(*_listing_columns(frame)))


def cuts_from_rows(rows: pd.DataFrame, order: np.ndarray) -> pd.DataFrame:
    """The cut of each row of :func:`snapshot_rows`, in ``order``: one cut, first price the
    previous one."""
    prev = rows["_prev"].to_numpy(dtype="float64")[order]
    cur = rows["_cur"].to_numpy(dtype="float64")[order]
    pct = safe_div(prev - cur, prev)
    at = to_utc(rows["_at"], "MajorChangeTimestamp", "price_drops").array.take(order)
    return pd.DataFrame(
        {
            "previous_price": prev,
            "current_price": cur,
            "drop_amount": prev - cur,
            "drop_pct": pct,
            "drop_count": np.ones(len(order), dtype="int64"),
            "first_price": prev,
            "total_drop_amount": prev - cur,
            "total_drop_pct": pct,
            "last_drop_at": at,
        },
        copy=False,
    )


def snapshot_pct(rows: pd.DataFrame) -> np.ndarray:
    """The cut of each row of :func:`snapshot_rows`, as a fraction of the previous price."""
    prev = rows["_prev"].to_numpy(dtype="float64")
    return safe_div(prev - rows["_cur"].to_numpy(dtype="float64"), prev)


def cuts_from_changes(records: pd.DataFrame, min_pct: float) -> pd.DataFrame:
    """Per listing of the change records (:func:`price_changes`; identical records count once,
    ordered by time within each listing): the last qualifying cut (old above new, at or above
    ``min_pct``), how many there were, the first price seen and the total cut since it (to the
    latest price seen)."""
    ch = pd.DataFrame(
        {
            "_id": pd.factorize(records["ListingId"].astype("str"))[0],
            "ListingId": records["ListingId"].to_numpy(dtype=object),
            "at": to_utc(records["at"], "ChangeTimestamp", "price_drops"),
            "old": to_float(records["old"], "PreviousListPrice", "price_drops").to_numpy(),
            "new": to_float(records["new"], "ListPrice", "price_drops").to_numpy(),
        }
    )
    ch = ch.drop_duplicates(["_id", "at", "old", "new"]).sort_values(["_id", "at"], kind="stable")
    with np.errstate(invalid="ignore"):
        is_cut = ((ch["old"] > ch["new"]) & (ch["old"] > 0)).to_numpy()
    ch["pct"] = safe_div(ch["old"] - ch["new"], ch["old"])
    qualifying = ch[is_cut & (ch["pct"] >= min_pct).to_numpy()]
    g = ch.groupby("_id", sort=False)
    first_price = g["old"].first()  # first price seen (first non-null PreviousListPrice)
    latest_price = g["new"].last()  # latest price seen
    last = qualifying.groupby("_id", sort=False).tail(1).set_index("_id")
    counts = qualifying.groupby("_id", sort=False).size()
    first = first_price.reindex(last.index).to_numpy()
    total = first - latest_price.reindex(last.index).to_numpy()
    return pd.DataFrame(
        {
            "ListingId": last["ListingId"].to_numpy(dtype=object),
            "previous_price": last["old"].to_numpy(),
            "current_price": last["new"].to_numpy(),
            "drop_amount": (last["old"] - last["new"]).to_numpy(),
            "drop_pct": last["pct"].to_numpy(),
            "drop_count": counts.reindex(last.index).to_numpy(dtype="int64"),
            "first_price": first,
            "total_drop_amount": total,
            "total_drop_pct": safe_div(total, first),
            "last_drop_at": last["at"].reset_index(drop=True),
        }
    )


def plain_text(s: pd.Series) -> pd.Series:
    """A text column as plain ``str`` (categoricals, pyarrow and object text alike); a column of
    another kind (numbers) is kept."""
    dtype = s.dtype
    if isinstance(dtype, pd.CategoricalDtype) and dtype.categories.dtype.kind in "OUT":
        text = pc.cast(pa.array(s), pa.large_string())  # no per-value Python work
        return pd.Series(text, index=s.index, name=s.name, dtype="str")
    if isinstance(dtype, pd.CategoricalDtype):
        return s.astype(dtype.categories.dtype)
    if dtype == "str":
        return s
    if isinstance(dtype, pd.StringDtype | pd.ArrowDtype) or pd.api.types.is_object_dtype(dtype):
        return s.astype("str")
    return s


def check_ids(ids: pd.Series, func: str, what: str) -> np.ndarray:
    """ListingId present and unique over the rows that make the result (``what`` says which);
    returns the rows' order by ListingId (text order; short ids by their integer keys: :class:`~._order.Ids`)."""
    if ids.isna().any():
        raise AnalysisInputError(f"{func}(): `listings` has {what} without a ListingId")
    text = pa.array(ids.astype("str"))
    keyed = Ids(text).ordered()
    if keyed is not None:
        by_id, keys = keyed
        same = keys[1:] == keys[:-1]
    else:
        by_id = pc.sort_indices(text).to_numpy()
        ordered_text = text.take(by_id)
        same = pc.equal(ordered_text[1:], ordered_text[:-1]).to_numpy(zero_copy_only=False)
    if same.any():
        repeated = pc.unique(text.take(by_id[1:][same])).to_pylist()[:5]
        shown = ", ".join(repr(k) for k in repeated)
        raise AnalysisInputError(
            f"{func}(): `listings` must hold one row per ListingId; duplicated: {shown}"
        )
    return by_id


def _whole_days(days: pd.Series) -> pd.Series:
    """DaysOnMarket as the loaders type it (nullable Int64) when every value is whole."""
    known = days.dropna()
    if len(known) and not (known == known.round()).all():
        return days
    return days.astype("Int64")


def align(
    rows: pd.DataFrame, cuts: pd.DataFrame, by_id: np.ndarray
) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray]:
    """``cuts`` (with ListingId) and the ``rows`` of their listings, row for row, and their order
    by ListingId (``by_id`` of the ``rows``, from :func:`check_ids`, which also makes ListingId
    unique in ``rows``); a cut whose listing is not in ``rows`` is left out."""
    ids = pd.Index(rows["ListingId"].astype("str"))
    where = ids.get_indexer(cuts["ListingId"].astype("str"))
    kept = where >= 0
    rank = np.empty(len(by_id), dtype="int64")
    rank[by_id] = np.arange(len(by_id))
    aligned = rows.take(where[kept]).reset_index(drop=True)
    return aligned, cuts[kept].reset_index(drop=True), np.argsort(rank[where[kept]])


def drop_order(pct: np.ndarray, by_id: np.ndarray) -> np.ndarray:
    """Biggest cut first, ties in ListingId order: a stable sort of the rows taken by ListingId
    (``by_id``, from :func:`check_ids`)."""
    return by_id[descending_order(pct[by_id])]


def finish(
    rows: pd.DataFrame,
    cuts: Callable[[], pd.DataFrame],
    order: np.ndarray,
    columns: Sequence[str],
) -> pd.DataFrame:
    """The result, in ``order`` (:func:`drop_order`) of the ``rows``: each listing's columns
    (text as plain ``str``) and its cut (from the step ``cuts``, in that order), in ``columns``.
    The listing's columns are taken and the cuts computed on two threads when there are many
    rows."""
    func = "price_drops"
    n = len(order)

    def taken(col: str) -> Any:
        if col == "DaysOnMarket":
            return _whole_days(to_float(rows[col].take(order), col, func)).array
        return plain_text(rows[col].take(order)).array

    listing = [c for c in columns if c not in CUT_COLUMNS and c in rows.columns]
    steps: list[Callable[[], Any]] = [cuts, *(partial(taken, c) for c in listing)]
    cut, *values = concurrently(steps, n)
    out: dict[str, Any] = dict(zip(listing, values, strict=True))
    for col in columns:
        if col in CUT_COLUMNS:
            out[col] = cut[col].array
        elif col == "DaysOnMarket" and col not in out:
            out[col] = pd.Series(pd.NA, index=range(n), dtype="Int64").array
        elif col not in out:
            out[col] = pd.array(pa.nulls(n, pa.large_string()), dtype="str")
    out["last_drop_at"] = out["last_drop_at"].astype("datetime64[us, UTC]")
    return pd.DataFrame({col: out[col] for col in columns}, index=range(n), copy=False)
