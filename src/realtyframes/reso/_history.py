"""The history frames of a RESO sync: the platform's change columns plus ``HistorySource``
(where each record comes from), synthesised changes between two versions of a listing,
removals, the merge of an incremental sync's versions, and the ``changes`` frame of a sync.

>>> history_frame([], []).columns[-1]
'HistorySource'
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pandas as pd

from realtyframes.loaders import (
    append_history,
    changes_between,
    data_time_of,
    grow_days_on_market,
)
from realtyframes.schemas import ListingChange, changes_from_pages, empty_frame

__all__ = [
    "HISTORY_SOURCE",
    "change",
    "history_frame",
    "merge_versions",
    "number",
    "removals",
    "sync_changes_of",
    "synthesised",
]

#: The history column saying where each change comes from.
HISTORY_SOURCE = "HistorySource"
_VALUES = {
    "price_change": ("PreviousListPrice", "ListPrice"),
    "status_change": ("PreviousStatus", "StandardStatus"),
}


def change(lid: Any, kind: str, when: Any, old: Any, new: Any) -> dict[str, Any]:
    """One change record in the platform feed's fields (``kind``: price_change, status_change)."""
    before, after = _VALUES[kind]
    return {"ListingId": lid, "ChangeType": kind, "ChangeTimestamp": when, before: old, after: new}


def history_frame(changes: list[dict[str, Any]], provenance: list[str]) -> pd.DataFrame:
    """Change records (the platform feed's fields) as a history frame, ``provenance`` each."""
    frame = changes_from_pages([json.dumps({"changes": changes}).encode()])
    if not len(frame):
        frame = empty_frame(ListingChange)
    return frame.assign(**{HISTORY_SOURCE: pd.Series(provenance, dtype="str", index=frame.index)})


def number(text: Any) -> float | None:
    """A HistoryTransactional value as a number (None when it is none).

    >>> number("412000"), number(None)
    (412000.0, None)
    """
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def synthesised(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """Price and status changes between two versions of the same listings."""
    old = before.set_index("ListingId")
    changes, provenance = [], []
    for row in after.itertuples(index=False):
        lid = row.ListingId
        if lid not in old.index:
            continue
        prev = old.loc[lid]
        when = row.ModificationTimestamp.isoformat().replace("+00:00", "Z")
        if pd.notna(row.ListPrice) and prev["ListPrice"] != row.ListPrice:
            price = float(prev["ListPrice"]), float(row.ListPrice)
            changes.append(change(lid, "price_change", when, *price))
            provenance.append("synthesised")
        status = str(prev["StandardStatus"]), str(row.StandardStatus)
        if status[0] != status[1]:
            changes.append(change(lid, "status_change", when, *status))
            provenance.append("synthesised")
    return history_frame(changes, provenance)


def removals(market: pd.DataFrame, hidden: dict[str, str], provenance: str) -> pd.DataFrame:
    """Removal records of the market's listings in ``hidden`` ({ListingId: when})."""
    gone = market[market["ListingId"].isin(list(hidden))]
    changes = [
        change(lid, "status_change", hidden[lid], str(status), None)
        for lid, status in zip(gone["ListingId"], gone["StandardStatus"], strict=True)
    ]
    return history_frame(changes, [provenance] * len(changes))


def merge_versions(
    market: pd.DataFrame,
    history: pd.DataFrame,
    fresh: pd.DataFrame,
    hidden: Mapping[str, str],
    changes: pd.DataFrame,
    flag: str = "MlgCanView",
) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """An incremental sync's step: ``fresh`` rows replace the market's by ListingId, ``hidden``
    ones ({ListingId: ModificationTimestamp}, flagged for deletion) leave it and are written to
    the history as removals, ``changes`` are appended. Returns (market, history, rows removed).
    DaysOnMarket of open listings grows with the server's clock (the platform sync's rule)."""
    gone = market["ListingId"].isin(list(hidden))
    removed = removals(market, dict(hidden), f"removed: {flag} false")
    history = append_history(history, append_history(changes, removed))
    drop = gone | market["ListingId"].isin(list(fresh["ListingId"]))
    parts = [f for f in (market[~drop], fresh) if len(f)]
    if not parts:
        return market.iloc[:0], history, int(gone.sum())
    merged = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    merged = merged.sort_values("ListingId").reset_index(drop=True)
    merged = grow_days_on_market(merged, data_time_of(fresh, changes))
    return merged, history, int(gone.sum())


def sync_changes_of(
    before: pd.DataFrame,
    after: pd.DataFrame,
    history_before: pd.DataFrame,
    history_after: pd.DataFrame,
    quarantine: pd.DataFrame,
) -> pd.DataFrame:
    """What a sync changed (``client.last_load.changes``: the platform sync's frame, one row per
    listing and kind): the history's new records, the listings new to the market, and those
    that left it (removals: ``removed``, not a status change to nothing)."""
    real = ~history_after[HISTORY_SOURCE].astype("str").str.startswith("removed")
    feed = history_after[real.to_numpy()].drop(columns=HISTORY_SOURCE)
    history_before = history_before.drop(columns=HISTORY_SOURCE)
    return changes_between(before, after, history_before, feed, quarantine)
