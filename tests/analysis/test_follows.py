"""Every "follows" of docs/metrics.md, one hand-built case each (#34): a tiny market and history
built here, the anchor's rule quoted in one line, the expected value worked out by hand in the
docstring. Where we depart, the case shows the departure and its size (docs/metrics.md's
"Claim → test" table names these tests; the price index's and the tiers' claims are in
test_follows_index.py).

Every time is noon UTC in 2026 unless said; days are calendar days between UTC dates."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import realtyframes as rf

NAN = math.nan


def t(day: str) -> pd.Timestamp:
    return pd.Timestamp(day if len(day) > 5 else f"2026-{day}", tz="UTC") + pd.Timedelta(hours=12)


def market(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Residential listings in Doral; each row: id, status, entry, and optionally list price
    (the record's ListPrice), previous price, close date and price, living area, major change."""
    return pd.DataFrame(
        {
            "ListingId": [r["id"] for r in rows],
            "City": "Doral",
            "PropertyType": "Residential",
            "StandardStatus": [r["status"] for r in rows],
            "ListPrice": [float(r.get("list", 500_000)) for r in rows],
            "PreviousListPrice": [float(r.get("previous", NAN)) for r in rows],
            "ClosePrice": [float(r.get("close_price", NAN)) for r in rows],
            "LivingArea": [float(r.get("area", 1000)) for r in rows],
            "DaysOnMarket": [r.get("dom", 10) for r in rows],
            "OriginalEntryTimestamp": [t(r["entry"]) for r in rows],
            "MajorChangeTimestamp": [t(r.get("major", r["entry"])) for r in rows],
            "CloseDate": [t(r["closed"]) if "closed" in r else pd.NaT for r in rows],
        }
    )


def history(rows: list[tuple[str, str, str, Any]]) -> pd.DataFrame:
    """(id, day, kind, value): a status change to ``value``, or a price change (old, new)."""
    records = [
        {
            "ListingId": listing,
            "ChangeType": "status_change" if kind == "status" else "price_change",
            "ChangeTimestamp": t(day),
            "PreviousListPrice": NAN if kind == "status" else float(value[0]),
            "ListPrice": NAN if kind == "status" else float(value[1]),
            "StandardStatus": value if kind == "status" else None,
        }
        for listing, day, kind, value in rows
    ]
    columns = ["ListingId", "ChangeType", "ChangeTimestamp", "PreviousListPrice", "ListPrice",
               "StandardStatus"]  # fmt: skip
    return pd.DataFrame(records, columns=columns)


def months(frame: pd.DataFrame, changes: pd.DataFrame, end: str, **options: Any) -> pd.DataFrame:
    out = rf.market_trends(frame, changes, freq="M", start="2026-01-01", end=end, min_sample=1,
                           **options)  # fmt: skip
    return out.set_index(out["period_begin"].dt.strftime("%m"))


def summary(frame: pd.DataFrame, as_of: str, **options: Any) -> pd.Series:
    out = rf.market_summary(frame, as_of=as_of, window_days=31, **options)
    return out.loc["Doral"]


# -- rf.market_summary against Redfin's Data Center ------------------------------------------------


def test_summary_sales_follow_redfin() -> None:
    """Redfin: "Median sale price: the median final sale price of homes with a sale date in the
    period"; "Homes sold: homes with a sale date in the period"; "$/sq ft: price ÷ finished
    square feet". Window Dec 31 (excl.) to Jan 31: S1 $300k / 1,000 sq ft, S2 $400k / 2,000,
    S3 $500k (area unknown) closed in it; S0 closed Dec 20 and P (Pending) do not count.
    Median sale price $400k of 3; $/sq ft: median(300, 200) = $250 of 2 (S3 left out)."""
    frame = market([
        {"id": "S1", "status": "Closed", "entry": "2025-12-01", "closed": "01-10",
         "close_price": 300_000},
        {"id": "S2", "status": "Closed", "entry": "2025-12-01", "closed": "01-15",
         "close_price": 400_000, "area": 2000},
        {"id": "S3", "status": "Closed", "entry": "2025-12-01", "closed": "01-20",
         "close_price": 500_000, "area": NAN},
        {"id": "S0", "status": "Closed", "entry": "2025-11-01", "closed": "2025-12-20",
         "close_price": 900_000},
        {"id": "P", "status": "Pending", "entry": "2025-12-01", "major": "01-12"},
    ])  # fmt: skip
    row = summary(frame, "2026-01-31")
    assert row["homes_sold"] == 3
    assert row["median_sale_price"] == 400_000
    assert row["median_sale_ppsf"] == 250.0


