"""``rf.Client.reso``: the platform's listings frame from the sandbox's RESO face, through the
client's own Data Dictionary map; bad input refused before any request; vendor paging rules."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest

import realtyframes as rf
from realtyframes.errors import ResponseMismatchError
from reso_clients import OPEN, pair

#: A closed port: a request there would be a ConnectError, so a QueryError proves none was sent.
NOWHERE = "http://127.0.0.1:9/reso/odata"

SEARCHES: list[dict[str, Any]] = [
    {},
    {"Status": "Closed"},
    {"Status": "Pending", "City": "Miami Beach"},
    {"MinListPrice": 500_000, "MaxBedroomsTotal": 3},
    {"PropertyType": "Residential Lease", "Status": "Active", "Sort": "-listdate"},
    {"Subtypes": ["Condominium", "Townhouse"], "Waterfront": True, "MinYearBuilt": 1990},
    {"Status": "Closed", "SeniorCommunity": "exclude", "MaxDaysOnMarket": 60, "Sort": "beds"},
]


@pytest.mark.parametrize("filters", SEARCHES)
def test_the_same_frame_as_the_platform_source(
    sandbox_url: str, tmp_path: Path, filters: dict[str, Any]
) -> None:
    platform, source = pair(sandbox_url, tmp_path)
    expected = platform.listings(**filters)
    got = source.listings(**filters)
    assert len(expected) > 0
    pd.testing.assert_frame_equal(got, expected)  # columns, dtypes, values and row order
    assert got.attrs["source"] == "reso:generic" and source.source == "reso:generic"
    assert platform.source == "platform"


def test_cached_like_the_platform_source(sandbox_url: str, tmp_path: Path) -> None:
    _, source = pair(sandbox_url, tmp_path)
    first = source.listings(Status="Closed", City="Miami")
    assert source.last_load is not None and source.last_load.requests >= 1
    again = source.listings(Status="Closed", City="Miami")
    assert source.last_load.from_cache and source.last_load.requests == 0
    pd.testing.assert_frame_equal(again, first)


def test_raw_filter_text_and_a_data_dictionary_field(sandbox_url: str, tmp_path: Path) -> None:
    platform, source = pair(sandbox_url, tmp_path)
    closed = platform.listings(Status="Closed")
    agent = str(closed["ListAgentMlsId"].iloc[0])
    by_field = source.listings(Status="Closed", ListAgentKey=agent)
    assert set(by_field["ListAgentMlsId"]) == {agent}
    assert len(by_field) == (closed["ListAgentMlsId"] == agent).sum()
    raw = source.listings(Status="Closed", filter="ClosePrice ge 1000000 or BedroomsTotal eq 2")
    want = closed[(closed["ClosePrice"] >= 1_000_000) | (closed["BedroomsTotal"] == 2)]
    assert sorted(raw["ListingId"]) == sorted(want["ListingId"]) and len(raw) > 0


@pytest.mark.parametrize(
    ("filters", "near"),
    [({"Citty": "Miami"}, "City"), ({"filter": "ListPrise gt 5"}, "ListPrice")],
)
def test_an_unknown_field_names_the_close_matches(
    sandbox_url: str, tmp_path: Path, filters: dict[str, Any], near: str
) -> None:
    _, source = pair(sandbox_url, tmp_path)
    with pytest.raises(rf.QueryError, match=f"did you mean {near}"):
        source.listings(**filters)


def test_a_platform_filter_without_a_dd_field_is_refused(tmp_path: Path) -> None:
    source = rf.Client.reso(NOWHERE, token="reso-token", cache_dir=tmp_path)
    OPEN.append(source)
    with pytest.raises(rf.QueryError, match="Penthouse: has no RESO Data Dictionary"):
        source.listings(Penthouse=True)
    with pytest.raises(rf.QueryError, match="MinListPrice"):
        source.listings(MinListPrice=-5)  # the platform's own checks
    with pytest.raises(rf.QueryError, match="details"):
        source.listings(details=True)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"vendor": "remax", "token": "t"}, "vendor: unknown vendor 'remax'; allowed: generic"),
        ({"vendor": "mlsgrid", "token": "t"}, "originating_system: required by vendor 'mlsgrid'"),
        ({"vendor": "trestle", "token": "t", "page_size": 1001}, "page_size: 1001 is above"),
        ({"vendor": "bridge", "token": "t", "page_size": 500}, "at most 200"),
        ({}, "credentials missing"),
        ({"client_id": "c", "token_url": "http://127.0.0.1:9/t"}, "client_secret: credentials"),
    ],
)
def test_bad_input_is_one_error_before_any_request(
    tmp_path: Path, arguments: dict[str, Any], message: str
) -> None:
    with pytest.raises(rf.QueryError, match=message):
        rf.Client.reso(NOWHERE, cache_dir=tmp_path, **arguments)


def test_trestle_pages_by_top_and_follows_next_links(start_sandbox: Any, tmp_path: Path) -> None:
    sb = start_sandbox(reso_vendor="trestle")
    platform, source = pair(sb.url, tmp_path, vendor="trestle", page_size=7)
    expected = platform.listings(Status="Closed")
    got = source.listings(Status="Closed")
    pd.testing.assert_frame_equal(got, expected)
    assert source.last_load is not None
    assert source.last_load.requests == math.ceil(len(expected) / 7) > 1


def test_bridge_pages_by_prefer_header(start_sandbox: Any, tmp_path: Path) -> None:
    sb = start_sandbox(reso_vendor="bridge")
    platform, source = pair(sb.url, tmp_path, vendor="bridge", page_size=20)
    expected = platform.listings(Status="Closed")
    pd.testing.assert_frame_equal(source.listings(Status="Closed"), expected)
    assert source.last_load is not None
    assert source.last_load.requests == math.ceil(len(expected) / 20) > 1


def test_bridge_top_meaning_the_collection_is_a_mismatch_not_a_short_load(
    start_sandbox: Any, tmp_path: Path
) -> None:
    """A client that pages Bridge by ``$top`` (its rule before 2025-07-29) gets one page of
    ``$top`` and no next link: a typed error, not a frame short of the server's count."""
    sb = start_sandbox(reso_vendor="bridge")
    _, source = pair(sb.url, tmp_path, vendor="spark", page_size=25)
    with pytest.raises(ResponseMismatchError, match="rows") as caught:
        source.listings(Status="Closed")
    assert caught.value.got == 25 and caught.value.asked > 25


