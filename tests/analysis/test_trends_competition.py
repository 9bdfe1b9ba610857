"""The competition columns of ``rf.market_trends`` (#27) and the rolling 4-week periods, worked by
hand on a five-listing market at ``freq="W"``, ``"4W"`` and ``"M"``.

The market (Residential, one city, 2026), every time at noon UTC:

- A: enters Feb 3 at $400k; Pending Feb 10 (7 days: off the market within two weeks); Closed
  Mar 12 at $410k.
- B: enters Feb 4 at $500k; cut to $480k Feb 11 and raised to $490k Feb 13 (a cut and a raise
  in one week: net a 2 % cut); Pending Mar 4 (28 days: not within two weeks); Closed Mar 25.
- C: enters Feb 16 at $300k; raised to $320k Feb 17 and cut to $310k Feb 19 (net a raise);
  Pending Feb 24 (8 days); back on the market Mar 3; Pending again Mar 10.
- D: entered Jan 5 at $600k; Active throughout; cut to $570k Mar 18 (5 %).
- E: enters Mar 20 at $700k; Active.

Weeks (Monday–Sunday): w0 Feb 2–8, w1 Feb 9–15, w2 Feb 16–22, w3 Feb 23–Mar 1, w4 Mar 2–8,
w5 Mar 9–15, w6 Mar 16–22, w7 Mar 23–29 (and w-3..w-1, Jan 12–Feb 1, before them). Status
intervals: A Active [Feb 3, Feb 10); B Active [Feb 4, Mar 4); C Active [Feb 16, Feb 24) and
[Mar 3, Mar 10); D Active from Jan 5; E Active from Mar 20. The expected values below are worked
from these lines alone; days are calendar days between UTC dates.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

import realtyframes as rf

NAN = math.nan


def t(day: str) -> pd.Timestamp:
    return pd.Timestamp(f"2026-{day} 12:00", tz="UTC")


def market() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "ListingId": ["A", "B", "C", "D", "E"],
            "City": "Doral",
            "PropertyType": "Residential",
            "StandardStatus": ["Closed", "Closed", "Pending", "Active", "Active"],
            "ListPrice": [400_000.0, 490_000.0, 310_000.0, 570_000.0, 700_000.0],
            "PreviousListPrice": [NAN, 480_000.0, 320_000.0, 600_000.0, NAN],
            "ClosePrice": [410_000.0, 485_000.0, NAN, NAN, NAN],
            "LivingArea": 1000.0,
            "DaysOnMarket": [7, 28, 22, 83, 9],
            "OriginalEntryTimestamp": [t("02-03"), t("02-04"), t("02-16"), t("01-05"), t("03-20")],
            "MajorChangeTimestamp": [t("03-12"), t("03-25"), t("03-10"), t("03-18"), t("03-20")],
            "CloseDate": [t("03-12"), t("03-25"), pd.NaT, pd.NaT, pd.NaT],
        }
    )


def history() -> pd.DataFrame:
    status, price = "status_change", "price_change"
    rows = [
        ("A", status, "02-10", NAN, NAN, "Pending"),
        ("A", status, "03-12", NAN, NAN, "Closed"),
        ("B", price, "02-11", 500_000.0, 480_000.0, None),
        ("B", price, "02-13", 480_000.0, 490_000.0, None),
        ("B", status, "03-04", NAN, NAN, "Pending"),
        ("B", status, "03-25", NAN, NAN, "Closed"),
        ("C", price, "02-17", 300_000.0, 320_000.0, None),
        ("C", price, "02-19", 320_000.0, 310_000.0, None),
        ("C", status, "02-24", NAN, NAN, "Pending"),
        ("C", status, "03-03", NAN, NAN, "Active"),
        ("C", status, "03-10", NAN, NAN, "Pending"),
        ("D", price, "03-18", 600_000.0, 570_000.0, None),
    ]
    columns = ["ListingId", "ChangeType", "ChangeTimestamp", "PreviousListPrice", "ListPrice",
               "StandardStatus"]  # fmt: skip
    frame = pd.DataFrame(rows, columns=columns)
    frame["ChangeTimestamp"] = frame["ChangeTimestamp"].map(t)
    return frame


def trends(freq: str, end: str, with_history: bool = True) -> pd.DataFrame:
    start = "2026-02-01" if freq == "M" else "2026-02-02"
    out = rf.market_trends(market(), history() if with_history else None, freq=freq, start=start,
                           end=end, min_sample=1)  # fmt: skip
    return out


def check(out: pd.DataFrame, expect: dict[str, list[float]]) -> None:
    for column, values in expect.items():
        np.testing.assert_allclose(
            out[column].to_numpy(dtype=float), values, rtol=1e-12, err_msg=column
        )


def test_weeks_by_hand() -> None:
    out = trends("W", "2026-03-29")
    assert list(out["period_end"].dt.strftime("%m-%d")) == [
        "02-08", "02-15", "02-22", "03-01", "03-08", "03-15", "03-22", "03-29"]  # fmt: skip
    check(out, {
        # Active at any instant: w0 A B D; w1 A (to Feb 10 noon) B D; w2-w3 B C D; w4 B C
        # (Mar 3-10) D; w5 C D; w6-w7 D E
        "active_listings_any": [3, 3, 3, 3, 3, 2, 2, 2],
        # at the Sunday: Feb 8 A B D; Feb 15 B D; Feb 22 B C D; Mar 1 B D; Mar 8 C D; Mar 15 D;
        # Mar 22 and 29 D E
        "active_listings": [3, 2, 3, 2, 2, 1, 2, 2],
        "pending_listings": [0, 1, 1, 2, 2, 2, 2, 1],  # A from Feb 10, C Feb 24-Mar 3 ...
        "pending_ratio": [0 / 3, 1 / 2, 1 / 3, 2 / 2, 2 / 2, 2 / 1, 2 / 2, 1 / 2],
        "pending_ratio_n": [3, 2, 3, 2, 2, 1, 2, 2],
        # sales: A in w5 (one active at the end), B in w7 (two): sales x 30/7 days / active
        "absorption_rate": [0, 0, 0, 0, 0, 1 * 30 / 7 / 1, 0, 1 * 30 / 7 / 2],
        "absorption_rate_n": [3, 2, 3, 2, 2, 1, 2, 2],
        # days from entry to the Sunday of those Active then: w0 A 8-3=5, B 8-4=4, D 34 -> 5;
        # w1 B 11, D 41 -> 26; w2 B 18, C 6, D 48 -> 18; w3 B 25, D 55 -> 40; w4 C 20, D 62 -> 41;
        # w5 D 69; w6 D 76, E 2 -> 39; w7 D 83, E 9 -> 46
        "age_of_inventory": [5, 26, 18, 40, 41, 69, 39, 46],
        "age_of_inventory_n": [3, 2, 3, 2, 2, 1, 2, 2],
        # listed in w0: A (7 days, yes) and B (28, no); w2: C (8, yes); E (w6) entered 9 days
        # before the data's end (Mar 29): its two weeks are not over, left out
        "off_market_in_two_weeks": [1 / 2, NAN, 1 / 1, NAN, NAN, NAN, NAN, NAN],
        "off_market_in_two_weeks_n": [2, 0, 1, 0, 0, 0, 0, 0],
        # went Pending: w1 A (Feb 10 - Feb 3 = 7); w3 C (8); w4 B (Mar 4 - Feb 4 = 28);
        # w5 C again after coming back (Mar 10 - Feb 16 = 22, from its first entry)
        "median_days_to_pending": [NAN, 7, NAN, 8, 28, 22, NAN, NAN],
        "median_days_to_pending_n": [0, 1, 0, 1, 1, 1, 0, 0],
        "pending_sales": [0, 1, 0, 1, 1, 1, 0, 0],
        # sold: w5 A (Mar 12 - Feb 10 = 30); w7 B (Mar 25 - Mar 4 = 21)
        "median_days_to_close": [NAN, NAN, NAN, NAN, NAN, 30, NAN, 21],
        "median_days_to_close_n": [0, 0, 0, 0, 0, 1, 0, 1],
        # w1: B 500k at the start, 490k at the end (cut, then raise): a net cut of 2 %, 1 of 3;
        # w2: C 300k -> 310k (raise, then cut): no net cut; w6: D 600k -> 570k, 1 of 2
        "price_cut_share": [0, 1 / 3, 0, 0, 0, 0, 1 / 2, 0],
        "price_cut_share_n": [3, 3, 3, 3, 3, 2, 2, 2],
        "median_cut_pct": [NAN, 10 / 500, NAN, NAN, NAN, NAN, 30 / 600, NAN],
        "median_cut_pct_n": [0, 1, 0, 0, 0, 0, 1, 0],
        "price_drops": [0, 1, 1, 0, 0, 0, 1, 0],  # any cut: B in w1, C (320k -> 310k) in w2
    })  # fmt: skip
    # week over week: the previous week, also before `start` where the data cover it (from the
    # first whole week after D's entry on Jan 5: Jan 12); w-1 (Jan 26-Feb 1): D alone, Active,
    # no cut; year over year: 52 weeks back (not covered)
    check(out, {"active_listings_any_mom": [3 / 1 - 1, 0, 0, 0, 0, -1 / 3, 0, 0],
                "price_cut_share_mom": [0, 1 / 3, -1 / 3, 0, 0, 0, 1 / 2, -1 / 2]})  # fmt: skip
    assert out.attrs["read_from"] == pd.Timestamp("2026-01-12")
    assert out["age_of_inventory_yoy"].isna().all()
    assert out.attrs["lags"] == out.attrs["changes"] == {"mom": 1, "yoy": 52}


def test_rolling_four_weeks_by_hand() -> None:
    out = trends("4W", "2026-03-29")
    # k0..k7: the 4 weeks to each Sunday, k0 = w-3..w0 (Jan 12-Feb 8) ... k7 = w4..w7
    assert list(out["period_begin"].dt.strftime("%m-%d")) == [
        "01-12", "01-19", "01-26", "02-02", "02-09", "02-16", "02-23", "03-02"]  # fmt: skip
    assert list(out["period_end"].dt.strftime("%m-%d")) == [
        "02-08", "02-15", "02-22", "03-01", "03-08", "03-15", "03-22", "03-29"]  # fmt: skip
    check(out, {
        # the union of the weeks' sets: k0 A B D; k1 A B D; k2-k4 A B C D; k5 B C D; k6-k7 B C D E
        "active_listings_any": [3, 3, 4, 4, 4, 3, 4, 4],
        # stocks at each window's end: the weeks' (the same Sundays)
        "active_listings": [3, 2, 3, 2, 2, 1, 2, 2],
        "pending_ratio": [0 / 3, 1 / 2, 1 / 3, 2 / 2, 2 / 2, 2 / 1, 2 / 2, 1 / 2],
        "age_of_inventory": [5, 26, 18, 40, 41, 69, 39, 46],
        # sold: A (w5) in k5 k6 k7, B (w7) in k7; 30/28 of a window's sales per month / active
        "homes_sold": [0, 0, 0, 0, 0, 1, 1, 2],
        "absorption_rate": [0, 0, 0, 0, 0, 30 / 28 / 1, 30 / 28 / 2, 2 * 30 / 28 / 2],
        # listed: A B (w0) in k0-k3, C (w2) in k2-k5; A and C within two weeks, B not
        "off_market_in_two_weeks": [1 / 2, 1 / 2, 2 / 3, 2 / 3, 1 / 1, 1 / 1, NAN, NAN],
        "off_market_in_two_weeks_n": [2, 2, 3, 3, 1, 1, 0, 0],
        # went Pending: A w1 (7), C w3 (8), B w4 (28), C w5 (22); C twice in k5 and k6 counts
        # once, at its first (8): k1 7; k2 7; k3 7, 8; k4 7, 8, 28; k5 8, 28; k6 8, 28; k7 28, 22
        "median_days_to_pending": [NAN, 7, 7, 7.5, 8, 18, 18, 25],
        "median_days_to_pending_n": [0, 1, 1, 2, 3, 2, 2, 2],
        "pending_sales": [0, 1, 1, 2, 3, 2, 2, 2],
        # A (30) in k5-k7, B (21) in k7
        "median_days_to_close": [NAN, NAN, NAN, NAN, NAN, 30, 30, 25.5],
        "median_days_to_close_n": [0, 0, 0, 0, 0, 1, 1, 2],
        # B 500k -> 490k over k1-k4 (k0 ends Feb 8: 500k -> 500k; from k5 on 490k -> 490k); C
        # 300k (at entry) or 310k at the start, 310k at the end: never a cut; D 600k -> 570k in
        # k6 and k7 (Mar 18)
        "price_cut_share": [0 / 3, 1 / 3, 1 / 4, 1 / 4, 1 / 4, 0 / 3, 1 / 4, 1 / 4],
        "median_cut_pct": [NAN, 0.02, 0.02, 0.02, 0.02, NAN, 0.05, 0.05],
        "median_cut_pct_n": [0, 1, 1, 1, 1, 0, 1, 1],
        # any cut record: B (w1) in k1-k4, C (w2) in k2-k5, D (w6) in k6-k7
        "price_drops": [0, 1, 2, 2, 2, 1, 1, 1],
    })  # fmt: skip
    # period over period: against the 4 weeks before (4 rows back, no overlap)
    # (k4 against k0, 4 / 3 - 1; k5 against k1, 3 / 3 - 1; k6 against k2 and k7 against k3)
    check(out, {"active_listings_any_mom": [NAN, NAN, NAN, NAN, 4 / 3 - 1, 3 / 3 - 1,
                                            4 / 4 - 1, 4 / 4 - 1],
                "price_cut_share_mom": [NAN, NAN, NAN, NAN, 1 / 4 - 0, 0 - 1 / 3, 1 / 4 - 1 / 4,
                                        1 / 4 - 1 / 4]})  # fmt: skip
    assert out.attrs["lags"] == {"mom": 4, "yoy": 52}
    assert list(out["complete"]) == [True] * 8
    # no window before k0 is covered: k-1 (Jan 5-Feb 1) begins before D's entry, Jan 5 noon
    assert out.attrs["read_from"] == out["period_begin"].iloc[0]


def test_months_by_hand() -> None:
    out = trends("M", "2026-03-31")
    check(out, {
        "active_listings_any": [4, 4],  # Feb A B C D; Mar B (to Mar 4) C (Mar 3-10) D E
        "active_listings": [2, 2],  # Feb 28 B D; Mar 31 D E
        "pending_ratio": [2 / 2, 1 / 2],  # pending: Feb 28 A C; Mar 31 C
        "absorption_rate": [0, 2 * 30 / 31 / 2],  # March: A and B sold
        "age_of_inventory": [(24 + 54) / 2, (85 + 11) / 2],  # Feb B D; Mar D E
        # Feb: A yes, B no, C yes; Mar: E listed 11 days before Mar 31, left out
        "off_market_in_two_weeks": [2 / 3, NAN],
        "off_market_in_two_weeks_n": [3, 0],
        "median_days_to_pending": [(7 + 8) / 2, (28 + 22) / 2],  # Feb A C; Mar B, C again
        "median_days_to_close": [NAN, (30 + 21) / 2],
        "price_cut_share": [1 / 4, 1 / 4],  # Feb B (net 2 %); Mar D (5 %)
        "median_cut_pct": [0.02, 0.05],
    })  # fmt: skip
    assert out.attrs["blank_without_history"] == []


def test_a_period_not_over_takes_a_rate_over_its_days_so_far() -> None:
    """March seen on Mar 25: its sales so far (A Mar 12, B Mar 25) over its 25 days so far, not
    over March's 31 (which read as 2 / (2 x 30 / 31) = 1.03 months instead of 0.83)."""
    out = trends("M", "2026-03-25")
    assert list(out["complete"]) == [True, False]
    check(out, {
        "active_listings": [2, 2],  # Mar 25: D, E
        "homes_sold": [0, 2],
        "months_of_supply": [NAN, 2 / (2 * 30 / 25)],
        "absorption_rate": [0, 2 * 30 / 25 / 2],
    })  # fmt: skip


