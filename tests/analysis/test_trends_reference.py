"""``rf.market_trends`` against a plain pandas computation of docs/metrics.md's definitions, on
generated markets and histories (Hypothesis): the hand-written kernels (id matching, status
intervals, day tables) need this net.

The reference reads each listing's status timeline event by event, the simplest way the
definition can be written: Active from ``OriginalEntryTimestamp``, then every ``status_change`` of
the history at its ``ChangeTimestamp``, and Closed at ``CloseDate`` when the history has no
closing. Counted per calendar month (UTC): the stocks at the month's end (``active_listings``,
``pending_listings``), the flows in the month (``new_listings``, ``homes_sold``, ``price_drops``)
and the median sale price with its n; and of the competition columns (#27) the listings Active at
any point in the month, the age of the month-end inventory and the days to pending, with their n.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

import realtyframes as rf

START, END = pd.Timestamp("2026-01-01", tz="UTC"), pd.Timestamp("2026-06-30", tz="UTC")
SPAN_MINUTES = int(
    (END + pd.Timedelta(days=1) - START - pd.Timedelta(days=40)) / pd.Timedelta(minutes=1)
)
STATUSES = ("Active", "Pending", "Active Under Contract", "Closed")


@st.composite
def listing(draw: Any, number: int) -> dict[str, Any]:
    """One Residential listing: entry, 0-3 status changes (the last may close it, the closing
    sometimes missing from the history) and 0-2 price changes, times to the second (30 s past a
    minute, never on a month's boundary)."""
    minute = st.integers(0, SPAN_MINUTES)
    entry = START - pd.Timedelta(days=40) + pd.Timedelta(minutes=draw(minute), seconds=30)
    gaps = draw(st.lists(st.integers(1, 60 * 24 * 60), min_size=0, max_size=3))
    statuses = draw(st.lists(st.sampled_from((*STATUSES[1:], "Active")), min_size=len(gaps),
                             max_size=len(gaps)))  # fmt: skip
    events, status, at = [], "Active", entry
    for gap, new in zip(gaps, statuses, strict=True):
        if status == "Closed" or new == status:
            break
        at = at + pd.Timedelta(minutes=gap)
        events.append((at, status, new))
        status = new
    price = float(draw(st.integers(200, 900)) * 1000)
    cuts = []
    for gap in draw(st.lists(st.integers(1, 60 * 24 * 30), max_size=2)):
        before = price
        price = before * draw(st.sampled_from([0.9, 0.95, 1.05]))
        cuts.append((entry + pd.Timedelta(minutes=gap), before, price))
    closed = status == "Closed"
    return {
        "id": f"L{number:04d}",
        "entry": entry,
        "events": events,
        "status": status,
        "price": price,
        "cuts": cuts,
        "close_at": events[-1][0] if closed else pd.NaT,
        "close_price": float(draw(st.integers(150, 950)) * 1000) if closed else np.nan,
        "closing_in_history": draw(st.booleans()) if closed else False,
    }


def frames(listings: list[dict[str, Any]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The market and history frames, as a sync gives them."""
    market = pd.DataFrame(
        {
            "ListingId": [x["id"] for x in listings],
            "StandardStatus": [x["status"] for x in listings],
            "PropertyType": "Residential",
            "OriginalEntryTimestamp": [x["entry"] for x in listings],
            "MajorChangeTimestamp": [
                max([x["entry"], *(e[0] for e in x["events"]), *(c[0] for c in x["cuts"])])
                for x in listings
            ],
            "CloseDate": [x["close_at"] for x in listings],
            "ClosePrice": [x["close_price"] for x in listings],
            "ListPrice": [x["price"] for x in listings],
            "PreviousListPrice": [x["cuts"][-1][1] if x["cuts"] else np.nan for x in listings],
            "LivingArea": 1500.0,
            "DaysOnMarket": 30,
        }
    )
    market["CloseDate"] = pd.to_datetime(market["CloseDate"], utc=True)
    rows = []
    for x in listings:
        for at, old, new in x["events"]:
            if new == "Closed" and not x["closing_in_history"]:
                continue
            rows.append({"ListingId": x["id"], "ChangeType": "status_change", "ChangeTimestamp": at,
                         "PreviousStatus": old, "StandardStatus": new,
                         "PreviousListPrice": np.nan, "ListPrice": np.nan})  # fmt: skip
        for at, old, new in x["cuts"]:
            rows.append({"ListingId": x["id"], "ChangeType": "price_change", "ChangeTimestamp": at,
                         "PreviousStatus": None, "StandardStatus": None,
                         "PreviousListPrice": old, "ListPrice": new})  # fmt: skip
    columns = ["ListingId", "ChangeType", "ChangeTimestamp", "PreviousStatus", "StandardStatus",
               "PreviousListPrice", "ListPrice"]  # fmt: skip
    history = pd.DataFrame(rows, columns=columns)
    history["ChangeTimestamp"] = pd.to_datetime(history["ChangeTimestamp"], utc=True)
    return market, history


def status_at(x: dict[str, Any], when: pd.Timestamp) -> str | None:
    """The listing's status just before ``when`` (None: not entered yet), read event by event."""
    if x["entry"] >= when:
        return None
    status = "Active"
    for at, _old, new in x["events"]:
        if new == "Closed" and not x["closing_in_history"]:
            continue  # the closing comes from CloseDate below
        if at < when:
            status = new
    if not x["closing_in_history"] and not pd.isna(x["close_at"]) and x["close_at"] < when:
        status = "Closed"
    return status


def timeline(x: dict[str, Any]) -> list[tuple[pd.Timestamp, str]]:
    """The listing's statuses from entry, in time order (the closing from CloseDate when the
    history lacks it)."""
    out = [(x["entry"], "Active")]
    for at, _old, new in x["events"]:
        if new != "Closed" or x["closing_in_history"]:
            out.append((at, new))
    if not x["closing_in_history"] and not pd.isna(x["close_at"]):
        out.append((x["close_at"], "Closed"))
    return out


def active_during(x: dict[str, Any], begin: pd.Timestamp, end: pd.Timestamp) -> bool:
    """Active at some instant of [begin, end): Active just before ``begin`` (entered before it),
    or becoming Active inside."""
    return status_at(x, begin) == "Active" or any(
        begin <= at < end and new == "Active" for at, new in timeline(x)
    )


UNDER_CONTRACT = ("Pending", "Active Under Contract")


def days_to_pending(x: dict[str, Any], begin: pd.Timestamp, end: pd.Timestamp) -> list[int]:
    """Calendar days from entry to the listing's first going under contract in [begin, end): a
    Pending or Active Under Contract status after one that was neither (none: [])."""
    steps = timeline(x)
    went = [
        at
        for (at, new), (_, before) in zip(steps[1:], steps[:-1], strict=True)
        if new in UNDER_CONTRACT and before not in UNDER_CONTRACT and begin <= at < end
    ]
    return [(went[0].normalize() - x["entry"].normalize()).days] if went else []


def median(values: list[float]) -> float:
    return float(np.median(values)) if values else np.nan


def reference(listings: list[dict[str, Any]]) -> pd.DataFrame:
    rows = []
    for begin in pd.date_range(START, END, freq="MS"):
        end = begin + pd.offsets.MonthBegin(1)
        statuses = [status_at(x, end) for x in listings]
        sold = [x["close_price"] for x in listings if begin <= x["close_at"] < end]
        last_day = (end - pd.Timedelta(days=1)).normalize()
        ages = [(last_day - x["entry"].normalize()).days for x, s in zip(listings, statuses,
                strict=True) if s == "Active"]  # fmt: skip
        to_pending = [d for x in listings for d in days_to_pending(x, begin, end)]
        rows.append(
            {
                "period_begin": begin.tz_localize(None),
                "active_listings": statuses.count("Active"),
                "pending_listings": statuses.count("Pending"),
                "new_listings": sum(begin <= x["entry"] < end for x in listings),
                "homes_sold": len(sold),
                "median_sale_price": float(np.median(sold)) if sold else np.nan,
                "median_sale_price_n": len(sold),
                "price_drops": sum(
                    any(begin <= at < end and new < old for at, old, new in x["cuts"])
                    for x in listings
                ),
                "active_listings_any": sum(active_during(x, begin, end) for x in listings),
                "age_of_inventory": median(ages),
                "age_of_inventory_n": len(ages),
                "median_days_to_pending": median(to_pending),
                "median_days_to_pending_n": len(to_pending),
                # Pending and Active Under Contract at the month's end, over Active
                "pending_ratio": (
                    sum(s in UNDER_CONTRACT for s in statuses) / statuses.count("Active")
                    if statuses.count("Active")
                    else np.nan
                ),
            }
        )
    return pd.DataFrame(rows)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 40).flatmap(lambda n: st.tuples(*(listing(i) for i in range(n)))))
def test_market_trends_equals_the_plain_definition(drawn: tuple[dict[str, Any], ...]) -> None:
    listings = list(drawn)
    market, history = frames(listings)
    trends = rf.market_trends(market, history, freq="M", start=START.date(), end=END.date(),
                              min_sample=1)  # fmt: skip
    expected = reference(listings)
    got = trends[expected.columns].copy()
    got["period_begin"] = pd.to_datetime(got["period_begin"]).dt.tz_localize(None)
    got = got.astype({c: "float64" for c in expected.columns if c != "period_begin"})
    want = expected.astype({c: "float64" for c in expected.columns if c != "period_begin"})
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want, check_dtype=False)


