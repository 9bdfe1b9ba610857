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
    # 8 closed sales are too few to measure what size or rooms are worth: not adjusted, and said
    assert out.attrs["adjustments"]["reason"] is not None
    assert (out["adjusted_price"] == out["ClosePrice"]).all()
    assert any("not adjusted" in w for w in out.attrs["warnings"])
    # the estimate: weighted median of the adjusted prices, weight 1 / (1 + score), shares
    weight = 1 / (1 + out["score"])
    np.testing.assert_allclose(out["weight"], weight / weight.sum())
    prices = sorted(zip(out["adjusted_price"], out["weight"], strict=True))
    middle = np.cumsum([w for _, w in prices]) - np.array([w for _, w in prices]) / 2
    estimate = out.attrs["estimate"]
    assert estimate["value"] == pytest.approx(np.interp(0.5, middle, [p for p, _ in prices]))
    assert estimate["ppsf"] == pytest.approx(estimate["value"] / 1000.0) and estimate["n"] == 3
    assert estimate["low"] < estimate["value"] < estimate["high"]
    assert out.attrs["no_coordinates"] == ["NOPOS"] and out.attrs["subject"] == "S"
    facts = out.attrs["subject_facts"]
    assert facts["UnparsedAddress"] == "S Brickell Ave" and facts["LivingArea"] == 1000.0


def test_the_market_index_does_not_matter() -> None:
    """A frame whose index repeats (pieces concatenated) gives the same comps."""
    frame = market()
    with pytest.warns(DataQualityWarning):
        plain = rf.comps(frame, "S")
    with pytest.warns(DataQualityWarning):
        repeated = rf.comps(frame.set_axis([0] * len(frame)), "S")
    pd.testing.assert_frame_equal(plain, repeated)


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
        row = active.set_index("ListingId").loc[listing_id]
        facts = out.attrs["subject_facts"]
        assert facts["ListPrice"] == row["ListPrice"] > 0  # the ask stands beside the estimate
        assert facts["UnparsedAddress"] == row["UnparsedAddress"]
        assert out.attrs["adjustments"]["reason"] is None  # Miami has sales enough to fit
        if len(out):
            found += 1
            assert (out["distance_km"] <= 3).all() and out["score"].is_monotonic_increasing
            est = out.attrs["estimate"]
            assert est["low"] <= est["value"] <= est["high"] and est["n"] == len(out)
            adjustments = out[[c for c in out.columns if c.startswith("adj_")]].sum(axis=1)
            np.testing.assert_allclose(out["adjusted_price"], out["ClosePrice"] + adjustments)
            ppsf = out["ppsf"]
            spread = bool(ppsf.max() / ppsf.min() > 2)
            assert spread == any("differ by more than 2 to 1" in w for w in out.attrs["warnings"])
            assert (len(out) < 3) == any("fewer than 3" in w for w in out.attrs["warnings"])
    assert found >= 10


def hedonic_market(seed: int = 3, n: int = 400) -> pd.DataFrame:
    """Sales near Brickell priced by a known model: $/sq ft 400 at 1,500 sq ft, price ∝ area,
    +5 % per bath, +0.5 % per year newer, +50 % on the water (one in five), +6 % a year over
    time, 3 % noise; beds worth nothing beyond their area. The subject S: 1,500 sq ft, 3 beds,
    2 baths, built 2000, not on the water, asking $640,000."""
    rng = np.random.default_rng(seed)
    lat0, lon0 = 25.7617, -80.1918
    area = rng.uniform(1_100, 1_900, n).round()
    beds = rng.integers(2, 5, n)
    baths = rng.integers(1, 4, n)
    built = rng.integers(1970, 2024, n)
    days_ago = rng.uniform(0, 700, n)
    water = rng.random(n) < 0.2
    value = 400 * area * 1.05 ** (baths - 2) * np.exp(0.005 * (built - 2000)) * 1.5**water
    price = value * np.exp(-0.06 * days_ago / 365.25) * rng.lognormal(0, 0.03, n)
    newest = t("2026-06-30")
    frame = pd.DataFrame({
        "ListingId": [f"H{i:03d}" for i in range(n)],
        "StandardStatus": "Closed",
        "PropertyType": "Residential",
        "PropertySubType": "Condominium",
        "BedroomsTotal": beds,
        "BathroomsTotalInteger": baths,
        "LivingArea": area,
        "YearBuilt": built,
        "WaterfrontYN": water,
        "ClosePrice": price.round(-2),
        "CloseDate": [newest - pd.Timedelta(days=float(d)) for d in days_ago],
        "Latitude": lat0 + rng.uniform(-0.01, 0.01, n),
        "Longitude": lon0 + rng.uniform(-0.01, 0.01, n),
        "UnparsedAddress": [f"{100 + i} Brickell Ave, Miami, FL 33131" for i in range(n)],
        "City": "Miami",
        "ListPrice": np.nan,
    })  # fmt: skip
    subject = {"ListingId": "S", "StandardStatus": "Active", "PropertyType": "Residential",
               "PropertySubType": "Condominium", "BedroomsTotal": 3, "BathroomsTotalInteger": 2,
               "LivingArea": 1500.0, "YearBuilt": 2000, "WaterfrontYN": False, "ClosePrice": np.nan,
               "CloseDate": pd.NaT,
               "Latitude": lat0, "Longitude": lon0, "City": "Miami", "ListPrice": 640_000.0,
               "UnparsedAddress": "1 Brickell Ave, Miami, FL 33131"}  # fmt: skip
    frame = pd.concat([frame, pd.DataFrame([subject])], ignore_index=True)
    frame["MajorChangeTimestamp"] = newest
    return frame


