"""The client edition's figures per area: the Local Market Update table and the price change.

:func:`local_update`: the eight figures of a Local Market Update (new listings, pending sales,
closed sales, days on market until sale, median sales price, percent of list price received,
inventory, months supply) for the latest whole month and the rolling 12 months, each against a
year earlier, with the n of every median, from ``rf.market_trends`` (months) and
``rf.market_summary`` (the 12 months' medians). :func:`price_change`: prices against a year
earlier from the constant-quality index (``rf.price_index``), the median beside it, and why the
two differ when they differ by more than their noise (pure; no I/O).

>>> table = local_update(listings, history, as_of="2026-06-30")  # doctest: +SKIP
>>> table.loc["median_sale_price", ["month", "month_n", "month_before"]]  # doctest: +SKIP
"""

from __future__ import annotations

import datetime as dt
import math
import warnings
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from realtyframes.analysis import SALE_TYPES, market_summary, market_trends, price_index
from realtyframes.errors import AnalysisInputError, DataQualityWarning

__all__ = [
    "LMU_METRICS",
    "PriceChange",
    "latest_month",
    "local_update",
    "price_change",
]

#: The Local Market Update's figures: metric, label, kind, how 12 months combine ("sum" of the
#: months, "mean" of the month-end stocks, "pooled": the 12 months' sales at once, "supply").
LMU_METRICS: tuple[tuple[str, str, str, str], ...] = (
    ("new_listings", "New listings", "count", "sum"),
    ("pending_sales", "Pending sales", "count", "sum"),
    ("homes_sold", "Closed sales", "count", "sum"),
    ("median_dom", "Days on market until sale (median)", "days", "pooled"),
    ("median_sale_price", "Median sales price", "money", "pooled"),
    ("avg_sale_to_list", "Percent of list price received (average)", "percent", "pooled"),
    ("active_listings", "Inventory of homes for sale (month end)", "count", "mean"),
    ("months_of_supply", "Months supply of inventory", "number", "supply"),
)
#: The medians and ratios whose n is shown (the homes sold behind them).
_POOLED = ("median_dom", "median_sale_price", "avg_sale_to_list")


def latest_month(as_of: dt.date) -> pd.Timestamp:
    """The first day of the latest whole month up to ``as_of`` (its own month when ``as_of`` is
    its last day).

    >>> latest_month(dt.date(2026, 6, 30)), latest_month(dt.date(2026, 6, 29))
    (Timestamp('2026-06-01 00:00:00'), Timestamp('2026-05-01 00:00:00'))
    """
    day = pd.Timestamp(as_of)
    if (day + pd.Timedelta(days=1)).month != day.month:
        return day.to_period("M").start_time
    return (day.to_period("M") - 1).start_time


def _months_trends(
    listings: pd.DataFrame,
    history: pd.DataFrame | None,
    month: pd.Timestamp,
    by: str | None,
    min_sample: int,
) -> pd.DataFrame:
    start = (month - pd.DateOffset(months=23)).date()
    end = (month + pd.offsets.MonthEnd(0)).date()
    return market_trends(listings, history, freq="M", by=by, start=start, end=end,
                         min_sample=min_sample)  # fmt: skip


def _pooled(listings: pd.DataFrame, by: str | None, end: pd.Timestamp, days: int) -> pd.DataFrame:
    """``rf.market_summary`` over ``days`` to ``end`` (the 12 months' medians), by ``by``."""
    frame = listings if by is not None else listings.assign(_area="all")
    return market_summary(frame, by=by or "_area", as_of=end.date(), window_days=days)


def local_update(
    listings: pd.DataFrame,
    history: pd.DataFrame | None,
    *,
    as_of: dt.date | str,
    by: str | None = None,
    areas: list[Any] | None = None,
    min_sample: int = 5,
    covered_from: pd.Timestamp | None = None,
    months: pd.DataFrame | None = None,
) -> dict[Any, pd.DataFrame]:
    """Per area (each of ``areas`` by ``by``; None: the whole market, key "All markets"), the
    Local Market Update table: one row per :data:`LMU_METRICS` metric; columns ``month``,
    ``month_before`` (the same month a year earlier), ``month_change``, ``year`` (the 12 months
    to the latest month), ``year_before``, ``year_change``, and ``*_n`` (the homes sold behind a
    median; a median on fewer than ``min_sample`` is NaN). A year-earlier figure the data do
    not cover (``covered_from`` after its start) is NaN; ``attrs``: ``month`` (its first day),
    ``covered`` (whether the year-earlier figures are covered). ``months``: the same
    ``rf.market_trends(freq="M")`` of the 24 months to the latest, if the caller has it.

    >>> tables = local_update(listings, history, as_of="2026-06-30")  # doctest: +SKIP
    """
    day = pd.Timestamp(as_of).date()
    month = latest_month(day)
    trends = _months_trends(listings, history, month, by, min_sample) if months is None else months
    month_end = month + pd.offsets.MonthEnd(0)
    year_start = month - pd.DateOffset(months=11)
    days = int((month_end - year_start).days) + 1
    before_end = month_end - pd.DateOffset(years=1)
    before_days = int((before_end - (year_start - pd.DateOffset(years=1))).days) + 1
    now = _pooled(listings, by, month_end, days)
    then = _pooled(listings, by, before_end, before_days)
    earliest = month - pd.DateOffset(months=23)
    covered = covered_from is not None and earliest.tz_localize("UTC") >= covered_from
    keys = list(areas) if areas is not None and by is not None else ["All markets"]
    out = {}
    for key in keys:
        rows = trends if by is None else trends[trends[by].astype("str") == str(key)]
        rows = rows.set_index(pd.to_datetime(rows["period_begin"]))
        pooled_now = now.iloc[0] if by is None else now.reindex([key]).iloc[0]
        pooled_then = then.iloc[0] if by is None else then.reindex([key]).iloc[0]
        table = _table(rows, month, pooled_now, pooled_then, min_sample, covered)
        table.attrs = {"month": month, "covered": covered, "area": key}
        out[key] = table
    return out


