"""Hand-written DuckDB SQL of 12 trend columns, shared by bench_trends_sql (weekly, by city) and
bench_tiers_sql (monthly, by city × price tier): the setup both use.

The SQL is written as an analyst would from docs/metrics.md: each listing's status intervals
from the history with a window function, the periods from ``generate_series``, each interval
spread over the periods it spans (``unnest(range(...))`` of period numbers) for the stocks and
the Active-at-any-point count, the flows and medians by group-bys. With ``tiers=True`` the
markets are city × tier (docs/metrics.md, "Price tiers"): the bands are the 5th / 35th / 65th /
95th percentile (``quantile_cont``) of the sale prices per city × period of close and of the list
prices at entry (the old price of the first price change, else ListPrice) per city × period of
entry; the sale metrics (homes sold, median sale price, days to close) go by each sale's tier,
every other one by the listing's list tier. :data:`COLUMNS` are the columns computed.

>>> sorted(UNITS)
['M', 'W']
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

#: The trend columns the SQL computes.
COLUMNS = (
    "active_listings",
    "pending_listings",
    "active_listings_any",
    "new_listings",
    "pending_sales",
    "homes_sold",
    "price_drops",
    "median_sale_price",
    "age_of_inventory",
    "median_days_to_pending",
    "median_days_to_close",
    "off_market_in_two_weeks",
)
#: The band edges of ``tiers=True``, computed too with ``tiers=True``.
BANDS = ("sale_band_low", "sale_band_high", "list_band_low", "list_band_high")
#: ``freq`` → DuckDB's unit of ``date_trunc``.
UNITS = {"W": "week", "M": "month"}

#: The listings of the segment with a city (``l``) without tiers: ``ltier`` and ``stier`` ''.
_UNTIERED = """
CREATE OR REPLACE TEMP TABLE l AS
  SELECT ListingId::VARCHAR AS id, City::VARCHAR AS city, StandardStatus::VARCHAR AS status,
         OriginalEntryTimestamp AS entered, CloseDate AS closed, ClosePrice AS close_price,
         '' AS ltier, '' AS stier
  FROM market WHERE PropertyType::VARCHAR = 'Residential' AND City IS NOT NULL;
"""

#: With tiers: each listing's list price at entry, the bands, and ``l`` with the listing's list
#: tier (``ltier``) and its sale's tier (``stier``; NULL: none).
_TIERED = """
CREATE OR REPLACE TEMP TABLE first_cut AS
  SELECT ListingId::VARCHAR AS id, arg_min(PreviousListPrice, ChangeTimestamp) AS old
  FROM history WHERE ChangeType::VARCHAR = 'price_change' GROUP BY ALL;
CREATE OR REPLACE TEMP TABLE raw AS
  SELECT ListingId::VARCHAR AS id, City::VARCHAR AS city, StandardStatus::VARCHAR AS status,
         OriginalEntryTimestamp AS entered, CloseDate AS closed, ClosePrice AS close_price,
         coalesce(f.old, ListPrice) AS entry_price
  FROM market LEFT JOIN first_cut f ON f.id = ListingId::VARCHAR
  WHERE PropertyType::VARCHAR = 'Residential' AND City IS NOT NULL;
CREATE OR REPLACE TEMP TABLE bands AS
  SELECT side, city, pbeg,
         quantile_cont(price, 0.05) AS q05, quantile_cont(price, 0.35) AS q35,
         quantile_cont(price, 0.65) AS q65, quantile_cont(price, 0.95) AS q95
  FROM (SELECT 'sale' AS side, city, date_trunc('{unit}', closed) AS pbeg, close_price AS price
        FROM raw WHERE status = 'Closed' AND closed IS NOT NULL AND close_price IS NOT NULL
        UNION ALL
        SELECT 'list', city, date_trunc('{unit}', entered), entry_price FROM raw
        WHERE entered IS NOT NULL AND entry_price IS NOT NULL)
  GROUP BY ALL;