def test_summary_new_listings_follow_redfin() -> None:
    """Redfin: "New listings: homes with a listing-added date in the period". Entered in
    January: A (still Active), B (now Pending), C (now Closed): 3, whatever their status now;
    D entered in December: not counted."""
    frame = market([
        {"id": "A", "status": "Active", "entry": "01-03"},
        {"id": "B", "status": "Pending", "entry": "01-04", "major": "01-20"},
        {"id": "C", "status": "Closed", "entry": "01-05", "closed": "01-29", "close_price": 1e5},
        {"id": "D", "status": "Active", "entry": "2025-12-28"},
    ])  # fmt: skip
    assert summary(frame, "2026-01-31")["new_listings"] == 3


def test_summary_sold_above_list_is_against_the_final_list_price() -> None:
    """Redfin: "Sold above list: the share of homes sold above their final list price". A
    listed at $400k, cut to $380k, sold $390k: above its final list price (not its original);
    B listed $500k sold $490k: below. 1 of 2 = 0.5."""
    frame = market([
        {"id": "A", "status": "Closed", "entry": "2025-12-01", "list": 380_000,
         "previous": 400_000, "closed": "01-10", "close_price": 390_000},
        {"id": "B", "status": "Closed", "entry": "2025-12-01", "list": 500_000,
         "closed": "01-12", "close_price": 490_000},
    ])  # fmt: skip
    assert summary(frame, "2026-01-31")["pct_sold_above_list"] == 0.5


def test_summary_inventory_is_active_only() -> None:
    """Redfin: "Inventory: active listings on the last day of the period" (under contract is
    not inventory). A Active, U Active Under Contract, P Pending: 1."""
    frame = market([
        {"id": "A", "status": "Active", "entry": "01-03"},
        {"id": "U", "status": "Active Under Contract", "entry": "01-04", "major": "01-20"},
        {"id": "P", "status": "Pending", "entry": "01-05", "major": "01-21"},
    ])  # fmt: skip
    assert summary(frame, "2026-01-31")["active_listings"] == 1


# -- rf.market_trends: periods ---------------------------------------------------------------------


def test_weeks_and_four_week_periods_end_on_sunday_as_redfin_s() -> None:
    """Redfin's weekly series: "weeks ending Sunday"; its 4-week series: "4-week period ending
    Sunday", compared with the 4 weeks before. Listings entered Jan 5 (a Monday) and Jan 11 (its
    Sunday) are one week's; the 4W row ending Feb 1 spans Jan 5-Feb 1 (28 days): 2 entries."""
    frame = market([
        {"id": "A", "status": "Active", "entry": "01-05"},
        {"id": "B", "status": "Active", "entry": "01-11"},
    ])  # fmt: skip
    weeks = rf.market_trends(frame, freq="W", start="2026-01-05", end="2026-02-01", min_sample=1)
    assert (weeks["period_begin"].dt.day_name() == "Monday").all()
    assert (weeks["period_end"].dt.day_name() == "Sunday").all()
    assert weeks["new_listings"].tolist() == [2, 0, 0, 0]
    four = rf.market_trends(frame, freq="4W", start="2026-02-01", end="2026-02-01", min_sample=1)
    last = four.iloc[-1]
    assert (last["period_begin"].date().isoformat(), last["period_end"].date().isoformat()) == (
        "2026-01-05",
        "2026-02-01",
    )
    assert last["new_listings"] == 2
    assert four.attrs["lags"]["mom"] == 4  # the previous 4-week period, not the row before


# -- rf.market_trends against Redfin ---------------------------------------------------------------


def test_trends_inventory_new_listings_and_sales_follow_redfin() -> None:
    """Redfin: "Inventory: active listings on the last day of the period"; "New listings:
    listing-added date in the period"; "Homes sold / median sale price: sale date in the
    period". January: A entered Jan 3 (Active at Jan 31), B entered Jan 4 and went Pending Jan
    30 (not inventory at the end), C entered Jan 31 (inventory: it is Active at the end), S sold
    Jan 20 for $400k, 2,000 sq ft. Inventory 2, new listings 3, homes sold 1 at $400k, $200/sq ft."""
    frame = market([
        {"id": "A", "status": "Active", "entry": "01-03"},
        {"id": "B", "status": "Pending", "entry": "01-04", "major": "01-30"},
        {"id": "C", "status": "Active", "entry": "01-31"},
        {"id": "S", "status": "Closed", "entry": "2025-11-02", "closed": "01-20",
         "close_price": 400_000, "area": 2000},
    ])  # fmt: skip
    changes = history([
        ("B", "01-30", "status", "Pending"),
        ("S", "2025-12-01", "status", "Pending"),
        ("S", "01-20", "status", "Closed"),
    ])  # fmt: skip
    jan = months(frame, changes, "2026-01-31").loc["01"]
    assert (jan["active_listings"], jan["new_listings"], jan["homes_sold"]) == (2, 3, 1)
    assert (jan["median_sale_price"], jan["median_sale_ppsf"]) == (400_000, 200.0)


