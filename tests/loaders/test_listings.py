"""``client.listings`` / ``client.listing``: counts, ids, dtypes, cache, details, quarantine, drift."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pandas as pd
import pandas.testing as pdt
import pyarrow.parquet as pq
import pytest

from realtyframes import Client
from realtyframes.api import RetryPolicy
from realtyframes.errors import DataQualityWarning, QueryError, SchemaValidationError
from realtyframes.loaders import PAGE_SIZE, DriftWarning, LoadInfo, fetch_pages
from realtyframes.sandbox import Faults, RunningSandbox
from realtyframes.schemas import (
    DETAIL_FIELDS,
    SUMMARY_FIELDS,
    Listing,
    listings_from_pages,
    listings_from_records,
    target_dtypes,
    validate,
)

MakeClient = Callable[..., tuple[Client, Any]]  # (client, RequestLog of tests/loaders/conftest.py)


def _total(http: httpx.Client, url: str, **params: str) -> int:
    answer = http.get(f"{url}/v1/listings", params={**params, "Limit": "1"})
    return int(answer.json()["total"])


def _market(sb: RunningSandbox) -> set[str]:
    """Every ListingId of the default search, from the sandbox's store (no fault layer)."""
    out: set[str] = set()
    for offset in range(0, 100_000, 50):
        page = sb.admin.listings.search({"Limit": "50", "Offset": str(offset)})["listings"]
        out.update(item["ListingId"] for item in page)
        if len(page) < 50:
            break
    return out


def _check_dtypes(frame: pd.DataFrame) -> None:
    expected = target_dtypes(Listing)
    for column in SUMMARY_FIELDS:
        assert frame[column].dtype == expected[column], column
    assert str(frame["ModificationTimestamp"].dtype) == "datetime64[us, UTC]"
    assert frame["StandardStatus"].cat.categories.tolist() == [
        "Active",
        "Active Under Contract",
        "Pending",
        "Closed",
    ]
    assert frame["ListPrice"].dtype == np.float64
    assert frame["BedroomsTotal"].dtype == "Int64" and frame["WaterfrontYN"].dtype == "boolean"
    assert isinstance(frame["City"].dtype, pd.StringDtype)


def test_listings_count_ids_dtypes_and_cache(
    sandbox_url: str, http_client: httpx.Client, make_client: MakeClient, tmp_path: Path
) -> None:
    client, log = make_client(sandbox_url)
    total = _total(http_client, sandbox_url)
    frame = client.listings()
    info = client.last_load
    assert isinstance(info, LoadInfo)
    assert len(frame) == total == info.rows == info.total and info.quarantined == 0
    assert frame["ListingId"].is_unique and not info.from_cache
    assert log.count == info.requests == math.ceil(total / 50)
    assert isinstance(frame.index, pd.RangeIndex)
    _check_dtypes(frame)

    again = client.listings()  # a cache hit: zero requests
    assert log.count == info.requests and client.last_load.requests == 0
    assert client.last_load.from_cache and client.last_load.fetched_at == info.fetched_at
    pdt.assert_frame_equal(again, frame)
    on_disk = client.session.cache.path("listings", info.key)
    pdt.assert_frame_equal(pq.read_table(on_disk).to_pandas(), frame)  # other tools see the same

    fresh = client.listings(refresh=True)
    assert log.count == 2 * info.requests and not client.last_load.from_cache
    pdt.assert_frame_equal(fresh, frame)

    miami = client.listings(City="Miami", MinListPrice=500_000)  # other filters: another entry
    assert len(miami) == _total(http_client, sandbox_url, City="Miami", MinListPrice="500000")
    assert set(miami["City"]) == {"Miami"} and (miami["ListPrice"] >= 500_000).all()


def test_max_results_keeps_the_first_in_server_order(
    sandbox_url: str, make_client: MakeClient
) -> None:
    client, _ = make_client(sandbox_url, cache=False)
    assert client.session.cache is None
    every = client.listings(Sort="listprice")
    top = client.listings(Sort="listprice", max_results=70)
    assert client.last_load.requests == 2 and len(top) == 70
    pdt.assert_frame_equal(top, every.iloc[:70].reset_index(drop=True))
    assert top["ListPrice"].is_monotonic_increasing


