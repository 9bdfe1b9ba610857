"""Steps on a second thread: the same results as one by one, errors raised, lazy engines untouched."""

from __future__ import annotations

import threading

import narwhals as nw
import numpy as np
import pandas as pd
import pytest

from realtyframes.analysis import _trends_local as trends_module
from realtyframes.analysis import compare_markets, market_summary, market_trends, price_drops
from realtyframes.analysis._kernel import THREADS_VARIABLE, concurrently, in_background
from realtyframes.errors import AnalysisInputError


def _thread_name() -> str:
    return threading.current_thread().name


def test_in_background_runs_an_eager_frames_step_on_another_thread() -> None:
    frame = nw.from_native(pd.DataFrame({"x": [1, 2]}))
    assert in_background(frame, _thread_name).result().startswith("realtyframes")


def test_in_background_runs_a_lazy_frames_step_now_in_the_caller() -> None:
    lazy = nw.from_native(pd.DataFrame({"x": [1, 2]})).lazy()
    future = in_background(lazy, _thread_name)
    assert future.done()
    assert future.result() == threading.current_thread().name


@pytest.mark.parametrize("lazy", [False, True])
def test_in_background_raises_the_steps_error_at_result(lazy: bool) -> None:
    frame = nw.from_native(pd.DataFrame({"x": [1]}))
    future = in_background(frame.lazy() if lazy else frame, lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        future.result()


def test_concurrently_keeps_the_order_and_uses_two_threads_on_many_rows() -> None:
    steps = [lambda k=k: (k, _thread_name()) for k in range(6)]
    small = concurrently(steps, rows=10)
    assert [k for k, _ in small] == list(range(6))
    assert {name for _, name in small} == {threading.current_thread().name}
    big = concurrently(steps, rows=1_000_000)
    assert [k for k, _ in big] == list(range(6))
    assert all(name.startswith("realtyframes") for _, name in big)


def test_concurrently_raises_a_steps_error() -> None:
    with pytest.raises(ZeroDivisionError):
        concurrently([lambda: 1, lambda: 1 / 0], rows=1_000_000)


@pytest.fixture(scope="module")
def big_market() -> pd.DataFrame:
    """60,000 listings (above the threaded size), a third of them cut, every status."""
    n = 60_000
    rng = np.random.default_rng(3)
    price = np.round(rng.lognormal(13, 0.4, n), -3)
    cut = rng.random(n) < 0.35
    entered = pd.Timestamp("2024-01-01", tz="UTC") + pd.to_timedelta(rng.uniform(0, 170, n), "D")
    status = rng.choice(["Active", "Pending", "Closed"], n)
    return pd.DataFrame(
        {
            "ListingId": np.char.add("M", rng.permutation(n).astype(str)),
            "City": pd.Categorical(rng.choice(["Ames", "Boone", "Cedar"], n)),
            "PostalCode": rng.choice(["50010", "50011"], n),
            "PropertyType": "Residential",
            "StandardStatus": status,
            "ListPrice": np.where(cut, np.round(price * 0.96, -3), price),
            "PreviousListPrice": np.where(cut, price, np.nan),
            "ClosePrice": np.where(status == "Closed", price, np.nan),
            "LivingArea": rng.uniform(600, 3000, n).round(),
            "DaysOnMarket": rng.integers(0, 200, n).astype(float),
            "OriginalEntryTimestamp": entered,
            "MajorChangeTimestamp": entered + pd.Timedelta(days=5),
            "CloseDate": (entered + pd.Timedelta(days=9)).where(status == "Closed"),
        }
    )


def _history(market: pd.DataFrame) -> pd.DataFrame:
    """The market's price cuts and status changes, shuffled, with records of unknown listings."""
    cut = market[market["PreviousListPrice"].notna()]
    moved = market[market["StandardStatus"] != "Active"]
    records = pd.concat(
        [
            pd.DataFrame({"ListingId": cut["ListingId"], "ChangeType": "price_change",
                          "ChangeTimestamp": cut["OriginalEntryTimestamp"] + pd.Timedelta(days=2),
                          "PreviousListPrice": cut["PreviousListPrice"],
                          "ListPrice": cut["ListPrice"]}),
            pd.DataFrame({"ListingId": moved["ListingId"], "ChangeType": "status_change",
                          "ChangeTimestamp": moved["MajorChangeTimestamp"],
                          "StandardStatus": moved["StandardStatus"]}),
            pd.DataFrame({"ListingId": ["gone-1", "gone-2"], "ChangeType": "price_change",
                          "ChangeTimestamp": pd.Timestamp("2024-03-01", tz="UTC")}),
        ],
        ignore_index=True,
    )  # fmt: skip
    return records.sample(frac=1.0, random_state=5).reset_index(drop=True)


def test_big_results_equal_the_one_thread_results(
    big_market: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    history = _history(big_market)
    calls = {
        "price_drops": lambda m: price_drops(m),
        "market_summary": lambda m: market_summary(m, by="City"),
        "compare_markets": lambda m: compare_markets(m, by="City"),
        "market_trends": lambda m: market_trends(m, history, by="City"),
    }
    threaded = {name: call(big_market) for name, call in calls.items()}
    assert len(threaded["price_drops"]) > 20_000
    assert threaded["market_trends"]["price_drops"].sum() > 15_000
    monkeypatch.setenv(THREADS_VARIABLE, "1")
    for name, call in calls.items():
        pd.testing.assert_frame_equal(call(big_market), threaded[name], check_exact=True)


@pytest.mark.parametrize("threads", ["2", "1"])
def test_market_trends_raises_a_failed_step_instead_of_waiting_for_it(
    big_market: pd.DataFrame, monkeypatch: pytest.MonkeyPatch, threads: str
) -> None:
    """The cuts wait for the status intervals on the other thread: when those fail, both raise."""

    def broken(*args: object) -> None:
        raise RuntimeError("no intervals")

    monkeypatch.setenv(THREADS_VARIABLE, threads)
    monkeypatch.setattr(trends_module, "status_intervals", broken)
    with pytest.raises(RuntimeError, match="no intervals"):
        market_trends(big_market, _history(big_market), by="City")


def test_one_thread_keeps_every_step_in_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(THREADS_VARIABLE, "1")
    frame = nw.from_native(pd.DataFrame({"x": [1, 2]}))
    caller = threading.current_thread().name
    assert in_background(frame, _thread_name).result() == caller
    assert concurrently([_thread_name, _thread_name], rows=1_000_000) == [caller, caller]


@pytest.mark.parametrize("value", ["0", "two", "-1", "1.5"])
def test_a_bad_thread_count_is_named(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(THREADS_VARIABLE, value)
    listings = pd.DataFrame({"ListingId": ["a"], "City": ["Ames"]})
    with pytest.raises(AnalysisInputError, match=f"REALTYFRAMES_THREADS .*1 or more.*{value!r}"):
        market_summary(listings.assign(**_minimal()), by="City")
    with pytest.raises(AnalysisInputError, match="REALTYFRAMES_THREADS"):
        price_drops(listings.assign(**{**_minimal(), "PreviousListPrice": 120_000.0}))


def _minimal() -> dict[str, object]:
    """The other columns market_summary reads, one listing's worth."""
    stamp = pd.Timestamp("2024-05-01", tz="UTC")
    return {
        "PropertyType": "Residential",
        "StandardStatus": "Active",
        "ListPrice": 100_000.0,
        "PreviousListPrice": np.nan,
        "ClosePrice": np.nan,
        "LivingArea": 1000.0,
        "DaysOnMarket": 3.0,
        "OriginalEntryTimestamp": stamp,
        "MajorChangeTimestamp": stamp,
        "CloseDate": pd.NaT,
    }