CREATE OR REPLACE MACRO band_tier(price, q05, q35, q65, q95) AS
  CASE WHEN price >= q05 AND price < q35 THEN 'bottom'
       WHEN price >= q35 AND price < q65 THEN 'middle'
       WHEN price >= q65 AND price <= q95 THEN 'top' END;
CREATE OR REPLACE TEMP TABLE l AS
  SELECT r.id, r.city, r.status, r.entered, r.closed, r.close_price,
         band_tier(r.entry_price, lb.q05, lb.q35, lb.q65, lb.q95) AS ltier,
         CASE WHEN r.status = 'Closed'
              THEN band_tier(r.close_price, sb.q05, sb.q35, sb.q65, sb.q95) END AS stier
  FROM raw r
  LEFT JOIN bands lb ON lb.side = 'list' AND lb.city = r.city
    AND lb.pbeg = date_trunc('{unit}', r.entered)
  LEFT JOIN bands sb ON sb.side = 'sale' AND sb.city = r.city
    AND sb.pbeg = date_trunc('{unit}', r.closed);
"""

#: The history and each listing's status intervals, kept as temporary tables (each is read by
#: several of the metrics).
_TABLES = """
CREATE OR REPLACE TEMP TABLE h AS
  SELECT ListingId::VARCHAR AS id, ChangeType::VARCHAR AS kind, ChangeTimestamp AS ts,
         StandardStatus::VARCHAR AS status, PreviousListPrice AS old, ListPrice AS new
  FROM history;
CREATE OR REPLACE TEMP TABLE iv AS
WITH
closing_seen AS (SELECT DISTINCT id FROM h WHERE kind = 'status_change' AND status = 'Closed'),
ev AS (
  SELECT id, entered AS ts, 'Active' AS status, 0 AS ord FROM l WHERE entered IS NOT NULL
  UNION ALL
  SELECT h.id, h.ts, h.status, 1 FROM h JOIN l USING (id)
  WHERE h.kind = 'status_change' AND h.ts >= l.entered
  UNION ALL
  SELECT l.id, l.closed, 'Closed', 1 FROM l ANTI JOIN closing_seen c ON c.id = l.id
  WHERE l.status = 'Closed' AND l.closed >= l.entered
)
SELECT * FROM (
  SELECT id, status, ts AS start,
         coalesce(lead(ts) OVER (PARTITION BY id ORDER BY ts, ord), TIMESTAMPTZ '9999-12-31')
           AS stop
  FROM ev
) JOIN l USING (id) WHERE stop > start;
"""

#: The period number of a time: weeks of 7 days from the first Monday, or calendar months.
_PERIOD = {
    "W": "floor((epoch_us(ts) - {first_us}) / {week_us})::BIGINT",
    "M": "(year(ts) * 12 + month(ts) - 1 - {first_month})::BIGINT",
}

#: The metrics: list-side ones by (city, ltier), sale-side ones by (city, stier).
_SQL = """
WITH
periods AS (
  SELECT j, TIMESTAMPTZ '{first}' + to_{unit}s(j::INTEGER) AS pbeg,
         (TIMESTAMPTZ '{first}' + to_{unit}s((j + 1)::INTEGER))::DATE - 1 AS last_day
  FROM generate_series(0, {n} - 1) t(j)
),
keys AS ({keys}),
grid AS (SELECT city, tier, j, pbeg FROM keys CROSS JOIN periods),
-- an interval [start, stop) holds the ends of periods [lo, hi_end) and overlaps [lo, hi_any)
spans AS (
  SELECT city, ltier AS tier, id, status, entered,
         greatest(p(start), 0) AS lo, least(p(stop), {n}) AS hi_end,
         least(p(stop - INTERVAL 1 MICROSECOND) + 1, {n}) AS hi_any
  FROM iv WHERE status IN ('Active', 'Pending') AND ltier IS NOT NULL
),
stocks AS (
  SELECT city, tier, j,
         count(*) FILTER (WHERE status = 'Active') AS active_listings,
         count(*) FILTER (WHERE status = 'Pending') AS pending_listings,
         median(least(date_diff('day', entered::DATE, last_day),
                      date_diff('day', entered::DATE, DATE '{as_of}')))  -- never past the data's end
           FILTER (WHERE status = 'Active') AS age_of_inventory
  FROM (SELECT city, tier, status, entered, unnest(range(lo, hi_end)) AS j FROM spans
        WHERE hi_end > lo) JOIN periods USING (j)
  GROUP BY ALL
),
anytime AS (
  SELECT city, tier, j, count(DISTINCT id) AS active_listings_any
  FROM (SELECT city, tier, id, unnest(range(lo, hi_any)) AS j FROM spans
        WHERE status = 'Active' AND hi_any > lo)
  GROUP BY ALL
),
listed AS (SELECT city, ltier AS tier, date_trunc('{unit}', entered) AS pbeg,
                  count(*) AS new_listings
           FROM l WHERE ltier IS NOT NULL GROUP BY ALL),