def test_bad_filters_fail_before_any_request(sandbox_url: str, make_client: MakeClient) -> None:
    client, log = make_client(sandbox_url)
    cases = [
        ({"city": "Miami"}, "did you mean 'City'"),
        ({"Status": "Sold"}, "Status"),
        ({"MinListPrice": 5, "MaxListPrice": 1}, "MinListPrice"),
        ({"Limit": 10}, "max_results"),
        ({"Offset": 50}, "Offset"),
        ({"max_results": 0}, "max_results"),
        ({"details": "yes"}, "details"),
        ({"refresh": 1}, "refresh"),
        ({"on_invalid": "drop"}, "on_invalid"),
    ]
    for kwargs, text in cases:
        with pytest.raises(QueryError, match=text):
            client.listings(**kwargs)
    with pytest.raises(QueryError, match="ListingId"):
        client.listing("")
    assert log.count == 0
    assert not (client.settings.cache_dir or Path("/nonexistent")).exists()  # nothing written


def test_details_fetch_every_detail_field_concurrently(
    start_sandbox: Callable[..., RunningSandbox], make_client: MakeClient
) -> None:
    sb = start_sandbox(latency_ms=15)
    client, log = make_client(sb.url, max_concurrency=4)
    summary = client.listings(max_results=24)
    frame = client.listings(max_results=24, details=True)
    info = client.last_load
    assert info.requests == 1 + 24 and log.max_in_flight > 1  # one page, then 24 at once
    assert frame["ListingId"].tolist() == summary["ListingId"].tolist()
    assert set(SUMMARY_FIELDS + DETAIL_FIELDS) <= set(frame.columns)
    assert frame["PublicRemarks"].notna().all()
    media = info.media
    assert media is not None and list(media.columns[:4]) == [
        "ListingId",
        "Order",
        "MediaURL",
        "ShortDescription",
    ]
    assert len(media) > 24 and set(media["ListingId"]) <= set(frame["ListingId"])
    assert media["Order"].dtype == "Int64"
    cached = client.listings(max_results=24, details=True)
    assert client.last_load.requests == 0
    pdt.assert_frame_equal(cached, frame)
    pdt.assert_frame_equal(client.last_load.media, media)

    one = client.listing(frame["ListingId"].iloc[0])
    assert len(one) == 1 and client.last_load.resource == "listing"
    pdt.assert_frame_equal(one, frame.iloc[:1], check_like=True)
    assert len(client.last_load.media) == (media["ListingId"] == one["ListingId"][0]).sum()


def test_bad_records_are_quarantined_with_reasons(
    start_sandbox: Callable[..., RunningSandbox], make_client: MakeClient
) -> None:
    sb = start_sandbox(listings=3000, faults=Faults(bad_records=0.1))
    client, _ = make_client(sb.url)
    with pytest.warns(DataQualityWarning, match="quarantined"):
        valid = client.listings()
    info = client.last_load
    bad_ids = sb.admin.faults.bad_record_ids
    quarantine = info.quarantine
    assert info.quarantined == len(quarantine) == len(bad_ids) > 10
    assert info.rows + info.quarantined == info.total  # valid + quarantined == fetched
    assert quarantine["_quarantine_reason"].str.len().gt(0).all()
    assert set(quarantine["ListingId"].dropna()) <= bad_ids
    assert not set(valid["ListingId"]) & bad_ids
    assert any("quarantined" in w for w in info.warnings)
    reasons = " ".join(quarantine["_quarantine_reason"])
    assert "ListPrice" in reasons and "PostalCode" in reasons

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        client.listings()  # the cache hit warns no more, and keeps the quarantine
    hit = client.last_load
    assert hit.from_cache and hit.quarantined == info.quarantined
    assert hit.quarantine["ListingId"].tolist() == quarantine["ListingId"].tolist()
    assert (
        hit.quarantine["_quarantine_reason"].tolist() == quarantine["_quarantine_reason"].tolist()
    )

    with pytest.raises(SchemaValidationError):
        client.listings(on_invalid="raise")
    with pytest.warns(DataQualityWarning, match="kept"):
        kept = client.listings(on_invalid="keep")
    assert len(kept) == info.total and client.last_load.quarantined == 0
    strict = client.with_options(on_invalid="raise")
    with pytest.raises(SchemaValidationError):
        strict.listings(refresh=True)


