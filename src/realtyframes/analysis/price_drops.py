"""Price-drop reports: which listings cut their price, by how much, where, how long on market.

Definitions (and their windows) are in docs/metrics.md.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from realtyframes.analysis._common import (
    AnalysisInputError,
    as_key,
    check_columns,
    check_frame,
    check_number,
    check_segment,
    isin,
    naive_bound,
    naive_utc,
    normalize_by,
    safe_div,
    segment_labels,
    segment_mask,
    to_float,
    to_timestamp,
    to_utc,
)
from realtyframes.errors import DataQualityWarning

#: Columns copied from the listings frame into each price-drop row (null when the frame lacks one).
DESCRIPTIVE_COLUMNS: tuple[str, ...] = (
    "UnparsedAddress",
    "City",
    "PostalCode",
    "PropertyType",
    "PropertySubType",
    "StandardStatus",
)

#: Columns of :func:`price_drops`' result, in order.
PRICE_DROP_COLUMNS: tuple[str, ...] = (
    "ListingId",
    *DESCRIPTIVE_COLUMNS,
    "previous_price",
    "current_price",
    "drop_amount",
    "drop_pct",
    "drop_count",
    "first_price",
    "total_drop_amount",
    "total_drop_pct",
    "last_drop_at",
    "DaysOnMarket",
)

#: Columns of :func:`price_drop_summary`' result, in order.
PRICE_DROP_SUMMARY_COLUMNS: tuple[str, ...] = (
    "price_drops",
    "active_listings",
    "active_with_price_drop",
    "pct_active_with_price_drop",
    "median_drop_pct",
    "median_drop_amount",
)

_CHANGE_COLUMNS = ("ListingId", "ChangeType", "ChangeTimestamp", "PreviousListPrice", "ListPrice")


def price_drops(
    listings: pd.DataFrame,
    changes: pd.DataFrame | None = None,
    since: Any = None,
    min_drop_pct: float = 0.0,
) -> pd.DataFrame:
    """One row per listing whose price was cut, biggest cut (``drop_pct``) first.

    Without ``changes`` a cut is ``PreviousListPrice > ListPrice`` on the listing (the last price
    change); ``last_drop_at`` is then the listing's ``MajorChangeTimestamp`` and ``drop_count`` 1.
    With ``changes`` (the change feed or the sync history) every ``price_change`` to a lower price is
    a cut; per listing: the most recent cut (``previous_price`` -> ``current_price``), the number
    of cuts, the first price seen in the feed and the total cut since it (net of any raises).
    Changes of listings absent from ``listings`` are ignored; duplicate change records count once.
    Empty ``changes`` fall back to the listing fields, with a ``DataQualityWarning``;
    ``attrs["source"]`` says which was used (``"changes"`` or ``"listing fields"``).

    ``since`` keeps cuts after it (naive = UTC); ``min_drop_pct`` (a fraction, 0.05 = 5%) keeps
    cuts at or above it. Both filter individual cuts before they are counted.

    Columns: ``ListingId``, ``UnparsedAddress``, ``City``, ``PostalCode``, ``PropertyType``,
    ``PropertySubType``, ``StandardStatus`` (copied from ``listings``), ``previous_price``,
    ``current_price``, ``drop_amount`` (previous - current), ``drop_pct`` (drop_amount / previous),
    ``drop_count``, ``first_price``, ``total_drop_amount`` (first - latest price),
    ``total_drop_pct`` (total_drop_amount / first_price), ``last_drop_at`` (UTC), ``DaysOnMarket``.

    >>> drops = rf.price_drops(listings, changes, since="2024-05-01", min_drop_pct=0.05)  # doctest: +SKIP
    >>> drops[["UnparsedAddress", "drop_pct", "drop_count"]].head()  # doctest: +SKIP
    """
    func = "price_drops"
    check_frame(listings, "listings", func)
    min_pct = check_number(
        min_drop_pct, "min_drop_pct", func, low=0.0, high=1.0, hint=" (a fraction: 0.05 = 5%)"
    )
    since_ts = to_timestamp(since, "since", func)
    if changes is not None and check_frame(changes, "changes", func).empty:
        warnings.warn(
            "price_drops(): `changes` is empty, so the cuts come from the listing fields "
            "(PreviousListPrice > ListPrice: the last price change of each listing). A first "
            "client.sync_listings() backfills the history; pass client.listing_history(...)",
            DataQualityWarning,
            stacklevel=2,
        )
        changes = None
    source = "listing fields" if changes is None else "changes"
    if changes is None:
        needed = ["ListingId", "ListPrice", "PreviousListPrice"]
        if since_ts is not None:
            needed.append("MajorChangeTimestamp")
        check_columns(listings, needed, "listings", func)
    else:
        check_frame(changes, "changes", func)
        check_columns(listings, ["ListingId"], "listings", func)
        check_columns(changes, _CHANGE_COLUMNS, "changes", func)

    if listings["ListingId"].isna().any():
        raise AnalysisInputError(f"{func}(): `listings` has rows without a ListingId")
    keys = pd.Index(listings["ListingId"].astype("str").to_numpy(dtype=object), dtype=object)
    if not keys.is_unique:
        shown = ", ".join(repr(k) for k in keys[keys.duplicated()].unique()[:5])
        raise AnalysisInputError(
            f"{func}(): `listings` must hold one row per ListingId; duplicated: {shown}"
        )

    if changes is None:
        cuts = _cuts_from_listings(listings, since_ts, min_pct, func)
    else:
        cuts = _cuts_from_changes(changes, keys, since_ts, min_pct, func)
    out = _with_listing_columns(cuts, listings, keys, func)
    out.attrs["source"] = source
    return out


def _cuts_from_listings(
    listings: pd.DataFrame,
    since: pd.Timestamp | None,
    min_pct: float,
    func: str,
) -> pd.DataFrame:
    prev = to_float(listings["PreviousListPrice"], "PreviousListPrice", func).to_numpy()
    cur = to_float(listings["ListPrice"], "ListPrice", func).to_numpy()
    if "MajorChangeTimestamp" in listings.columns:
        at = to_utc(listings["MajorChangeTimestamp"], "MajorChangeTimestamp", func)
    else:
        at = pd.Series(pd.NaT, index=listings.index, dtype="datetime64[us, UTC]")
    with np.errstate(invalid="ignore"):
        is_cut = (prev > cur) & (prev > 0)
    pct = safe_div(prev - cur, prev)
    keep = is_cut & (pct >= min_pct)
    at_values = naive_utc(at)
    if since is not None:
        keep &= at_values > naive_bound(since)
    return pd.DataFrame(
        {
            "_pos": np.flatnonzero(keep),
            "previous_price": prev[keep],
            "current_price": cur[keep],
            "drop_amount": (prev - cur)[keep],
            "drop_pct": pct[keep],
            "drop_count": np.ones(int(keep.sum()), dtype="int64"),
            "first_price": prev[keep],
            "total_drop_amount": (prev - cur)[keep],
            "total_drop_pct": pct[keep],
            "last_drop_at": at_values[keep],
        }
    )


def _cuts_from_changes(
    changes: pd.DataFrame,
    known: pd.Index,
    since: pd.Timestamp | None,
    min_pct: float,
    func: str,
) -> pd.DataFrame:
    is_price = isin(changes["ChangeType"], ["price_change"])
    ch = changes.loc[is_price, list(_CHANGE_COLUMNS)]
    ch = pd.DataFrame(
        {
            "_pos": known.get_indexer(ch["ListingId"].astype("str").to_numpy(dtype=object)),
            "at": naive_utc(to_utc(ch["ChangeTimestamp"], "ChangeTimestamp", func)),
            "old": to_float(ch["PreviousListPrice"], "PreviousListPrice", func).to_numpy(),
            "new": to_float(ch["ListPrice"], "ListPrice", func).to_numpy(),
        }
    )
    ch = ch[ch["_pos"].to_numpy() >= 0]  # changes of listings not in `listings` are ignored
    if since is not None:
        ch = ch[ch["at"].to_numpy() > naive_bound(since)]
    ch = ch.drop_duplicates().sort_values(["_pos", "at"], kind="stable")
    with np.errstate(invalid="ignore"):
        is_cut = ((ch["old"] > ch["new"]) & (ch["old"] > 0)).to_numpy()
    ch["pct"] = safe_div(ch["old"] - ch["new"], ch["old"])
    qualifying = ch[is_cut & (ch["pct"] >= min_pct).to_numpy()]

    g = ch.groupby("_pos", sort=False)
    first_price = g["old"].first()  # first price seen (first non-null PreviousListPrice)
    latest_price = g["new"].last()  # latest price seen
    last = qualifying.groupby("_pos", sort=False).tail(1).set_index("_pos")
    counts = qualifying.groupby("_pos", sort=False).size()

    first = first_price.reindex(last.index).to_numpy()
    total = first - latest_price.reindex(last.index).to_numpy()
    return pd.DataFrame(
        {
            "_pos": last.index.to_numpy(),
            "previous_price": last["old"].to_numpy(),
            "current_price": last["new"].to_numpy(),
            "drop_amount": (last["old"] - last["new"]).to_numpy(),
            "drop_pct": last["pct"].to_numpy(),
            "drop_count": counts.reindex(last.index).to_numpy(dtype="int64"),
            "first_price": first,
            "total_drop_amount": total,
            "total_drop_pct": safe_div(total, first),
            "last_drop_at": last["at"].to_numpy(),
        }
    )


def _whole_days(days: pd.Series) -> pd.Series:
    """DaysOnMarket as the loaders type it (nullable Int64) when every value is whole."""
    known = days.dropna()
    if len(known) and not (known == known.round()).all():
        return days
    return days.astype("Int64")


def _with_listing_columns(
    cuts: pd.DataFrame, listings: pd.DataFrame, keys: pd.Index, func: str
) -> pd.DataFrame:
    pos = cuts["_pos"].to_numpy()
    n = len(cuts)
    out: dict[str, Any] = {"ListingId": listings["ListingId"].iloc[pos].reset_index(drop=True)}
    for col in DESCRIPTIVE_COLUMNS:
        if col in listings.columns:
            out[col] = listings[col].iloc[pos].reset_index(drop=True)
        else:
            out[col] = pd.Series(np.nan, index=range(n), dtype="str")
    for col in PRICE_DROP_COLUMNS:
        if col in cuts.columns:
            out[col] = cuts[col].reset_index(drop=True)
    out["last_drop_at"] = out["last_drop_at"].astype("datetime64[us]").dt.tz_localize("UTC")
    if "DaysOnMarket" in listings.columns:
        dom = to_float(listings["DaysOnMarket"], "DaysOnMarket", func)
        out["DaysOnMarket"] = _whole_days(dom.iloc[pos].reset_index(drop=True))
    else:
        out["DaysOnMarket"] = pd.Series(pd.NA, index=range(n), dtype="Int64")
    result = pd.DataFrame(out, index=range(n))
    # biggest cut first; ties in ListingId order so the result is deterministic
    order = np.lexsort((keys.to_numpy()[pos], -cuts["drop_pct"].to_numpy()))
    return result.iloc[order].reset_index(drop=True)[list(PRICE_DROP_COLUMNS)]


def price_drop_summary(
    drops_or_listings: pd.DataFrame,
    by: str | Sequence[str] = "City",
    *,
    listings: pd.DataFrame | None = None,
    segment: str = "sale",
) -> pd.DataFrame:
    """Per market: the count of listings with a cut, the share of active listings with one, and
    the median cut.

    Give either a listings frame (cuts are ``PreviousListPrice > ListPrice``, as in
    :func:`price_drops` without changes) or the result of :func:`price_drops`; with a drops frame,
    pass ``listings=`` too for the active-listing share (else those columns are NA). ``segment``
    ('sale', 'rent' or 'both') keeps sale and rent apart, as in ``market_summary``.

    Columns: ``price_drops`` (listings with a cut, any status), ``active_listings``,
    ``active_with_price_drop``, ``pct_active_with_price_drop`` (a fraction), ``median_drop_pct``,
    ``median_drop_amount`` (USD); indexed by ``by`` (and ``segment`` first when 'both').

    >>> rf.price_drop_summary(listings, by="City")  # doctest: +SKIP
    >>> rf.price_drop_summary(rf.price_drops(listings, changes), listings=listings)  # doctest: +SKIP
    """
    func = "price_drop_summary"
    frame = check_frame(drops_or_listings, "drops_or_listings", func)
    keys = normalize_by(by, func)
    segment = check_segment(segment, func)
    is_drops = "drop_pct" in frame.columns

    if is_drops:
        drops, cut_pct, cut_amount, base, base_cut = _from_drops(frame, keys, listings, segment)
    else:
        drops, cut_pct, cut_amount, base, base_cut = _from_listings(frame, keys, segment)

    seg_col = ["segment"] if segment == "both" else []

    def keyed(df: pd.DataFrame, values: dict[str, Any]) -> pd.DataFrame:
        cols: dict[str, Any] = {}
        if seg_col:
            cols["segment"] = segment_labels(df["PropertyType"])
        cols.update({k: as_key(df[k]) for k in keys})
        work = pd.DataFrame(cols, index=df.index)
        for name, v in values.items():
            work[name] = np.asarray(v)
        return work

    names = seg_col + keys
    work = keyed(drops, {"__pct": cut_pct, "__amount": cut_amount})
    out = work.groupby(names, dropna=False, sort=True).agg(
        price_drops=("__pct", "size"),
        median_drop_pct=("__pct", "median"),
        median_drop_amount=("__amount", "median"),
    )
    if base is not None:
        active = isin(base["StandardStatus"], ["Active"])
        work = keyed(base, {"__active": active, "__active_cut": active & base_cut})
        actives = work.groupby(names, dropna=False, sort=True).agg(
            active_listings=("__active", "sum"), active_with_price_drop=("__active_cut", "sum")
        )
        out = out.join(actives, how="outer")
        out["price_drops"] = out["price_drops"].fillna(0)
        out = out.astype({"active_listings": "Int64", "active_with_price_drop": "Int64"})
        out["pct_active_with_price_drop"] = safe_div(
            out["active_with_price_drop"].astype("float64"),
            out["active_listings"].astype("float64"),
        )
    else:
        out["active_listings"] = pd.array([pd.NA] * len(out), dtype="Int64")
        out["active_with_price_drop"] = pd.array([pd.NA] * len(out), dtype="Int64")
        out["pct_active_with_price_drop"] = np.nan
    out = out.astype(
        {"price_drops": "int64", "median_drop_pct": "float64", "median_drop_amount": "float64"}
    )[list(PRICE_DROP_SUMMARY_COLUMNS)]
    out.attrs = {"segment": segment}
    return out


_Cuts = tuple[pd.DataFrame, pd.Series, pd.Series, "pd.DataFrame | None", Any]


def _from_drops(
    frame: pd.DataFrame, keys: list[str], listings: pd.DataFrame | None, segment: str
) -> _Cuts:
    """The cuts of a ``price_drops`` result, and the listings (``listings=``) for the shares."""
    func = "price_drop_summary"
    check_columns(frame, [*keys, "PropertyType", "drop_pct", "drop_amount"], "drops", func)
    drops = frame[segment_mask(frame["PropertyType"], segment)]
    cut_pct = to_float(drops["drop_pct"], "drop_pct", func)
    cut_amount = to_float(drops["drop_amount"], "drop_amount", func)
    base, base_cut = listings, None
    if base is not None:
        check_frame(base, "listings", func)
        check_columns(
            base, [*keys, "ListingId", "StandardStatus", "PropertyType"], "listings", func
        )
        check_columns(frame, ["ListingId"], "drops", func)
        base = base[segment_mask(base["PropertyType"], segment)]
        cut_ids = pd.Index(drops["ListingId"].astype("str").unique())
        base_cut = cut_ids.get_indexer(base["ListingId"].astype("str")) >= 0
    return drops, cut_pct, cut_amount, base, base_cut


def _from_listings(frame: pd.DataFrame, keys: list[str], segment: str) -> _Cuts:
    """The cuts of a listings frame: PreviousListPrice above ListPrice."""
    func = "price_drop_summary"
    need = [*keys, "ListPrice", "PreviousListPrice", "StandardStatus", "PropertyType"]
    check_columns(frame, need, "drops_or_listings", func)
    base = frame[segment_mask(frame["PropertyType"], segment)]
    prev = to_float(base["PreviousListPrice"], "PreviousListPrice", func)
    cur = to_float(base["ListPrice"], "ListPrice", func)
    with np.errstate(invalid="ignore"):
        base_cut = ((prev > cur) & (prev > 0)).to_numpy()
    drops = base[base_cut]
    cut_pct = pd.Series(safe_div(prev - cur, prev)[base_cut], index=drops.index)
    return drops, cut_pct, (prev - cur)[base_cut], base, base_cut
