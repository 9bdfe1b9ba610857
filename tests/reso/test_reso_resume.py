"""A RESO backfill SIGKILLed at many points ends equal to an uninterrupted one: each query of the
sync keeps its pages in the cache's checkpoint, and the next run goes on from there."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pandas as pd
import pytest

import realtyframes as rf
from killing import run_and_kill
from realtyframes.cache import Checkpoint

PAGE = 25

LOAD = """
url, cache, page = args
with rf.Client.reso(url, token="reso-token", page_size=int(page), cache_dir=cache,
                    progress=False, event_hooks={"request": [hook]}) as client:
    client.sync_listings()
"""


class Counter:
    def __init__(self) -> None:
        self.count = 0

    def __call__(self, request: httpx.Request) -> None:
        self.count += 1


def _sync(url: str, cache: Path) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    counter = Counter()
    with rf.Client.reso(
        url,
        token="reso-token",
        page_size=PAGE,
        cache_dir=cache,
        progress=False,
        event_hooks={"request": [counter]},
    ) as client:
        return client.sync_listings(), client.listing_history(), counter.count


def _kill_after(url: str, cache: Path, sent: int) -> int:
    counted = cache.parent / f"{cache.name}-requests"
    return run_and_kill(LOAD, counted, sent, url, str(cache), str(PAGE))


@pytest.fixture(scope="module")
def market() -> Iterator[tuple[str, Path]]:
    from realtyframes.sandbox import start
    from sandbox_options import AS_OF, SMALL

    with start(seed=7, as_of=AS_OF, **SMALL) as sb:
        yield sb.url + "/reso/odata", Path()


def _check(url: str, tmp_path: Path, points: list[int]) -> None:
    reference, history, requests = _sync(url, tmp_path / "reference")
    assert requests > max(points)
    for sent in points:
        cache = tmp_path / f"killed-{sent}"
        interrupted = _kill_after(url, cache, sent)
        assert not (cache / "market").exists()
        got, got_history, resumed = _sync(url, cache)
        pd.testing.assert_frame_equal(got, reference)
        pd.testing.assert_frame_equal(got_history, history)
        # no page asked twice but those in flight (the one sent, and the answers the checkpoint's
        # writer had not committed at the kill: at most Checkpoint.WRITE_BATCH, docs/cache.md),
        # and the new run's $metadata
        bound = requests + 2 + Checkpoint.WRITE_BATCH
        assert interrupted + resumed <= bound, (sent, interrupted, resumed, requests)


def test_a_backfill_killed_at_three_points_ends_equal(
    market: tuple[str, Path], tmp_path: Path
) -> None:
    _check(market[0], tmp_path, [2, 9, 20])


@pytest.mark.slow
def test_a_backfill_killed_at_20_points_ends_equal(
    market: tuple[str, Path], tmp_path: Path
) -> None:
    _check(market[0], tmp_path, list(range(1, 21)))