def _change(now: float, before: float, kind: str) -> float:
    if not (np.isfinite(now) and np.isfinite(before)) or (kind != "percent" and before == 0):
        return np.nan
    return now - before if kind == "percent" else now / before - 1.0


def _table(
    months: pd.DataFrame,
    month: pd.Timestamp,
    now: pd.Series,
    then: pd.Series,
    min_sample: int,
    covered: bool,
) -> pd.DataFrame:
    """One area's Local Market Update rows (see :func:`local_update`)."""
    last12 = months.reindex(pd.date_range(month - pd.DateOffset(months=11), month, freq="MS"))
    prev12 = months.reindex(
        pd.date_range(month - pd.DateOffset(months=23), month - pd.DateOffset(months=12), freq="MS")
    )

    def at(when: pd.Timestamp, metric: str) -> float:
        value = months[metric].get(when, np.nan) if metric in months else np.nan
        return float(value) if value is not None and not pd.isna(value) else np.nan

    def n_at(when: pd.Timestamp, metric: str) -> float:
        return at(when, f"{metric}_n") if metric in _POOLED else np.nan

    year_ago = month - pd.DateOffset(years=1)
    records = []
    for metric, _label, kind, how in LMU_METRICS:
        row: dict[str, Any] = {"metric": metric}
        row["month"], row["month_n"] = at(month, metric), n_at(month, metric)
        row["month_before"], row["month_before_n"] = at(year_ago, metric), n_at(year_ago, metric)
        for name, part, pooled in (("year", last12, now), ("year_before", prev12, then)):
            if how == "sum":
                value, n = float(part[metric].sum(min_count=12)), np.nan
            elif how == "mean":
                value, n = float(part[metric].mean()), np.nan
            elif how == "supply":
                sold = float(part["homes_sold"].sum(min_count=12))
                value = float(part["active_listings"].mean()) / (sold / 12) if sold else np.nan
                n = sold
            else:
                n = float(pooled.get("homes_sold", np.nan))
                value = float(pooled.get(metric, np.nan))
                value = value if np.isfinite(n) and n >= min_sample else np.nan
            row[name], row[f"{name}_n"] = value, n
        if not covered:
            row["month_before"] = row["year_before"] = np.nan
        row["month_change"] = _change(row["month"], row["month_before"], kind)
        row["year_change"] = _change(row["year"], row["year_before"], kind)
        records.append(row)
    return pd.DataFrame.from_records(records).set_index("metric")


@dataclass(frozen=True)
class PriceChange:
    """Prices against a year earlier: the constant-quality index's change (``change``, its 95 %
    band ``low``–``high``, ``n`` sales now and ``n_before`` then) for ``period`` against
    ``earlier``, the median sale price's change beside it, and ``mix``: one line on why the two
    differ (None when they agree within their noise). ``reason``: why there is no change (then
    ``change`` is NaN)."""

    period: str
    earlier: str
    change: float
    low: float
    high: float
    n: int
    n_before: int
    median: float
    median_before: float
    median_change: float
    mix: str | None = None
    reason: str | None = None
    index: pd.DataFrame | None = field(default=None, repr=False, compare=False)

    @property
    def differs(self) -> bool:
        """Whether the median's change differs from the index's by more than their noise."""
        return self.mix is not None


#: The normal quantile of a 95 % band (the index's own, ``rf.price_index``).
Z = 1.959964
#: The index's location dummies: postal codes place a home more finely than cities (on the
#: embedded sandbox, R² 0.78 against 0.71, and a change nearer the true one).
LOCATION = "PostalCode"
#: Price lines a mix sentence may name (the one whose share moved most is named).
_MIX_LINES = (300_000.0, 500_000.0, 750_000.0, 1_000_000.0, 2_000_000.0, 5_000_000.0)


