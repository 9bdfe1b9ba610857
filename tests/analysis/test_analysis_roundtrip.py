"""Same answers on frames read back from Parquet (pyarrow) and from CSV as on the fresh frames;
input coercion rules."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from realtyframes.analysis import (
    ColumnTypeError,
    MissingColumnsError,
    compare_markets,
    lead_funnel,
    market_summary,
    price_drop_summary,
    price_drops,
    traffic_summary,
)
from realtyframes.analysis._common import to_float, to_timestamp, to_utc
from realtyframes.schemas import Analytics

STATUS = pd.CategoricalDtype(["Active", "Active Under Contract", "Pending", "Closed"])
TYPES = pd.CategoricalDtype(
    [
        "Residential",
        "Residential Income",
        "Land",
        "Land/Boat Docks",
        "Commercial Sale",
        "Business Opportunity",
        "Residential Lease",
        "Commercial Lease",
    ]
)


def typed_listings(n: int = 60) -> pd.DataFrame:
    """A market typed as the loaders type it (categoricals, Int64, str, UTC timestamps)."""
    rng = np.random.default_rng(7)
    status = rng.choice(STATUS.categories, n)
    closed = status == "Closed"
    lp = rng.integers(100, 2000, n) * 1000.0
    entry = pd.Timestamp("2024-01-01", tz="UTC") + pd.to_timedelta(rng.integers(0, 180, n), "D")
    close = entry + pd.to_timedelta(rng.integers(5, 60, n), "D")
    return pd.DataFrame(
        {
            "ListingId": pd.array([f"L{i:04d}" for i in range(n)], dtype="str"),
            "City": pd.array(rng.choice(["Miami", "Doral", "Aventura"], n), dtype="str"),
            "PostalCode": pd.array(rng.choice(["33101", "33139"], n), dtype="str"),
            "UnparsedAddress": pd.array([f"{i} Bay Rd" for i in range(n)], dtype="str"),
            "PropertyType": pd.Categorical(
                rng.choice(["Residential", "Residential Lease", "Land"], n), dtype=TYPES
            ),
            "PropertySubType": pd.array(rng.choice(["Condominium", "Townhouse"], n), dtype="str"),
            "StandardStatus": pd.Categorical(status, dtype=STATUS),
            "ListPrice": lp,
            "PreviousListPrice": np.where(rng.random(n) < 0.4, lp * 1.08, np.nan),
            "ClosePrice": np.where(closed, lp * rng.uniform(0.9, 1.1, n), np.nan),
            "LivingArea": pd.array(
                np.where(rng.random(n) < 0.9, rng.integers(500, 3000, n), 0), dtype="Int64"
            ),
            "DaysOnMarket": pd.array(rng.integers(1, 150, n), dtype="Int64"),
            "OriginalEntryTimestamp": entry,
            "ModificationTimestamp": close,
            "MajorChangeTimestamp": entry + pd.to_timedelta(rng.integers(0, 30, n), "D"),
            "CloseDate": pd.Series(close).where(closed),
        }
    )


def typed_changes(listings: pd.DataFrame) -> pd.DataFrame:
    rng = np.random.default_rng(8)
    ids = rng.choice(listings["ListingId"].to_numpy(), 80)
    old = rng.integers(100, 2000, 80) * 1000.0
    return pd.DataFrame(
        {
            "ListingId": pd.array(ids, dtype="str"),
            "ChangeType": pd.Categorical(rng.choice(["price_change", "status_change"], 80)),
            "ChangeTimestamp": pd.Timestamp("2024-03-01", tz="UTC")
            + pd.to_timedelta(rng.integers(0, 90 * 24, 80), "h"),
            "PreviousListPrice": old,
            "ListPrice": old * rng.uniform(0.85, 1.05, 80),
        }
    )


def contacts_frame() -> pd.DataFrame:
    rng = np.random.default_rng(9)
    return pd.DataFrame(
        {
            "id": pd.array([f"c{i}" for i in range(40)], dtype="str"),
            "stage": pd.array(rng.choice(["lead", "client", "active-client", "past-client"], 40), dtype="str"),
            "source": pd.array(rng.choice(["web", "referral", "signup form"], 40), dtype="str"),
            "createdAt": pd.Timestamp("2024-01-01", tz="UTC") + pd.to_timedelta(rng.integers(0, 90, 40), "D"),
        }
    )  # fmt: skip


def analytics_frames() -> dict[str, pd.DataFrame]:
    bd = pd.DataFrame(
        {
            "name": pd.array(["a", "b", "c"], dtype="str"),
            "visitors": pd.array([5, 9, 2], dtype="Int64"),
            "pageviews": pd.array([7, 12, 2], dtype="Int64"),
            "conversions": pd.array([1, 0, 0], dtype="Int64"),
        }
    )
    return {
        "overview": pd.DataFrame(
            {
                "visitors": pd.array([16], dtype="Int64"),
                "pageviews": pd.array([21], dtype="Int64"),
                "sessions": pd.array([18], dtype="Int64"),
                "conversions": pd.array([1], dtype="Int64"),
                "conversion_rate": [1 / 18],
                "bounce_rate": [0.5],
                "avg_session_seconds": [61.5],
            }
        ),
        "timelines": pd.DataFrame(
            {
                "date": pd.to_datetime(["2024-06-01", "2024-06-02"], utc=True),
                "metric": pd.Categorical(["visitors", "visitors"]),
                "value": [7.0, 9.0],
            }
        ),
        **{k: bd for k in ("pages", "referrers", "countries", "browsers", "os", "devices")},
        "utm": bd.assign(dimension=pd.array(["source", "source", "medium"], dtype="str")),
    }


def all_results(
    listings: pd.DataFrame,
    changes: pd.DataFrame,
    contacts: pd.DataFrame,
    frames: dict[str, pd.DataFrame],
) -> dict[str, pd.DataFrame]:
    kw = {"as_of": None, "window_days": 60}
    funnel = lead_funnel(contacts)
    traffic = traffic_summary(Analytics(period="30d", **frames), top_n=2)
    return {
        "market": market_summary(listings, **kw),
        "market_prev_both": market_summary(
            listings, by=["City", "PropertySubType"], segment="both", compare_previous=True
        ),
        "compare": compare_markets(listings, ["Miami", "Doral"], **kw),
        "drops": price_drops(listings),
        "drops_feed": price_drops(listings, changes, since="2024-04-01", min_drop_pct=0.02),
        "drop_summary": price_drop_summary(listings),
        "by_stage": funnel.by_stage,
        "by_source": funnel.by_source,
        "weekly": funnel.weekly,
        "headline": traffic.headline,
        "referrers": traffic.breakdowns["referrers"],
        "timeline": traffic.timeline,
        "utm": traffic.utm,
    }


def roundtrip(df: pd.DataFrame, path: Path, how: str) -> pd.DataFrame:
    if how == "csv":
        df.to_csv(path, index=False)
        # the one thing a CSV reader must be told: postal codes are text
        return pd.read_csv(path, dtype={"PostalCode": "str"} if "PostalCode" in df else None)
    df.to_parquet(path, engine="pyarrow", index=False)
    if how == "parquet-arrow-dtypes":
        return pd.read_parquet(path, engine="pyarrow", dtype_backend="pyarrow")
    return pd.read_parquet(path, engine="pyarrow")


@pytest.mark.parametrize("how", ["parquet", "parquet-arrow-dtypes", "csv"])
def test_same_answers_after_a_roundtrip(tmp_path: Path, how: str) -> None:
    listings = typed_listings()
    changes = typed_changes(listings)
    contacts = contacts_frame()
    frames = analytics_frames()
    fresh = all_results(listings, changes, contacts, frames)
    back = all_results(
        roundtrip(listings, tmp_path / "listings", how),
        roundtrip(changes, tmp_path / "changes", how),
        roundtrip(contacts, tmp_path / "contacts", how),
        {k: roundtrip(v, tmp_path / k, how) for k, v in frames.items()},
    )
    assert len(fresh["drops"]) > 0 and len(fresh["drops_feed"]) > 0  # the data says something
    assert fresh["market"]["homes_sold"].sum() > 0
    for name, expected in fresh.items():
        got = back[name]
        if how == "parquet":  # the cache's own round trip: identical, dtypes included
            pd.testing.assert_frame_equal(got, expected, obj=name)
        else:  # other tools' dtypes (pyarrow-backed, CSV text): the same values
            pd.testing.assert_frame_equal(
                got, expected, check_dtype=False, check_index_type=False, check_categorical=False,
                obj=name,
            )  # fmt: skip


def test_text_inputs_are_read_not_dropped() -> None:
    s = pd.Series(["1200", " 3.5 ", "", None])
    assert to_float(s, "LivingArea", "f").tolist()[:2] == [1200.0, 3.5]
    assert to_float(s, "LivingArea", "f").isna().tolist() == [False, False, True, True]
    with pytest.raises(
        ColumnTypeError, match="'LivingArea' must hold numbers; cannot read '1,200'"
    ):
        to_float(pd.Series(["1,200"]), "LivingArea", "f")
    with pytest.raises(ColumnTypeError, match="booleans"):
        to_float(pd.Series([True]), "LivingArea", "f")
    stamps = to_utc(
        pd.Series(["2024-06-01", "2024-06-01T05:00:00-04:00", "", None]), "CloseDate", "f"
    )
    assert str(stamps.dtype) == "datetime64[us, UTC]"
    assert stamps[1] == pd.Timestamp("2024-06-01T09:00:00Z") and stamps[2:].isna().all()
    dates = to_utc(pd.Series([dt.date(2024, 6, 1), None]), "CloseDate", "f")
    assert dates[0] == pd.Timestamp("2024-06-01T00:00:00Z")
    naive = to_utc(pd.Series(pd.to_datetime(["2024-06-01 12:00"])), "CloseDate", "f")
    assert naive[0] == pd.Timestamp("2024-06-01T12:00:00Z")  # naive means UTC
    eastern = pd.Series(pd.to_datetime(["2024-06-01 12:00"]).tz_localize("America/New_York"))
    assert to_utc(eastern, "CloseDate", "f")[0] == pd.Timestamp("2024-06-01T16:00:00Z")
    with pytest.raises(ColumnTypeError, match=r"'CloseDate'.*cannot read 'soon'"):
        to_utc(pd.Series(["2024-06-01", "soon"]), "CloseDate", "f")
    assert to_timestamp(dt.date(2024, 6, 1), "as_of", "f", end_of_day=True) == pd.Timestamp(
        "2024-06-01T23:59:59.999999Z"
    )


def test_dates_as_close_date_values_work_in_the_market_summary() -> None:
    listings = typed_listings()
    as_dates = listings.assign(
        CloseDate=[None if pd.isna(t) else t.date() for t in listings["CloseDate"]]
    )
    pd.testing.assert_frame_equal(
        market_summary(as_dates, as_of="2024-06-01"), market_summary(listings, as_of="2024-06-01")
    )


def test_missing_column_error_is_a_keyerror_and_a_valueerror() -> None:
    err = MissingColumnsError(["CloseDate"], frame="listings", func="market_summary")
    assert isinstance(err, KeyError) and isinstance(err, ValueError)
    assert (
        str(err)
        == "market_summary(): `listings` lacks required column 'CloseDate' (it has: no columns)"
    )