def test_without_history_the_contract_metrics_are_blank_and_cuts_are_estimated() -> None:
    out = trends("M", "2026-03-31", with_history=False)
    for metric in ("off_market_in_two_weeks", "median_days_to_pending", "median_days_to_close"):
        assert out[metric].isna().all() and (out[f"{metric}_n"] == 0).all(), metric
    assert out.attrs["blank_without_history"] == [
        "off_market_in_two_weeks", "median_days_to_pending", "median_days_to_close"]  # fmt: skip
    check(out, {
        # estimated timelines: Active from entry to the current status at MajorChangeTimestamp
        # (CloseDate for Closed): March: A (to Mar 12), B (to Mar 25), C (to Mar 10), D, E
        "active_listings_any": [4, 5],
        # one change each, PreviousListPrice -> ListPrice at MajorChangeTimestamp: B 480k -> 490k
        # Mar 25 (a raise), C 320k -> 310k Mar 10, D 600k -> 570k Mar 18: 2 of 5 cut in March
        "price_cut_share": [0, 2 / 5],
        "median_cut_pct": [NAN, (10 / 320 + 30 / 600) / 2],
        # Feb 28, all four Active in the estimate: A 25, B 24, C 12, D 54; Mar 31: D 85, E 11
        "age_of_inventory": [(24 + 25) / 2, (85 + 11) / 2],
    })  # fmt: skip


