"""The market as it stood at an earlier time, rebuilt from the history: ``market_at``; and the
one as-of rule of every market figure: ``market_as_of``.

A market frame says how each listing is *now*; the history says how it got there. ``market_at``
winds it back: listings entered after ``as_of`` are left out; each other listing gets the status
and list price it had at ``as_of`` (its last status and price change up to then; before its first
price change, that change's old price), close data only if it had closed by then, DaysOnMarket
counted to ``as_of``, and its change timestamps capped there. A report "as of" an earlier date is then the same
computation on this frame, so it gives the numbers a run on that date gave.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from realtyframes._deprecation import renamed
from realtyframes.analysis._common import check_columns, check_frame, to_timestamp, to_utc

__all__ = ["market_as_of", "market_at"]

_NEEDED = ("ListingId", "StandardStatus", "ListPrice", "OriginalEntryTimestamp", "CloseDate")


def _last_before(events: pd.DataFrame, when: pd.Timestamp) -> pd.DataFrame:
    """Per listing, its last event at or before ``when`` (events sorted by time)."""
    done = events[events["ChangeTimestamp"] <= when]
    return done.drop_duplicates("ListingId", keep="last").set_index("ListingId")


@renamed(when="as_of")
def market_at(market: pd.DataFrame, history: pd.DataFrame, as_of: Any) -> pd.DataFrame:
    """The market frame as it stood at ``as_of`` (naive = UTC; a date means the end of that day).
    (``when=`` is the old name of ``as_of``: it still works, with a DeprecationWarning.)

    >>> earlier = rf.analysis.market_at(market, history, "2026-03-31")  # doctest: +SKIP
    >>> rf.market_summary(earlier, as_of="2026-03-31")  # doctest: +SKIP
    """
    func = "market_at"
    check_frame(market, "market", func)
    check_frame(history, "history", func)
    check_columns(market, _NEEDED, "market", func)
    at = to_timestamp(as_of, "as_of", func, end_of_day=True)
    entered = to_utc(market["OriginalEntryTimestamp"], "OriginalEntryTimestamp", func)
    out = market[(entered <= at).to_numpy()].copy()
    ids = out["ListingId"].astype("str")
    events = history.assign(
        ListingId=history["ListingId"].astype("str"),
        ChangeTimestamp=pd.to_datetime(history["ChangeTimestamp"], utc=True),
    ).sort_values("ChangeTimestamp", kind="stable")
    kind = events["ChangeType"].astype("str")
    status = _last_before(events[(kind == "status_change").to_numpy()], at)
    prices = events[(kind == "price_change").to_numpy()]
    price = _last_before(prices, at)
    later = prices[prices["ChangeTimestamp"] > at].drop_duplicates("ListingId", keep="first")
    later = later.set_index("ListingId")
    closed_at = to_utc(out["CloseDate"], "CloseDate", func)
    closed_by_then = (out["StandardStatus"].astype("str") == "Closed").to_numpy() & (
        closed_at <= at
    ).to_numpy()
    new_status = status["StandardStatus"].reindex(ids).astype("object").to_numpy()
    fallback = np.where(closed_by_then, "Closed", "Active")  # nothing seen yet: Active until closed
    seen = pd.notna(new_status)
    out["StandardStatus"] = np.where(seen & ~closed_by_then, new_status, fallback)
    out.loc[:, "StandardStatus"] = out["StandardStatus"].astype(market["StandardStatus"].dtype)
    _prices_at(out, ids, price, later)
    is_closed = (out["StandardStatus"].astype("str") == "Closed").to_numpy()
    if "ClosePrice" in out.columns:
        out.loc[~is_closed, "ClosePrice"] = np.nan
    out.loc[~is_closed, "CloseDate"] = pd.NaT
    _times_at(out, ids, events, at, entered[(entered <= at).to_numpy()], is_closed, func)
    out.attrs = {**market.attrs, "as_of": at}
    return out.reset_index(drop=True)


def _prices_at(out: pd.DataFrame, ids: pd.Series, price: pd.DataFrame, later: pd.DataFrame) -> None:
    """ListPrice and PreviousListPrice at the time: the last price change up to then, else the
    old price of the first one after (the listing's price until then)."""
    now = pd.to_numeric(price["ListPrice"], errors="coerce").reindex(ids).to_numpy(dtype="float64")
    before = pd.to_numeric(price["PreviousListPrice"], errors="coerce").reindex(ids)
    first_old = pd.to_numeric(later["PreviousListPrice"], errors="coerce").reindex(ids)
    current = pd.to_numeric(out["ListPrice"], errors="coerce").to_numpy(dtype="float64")
    out["ListPrice"] = np.where(
        ~np.isnan(now), now, np.where(first_old.notna().to_numpy(), first_old.to_numpy(), current)
    )
    if "PreviousListPrice" in out.columns:
        out["PreviousListPrice"] = before.to_numpy(dtype="float64")


def _times_at(
    out: pd.DataFrame,
    ids: pd.Series,
    events: pd.DataFrame,
    at: pd.Timestamp,
    entered: pd.Series,
    is_closed: np.ndarray,
    func: str,
) -> None:
    """Change timestamps capped at the time (the last change up to then, else the entry), and
    DaysOnMarket counted to the time for listings not closed by then."""
    done = events[events["ChangeTimestamp"] <= at]
    last = done.groupby("ListingId", sort=False)["ChangeTimestamp"].max().reindex(ids)
    latest = last.fillna(pd.Series(entered.to_numpy(), index=last.index))
    for column in ("MajorChangeTimestamp", "ModificationTimestamp"):
        if column in out.columns:
            kept = to_utc(out[column], column, func)
            capped = kept.where((kept <= at).to_numpy(), latest.to_numpy())
            out[column] = capped.astype(kept.dtype).to_numpy()
    if "DaysOnMarket" in out.columns:
        days = ((at - entered) // pd.Timedelta(days=1)).to_numpy(dtype="float64")
        kept_days = pd.to_numeric(out["DaysOnMarket"], errors="coerce").to_numpy(dtype="float64")
        values = pd.Series(np.where(is_closed, kept_days, days), index=out.index)
        whole = str(out["DaysOnMarket"].dtype) == "Int64"
        out["DaysOnMarket"] = values.round().astype("Int64") if whole else values


def market_as_of(
    market: pd.DataFrame, history: pd.DataFrame | None = None, as_of: Any = None
) -> pd.DataFrame:
    """The market as of a day, by the one rule the report, the MCP server's market tools and a
    Python caller share, so the same market and day give the same figures everywhere.

    The rule: ``as_of`` a date means the end of that day (UTC), a timestamp itself, None the end
    of today (UTC; the report's default day). Not the newest timestamp in the data: a narrow
    scope's newest change may be days old, and its window would then end days before the
    report's (Miami Beach: 33 sales at a $1.82M median against the report's 32 at $1.86M). When
    ``history`` (of ``client.listing_history``) has changes after that time, the market is
    rebuilt as it stood then (:func:`market_at`); else listings entered later are left out. The
    time used is in ``attrs["as_of"]``: pass it on as the window's end.

    >>> at = rf.analysis.market_as_of(market, history, "2026-06-30")  # doctest: +SKIP
    >>> rf.market_summary(at, as_of=at.attrs["as_of"])  # doctest: +SKIP
    """
    func = "market_as_of"
    check_frame(market, "market", func)
    check_columns(market, _NEEDED, "market", func)
    day = pd.Timestamp.now(tz="UTC").date() if as_of is None else as_of
    at = to_timestamp(day, "as_of", func, end_of_day=True)
    if history is not None and len(history):
        check_frame(history, "history", func)
        changes = pd.to_datetime(history["ChangeTimestamp"], utc=True)
        if at < changes.max():
            return market_at(market, history, at)
    entered = to_utc(market["OriginalEntryTimestamp"], "OriginalEntryTimestamp", func)
    out = market[(entered <= at).to_numpy()].reset_index(drop=True)
    out.attrs = {**market.attrs, "as_of": at}
    return out
