"""Computing a market report (pure): the analysis functions on :class:`MarketFrames`.

``rf.market_summary`` / ``compare_markets`` / ``price_drops`` / ``price_drop_summary`` /
``traffic_summary`` / ``lead_funnel`` -> :class:`MarketReport`. No I/O: the same frames and
options give the same report.

>>> report = compute_market_report(frames, MarketReportOptions(as_of="2026-06-30"))  # doctest: +SKIP
"""

from __future__ import annotations

import datetime as dt
import difflib
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from realtyframes.analysis import (
    REFERENCE_LABEL,
    SALE_TYPES,
    SAMPLE_SIZE_OF,
    LeadFunnel,
    TrafficSummary,
    compare_markets,
    comps,
    lead_funnel,
    market_as_of,
    market_at,
    market_summary,
    market_trends,
    price_drop_summary,
    price_drops,
    price_index,
    traffic_summary,
)
from realtyframes.errors import AnalysisInputError, DataQualityWarning
from realtyframes.report.load import MarketFrames
from realtyframes.report.options import MarketReportOptions
from realtyframes.report.trend_views import trend_views

__all__ = [
    "COVERAGE_DAYS",
    "MarketReport",
    "check_comps",
    "compute_market_report",
    "covered_from",
    "covers",
    "pick_markets",
]


@dataclass(frozen=True)
class MarketReport:
    """Everything the report shows, computed by the analysis functions from :class:`MarketFrames`.

    - ``summary``: ``market_summary(listings, by, as_of, window_days, compare_previous=True)``
    - ``comparison``: ``compare_markets(listings, markets, by, as_of, window_days,
      compare_previous=True)`` for the ``markets`` shown (plus "All markets")
    - ``drops``: ``price_drops(listings, history, since=window_start)``
    - ``drop_summary``: ``price_drop_summary(drops, by, listings=listings)``
    - ``traffic``: ``traffic_summary(analytics)`` (None without analytics)
    - ``funnel``: ``lead_funnel(contacts)`` (None without contacts)
    - ``trends`` / ``trend_total``: ``market_trends(freq="M")`` by market / of the whole market,
      from the first whole covered month; ``quarters`` / ``quarters_by``: the same by quarter
      (the medians and their YoY on three times the sales), from the first whole covered quarter
      up to ``trend_months`` + 12 months back (so the quarters shown have their year-earlier one)
    - ``index``: ``price_index(method="hedonic", freq="Q")`` of the sales from the first whole
      covered quarter, 100 at its base quarter (rf.price_index's default: the best-covered
      quarter of the first year), beside the quarter's median sale price, its n and the median
      indexed to the same base
    - ``weekly`` / ``seasonal`` (or ``seasonal_notice``: why not) / ``tiers``: the recent weeks,
      the covered months seasonally adjusted, the latest complete quarter's price tiers
      (:mod:`realtyframes.report.trend_views`)
    - ``comps`` / ``comps_notes``: ``comps(listings, id, radius_km=3, months=12)`` per ``--comps``
      id; for an id that is not in the market or cannot be compared, why (shown in its place)
    - ``areas``: the client edition's pages, area name -> :class:`~realtyframes.report.areas.
      AreaUpdate` (None in the analyst edition, which computes the trends, index and views
      above instead; the client edition leaves those None)
    """

    options: MarketReportOptions
    frames: MarketFrames
    markets: list[Any]
    summary: pd.DataFrame
    comparison: pd.DataFrame
    drops: pd.DataFrame
    drop_summary: pd.DataFrame
    traffic: TrafficSummary | None
    funnel: LeadFunnel | None
    headline: dict[str, Any] = field(default_factory=dict)
    trends: pd.DataFrame | None = None
    trend_total: pd.DataFrame | None = None
    year_ago: pd.DataFrame | None = None
    subtypes: pd.DataFrame | None = None
    comps: dict[str, pd.DataFrame] = field(default_factory=dict)
    comps_notes: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    covered_from: pd.Timestamp | None = None
    quarters: pd.DataFrame | None = None
    quarters_by: pd.DataFrame | None = None
    index: pd.DataFrame | None = None
    weekly: pd.DataFrame | None = None
    seasonal: pd.DataFrame | None = None
    seasonal_notice: str | None = None
    tiers: pd.DataFrame | None = None
    areas: dict[str, Any] | None = None

    def covers(self, start: pd.Timestamp) -> bool:
        """Whether a period starting at ``start`` may be shown or compared with (the data
        cover the market from :attr:`covered_from` on; see :func:`covered_from`)."""
        return covers(start, self.covered_from)