def _quarter(ts: pd.Timestamp) -> str:
    return f"{ts.year} Q{ts.quarter}"


def _sales(listings: pd.DataFrame, begin: pd.Timestamp, end: pd.Timestamp) -> np.ndarray:
    closed = pd.to_datetime(listings["CloseDate"], errors="coerce")
    closed = closed.dt.tz_localize(None) if closed.dt.tz is not None else closed
    sale = listings["PropertyType"].astype("str").isin(SALE_TYPES).to_numpy()
    price = pd.to_numeric(listings["ClosePrice"], errors="coerce").to_numpy(dtype="float64")
    keep = sale & (closed >= begin).to_numpy() & (closed <= end).to_numpy() & (price > 0)
    return price[keep]


def _mix_line(now: np.ndarray, before: np.ndarray) -> str:
    """The price line whose share of sales moved most between the two periods."""
    best = max(_MIX_LINES, key=lambda x: abs(np.mean(now > x) - np.mean(before > x)))
    share_now, share_then = float(np.mean(now > best)), float(np.mean(before > best))
    amount = f"${best / 1e6:g}M" if best >= 1e6 else f"${best / 1e3:g}K"
    return (
        f"Sales over {amount} were {share_now * 100:.0f} % of sales, {share_then * 100:.0f} % a "
        "year earlier: "
        "the median moved with the mix of homes sold, not only with prices."
    )


def price_change(
    listings: pd.DataFrame, *, as_of: dt.date | str, min_sample: int = 5
) -> PriceChange:
    """Prices in the latest whole quarter against the same quarter a year earlier, from the
    hedonic index (``rf.price_index(freq="Q")`` based at the earlier quarter: its value is the
    change, its band the change's band; postal-code location, :data:`LOCATION`), with the median sale price's change beside it. The
    two differ "by more than their noise" when the gap between their log changes exceeds 1.959964
    times the root of the index's variance plus the two medians' (1.2533 σ/√n each, σ of
    log prices); then
    ``mix`` says how the mix of sales moved.

    >>> pc = price_change(listings, as_of="2026-06-30")  # doctest: +SKIP
    >>> pc.period, round(pc.change, 3), pc.mix  # doctest: +SKIP
    """
    day = pd.Timestamp(as_of)
    quarter = (day + pd.Timedelta(days=1)).to_period("Q") - 1
    begin, end = quarter.start_time, quarter.end_time.normalize()
    earlier = begin - pd.DateOffset(years=1)
    earlier_end = (quarter - 4).end_time.normalize()
    now, before = _sales(listings, begin, end), _sales(listings, earlier, earlier_end)
    period, then = _quarter(begin), _quarter(earlier)
    med_now = float(np.median(now)) if len(now) >= min_sample else np.nan
    med_then = float(np.median(before)) if len(before) >= min_sample else np.nan
    none = PriceChange(
        period=period, earlier=then, change=np.nan, low=np.nan, high=np.nan, n=len(now),
        n_before=len(before), median=med_now, median_before=med_then,
        median_change=med_now / med_then - 1 if med_then else np.nan,
    )  # fmt: skip
    if len(now) < min_sample or len(before) < min_sample:
        return replace(none, reason=f"fewer than {min_sample} sales in {period} or {then}")
    try:
        with warnings.catch_warnings():
            # a thin base (the year-earlier quarter) is no hidden error here: the change's band
            # is the index's band against that base, so it carries the base's uncertainty
            warnings.simplefilter("ignore", DataQualityWarning)
            index = price_index(listings, freq="Q", base=earlier.date(), min_sample=min_sample,
                                location=LOCATION)  # fmt: skip
    except AnalysisInputError as error:  # a fit the sales cannot identify: said, not raised
        return replace(none, reason=f"the index could not be fitted ({error})")
    row = index[pd.to_datetime(index["period_begin"]) == begin]
    if row.empty or pd.isna(row["index"].iloc[0]):
        return replace(none, reason=f"too few sales to index {period}")
    value, low, high = (float(row[c].iloc[0]) / 100.0 for c in ("index", "index_low", "index_high"))
    se_index = (math.log(high) - math.log(low)) / (2 * Z)

    def se_median(prices: np.ndarray) -> float:
        return 1.2533 * float(np.std(np.log(prices), ddof=1)) / math.sqrt(len(prices))

    noise = Z * math.sqrt(se_index**2 + se_median(now) ** 2 + se_median(before) ** 2)
    gap = abs(math.log(med_now / med_then) - math.log(value))
    mix = _mix_line(now, before) if gap > noise else None
    return replace(none, change=value - 1, low=low - 1, high=high - 1, mix=mix, index=index)
