"""The sync runner's reader that makes the requests (:class:`Fetching`), all in the client's one
bounded pool; a plan's counting reader is ``_plan.Counting``.

>>> reader = Fetching(client.session.api, ENDPOINTS["listings"], progress=False)  # doctest: +SKIP
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import TypeVar

import pandas as pd

from realtyframes.api import ApiClient
from realtyframes.cache import Checkpoint
from realtyframes.errors import ApiError, NotFoundError
from realtyframes.loaders._answers import check_echo
from realtyframes.loaders._base import Endpoint
from realtyframes.loaders._page_info import Paged, _Bar, progress_enabled
from realtyframes.loaders._paging import fetch_pages, fetch_pages_many
from realtyframes.loaders._sync_steps import Fed, chunks, pages_of, too_many

__all__ = ["Fetching", "in_threads"]

logger = logging.getLogger("realtyframes.sync")
T = TypeVar("T")
R = TypeVar("R")


class Fetching:
    """The runner's :class:`Reader` for real; with a ``checkpoint``, pages it holds are not asked
    for again and pages fetched are saved."""

    def __init__(
        self,
        api: ApiClient,
        endpoint: Endpoint,
        progress: bool | None,
        checkpoint: Checkpoint | None = None,
    ) -> None:
        assert endpoint.sync is not None and endpoint.details is not None
        self.api, self.endpoint, self.sync = api, endpoint, endpoint.sync
        self.at, self.progress, self.checkpoint = endpoint.details.at, progress, checkpoint

    def search(self, queries: Sequence[Mapping[str, str]]) -> list[Paged]:
        """Each query paged: one after the other into a checkpoint (its first page notes the
        data's identity), else all at once."""
        item = str(self.endpoint.item_key)
        name = self.sync.partition[0]
        if self.checkpoint is None:
            return fetch_pages_many(self.api, self.endpoint.path, queries, item_key=item,
                                    progress=self.progress, desc="market")  # fmt: skip
        return [
            fetch_pages(self.api, self.endpoint.path, q, item_key=item, progress=self.progress,
                        desc=f"market: {q[name]}", checkpoint=self.checkpoint)
            for q in queries
        ]  # fmt: skip

    def keys(self, market: pd.DataFrame, found: Sequence[Paged]) -> list[str]:
        return market[self.sync.key].tolist()

    def feed(self, ids: Sequence[str], since: str, chunk: int) -> Fed:
        """Change-feed pages of ``ids``, ``chunk`` ids a request, concurrently; a chunk refused
        for too many ids (:func:`too_many`) is split in halves once; any other error is raised."""
        feed = self.sync.feed

        def attempt(part: Sequence[str], split: bool = True) -> Fed:
            query = {"Since": since, self.sync.feed_ids: ",".join(part)}
            try:
                got = fetch_pages(self.api, feed.path, query, item_key=str(feed.item_key),
                                  progress=False, checkpoint=self.checkpoint)  # fmt: skip
            except ApiError as exc:
                if not split or len(part) == 1 or not too_many(exc):
                    raise
                logger.info(
                    "change feed refused %d ids (%s); splitting them", len(part), exc.status
                )
                half = (len(part) + 1) // 2
                return attempt(part[:half], False) + attempt(part[half:], False) + Fed(rejected=1)
            return Fed(got.pages, got.requests, 0, pages_of(got.total))

        parts = chunks(ids, chunk)
        bar = _Bar(progress_enabled(self.progress), "market: changes")
        return sum(in_threads(self.api, attempt, parts, bar), Fed())

    def page(self, query: Mapping[str, str]) -> pd.DataFrame:
        """The first page of a search (``query`` with its ``Limit``), shaped."""
        assert self.endpoint.shape is not None
        body = self.api.get_bytes(self.endpoint.path, {**query, "Offset": "0"})
        return self.endpoint.shape([body]).frame

    def detail(self, key: str) -> bytes | None:
        """The detail of one record (None: the server no longer has it)."""
        try:
            return self.api.get_bytes(self.at(key), check=self._echo(key))
        except NotFoundError:
            return None

    def details(self, ids: Sequence[str]) -> tuple[list[bytes], list[str], int]:
        """The details of ``ids``, concurrently; after a 404, those not read yet one by one,
        dropping those gone: (bodies, gone, requests sent). A detail of another record is
        retried, then raised."""
        paths = [self.at(str(i)) for i in ids]
        echo = [self._echo(str(i)) for i in ids]
        got: dict[int, bytes] = {}

        def keep(n: int, body: bytes) -> None:  # the last check of an answer: it is the result
            echo[n](body)
            got[n] = body

        before = self.api.request_counts()
        try:
            return self.api.get_many([(p, None) for p in paths], raw=True, check=keep), [], len(ids)
        except NotFoundError:
            spent = self.api.request_counts() - before  # those in flight at the 404 included
        todo = [n for n in range(len(ids)) if n not in got]
        gone: list[str] = []
        for n in todo:
            try:
                got[n] = self.api.get_bytes(paths[n], check=echo[n])
            except NotFoundError:
                gone.append(ids[n])
        asked = spent.requests - spent.retries + len(todo)
        return [got[n] for n in sorted(got)], gone, asked

    def _echo(self, asked: str) -> Callable[[bytes], None]:
        return lambda body: check_echo(body, self.sync.key, asked)


def in_threads(api: ApiClient, work: Callable[[T], R], items: Sequence[T], bar: _Bar) -> list[R]:
    """``work(item)`` for each item in threads (on ``bar``), results in order; the requests share
    ``api``'s one bounded pool. The first failure cancels what has not started and is raised."""
    workers = max(1, min(len(items), api.max_concurrency))
    pool = ThreadPoolExecutor(workers, thread_name_prefix="realtyframes-sync")
    bar.plan(len(items))
    try:
        futures = [pool.submit(work, item) for item in items]
        for future in as_completed(futures):
            future.result()  # raises the first failure
            bar.update()
        return [future.result() for future in futures]
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        bar.close()