def pick_markets(summary: pd.DataFrame, options: MarketReportOptions) -> list[Any]:
    """The markets shown side by side: the given cities (by City), else the largest markets by
    active listings plus homes sold in the window (ties by name), at most ``max_markets``."""
    limit = options.areas or options.max_markets  # a client pack compares its areas
    if options.cities and options.by == "City":
        return list(options.cities)[:limit]
    if summary.empty:
        return []
    size = (summary["active_listings"] + summary["homes_sold"]).astype("int64")
    order = pd.DataFrame({"size": size.to_numpy(), "name": [str(k) for k in summary.index]})
    order.index = summary.index
    order = order.sort_values(["size", "name"], ascending=[False, True], kind="stable")
    return list(order.index[:limit])


def _active_sales(listings: pd.DataFrame, drops: pd.DataFrame) -> pd.DataFrame:
    """The cuts of active for-sale listings (the price-drop tables' population)."""
    if listings.empty or drops.empty:
        return drops
    active = listings["StandardStatus"].astype("str").to_numpy() == "Active"
    sale = listings["PropertyType"].astype("str").isin(SALE_TYPES).to_numpy()
    ids = set(listings.loc[active & sale, "ListingId"].astype("str"))
    kept = drops[drops["ListingId"].astype("str").isin(ids).to_numpy()].reset_index(drop=True)
    kept.attrs = dict(drops.attrs)
    return kept


def thin(table: pd.DataFrame, min_sample: int) -> pd.DataFrame:
    """A metrics-as-rows table's cells whose sample (``SAMPLE_SIZE_OF``) is below
    ``min_sample``: a boolean frame of the same shape (True: show "–")."""
    out = pd.DataFrame(False, index=table.index, columns=table.columns)
    for metric, count in SAMPLE_SIZE_OF.items():
        if metric in table.index and count in table.index:
            n = pd.to_numeric(table.loc[count], errors="coerce").fillna(0)
            out.loc[metric] = (n < min_sample).to_numpy()
    return out


def _as_of_market(frames: MarketFrames, options: MarketReportOptions) -> pd.DataFrame:
    """The listings as they stood at the report's date, by the one as-of rule the MCP server's
    tools and the Python API share (:func:`~realtyframes.analysis.market_as_of`)."""
    if frames.listings.empty:
        return frames.listings
    return market_as_of(frames.listings, frames.history, options.as_of_timestamp)


#: Days after the oldest listing's entry before the data cover the market (listings entered
#: before the data's start are missing from the stocks and flows until the older ones would have
#: left): the one coverage rule of every comparison with the past (see :func:`covered_from`).
COVERAGE_DAYS = 180


def covered_from(listings: pd.DataFrame) -> pd.Timestamp | None:
    """When the data start to cover the market: :data:`COVERAGE_DAYS` after the oldest listing's
    entry (None without listings). A period is shown, or compared with, only when it starts
    then or later: a year-earlier window in the data's build-up months would make "sales
    doubled" out of a market that did not change.

    >>> covered_from(pd.DataFrame({"OriginalEntryTimestamp": ["2025-05-28T12:00:00Z"]}))
    Timestamp('2025-11-24 12:00:00+0000', tz='UTC')
    """
    if listings.empty or "OriginalEntryTimestamp" not in listings.columns:
        return None
    entered = pd.to_datetime(listings["OriginalEntryTimestamp"], utc=True).min()
    return None if pd.isna(entered) else entered + pd.Timedelta(days=COVERAGE_DAYS)


def covers(start: pd.Timestamp | None, listings_covered: pd.Timestamp | None) -> bool:
    """Whether a period that starts at ``start`` is covered by the data (see :func:`covered_from`).

    >>> covers(pd.Timestamp("2026-01-01", tz="UTC"), pd.Timestamp("2025-11-24", tz="UTC"))
    True
    """
    return start is not None and listings_covered is not None and start >= listings_covered