def test_trends_price_drop_share_follows_redfin() -> None:
    """Redfin: "% of active listings with price drops: the share of active listings with a
    price drop during the period" (its active listings read as the inventory at the end). At
    Jan 31, A (cut Jan 10), B (cut in December) and C (no cut) are Active; D, cut Jan 12, went
    Pending Jan 20. A alone of the 3: 1/3."""
    frame = market([
        {"id": "A", "status": "Active", "entry": "2025-12-01", "list": 450_000},
        {"id": "B", "status": "Active", "entry": "2025-11-01", "list": 450_000},
        {"id": "C", "status": "Active", "entry": "2025-12-01"},
        {"id": "D", "status": "Pending", "entry": "2025-12-01", "major": "01-20"},
    ])  # fmt: skip
    changes = history([
        ("A", "01-10", "price", (500_000, 450_000)),
        ("B", "2025-12-10", "price", (500_000, 450_000)),
        ("D", "01-12", "price", (500_000, 480_000)),
        ("D", "01-20", "status", "Pending"),
    ])  # fmt: skip
    jan = months(frame, changes, "2026-01-31").loc["01"]
    assert jan["pct_active_with_price_drop"] == pytest.approx(1 / 3)


def test_months_of_supply_departs_by_the_days_of_the_month() -> None:
    """Redfin: "Months of supply: inventory ÷ homes sold" (a month's). January (31 days): 10
    Active at Jan 31 and 5 sold. Redfin 10 / 5 = 2.0; ours 10 / (5 × 30 / 31) = 2.0667 (the
    sales per 30 days): 31/30 of Redfin's, and 28/30 in February (docs/metrics.md: 0.933 to
    1.033, 1.015 on average on the sandbox). absorption_rate is its inverse: 0.4839."""
    rows = [{"id": f"A{i}", "status": "Active", "entry": "2025-12-01"} for i in range(10)]
    rows += [{"id": f"S{i}", "status": "Closed", "entry": "2025-12-01", "closed": "01-15",
              "close_price": 400_000} for i in range(5)]  # fmt: skip
    jan = months(market(rows), history([]), "2026-01-31").loc["01"]
    assert jan["active_listings"] / jan["homes_sold"] == 2.0  # Redfin's
    assert jan["months_of_supply"] == pytest.approx(10 / (5 * 30 / 31))
    assert jan["absorption_rate"] == pytest.approx(1 / jan["months_of_supply"])


# -- competition columns ---------------------------------------------------------------------------


def test_active_listings_any_follows_redfin_s_active_listings() -> None:
    """Redfin: "Active listings: listings active at any point during the period". January:
    A Active all month, B Pending on Jan 10 (was Active Jan 1-10), C entered Jan 31; D went
    Pending in December: 3 (inventory at Jan 31: A and C, 2)."""
    frame = market([
        {"id": "A", "status": "Active", "entry": "2025-12-01"},
        {"id": "B", "status": "Pending", "entry": "2025-12-01", "major": "01-10"},
        {"id": "C", "status": "Active", "entry": "01-31"},
        {"id": "D", "status": "Pending", "entry": "2025-11-01", "major": "2025-12-10"},
    ])  # fmt: skip
    changes = history([("B", "01-10", "status", "Pending"), ("D", "2025-12-10", "status",
                                                               "Pending")])  # fmt: skip
    jan = months(frame, changes, "2026-02-28").loc["01"]
    assert (jan["active_listings_any"], jan["active_listings"]) == (3, 2)


