"""``fetch_pages``: fewest requests, short pages, drift recovery, progress bar, byte scan."""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable
from typing import Any

import httpx
import pandas as pd
import pytest

from realtyframes.api import ApiClient
from realtyframes.loaders import DriftWarning, fetch_pages, fetch_pages_many
from realtyframes.loaders._fetch import _EarlyShape, shape_listings
from realtyframes.loaders._paging import page_info, progress_enabled
from realtyframes.sandbox import Faults, RunningSandbox


def _ids(pages: list[bytes], key: str = "listings") -> list[Any]:
    return [i for body in pages for i in page_info(body, key, exact=True).ids]


def _market(sb: RunningSandbox, params: dict[str, str] | None = None) -> set[str]:
    """Every ListingId of the search, read from the sandbox's store directly (no fault layer)."""
    out: set[str] = set()
    offset = 0
    while True:
        page = sb.admin.listings.search({**(params or {}), "Limit": "50", "Offset": str(offset)})
        out.update(item["ListingId"] for item in page["listings"])
        if len(page["listings"]) < 50:
            return out
        offset += 50


def test_page_info_scans_without_decoding() -> None:
    body = (
        b'{"total":120,"offset":50,"limit":50,"listings":[{"ListingId":"A1","x":"say '
        b'\\"ListingId\\":\\"fake\\""},{"ListingId":null},{"ListingId":"A3"}]}'
    )
    info = page_info(body, "listings")
    assert (info.total, info.offset, info.count) == (120, 50, 3)
    assert info.ids[0] == "A1" and info.ids[2] == "A3"
    assert info.ids[1] != page_info(body, "listings").ids[1]  # a null id never equals another
    tail_envelope = b'{"contacts":[{"id":"c1"},{"id":"c2"}],"total":2,"offset":0}'
    assert page_info(tail_envelope, "contacts").ids == ("c1", "c2")
    assert page_info(b'{"total":0,"offset":0,"limit":50,"listings":[]}', "listings").count == 0
    changes = b'{"total":1,"offset":0,"limit":50,"changes":[{"ListingId":"A1","ChangeType":"price_change","ChangeTimestamp":"t"}]}'
    assert page_info(changes, "changes", exact=True).ids == (("A1", "price_change", "t"),)
    with pytest.raises(ValueError):
        page_info(b"<html>", "listings")


def test_one_request_per_page_planned_from_the_first_total(
    sandbox_url: str, http_client: httpx.Client
) -> None:
    total = http_client.get(f"{sandbox_url}/v1/listings", params={"Limit": "1"}).json()["total"]
    assert total > 100
    with ApiClient(sandbox_url) as api:
        paged = fetch_pages(api, "/v1/listings", {}, item_key="listings", progress=False)
        assert paged.total == total and paged.warnings == ()
        assert paged.requests == len(paged.pages) == math.ceil(total / 50)
        ids = _ids(paged.pages)
        assert len(ids) == len(set(ids)) == total
        top = fetch_pages(
            api, "/v1/listings", {}, item_key="listings", max_results=120, progress=False
        )
        assert top.requests == 3 and _ids(top.pages)[:120] == ids[:120]
        small = fetch_pages(
            api, "/v1/listings", {"City": "Miami"}, item_key="listings", progress=False
        )
        assert small.total == len(_ids(small.pages))


def test_contacts_and_change_chunks_are_paged(sandbox_url: str) -> None:
    with ApiClient(sandbox_url) as api:
        contacts = fetch_pages(api, "/v1/contacts", {}, item_key="contacts", progress=False)
        assert len(set(_ids(contacts.pages, "contacts"))) == contacts.total == 500
        closed = fetch_pages(
            api, "/v1/listings", {"Status": "Closed"}, item_key="listings", progress=False
        )
        ids = _ids(closed.pages)
        chunks = [
            {"Since": "2025-01-01T00:00:00Z", "ListingIds": ",".join(ids[i : i + 100])}
            for i in range(0, 300, 100)
        ]
        many = fetch_pages_many(
            api, "/v1/listings/changes", chunks, item_key="changes", progress=False
        )
        for chunk, paged in zip(chunks, many, strict=True):
            alone = fetch_pages(
                api, "/v1/listings/changes", chunk, item_key="changes", progress=False
            )
            assert paged.total == alone.total > 50  # several pages per chunk
            assert sorted(_ids(paged.pages, "changes")) == sorted(_ids(alone.pages, "changes"))
            assert paged.requests == math.ceil(paged.total / 50)