def _first_covered(
    frames: MarketFrames, options: MarketReportOptions, period: pd.DateOffset, months: int
) -> dt.date:
    """The first whole ``period`` (a month or quarter begin) both within ``months`` of the
    report's date and covered by the data (months before it would show a build-up that is not in
    the market; a period's YoY exists only when its year-earlier period is in the frame, so
    covered)."""
    start = period.rollforward((options.as_of_timestamp - pd.DateOffset(months=months)).normalize())
    covered = covered_from(frames.listings)
    if covered is not None:
        start = max(start, period.rollforward(covered.ceil("D")))
    return pd.Timestamp(start).date()


def _trends(frames: MarketFrames, options: MarketReportOptions) -> dict[str, Any]:
    """Monthly and quarterly trends, by market and of the whole market."""
    if frames.listings.empty:
        return {}
    history = frames.history if len(frames.history) else None
    out: dict[str, Any] = {}
    months = options.trend_months
    for freq, period, span, names in (
        ("M", pd.offsets.MonthBegin(), months, ("trends", "trend_total")),
        # a year more: the first quarters shown have their year-earlier quarter
        ("Q", pd.offsets.QuarterBegin(startingMonth=1), months + 12, ("quarters_by", "quarters")),
    ):
        start = _first_covered(frames, options, period, span)
        kw: dict[str, Any] = {"freq": freq, "start": start, "end": options.day,
                              "min_sample": options.min_sample}  # fmt: skip
        by_market = market_trends(frames.listings, history, by=options.by, **kw)
        total = market_trends(frames.listings, history, **kw)
        covered = covered_from(frames.listings)
        out[names[0]] = _no_partial_yoy(_covered_changes(by_market, covered))
        out[names[1]] = _no_partial_yoy(_covered_changes(total, covered))
    return out


def _covered_changes(trends: pd.DataFrame, covered: pd.Timestamp | None) -> pd.DataFrame:
    """No change against a period the data do not cover (:func:`covered_from`): market_trends
    reads the periods before ``start`` wherever the data have any, the report compares only
    with covered ones."""
    if covered is None or trends.empty:
        return trends
    begin = pd.to_datetime(trends["period_begin"]).dt.tz_localize("UTC")
    freq = trends.attrs.get("freq", "M")
    back = {"mom": pd.DateOffset(months=3 if freq == "Q" else 1), "yoy": pd.DateOffset(years=1)}
    out = trends.copy()
    for suffix, offset in back.items():
        before = ((begin - offset) < covered).to_numpy()
        for column in [c for c in out.columns if str(c).endswith(f"_{suffix}")]:
            out.loc[before, column] = np.nan
    out.attrs = dict(trends.attrs)
    return out


def _index(
    frames: MarketFrames, options: MarketReportOptions, quarters: pd.DataFrame | None
) -> tuple[pd.DataFrame | None, list[str]]:
    """The hedonic price index by quarter from the first whole covered quarter of ``quarters``
    (the whole market's ``market_trends(freq="Q")``; base: rf.price_index's default, the
    best-covered quarter of the first year), with the quarter's median sale price and its n
    (``median_sale_price``, ``median_n``), that median indexed to the same base
    (``median_index``) and ``complete``; None when there are no sales to index. By quarter, not
    by month: a month's median and index stand on a third of the sales and move by 10 % from
    chance alone."""
    listings = frames.listings
    if quarters is None or quarters.empty or "CloseDate" not in listings.columns:
        return None, []
    start = pd.Timestamp(quarters["period_begin"].min())
    closed = pd.to_datetime(listings["CloseDate"], errors="coerce")
    closed = closed.dt.tz_localize(None) if closed.dt.tz is not None else closed
    sales = listings[(closed >= start).to_numpy() & (closed.dt.date <= options.day).to_numpy()]
    if sales.empty:
        return None, []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DataQualityWarning)
        try:
            index = price_index(sales, freq="Q", method="hedonic", min_sample=options.min_sample)
        except AnalysisInputError as error:  # e.g. a city whose sales cannot identify the fit
            return None, [f"Price index: none for this market: {error}"]
    notes = [
        f"Price index: {w.message}" for w in caught if issubclass(w.category, DataQualityWarning)
    ]
    if index.empty or index["index"].notna().sum() == 0:
        return None, notes
    by_quarter = quarters.set_index(pd.to_datetime(quarters["period_begin"]))
    begin = pd.to_datetime(index["period_begin"])
    median = by_quarter["median_sale_price"].reindex(begin).to_numpy(dtype="float64")
    base = by_quarter["median_sale_price"].get(pd.Timestamp(index.attrs["base"]), np.nan)
    index["median_sale_price"] = median
    index["median_n"] = by_quarter["median_sale_price_n"].reindex(begin).fillna(0).to_numpy()
    index["median_index"] = 100.0 * median / base
    index["complete"] = by_quarter["complete"].reindex(begin).fillna(True).astype(bool).to_numpy()
    return index, notes


