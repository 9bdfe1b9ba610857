"""Renamed keywords (docs/architecture.md, "Glossary"): each old name still works for one release,
warning a DeprecationWarning that names the new one, with the same result; giving both names is a
TypeError naming both; our own code never uses an old name (the suite runs warnings as errors)."""

from __future__ import annotations

import inspect
import io
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

import realtyframes as rf
import realtyframes.plots as plot
from realtyframes.analysis import market_at, ppsf_values
from realtyframes.report import MarketFrames


@pytest.fixture(scope="module")
def market() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    n = 90
    status = rng.choice(["Active", "Pending", "Closed"], n)
    price = rng.integers(200, 1500, n) * 1000.0
    entry = pd.Timestamp("2024-03-01", tz="UTC") + pd.to_timedelta(rng.integers(0, 100, n), "D")
    return pd.DataFrame(
        {
            "ListingId": [f"L{i}" for i in range(n)],
            "UnparsedAddress": [f"{i} Collins Avenue, Miami Beach, FL" for i in range(n)],
            "City": rng.choice(["Miami", "Miami Beach", "Doral"], n),
            "PropertyType": "Residential",
            "StandardStatus": status,
            "ListPrice": price,
            "PreviousListPrice": np.where(rng.random(n) < 0.5, price * 1.1, np.nan),
            "ClosePrice": np.where(status == "Closed", price * 0.97, np.nan),
            "LivingArea": rng.integers(600, 3000, n).astype(float),
            "DaysOnMarket": rng.integers(1, 120, n),
            "OriginalEntryTimestamp": entry,
            "MajorChangeTimestamp": entry + pd.to_timedelta(10, "D"),
            "CloseDate": (entry + pd.to_timedelta(30, "D")).where(status == "Closed"),
        }
    )


@pytest.fixture(scope="module")
def history(market: pd.DataFrame) -> pd.DataFrame:
    cut = market[market["PreviousListPrice"].notna()]
    return pd.DataFrame(
        {
            "ListingId": cut["ListingId"],
            "ChangeType": "price_change",
            "ChangeTimestamp": cut["MajorChangeTimestamp"],
            "PreviousListPrice": cut["PreviousListPrice"],
            "ListPrice": cut["ListPrice"],
            "StandardStatus": cut["StandardStatus"],
        }
    ).reset_index(drop=True)


@pytest.fixture(scope="module")
def analytics() -> rf.Analytics:
    def breakdown(names: list[str]) -> pd.DataFrame:
        visitors = np.arange(len(names), 0, -1) * 100
        return pd.DataFrame(
            {"name": names, "visitors": visitors, "pageviews": visitors * 2,
             "conversions": visitors // 20}
        )  # fmt: skip

    days = pd.date_range("2024-06-01", periods=7, freq="D", tz="UTC")
    timelines = pd.concat(
        pd.DataFrame({"date": days, "metric": m, "value": np.linspace(10, 20, 7)})
        for m in ("visitors", "pageviews", "conversions")
    )
    return rf.Analytics(
        period="7d",
        overview=pd.DataFrame(
            {"visitors": [700], "pageviews": [1500], "sessions": [800], "conversions": [20],
             "conversion_rate": [0.03], "bounce_rate": [0.4], "avg_session_seconds": [90.0]}
        ),
        timelines=timelines,
        pages=breakdown(["/", "/listings", "/listing/1", "/contact", "/about"]),
        referrers=breakdown(["Google", "Direct", "Facebook", "Zillow"]),
        countries=breakdown(["United States", "Canada", "Brazil"]),
        browsers=breakdown(["Chrome", "Safari"]),
        os=breakdown(["iOS", "Android"]),
        devices=breakdown(["mobile", "desktop"]),
        utm=pd.DataFrame(columns=["dimension", "name", "visitors", "pageviews", "conversions"]),
    )  # fmt: skip


def _png(fig: Figure) -> bytes:
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=40, metadata={"Software": None})
    return buf.getvalue()


def _same(a: Any, b: Any) -> None:
    if isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b)
        assert a.attrs.keys() == b.attrs.keys()
    else:
        assert isinstance(a, Figure) and isinstance(b, Figure)
        assert _png(a) == _png(b)


