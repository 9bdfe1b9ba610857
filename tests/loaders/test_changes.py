"""``client.listing_changes``: ids chunked at 100 per request, each chunk paged, one row per change."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import httpx
import pandas as pd
import pandas.testing as pdt
import pytest

from realtyframes import Client
from realtyframes.errors import QueryError
from realtyframes.schemas import ListingChange, target_dtypes

MakeClient = Callable[..., tuple[Client, Any]]
SINCE = "2025-06-01T00:00:00Z"


def _server_total(http: httpx.Client, url: str, ids: list[str], **params: str) -> int:
    answer = http.get(
        f"{url}/v1/listings/changes",
        params={"Since": SINCE, "ListingIds": ",".join(ids), "Limit": "1", **params},
    )
    assert answer.status_code == 200, answer.text
    return int(answer.json()["total"])


def test_more_than_100_ids_are_chunked_and_paged(
    sandbox_url: str, http_client: httpx.Client, make_client: MakeClient
) -> None:
    client, log = make_client(sandbox_url)
    ids = client.listings(Status="Closed")["ListingId"].tolist()[:250]
    assert len(ids) == 250
    log.urls.clear()
    changes = client.listing_changes(ids, SINCE)
    info = client.last_load
    chunks = [ids[i : i + 100] for i in range(0, 250, 100)]
    totals = [_server_total(http_client, sandbox_url, chunk) for chunk in chunks]
    assert len(changes) == sum(totals) == info.total == info.rows
    assert info.requests == log.count == sum(math.ceil(t / 50) for t in totals) > len(chunks)
    sent = [u.params["ListingIds"].split(",") for u in log.urls]
    assert max(map(len, sent)) == 100 and {i for s in sent for i in s} == set(ids)
    assert not changes.duplicated(["ListingId", "ChangeType", "ChangeTimestamp"]).any()
    assert set(changes["ListingId"]) <= set(ids)
    assert (changes["ChangeTimestamp"] > pd.Timestamp(SINCE)).all()
    for column, dtype in target_dtypes(ListingChange).items():
        assert changes[column].dtype == dtype, column
    prices = changes[changes["ChangeType"] == "price_change"]
    assert prices["ListPrice"].notna().all() and prices["PreviousListPrice"].notna().all()

    again = client.listing_changes(list(reversed(ids)), SINCE)  # same set of ids: same entry
    assert client.last_load.from_cache and log.count == info.requests
    pdt.assert_frame_equal(again, changes)

    only = client.listing_changes(pd.Series(ids), SINCE, change_type="price_change")
    assert set(only["ChangeType"]) == {"price_change"}
    assert len(only) == sum(
        _server_total(http_client, sandbox_url, c, ChangeType="price_change") for c in chunks
    )


def test_bad_change_queries_fail_before_any_request(
    sandbox_url: str, make_client: MakeClient
) -> None:
    client, log = make_client(sandbox_url)
    with pytest.raises(QueryError, match="Since"):
        client.listing_changes(["A1"], "2025-06-01T00:00:00")  # no time zone
    with pytest.raises(QueryError, match="ChangeType"):
        client.listing_changes(["A1"], SINCE, change_type="price")
    with pytest.raises(QueryError, match="ListingIds"):
        client.listing_changes([], SINCE)
    assert log.count == 0
