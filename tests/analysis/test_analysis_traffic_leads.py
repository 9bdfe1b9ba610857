"""traffic_summary and lead_funnel on hand-built frames."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from realtyframes.analysis import (
    TRAFFIC_METRICS,
    AnalysisInputError,
    MissingColumnsError,
    lead_funnel,
    traffic_summary,
)
from realtyframes.schemas import Analytics


def breakdown(names: list[str], visitors: list[int], conversions: list[int]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "name": pd.array(names, dtype="str"),
            "visitors": pd.array(visitors, dtype="Int64"),
            "pageviews": pd.array([2 * v for v in visitors], dtype="Int64"),
            "conversions": pd.array(conversions, dtype="Int64"),
        }
    )


def make_analytics(scale: int = 1) -> Analytics:
    overview = pd.DataFrame(
        {
            "visitors": [400 * scale],
            "pageviews": [1000 * scale],
            "sessions": [500 * scale],
            "conversions": [20 * scale],
            "conversion_rate": [0.04],
            "bounce_rate": [0.35 + 0.05 * scale],
            "avg_session_seconds": [120.0 * scale],
        }
    )
    dates = pd.to_datetime(["2024-06-01", "2024-06-02"] * 3, utc=True)
    timelines = pd.DataFrame(
        {
            "date": dates,
            "metric": pd.Categorical(["visitors"] * 2 + ["pageviews"] * 2 + ["conversions"] * 2),
            "value": [150.0, 250.0, 400.0, 600.0, 8.0, 12.0],
        }
    )
    refs = breakdown(["Google", "Direct", "Facebook", "Bing"], [200, 120, 60, 20], [10, 6, 3, 1])
    return Analytics(
        period="30d",
        overview=overview,
        timelines=timelines,
        pages=breakdown(["/", "/listings"], [300, 250], [5, 15]),
        referrers=refs,
        countries=breakdown(["United States", "Canada"], [350, 50], [18, 2]),
        browsers=breakdown(["Chrome"], [400], [20]),
        os=breakdown(["iOS", "Windows"], [220, 180], [9, 11]),
        devices=breakdown(["mobile", "desktop", "tablet"], [240, 140, 20], [8, 11, 1]),
        utm=pd.DataFrame(
            {
                "dimension": ["source", "source", "medium", "campaign"],
                "name": ["newsletter", "google", "cpc", "spring"],
                "visitors": [30, 50, 50, 10],
                "pageviews": [40, 70, 70, 15],
                "conversions": [3, 2, 2, 1],
            }
        ),
    )


def test_headline_numbers_and_change() -> None:
    out = traffic_summary(make_analytics(2), previous=make_analytics(1), top_n=3)
    h = out.headline
    assert list(h.index) == list(TRAFFIC_METRICS) and h.index.name == "metric"
    assert h.loc["visitors", "value"] == 800 and h.loc["visitors", "previous"] == 400
    assert h.loc["visitors", "change"] == 400 and h.loc["visitors", "pct_change"] == 1.0
    assert h.loc["views_per_visit", "value"] == pytest.approx(2000 / 1000)  # pageviews / sessions
    assert h.loc["bounce_rate", "value"] == pytest.approx(0.45)  # as reported, a fraction
    assert h.loc["bounce_rate", "change"] == pytest.approx(0.45 - 0.40)  # fraction points
    assert h.loc["visit_duration_seconds", "value"] == 240.0
    assert h.loc["conversion_rate", "change"] == pytest.approx(0.0)
    assert out.period == "30d"
    alone = traffic_summary(make_analytics())
    assert list(alone.headline.columns) == ["value"]


def test_top_n_tables_with_shares() -> None:
    out = traffic_summary(make_analytics(), top_n=3)
    refs = out["referrers"]
    assert list(refs["name"]) == ["Google", "Direct", "Facebook"]  # Bing is 4th
    # shares of all 400 visitors of the period (the overview): 200/400, 120/400, 60/400
    assert list(refs["share"]) == pytest.approx([0.5, 0.3, 0.15])
    assert refs.loc[0, "conversion_rate"] == pytest.approx(10 / 200)
    assert set(out.breakdowns) == {"pages", "referrers", "countries", "browsers", "os", "devices"}
    utm = out.utm
    assert list(utm["dimension"]) == ["source", "source", "medium", "campaign"]
    assert list(utm["name"][:2]) == ["google", "newsletter"]  # 50 before 30
    assert list(utm["share"]) == pytest.approx([50 / 400, 30 / 400, 50 / 400, 10 / 400])
    # the denominator is the period's visitors: a partition adds up to 1, overlapping rows to more
    assert out["countries"]["share"].sum() == pytest.approx(1.0)
    assert out["pages"]["share"].sum() == pytest.approx((300 + 250) / 400)


def test_timeline_is_wide_and_daily() -> None:
    tl = traffic_summary(make_analytics()).timeline
    assert list(tl.columns) == ["conversions", "pageviews", "visitors"]
    assert tl.index.name == "date" and str(tl.index.tz) == "UTC"
    assert tl.loc[pd.Timestamp("2024-06-02", tz="UTC"), "visitors"] == 250.0


def test_traffic_errors() -> None:
    a = make_analytics()
    broken = Analytics(
        **{**a.frames(), "period": "7d", "overview": a.overview.drop(columns="sessions")}
    )
    with pytest.raises(
        MissingColumnsError, match=r"`analytics\.overview` lacks required column 'sessions'"
    ):
        traffic_summary(broken)
    with pytest.raises(AnalysisInputError, match="`top_n` must be a positive integer"):
        traffic_summary(a, top_n=0)
    # a plain mapping of frames works too
    assert traffic_summary({"overview": a.overview}).breakdowns == {}


@pytest.fixture
def contacts() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "id": ["c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"],
            "name": list("abcdefgh"),
            "stage": ["lead", "lead", "lead", "client", "active-client", "past-client", "archived", None],
            "source": ["web", "web", "referral", "web", "referral", "open house", "web", "web"],
            # Mondays: 06-03, 06-10, 06-17; 06-09 is a Sunday (week of 06-03)
            "createdAt": pd.to_datetime(
                ["2024-06-03T08:00Z", "2024-06-09T23:00Z", "2024-06-04T00:00Z", "2024-06-17T00:00Z",
                 "2024-06-18T00:00Z", "2024-06-19T00:00Z", "2024-06-20T00:00Z", "2024-06-21T00:00Z"],
                utc=True,
            ),
        }
    )  # fmt: skip


def test_funnel_by_stage(contacts: pd.DataFrame) -> None:
    f = lead_funnel(contacts)
    s = f.by_stage
    assert list(s.index[:5]) == ["lead", "client", "active-client", "past-client", "archived"]
    assert len(s) == 6 and pd.isna(s.index[5])  # the contact without a stage is listed last
    assert list(s["contacts"]) == [3, 1, 1, 1, 1, 1]
    assert s.loc["lead", "share"] == pytest.approx(3 / 8)
    # funnel: 6 contacts in funnel stages; reached client = client + active + past = 3
    assert list(s["reached"][:4]) == [6, 3, 2, 1]
    assert list(s["reached_share"][:4]) == pytest.approx([1.0, 3 / 6, 2 / 6, 1 / 6])
    assert not s.loc["archived", "in_funnel"] and s["in_funnel"].dtype == bool
    assert math.isnan(s.loc["archived", "reached_share"])


def test_funnel_by_source_and_week(contacts: pd.DataFrame) -> None:
    f = lead_funnel(contacts)
    src = f.by_source
    assert list(src.index) == ["web", "referral", "open house"]  # 5, 2, 1 contacts
    # web: c1, c2 (lead), c4 (client), c7 (archived), c8 (none): 3 in the funnel, 1 converted
    assert src.loc["web", "contacts"] == 5 and src.loc["web", "converted"] == 1
    assert src.loc["web", "conversion_rate"] == pytest.approx(1 / 3)
    assert src.loc["referral", "conversion_rate"] == pytest.approx(1 / 2)  # c5 of c3, c5
    w = f.weekly
    assert list(w.index) == list(pd.date_range("2024-06-03", periods=3, freq="7D", tz="UTC"))
    assert list(w["new_leads"]) == [3, 0, 5]  # c1, c2, c3 | none | c4-c8
    assert f.activity_by_type is None


def test_funnel_with_activity(contacts: pd.DataFrame) -> None:
    activity = pd.DataFrame(
        {
            "contactId": ["c1", "c1", "c4", "c9"],
            "id": ["a1", "a2", "a3", "a4"],
            "type": ["email", "call", "email", "email"],
            "timestamp": ["2024-06-04T10:00:00Z", "2024-06-12T10:00:00Z", "2024-06-18T10:00:00Z", "2024-06-25T00:00:00Z"],
            "description": ["", "", "", ""],
        }
    )  # fmt: skip
    f = lead_funnel(contacts, activity)
    assert f.by_stage.loc["lead", "with_activity"] == 1  # c1
    assert f.by_stage.loc["lead", "activity_share"] == pytest.approx(1 / 3)
    assert f.by_stage.loc["client", "with_activity"] == 1  # c4
    assert list(f.weekly["activities"]) == [1, 1, 1, 1]  # weeks of 06-03 ... 06-24
    assert list(f.weekly["new_leads"]) == [3, 0, 5, 0]
    assert f.activity_by_type.loc["email", "activities"] == 3
    assert f.activity_by_type.loc["email", "contacts"] == 3  # c1, c4, c9


def test_funnel_errors_and_custom_stages(contacts: pd.DataFrame) -> None:
    with pytest.raises(MissingColumnsError, match="'source'"):
        lead_funnel(contacts.drop(columns="source"))
    with pytest.raises(MissingColumnsError, match="`activity` lacks"):
        lead_funnel(contacts, pd.DataFrame({"contactId": ["c1"]}))
    with pytest.raises(AnalysisInputError, match="`stages`"):
        lead_funnel(contacts, stages=[])
    f = lead_funnel(contacts, stages=["lead", "client"])
    assert list(f.by_stage["reached"][:2]) == [4, 1]  # lead 3 + client 1; active-client etc. out
    empty = lead_funnel(contacts.iloc[0:0])
    assert empty.weekly.empty and (empty.by_stage["contacts"] == 0).all()
