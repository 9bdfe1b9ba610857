"""Unit tests of the sandbox's CRM contacts and website analytics stores (no HTTP)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime, timedelta
from itertools import pairwise

import pytest

from realtyframes.sandbox._analytics import AnalyticsStore
from realtyframes.sandbox._crm import ContactStore
from realtyframes.sandbox._errors import SandboxError
from realtyframes.sandbox._spec import (
    ACTIVITY_TYPES,
    CONTACT_FIELDS,
    DEVICES,
    PERIODS,
    SOURCES,
    STAGES,
    TIMELINE_METRICS,
)

AS_OF = datetime(2025, 6, 1, tzinfo=UTC)
DOMAIN = "demo-realty.example"


@pytest.fixture(scope="module")
def contacts() -> ContactStore:
    return ContactStore(n=500, seed=7, as_of=AS_OF, domain=DOMAIN)


@pytest.fixture(scope="module")
def analytics() -> AnalyticsStore:
    return AnalyticsStore(seed=7, as_of=AS_OF)


def _all_pages(store: ContactStore, limit: int = 50) -> list[dict]:
    out: list[dict] = []
    offset = 0
    while True:
        page = store.list({"Offset": str(offset), "Limit": str(limit)})
        out += page["contacts"]
        offset += limit
        if offset >= page["total"]:
            return out


# -- contacts --------------------------------------------------------------------------------------


def test_list_defaults_and_paging_cover_every_contact_once(contacts: ContactStore) -> None:
    first = contacts.list({})
    assert (first["total"], first["offset"], first["limit"]) == (500, 0, 20)
    assert len(first["contacts"]) == 20
    everyone = _all_pages(contacts, limit=50)
    ids = [c["id"] for c in everyone]
    assert len(ids) == 500 == len(set(ids))
    assert [c["id"] for c in contacts.for_domain(DOMAIN)] == ids
    created = [c["createdAt"] for c in everyone]
    assert created == sorted(created, reverse=True)  # newest first
    assert all(c["createdAt"] <= "2025-06-01T00:00:00Z" for c in everyone)
    last = contacts.list({"Offset": "490", "Limit": "50"})
    assert len(last["contacts"]) == 10
    assert contacts.list({"Offset": "500"})["contacts"] == []
    assert contacts.list({"Offset": "10000"})["contacts"] == []


@pytest.mark.parametrize(
    ("params", "param"),
    [
        ({"Limit": "51"}, "Limit"),
        ({"Limit": "0"}, "Limit"),
        ({"Limit": "-1"}, "Limit"),
        ({"Limit": "abc"}, "Limit"),
        ({"Limit": "1.5"}, "Limit"),
        ({"Limit": ""}, "Limit"),
        ({"Offset": "-1"}, "Offset"),
        ({"Offset": "ten"}, "Offset"),
        ({"Offset": "٣"}, "Offset"),  # a non-ASCII digit is not an integer here
    ],
)
def test_bad_paging_is_a_400_naming_the_parameter(
    contacts: ContactStore, params: dict[str, str], param: str
) -> None:
    with pytest.raises(SandboxError) as info:
        contacts.list(params)
    assert info.value.status == 400
    assert info.value.param == param
    assert info.value.detail is not None
    assert info.value.detail.startswith(f"{param}: ")
    assert "allowed: an integer" in info.value.detail


def test_unknown_list_parameters_are_ignored(contacts: ContactStore) -> None:
    assert contacts.list({"Whatever": "1"}) == contacts.list({})


def test_contact_fields_follow_the_legacy_table(contacts: ContactStore) -> None:
    everyone = contacts.for_domain(DOMAIN)
    for contact in everyone:
        assert tuple(contact) == CONTACT_FIELDS
        assert set(contact["links"]) == {
            "facebook",
            "twitter",
            "instagram",
            "linkedin",
            "youtube",
            "website",
            "whatsapp",
            "service",
        }
        assert contact["stage"] in STAGES
        assert contact["source"] in SOURCES
        assert isinstance(contact["phones"], list)
        assert contact["spokenLanguages"]
        assert "@" in contact["email"]
        assert set(contact["registration"]) == {"date"}
        if contact["address"] is not None:
            assert contact["address"].startswith(contact["streetAddress"])
            assert ", FL 33" in contact["address"]
        assert datetime.fromisoformat(contact["createdAt"]) < AS_OF
    stages = Counter(c["stage"] for c in everyone)
    assert stages.most_common(1)[0][0] == "lead"
    assert 0.4 < stages["lead"] / len(everyone) < 0.8
    assert set(stages) == set(STAGES)
    assert set(Counter(c["source"] for c in everyone)) == set(SOURCES)


def test_contacts_spread_over_two_years_and_grow(contacts: ContactStore) -> None:
    created = [datetime.fromisoformat(c["createdAt"]) for c in contacts.for_domain(DOMAIN)]
    assert min(created) > AS_OF - timedelta(days=740)
    assert min(created) < AS_OF - timedelta(days=600)
    first_year = sum(c < AS_OF - timedelta(days=365) for c in created)
    assert len(created) - first_year > first_year * 1.2  # the business grows


def test_get_returns_the_listed_contact_and_404s(contacts: ContactStore) -> None:
    listed = contacts.list({"Limit": "3"})["contacts"]
    for contact in listed:
        assert contacts.get(contact["id"]) == contact
    with pytest.raises(SandboxError) as info:
        contacts.get("000000000000000000000000")
    assert info.value.status == 404
    assert "000000000000000000000000" in str(info.value)


def test_answers_are_copies(contacts: ContactStore) -> None:
    contact = contacts.list({"Limit": "1"})["contacts"][0]
    contact["links"]["facebook"] = "changed"
    contact["phones"].append("changed")
    again = contacts.get(contact["id"])
    assert again["links"]["facebook"] != "changed"
    assert "changed" not in again["phones"]


def test_activity_records(contacts: ContactStore) -> None:
    now = "2025-06-01T00:00:00Z"
    per_stage: dict[str, list[int]] = {stage: [] for stage in STAGES}
    seen_types: set[str] = set()
    for contact in contacts.for_domain(DOMAIN):
        answer = contacts.activity(contact["id"])
        assert answer["contactId"] == contact["id"]
        records = answer["activity"]
        per_stage[contact["stage"]].append(len(records))
        stamps = [r["timestamp"] for r in records]
        assert stamps == sorted(stamps, reverse=True)
        assert len({r["id"] for r in records}) == len(records)
        for record in records:
            assert {"id", "type", "timestamp", "description"} <= set(record)
            assert record["type"] in ACTIVITY_TYPES
            assert record["description"]
            assert contact["createdAt"] <= record["timestamp"] <= now
            seen_types.add(record["type"])
    assert seen_types == set(ACTIVITY_TYPES)
    mean = {stage: sum(v) / len(v) for stage, v in per_stage.items()}
    assert mean["client"] > 2 * mean["lead"]
    assert mean["active-client"] > 2 * mean["lead"]


def test_activity_of_unknown_contact_is_404(contacts: ContactStore) -> None:
    with pytest.raises(SandboxError) as info:
        contacts.activity("nope")
    assert info.value.status == 404


def test_for_domain_of_another_domain_is_empty(contacts: ContactStore) -> None:
    assert contacts.for_domain("empty-realty.example") == []
    assert len(contacts.for_domain(DOMAIN)) == 500


def test_clock_reveals_new_contacts_and_activity() -> None:
    store = ContactStore(n=120, seed=11, as_of=AS_OF)
    before = store.list({"Limit": "50"})
    oldest_client = next(
        c for c in reversed(store.for_domain(DOMAIN)) if c["stage"] == "active-client"
    )
    activity_before = len(store.activity(oldest_client["id"])["activity"])
    hidden = store._contacts[120]["id"]  # the first contact created after as_of
    with pytest.raises(SandboxError):
        store.get(hidden)

    store.set_now(AS_OF + timedelta(days=120))
    after = store.list({"Limit": "50"})
    assert after["total"] > before["total"]
    assert store.get(hidden)["id"] == hidden
    assert after["contacts"][0]["createdAt"] > before["contacts"][0]["createdAt"]
    assert len(store.activity(oldest_client["id"])["activity"]) >= activity_before
    total_activity_after = sum(
        len(store.activity(c["id"])["activity"]) for c in store.for_domain(DOMAIN)
    )

    store.set_now(AS_OF)
    assert store.list({"Limit": "50"}) == before
    total_activity_back = sum(
        len(store.activity(c["id"])["activity"]) for c in store.for_domain(DOMAIN)
    )
    assert total_activity_after > total_activity_back


def test_contacts_are_deterministic_per_seed() -> None:
    a = ContactStore(n=60, seed=3, as_of=AS_OF)
    b = ContactStore(n=60, seed=3, as_of=AS_OF)
    c = ContactStore(n=60, seed=4, as_of=AS_OF)
    assert a.for_domain(DOMAIN) == b.for_domain(DOMAIN)
    first = a.for_domain(DOMAIN)[0]["id"]
    assert a.activity(first) == b.activity(first)
    assert a.for_domain(DOMAIN) != c.for_domain(DOMAIN)


def test_naive_as_of_is_read_as_utc() -> None:
    store = ContactStore(n=5, as_of=datetime(2025, 6, 1))
    assert store.now == AS_OF


# -- analytics -------------------------------------------------------------------------------------


def test_analytics_shape_and_defaults(analytics: AnalyticsStore) -> None:
    answer = analytics.query({})
    assert answer["period"] == "30d"
    assert set(answer) == {
        "period",
        "overview",
        "timelines",
        "pages",
        "referrers",
        "countries",
        "browsers",
        "os",
        "devices",
        "utm",
    }
    overview = answer["overview"]
    assert set(overview) == {
        "visitors",
        "pageviews",
        "sessions",
        "conversions",
        "conversion_rate",
        "bounce_rate",
        "avg_session_seconds",
    }
    assert 0 < overview["visitors"] <= overview["sessions"] < overview["pageviews"]
    assert 0 < overview["conversion_rate"] < 0.1
    assert 0.3 < overview["bounce_rate"] < 0.7
    assert overview["conversion_rate"] == round(overview["conversions"] / overview["sessions"], 4)
    assert 30 < overview["avg_session_seconds"] < 600
    assert set(answer["timelines"]) == set(TIMELINE_METRICS)
    assert set(answer["utm"]) == {"source", "medium", "campaign"}
    for name in ("pages", "referrers", "countries", "browsers", "os", "devices"):
        items = answer[name]
        assert items, name
        assert all(set(i) == {"name", "visitors", "pageviews", "conversions"} for i in items)
        visitors = [i["visitors"] for i in items]
        assert visitors == sorted(visitors, reverse=True)
    assert {i["name"] for i in answer["devices"]} == set(DEVICES)
    assert "Direct" in {i["name"] for i in answer["referrers"]}
    assert all(i["name"] for part in answer["utm"].values() for i in part)  # no empty UTM item


@pytest.mark.parametrize(
    ("period", "days"), [("24h", 1), ("7d", 7), ("30d", 30), ("90d", 90), ("1y", 365)]
)
def test_timelines_have_one_point_per_day(
    analytics: AnalyticsStore, period: str, days: int
) -> None:
    answer = analytics.query({"Period": period})
    assert answer["period"] == period
    for metric in TIMELINE_METRICS:
        points = answer["timelines"][metric]
        assert len(points) == days
        dates = [date.fromisoformat(p["date"]) for p in points]
        assert dates[-1] == date(2025, 5, 31)
        assert all(b - a == timedelta(days=1) for a, b in pairwise(dates))
    overview = answer["overview"]
    for metric in ("sessions", "pageviews", "conversions"):
        assert sum(p["value"] for p in answer["timelines"][metric]) == overview[metric]
    assert sum(p["value"] for p in answer["timelines"]["visitors"]) >= overview["visitors"]


def test_a_window_not_on_midnight_touches_two_days() -> None:
    store = AnalyticsStore(seed=7, as_of=AS_OF + timedelta(hours=12))
    points = store.query({"Period": "24h"})["timelines"]["sessions"]
    assert [p["date"] for p in points] == ["2025-05-31", "2025-06-01"]


def test_windows_nest(analytics: AnalyticsStore) -> None:
    sessions = {p: analytics.query({"Period": p})["overview"]["sessions"] for p in PERIODS}
    assert sessions["24h"] < sessions["7d"] < sessions["30d"] < sessions["90d"] < sessions["1y"]
    assert 50_000 <= sessions["1y"] <= 100_000
    last30 = analytics.query({"Period": "30d"})["timelines"]["sessions"]
    assert sum(p["value"] for p in last30[-7:]) == sessions["7d"]


@pytest.mark.parametrize(
    ("params", "param", "allowed"),
    [
        ({"Period": "2w"}, "Period", "24h, 7d, 30d, 90d, 1y"),
        ({"Period": ""}, "Period", "24h, 7d, 30d, 90d, 1y"),
        ({"Period": "30D"}, "Period", "24h, 7d, 30d, 90d, 1y"),
        ({"Device": "Mobile"}, "Device", "desktop, mobile, tablet"),
        ({"Device": "phone"}, "Device", "desktop, mobile, tablet"),
    ],
)
def test_bad_period_or_device_is_a_400(
    analytics: AnalyticsStore, params: dict[str, str], param: str, allowed: str
) -> None:
    with pytest.raises(SandboxError) as info:
        analytics.query(params)
    assert info.value.status == 400
    assert info.value.param == param
    assert info.value.detail is not None
    assert info.value.detail.startswith(f"{param}: ")
    assert info.value.detail.endswith(f"allowed: {allowed}")


@pytest.mark.parametrize("period", ["7d", "1y"])
def test_device_filters_partition_the_whole(analytics: AnalyticsStore, period: str) -> None:
    whole = analytics.query({"Period": period})
    parts = {d: analytics.query({"Period": period, "Device": d}) for d in DEVICES}
    for metric in ("visitors", "sessions", "pageviews", "conversions"):
        assert sum(p["overview"][metric] for p in parts.values()) == whole["overview"][metric]
    for item in whole["devices"]:
        overview = parts[item["name"]]["overview"]
        assert (overview["visitors"], overview["pageviews"], overview["conversions"]) == (
            item["visitors"],
            item["pageviews"],
            item["conversions"],
        )
    for metric in TIMELINE_METRICS:
        summed = [
            sum(parts[d]["timelines"][metric][i]["value"] for d in DEVICES)
            for i in range(len(whole["timelines"][metric]))
        ]
        assert summed == [p["value"] for p in whole["timelines"][metric]]


def test_session_level_filters_match_their_breakdown_items(analytics: AnalyticsStore) -> None:
    whole = analytics.query({"Period": "90d"})
    total_sessions = 0
    for item in whole["referrers"]:
        part = analytics.query({"Period": "90d", "Referrer": item["name"]})["overview"]
        assert (part["visitors"], part["pageviews"], part["conversions"]) == (
            item["visitors"],
            item["pageviews"],
            item["conversions"],
        )
        total_sessions += part["sessions"]
    assert total_sessions == whole["overview"]["sessions"]
    for part_name, param in (
        ("source", "UtmSource"),
        ("medium", "UtmMedium"),
        ("campaign", "UtmCampaign"),
    ):
        for item in whole["utm"][part_name][:3]:
            part = analytics.query({"Period": "90d", param: item["name"]})["overview"]
            assert (part["visitors"], part["pageviews"], part["conversions"]) == (
                item["visitors"],
                item["pageviews"],
                item["conversions"],
            )
    untagged = analytics.query({"Period": "90d", "UtmSource": ""})["overview"]["sessions"]
    tagged = sum(
        analytics.query({"Period": "90d", "UtmSource": i["name"]})["overview"]["sessions"]
        for i in whole["utm"]["source"]
    )
    assert untagged + tagged == whole["overview"]["sessions"]


def test_page_filter_counts_the_sessions_that_viewed_it(analytics: AnalyticsStore) -> None:
    whole = analytics.query({"Period": "30d"})
    for item in whole["pages"][:5] + whole["pages"][-2:]:
        answer = analytics.query({"Period": "30d", "Page": item["name"]})
        overview = answer["overview"]
        assert overview["visitors"] == item["visitors"]
        assert overview["conversions"] == item["conversions"]
        assert overview["pageviews"] >= item["pageviews"]
        own = next(p for p in answer["pages"] if p["name"] == item["name"])
        assert own == item
    assert whole["overview"]["pageviews"] == sum(i["pageviews"] for i in whole["pages"])


def test_visitor_constant_filters_and_combinations(analytics: AnalyticsStore) -> None:
    whole = analytics.query({"Period": "30d"})
    for dimension, param in (("countries", "Country"), ("browsers", "Browser"), ("os", "OS")):
        parts = [
            analytics.query({"Period": "30d", param: i["name"]})["overview"]
            for i in whole[dimension]
        ]
        assert sum(p["visitors"] for p in parts) == whole["overview"]["visitors"]
        assert sum(p["sessions"] for p in parts) == whole["overview"]["sessions"]
    both = analytics.query({"Period": "30d", "Device": "mobile", "Country": "United States"})
    mobile = analytics.query({"Period": "30d", "Device": "mobile"})
    us = analytics.query({"Period": "30d", "Country": "United States"})
    assert (
        0
        < both["overview"]["sessions"]
        < min(mobile["overview"]["sessions"], us["overview"]["sessions"])
    )
    assert {i["name"] for i in both["devices"]} == {"mobile"}
    assert {i["name"] for i in both["countries"]} == {"United States"}


def test_visitor_id_filter(analytics: AnalyticsStore) -> None:
    whole = analytics.query({"Period": "1y"})
    lo = int(analytics._start.searchsorted(AS_OF.timestamp() - 86_400 * 30))
    visitor_code = int(analytics._visitor[lo])
    visitor_id = analytics._visitor_names()[visitor_code]
    answer = analytics.query({"Period": "1y", "VisitorId": visitor_id})
    assert answer["overview"]["visitors"] == 1
    assert 1 <= answer["overview"]["sessions"] < whole["overview"]["sessions"]
    assert len(answer["devices"]) == len(answer["browsers"]) == len(answer["countries"]) == 1


def test_unknown_filter_values_give_an_empty_but_complete_answer(analytics: AnalyticsStore) -> None:
    answer = analytics.query({"Period": "7d", "Country": "Atlantis"})
    assert answer["overview"] == {
        "visitors": 0,
        "pageviews": 0,
        "sessions": 0,
        "conversions": 0,
        "conversion_rate": 0.0,
        "bounce_rate": 0.0,
        "avg_session_seconds": 0.0,
    }
    assert all(len(v) == 7 and not any(p["value"] for p in v) for v in answer["timelines"].values())
    assert answer["pages"] == answer["referrers"] == answer["devices"] == []
    assert answer["utm"] == {"source": [], "medium": [], "campaign": []}
    assert analytics.query({"Page": "/no-such-page"})["overview"]["sessions"] == 0
    assert analytics.query({"Referrer": "google"})["overview"]["sessions"] == 0  # exact match


def test_weekly_pattern_and_referrer_mix(analytics: AnalyticsStore) -> None:
    answer = analytics.query({"Period": "1y"})
    by_weekday: dict[int, list[int]] = {}
    for point in answer["timelines"]["sessions"]:
        by_weekday.setdefault(date.fromisoformat(point["date"]).weekday(), []).append(
            point["value"]
        )
    mean = {d: sum(v) / len(v) for d, v in by_weekday.items()}
    assert mean[6] > mean[5]  # Sunday browsing beats Saturday
    referrers = [i["name"] for i in answer["referrers"]]
    assert referrers[:2] == ["Google", "Direct"]
    assert answer["devices"][0]["name"] == "mobile"


def test_clock_moves_the_window(analytics: AnalyticsStore) -> None:
    store = AnalyticsStore(seed=7, as_of=AS_OF)
    before = store.query({"Period": "24h"})
    store.set_now(AS_OF + timedelta(days=1))
    after = store.query({"Period": "24h"})
    assert after["timelines"]["sessions"][0]["date"] == "2025-06-01"
    assert after["overview"]["sessions"] > 0
    assert after != before
    week = store.query({"Period": "7d"})["timelines"]["sessions"]
    assert week[-2]["value"] == before["overview"]["sessions"]


def test_analytics_is_deterministic_per_seed(analytics: AnalyticsStore) -> None:
    same = AnalyticsStore(seed=7, as_of=AS_OF)
    other = AnalyticsStore(seed=8, as_of=AS_OF)
    params = {"Period": "90d", "Device": "tablet"}
    assert same.query(params) == analytics.query(params)
    assert other.query(params) != analytics.query(params)
