"""What changed between two market frames: ``rf.market_changes(before, after)``.

The same frame as ``client.last_load.changes`` after an incremental sync (columns
:data:`CHANGE_COLUMNS`, kinds :data:`CHANGE_KINDS`), computed from two snapshots instead of the
change feed: a listing only in ``after`` is ``new``, only in ``before`` is ``removed``; a lower
``ListPrice`` is a ``price_cut`` (higher: ``price_increase``); a status moved to Pending or Active
Under Contract is ``pending``, to Closed ``closed``, from Pending / Active Under Contract back to
Active ``back_on_market``, any other move ``status_change``. Between two snapshots only the net
change shows (two cuts are one, a cut undone is none): ``events`` is 1.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from realtyframes._changes import CHANGE_COLUMNS, CHANGE_KINDS, collapse, kind_of_change
from realtyframes.analysis._common import check_columns, check_frame, to_float, to_utc

__all__ = ["CHANGE_COLUMNS", "CHANGE_KINDS", "market_changes"]

_NEEDED = ("ListingId", "ListPrice", "StandardStatus")


def _when(frame: pd.DataFrame, func: str) -> pd.Series:
    """When a listing last changed: MajorChangeTimestamp, else ModificationTimestamp."""
    for column in ("MajorChangeTimestamp", "ModificationTimestamp"):
        if column in frame.columns:
            return to_utc(frame[column], column, func)
    return pd.Series(pd.NaT, index=frame.index, dtype="datetime64[us, UTC]")


def market_changes(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """One row per listing and kind of change between two market frames (e.g. two syncs, or two
    reports' ``listings`` files), with the old and new values and the listing's address, city and
    type; sorted by kind, then ListingId.

    >>> import realtyframes as rf
    >>> before = pd.DataFrame({"ListingId": ["A", "B"], "ListPrice": [500.0, 300.0],
    ...                        "StandardStatus": ["Active", "Pending"], "City": ["Miami", "Doral"]})
    >>> after = pd.DataFrame({"ListingId": ["A", "B", "C"], "ListPrice": [450.0, 300.0, 900.0],
    ...                       "StandardStatus": ["Active", "Active", "Active"],
    ...                       "City": ["Miami", "Doral", "Miami"]})
    >>> rf.market_changes(before, after)[["ListingId", "change", "old_price", "new_price"]]
      ListingId          change  old_price  new_price
    0         C             new        NaN      900.0
    1         A       price_cut      500.0      450.0
    2         B  back_on_market        NaN        NaN
    """
    func = "market_changes"
    for name, frame in (("before", before), ("after", after)):
        check_frame(frame, name, func)
        check_columns(frame, _NEEDED, name, func)
    old = before.drop_duplicates("ListingId", keep="last").set_index("ListingId", drop=False)
    new = after.drop_duplicates("ListingId", keep="last").set_index("ListingId", drop=False)
    both = old.index.intersection(new.index)
    was, now = old.loc[both], new.loc[both]
    when = _when(new, func).loc[both].to_numpy()
    old_price = to_float(was["ListPrice"], "ListPrice", func).to_numpy()
    new_price = to_float(now["ListPrice"], "ListPrice", func).to_numpy()
    old_status = was["StandardStatus"].astype("string").to_numpy()
    new_status = now["StandardStatus"].astype("string").to_numpy()
    with np.errstate(invalid="ignore"):
        repriced = ~np.isnan(old_price) & ~np.isnan(new_price) & (old_price != new_price)
    moved = pd.Series(old_status != new_status).fillna(False).to_numpy(dtype=bool)
    parts = [
        pd.DataFrame(
            {
                "ListingId": both[repriced],
                "change": np.where(
                    new_price[repriced] < old_price[repriced], "price_cut", "price_increase"
                ),
                "ChangeTimestamp": when[repriced],
                "old_price": old_price[repriced],
                "new_price": new_price[repriced],
            }
        ),
        pd.DataFrame(
            {
                "ListingId": both[moved],
                "change": kind_of_change(
                    pd.Series("status_change", index=range(moved.sum())),
                    pd.Series(np.nan, index=range(moved.sum())),
                    pd.Series(np.nan, index=range(moved.sum())),
                    pd.Series(old_status[moved]),
                    pd.Series(new_status[moved]),
                ).to_numpy(),
                "ChangeTimestamp": when[moved],
                "old_status": old_status[moved],
                "new_status": new_status[moved],
            }
        ),
    ]
    added = new.index.difference(old.index)
    if len(added):
        parts.append(_new_rows(new.loc[added], func))
    gone = old.index.difference(new.index)
    if len(gone):
        parts.append(pd.DataFrame({"ListingId": gone, "change": "removed"}))
    events = (
        pd.concat([p for p in parts if len(p)], ignore_index=True)
        if any(len(p) for p in parts)
        else pd.DataFrame(  # no change: typed like the frames' ids (float64 would not merge)
            {"ListingId": after["ListingId"].iloc[:0].to_numpy(), "change": np.array([], object)}
        )
    )
    return collapse(events, pd.concat([before, after], ignore_index=True))


def _new_rows(entered: pd.DataFrame, func: str) -> pd.DataFrame:
    """The ``new`` rows: listings only in ``after``, at their entry time."""
    stamp = (
        to_utc(entered["OriginalEntryTimestamp"], "OriginalEntryTimestamp", func)
        if "OriginalEntryTimestamp" in entered.columns
        else _when(entered, func)
    )
    return pd.DataFrame(
        {
            "ListingId": entered.index,
            "change": "new",
            "ChangeTimestamp": stamp.to_numpy(),
            "new_price": to_float(entered["ListPrice"], "ListPrice", func).to_numpy(),
            "new_status": entered["StandardStatus"].astype("string").to_numpy(),
        }
    )