def test_drift_under_paging_is_closed(
    start_sandbox: Callable[..., RunningSandbox], make_client: MakeClient
) -> None:
    sb = start_sandbox(listings=2000, faults=Faults(drift=2))  # 263 active: 6 pages
    client, _ = make_client(sb.url, cache=False)
    before = _market(sb)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DriftWarning)
        frame = client.listings()
    info = client.last_load
    assert frame["ListingId"].is_unique and len(frame) == info.total
    assert info.requests > math.ceil(info.total / 50) and info.warnings == ()
    assert before <= set(frame["ListingId"])
    # a fresh load right after gives the same listings plus only what moved in since
    fresh = client.listings()
    assert set(frame["ListingId"]) <= set(fresh["ListingId"])


def test_ttl_and_cache_dir_settings(
    sandbox_url: str, make_client: MakeClient, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    client, log = make_client(sandbox_url, ttl=0)
    client.listings(City="Miami")
    client.listings(City="Miami")  # expired at once: fetched again
    assert log.count == 2 and not client.last_load.from_cache
    monkeypatch.setenv("REALTYFRAMES_CACHE_DIR", str(tmp_path / "env"))
    with Client(sandbox_url, progress=False) as from_env:
        assert (
            from_env.session.cache is not None and from_env.session.cache.root == tmp_path / "env"
        )
        assert from_env.session.cache.ttl_for("listing").days == 1
    monkeypatch.delenv("REALTYFRAMES_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    with Client(sandbox_url, ttl={"listings": 5}) as default:
        assert default.session.cache.root == tmp_path / "xdg" / "realtyframes"
        assert default.session.cache.ttl_for("listings") == 5
    assert not (tmp_path / "env").exists() and not (tmp_path / "xdg").exists()


def test_progress_setting_of_the_client(
    sandbox_url: str, make_client: MakeClient, capsys: pytest.CaptureFixture[str]
) -> None:
    quiet, _ = make_client(sandbox_url, cache=False)
    quiet.listings()
    assert capsys.readouterr().err == ""
    loud, _ = make_client(sandbox_url, cache=False, progress=True)
    loud.listings(max_results=120, details=True)
    err = capsys.readouterr().err
    assert "listings" in err and "details" in err


#: Waits shrunk for fault tests: a quarter of the answers are broken.
_FAST = RetryPolicy(
    max_retries=12,
    backoff_base=0.002,
    backoff_cap=0.01,
    retry_after_cap=0.02,
    retry_after_floor=0.005,
    deadline=60.0,
    budget_ratio=5.0,
)


def test_truncated_bodies_leave_details_and_sync_equal_to_a_clean_run(
    start_sandbox: Callable[..., RunningSandbox], make_client: MakeClient, http_client: httpx.Client
) -> None:
    """The fault-matrix cell "truncated body, details": bodies cut right after an inner ``}``
    (they still end like whole JSON) are retried, so a details load and two syncs (a full load,
    then the change feed after the clock moves) end equal to a fault-free run."""
    clean_sb = start_sandbox()
    faulty_sb = start_sandbox(faults=Faults(truncate_rate=0.25))
    clean, _ = make_client(clean_sb.url, retry=_FAST, cache=False)
    faulty, _ = make_client(faulty_sb.url, retry=_FAST, cache=False)

    expected = clean.listings(max_results=40, details=True)
    expected_media = clean.last_load.media
    got = faulty.listings(max_results=40, details=True)
    pdt.assert_frame_equal(got, expected)
    pdt.assert_frame_equal(faulty.last_load.media, expected_media)

    runs: dict[str, tuple[pd.DataFrame, pd.DataFrame]] = {}
    for name, sb in (("clean", clean_sb), ("faulty", faulty_sb)):
        client, _ = make_client(sb.url, retry=_FAST)
        client.sync_listings()
        http_client.post(f"{sb.url}/_sandbox/clock", json={"advance_days": 7}).raise_for_status()
        synced = client.sync_listings().sort_values("ListingId", ignore_index=True)
        history = client.listing_history()
        history = history.sort_values(["ListingId", "ChangeTimestamp"], ignore_index=True)
        runs[name] = (synced, history)
    assert len(runs["clean"][1]) > 0
    pdt.assert_frame_equal(runs["faulty"][0], runs["clean"][0])
    pdt.assert_frame_equal(runs["faulty"][1], runs["clean"][1])
    assert faulty_sb.admin.faults.truncated > 0


def test_details_fetched_in_batches_equal_one_batch(
    sandbox_url: str, make_client: MakeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Detail bodies are fetched and parsed ``REALTYFRAMES_DETAIL_BATCH`` at a time (memory): the
    frames, photos and quarantine do not depend on where the batches are cut."""
    whole, _ = make_client(sandbox_url, cache=False)
    expected = whole.listings(max_results=45, details=True)
    expected_info = whole.last_load
    monkeypatch.setenv("REALTYFRAMES_DETAIL_BATCH", "7")  # 45 = 6 batches of 7 and one of 3
    cut, _ = make_client(sandbox_url, cache=False)
    got = cut.listings(max_results=45, details=True)
    assert cut.last_load.requests == expected_info.requests == 1 + 45
    pdt.assert_frame_equal(got, expected)
    pdt.assert_frame_equal(cut.last_load.media, expected_info.media)
    pdt.assert_frame_equal(cut.last_load.quarantine, expected_info.quarantine)


def test_details_keep_search_rows_without_an_id_for_the_quarantine(
    start_sandbox: Callable[..., RunningSandbox], make_client: MakeClient
) -> None:
    """A search row without a ListingId cannot be looked up: it reaches the quarantine with its
    reason, next to the listings whose details were fetched (none lost)."""
    sb = start_sandbox(listings=400, faults=Faults(bad_records=0.15))
    client, _ = make_client(sb.url, cache=False)
    with pytest.warns(DataQualityWarning, match="quarantined"):
        frame = client.listings(details=True)
    info = client.last_load
    kinds = sb.admin.faults.bad_record_kinds
    assert kinds.get("null_listing_id", 0) > 0
    no_id = info.quarantine["ListingId"].isna()
    assert no_id.sum() == kinds["null_listing_id"]
    assert info.quarantine.loc[no_id, "_quarantine_reason"].str.contains("ListingId").all()
    assert len(frame) + info.quarantined == info.total
    pages = math.ceil(info.total / PAGE_SIZE)  # one detail request per listing with an id
    assert info.requests == pages + info.total - kinds["null_listing_id"]


def test_details_equal_the_whole_search_and_details_shaped_at_once(
    start_sandbox: Callable[..., RunningSandbox],
    make_client: MakeClient,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A details load keeps only the ids of the search pages and makes its frames from the
    details' Arrow columns once, at the end (#33: memory). Its frame, photos and quarantine
    equal those made the plain way: the whole search pages shaped, every detail fetched and
    shaped in one call, the search rows without an id added, all validated. Bad records in the
    search make some pages stay whole (a record without an id) next to reduced ones."""
    sb = start_sandbox(listings=3000, faults=Faults(bad_records=0.1))
    monkeypatch.setenv("REALTYFRAMES_DETAIL_BATCH", "60")  # several batches
    client, _ = make_client(sb.url)
    with pytest.warns(DataQualityWarning, match="quarantined"):
        got = client.listings(details=True)
    info = client.last_load
    assert sb.admin.faults.bad_record_kinds.get("null_listing_id", 0) > 0

    api = client.api
    pages = fetch_pages(api, "/v1/listings", {}, item_key="listings", progress=False).pages
    search, _ = listings_from_pages(pages)
    known = search["ListingId"].notna()
    ids = list(dict.fromkeys(search.loc[known, "ListingId"].astype(str)))
    bodies = api.get_many([(f"/v1/listings/{i}", None) for i in ids], raw=True)
    frame, media = listings_from_records(bodies)
    frame = pd.concat([frame, search.loc[~known]], ignore_index=True)
    with pytest.warns(DataQualityWarning):
        valid, quarantined = validate(frame, Listing)
    valid, quarantined = valid.reset_index(drop=True), quarantined.reset_index(drop=True)
    media = media.loc[media["ListingId"].isin(set(valid["ListingId"]))].reset_index(drop=True)
    assert len(got) > 200 and len(info.quarantine) > 0 and len(info.media) > len(got)
    pdt.assert_frame_equal(got, valid)
    pdt.assert_frame_equal(info.media, media)
    pdt.assert_frame_equal(info.quarantine, quarantined)
    cached = client.listings(details=True)  # the cache holds the same
    pdt.assert_frame_equal(cached, valid)
