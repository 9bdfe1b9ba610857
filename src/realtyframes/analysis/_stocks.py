"""Point-in-time stocks for :func:`realtyframes.analysis.trends.market_trends`.

Each listing's status is a timeline: Active from its ``OriginalEntryTimestamp``, then each
``status_change`` of the history at its ``ChangeTimestamp`` (and Closed at ``CloseDate`` when the
history has no closing). A listing counts as Active (Pending) at a period's end when its status at
that instant is Active (Pending): it entered before, and had not gone Pending or Closed by then.
Without a history the timeline is estimated: Active from entry, the current status from
``MajorChangeTimestamp`` (``CloseDate`` for Closed listings).

Stocks are counted with a difference array per market over the period ends (``searchsorted`` +
``cumsum``), so the cost grows with the number of status intervals, not listings × periods.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["cuts_in_periods", "status_intervals", "stocks_at"]

_MARKET = "_market"
_PERIOD = "_period"
_NEVER = pd.Timestamp.max.tz_localize("UTC").floor("us")


def _events_from_history(listing: pd.DataFrame, history: pd.DataFrame) -> pd.DataFrame:
    status = history[history["ChangeType"].astype("string") == "status_change"]
    events = pd.DataFrame(
        {
            "ListingId": status["ListingId"].astype("string").to_numpy(),
            "at": pd.to_datetime(status["ChangeTimestamp"], utc=True).to_numpy(),
            "status": status["StandardStatus"].astype("string").to_numpy(),
        }
    )
    events = events[events["ListingId"].isin(listing["ListingId"]).to_numpy()]
    # a closing the history does not show (e.g. it predates the history) comes from CloseDate
    closings = set(events.loc[(events["status"] == "Closed").to_numpy(), "ListingId"])
    closed = listing[
        (listing["status"] == "Closed").to_numpy()
        & listing["closed_at"].notna().to_numpy()
        & ~listing["ListingId"].isin(closings).to_numpy()
    ]
    extra = pd.DataFrame(
        {"ListingId": closed["ListingId"], "at": closed["closed_at"], "status": "Closed"}
    )
    return pd.concat([events, extra], ignore_index=True)


def _events_estimated(listing: pd.DataFrame) -> pd.DataFrame:
    moved = listing[(listing["status"] != "Active").to_numpy() & listing["status"].notna()]
    at = moved["major"].where(
        ~((moved["status"] == "Closed") & moved["closed_at"].notna()), moved["closed_at"]
    )
    return pd.DataFrame({"ListingId": moved["ListingId"], "at": at, "status": moved["status"]})


def status_intervals(
    listing: pd.DataFrame, history: pd.DataFrame | None
) -> tuple[pd.DataFrame, bool]:
    """Each listing's status intervals ``[start, stop)`` with its market; and whether they were
    estimated (no history, or an empty one)."""
    estimated = history is None or len(history) == 0
    entered = listing[listing["entered"].notna().to_numpy()]
    moves = _events_estimated(entered) if estimated else _events_from_history(entered, history)
    entry = pd.DataFrame(
        {"ListingId": entered["ListingId"], "at": entered["entered"], "status": "Active"}
    )
    events = pd.concat([entry.assign(_order=0), moves.assign(_order=1)], ignore_index=True)
    events = events[events["at"].notna().to_numpy()]
    events["at"] = pd.to_datetime(events["at"], utc=True).astype("datetime64[us, UTC]")
    first = entry.set_index("ListingId")["at"]
    start = first.reindex(events["ListingId"]).to_numpy()
    events = events[(events["at"].to_numpy() >= start)]  # nothing before the listing's entry
    events = events.sort_values(["ListingId", "at", "_order"], kind="stable")
    same = events["ListingId"].to_numpy()
    stop = events["at"].shift(-1)
    last = np.append(same[1:] != same[:-1], True)
    stop[last] = _NEVER
    market = entered.set_index("ListingId")[_MARKET]
    intervals = pd.DataFrame(
        {
            "ListingId": same,
            _MARKET: market.reindex(same).to_numpy(),
            "status": events["status"].astype("string").to_numpy(),
            "start": events["at"].to_numpy(),
            "stop": stop.to_numpy(),
        }
    )
    return intervals[(intervals["stop"] > intervals["start"]).to_numpy()], estimated


def stocks_at(
    intervals: pd.DataFrame, ends: pd.DatetimeIndex, markets: pd.Index, periods: pd.PeriodIndex
) -> pd.DataFrame:
    """Active and Pending listings at each period end, per market: (market, period) rows."""
    out = {}
    for status, name in (("Active", "active_listings"), ("Pending", "pending_listings")):
        part = intervals[(intervals["status"] == status).to_numpy()]
        m = markets.get_indexer(part[_MARKET])
        ok = m >= 0
        at = ends.tz_convert(None).as_unit("us").to_numpy()
        lo = np.searchsorted(at, part["start"].dt.tz_convert(None).to_numpy()[ok], side="left")
        hi = np.searchsorted(at, part["stop"].dt.tz_convert(None).to_numpy()[ok], side="left")
        diff = np.zeros((len(markets), len(ends) + 1), dtype="int64")
        np.add.at(diff, (m[ok], lo), 1)
        np.add.at(diff, (m[ok], hi), -1)
        out[name] = np.cumsum(diff, axis=1)[:, : len(ends)].reshape(-1)
    index = pd.MultiIndex.from_product([markets, periods], names=[_MARKET, _PERIOD])
    return pd.DataFrame(out, index=index)


def _cut_events(listing: pd.DataFrame, history: pd.DataFrame | None) -> pd.DataFrame:
    """Price cuts: the history's price changes down, else (estimated) listings whose
    PreviousListPrice is above ListPrice, at their MajorChangeTimestamp."""
    if history is None or len(history) == 0:
        cut = listing[(listing["prev_list"] > listing["list"]).to_numpy()]
        return pd.DataFrame({"ListingId": cut["ListingId"], "at": cut["major"]})
    price = history[history["ChangeType"].astype("string") == "price_change"]
    down = pd.to_numeric(price["ListPrice"], errors="coerce") < pd.to_numeric(
        price["PreviousListPrice"], errors="coerce"
    )
    cut = price[down.to_numpy()]
    return pd.DataFrame(
        {
            "ListingId": cut["ListingId"].astype("string").to_numpy(),
            "at": pd.to_datetime(cut["ChangeTimestamp"], utc=True).to_numpy(),
        }
    )


def cuts_in_periods(
    listing: pd.DataFrame,
    history: pd.DataFrame | None,
    intervals: pd.DataFrame,
    periods: pd.PeriodIndex,
    freq: str,
) -> pd.DataFrame:
    """``price_drops`` (listings cut in the period) and ``pct_active_with_price_drop`` (of the
    listings Active at the period's end, the share cut in the period) per (market, period)."""
    from realtyframes.analysis.trends import FREQS

    cuts = _cut_events(listing, history).dropna()
    cuts = cuts.merge(listing[["ListingId", _MARKET]], on="ListingId", how="inner")
    at = pd.to_datetime(cuts["at"], utc=True)
    cuts[_PERIOD] = at.dt.tz_localize(None).dt.to_period(FREQS[freq])
    cuts = cuts[cuts[_PERIOD].isin(periods)].drop_duplicates(["ListingId", _PERIOD])
    end = cuts[_PERIOD].dt.end_time.dt.tz_localize("UTC").astype("datetime64[us, UTC]")
    cuts["end"] = end.to_numpy()
    active = intervals[(intervals["status"] == "Active").to_numpy()]
    joined = cuts.merge(active[["ListingId", "start", "stop"]], on="ListingId", how="inner")
    still = joined[(joined["start"] <= joined["end"]) & (joined["end"] < joined["stop"])]
    drops = cuts.groupby([_MARKET, _PERIOD], sort=False).size()
    active_cut = still.groupby([_MARKET, _PERIOD], sort=False)["ListingId"].nunique()
    return pd.DataFrame({"price_drops": drops, "_active_cut": active_cut})