@pytest.mark.parametrize("drift", [1, 3])
def test_drift_is_re_read_until_complete(
    start_sandbox: Callable[..., RunningSandbox], drift: int
) -> None:
    sb = start_sandbox(listings=3000, faults=Faults(drift=drift))
    before = _market(sb)
    with ApiClient(sb.url) as api, warnings.catch_warnings():
        warnings.simplefilter("error", DriftWarning)
        paged = fetch_pages(api, "/v1/listings", {}, item_key="listings", progress=False)
    after = _market(sb)
    got = set(_ids(paged.pages))
    # every page served moved the market (the last move may land just after its answer)
    assert sb.admin.faults.drift_inserted >= drift * (paged.requests - 1)
    assert paged.requests > math.ceil(len(before) / 50)  # something was re-read
    assert before <= got <= after  # nothing that was there is missing, nothing made up
    assert len(got) == paged.total  # complete as of the last read (at the top)
    assert len(after - got) <= drift  # only what that last read itself added


def test_drift_that_cannot_be_closed_is_a_clear_warning(
    start_sandbox: Callable[..., RunningSandbox],
) -> None:
    """25 new listings at the top per page served: faster than any re-read can catch up."""
    sb = start_sandbox(listings=3000, faults=Faults(drift=25))
    before = _market(sb)
    with ApiClient(sb.url) as api, pytest.warns(DriftWarning) as caught:
        paged = fetch_pages(api, "/v1/listings", {}, item_key="listings", progress=False)
    got = set(_ids(paged.pages))
    missing = paged.total - len(got)
    assert missing > 0 and paged.warnings
    assert before <= got  # what is missing arrived during the load
    message = str(caught[0].message)
    assert f"{missing} of {paged.total} records are missing" in message
    assert "moved" in message and message == paged.warnings[0]


def test_progress_bar_only_when_asked(sandbox_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert progress_enabled(False) is False and progress_enabled(True) is True
    assert progress_enabled(None) is False  # pytest's stderr is not a terminal
    with ApiClient(sandbox_url) as api:
        fetch_pages(api, "/v1/listings", {}, item_key="listings", progress=False)
        assert capsys.readouterr().err == ""
        fetch_pages(api, "/v1/listings", {}, item_key="listings", progress=None)
        assert capsys.readouterr().err == ""
        fetch_pages(api, "/v1/listings", {}, item_key="listings", progress=True, desc="market")
        err = capsys.readouterr().err
        assert "market" in err and " requests, 3 left [ETA " in err  # 4 pages: 1 read, 3 left
        fetch_pages(api, "/v1/listings", {"City": "Miami"}, item_key="listings", progress=True)
        assert capsys.readouterr().err == ""  # one page: no bar


def test_a_short_page_ends_paging(sandbox_url: str, http_client: httpx.Client) -> None:
    """Starting at an offset, the pages run to the end of the data and stop at a short one."""
    total = http_client.get(f"{sandbox_url}/v1/listings", params={"Limit": "1"}).json()["total"]
    with ApiClient(sandbox_url) as api:
        paged = fetch_pages(
            api, "/v1/listings", {"Offset": "100"}, item_key="listings", progress=False
        )
    counts = [len(json.loads(b)["listings"]) for b in paged.pages]
    assert sum(counts) == total - 100 and counts[-1] < 50 and all(c == 50 for c in counts[:-1])


@pytest.mark.parametrize("drift", [0, 3])
def test_pages_shaped_as_they_arrive_equal_shaping_them_at_the_end(
    start_sandbox: Callable[..., RunningSandbox], drift: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search's pages are shaped in batches while the others are fetched (#33,
    ``fetch_pages``'s ``on_page``): the frames equal shaping all the bodies at once, drift's
    re-read pages (records read twice) included."""
    monkeypatch.setenv("REALTYFRAMES_SHAPE_BATCH", "2")  # several batches from a small sandbox
    sb = start_sandbox(listings=3000, faults=Faults(drift=drift))
    early = _EarlyShape(0)
    with ApiClient(sb.url) as api, warnings.catch_warnings():
        warnings.simplefilter("ignore", DriftWarning)
        paged = fetch_pages(
            api, "/v1/listings", {}, item_key="listings", progress=False, on_page=early
        )
    assert len(early.parts) >= 2 and len(early.bodies) == 2 * len(early.parts)
    got, whole = early.finish(paged.pages), shape_listings(paged.pages)
    pd.testing.assert_frame_equal(got.frame, whole.frame)
    assert got.media is not None and whole.media is not None
    pd.testing.assert_frame_equal(got.media, whole.media)
    assert got.meta == whole.meta
    if drift:
        assert got.meta["merged"] > 0  # records read twice were merged across batches