def _no_partial_yoy(trends: pd.DataFrame) -> pd.DataFrame:
    """The period not over yet gets no year-over-year change: part of a month against a whole
    month a year earlier is not a comparison (the table says "(so far)"). Its months of supply
    stay: ``rf.market_trends`` takes its sales over the days it has had so far."""
    if "complete" not in trends.columns or bool(trends["complete"].all()):
        return trends
    partial = ~trends["complete"].astype(bool).to_numpy()
    out = trends.copy()
    for column in [c for c in out.columns if str(c).endswith(("_yoy", "_mom"))]:
        out.loc[partial, column] = np.nan
    out.attrs = dict(trends.attrs)
    return out


def _year_ago(
    frames: MarketFrames, options: MarketReportOptions, markets: list[Any]
) -> pd.DataFrame | None:
    if frames.listings.empty or frames.history.empty:
        return None
    then = options.as_of_timestamp - pd.Timedelta(days=365)
    if not covers(
        then - pd.Timedelta(days=float(options.window_days)), covered_from(frames.listings)
    ):
        return None  # the year-earlier window is in the data's build-up: no comparison
    earlier = market_at(frames.listings, frames.history, then)
    if earlier.empty:
        return None
    return compare_markets(earlier, markets=markets, by=options.by, as_of=then,
                           window_days=float(options.window_days))  # fmt: skip


def _subtypes(listings: pd.DataFrame, options: MarketReportOptions) -> pd.DataFrame | None:
    if options.subtypes == 0 or options.by == "PropertySubType" or listings.empty:
        return None
    summary = market_summary(listings, by="PropertySubType", as_of=options.day,
                             window_days=float(options.window_days))  # fmt: skip
    size = (summary["active_listings"] + summary["homes_sold"]).sort_values(ascending=False)
    top = list(size.index[: options.subtypes])
    return compare_markets(listings, markets=top, by="PropertySubType", as_of=options.day,
                           window_days=float(options.window_days))  # fmt: skip


def check_comps(listings: pd.DataFrame, asked: Sequence[str], as_of: dt.date) -> dict[str, str]:
    """A note for each ``--comps`` id that is not in the market (as of the report's date), with a
    did-you-mean against the market's ListingIds; the report shows it in the id's place.

    >>> check_comps(pd.DataFrame({"ListingId": ["A12345"]}), ["A12354"], dt.date(2026, 6, 30))
    {'A12354': "No listing 'A12354' in this market on 2026-06-30; did you mean 'A12345'?"}
    """
    known = set(listings["ListingId"].astype("str")) if "ListingId" in listings.columns else set()
    notes = {}
    for listing_id in asked:
        if listing_id in known:
            continue
        near = difflib.get_close_matches(listing_id, sorted(known), n=1, cutoff=0.6)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        notes[listing_id] = f"No listing {listing_id!r} in this market on {as_of.isoformat()}{hint}"
    return notes


