"""What changed in a market, as the analyst reads it: one row per listing and kind of change.

Two sources give the same frame (:data:`CHANGE_COLUMNS`): an incremental sync
(``client.last_load.changes``: the new listings its searches found, every record the change feed
reported, and the listings the server no longer has), and ``rf.market_changes(before, after)``
(two market frames compared). Pure pandas, below both the loaders and the analysis. Kinds:

- ``new``: a listing the market did not hold before;
- ``price_cut`` / ``price_increase``: a ``price_change`` down / up (old and new ``ListPrice``);
- ``pending``: a status change to Pending or Active Under Contract;
- ``closed``: a status change to Closed;
- ``back_on_market``: Pending or Active Under Contract back to Active;
- ``status_change``: any other status change the feed reported (none is dropped);
- ``removed``: a listing the server answered 404 for.

Several records of one kind on one listing make one row: the first old value, the last new
value, the last ``ChangeTimestamp`` and the number of records in ``events``.

>>> CHANGE_KINDS
('new', 'price_cut', 'price_increase', 'pending', 'closed', 'back_on_market', 'status_change', 'removed')
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["CHANGE_COLUMNS", "CHANGE_KINDS", "describe_listings", "kind_of_change", "sync_changes"]

#: The kinds of change, in the order rows are sorted.
CHANGE_KINDS: tuple[str, ...] = (
    "new",
    "price_cut",
    "price_increase",
    "pending",
    "closed",
    "back_on_market",
    "status_change",
    "removed",
)
#: The listing fields that say which listing a change row is about.
DESCRIBE: tuple[str, ...] = (
    "UnparsedAddress",
    "City",
    "PostalCode",
    "PropertyType",
    "PropertySubType",
)
#: Columns of a changes frame (``client.last_load.changes`` and ``rf.market_changes``).
CHANGE_COLUMNS: tuple[str, ...] = (
    "ListingId",
    "change",
    "ChangeTimestamp",
    "old_price",
    "new_price",
    "old_status",
    "new_status",
    "events",
    *DESCRIBE,
)
#: The columns of one event, before the rows of a listing and kind are collapsed.
_EVENT_COLUMNS: tuple[str, ...] = CHANGE_COLUMNS[:7]
_UNDER_CONTRACT = ("Pending", "Active Under Contract")


def kind_of_change(
    change_type: pd.Series, old_price: pd.Series, new_price: pd.Series,
    old_status: pd.Series, new_status: pd.Series,
) -> pd.Series:  # fmt: skip
    """The kind of each feed record (see the module's list), vectorised.

    >>> s = lambda *v: pd.Series(v)
    >>> kind_of_change(s("price_change", "status_change", "status_change"), s(10.0, None, None),
    ...                s(9.0, None, None), s(None, "Pending", "Active"), s(None, "Active", "Closed")).tolist()
    ['price_cut', 'back_on_market', 'closed']
    """
    old_s = old_status.astype("string")
    new_s = new_status.astype("string")
    price = (change_type == "price_change").to_numpy()
    cut = price & (new_price < old_price).fillna(False).to_numpy()
    conditions = [
        cut,
        price,
        (new_s.isin(_UNDER_CONTRACT)).fillna(False).to_numpy(),
        (new_s == "Closed").fillna(False).to_numpy(),
        ((new_s == "Active") & old_s.isin(_UNDER_CONTRACT)).fillna(False).to_numpy(),
    ]
    choices = ["price_cut", "price_increase", "pending", "closed", "back_on_market"]
    return pd.Series(
        np.select(conditions, choices, default="status_change"), index=change_type.index
    )


def describe_listings(rows: pd.DataFrame) -> pd.DataFrame:
    """The identifying fields of listings (:data:`DESCRIBE`), one row per ListingId."""
    present = [c for c in DESCRIBE if c in rows.columns]
    out = rows[["ListingId", *present]].drop_duplicates("ListingId", keep="last")
    for name in DESCRIBE:
        if name not in out.columns:
            out[name] = pd.Series(pd.NA, index=out.index, dtype="string")
    return out


def _empty() -> pd.DataFrame:
    frame = pd.DataFrame({name: pd.Series([], dtype=object) for name in CHANGE_COLUMNS})
    return _typed(frame)


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.astype(
        {
            "ListingId": "string",
            "change": pd.CategoricalDtype(CHANGE_KINDS, ordered=True),
            "old_price": "float64",
            "new_price": "float64",
            "old_status": "string",
            "new_status": "string",
            "events": "int64",
        }
    )
    frame["ChangeTimestamp"] = pd.to_datetime(frame["ChangeTimestamp"], utc=True).astype(
        "datetime64[us, UTC]"
    )
    for name in DESCRIBE:
        frame[name] = frame[name].astype("string")
    return frame


def sync_changes(
    feed: pd.DataFrame,
    new: pd.DataFrame,
    removed: Sequence[str],
    before: pd.DataFrame,
    after: pd.DataFrame,
) -> pd.DataFrame:
    """The changes frame of one sync (columns :data:`CHANGE_COLUMNS`).

    ``feed``: the change feed's records (history columns); ``new``: the listings new to the
    market; ``removed``: ids the server no longer has; ``before`` / ``after``: the market before
    and after the sync (for each listing's address, city and type).
    """
    parts: list[pd.DataFrame] = []
    if len(new):
        parts.append(
            pd.DataFrame(
                {
                    "ListingId": new["ListingId"].to_numpy(),
                    "change": "new",
                    "ChangeTimestamp": new["OriginalEntryTimestamp"].to_numpy(),
                    "new_price": new["ListPrice"].to_numpy(dtype="float64", na_value=np.nan),
                    "new_status": new["StandardStatus"].astype("string").to_numpy(),
                }
            )
        )
    if len(feed):
        kinds = kind_of_change(
            feed["ChangeType"].astype("string"),
            feed["PreviousListPrice"].astype("float64"),
            feed["ListPrice"].astype("float64"),
            feed["PreviousStatus"],
            feed["StandardStatus"],
        )
        parts.append(
            pd.DataFrame(
                {
                    "ListingId": feed["ListingId"].to_numpy(),
                    "change": kinds.to_numpy(),
                    "ChangeTimestamp": feed["ChangeTimestamp"].to_numpy(),
                    "old_price": feed["PreviousListPrice"].to_numpy(
                        dtype="float64", na_value=np.nan
                    ),
                    "new_price": feed["ListPrice"].to_numpy(dtype="float64", na_value=np.nan),
                    "old_status": feed["PreviousStatus"].astype("string").to_numpy(),
                    "new_status": feed["StandardStatus"].astype("string").to_numpy(),
                }
            )
        )
    if len(removed):
        parts.append(pd.DataFrame({"ListingId": list(removed), "change": "removed"}))
    if not parts:
        return _empty()
    return collapse(pd.concat(parts, ignore_index=True), pd.concat([before, after]))


def collapse(events: pd.DataFrame, listings: pd.DataFrame) -> pd.DataFrame:
    """One row per (ListingId, change) from event rows, with the listing's description."""
    events = events.reindex(columns=list(_EVENT_COLUMNS))
    events["ChangeTimestamp"] = pd.to_datetime(events["ChangeTimestamp"], utc=True)
    events = events.sort_values(
        ["ChangeTimestamp", "ListingId"], kind="stable", na_position="first"
    )
    grouped = events.groupby(["ListingId", "change"], sort=False, observed=True, dropna=False)
    out = grouped.agg(
        ChangeTimestamp=("ChangeTimestamp", "last"),
        old_price=("old_price", "first"),
        new_price=("new_price", "last"),
        old_status=("old_status", "first"),
        new_status=("new_status", "last"),
        events=("change", "size"),
    ).reset_index()
    out = out.merge(describe_listings(listings), on="ListingId", how="left")
    out = _typed(out[list(CHANGE_COLUMNS)])
    return out.sort_values(["change", "ListingId"], kind="stable").reset_index(drop=True)
