"""``rf.comps``: distances against known city pairs, the rules, the ranking and the estimate."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import realtyframes as rf
from realtyframes.analysis import haversine_km
from realtyframes.errors import AnalysisInputError, DataQualityWarning

KM_PER_DEG_LAT = 2 * math.pi * 6371.0088 / 360  # 111.195 km per degree of latitude


@pytest.mark.parametrize(
    ("a", "b", "km"),
    [
        # published great-circle distances between city centres
        ((51.5074, -0.1278), (48.8566, 2.3522), 343.6),  # London - Paris
        ((40.7128, -74.0060), (34.0522, -118.2437), 3936.0),  # New York - Los Angeles
        ((25.7617, -80.1918), (26.1224, -80.1373), 40.5),  # Miami - Fort Lauderdale
    ],
)
def test_distances_match_known_city_pairs(a: tuple, b: tuple, km: float) -> None:
    assert float(haversine_km(*a, *b)) == pytest.approx(km, rel=0.005)
    assert float(haversine_km(*b, *a)) == pytest.approx(float(haversine_km(*a, *b)))


def t(day: str) -> pd.Timestamp:
    return pd.Timestamp(f"{day} 12:00", tz="UTC")


def market() -> pd.DataFrame:
    """A subject S (2 beds, 1,000 sq ft) at Brickell and sales around it."""
    lat0, lon0 = 25.7617, -80.1918
    north = lambda km: lat0 + km / KM_PER_DEG_LAT  # noqa: E731
    rows = [
        # id, status, subtype, beds, area, close price, close date, lat, lon
        ("S", "Active", "Condominium", 2, 1000.0, None, None, lat0, lon0),
        ("C1", "Closed", "Condominium", 2, 1000.0, 500_000.0, "2026-06-01", north(0.5), lon0),
        ("C2", "Closed", "Condominium", 3, 1100.0, 605_000.0, "2026-03-01", north(1.0), lon0),
        ("C3", "Closed", "Condominium", 2, 950.0, 475_000.0, "2026-05-15", north(0.2), lon0),
        ("FAR", "Closed", "Condominium", 2, 1000.0, 9e5, "2026-06-01", north(2.0), lon0),
        ("OLD", "Closed", "Condominium", 2, 1000.0, 9e5, "2025-10-01", north(0.1), lon0),
        ("HOUSE", "Closed", "Single Family Residence", 2, 1000.0, 9e5, "2026-06-01", lat0, lon0),
        ("BIG", "Closed", "Condominium", 2, 1400.0, 9e5, "2026-06-01", lat0, lon0),
        ("BEDS", "Closed", "Condominium", 4, 1000.0, 9e5, "2026-06-01", lat0, lon0),
        ("NOPOS", "Closed", "Condominium", 2, 1000.0, 9e5, "2026-06-01", None, None),
        ("OPEN", "Active", "Condominium", 2, 1000.0, None, None, lat0, lon0),
    ]
    frame = pd.DataFrame(
        rows,
        columns=[
            "ListingId",
            "StandardStatus",
            "PropertySubType",
            "BedroomsTotal",
            "LivingArea",
            "ClosePrice",
            "CloseDate",
            "Latitude",
            "Longitude",
        ],
    )
    frame["CloseDate"] = pd.to_datetime(frame["CloseDate"], utc=True)
    frame["PropertyType"] = "Residential"
    frame["UnparsedAddress"] = frame["ListingId"] + " Brickell Ave"
    frame["OriginalEntryTimestamp"] = t("2025-09-01")
    frame["MajorChangeTimestamp"] = t("2026-06-30")  # the market's newest time
    return frame


def test_comps_follow_the_rules_and_the_documented_ranking() -> None:
    with pytest.warns(DataQualityWarning, match="1 closed sales have no coordinates"):
        out = rf.comps(market(), "S")
    # FAR, OLD, HOUSE, BIG, BEDS ruled out; C1 (0.5 km, same size) ranks before C3 (0.2 km but
    # 5 % smaller and sold two weeks earlier): 0.33 + 0.16 + 0 against 0.13 + 0.25 + 0.2
    assert list(out["ListingId"]) == ["C1", "C3", "C2"]
    np.testing.assert_allclose(out["distance_km"], [0.5, 0.2, 1.0], rtol=1e-3)
    assert out["months_ago"].between(0, 6).all()
    np.testing.assert_allclose(out["ppsf"], [500.0, 500.0, 550.0])
    # score = d / 1.5 + months / 6 + |area gap| / 0.25 + |beds gap| / 2
    c2 = out.iloc[2]
    expected = 1.0 / 1.5 + c2["months_ago"] / 6 + 0.1 / 0.25 + 1 / 2
    assert c2["score"] == pytest.approx(expected, rel=1e-3)
    assert out["score"].is_monotonic_increasing
    assert "0.20 km away" in out.loc[1, "why"] and "same subtype (Condominium)" in out.loc[1, "why"]
    assert "-5%" in out.loc[1, "why"]
    assert "3 beds (subject 2)" in c2["why"] and "+10%" in c2["why"]
    estimate = out.attrs["estimate"]
    assert estimate["ppsf"] == 500.0 and estimate["value"] == 500_000.0 and estimate["n"] == 3
    assert estimate["low"] <= estimate["value"] <= estimate["high"] == 525_000.0
    assert out.attrs["no_coordinates"] == ["NOPOS"] and out.attrs["subject"] == "S"


def test_looser_rules_let_more_in() -> None:
    wide = market()
    with pytest.warns(DataQualityWarning):
        out = rf.comps(wide, wide.iloc[0], radius_km=3, months=12, same_subtype=False,
                       beds_tolerance=2, area_tolerance=0.5, max_results=20)  # fmt: skip
    assert set(out["ListingId"]) == {"C1", "C2", "C3", "FAR", "OLD", "HOUSE", "BIG", "BEDS"}
    with pytest.warns(DataQualityWarning):
        assert len(rf.comps(wide, "S", max_results=2)) == 2


def test_bad_input_names_what_is_wrong() -> None:
    with pytest.raises(AnalysisInputError, match="no listing 'NOPE'"):
        rf.comps(market(), "NOPE")
    with pytest.raises(AnalysisInputError, match="has no coordinates"):
        rf.comps(market(), "NOPOS")
    with pytest.raises(AnalysisInputError, match="radius_km"):
        rf.comps(market(), "S", radius_km=0)
    with pytest.raises(rf.MissingColumnsError, match="Latitude"):
        rf.comps(market().drop(columns="Latitude"), "S")


@pytest.mark.slow
def test_comps_on_the_sandbox(sandbox_url: str, tmp_path: pytest.TempPathFactory) -> None:
    with rf.Client(base_url=sandbox_url, cache=False, progress=False) as client:
        market = client.sync_listings(City="Miami")
    active = market[market["StandardStatus"] == "Active"]
    found = 0
    for listing_id in active["ListingId"].head(20):
        out = rf.comps(market, listing_id, radius_km=3, months=12)
        if len(out):
            found += 1
            assert (out["distance_km"] <= 3).all() and out["score"].is_monotonic_increasing
            est = out.attrs["estimate"]
            assert est["low"] <= est["value"] <= est["high"]
    assert found >= 10
