"""Messages a new user meets first (issue #13): each says what is wrong and what to do."""

from __future__ import annotations

import pickle

import pytest

from realtyframes import Client
from realtyframes.errors import InvalidTokenError, QueryError
from realtyframes.loaders import validate_listing_search


def test_no_credentials_on_a_protected_server_says_what_to_set(protected_sandbox_url: str) -> None:
    with (
        Client(protected_sandbox_url, cache=False, progress=False) as client,
        pytest.raises(InvalidTokenError) as caught,
    ):
        client.me()
    text = str(caught.value)
    assert "no credentials configured" in text and "REALTYFRAMES_API_KEY" in text
    assert caught.value.status == 401 and caught.value.code == "invalid_token"


def test_a_wrong_api_key_is_rejected_by_name(protected_sandbox_url: str) -> None:
    key = "rfk_wrong_key_123"
    with (
        Client(protected_sandbox_url, api_key=key, cache=False, progress=False) as client,
        pytest.raises(InvalidTokenError) as caught,
    ):
        client.me()
    assert "API key rejected" in str(caught.value)
    assert key not in str(caught.value) and key not in repr(caught.value)


def test_a_wrong_token_keeps_the_servers_words(protected_sandbox_url: str) -> None:
    with (
        Client(protected_sandbox_url, token="not-a-token", cache=False, progress=False) as client,
        pytest.raises(InvalidTokenError) as caught,
    ):
        client.me()
    assert "API key" not in str(caught.value) and "no credentials" not in str(caught.value)


@pytest.mark.parametrize(
    ("given", "subtype"),
    [
        ("Condo", "Condominium"),
        ("townhouse", "Townhouse"),
        ("Single Family", "Single Family Residence"),
    ],
)
def test_a_subtype_given_as_property_type_suggests_subtypes(given: str, subtype: str) -> None:
    with pytest.raises(QueryError) as caught:
        validate_listing_search({"PropertyType": given})
    assert f"Subtypes={subtype!r}" in str(caught.value)
    assert caught.value.param == "PropertyType"


def test_a_misspelt_parameter_is_one_short_line_with_the_names_on_request() -> None:
    with pytest.raises(QueryError) as caught:
        validate_listing_search({"city": "Miami"})
    text = str(caught.value)
    assert text == "city: unknown parameter for listings; did you mean 'City'?"
    assert caught.value.allowed is not None and "MinListPrice" in caught.value.allowed
    again = pickle.loads(pickle.dumps(caught.value))
    assert str(again) == text and again.allowed == caught.value.allowed
    with pytest.raises(QueryError, match=r"its names are in \.allowed$"):
        validate_listing_search({"zzzzzz": 1})
