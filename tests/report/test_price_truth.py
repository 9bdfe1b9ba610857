"""The client edition's headline price change against the sandbox's true price level.

The embedded sandbox publishes its price level (``realtyframes.sandbox.price_path``); the
headline "prices against a year earlier" (the constant-quality index by quarter) must land
within 2 points of the truth on two seeds, where the median sale price (the mix) may not. A
market of 40,000 listings (about 1,500 residential sales a quarter): the index's 95 % band is
about ±4 points there; on a few hundred sales it is too wide for a 2-point test."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import realtyframes as rf
from realtyframes.report import MarketReportOptions, load_market_frames
from realtyframes.report.local import price_change
from realtyframes.sandbox import price_path, serve

pytestmark = pytest.mark.slow

AS_OF = datetime(2026, 6, 30, tzinfo=UTC)


@pytest.fixture(scope="module", params=[7, 11])
def market(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    cache = tmp_path_factory.mktemp(f"truth-{request.param}")
    with (
        serve(seed=request.param, listings=40_000, as_of=AS_OF) as url,
        rf.Client(base_url=url, cache_dir=cache, progress=False) as client,
    ):
        frames = load_market_frames(client, MarketReportOptions(as_of=AS_OF.date()))
    return frames.listings


def _true_change(quarter: str) -> float:
    """The true level's change: the quarter's mean monthly level over that of a year earlier."""
    path = dict(price_path(AS_OF))
    begin = pd.Period(quarter.replace(" ", ""), "Q").start_time

    def level(start: pd.Timestamp) -> float:
        return float(np.mean([path[(start + pd.DateOffset(months=k)).date()] for k in range(3)]))

    return level(begin) / level(begin - pd.DateOffset(years=1)) - 1


@pytest.mark.parametrize("as_of", ["2025-12-31", "2026-03-31", "2026-06-30"])
def test_the_headline_is_within_2_points_of_the_truth(market: pd.DataFrame, as_of: str) -> None:
    change = price_change(market, as_of=as_of)
    truth = _true_change(change.period)
    assert abs(change.change - truth) <= 0.02, (change.period, change.change, truth)
    assert change.low < change.change < change.high


def test_a_mix_shift_is_explained_in_one_line(market: pd.DataFrame) -> None:
    """Leave out the smaller half of the latest quarter's sales: the median jumps, the
    constant-quality change (which controls for size) does not follow, and one line names the
    price band whose share moved. On the unchanged market the two agree within their noise."""
    closed = pd.to_datetime(market["CloseDate"], errors="coerce")
    latest = (closed >= "2026-04-01").to_numpy() & (closed <= "2026-06-30").to_numpy()
    area = pd.to_numeric(market["LivingArea"], errors="coerce")
    small = latest & (area < area[latest].median()).to_numpy()
    plain = price_change(market, as_of=AS_OF.date())
    shifted = price_change(market[~small], as_of=AS_OF.date())
    assert plain.mix is None
    assert shifted.median_change > plain.median_change + 0.15
    assert abs(shifted.change - plain.change) < 0.04
    assert shifted.mix is not None
    assert re.match(
        r"Sales over \$[\d.]+[KM] were \d+ % of sales, \d+ % a year earlier", shifted.mix
    )


def test_the_tests_own_truth_is_the_published_path(tmp_path: Path) -> None:
    """A control: the truth helper reads the path (a flat path would give 0)."""
    assert 0.03 < _true_change("2026 Q2") < 0.10
