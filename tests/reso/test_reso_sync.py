"""``Client.reso(...).sync_listings()`` and ``listing_history()`` against the platform source's
on the same sandbox market: the first sync and later syncs equal cell for cell; the watermark
loses nothing; deletes become removals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest

import realtyframes as rf
from realtyframes.reso import HISTORY_SOURCE
from realtyframes.reso._sync import merge_versions
from reso_clients import pair

STATUSES = ("Active", "Active Under Contract", "Pending", "Closed")


def _differing_cells(a: pd.DataFrame, b: pd.DataFrame) -> int:
    assert list(a.columns) == list(b.columns) and (a.dtypes == b.dtypes).all()
    assert list(a["ListingId"]) == list(b["ListingId"])
    same = (a == b) | (a.isna() & b.isna())
    return int((~same).to_numpy().sum())


def _advance(url: str, days: float) -> None:
    httpx.post(f"{url}/_sandbox/clock", json={"advance_days": days}).raise_for_status()


def _truth(client: rf.Client, **scope: Any) -> pd.DataFrame:
    """The market at the server's clock, read fresh from the platform's search."""
    parts = [client.listings(Status=s, refresh=True, **scope) for s in STATUSES]
    return pd.concat(parts).set_index("ListingId")


def _check_equal_first_sync(url: str, tmp_path: Path, **scope: Any) -> None:
    platform, source = pair(url, tmp_path)
    expected, got = platform.sync_listings(**scope), source.sync_listings(**scope)
    assert len(expected) > 0
    assert _differing_cells(got, expected) == 0
    pd.testing.assert_frame_equal(got, expected)
    history, reso_history = platform.listing_history(**scope), source.listing_history(**scope)
    assert len(history) > 0
    assert set(reso_history[HISTORY_SOURCE]) == {"HistoryTransactional"}
    pd.testing.assert_frame_equal(reso_history.drop(columns=HISTORY_SOURCE), history)
    assert got.attrs["source"] == "reso:generic"


def test_first_sync_and_history_equal_the_platform_source(
    start_sandbox: Any, tmp_path: Path
) -> None:
    sb = start_sandbox()
    _check_equal_first_sync(sb.url, tmp_path)
    _check_equal_first_sync(sb.url, tmp_path / "scoped", City="Miami Beach")


@pytest.mark.slow
def test_first_sync_of_20000_listings_equals_the_platform_source(
    start_sandbox: Any, tmp_path: Path
) -> None:
    sb = start_sandbox(listings=20_000, history_years=3)
    _check_equal_first_sync(sb.url, tmp_path)


def test_later_syncs_equal_the_platform_source(start_sandbox: Any, tmp_path: Path) -> None:
    """After each clock move both markets hold the same listings with the same values, cell for
    cell with DaysOnMarket (the server's value, checked against a fresh search), the histories
    are equal, and each source's sync state counts its syncs."""
    sb = start_sandbox()
    platform, source = pair(sb.url, tmp_path)
    platform.sync_listings(), source.sync_listings()
    for syncs, days in enumerate((3, 30), start=2):
        _advance(sb.url, days)
        expected, got = platform.sync_listings(), source.sync_listings()
        assert source.last_load is not None and source.last_load.requests >= 2
        assert _differing_cells(got, expected) == 0
        truth = _truth(platform).loc[got["ListingId"], "DaysOnMarket"].to_numpy()
        assert (got["DaysOnMarket"].to_numpy() == truth).all()
        history = source.listing_history()
        pd.testing.assert_frame_equal(
            history.drop(columns=HISTORY_SOURCE), platform.listing_history()
        )
        for client in (platform, source):
            state = client.sync_state()
            assert state is not None and state["syncs"] == syncs


def test_synthesised_history_says_so_and_follows_the_versions(
    start_sandbox: Any, tmp_path: Path
) -> None:
    sb = start_sandbox()
    platform, source = pair(sb.url, tmp_path, history="synthesised")
    before = source.sync_listings()
    assert len(source.listing_history()) == 0  # nothing to compare a first version with
    platform.sync_listings()
    _advance(sb.url, 14)
    after = source.sync_listings()
    platform.sync_listings()
    synthesised = source.listing_history()
    assert len(synthesised) > 0 and set(synthesised[HISTORY_SOURCE]) == {"synthesised"}
    old, new = before.set_index("ListingId"), after.set_index("ListingId")
    for row in synthesised.itertuples(index=False):
        if row.ChangeType == "price_change":
            assert (row.PreviousListPrice, row.ListPrice) == (
                old.at[row.ListingId, "ListPrice"],
                new.at[row.ListingId, "ListPrice"],
            )
        else:
            assert (row.PreviousStatus, row.StandardStatus) == (
                old.at[row.ListingId, "StandardStatus"],
                new.at[row.ListingId, "StandardStatus"],
            )
    # every synthesised change is the net effect of the feed's changes of that listing
    feed = platform.listing_history()
    since = before["ModificationTimestamp"].max()
    moved = set(feed.loc[feed["ChangeTimestamp"] > since, "ListingId"])
    assert set(synthesised["ListingId"]) <= moved


def test_records_sharing_one_timestamp_across_pages_are_all_kept(
    start_sandbox: Any, tmp_path: Path
) -> None:
    """5,000 records with one ModificationTimestamp over pages of 1,000: none lost, none twice,
    in the first sync and after a later one (``ge`` re-reads the block, the key dedupes)."""
    sb = start_sandbox(listings=6_000, reso_shared_timestamps=5_000, reso_vendor="trestle")
    platform, source = pair(sb.url, tmp_path, vendor="trestle", page_size=1000)
    scope = {"PropertyType": "Residential"}
    keys = httpx.get(
        f"{sb.url}/reso/odata/Property",
        params={"$filter": "PropertyType eq 'Residential'", "$count": "true", "$top": "1"},
    ).json()["@odata.count"]
    market = source.sync_listings(**scope)
    assert market["ListingId"].is_unique and len(market) == keys
    shared = market["ModificationTimestamp"].value_counts().iloc[0]
    assert shared >= 1000  # the block spans pages
    _advance(sb.url, 1)
    again = source.sync_listings(**scope)
    assert again["ListingId"].is_unique
    assert set(again["ListingId"]) == set(_truth(platform, **scope).index)


def test_deleted_records_leave_the_market_as_removals(start_sandbox: Any, tmp_path: Path) -> None:
    sb = start_sandbox()
    _, source = pair(sb.url, tmp_path)
    market = source.sync_listings()
    history = source.listing_history()
    gone = market["ListingId"].iloc[:3].tolist()
    hidden = {lid: "2026-07-01T00:00:00Z" for lid in gone}
    merged, new_history, removed = merge_versions(
        market, history, market.iloc[:0], hidden, history.iloc[:0]
    )
    assert removed == 3 and not set(gone) & set(merged["ListingId"])
    assert len(merged) == len(market) - 3
    removals = new_history[new_history[HISTORY_SOURCE] == "removed: MlgCanView false"]
    assert sorted(removals["ListingId"]) == sorted(gone)
    assert removals["StandardStatus"].isna().all()
    assert list(removals["PreviousStatus"].astype(str)) == list(
        market.set_index("ListingId").loc[removals["ListingId"], "StandardStatus"].astype(str)
    )


def test_mlsgrid_sync_never_holds_a_record_it_may_not_show(
    start_sandbox: Any, tmp_path: Path
) -> None:
    sb = start_sandbox(reso_vendor="mlsgrid", reso_hidden_share=0.05)
    platform, source = pair(sb.url, tmp_path, vendor="mlsgrid", originating_system="rfsandbox")
    query = {
        "$filter": "OriginatingSystemName eq 'rfsandbox' and MlgCanView eq false",
        "$top": "5000",
        "$select": "ListingKey",
    }
    body = httpx.get(sb.url + "/reso/odata/Property", params=query).json()
    hidden = {r["ListingKey"] for r in body["value"]}
    expected = platform.sync_listings()
    got = source.sync_listings()
    assert hidden & set(expected["ListingId"]) and not hidden & set(got["ListingId"])
    kept = expected[~expected["ListingId"].isin(hidden)].reset_index(drop=True)
    assert _differing_cells(got, kept) == 0
    _advance(sb.url, 7)
    assert not hidden & set(source.sync_listings()["ListingId"])
