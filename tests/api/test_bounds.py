"""Bounds and types refused before any request (issue #13): absurd numbers, a ``Since`` in the
future, too much concurrency, ``None`` as a filter, a secret with a line break."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from realtyframes import Client
from realtyframes.api import ApiClient
from realtyframes.api._constants import MAX_CONCURRENCY
from realtyframes.errors import QueryError
from realtyframes.loaders import validate_listing_changes, validate_listing_search


def _counting_client(tmp_path: Path, **options: object) -> tuple[Client, list[httpx.Request]]:
    """A client on a transport that records requests (none may be sent)."""
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(500)

    client = Client(
        "http://api.test",
        api_key="k-1",
        transport=httpx.MockTransport(handler),
        cache_dir=tmp_path,
        progress=False,
        **options,  # type: ignore[arg-type]
    )
    return client, sent


@pytest.mark.parametrize(
    ("params", "param"),
    [
        ({"MinListPrice": 1e30}, "MinListPrice"),
        ({"MaxAssociationFee": 10**12}, "MaxAssociationFee"),
        ({"MinLivingArea": 5e10}, "MinLivingArea"),
        ({"MinBedroomsTotal": 10**9}, "MinBedroomsTotal"),
    ],
)
def test_absurd_numbers_are_refused(params: dict[str, object], param: str) -> None:
    with pytest.raises(QueryError) as caught:
        validate_listing_search(params)
    assert caught.value.param == param and "too large" in str(caught.value)
    assert "10000000000" in str(caught.value) or "10000" in str(caught.value)


def test_a_real_price_still_passes() -> None:
    assert validate_listing_search({"MinListPrice": 250_000_000})["MinListPrice"] == "250000000"


def test_since_more_than_a_day_ahead_is_refused() -> None:
    now = datetime.now(UTC)
    ahead = now + timedelta(days=2)
    with pytest.raises(QueryError, match="more than a day in the future") as caught:
        validate_listing_search({"Since": ahead})
    assert caught.value.param == "Since"
    with pytest.raises(QueryError, match="future"):
        validate_listing_changes({"Since": ahead, "ListingIds": ["A1"]})
    skewed = (now + timedelta(hours=12)).replace(microsecond=0)  # clock skew: allowed
    assert validate_listing_search({"Since": skewed})["Since"].startswith(f"{skewed:%Y-%m-%d}")


def test_max_concurrency_has_a_documented_cap() -> None:
    with pytest.raises(QueryError, match=f"from 1 to {MAX_CONCURRENCY}") as caught:
        ApiClient("http://api.test", max_concurrency=MAX_CONCURRENCY + 1)
    assert caught.value.param == "max_concurrency"
    ApiClient("http://api.test", max_concurrency=MAX_CONCURRENCY).close()


def test_none_as_a_filter_is_refused_not_dropped(tmp_path: Path) -> None:
    client, sent = _counting_client(tmp_path)
    with client:
        with pytest.raises(QueryError, match="None is not a value") as caught:
            client.listings(PropertyType=None)
        assert caught.value.param == "PropertyType"
        with pytest.raises(QueryError, match="None") as caught:
            client.sync_listings(City=None)
        assert caught.value.param == "City"
        with pytest.raises(QueryError, match="None") as caught:
            client.analytics(None)  # type: ignore[arg-type]
        assert caught.value.param == "period"
        with pytest.raises(QueryError, match="None"):
            client.analytics("7d", Device=None)
    assert sent == []


@pytest.mark.parametrize("key", ["abc\ndef", "abc\r\n", " abc"])
def test_a_secret_with_a_line_break_is_a_query_error_that_hides_it(key: str) -> None:
    with pytest.raises(QueryError) as caught:
        ApiClient("http://api.test", api_key=key)
    assert caught.value.param == "api_key"
    assert "abc" not in str(caught.value) and "abc" not in repr(caught.value)
