"""What the trends' definitions mean, by hand (#34): Active Under Contract is under contract;
``definitions="redfin"`` on each of its three differences; the running month's age of inventory
counted to the data's end.

Every time is noon UTC in 2026 unless said; days are calendar days between UTC dates."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

import realtyframes as rf

NAN = math.nan


def t(day: str) -> pd.Timestamp:
    return pd.Timestamp(day if len(day) > 5 else f"2026-{day}", tz="UTC") + pd.Timedelta(hours=12)


def market(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Residential listings in one city; each row: id, status, entry, list price (the price on
    the record), and optionally previous price, close date and price, major change."""
    out = pd.DataFrame(
        {
            "ListingId": [r["id"] for r in rows],
            "City": "Doral",
            "PropertyType": "Residential",
            "StandardStatus": [r["status"] for r in rows],
            "ListPrice": [float(r.get("list", 500_000)) for r in rows],
            "PreviousListPrice": [float(r.get("previous", NAN)) for r in rows],
            "ClosePrice": [float(r.get("close_price", NAN)) for r in rows],
            "LivingArea": 1000.0,
            "DaysOnMarket": 10,
            "OriginalEntryTimestamp": [t(r["entry"]) for r in rows],
            "MajorChangeTimestamp": [t(r.get("major", r["entry"])) for r in rows],
            "CloseDate": [t(r["closed"]) if "closed" in r else pd.NaT for r in rows],
        }
    )
    return out


def history(rows: list[tuple[str, str, str, Any]]) -> pd.DataFrame:
    """(id, day, kind, value): a status change to ``value``, or a price change (old, new)."""
    records = []
    for listing, day, kind, value in rows:
        status = kind == "status"
        records.append(
            {
                "ListingId": listing,
                "ChangeType": "status_change" if status else "price_change",
                "ChangeTimestamp": t(day),
                "PreviousListPrice": NAN if status else float(value[0]),
                "ListPrice": NAN if status else float(value[1]),
                "StandardStatus": value if status else None,
            }
        )
    return pd.DataFrame(records)


def months(frame: pd.DataFrame, changes: pd.DataFrame, end: str, **options: Any) -> pd.DataFrame:
    out = rf.market_trends(frame, changes, freq="M", start="2026-01-01", end=end, min_sample=1,
                           **options)  # fmt: skip
    return out.set_index(out["period_begin"].dt.strftime("%m"))


# -- Active Under Contract -------------------------------------------------------------------------


def test_active_under_contract_is_under_contract() -> None:
    """docs/metrics.md's worked example. X enters Jan 5, goes Active Under Contract on Jan 18
    (day 13) and Pending on Feb 2 (day 28); Y, Active since December, is the inventory.

    - off market in two weeks (January's new listings: X): under contract on day 13 ≤ 14, so
      1 of 1 (it was 0: Active Under Contract counted as nothing, and day 28 is too late);
    - days to pending: X went under contract in January, 13 days after entry; Pending on Feb 2
      continues the same contract: February has none;
    - pending ratio at Jan 31: X (under contract) over the Active inventory, Y alone: 1 / 1;
      X is not Active then (active_listings 1) and not Pending (pending_listings 0)."""
    frame = market([
        {"id": "X", "status": "Pending", "entry": "01-05", "major": "02-02"},
        {"id": "Y", "status": "Active", "entry": "2025-12-01"},
    ])  # fmt: skip
    changes = history([
        ("X", "01-18", "status", "Active Under Contract"),
        ("X", "02-02", "status", "Pending"),
    ])  # fmt: skip
    out = months(frame, changes, "2026-02-28")
    jan, feb = out.loc["01"], out.loc["02"]
    assert (jan["off_market_in_two_weeks"], jan["off_market_in_two_weeks_n"]) == (1.0, 1)
    assert (jan["median_days_to_pending"], jan["median_days_to_pending_n"]) == (13, 1)
    assert np.isnan(feb["median_days_to_pending"]) and feb["median_days_to_pending_n"] == 0
    assert (jan["active_listings"], jan["pending_listings"], jan["pending_ratio"]) == (1, 0, 1.0)
    assert (feb["active_listings"], feb["pending_listings"], feb["pending_ratio"]) == (1, 1, 1.0)
    assert jan["active_listings_any"] == 2  # X was Active Jan 5-18
    assert jan["pending_sales"] == 0 and feb["pending_sales"] == 1  # the Pending status itself