def _comps(
    listings: pd.DataFrame, options: MarketReportOptions
) -> tuple[dict[str, Any], dict[str, str]]:
    """The comps of each ``--comps`` id; a note for an id not in the market or that cannot be
    compared (no coordinates, say) in place of its comps. Closed sales without coordinates are
    one more of the comps' warnings, in the page's words."""
    out, notes = {}, check_comps(listings, options.comps, options.day)
    for listing_id in options.comps:
        if listing_id in notes:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DataQualityWarning)  # said below, in plain words
            try:
                found = comps(listings, listing_id, radius_km=3, months=12)
            except AnalysisInputError as error:
                why = str(error).removeprefix("comps(): ")
                notes[listing_id] = f"No comparable sales for {listing_id}: {why}."
                continue
        if missing := found.attrs.get("no_coordinates"):
            n = len(missing)
            said = f"{n} closed sale{'s' * (n > 1)} of the market {'have' if n > 1 else 'has'}"
            found.attrs["warnings"] = [
                *found.attrs.get("warnings", []),
                f"{said} no map position (no coordinates), so could not be considered as a "
                "comparable sale.",
            ]
        out[listing_id] = found
    return out, notes


def compute_market_report(frames: MarketFrames, options: MarketReportOptions) -> MarketReport:
    """Compute every table of the report with the analysis functions (no I/O).

    >>> report = compute_market_report(frames, MarketReportOptions(as_of="2026-06-30"))  # doctest: +SKIP
    >>> report.comparison.loc["median_sale_price", "All markets"]  # doctest: +SKIP
    """
    as_of = options.day
    days = float(options.window_days)
    listings = _as_of_market(frames, options)
    summary = market_summary(
        listings, by=options.by, as_of=as_of, window_days=days, compare_previous=True
    )
    markets = pick_markets(summary, options)
    comparison = compare_markets(
        listings,
        markets=markets,
        by=options.by,
        as_of=as_of,
        window_days=days,
        compare_previous=True,
    )
    history = frames.history
    if len(history):  # cuts up to the report's date (an earlier --as-of leaves later ones out)
        stamps = pd.to_datetime(history["ChangeTimestamp"], utc=True)
        history = history[(stamps <= options.as_of_timestamp).to_numpy()]
    drops = _active_sales(
        listings,
        price_drops(
            listings, history if len(history) else None, since=summary.attrs["window_start"]
        ),
    )
    drop_summary = price_drop_summary(drops, by=options.by, listings=listings)
    traffic = traffic_summary(frames.analytics) if frames.analytics is not None else None
    funnel = lead_funnel(frames.contacts) if frames.contacts is not None else None

    ref = comparison[REFERENCE_LABEL]
    headline: dict[str, Any] = {
        "active_listings": ref["active_listings"],
        "new_listings": ref["new_listings"],
        "homes_sold": ref["homes_sold"],
        "median_sale_price": ref["median_sale_price"],
        "median_dom": ref["median_dom"],
        "months_of_supply": ref["months_of_supply"],
        "price_drops": len(drops),
        "median_drop_pct": float(drops["drop_pct"].median()) if len(drops) else np.nan,
    }
    if traffic is not None:
        headline["visitors"] = traffic.headline.loc["visitors", "value"]
        headline["conversion_rate"] = traffic.headline.loc["conversion_rate", "value"]
    if funnel is not None:
        headline["contacts"] = int(funnel.by_stage["contacts"].sum())
        headline["new_leads"] = int(funnel.weekly["new_leads"].sum()) if len(funnel.weekly) else 0
    covered = covered_from(frames.listings)
    found, comps_notes = _comps(listings, options)
    common: dict[str, Any] = {
        "covered_from": covered, "subtypes": None, "comps": found, "options": options,
        "frames": frames, "markets": markets, "summary": summary, "comparison": comparison,
        "drops": drops, "drop_summary": drop_summary, "traffic": traffic, "funnel": funnel,
        "headline": headline, "comps_notes": comps_notes,
    }  # fmt: skip
    if options.edition == "client":
        from realtyframes.report.areas import client_areas

        areas = client_areas(listings, history if len(history) else None, drops, markets,
                             options, covered)  # fmt: skip
        return MarketReport(**common, areas=areas)
    trends = _trends(frames, options)
    index, index_notes = _index(frames, options, trends.get("quarters"))
    common["subtypes"] = _subtypes(listings, options)
    return MarketReport(
        **common,
        **trends,
        **trend_views(frames, options, covered),
        index=index,
        year_ago=_year_ago(frames, options, markets),
        notes=tuple(index_notes),
    )