def test_mlsgrid_leaves_out_records_it_may_not_show(start_sandbox: Any, tmp_path: Path) -> None:
    sb = start_sandbox(reso_vendor="mlsgrid", reso_hidden_share=0.1)
    platform, source = pair(sb.url, tmp_path, vendor="mlsgrid", originating_system="rfsandbox")
    hidden_query = {
        "$filter": "OriginatingSystemName eq 'rfsandbox' and MlgCanView eq false",
        "$top": "5000",
        "$select": "ListingKey",
    }
    hidden = {
        r["ListingKey"]
        for r in httpx.get(sb.url + "/reso/odata/Property", params=hidden_query).json()["value"]
    }
    expected = platform.listings(Status="Closed")
    got = source.listings(Status="Closed")
    assert hidden & set(expected["ListingId"]) and not hidden & set(got["ListingId"])
    kept = expected[~expected["ListingId"].isin(hidden)].reset_index(drop=True)
    pd.testing.assert_frame_equal(got, kept)


def test_client_credentials_refused_by_the_token_endpoint_is_an_oauth_error(
    sandbox_url: str, tmp_path: Path
) -> None:
    """The sandbox's token endpoint grants authorization codes only: the client credentials
    grant is refused there, and the refusal is one OAuthError (no secret in it)."""
    with pytest.raises(rf.OAuthError, match="refused: HTTP 400") as caught:
        rf.Client.reso(
            sandbox_url + "/reso/odata",
            client_id="mls-client",
            client_secret="mls-client-secret",
            token_url=sandbox_url + "/api/oauth/token",
            cache_dir=tmp_path,
        )
    assert "mls-client-secret" not in str(caught.value)


def test_reso_fields_adds_the_buyer_side_after_the_platform_columns(
    sandbox_url: str, tmp_path: Path
) -> None:
    platform, source = pair(sandbox_url, tmp_path)
    expected = platform.listings(Status="Closed")
    got = source.listings(Status="Closed", reso_fields=True)
    pd.testing.assert_frame_equal(got[list(expected.columns)], expected)
    added = [c for c in got.columns if c not in expected.columns]
    assert {"BuyerAgentMlsId", "BuyerOfficeName", "OriginalListPrice", "ListingKey"} <= set(added)
    assert got["BuyerAgentMlsId"].notna().all() and got["BuyerOfficeName"].notna().all()
    assert (got["ListingKey"] == got["ListingId"]).all()
    assert str(got["OnMarketDate"].dtype) == "datetime64[us, UTC]"
    assert (got["OriginalListPrice"] > 0).all()


def test_a_copy_with_other_options_syncs_over_reso_into_its_own_cache(
    sandbox_url: str, tmp_path: Path
) -> None:
    # with_options once dropped the RESO sync (the copy ran the platform's sync on the RESO URL:
    # a 404) or kept the original's (its market went to the original's cache)
    _, source = pair(sandbox_url, tmp_path / "first")
    copy = source.with_options(cache_dir=tmp_path / "second", timeout=20.0)
    market = copy.sync_listings(City="Miami")
    assert len(market) > 0 and market.attrs["source"] == "reso:generic"
    assert copy.sync_state(City="Miami") is not None
    assert source.sync_state(City="Miami") is None
    assert copy.plan_sync(City="Miami").requests > 0


def test_a_copy_sends_the_reso_requests_with_its_own_options(
    sandbox_url: str, tmp_path: Path
) -> None:
    # the copy's RESO requests went out with the original's options (its RESO source kept the
    # original's HTTP layer)
    accepts: list[str] = []
    source = rf.Client.reso(
        sandbox_url + "/reso/odata", token="reso-token", cache_dir=tmp_path, progress=False,
        event_hooks={"request": [lambda request: accepts.append(request.headers["Accept"])]},
    )  # fmt: skip
    OPEN.append(source)
    copy = source.with_options(error_format="problem", cache=False)
    assert len(copy.listings(City="Miami")) > 0
    searches = [a for a in accepts if a != "application/xml"]  # $metadata asks for XML
    assert searches and all(a.startswith("application/problem+json") for a in searches)