def test_columns_are_declared_once() -> None:
    out = trends("W", "2026-03-29")
    metrics = rf.analysis.TREND_METRICS
    for name in ("active_listings_any", "off_market_in_two_weeks", "absorption_rate"):
        assert name in metrics and f"{name}_yoy" in out.columns and f"{name}_mom" in out.columns
    assert "active_listings_any_n" not in out.columns  # a count: no sample size
    assert out["active_listings_any"].dtype == "int64"


def test_the_history_status_reads_as_the_flags_did_in_every_column_type() -> None:
    """The history's StandardStatus coded in one pass (text, pyarrow text, categorical, loose
    objects) gives the code a comparison per status gives: any other value and a missing one
    are OTHER."""
    from realtyframes.analysis._trends_kernel import (
        ACTIVE,
        CLOSED,
        OTHER,
        PENDING,
        UNDER_CONTRACT,
        status_of,
    )

    values = ["Active", "Pending", None, "Closed", "Active Under Contract", "Expired"]
    expected = [ACTIVE, PENDING, OTHER, CLOSED, UNDER_CONTRACT, OTHER]
    for dtype in ("str", "category", "string[pyarrow]", object):
        assert status_of(pd.Series(values, dtype=dtype)).tolist() == expected, dtype
    loose = pd.Series(["Active", 3, None, "Closed", 2.5], dtype=object)
    assert status_of(loose).tolist() == [ACTIVE, OTHER, OTHER, CLOSED, OTHER]
    assert status_of(pd.Series([], dtype="str")).tolist() == []
