"""Property tests: invariants of the metrics on arbitrary small markets."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from realtyframes.analysis import (
    REFERENCE_LABEL,
    compare_markets,
    lead_funnel,
    market_summary,
    price_drop_summary,
    price_drops,
    traffic_summary,
)
from realtyframes.analysis._common import to_utc
from realtyframes.analysis._order import (
    descending_order,
    match_last,
    radix_order,
    stable_order,
    text_keys,
)
from realtyframes.analysis._stocks import NEVER, distinct, event_order, period_of
from realtyframes.analysis._trends_kernel import NAT, _micros, text_codes

AS_OF = pd.Timestamp("2024-06-30T00:00:00Z")
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

prices = st.one_of(st.none(), st.integers(0, 2_000).map(lambda k: k * 1000.0))
days_back = st.one_of(st.none(), st.integers(0, 200))
FIELDS = {
    "City": st.sampled_from(["A", "B", "C"]),
    "PropertyType": st.sampled_from(
        ["Residential", "Land", "Land/Boat Docks", "Residential Lease", "Farm"]
    ),
    "StandardStatus": st.sampled_from(["Active", "Active Under Contract", "Pending", "Closed"]),
    "ListPrice": prices,
    "PreviousListPrice": prices,
    "ClosePrice": prices,
    "LivingArea": st.one_of(st.none(), st.integers(0, 5000).map(float)),
    "DaysOnMarket": st.one_of(st.none(), st.integers(0, 400).map(float)),
    "entry": days_back,
    "major": days_back,
    "close": days_back,
}
row = st.fixed_dictionaries(FIELDS)


def frame(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=list(FIELDS))
    for src, col in (
        ("entry", "OriginalEntryTimestamp"),
        ("major", "MajorChangeTimestamp"),
        ("close", "CloseDate"),
    ):
        back = pd.to_timedelta(pd.to_numeric(df.pop(src)), unit="D")
        df[col] = AS_OF - back
    df.insert(0, "ListingId", [f"L{i}" for i in range(len(df))])
    return df.astype({c: "float64" for c in ("ListPrice", "PreviousListPrice", "ClosePrice")})


listing_frames = st.lists(row, max_size=25).map(frame)


def in_unit_interval_or_nan(s: pd.Series) -> bool:
    v = s.to_numpy(dtype=float)
    return bool(np.all(np.isnan(v) | ((v >= 0) & (v <= 1))))


@SETTINGS
@given(listing_frames, st.sampled_from([30, 60, 90]))
def test_market_summary_invariants(df: pd.DataFrame, window: int) -> None:
    out = market_summary(df, as_of=AS_OF, window_days=window)
    sale = df[df["PropertyType"].isin(["Residential", "Land", "Land/Boat Docks"])]
    assert set(out.index) == set(sale["City"])
    for share in ("pct_sold_above_list", "pct_active_with_price_drop"):
        assert in_unit_interval_or_nan(out[share])
    ratio = out["avg_sale_to_list"].dropna()
    assert ((ratio >= 0.5) & (ratio <= 1.5)).all()
    for city, r in out.iterrows():
        rows = sale[sale["City"] == city]
        for metric, column in (("median_list_price", "ListPrice"), ("median_sale_price", "ClosePrice"), ("median_dom", "DaysOnMarket")):  # fmt: skip
            if not np.isnan(r[metric]):
                assert rows[column].min() <= r[metric] <= rows[column].max()
        assert r["active_listings"] <= len(rows) and r["homes_sold"] <= len(rows)
        if r["active_listings"] == 0:  # an empty population gives NaN, never an error
            assert np.isnan(r["median_list_price"]) and np.isnan(r["pct_active_with_price_drop"])
        if r["homes_sold"] == 0:
            assert np.isnan(r["median_sale_price"]) and np.isnan(r["months_of_supply"])
            assert np.isnan(r["avg_sale_to_list"]) and np.isnan(r["median_dom"])
        else:
            assert r["months_of_supply"] == (r["active_listings"] / (r["homes_sold"] * 30 / window))


@SETTINGS
@given(listing_frames)
def test_compare_markets_reference_adds_up_and_unknown_markets_are_nan(df: pd.DataFrame) -> None:
    table = compare_markets(df, ["A", "B", "C", "Z"], as_of=AS_OF, window_days=60)
    assert table["Z"].isna().all()
    has_sale = df["PropertyType"].isin(["Residential", "Land", "Land/Boat Docks"]).any()
    for m in ("active_listings", "new_listings", "pending_sales", "homes_sold"):
        reference = table.loc[m, REFERENCE_LABEL]
        if has_sale:
            assert table.loc[m, ["A", "B", "C"]].fillna(0).sum() == reference
        else:  # no sale listings at all: the reference is an empty market too
            assert np.isnan(reference)
    prev = market_summary(df, as_of=AS_OF, window_days=60, compare_previous=True)
    for m in ("new_listings", "homes_sold"):
        np.testing.assert_array_equal(prev[f"{m}_change"], prev[m] - prev[f"{m}_prev"])


@SETTINGS
@given(listing_frames, st.sampled_from([0.0, 0.05, 0.2]))
def test_price_drop_invariants(df: pd.DataFrame, min_pct: float) -> None:
    drops = price_drops(df, min_drop_pct=min_pct)
    assert (drops["previous_price"] > drops["current_price"]).all()
    assert (drops["drop_pct"] >= min_pct).all() and (drops["drop_pct"] <= 1).all()
    assert drops["drop_pct"].is_monotonic_decreasing
    np.testing.assert_allclose(
        drops["drop_amount"], drops["previous_price"] - drops["current_price"]
    )
    summary = price_drop_summary(df)
    assert in_unit_interval_or_nan(summary["pct_active_with_price_drop"])
    assert (
        summary["active_with_price_drop"].fillna(0) <= summary["active_listings"].fillna(0)
    ).all()


#: Text up to 8 bytes (ASCII, or 2-byte UTF-8 for 4 characters), ids alike, and empty text.
short_text = st.one_of(
    st.text("abcL0129 -", max_size=8),
    st.text("éüz0", max_size=4),
    st.sampled_from(["", "L1", "L10", "L2", "L1 "]),
)


@SETTINGS
@given(st.lists(short_text, max_size=60), st.integers(0, 3))
def test_text_keys_order_and_compare_as_the_text(values: list[str], start: int) -> None:
    text = pa.array(["lead", *values], pa.string()).slice(min(start, len(values) + 1))
    keys = text_keys(text)
    assert keys is not None
    assert radix_order(keys).tolist() == pc.sort_indices(text).to_numpy().tolist()
    same = keys[:, None] == keys[None, :]
    assert (same == (np.array(text.to_pylist())[:, None] == np.array(text.to_pylist()))).all()


def test_text_keys_leave_long_nul_and_null_text_to_the_text_sort() -> None:
    assert text_keys(pa.array(["123456789"])) is None
    assert text_keys(pa.array(["a\x00", "a"])) is None
    assert text_keys(pa.array(["a", None])) is None
    assert text_keys(pa.chunked_array([["b"], ["a", ""]])).tolist() == [
        ord("b") << 56,
        ord("a") << 56,
        0,
    ]


@SETTINGS
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["lead", "client", "active-client", "past-client", "other", None]),
            st.sampled_from(["web", "referral", None]),
            st.integers(0, 60),
        ),
        max_size=30,
    )
)
def test_funnel_invariants(rows: list[tuple]) -> None:
    contacts = pd.DataFrame(rows, columns=["stage", "source", "day"])
    contacts["createdAt"] = pd.Timestamp("2024-01-01", tz="UTC") + pd.to_timedelta(
        contacts.pop("day"), unit="D"
    )
    f = lead_funnel(contacts)
    funnel = f.by_stage[f.by_stage["in_funnel"]]
    reached = funnel["reached_share"].to_numpy()
    assert in_unit_interval_or_nan(f.by_stage["share"]) and in_unit_interval_or_nan(
        funnel["reached_share"]
    )
    assert np.all(np.diff(reached[~np.isnan(reached)]) <= 1e-12)  # never grows down the funnel
    if funnel["contacts"].sum():
        assert reached[0] == 1.0
    assert f.by_stage["contacts"].sum() == len(contacts) == f.weekly["new_leads"].sum()
    assert in_unit_interval_or_nan(f.by_source["conversion_rate"])


@SETTINGS
@given(st.lists(st.integers(0, 10_000), min_size=1, max_size=15), st.integers(1, 5))
def test_traffic_shares(visitors: list[int], top_n: int) -> None:
    bd = pd.DataFrame(
        {
            "name": [f"n{i}" for i in range(len(visitors))],
            "visitors": visitors,
            "pageviews": visitors,
            "conversions": [v // 10 for v in visitors],
        }
    )
    overview = pd.DataFrame(
        {
            "visitors": [sum(visitors)],
            "pageviews": [sum(visitors)],
            "sessions": [sum(visitors)],
            "conversions": [0],
            "conversion_rate": [0.0],
            "bounce_rate": [0.5],
            "avg_session_seconds": [1.0],
        }
    )
    top = traffic_summary({"overview": overview, "referrers": bd}, top_n=top_n)["referrers"]
    assert len(top) == min(top_n, len(visitors))
    assert in_unit_interval_or_nan(top["share"]) and in_unit_interval_or_nan(top["conversion_rate"])
    assert top["share"].sum() <= 1 + 1e-9
    assert top["visitors"].is_monotonic_decreasing


floats = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 0.05, 0.1, 1.0]),  # ties, as cuts of round percentages make
)


@SETTINGS
@given(st.lists(floats, max_size=60))
def test_descending_order_is_a_stable_argsort_of_the_negated_values(values: list[float]) -> None:
    v = np.array(values, dtype="float64")
    assert descending_order(v).tolist() == np.argsort(-v, kind="stable").tolist()


@SETTINGS
@given(st.lists(st.integers(0, 2**40), max_size=60))
def test_radix_order_is_a_stable_argsort(values: list[int]) -> None:
    v = np.array(values, dtype="int64")
    assert radix_order(v).tolist() == np.argsort(v, kind="stable").tolist()


@SETTINGS
@given(st.lists(st.integers(0, 2**63), max_size=60), st.booleans())
def test_stable_order_is_a_stable_argsort(values: list[int], ordered: bool) -> None:
    v = np.array(sorted(values) if ordered else values, dtype="uint64")  # both ways of sorting
    assert stable_order(v).tolist() == np.argsort(v, kind="stable").tolist()


#: Ids as a market holds them: short text, and sometimes a null or an id over 8 bytes (hashed).
some_ids = st.one_of(short_text, st.none(), st.just("L123456789"))


@SETTINGS
@given(
    st.lists(st.one_of(short_text, st.sampled_from(["L1", "L2"])), max_size=40),
    st.lists(st.one_of(short_text, st.sampled_from(["L1", "L2"])), max_size=40),
    st.lists(some_ids, max_size=6),
)
def test_match_last_is_each_values_last_row(table: list, values: list, odd: list) -> None:
    for extra in ([], odd):  # keyed (short text only), then hashed (a null or a long id)
        rows = [*table, *extra]
        last = {v: i for i, v in enumerate(rows) if v is not None}
        needles = [*values, *extra]
        expected = [last.get(v, -1) if v is not None else -1 for v in needles]
        got = match_last(pa.array(needles, pa.string()), pa.array(rows, pa.string()))
        assert got.tolist() == expected


def test_match_last_hashes_long_or_null_ids_and_never_matches_a_null() -> None:
    table = pa.array(["a", None, "L123456789", "a"])
    got = match_last(pa.array(["L123456789", None, "a", "b"]), table)
    assert got.tolist() == [2, -1, 3, -1]
    assert match_last(pa.array(["a"]), pa.array([], pa.string())).tolist() == [-1]


@SETTINGS
@given(
    st.sampled_from(["W-SUN", "M", "Q-DEC", "D", "h"]),
    st.integers(1, 30),
    st.lists(st.integers(-(2**40), 2**40), max_size=60),
)
def test_period_of_is_a_search_of_the_period_ends(freq: str, n: int, offsets: list[int]) -> None:
    periods = pd.period_range("2023-11-05", periods=n, freq=freq)
    starts = periods.start_time.as_unit("us").to_numpy().view("int64")
    ends = periods.end_time.floor("us").as_unit("us").to_numpy().view("int64")
    at = np.array([int(starts[0]) + k * 3_600 for k in offsets], dtype="int64")
    at = np.concatenate([at, [NAT, NEVER, ends[-1], ends[-1] + 1, starts[0], starts[0] - 1]])
    expected = np.searchsorted(ends, at, side="left")
    assert period_of(at, starts, ends).tolist() == expected.tolist()


@SETTINGS
@given(
    st.lists(st.tuples(st.integers(0, 5), st.integers(-3, 3)), max_size=60),
    st.booleans(),
)
def test_event_order_is_a_lexsort_by_listing_then_time(events: list, by_listing: bool) -> None:
    """Also with the records already by listing (the sort by listing, then a check of the times
    within each listing) and with times in order (by listing only)."""
    rows = sorted(events, key=lambda e: e[0]) if by_listing else events
    pos = np.array([p for p, _ in rows], dtype="int64")
    at = np.array([a for _, a in rows], dtype="int64")
    for times in (at, np.sort(at)):
        assert event_order(pos, times).tolist() == np.lexsort((times, pos)).tolist()
    assert distinct(pos).tolist() == np.unique(pos).tolist()


@SETTINGS
@given(st.lists(st.sampled_from(["Active", "Pending", "Closed", "Hold", "", None]), max_size=40))
def test_text_codes_are_each_values_place_in_the_names(values: list) -> None:
    names = ["Active", "Pending", "Closed"]
    expected = [names.index(v) if v in names else len(names) for v in values]
    for dtype in ("str", "object", "category"):
        assert text_codes(pd.Series(values, dtype=dtype), names).tolist() == expected
    numbers = pd.Series([len(v) if v else 0 for v in values], dtype="int64")  # not text
    assert text_codes(numbers, [6, 7]).tolist() == [
        [6, 7].index(n) if n in (6, 7) else 2 for n in numbers
    ]


@SETTINGS
@given(
    st.lists(st.integers(-(2**50), 2**50), max_size=40),
    st.sampled_from(["UTC", None, "Asia/Kolkata"]),
)
def test_micros_are_to_utcs_microseconds(nanos: list[int], zone: str | None) -> None:
    """Nanoseconds floored to the microsecond (as numpy's and pandas' casts), NaT kept."""
    times = pd.Series(np.array([*nanos, NAT], dtype="int64").view("datetime64[ns]"))
    times = times.dt.tz_localize("UTC").dt.tz_convert(zone) if zone else times
    expected = to_utc(times, "t", "f").dt.tz_convert(None).to_numpy().view("int64")
    assert _micros(times, "t").tolist() == expected.tolist()
