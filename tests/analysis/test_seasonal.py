"""Seasonally adjusted series (``rf.seasonally_adjust``, ``market_trends(seasonally_adjusted=)``;
docs/metrics.md "Seasonally adjusted series"): a known season on a known trend comes off, the
sandbox's multi-year market loses most of its month-of-year swing, series under 3 years and
gappy series are refused, blanked values are interpolated for the fit only and said so."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

import realtyframes as rf
from realtyframes.errors import AnalysisInputError
from realtyframes.sandbox import start


def _frame(
    values: dict[str, np.ndarray], freq: str = "M", by: dict[str, str] | None = None
) -> pd.DataFrame:
    n = len(next(iter(values.values())))
    code = {"M": "M", "W": "W-SUN"}[freq]
    periods = pd.period_range("2021-01-01", periods=n, freq=code)
    out = pd.DataFrame(
        {
            "period_begin": periods.start_time,
            "period_end": periods.end_time.normalize(),
            "complete": True,
            **(by or {}),
            **values,
        }
    )
    out.attrs = {"freq": freq, "by": list(by or {})}
    return out


def _season(n: int, period: int) -> np.ndarray:
    return np.cos(2 * np.pi * (np.arange(n) - 4) / period)  # peak in May (month 5)


def test_a_known_season_on_a_known_trend_comes_off() -> None:
    n = 60
    noise = np.random.default_rng(3).normal(0, 0.005, n)
    trend_price = 500_000 * 1.05 ** (np.arange(n) / 12)  # 5 % a year
    trend_sold = 100 + 0.5 * np.arange(n)
    price = trend_price * (1 + 0.08 * _season(n, 12)) * (1 + noise)
    sold = trend_sold + 20 * _season(n, 12) + 100 * noise
    out = rf.seasonally_adjust(_frame({"median_sale_price": price, "homes_sold": sold}),
                               ["median_sale_price", "homes_sold"])  # fmt: skip
    assert np.abs(out["median_sale_price_sa"] / trend_price - 1).max() < 0.015  # raw: 8 %
    assert np.abs(out["homes_sold_sa"] - trend_sold).max() < 2.5  # raw: 20
    growth = (
        out["median_sale_price_sa"].iloc[-12:].mean() / out["median_sale_price_sa"].iloc[:12].mean()
    )
    assert growth ** (1 / 4) == pytest.approx(1.05, abs=0.005)
    seasonal = out.attrs["seasonal"]
    assert seasonal["models"] == {"median_sale_price": "multiplicative", "homes_sold": "additive"}
    assert seasonal["period"] == 12 and seasonal["interpolated"] == {
        "median_sale_price": 0,
        "homes_sold": 0,
    }


def test_weekly_series_take_a_52_week_season() -> None:
    n = 3 * 52 + 10
    trend = 40 + 0.05 * np.arange(n)
    out = rf.seasonally_adjust(
        _frame({"new_listings": trend + 8 * _season(n, 52)}, freq="W"), "new_listings"
    )
    assert out.attrs["seasonal"]["period"] == 52
    assert np.abs(out["new_listings_sa"] - trend).max() < 1.0


def test_under_three_years_is_refused_naming_the_length_needed_and_given() -> None:
    with pytest.raises(
        rf.AnalysisInputError, match=r"needs at least 36 months \(3 years\).*got 35"
    ):
        rf.seasonally_adjust(_frame({"homes_sold": 100 + _season(35, 12)}), "homes_sold")
    with pytest.raises(rf.AnalysisInputError, match=r"needs at least 156 weeks.*got 155"):
        rf.seasonally_adjust(_frame({"homes_sold": 100 + _season(155, 52)}, freq="W"), "homes_sold")
    # leading blanks do not count: 40 periods, the first 6 blank
    short = 100 + _season(40, 12)
    short[:6] = np.nan
    with pytest.raises(rf.AnalysisInputError, match="got 34"):
        rf.seasonally_adjust(_frame({"median_dom": short}), "median_dom")


def test_each_market_is_its_own_series_and_a_short_one_is_named() -> None:
    a = _frame({"homes_sold": 100 + 20 * _season(48, 12)}, by={"City": "Doral"})
    b = _frame({"homes_sold": 50 - 10 * _season(48, 12)}, by={"City": "Miami"})
    both = pd.concat([a, b], ignore_index=True)
    both.attrs = a.attrs
    out = rf.seasonally_adjust(both, "homes_sold")
    assert np.allclose(out["homes_sold_sa"].iloc[:48], 100, atol=0.5)
    assert np.allclose(out["homes_sold_sa"].iloc[48:], 50, atol=0.5)
    both.loc[both.index[48:61], "homes_sold"] = np.nan  # Miami's first 13 months blank
    with pytest.raises(
        rf.AnalysisInputError, match=r"'homes_sold' for City='Miami' needs.*got 35"
    ) as err:
        rf.seasonally_adjust(both, "homes_sold")
    assert "Doral" not in str(err.value)


def test_a_blanked_value_inside_is_interpolated_for_the_fit_only_and_counted() -> None:
    price = 400_000 * (1 + 0.05 * _season(48, 12))
    price[[10, 30]] = np.nan
    frame = _frame({"median_sale_price": price})
    frame.loc[47, "complete"] = False  # the period not over yet
    out = rf.seasonally_adjust(frame, "median_sale_price")
    sa = out["median_sale_price_sa"]
    assert sa.isna().tolist() == [i in (10, 30, 47) for i in range(48)]
    assert np.allclose(sa.dropna(), 400_000, rtol=0.005)
    assert out.attrs["seasonal"]["interpolated"] == {"median_sale_price": 2}
    price[:8] = np.nan  # the series starts at 8: 40 months, 2 + 5 = 7 of them blank (> 10 %)
    price[[15, 16, 17, 20, 21]] = np.nan
    with pytest.raises(rf.AnalysisInputError, match=r"misses 7 of its 40 months.*at most 10%"):
        rf.seasonally_adjust(_frame({"median_sale_price": price}), "median_sale_price")


@pytest.mark.parametrize(
    ("args", "options", "message"),
    [
        (("nope",), {}, r"`columns` names columns not in `trends`: \['nope'\]"),
        (([],), {}, "`columns` must be a column name or a list"),
        (("homes_sold",), {"freq": "Q"}, r"`freq` must be one of \['M', 'W'\]"),
        (("homes_sold",), {"model": "log"}, "`model` must be one of"),
        (("homes_sold",), {"model": "multiplicative"}, "values <= 0"),
        (("period_end",), {}, "column 'period_end' must hold numbers"),
    ],
)
def test_bad_input_is_named(args: tuple[Any, ...], options: dict[str, Any], message: str) -> None:
    frame = _frame({"homes_sold": 10 * (1 + _season(48, 12))})
    with pytest.raises(rf.AnalysisInputError, match=message):
        rf.seasonally_adjust(frame, *args, **options)
    with pytest.raises(
        rf.AnalysisInputError, match=r"`trends` must be a frame of rf\.market_trends"
    ):
        rf.seasonally_adjust(frame.drop(columns="period_begin"), "homes_sold")


def test_a_series_with_a_period_missing_or_repeated_is_refused() -> None:
    frame = _frame({"homes_sold": 100 + 20 * _season(48, 12)})
    with pytest.raises(rf.AnalysisInputError, match="0 repeated and 1 missing periods"):
        rf.seasonally_adjust(frame.drop(index=20), "homes_sold")
    two = pd.concat([frame, frame.assign(homes_sold=frame["homes_sold"] * 2)])
    two.attrs = {"freq": "M", "by": []}  # two markets, but the frame does not say so
    with pytest.raises(rf.AnalysisInputError, match="48 repeated and 0 missing periods"):
        rf.seasonally_adjust(two, "homes_sold")
    # the same frame that says its market column adjusts each market on its own
    two = two.assign(City=["Doral"] * 48 + ["Miami"] * 48)
    two.attrs = {"freq": "M", "by": ["City"]}
    out = rf.seasonally_adjust(two, "homes_sold")
    assert out.index.tolist() == two.index.tolist()  # the index kept, repeated labels and all
    assert np.allclose(out["homes_sold_sa"].to_numpy()[48:], 200, atol=1)


# -- on the sandbox's multi-year market ------------------------------------------------------------


@pytest.fixture(scope="module")
def four_years(
    sandbox_as_of: Any, tmp_path_factory: pytest.TempPathFactory
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Four years of a 20,000-listing sandbox (seed 7): about 200 sales a month."""
    cache = tmp_path_factory.mktemp("cache")
    with (
        start(seed=7, listings=20_000, as_of=sandbox_as_of, history_years=4) as sandbox,
        rf.Client(base_url=sandbox.url, cache_dir=cache, progress=False) as client,
    ):
        scope = {"PropertyType": "Residential"}
        return client.sync_listings(**scope), client.listing_history(**scope)


