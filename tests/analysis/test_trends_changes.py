"""``_mom`` / ``_yoy`` read the data, not the rows returned (#34): on the embedded sandbox's shape
(13,000 listings over 4 years), the changes of the default 24 months equal those of a run from an
earlier ``start``, for every ``freq``; the first row's year-over-year is filled; rows before the
data are never read."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

import realtyframes as rf
from realtyframes.sandbox import EMBEDDED_HISTORY_YEARS, EMBEDDED_LISTINGS, start

END = "2026-06-30"


@pytest.fixture(scope="module")
def four_years(
    sandbox_as_of: Any, tmp_path_factory: pytest.TempPathFactory
) -> tuple[pd.DataFrame, pd.DataFrame]:
    cache = tmp_path_factory.mktemp("cache")
    options = {"listings": EMBEDDED_LISTINGS, "history_years": EMBEDDED_HISTORY_YEARS}
    with (
        start(seed=7, as_of=sandbox_as_of, **options) as sandbox,
        rf.Client(base_url=sandbox.url, cache_dir=cache, progress=False) as client,
    ):
        return client.sync_listings(), client.listing_history()


@pytest.mark.parametrize("freq", ["W", "4W", "M", "Q"])
def test_the_changes_equal_a_run_from_an_earlier_start(four_years: Any, freq: str) -> None:
    """Every cell of the default range (changes included) equals the same period's cell in a run
    that starts 18 months earlier: a change is read from the data wherever they cover the period
    before, not from the rows returned."""
    market, history = four_years
    default = rf.market_trends(market, history, freq=freq, end=END)
    earlier = rf.market_trends(market, history, freq=freq, end=END, start="2023-01-01")
    common = earlier[earlier["period_begin"] >= default["period_begin"].iloc[0]]
    pd.testing.assert_frame_equal(common.reset_index(drop=True), default, check_flags=False)
    lag = default.attrs["lags"]["yoy"]
    assert default["homes_sold_yoy"].iloc[:lag].notna().all()  # the year before is covered
    assert default["new_listings_mom"].iloc[0] == pytest.approx(
        default["new_listings"].iloc[0]
        / earlier.set_index("period_begin")["new_listings"].shift(default.attrs["lags"]["mom"])[
            default["period_begin"].iloc[0]
        ]
        - 1
    )
    assert default.attrs["read_from"] < default["period_begin"].iloc[0]


def test_the_first_row_of_the_default_range_has_its_year_over_year(four_years: Any) -> None:
    """The default 24 months (July 2024 to June 2026): every count's YoY is filled on
    the first row (12 of 24 rows had none: the year before was not among the rows returned)."""
    market, history = four_years
    out = rf.market_trends(market, history, end=END)
    assert out["period_begin"].iloc[0] == pd.Timestamp("2024-07-01")
    assert len(out) == 24
    first = out.iloc[0]
    for metric in ("homes_sold", "new_listings", "pending_sales", "active_listings"):
        assert np.isfinite(first[f"{metric}_yoy"]), metric
    assert first["median_sale_price_yoy"] == pytest.approx(
        first["median_sale_price"]
        / rf.market_trends(market, history, start="2023-07-01", end="2023-07-31")[
            "median_sale_price"
        ].iloc[0]
        - 1
    )


def test_periods_before_the_data_are_not_read(four_years: Any) -> None:
    """A start before the data: nothing earlier is computed (read_from is the start); a start a
    year after the data's first whole month reads back to that month, not before."""
    market, history = four_years
    entered = market["OriginalEntryTimestamp"].min().tz_convert(None)
    first_whole = entered.to_period("M").start_time + pd.offsets.MonthBegin(1)
    out = rf.market_trends(market, history, end=END, start=first_whole + pd.DateOffset(months=6))
    assert out.attrs["read_from"] == first_whole
    assert out["homes_sold_yoy"].iloc[:6].isna().all()  # their year before: not covered
    assert out["homes_sold_yoy"].iloc[6:].notna().all()


def test_tiers_read_the_year_before_too(four_years: Any) -> None:
    market, history = four_years
    default = rf.market_trends(market, history, end=END, tiers=True)
    earlier = rf.market_trends(market, history, end=END, start="2023-07-01", tiers=True)
    begin = default["period_begin"].min()
    common = earlier[earlier["period_begin"] >= begin].reset_index(drop=True)
    pd.testing.assert_frame_equal(common, default, check_flags=False)
    assert default.loc[default["period_begin"] == begin, "homes_sold_yoy"].notna().all()