sold AS (
  SELECT city, stier AS tier, date_trunc('{unit}', closed) AS pbeg, count(*) AS homes_sold,
         median(close_price) AS median_sale_price
  FROM l WHERE status = 'Closed' AND closed IS NOT NULL AND stier IS NOT NULL GROUP BY ALL
),
pending AS (
  SELECT city, tier, pbeg, count(*) AS pending_sales,
         median(date_diff('day', entered::DATE, first::DATE)) AS median_days_to_pending
  FROM (SELECT city, ltier AS tier, id, date_trunc('{unit}', start) AS pbeg,
               min(start) AS first, any_value(entered) AS entered
        FROM iv WHERE status = 'Pending' AND ltier IS NOT NULL GROUP BY ALL)
  GROUP BY ALL
),
to_close AS (
  SELECT city, tier, date_trunc('{unit}', closed) AS pbeg,
         median(date_diff('day', since::DATE, closed::DATE)) AS median_days_to_close
  FROM (SELECT l.city, l.stier AS tier, l.id, l.closed, max(p.start) AS since
        FROM l JOIN iv p ON p.id = l.id AND p.status = 'Pending' AND p.start <= l.closed
        WHERE l.status = 'Closed' AND l.stier IS NOT NULL GROUP BY ALL)
  GROUP BY ALL
),
contract AS (SELECT id, min(start) AS went FROM iv WHERE status IN ('Pending', 'Closed')
             GROUP BY ALL),
off AS (
  SELECT city, ltier AS tier, date_trunc('{unit}', entered) AS pbeg,
         avg(CASE WHEN went IS NOT NULL AND date_diff('day', entered::DATE, went::DATE) <= 14
             THEN 1.0 ELSE 0.0 END) AS off_market_in_two_weeks
  FROM l LEFT JOIN contract USING (id)
  WHERE date_diff('day', entered::DATE, DATE '{as_of}') >= 14 AND ltier IS NOT NULL
  GROUP BY ALL
),
drops AS (
  SELECT l.city, l.ltier AS tier, date_trunc('{unit}', h.ts) AS pbeg,
         count(DISTINCT h.id) AS price_drops
  FROM h JOIN l USING (id)
  WHERE h.kind = 'price_change' AND h.new < h.old AND l.ltier IS NOT NULL GROUP BY ALL
)
SELECT g.city, g.tier, g.pbeg,
       coalesce(active_listings, 0) AS active_listings,
       coalesce(pending_listings, 0) AS pending_listings,
       coalesce(active_listings_any, 0) AS active_listings_any,
       coalesce(new_listings, 0) AS new_listings,
       coalesce(pending_sales, 0) AS pending_sales,
       coalesce(homes_sold, 0) AS homes_sold,
       coalesce(price_drops, 0) AS price_drops,
       median_sale_price, age_of_inventory, median_days_to_pending, median_days_to_close,
       off_market_in_two_weeks{band_columns}
