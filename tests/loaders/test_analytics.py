"""``client.analytics``: every member a typed frame, filters validated, cached as Parquet."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pandas.testing as pdt
import pytest

from realtyframes import Client
from realtyframes.errors import QueryError
from realtyframes.schemas import ANALYTICS_MODELS, Analytics, target_dtypes

MakeClient = Callable[..., tuple[Client, Any]]


def test_analytics_frames_and_cache(
    sandbox_url: str, http_client: httpx.Client, make_client: MakeClient
) -> None:
    client, log = make_client(sandbox_url)
    result = client.analytics("7d", Device="mobile")
    raw = http_client.get(
        f"{sandbox_url}/v1/analytics", params={"Period": "7d", "Device": "mobile"}
    )
    body = raw.json()
    assert isinstance(result, Analytics) and result.period == body["period"] == "7d"
    assert len(result.overview) == 1 and log.count == 1
    assert int(result.overview["visitors"][0]) == body["overview"]["visitors"]
    assert set(result.devices["name"]) == {"mobile"}
    for name, frame in result.frames().items():
        for column, dtype in target_dtypes(ANALYTICS_MODELS[name]).items():
            assert frame[column].dtype == dtype, (name, column)
    assert len(result.pages) == len(body["pages"])
    assert set(result.utm["dimension"]) <= {"source", "medium", "campaign"}

    cached = client.analytics("7d", Device="mobile")
    assert log.count == 1 and client.last_load.from_cache
    for name, frame in result.frames().items():
        pdt.assert_frame_equal(getattr(cached, name), frame)
    assert cached.period == "7d"
    client.analytics("30d")
    assert log.count == 2


def test_bad_analytics_filters(sandbox_url: str, make_client: MakeClient) -> None:
    client, log = make_client(sandbox_url)
    with pytest.raises(QueryError, match="Period"):
        client.analytics("2w")
    with pytest.raises(QueryError, match="did you mean 'Device'"):
        client.analytics(device="mobile")
    with pytest.raises(QueryError, match="Device"):
        client.analytics(Device="phone")
    assert log.count == 0