def test_the_adjustments_recover_a_known_model_and_have_the_right_signs() -> None:
    out = rf.comps(hedonic_market(), "S", radius_km=2, months=12, max_results=10)
    fit = out.attrs["adjustments"]
    assert fit["reason"] is None and fit["n"] == 400
    worth = fit["coefficients"]
    assert worth["adj_size"] == pytest.approx(1.0, abs=0.05)  # price ∝ area
    assert worth["adj_baths"] == pytest.approx(math.log(1.05), abs=0.01)
    assert worth["adj_age"] == pytest.approx(0.005, abs=0.001)  # per year newer
    assert worth["adj_time"] == pytest.approx(0.06, abs=0.01)  # a year of market change
    assert worth["adj_beds"] == pytest.approx(0.0, abs=0.01)
    assert worth["adj_water"] == pytest.approx(math.log(1.5), abs=0.02)
    # each adjustment moves a comp towards the subject: a bigger, newer, better-bathed comp down,
    # a sale in a cheaper (earlier) market up
    for column, gap in (("adj_size", out["LivingArea"] - 1500), ("adj_age", out["YearBuilt"] - 2000),
                        ("adj_baths", out["BathroomsTotalInteger"] - 2)):  # fmt: skip
        assert (np.sign(out[column]) == -np.sign(gap)).all(), column
    assert (out["adj_time"] > 0).all()
    assert (out["adj_water"] < 0).equals(out["WaterfrontYN"].astype(bool))  # on the water: down
    adjustments = out[[c for c in out.columns if c.startswith("adj_")]].sum(axis=1)
    np.testing.assert_allclose(out["adjusted_price"], out["ClosePrice"] + adjustments)
    # adjusted to the subject, the comps agree: their spread shrinks and the estimate finds the
    # subject's value under the model (400 × 1,500 = $600,000) within the noise
    raw, adjusted = out["ClosePrice"], out["adjusted_price"]
    assert adjusted.std() / adjusted.mean() < 0.5 * raw.std() / raw.mean()
    est = out.attrs["estimate"]
    assert est["value"] == pytest.approx(600_000, rel=0.04)
    assert est["low"] <= est["value"] <= est["high"] and est["n"] == 10
    assert out.attrs["subject_facts"]["ListPrice"] == 640_000.0
    assert out.attrs["warnings"] == []
    # sorted by the score that is shown; the weights fall as the score rises
    assert list(out.index) == list(out["score"].argsort(kind="stable"))
    assert out["score"].is_monotonic_increasing and out["weight"].is_monotonic_decreasing
    assert out["weight"].sum() == pytest.approx(1.0)


def test_a_comp_in_the_homes_building_or_subdivision_and_on_its_side_of_the_water_ranks_first() -> (
    None
):
    market = _sales([500.0, 500.0, 500.0])
    market["SubdivisionName"] = ["Hunters Run", "Leisureville", "Hunters Run", "Hunters Run"]
    market["WaterfrontYN"] = [False, False, False, True]
    out = rf.comps(market, "S")
    # P0 is the nearest but in another subdivision, P2 the farthest but on the water
    assert list(out["ListingId"]) == ["P1", "P0", "P2"]
    base = out["distance_km"] / 1.5 + out["months_ago"] / 6
    np.testing.assert_allclose(out["score"] - base, [0.0, 1.0, 1.0])
    market["BuildingName"] = [None, "Icon Tower", None, None]  # a building is its neighbourhood
    assert rf.comps(market, "S")["ListingId"].iloc[0] == "P1"