def test_off_market_in_two_weeks_follows_redfin() -> None:
    """Redfin: "Off market in two weeks: the share of homes that went under contract within
    two weeks of their debut". January's new listings: A under contract on day 14 (in), B on
    day 15 (out), C never (out), D Active Under Contract on day 3 (in): 2 of 4 = 0.5."""
    frame = market([
        {"id": "A", "status": "Pending", "entry": "01-02", "major": "01-16"},
        {"id": "B", "status": "Pending", "entry": "01-02", "major": "01-17"},
        {"id": "C", "status": "Active", "entry": "01-02"},
        {"id": "D", "status": "Active Under Contract", "entry": "01-05", "major": "01-08"},
    ])  # fmt: skip
    changes = history([
        ("A", "01-16", "status", "Pending"),
        ("B", "01-17", "status", "Pending"),
        ("D", "01-08", "status", "Active Under Contract"),
    ])  # fmt: skip
    jan = months(frame, changes, "2026-02-28").loc["01"]
    assert (jan["off_market_in_two_weeks"], jan["off_market_in_two_weeks_n"]) == (0.5, 4)


def test_days_to_pending_and_to_close_follow_zillow() -> None:
    """Zillow: "Days to pending: days from first shown for sale to pending, for homes that went
    pending in the period"; "days to close: from pending to the sale date". January's contracts:
    A 10 days after entry, B 20, C 40: median 20. C closes Feb 25, 25 days after its Pending
    (Jan 31): February's days to close 25."""
    frame = market([
        {"id": "A", "status": "Pending", "entry": "01-01", "major": "01-11"},
        {"id": "B", "status": "Pending", "entry": "01-01", "major": "01-21"},
        {"id": "C", "status": "Closed", "entry": "2025-12-22", "closed": "02-25",
         "close_price": 400_000, "major": "02-25"},
    ])  # fmt: skip
    changes = history([
        ("A", "01-11", "status", "Pending"),
        ("B", "01-21", "status", "Pending"),
        ("C", "01-31", "status", "Pending"),
        ("C", "02-25", "status", "Closed"),
    ])  # fmt: skip
    out = months(frame, changes, "2026-02-28")
    assert (out.loc["01", "median_days_to_pending"], out.loc["01", "median_days_to_pending_n"]) == (
        20,
        3,
    )
    assert (out.loc["02", "median_days_to_close"], out.loc["02", "median_days_to_close_n"]) == (
        25,
        1,
    )


def test_age_of_inventory_follows_redfin() -> None:
    """Redfin: "Age of inventory: the median days the active listings have been on the market".
    Active at Jan 31: A entered Jan 1 (30 days), B Dec 1 (61), C Nov 1 (91): median 61. B went
    Pending and came back in January: counted from its original entry (our departure)."""
    frame = market([
        {"id": "A", "status": "Active", "entry": "01-01"},
        {"id": "B", "status": "Active", "entry": "2025-12-01", "major": "01-20"},
        {"id": "C", "status": "Active", "entry": "2025-11-01"},
    ])  # fmt: skip
    changes = history([("B", "01-05", "status", "Pending"), ("B", "01-20", "status", "Active")])
    jan = months(frame, changes, "2026-02-28").loc["01"]
    assert (jan["age_of_inventory"], jan["age_of_inventory_n"]) == (61, 3)


def test_price_cut_share_and_median_cut_follow_zillow() -> None:
    """Zillow: "Share of listings with a price cut" and "median price cut (% of the list
    price)" among the period's listings. Active in February: A cut 500k → 450k (10 %), B 400k →
    380k (5 %), C unchanged, D raised 500k → 550k then cut to 520k (ends above its start: no
    cut). 2 of 4 = 0.5; median cut of A and B: 7.5 %."""
    frame = market([
        {"id": "A", "status": "Active", "entry": "01-05", "list": 450_000},
        {"id": "B", "status": "Active", "entry": "01-05", "list": 380_000},
        {"id": "C", "status": "Active", "entry": "01-05"},
        {"id": "D", "status": "Active", "entry": "01-05", "list": 520_000},
    ])  # fmt: skip
    changes = history([
        ("A", "02-10", "price", (500_000, 450_000)),
        ("B", "02-11", "price", (400_000, 380_000)),
        ("D", "02-05", "price", (500_000, 550_000)),
        ("D", "02-20", "price", (550_000, 520_000)),
    ])  # fmt: skip
    feb = months(frame, changes, "2026-02-28").loc["02"]
    assert (feb["price_cut_share"], feb["price_cut_share_n"]) == (0.5, 4)
    assert feb["median_cut_pct"] == pytest.approx(0.075)


