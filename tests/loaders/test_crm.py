"""Contacts, one contact, activity, and the legacy contacts list (its 404 is an empty frame)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import httpx
import pandas.testing as pdt
import pytest

from realtyframes import Client
from realtyframes.errors import ApiDeprecationWarning, QueryError
from realtyframes.sandbox import DEMO
from realtyframes.schemas import Contact, ContactActivity, target_dtypes

MakeClient = Callable[..., tuple[Client, Any]]


def test_contacts_contact_and_activity(
    sandbox_url: str, http_client: httpx.Client, make_client: MakeClient
) -> None:
    client, log = make_client(sandbox_url)
    total = http_client.get(f"{sandbox_url}/v1/contacts", params={"Limit": "1"}).json()["total"]
    contacts = client.contacts()
    assert len(contacts) == total == client.last_load.total and contacts["id"].is_unique
    assert client.last_load.requests == math.ceil(total / 50)
    for column, dtype in target_dtypes(Contact).items():
        assert contacts[column].dtype == dtype, column
    assert str(contacts["createdAt"].dtype) == "datetime64[us, UTC]"

    first = contacts["id"].iloc[0]
    one = client.contact(first)
    assert len(one) == 1 and one["id"][0] == first
    pdt.assert_frame_equal(one, contacts.iloc[:1].reset_index(drop=True), check_like=True)

    activity = client.contact_activity(first)
    raw = http_client.get(f"{sandbox_url}/v1/contacts/{first}/activity").json()
    assert len(activity) == len(raw["activity"]) and set(activity["contactId"]) <= {first}
    for column, dtype in target_dtypes(ContactActivity).items():
        assert activity[column].dtype == dtype, column

    count = log.count
    pdt.assert_frame_equal(client.contacts(), contacts)
    pdt.assert_frame_equal(client.contact_activity(first), activity)
    assert log.count == count  # both from the cache


def test_legacy_contacts_and_its_404(protected_sandbox_url: str, make_client: MakeClient) -> None:
    plain, _ = make_client(protected_sandbox_url)
    with pytest.raises(QueryError, match="api_key"):
        plain.legacy_contacts()
    client, log = make_client(protected_sandbox_url, api_key=DEMO.api_key)
    with pytest.warns(ApiDeprecationWarning):
        full = client.legacy_contacts()
    assert len(full) > 0 and full["id"].is_unique and log.count == 1
    empty_client, empty_log = make_client(protected_sandbox_url, api_key=DEMO.empty_api_key)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ApiDeprecationWarning)
        empty = empty_client.legacy_contacts()  # the server answers 404 "no contacts"
    assert empty.empty and empty_log.count == 1
    assert list(empty.columns) == list(full.columns)
    assert (empty.dtypes == full.dtypes).all()
    assert empty_client.legacy_contacts().empty and empty_log.count == 1  # cached