def _swing(values: pd.Series, months: pd.Series) -> float:
    """Month-of-year variation: the std of the 12 month-of-year means over the series' mean."""
    return float(values.groupby(months).mean().std() / values.mean())


def test_on_the_multiyear_sandbox_the_season_loses_two_thirds_of_its_swing(four_years: Any) -> None:
    market, history = four_years
    metrics = ["homes_sold", "new_listings", "median_sale_price"]
    # from the first full year after the build-up (history starts in July 2022) to as_of
    out = rf.market_trends(market, history, start="2023-01-01", end="2026-06-30",
                           seasonally_adjusted=metrics)  # fmt: skip
    months = out["period_begin"].dt.month
    assert len(out) == 42 and out["complete"].all()
    for metric in metrics:
        raw, adjusted = _swing(out[metric], months), _swing(out[f"{metric}_sa"], months)
        assert adjusted <= raw / 3, (metric, raw, adjusted)
    assert _swing(out["homes_sold"], months) > 0.1  # a real season to take off
    # the fit reads every period the data cover, from attrs["read_from"]: the same as adjusting
    # the trends from there by hand, on the rows asked for
    assert out.attrs["read_from"] < pd.Timestamp("2023-01-01")
    full = rf.market_trends(market, history, start=out.attrs["read_from"], end="2026-06-30")
    same = rf.seasonally_adjust(full, metrics)
    same = same[same["period_begin"] >= pd.Timestamp("2023-01-01")].reset_index(drop=True)
    pd.testing.assert_frame_equal(same[out.columns], out, check_like=False, check_flags=False)


