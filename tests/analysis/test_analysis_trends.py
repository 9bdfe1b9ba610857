"""``rf.market_trends`` and ``rf.market_changes``, worked by hand on a four-listing market.

The market (Residential, one city), times at noon UTC:

- L1: enters 2026-01-10 at $500k; cut to $480k on 02-05; Pending 02-20; Closed 03-15 at $470k
  (1,000 sq ft, 64 days on market).
- L2: enters 01-25 at $300k; Pending 02-10; back to Active 03-05; cut to $290k on 03-20.
- L3: enters 02-28 at $800k; Active.
- L4: entered 2025-12-15 at $600k; Pending 01-05; Closed 01-31 at $610k (2,000 sq ft, 47 days).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import realtyframes as rf
from realtyframes.errors import AnalysisInputError


def t(day: str) -> pd.Timestamp:
    return pd.Timestamp(f"{day} 12:00", tz="UTC")


def market() -> pd.DataFrame:
    nan = float("nan")
    return pd.DataFrame(
        {
            "ListingId": ["L1", "L2", "L3", "L4"],
            "City": ["Coral Gables"] * 4,
            "PropertyType": ["Residential"] * 4,
            "PropertySubType": ["Condominium", "Condominium", "Townhouse", "Condominium"],
            "StandardStatus": ["Closed", "Active", "Active", "Closed"],
            "ListPrice": [480_000.0, 290_000.0, 800_000.0, 600_000.0],
            "PreviousListPrice": [500_000.0, 300_000.0, nan, nan],
            "ClosePrice": [470_000.0, nan, nan, 610_000.0],
            "LivingArea": [1000.0, 800.0, 1500.0, 2000.0],
            "DaysOnMarket": pd.array([64, 100, 60, 47], dtype="Int64"),
            "OriginalEntryTimestamp": [
                t("2026-01-10"),
                t("2026-01-25"),
                t("2026-02-28"),
                t("2025-12-15"),
            ],
            "MajorChangeTimestamp": [
                t("2026-03-15"),
                t("2026-03-20"),
                t("2026-02-28"),
                t("2026-01-31"),
            ],
            "CloseDate": [t("2026-03-15"), pd.NaT, pd.NaT, t("2026-01-31")],
        }
    )


def history() -> pd.DataFrame:
    rows = [
        ("L1", "price_change", "2026-02-05", 500_000.0, 480_000.0, None, None),
        ("L1", "status_change", "2026-02-20", None, None, "Active", "Pending"),
        ("L1", "status_change", "2026-03-15", None, None, "Pending", "Closed"),
        ("L2", "status_change", "2026-02-10", None, None, "Active", "Pending"),
        ("L2", "status_change", "2026-03-05", None, None, "Pending", "Active"),
        ("L2", "price_change", "2026-03-20", 300_000.0, 290_000.0, None, None),
        ("L4", "status_change", "2026-01-05", None, None, "Active", "Pending"),
        ("L4", "status_change", "2026-01-31", None, None, "Pending", "Closed"),
    ]
    frame = pd.DataFrame(
        rows,
        columns=[
            "ListingId",
            "ChangeType",
            "ChangeTimestamp",
            "PreviousListPrice",
            "ListPrice",
            "PreviousStatus",
            "StandardStatus",
        ],
    )
    frame["ChangeTimestamp"] = frame["ChangeTimestamp"].map(t)
    return frame


def trends(**kw: object) -> pd.DataFrame:
    options = {"freq": "M", "by": "City", "start": "2026-01-01", "end": "2026-03-31",
               "min_sample": 1, **kw}  # fmt: skip
    return rf.market_trends(market(), history(), **options).set_index("period_begin")


JAN, FEB, MAR = (pd.Timestamp(f"2026-{m}-01") for m in ("01", "02", "03"))


def test_every_metric_by_hand() -> None:
    out = trends()
    assert list(out.index) == [JAN, FEB, MAR]
    assert list(out["period_end"]) == [pd.Timestamp(d) for d in ("2026-01-31", "2026-02-28",
                                                                  "2026-03-31")]  # fmt: skip
    assert out["complete"].all() and set(out["City"]) == {"Coral Gables"}
    expect = {
        # stocks at the period's end: Jan L1 L2 active (L4 closed); Feb L3 active, L1 L2 pending;
        # Mar L2 (back on market) and L3 active, L1 closed
        "active_listings": [2, 1, 2],
        "pending_listings": [0, 2, 0],
        "new_listings": [2, 1, 0],
        "pending_sales": [1, 2, 0],  # L4 in Jan; L1 and L2 in Feb (from the history)
        "homes_sold": [1, 0, 1],
        "price_drops": [0, 1, 1],
        "pct_active_with_price_drop": [0.0, 0.0, 0.5],  # Feb: L1 cut but pending at the end
        "median_list_price": [400_000.0, 800_000.0, math.nan],  # prices at entry: 500k, 300k
        "median_sale_price": [610_000.0, math.nan, 470_000.0],
        "median_sale_ppsf": [305.0, math.nan, 470.0],
        "median_dom": [47.0, math.nan, 64.0],
        "avg_sale_to_list": [610 / 600, math.nan, 470 / 480],
        "pct_sold_above_list": [1.0, math.nan, 0.0],
        "months_of_supply": [2 / (30 / 31), math.nan, 2 / (30 / 31)],
    }
    for metric, values in expect.items():
        np.testing.assert_allclose(out[metric].to_numpy(dtype=float), values, err_msg=metric)
    for metric in ("active_listings", "new_listings", "homes_sold", "price_drops"):
        assert out[metric].dtype == "int64", metric
    # sample sizes and changes
    assert list(out["median_sale_price_n"]) == [1, 0, 1]
    assert list(out["median_list_price_n"]) == [2, 1, 0]
    assert list(out["months_of_supply_n"]) == [1, 0, 1]
    assert list(out["pct_active_with_price_drop_n"]) == [2, 1, 2]
    np.testing.assert_allclose(out["new_listings_mom"], [math.nan, -0.5, -1.0])
    np.testing.assert_allclose(out["pct_active_with_price_drop_mom"], [math.nan, 0.0, 0.5])
    assert out["new_listings_yoy"].isna().all()  # no year before in range
    assert out.attrs["stocks"] == "rebuilt from the history" and out.attrs["blanked"] == 0


def test_small_samples_are_blanked_and_counted() -> None:
    out = trends(min_sample=2)
    assert out["median_sale_price"].isna().all()  # one sale per month
    assert out.loc[JAN, "median_list_price"] == 400_000.0  # two new listings: kept
    assert out.loc[MAR, "pct_active_with_price_drop"] == 0.5  # two active listings: kept
    # blanked: 5 sale metrics + months of supply in Jan and Mar, median list price in Feb,
    # and Feb's share (one active listing); of the competition metrics (#27): off market in two
    # weeks in Feb (L3 alone listed), days to pending in Jan (L4), days to close in Jan and Mar,
    # age of inventory in Feb (L3), the median cut in Feb and Mar, and the pending ratio and
    # absorption rate in Feb (one active listing)
    assert out.attrs["blanked"] == 2 * 6 + 1 + 1 + (1 + 1 + 2 + 1 + 2 + 1 + 1)
    assert math.isnan(out.loc[MAR, "median_sale_price_mom"])


def test_weeks_end_on_sunday_and_quarters_are_calendar_quarters() -> None:
    weeks = rf.market_trends(market(), history(), freq="W", start="2026-01-01", end="2026-03-31")
    assert (weeks["period_end"].dt.day_of_week == 6).all()
    assert (weeks["period_begin"].dt.day_of_week == 0).all()
    assert weeks["period_begin"].diff().dropna().eq(pd.Timedelta(days=7)).all()  # no gaps
    assert weeks["new_listings"].sum() == 3
    quarters = rf.market_trends(market(), history(), freq="Q", start="2026-01-01",
                                end="2026-03-31", min_sample=1)  # fmt: skip
    assert len(quarters) == 1 and quarters["homes_sold"].iloc[0] == 2
    assert quarters["period_end"].iloc[0] == pd.Timestamp("2026-03-31")


def test_the_last_complete_month_equals_market_summary_over_the_same_dates() -> None:
    out = trends()
    summary = rf.market_summary(market(), by="City", as_of="2026-03-31", window_days=31)
    row = summary.loc["Coral Gables"]
    for metric in (
        "new_listings",
        "homes_sold",
        "pending_sales",
        "median_sale_price",
        "median_sale_ppsf",
        "median_dom",
        "avg_sale_to_list",
        "pct_sold_above_list",
    ):
        assert out.loc[MAR, metric] == pytest.approx(row[metric], nan_ok=True), metric  # fmt: skip


def test_without_history_the_stocks_are_estimated_and_say_so() -> None:
    out = rf.market_trends(market(), None, by="City", start="2026-01-01", end="2026-03-31",
                           min_sample=1).set_index("period_begin")  # fmt: skip
    assert out.attrs["stocks"] == "estimated from MajorChangeTimestamp (no history)"
    # L2 is Active now: without its history it is Active since entry (its pending is unseen)
    assert list(out["active_listings"]) == [2, 3, 2]
    assert list(out["price_drops"]) == [0, 0, 2]  # both cuts placed at MajorChangeTimestamp
    assert list(out["median_list_price"].fillna(0)) == [385_000.0, 800_000.0, 0.0]


def test_bad_arguments_name_the_parameter() -> None:
    with pytest.raises(AnalysisInputError, match="`freq` must be one of \\['W', '4W', 'M', 'Q'\\]"):
        rf.market_trends(market(), freq="D")
    with pytest.raises(AnalysisInputError, match="`min_sample` must be an integer >= 0"):
        rf.market_trends(market(), min_sample=-1)
    with pytest.raises(AnalysisInputError, match="`segment` must be 'sale' or 'rent'"):
        rf.market_trends(market(), segment="both")
    with pytest.raises(rf.MissingColumnsError, match="ChangeTimestamp"):
        rf.market_trends(market(), history().drop(columns="ChangeTimestamp"))


def test_market_changes_between_two_snapshots() -> None:
    before = market()
    after = market().iloc[[1, 2, 3]].copy()  # L1 removed
    after.loc[after["ListingId"] == "L2", ["ListPrice", "StandardStatus"]] = [280_000.0, "Pending"]
    new = market().iloc[[2]].assign(ListingId="L5", ListPrice=950_000.0)
    after = pd.concat([after, new], ignore_index=True)
    changes = rf.market_changes(before, after)
    got = {(r.ListingId, str(r.change)) for r in changes.itertuples(index=False)}
    assert got == {("L5", "new"), ("L2", "price_cut"), ("L2", "pending"), ("L1", "removed")}
    cut = changes[changes["change"] == "price_cut"].iloc[0]
    assert (cut["old_price"], cut["new_price"]) == (290_000.0, 280_000.0)
    assert cut["City"] == "Coral Gables" and cut["PropertySubType"] == "Condominium"
    assert list(changes.columns) == list(rf.analysis.CHANGE_COLUMNS)
    assert rf.market_changes(before, before).empty


@pytest.mark.parametrize("dtype", ["string", "str", object])
def test_market_changes_of_equal_markets_is_the_typed_empty_frame(dtype: object) -> None:
    """No change at all (a watch's quiet week): an empty frame with the columns and types of a
    changes frame, whatever the type of ListingId (a string-typed one used to fail to merge)."""
    frame = market().astype({"ListingId": dtype})
    changes = rf.market_changes(frame, frame)
    assert changes.empty and list(changes.columns) == list(rf.analysis.CHANGE_COLUMNS)
    assert str(changes["ListingId"].dtype) == "string"
    assert rf.market_changes(frame.iloc[:0], frame.iloc[:0]).empty


# -- on the sandbox's market (a real sync, its backfilled history) ------------------------------------


@pytest.fixture(scope="module")
def synced(sandbox_url: str, tmp_path_factory: pytest.TempPathFactory):
    cache = tmp_path_factory.mktemp("cache")
    with rf.Client(base_url=sandbox_url, cache_dir=cache, progress=False) as client:
        scope = {"PropertyType": "Residential"}
        return client.sync_listings(**scope), client.listing_history(**scope)


@pytest.mark.slow
def test_a_sandbox_year_has_no_gaps_and_its_last_month_is_market_summary(synced) -> None:
    listings, history = synced
    assert history["ChangeTimestamp"].min() < history["ChangeTimestamp"].max() - pd.DateOffset(
        years=1
    )
    out = rf.market_trends(listings, history, by="City", start="2025-07-01", end="2026-06-30")
    cities = sorted(listings["City"].astype(str).unique())
    assert len(out) == 12 * len(cities)  # every city in every month, zeros included
    for _, rows in out.groupby("City"):
        months = rows["period_begin"].dt.to_period("M")
        assert list(months) == list(pd.period_range("2025-07", "2026-06", freq="M"))
    assert out["active_listings"].gt(0).any() and out["homes_sold"].sum() > 100
    assert out["complete"].all()

    june = out[out["period_begin"] == pd.Timestamp("2026-06-01")].set_index("City")
    summary = rf.market_summary(listings, by="City", as_of="2026-06-30", window_days=30)
    checked = 0
    for city, row in summary.iterrows():
        for metric in ("new_listings", "homes_sold", "median_sale_price", "median_sale_ppsf",
                       "median_dom", "avg_sale_to_list", "pct_sold_above_list"):  # fmt: skip
            n = june.loc[city, f"{metric}_n"] if f"{metric}_n" in june.columns else 99
            if n >= 5:  # below min_sample the trend blanks what market_summary shows
                assert june.loc[city, metric] == pytest.approx(row[metric]), (city, metric)
                checked += 1
    assert checked > 20


def test_market_at_winds_the_market_back() -> None:
    feb = rf.analysis.market_at(market(), history(), "2026-02-28").set_index("ListingId")
    assert list(feb.index) == ["L1", "L2", "L3", "L4"]
    assert dict(feb["StandardStatus"]) == {"L1": "Pending", "L2": "Pending", "L3": "Active",
                                           "L4": "Closed"}  # fmt: skip
    assert (feb.loc["L1", "ListPrice"], feb.loc["L1", "PreviousListPrice"]) == (480_000, 500_000)
    assert feb.loc["L2", "ListPrice"] == 300_000 and pd.isna(feb.loc["L2", "PreviousListPrice"])
    assert pd.isna(feb.loc["L1", "ClosePrice"]) and pd.isna(feb.loc["L1", "CloseDate"])
    assert feb.loc["L4", "ClosePrice"] == 610_000
    assert feb.loc["L3", "DaysOnMarket"] == 0 and feb.loc["L1", "DaysOnMarket"] == 49
    assert feb.loc["L1", "MajorChangeTimestamp"] == t("2026-02-20")
    jan = rf.analysis.market_at(market(), history(), "2026-01-20").set_index("ListingId")
    assert list(jan.index) == ["L1", "L4"] and jan.loc["L4", "StandardStatus"] == "Pending"
    assert jan.loc["L1", "ListPrice"] == 500_000
    # a summary as of then, on the market as it stood then, has the trend's stocks
    summary = rf.market_summary(
        rf.analysis.market_at(market(), history(), "2026-03-31"), by="City", as_of="2026-03-31",
        window_days=31,
    )  # fmt: skip
    out = trends()
    assert summary.loc["Coral Gables", "active_listings"] == out.loc[MAR, "active_listings"]


@pytest.mark.parametrize("threads", ["1", "2"])
def test_an_unreadable_market_is_named_before_an_unreadable_history(
    monkeypatch: pytest.MonkeyPatch, threads: str
) -> None:
    """The listings and the history are read side by side; the market's error still comes first."""
    monkeypatch.setenv("REALTYFRAMES_THREADS", threads)
    bad_market = market().assign(OriginalEntryTimestamp="soon")
    bad_history = history().assign(ChangeTimestamp="later")
    with pytest.raises(rf.ColumnTypeError, match=r"'OriginalEntryTimestamp'.*'soon'"):
        rf.market_trends(bad_market, bad_history)
    with pytest.raises(rf.ColumnTypeError, match=r"'ChangeTimestamp'.*'later'"):
        rf.market_trends(market(), bad_history)


@pytest.mark.parametrize("missing", [False, True])
def test_two_keys_give_each_markets_trends_in_key_order(missing: bool) -> None:
    """by two columns: one block of rows per (City, PropertySubType) seen, sorted, each equal to
    the trends of that market's listings alone; a listing missing a key is in no market."""
    frame = market()
    frame["City"] = ["Miami", "Coral Gables", "Miami", "Coral Gables"]
    if missing:
        frame.loc[2, "PropertySubType"] = None
    by = ["City", "PropertySubType"]
    options = {"freq": "M", "start": "2026-01-01", "end": "2026-03-31", "min_sample": 1}
    out = rf.market_trends(frame, history(), by=by, **options)
    seen = sorted({tuple(row) for row in frame[by].dropna().itertuples(index=False)})
    assert list(dict.fromkeys(zip(out["City"], out["PropertySubType"], strict=True))) == seen
    metrics = list(rf.analysis.trends.TREND_METRICS)
    for city, subtype in seen:
        mine = (frame["City"] == city) & (frame["PropertySubType"] == subtype)
        alone = rf.market_trends(frame[mine], history(), **options)
        rows = out[(out["City"] == city) & (out["PropertySubType"] == subtype)]
        pd.testing.assert_frame_equal(
            rows[metrics].reset_index(drop=True), alone[metrics], check_exact=False, rtol=1e-12
        )