def test_the_reference_is_not_vacuous() -> None:
    """A hand-made market the reference counts as the definition says (the net can fail)."""
    x = {"id": "L1", "entry": pd.Timestamp("2026-01-10T12:00:30Z"), "price": 5e5,
         "events": [(pd.Timestamp("2026-02-03T12:00:30Z"), "Active", "Pending"),
                    (pd.Timestamp("2026-03-04T12:00:30Z"), "Pending", "Closed")],
         "status": "Closed", "cuts": [(pd.Timestamp("2026-01-20T00:00:30Z"), 5.5e5, 5e5)],
         "close_at": pd.Timestamp("2026-03-04T12:00:30Z"), "close_price": 4.9e5,
         "closing_in_history": False}  # fmt: skip
    ref = reference([x]).set_index("period_begin")
    assert ref.loc["2026-01-01", ["active_listings", "new_listings", "price_drops"]].tolist() == [
        1,
        1,
        1,
    ]
    assert ref.loc["2026-02-01", ["active_listings", "pending_listings"]].tolist() == [0, 1]
    assert ref.loc["2026-03-01", ["homes_sold", "median_sale_price"]].tolist() == [1, 4.9e5]
    # Active Jan 10 - Feb 3: at some point in Jan and Feb; 21 days old on Jan 31; Pending after
    # Feb 3 - Jan 10 = 24 days
    assert ref["active_listings_any"].tolist()[:3] == [1, 1, 0]
    assert ref.loc["2026-01-01", "age_of_inventory"] == 21
    assert ref.loc["2026-02-01", "median_days_to_pending"] == 24
    market, history = frames([x])
    assert "Closed" not in set(history["StandardStatus"].dropna())  # closed by CloseDate alone
    trends = rf.market_trends(market, history, freq="M", start=START.date(), end=END.date(),
                              min_sample=1).set_index("period_begin")  # fmt: skip
    assert int(trends.iloc[2]["homes_sold"]) == 1 and int(trends.iloc[1]["pending_listings"]) == 1