def test_the_default_range_is_adjusted_where_the_data_cover_three_years(four_years: Any) -> None:
    """The default 24 months, fitted on the 4 years the data cover: no `start` needed (it raised
    before: 24 months are fewer than the 36 the fit needs)."""
    market, history = four_years
    out = rf.market_trends(market, history, end="2026-06-30", seasonally_adjusted=["homes_sold"])
    assert len(out) == 24
    assert out["homes_sold_sa"].notna().all()
    assert out.attrs["read_from"] <= pd.Timestamp("2023-06-01")
    # data of two years (the listings entered since July 2024) cannot be adjusted: said so
    recent = market[market["OriginalEntryTimestamp"] >= pd.Timestamp("2024-07-01", tz="UTC")]
    ids = set(recent["ListingId"].astype(str))
    ours = history[history["ListingId"].astype(str).isin(ids)]
    with pytest.raises(AnalysisInputError, match="needs at least 36 months"):
        rf.market_trends(recent, ours, end="2026-06-30", seasonally_adjusted=["homes_sold"])


def test_tiers_are_adjusted_each_as_its_own_series(four_years: Any) -> None:
    market, history = four_years
    out = rf.market_trends(market, history, start="2023-01-01", end="2026-06-30", tiers=True,
                           seasonally_adjusted=["homes_sold"])  # fmt: skip
    assert out.groupby("tier", observed=True)["homes_sold_sa"].count().to_dict() == {
        "bottom": 42,
        "middle": 42,
        "top": 42,
    }
    for _, tier in out.groupby("tier", observed=True):
        months = tier["period_begin"].dt.month
        assert _swing(tier["homes_sold_sa"], months) <= _swing(tier["homes_sold"], months) / 3