#: (function, frame fixtures given by position, the old keyword, the new one, other keywords)
RENAMES: list[tuple[Callable[..., Any], tuple[str, ...], str, str, dict[str, Any]]] = [
    (rf.price_drops, ("market",), "changes", "history", {}),
    (rf.market_summary, (), "listings", "market", {"as_of": "2024-07-01"}),
    (rf.compare_markets, (), "listings", "market", {"as_of": "2024-07-01"}),
    (ppsf_values, (), "listings", "market", {"price": "sale"}),
    (market_at, (), "when", "as_of", {"market": "market", "history": "history"}),
    (plot.ppsf_boxplot, (), "listings", "market", {"price": "list"}),
    (plot.top_price_drops, ("drops",), "n", "top_n", {}),
    (plot.top_sources, ("analytics",), "n", "top_n", {}),
    (plot.top_pages, ("analytics",), "n", "top_n", {}),
    (plot.countries, ("analytics",), "n", "top_n", {}),
    (plot.traffic_panels, ("analytics",), "n", "top_n", {}),
]
_VALUES = {"history": "history", "market": "market", "as_of": "2024-05-15", "top_n": 2}


def _ids(case: tuple[Any, ...]) -> str:
    return f"{case[0].__name__}-{case[2]}"


@pytest.mark.parametrize("case", RENAMES, ids=[_ids(c) for c in RENAMES])
def test_an_old_keyword_warns_naming_the_new_one_and_gives_the_same_result(
    case: tuple[Any, ...], request: pytest.FixtureRequest
) -> None:
    func, positional, old, new, others = case
    frames = {
        "market": request.getfixturevalue("market"),
        "history": request.getfixturevalue("history"),
        "analytics": request.getfixturevalue("analytics"),
    }
    frames["drops"] = rf.price_drops(frames["market"])

    def value(v: Any) -> Any:
        return frames[v] if isinstance(v, str) and v in frames else v

    args = [frames[p] for p in positional]
    kw = {k: value(v) for k, v in others.items()}
    given = value(_VALUES[new])
    expected = func(*args, **kw, **{new: given})
    with pytest.warns(DeprecationWarning, match=rf"`{old}` is renamed `{new}`") as seen:
        got = func(*args, **kw, **{old: given})
    assert "realtyframes 0.3" in str(seen[0].message)
    assert seen[0].filename == __file__  # points at the caller's line
    _same(expected, got)
    assert old not in inspect.signature(func).parameters  # help() shows the new name only
    with pytest.raises(TypeError, match=rf"got both `{old}` \(the old name\) and `{new}`"):
        func(*args, **kw, **{old: given, new: given})


def test_both_names_given_by_position_and_keyword_is_an_error(market: pd.DataFrame) -> None:
    with pytest.raises(TypeError, match=r"market_summary\(\): got both `listings`.*`market`"):
        rf.market_summary(market, listings=market)
    with pytest.raises(TypeError, match="got both `changes`"):
        rf.price_drops(market, None, changes=None)


def test_market_frames_history_keeps_its_old_name_changes(
    market: pd.DataFrame, history: pd.DataFrame
) -> None:
    frames = MarketFrames(listings=market, history=history, contacts=None, analytics=None)
    with pytest.warns(
        DeprecationWarning, match=r"MarketFrames\(\): `changes` is renamed `history`"
    ):
        old = MarketFrames(listings=market, changes=history, contacts=None, analytics=None)
    assert old.history is history and old.listings is market
    with pytest.warns(DeprecationWarning, match=r"MarketFrames.changes is renamed .history"):
        assert frames.changes is history
    with pytest.raises(TypeError, match="got both `changes`"):
        MarketFrames(market, history, None, None, changes=history)
    assert "changes" not in inspect.signature(MarketFrames).parameters
    assert set(frames.data_frames()) == {"listings", "changes"}  # the file keeps its name


def test_compare_markets_shows_market_summary_s_keywords() -> None:
    shown = inspect.signature(rf.compare_markets).parameters
    summary = inspect.signature(rf.market_summary).parameters
    for name in ("as_of", "window_days", "segment", "compare_previous"):
        assert shown[name].default == summary[name].default
        assert shown[name].kind is inspect.Parameter.KEYWORD_ONLY
    with pytest.raises(TypeError, match="unexpected keyword argument 'window'"):
        rf.compare_markets(pd.DataFrame(), window=30)  # type: ignore[call-arg]


def test_a_rename_to_a_name_the_function_lacks_is_refused_when_declared() -> None:
    from realtyframes._deprecation import renamed, renamed_in

    def top(rows: list[int], top_n: int = 2) -> list[int]:
        return rows[:top_n]

    with pytest.raises(ValueError, match="`count` must be a parameter"):
        renamed(n="count")(top)
    with pytest.raises(ValueError, match="`rows` not"):
        renamed(rows="top_n")(top)
    assert renamed_in(renamed(n="top_n")(top)) == {"n": "top_n"}
    assert renamed_in(top) == {}
    assert renamed_in(rf.price_drops) == {"changes": "history"}
