"""The client's per-second budget keeps a margin: the server counts a request when it arrives,
so two requests admitted a second apart can land in one of its windows when the first one's
send is delayed (a shared machine); the margin keeps MLS Grid's 2 a second whatever the jitter."""

from __future__ import annotations

import pytest

from realtyframes.reso import Budget, Budgets
from realtyframes.reso._budgets import SEND_MARGIN


def test_the_third_request_waits_a_second_and_the_margin_after_the_first() -> None:
    now = [0.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    budgets = Budgets({"second": Budget(1, 2)}, "acct", None, clock=lambda: now[0], sleep=sleep)
    budgets.admit()
    now[0] = 0.5
    budgets.admit()
    now[0] = 1.05  # a second after the first: the old rule sent it at once
    budgets.admit()
    assert now[0] == pytest.approx(1.0 + SEND_MARGIN)
    assert budgets.waited == pytest.approx(sum(slept)) and len(slept) == 1