def test_pending_ratio_follows_realtor_com_at_the_period_end() -> None:
    """Realtor.com: "Pending ratio: pending listings (contingent included) ÷ active listings".
    At Jan 31: P1, P2 Pending, U Active Under Contract, A1-A3 Active: (2 + 1) / 3 = 1.0.
    Realtor.com averages the month's days, we take its last instant (the departure measured on
    the sandbox in docs/metrics.md): Q went Pending Jan 20 and Closed Jan 28, pending for 8 days
    of January, is in neither count."""
    frame = market([
        {"id": "P1", "status": "Pending", "entry": "2025-12-01", "major": "01-05"},
        {"id": "P2", "status": "Pending", "entry": "2025-12-01", "major": "01-06"},
        {"id": "U", "status": "Active Under Contract", "entry": "2025-12-01", "major": "01-07"},
        {"id": "Q", "status": "Closed", "entry": "2025-12-01", "closed": "01-28",
         "close_price": 400_000, "major": "01-28"},
        *({"id": f"A{i}", "status": "Active", "entry": "2025-12-01"} for i in range(3)),
    ])  # fmt: skip
    changes = history([
        ("P1", "01-05", "status", "Pending"),
        ("P2", "01-06", "status", "Pending"),
        ("U", "01-07", "status", "Active Under Contract"),
        ("Q", "01-20", "status", "Pending"),
        ("Q", "01-28", "status", "Closed"),
    ])  # fmt: skip
    jan = months(frame, changes, "2026-01-31").loc["01"]
    assert (jan["pending_ratio"], jan["pending_ratio_n"]) == (1.0, 3)


# -- what departs from Redfin, by hand -------------------------------------------------------------


def test_default_pending_sales_and_redfin_s_differ_by_the_90_day_rule() -> None:
    """Redfin: "Pending sales ... excludes homes on the market more than 90 days". A Pending
    on day 90 after entry (in both), B on day 91 (default only): 2 against 1."""
    frame = market([
        {"id": "A", "status": "Pending", "entry": "2025-10-17", "major": "01-15"},
        {"id": "B", "status": "Pending", "entry": "2025-10-16", "major": "01-15"},
    ])  # fmt: skip
    changes = history([("A", "01-15", "status", "Pending"), ("B", "01-15", "status", "Pending")])
    assert (pd.Timestamp("2026-01-15") - pd.Timestamp("2025-10-17")).days == 90
    default = months(frame, changes, "2026-01-31").loc["01", "pending_sales"]
    redfin = months(frame, changes, "2026-01-31", definitions="redfin").loc["01", "pending_sales"]
    assert (default, redfin) == (2, 1)


def test_every_median_and_share_has_its_n() -> None:
    """The hand markets above rely on ``_n`` columns: each median and share of the trends has
    one (docs/metrics.md: "every median and ratio has <metric>_n")."""
    frame = market([{"id": "A", "status": "Active", "entry": "01-05"}])
    out = months(frame, history([]), "2026-01-31")
    medians = [c for c in out.columns if c.startswith(("median_", "avg_", "pct_", "age_"))]
    medians = [c for c in medians if not c.endswith(("_n", "_mom", "_yoy"))]
    assert medians and all(f"{c}_n" in out.columns for c in medians)
    assert np.isnan(out.loc["01", "median_sale_price"]) and out.loc["01", "homes_sold"] == 0


def test_the_claim_table_names_tests_that_exist() -> None:
    """docs/metrics.md's "Claim → test" table names only tests that exist (F, FI, D: the files
    its legend gives), so the table cannot drift from the tests."""
    here = Path(__file__).parent
    doc = (here.parent.parent / "docs" / "metrics.md").read_text(encoding="utf-8")
    table = doc.split("## Claim → test", 1)[1].split("\n## ", 1)[0]
    files = {"F": "test_follows.py", "FI": "test_follows_index.py", "D": "test_definitions.py"}
    sources = {k: (here / v).read_text(encoding="utf-8") for k, v in files.items()}
    sources["tests/analysis/test_price_index.py"] = (here / "test_price_index.py").read_text(
        encoding="utf-8"
    )
    named = 0
    for line in table.splitlines():
        if not line.startswith("| ") or line.startswith(("| Claim", "|---")):
            continue
        cell = line.rstrip(" |").rsplit(" | ", 1)[1]
        for part in cell.split(";"):
            where, *names = part.strip().split(" `")
            source = sources.get(where.strip())
            for name in (n.strip("`, ") for n in names):
                assert source is not None and f"def {name}(" in source, (where, name)
                named += 1
    assert named >= 25
