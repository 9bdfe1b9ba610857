"""docs/metrics.md's "follows" of the price index (FHFA's geometric repeat sales, S&P's sales
pair counts, Case-Shiller's three-month average) and of Zillow's price tiers, one hand-built case
each (#34), with the hedonic model's waterfront term. The anchor's rule is quoted in one line,
the expected value worked out by hand in the docstring."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

import realtyframes as rf
from realtyframes.errors import DataQualityWarning

LN = math.log


def sales(rows: list[tuple[str, str, float]], **columns: Any) -> pd.DataFrame:
    """Closed Residential sales: (address, close date, price); every home alike (1,500 sq ft,
    3 beds, 2 baths, built 2000, a Single Family Residence in Doral) unless ``columns`` say."""
    out = pd.DataFrame(
        {
            "ListingId": [f"L{i}" for i in range(len(rows))],
            "UnparsedAddress": [a for a, _, _ in rows],
            "City": "Doral",
            "PropertyType": "Residential",
            "PropertySubType": "Single Family Residence",
            "StandardStatus": "Closed",
            "ClosePrice": [float(p) for _, _, p in rows],
            "CloseDate": [pd.Timestamp(d, tz="UTC") for _, d, _ in rows],
            "LivingArea": 1500.0,
            "BedroomsTotal": 3,
            "BathroomsTotalInteger": 2,
            "YearBuilt": 2000,
        }
    )
    for name, values in columns.items():
        out[name] = values
    return out


def levels(index: pd.DataFrame) -> dict[str, float]:
    return dict(zip(index["period_begin"].dt.strftime("%m"), index["index"], strict=True))


def test_repeat_sales_follow_fhfa_s_geometric_form() -> None:
    """FHFA: "a weighted, repeat-sales index ... geometric" (BMN: log(p2/p1) = δ_t − δ_s + ε,
    OLS, δ_base = 0). Pairs: A Jan $100k → Feb $110k (a = ln 1.1), B Feb $200k → Mar $242k
    (b = ln 1.21), C Jan $100k → Mar $121k (c = ln 1.21); base January. Normal equations:
    2δF − δM = a − b, 2δM − δF = b + c, so δF = (2a − b + c)/3 = 2 ln 1.1 / 3 and
    δM = (a + b + 2c)/3 = 7 ln 1.1 / 3: Feb 106.56, Mar 124.91 (not the pairs' own 110 / 121:
    the three disagree and least squares splits the difference)."""
    frame = sales([
        ("1 A St", "2026-01-10", 100_000), ("1 A St", "2026-02-10", 110_000),
        ("2 B St", "2026-02-12", 200_000), ("2 B St", "2026-03-12", 242_000),
        ("3 C St", "2026-01-15", 100_000), ("3 C St", "2026-03-15", 121_000),
    ])  # fmt: skip
    index = rf.price_index(frame, method="repeat_sales", min_sample=1, base="2026-01-01")
    got = levels(index)
    assert got["01"] == 100
    assert got["02"] == pytest.approx(100 * math.exp(2 * LN(1.1) / 3))  # 106.56
    assert got["03"] == pytest.approx(100 * math.exp(7 * LN(1.1) / 3))  # 124.91
    # S&P: "sales pair counts" by the period of the second sale: Jan 0, Feb 1 (A), Mar 2 (B, C)
    assert index["n"].tolist() == [0, 1, 2]
    assert index["n_in_pairs"].tolist() == [2, 2, 2]


def test_rolling_three_follows_case_shiller_s_three_month_average_geometrically() -> None:
    """S&P: "the index is a three-month moving average". Identical homes sell at $100k in
    January, February and March and $400k in April (two each): δ = 0, 0, 0, ln 4. The March
    window's mean log level is 0 and the base (best-covered window of the first year, the
    earliest of ties); April's is ln 4 / 3: 100 · 4^(1/3) = 158.74 (of the log levels: a
    geometric average; the arithmetic (100 + 100 + 400) / 3 would read 200)."""
    rows = [(f"{m}{k} St", f"2026-{m:02d}-15", 400_000 if m == 4 else 100_000)
            for m in (1, 2, 3, 4) for k in (1, 2)]  # fmt: skip
    index = rf.price_index(sales(rows), method="hedonic", min_sample=1, rolling=3)
    got = levels(index)
    assert math.isnan(got["01"]) and math.isnan(got["02"])
    assert got["03"] == pytest.approx(100)
    assert got["04"] == pytest.approx(100 * 4 ** (1 / 3))  # 158.74


def test_the_hedonic_model_prices_the_waterfront() -> None:
    """Waterfront homes are worth 1.6× (ln 1.6 = 0.47) and more of them sell in February:
    January 2 dry at $100k and 2 waterfront at $160k; February (prices 10 % up) 1 dry at $110k
    and 3 waterfront at $176k. With WaterfrontYN in the model the index reads the 10 % exactly:
    February 110. Without the column (the old model) the mix moves it: the mean log price
    rises by ln 1.1 + (3/4 − 2/4) · ln 1.6, so 100 · 1.1 · 1.6^0.25 = 123.04. An unknown value
    is its own level: the sale is kept (``rows_used`` 9 with a tenth, unknown, sale in
    January at $130k)."""
    rows = [("a", "2026-01-10", 100_000), ("b", "2026-01-11", 100_000),
            ("c", "2026-01-12", 160_000), ("d", "2026-01-13", 160_000),
            ("e", "2026-02-10", 110_000), ("f", "2026-02-11", 176_000),
            ("g", "2026-02-12", 176_000), ("h", "2026-02-13", 176_000)]  # fmt: skip
    water = pd.array([False, False, True, True, False, True, True, True], dtype="boolean")
    with_it = rf.price_index(sales(rows, WaterfrontYN=water), min_sample=1, base="2026-01-01")
    assert levels(with_it)["02"] == pytest.approx(110)
    with pytest.warns(DataQualityWarning, match="thinly covered"):  # the mix is its noise
        without = rf.price_index(sales(rows), min_sample=1, base="2026-01-01")
    assert levels(without)["02"] == pytest.approx(110 * 1.6**0.25)  # 123.04
    text = ["false", "no", "yes", "TRUE", "0", "1", "y", "true", None]
    unknown = sales([*rows, ("i", "2026-01-14", 130_000)], WaterfrontYN=text)
    kept = rf.price_index(unknown, min_sample=1, base="2026-01-01")
    assert kept.attrs["rows_used"] == 9
    assert levels(kept)["02"] == pytest.approx(110)  # the unknown level is priced on its own


def test_tiers_follow_zillow_s_bands() -> None:
    """Zillow: "bottom tier: the 5th to 35th percentile of values, middle 35th-65th, top
    65th-95th". January's 21 sales at $100k, $101k ... $120k: the percentiles (linear, as
    numpy) are 101, 107, 113 and 119 (in $k: 100 + 20 · q). Bottom [101, 107): 6 sales; middle
    [107, 113): 6; top [113, 119]: 7; the tails $100k and $120k are in none: 19 of 21."""
    n = 21
    frame = pd.DataFrame(
        {
            "ListingId": [f"S{i}" for i in range(n)],
            "City": "Doral",
            "PropertyType": "Residential",
            "StandardStatus": "Closed",
            "ListPrice": [1000.0 * (100 + i) for i in range(n)],
            "PreviousListPrice": np.nan,
            "ClosePrice": [1000.0 * (100 + i) for i in range(n)],
            "LivingArea": 1000.0,
            "DaysOnMarket": 10,
            "OriginalEntryTimestamp": pd.Timestamp("2025-12-01 12:00", tz="UTC"),
            "MajorChangeTimestamp": pd.Timestamp("2026-01-15 12:00", tz="UTC"),
            "CloseDate": pd.Timestamp("2026-01-15 12:00", tz="UTC"),
        }
    )
    out = rf.market_trends(frame, freq="M", start="2026-01-01", end="2026-01-31", min_sample=1,
                           tiers=True)  # fmt: skip
    jan = out.set_index("tier")
    assert jan.loc["bottom", "sale_band_low"] == pytest.approx(101_000)
    assert jan.loc["middle", "sale_band_low"] == pytest.approx(107_000)
    assert jan.loc["top", "sale_band_low"] == pytest.approx(113_000)
    assert jan.loc["top", "sale_band_high"] == pytest.approx(119_000)
    assert jan["homes_sold"].tolist() == [6, 6, 7]
    assert jan.loc["middle", "median_sale_price"] == pytest.approx(109_500)


def test_a_group_where_waterfront_is_one_location_is_fitted_without_it() -> None:
    """Every waterfront sale is in Miami Beach and every Miami Beach sale is waterfront: the
    waterfront term and the location's dummy are the same column, not identified apart. The
    group is fitted without the waterfront (as before the term existed: February 110, the
    10 % both cities rose), ``attrs["fit"]`` says so, and no error is raised."""
    rows = [("a", "2026-01-10", 100_000), ("b", "2026-01-11", 100_000),
            ("c", "2026-01-12", 300_000), ("d", "2026-01-13", 300_000),
            ("e", "2026-02-10", 110_000), ("f", "2026-02-11", 110_000),
            ("g", "2026-02-12", 330_000), ("h", "2026-02-13", 330_000)]  # fmt: skip
    city = ["Doral", "Doral", "Miami Beach", "Miami Beach"] * 2
    water = pd.array([False, False, True, True] * 2, dtype="boolean")
    index = rf.price_index(sales(rows, City=city, WaterfrontYN=water), min_sample=1,
                           base="2026-01-01")  # fmt: skip
    assert levels(index)["02"] == pytest.approx(110)
    assert index.attrs["fit"]["without_waterfront"] is True