def test_a_negative_worth_is_left_out_rather_than_adjusting_a_bigger_home_up() -> None:
    market = hedonic_market()
    sales = market["StandardStatus"] == "Closed"
    # make bathrooms look like a cost: prices fall 10 % per bath
    market.loc[sales, "ClosePrice"] *= 0.9 ** market.loc[sales, "BathroomsTotalInteger"]
    out = rf.comps(market, "S", radius_km=2, months=12)
    assert out.attrs["adjustments"]["coefficients"]["adj_baths"] == 0.0
    assert (out["adj_baths"] == 0).all()
    assert out.attrs["adjustments"]["coefficients"]["adj_size"] > 0.9


def _sales(ppsf: list[float]) -> pd.DataFrame:
    """A subject and closed sales of 1,000 sq ft at the given $/sq ft, 0.1 km apart."""
    frame = market().iloc[[0]].copy()
    rows = [frame]
    for i, value in enumerate(ppsf):
        row = frame.copy()
        row["ListingId"], row["StandardStatus"] = f"P{i}", "Closed"
        row["ClosePrice"], row["CloseDate"] = value * 1000.0, t("2026-06-01")
        row["Latitude"] += (i + 1) * 0.1 / KM_PER_DEG_LAT
        rows.append(row)
    return pd.concat(rows, ignore_index=True)


def test_the_dispersion_warning_appears_on_a_wide_spread_and_not_on_a_tight_one() -> None:
    wide = rf.comps(_sales([150.0, 220.0, 400.0]), "S")
    (spread,) = [w for w in wide.attrs["warnings"] if "per square foot" in w]
    assert "differ by more than 2 to 1 ($150 to $400)" in spread
    assert "_" not in spread and "ppsf" not in spread  # the page's words, no code names
    tight = rf.comps(_sales([480.0, 500.0, 520.0, 400.0]), "S")
    assert not [w for w in tight.attrs["warnings"] if "per square foot" in w]
    exactly = rf.comps(_sales([200.0, 400.0, 300.0]), "S")  # 2 to 1 is not more than 2
    assert not [w for w in exactly.attrs["warnings"] if "per square foot" in w]


def test_fewer_than_three_comps_are_warned_about() -> None:
    two = rf.comps(_sales([500.0, 510.0]), "S")
    assert len(two) == 2
    assert (
        "Only 2 comparable sales: fewer than 3, too few for a firm estimate."
        in (two.attrs["warnings"])
    )
    est = two.attrs["estimate"]
    assert est["low"] <= est["value"] <= est["high"] and est["n"] == 2
    none = rf.comps(_sales([]), "S")
    assert none.empty and "No comparable sale: fewer than 3" in none.attrs["warnings"][0]
    assert np.isnan(none.attrs["estimate"]["value"]) and none.attrs["estimate"]["n"] == 0
    three = rf.comps(_sales([500.0, 510.0, 520.0]), "S")
    assert not [w for w in three.attrs["warnings"] if "fewer than 3" in w]


@pytest.mark.parametrize("seed", range(6))
def test_the_estimate_lies_inside_its_range(seed: int) -> None:
    """Whatever the comps and their scores, the weighted median lies in the weighted quartiles."""
    rng = np.random.default_rng(seed)
    ppsf = list(rng.uniform(100, 900, int(rng.integers(1, 9))))
    out = rf.comps(_sales(ppsf), "S", max_results=20)
    est = out.attrs["estimate"]
    assert est["low"] <= est["value"] <= est["high"]
    assert out["adjusted_price"].min() <= est["low"] and est["high"] <= out["adjusted_price"].max()


def test_weighted_quantile_is_the_median_for_equal_weights_and_increases_with_q() -> None:
    from realtyframes.analysis._comps_adjust import weighted_quantile

    rng = np.random.default_rng(5)
    for n in (1, 2, 5, 8):
        values = rng.uniform(0, 100, n)
        assert weighted_quantile(values, np.ones(n), 0.5) == pytest.approx(np.median(values))
        weights = rng.uniform(0.1, 1, n)
        qs = [weighted_quantile(values, weights, q) for q in np.linspace(0, 1, 21)]
        assert qs == sorted(qs) and values.min() <= qs[0] and qs[-1] <= values.max()