FROM grid g
LEFT JOIN stocks USING (city, tier, j) LEFT JOIN anytime USING (city, tier, j)
LEFT JOIN listed USING (city, tier, pbeg) LEFT JOIN sold USING (city, tier, pbeg)
LEFT JOIN pending USING (city, tier, pbeg) LEFT JOIN to_close USING (city, tier, pbeg)
LEFT JOIN off USING (city, tier, pbeg) LEFT JOIN drops USING (city, tier, pbeg){band_joins}
ORDER BY g.city, g.tier, g.pbeg
"""

_KEYS = {
    False: "SELECT DISTINCT city, '' AS tier FROM l",
    True: "SELECT city, tier FROM (SELECT DISTINCT city FROM l) "
    "CROSS JOIN (VALUES ('bottom'), ('middle'), ('top')) t(tier)",
}
_BAND_COLUMNS = """,
       CASE g.tier WHEN 'bottom' THEN sb.q05 WHEN 'middle' THEN sb.q35 ELSE sb.q65 END
         AS sale_band_low,
       CASE g.tier WHEN 'bottom' THEN sb.q35 WHEN 'middle' THEN sb.q65 ELSE sb.q95 END
         AS sale_band_high,
       CASE g.tier WHEN 'bottom' THEN lb.q05 WHEN 'middle' THEN lb.q35 ELSE lb.q65 END
         AS list_band_low,
       CASE g.tier WHEN 'bottom' THEN lb.q35 WHEN 'middle' THEN lb.q65 ELSE lb.q95 END
         AS list_band_high"""
_BAND_JOINS = """
LEFT JOIN bands sb ON sb.side = 'sale' AND sb.city = g.city AND sb.pbeg = g.pbeg
LEFT JOIN bands lb ON lb.side = 'list' AND lb.city = g.city AND lb.pbeg = g.pbeg"""


def sql(
    market: pd.DataFrame,
    history: pd.DataFrame,
    periods: pd.Series,
    freq: str,
    as_of: pd.Timestamp,
    tiers: bool = False,
) -> pd.DataFrame:
    """The SQL over the two pandas frames (DuckDB reads them in place) for the periods starting
    at ``periods`` (naive UTC; ``freq`` "W" or "M"): one row per city × tier (``''`` without
    tiers) × period, :data:`COLUMNS` (and :data:`BANDS` with ``tiers``), ``pbeg`` naive."""
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.register("market", market)
    con.register("history", history)
    unit = UNITS[freq]
    first = pd.Timestamp(periods.min()).tz_localize("UTC")
    last = pd.Timestamp(periods.max()).tz_localize("UTC")
    if freq == "W":
        n = int((last - first).days // 7 + 1)
    else:
        n = (last.year - first.year) * 12 + last.month - first.month + 1
    period = _PERIOD[freq].format(first_us=first.value // 1000, week_us=7 * 86_400_000_000,
                                  first_month=first.year * 12 + first.month - 1)  # fmt: skip
    con.execute(f"CREATE OR REPLACE MACRO p(ts) AS {period}")
    con.execute((_TIERED if tiers else _UNTIERED).format(unit=unit))
    con.execute(_TABLES)
    query = _SQL.format(
        first=f"{first:%Y-%m-%d} 00:00:00+00", unit=unit, n=n, as_of=f"{as_of:%Y-%m-%d}",
        keys=_KEYS[tiers], band_columns=_BAND_COLUMNS if tiers else "",
        band_joins=_BAND_JOINS if tiers else "",
    )  # fmt: skip
    out = con.execute(query).df()
    out["pbeg"] = out["pbeg"].dt.tz_convert(None).astype("datetime64[us]")
    return out


def written(market: pd.DataFrame, history: pd.DataFrame, folder: Path) -> Path:
    """The market and history as Parquet in ``folder`` (what the engines read)."""
    market.to_parquet(folder / "market.parquet")
    history.to_parquet(folder / "history.parquet")
    return folder


def median_seconds(fn: Callable[[], Any], repeat: int) -> float:
    """The median wall time of ``repeat`` calls of ``fn``."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)