# -- definitions="redfin" --------------------------------------------------------------------------


def test_redfin_pending_sales_leave_out_listings_under_contract_after_90_days() -> None:
    """P1 enters Jan 1, Pending Jan 20 (19 days); P2 enters Oct 1 2025, Pending Jan 15 (106
    days): both are January's pending sales by default, P1 alone by Redfin's definition."""
    frame = market([
        {"id": "P1", "status": "Pending", "entry": "01-01", "major": "01-20"},
        {"id": "P2", "status": "Pending", "entry": "2025-10-01", "major": "01-15"},
    ])  # fmt: skip
    changes = history([("P1", "01-20", "status", "Pending"), ("P2", "01-15", "status", "Pending")])
    default = months(frame, changes, "2026-01-31")
    redfin = months(frame, changes, "2026-01-31", definitions="redfin")
    assert default.loc["01", "pending_sales"] == 2
    assert redfin.loc["01", "pending_sales"] == 1
    assert redfin.attrs["definitions"] == "redfin" and default.attrs["definitions"] == "default"


def test_redfin_median_list_price_is_the_most_recent_list_price() -> None:
    """L enters Jan 10 at $500k, cut to $450k on Feb 5 (the record's ListPrice): January's
    median list price is $500k by default (the price at entry), $450k by Redfin's."""
    frame = market([{"id": "L", "status": "Active", "entry": "01-10", "list": 450_000,
                     "previous": 500_000, "major": "02-05"}])  # fmt: skip
    changes = history([("L", "02-05", "price", (500_000, 450_000))])
    assert months(frame, changes, "2026-02-28").loc["01", "median_list_price"] == 500_000
    redfin = months(frame, changes, "2026-02-28", definitions="redfin")
    assert redfin.loc["01", "median_list_price"] == 450_000


def test_redfin_sale_to_list_is_on_the_original_list_price() -> None:
    """S enters Jan 3 at $400k, is cut to $380k on Jan 10 and sells on Feb 10 for $390k: by
    default 390 / 380, by Redfin's 390 / 400; sold above its final list price under both
    (Redfin's "sold above list" is against the final list price)."""
    frame = market([{"id": "S", "status": "Closed", "entry": "01-03", "list": 380_000,
                     "previous": 400_000, "closed": "02-10", "close_price": 390_000,
                     "major": "02-10"}])  # fmt: skip
    changes = history([
        ("S", "01-10", "price", (400_000, 380_000)),
        ("S", "01-25", "status", "Pending"),
        ("S", "02-10", "status", "Closed"),
    ])  # fmt: skip
    default = months(frame, changes, "2026-02-28").loc["02"]
    redfin = months(frame, changes, "2026-02-28", definitions="redfin").loc["02"]
    assert default["avg_sale_to_list"] == pytest.approx(390 / 380)
    assert default["pct_sold_above_list"] == 1.0
    assert redfin["avg_sale_to_list"] == pytest.approx(390 / 400)
    for same in ("homes_sold", "median_sale_price", "median_days_to_close", "pct_sold_above_list"):
        assert default[same] == redfin[same]


@pytest.mark.parametrize("value", ["zillow", "", None, "Redfin"])
def test_an_unknown_definitions_is_refused_naming_the_allowed_ones(value: object) -> None:
    frame = market([{"id": "A", "status": "Active", "entry": "01-05"}])
    with pytest.raises(rf.QueryError, match=r"definitions: .*allowed: default, redfin"):
        rf.market_trends(frame, definitions=value)


# -- age of inventory ------------------------------------------------------------------------------


def test_the_running_month_s_age_of_inventory_is_counted_to_the_data_s_end() -> None:
    """Y, Active since Jan 1, seen on Feb 10: 40 days old, not 58 (to Feb 28, a day in the
    future); January, over, counts to its last day (30)."""
    frame = market([{"id": "Y", "status": "Active", "entry": "01-01"}])
    out = months(frame, history([]).reindex(columns=["ListingId", "ChangeType",
                                                     "ChangeTimestamp"]), "2026-02-10")  # fmt: skip
    assert out["complete"].tolist() == [True, False]
    assert out["age_of_inventory"].tolist() == [30, 40]
