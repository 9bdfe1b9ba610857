"""How many chart workers ``report market`` starts (issue #32): a one-page client edition draws
its 4 charts in-process (a worker's imports cost more CPU than it saves, docs/benchmarks.md);
a pack of areas or the analyst edition keep the idle-core default; ``--chart-workers`` wins."""

from __future__ import annotations

import pytest

from realtyframes.cli.report import chart_worker_count
from realtyframes.report import MarketReportOptions


@pytest.mark.parametrize(
    ("requested", "options", "expected"),
    [
        (None, MarketReportOptions(), 0),
        (None, MarketReportOptions(areas=3), None),
        (None, MarketReportOptions(edition="analyst"), None),
        (2, MarketReportOptions(), 2),
        (0, MarketReportOptions(edition="analyst"), 0),
    ],
)
def test_chart_worker_count(
    requested: int | None, options: MarketReportOptions, expected: int | None
) -> None:
    assert chart_worker_count(requested, options) == expected
