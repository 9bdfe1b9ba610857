"""Pure steps of a sync (no request): the feed's changes applied to the cached rows (the listings
row's declared ``apply``), close data, DaysOnMarket grown with the server's clock, the history,
the watermarks."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd

from realtyframes.loaders._base import ids_in
from realtyframes.schemas import ListingChange, listings_from_records, target_dtypes

logger = logging.getLogger("realtyframes.sync")

#: Columns of the history frame (the change feed's records).
HISTORY_COLUMNS: tuple[str, ...] = tuple(target_dtypes(ListingChange))
_HISTORY_KEY = ["ListingId", "ChangeType", "ChangeTimestamp"]
_DAY = pd.Timedelta(days=1)


def iso(value: pd.Timestamp | datetime | None) -> str | None:
    if value is None or pd.isna(value):
        return None
    return pd.Timestamp(value).tz_convert(UTC).isoformat().replace("+00:00", "Z")


def stamp(value: str | None) -> pd.Timestamp | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"expected an ISO 8601 string, got {value!r}")
    stamp = pd.Timestamp(value)
    if stamp is pd.NaT or stamp.tzinfo is None:
        raise ValueError(f"{value!r} is not a UTC timestamp")
    return stamp.tz_convert(UTC).as_unit("us")


def latest(*values: pd.Timestamp | None) -> pd.Timestamp | None:
    known = [v for v in values if v is not None and not pd.isna(v)]
    return max(known) if known else None


# -- applying changes --------------------------------------------------------------------------------


def apply_changes(
    market: pd.DataFrame, changes: pd.DataFrame
) -> tuple[pd.DataFrame, list[str], list[str]]:
    """Apply the feed's changes to the rows, in order; returns (market, touched ids, closing ids).

    A change is applied only when it is newer than the row's MajorChangeTimestamp (else the row,
    fetched after it, already shows it), so applying a change twice changes nothing.
    """
    if not len(changes) or not len(market):
        return market, [], []
    market = market.reset_index(drop=True).copy()
    changes = changes.sort_values(
        ["ChangeTimestamp", "ListingId", "ChangeType"], kind="stable"
    ).reset_index(drop=True)
    rows = pd.Index(market["ListingId"]).get_indexer(changes["ListingId"])
    known = rows >= 0
    base = market["MajorChangeTimestamp"].fillna(market["ModificationTimestamp"])
    base_at = pd.Series(pd.NaT, index=changes.index, dtype=base.dtype)
    base_at[known] = base.to_numpy()[rows[known]]
    newer = known & (base_at.isna() | (changes["ChangeTimestamp"] > base_at)).to_numpy()
    todo = changes[newer].assign(_row=rows[newer])
    if not len(todo):
        return market, [], []
    col = market.columns.get_loc
    prices = todo[todo["ChangeType"] == "price_change"].drop_duplicates("_row", keep="last")
    if len(prices):
        at = prices["_row"].to_numpy()
        market.iloc[at, col("ListPrice")] = prices["ListPrice"].to_numpy(dtype="float64")
        market.iloc[at, col("PreviousListPrice")] = prices["PreviousListPrice"].to_numpy(
            dtype="float64"
        )
    statuses = todo[todo["ChangeType"] == "status_change"].drop_duplicates("_row", keep="last")
    closing: list[str] = []
    if len(statuses):
        at = statuses["_row"].to_numpy()
        was_closed = (market["StandardStatus"] == "Closed").to_numpy()[at]
        new_status = statuses["StandardStatus"].astype(object).to_numpy()
        market.iloc[at, col("StandardStatus")] = new_status
        now_closed = new_status == "Closed"
        reopened = at[~now_closed]  # close data belongs to Closed listings only
        market.iloc[reopened, col("ClosePrice")] = np.nan
        market.iloc[reopened, col("CloseDate")] = pd.NaT
        close_rows = at[now_closed & ~was_closed]
        missing = at[now_closed & was_closed]
        missing = missing[market["ClosePrice"].isna().to_numpy()[missing]]
        closing = market["ListingId"].iloc[np.concatenate([close_rows, missing])].tolist()
    last = todo.groupby("_row", sort=False)["ChangeTimestamp"].max()
    at = last.index.to_numpy()
    for name in ("ModificationTimestamp", "MajorChangeTimestamp"):
        market.iloc[at, col(name)] = last.to_numpy()
    touched = market["ListingId"].iloc[at].tolist()
    return market, touched, closing


def close_data(
    market: pd.DataFrame, bodies: Sequence[bytes], removed: Sequence[str]
) -> pd.DataFrame:
    """ClosePrice, CloseDate and DaysOnMarket of listings that closed, from their detail
    ``bodies``; the listings the server no longer has (``removed``) leave the market."""
    if removed:
        logger.warning("sync_listings: %d listings are gone from the server: %s", len(removed),
                       list(removed))  # fmt: skip
        market = market[~market["ListingId"].isin(list(removed))].reset_index(drop=True)
    if not bodies:
        return market
    details, _ = listings_from_records(bodies, detail=False)
    details = details[details["StandardStatus"] == "Closed"].drop_duplicates(
        "ListingId", keep="last"
    )
    rows = pd.Index(market["ListingId"]).get_indexer(details["ListingId"])
    ok = rows >= 0
    market = market.copy()
    col = market.columns.get_loc
    for name in ("ClosePrice", "CloseDate", "DaysOnMarket"):
        values = details[name][ok]
        if values.dtype != market[name].dtype:
            values = values.astype(market[name].dtype)
        market.iloc[rows[ok], col(name)] = values.to_numpy()
    return market


def data_time_of(fresh: pd.DataFrame, changes: pd.DataFrame | None) -> pd.Timestamp | None:
    """A lower bound of the server's clock from data it just sent: the newest timestamp, and
    ``OriginalEntryTimestamp + DaysOnMarket`` days of listings not closed."""
    stamps: list[pd.Timestamp | None] = []
    if len(fresh):
        stamps += [max_stamp(fresh["ModificationTimestamp"]), max_stamp(_days_since(fresh))]
    if changes is not None and len(changes):
        stamps.append(max_stamp(changes["ChangeTimestamp"]))
    return latest(*stamps)


def clock_window(
    fresh: pd.DataFrame, lower: pd.Timestamp | None
) -> tuple[pd.Timestamp | None, pd.Timestamp | None]:
    """Where the server's clock is, ``[lower, upper)``, from listings it just sent: the server
    counts DaysOnMarket of a listing not closed in whole days since its entry, so its clock is
    in ``[entry + days, entry + days + 1 day)`` for each; a ModificationTimestamp is a lower
    bound too. ``upper`` is None when no listing sent is open.

    >>> row = {"StandardStatus": ["Active"], "DaysOnMarket": [2],
    ...        "OriginalEntryTimestamp": [pd.Timestamp("2026-01-01T06:00Z")],
    ...        "ModificationTimestamp": [pd.Timestamp("2026-01-02T00:00Z")]}
    >>> [str(t) for t in clock_window(pd.DataFrame(row), None)]
    ['2026-01-03 06:00:00+00:00', '2026-01-04 06:00:00+00:00']
    """
    if not len(fresh):
        return lower, None
    since = _days_since(fresh)
    upper = (since + _DAY).min()
    lowest = latest(lower, max_stamp(since), max_stamp(fresh["ModificationTimestamp"]))
    return lowest, None if pd.isna(upper) else pd.Timestamp(upper)


def _days_since(fresh: pd.DataFrame) -> pd.Series:
    """``OriginalEntryTimestamp + DaysOnMarket`` days of the listings not closed."""
    open_ = fresh[fresh["StandardStatus"].astype("str") != "Closed"]
    return open_["OriginalEntryTimestamp"] + pd.to_timedelta(
        open_["DaysOnMarket"].astype("float64"), unit="D"
    )


def turning(market: pd.DataFrame, lower: pd.Timestamp, upper: pd.Timestamp | None) -> pd.Series:
    """The listings not closed whose DaysOnMarket a server clock in ``[lower, upper)`` leaves
    open (the day turns for them inside it; every one when ``upper`` is None): their next day
    boundary after ``lower``, indexed by ListingId, earliest first."""
    open_ = market[
        (market["StandardStatus"].astype("str") != "Closed")
        & market["OriginalEntryTimestamp"].notna()
    ]
    entry = open_["OriginalEntryTimestamp"]
    turns = entry + ((lower - entry) // _DAY + 1) * _DAY
    if upper is not None:
        turns = turns[turns < upper]
    return pd.Series(
        turns.to_numpy(), index=open_.loc[turns.index, "ListingId"].to_numpy()
    ).sort_values(kind="stable")


def grow_days_on_market(market: pd.DataFrame, data_time: pd.Timestamp | None) -> pd.DataFrame:
    """DaysOnMarket of listings not closed, from ``data_time`` (a lower bound of the server's
    clock): it grows with the clock and no feed event says so. Never lowered."""
    if data_time is None or not len(market):
        return market
    elapsed = (data_time - market["OriginalEntryTimestamp"]) // _DAY
    current = market["DaysOnMarket"].to_numpy(dtype="float64", na_value=np.nan)
    grown = np.fmax(current, elapsed.to_numpy(dtype="float64", na_value=np.nan))
    update = (market["StandardStatus"] != "Closed").to_numpy() & ~np.isnan(grown)
    update &= grown != current
    if not update.any():
        return market
    days = market["DaysOnMarket"].copy()
    days[update] = grown[update].astype("int64")
    return market.assign(DaysOnMarket=days)


def append_history(history: pd.DataFrame, changes: pd.DataFrame) -> pd.DataFrame:
    """``changes`` (in the feed's columns or ``history``'s) added once each, in time order."""
    if not len(changes):
        return history
    added = changes[[c for c in changes.columns if c in HISTORY_COLUMNS or c in history.columns]]
    out = concat([history, added])
    out = out.drop_duplicates(_HISTORY_KEY, keep="first")
    return out.sort_values(
        ["ChangeTimestamp", "ListingId", "ChangeType"], kind="stable"
    ).reset_index(drop=True)


def watermarks(
    market: pd.DataFrame,
    quarantine: pd.DataFrame,
    previous: Mapping[str, Any] | None,
    changes: pd.DataFrame | None,
) -> dict[str, str | None]:
    """``entry_watermark``: newest OriginalEntryTimestamp known (the next new-listing search's
    Since); ``change_watermark``: newest ModificationTimestamp / ChangeTimestamp known (the next
    change feed's Since). Both are server times and never move back."""
    previous = previous or {}
    entries = [stamp(previous.get("entry_watermark")), max_stamp(market["OriginalEntryTimestamp"])]
    if "OriginalEntryTimestamp" in quarantine.columns:
        entries.append(max_stamp(quarantine["OriginalEntryTimestamp"]))
    changed = [
        stamp(previous.get("change_watermark")),
        max_stamp(market["ModificationTimestamp"]),
        max_stamp(market["MajorChangeTimestamp"]),
    ]
    if changes is not None and len(changes):
        changed.append(max_stamp(changes["ChangeTimestamp"]))
    return {
        "entry_watermark": iso(latest(*entries)),
        "change_watermark": iso(latest(*changed)),
    }


# -- small helpers -----------------------------------------------------------------------------------


def max_stamp(series: pd.Series) -> pd.Timestamp | None:
    if not isinstance(series.dtype, pd.DatetimeTZDtype):
        series = pd.to_datetime(series.astype(object), utc=True, errors="coerce", format="ISO8601")
    value = series.max()
    return None if pd.isna(value) else pd.Timestamp(value)


def concat(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    parts = [f for f in frames if len(f)]
    if not parts:
        return frames[0].iloc[:0] if frames else pd.DataFrame()
    if len(parts) == 1:
        return parts[0]
    return pd.concat(parts, ignore_index=True)


def tidy(market: pd.DataFrame) -> pd.DataFrame:
    return market.sort_values("ListingId", kind="stable").reset_index(drop=True)


def media_of(media: pd.DataFrame, market: pd.DataFrame) -> pd.DataFrame:
    if not len(media):
        return media.reset_index(drop=True)
    return media[ids_in(media["ListingId"], market["ListingId"])].reset_index(drop=True)


def wall_clock() -> str:
    """Local time of the sync, for people reading the state (never used as a watermark)."""
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")
