"""Deprecation headers in their three forms: one ApiDeprecationWarning per operation.

The sandbox sends only the ``true`` form (tested in test_auth_and_errors.py); the ``@epoch`` and
HTTP-date forms are scripted here.
"""

from __future__ import annotations

import threading
import warnings
from datetime import UTC, datetime

import httpx
import pytest

from realtyframes.api import ApiClient
from realtyframes.api._deprecation import parse_deprecation
from realtyframes.errors import ApiDeprecationWarning

SUNSET = "Fri, 31 Dec 2027 23:59:59 GMT"
LINK = '<https://docs.example/#deprecation>; rel="deprecation"; type="text/html"'


@pytest.mark.parametrize(
    ("value", "since"),
    [
        ("true", None),
        ("?1", None),
        ("@1688169599", datetime(2023, 6, 30, 23, 59, 59, tzinfo=UTC)),
        ("Sun, 30 Jun 2024 23:59:59 GMT", datetime(2024, 6, 30, 23, 59, 59, tzinfo=UTC)),
        ("@not-a-number", None),
    ],
)
def test_deprecation_forms(value: str, since: datetime | None) -> None:
    notice = parse_deprecation({"Deprecation": value, "Sunset": SUNSET, "Link": LINK})
    assert notice is not None
    assert notice.since == since
    assert notice.sunset == datetime(2027, 12, 31, 23, 59, 59, tzinfo=UTC)
    assert notice.link == "https://docs.example/#deprecation"
    message = notice.message("GET /api/me")
    assert "sunset 2027-12-31" in message and "https://docs.example/#deprecation" in message


def test_not_deprecated_and_link_variants() -> None:
    assert parse_deprecation({"Deprecation": "false"}) is None
    assert parse_deprecation({"Sunset": SUNSET}) is None
    notice = parse_deprecation(
        {
            "Deprecation": "true",
            "Link": '<https://a.example/x,y>; rel="next", <https://docs.example/dep>; rel=deprecation',
        }
    )
    assert (
        notice is not None and notice.link == "https://docs.example/dep" and notice.sunset is None
    )
    assert "no sunset date" in notice.message("GET /x")
    multi = parse_deprecation(
        {"Deprecation": "true", "Link": '<https://d.example/>; rel="alternate deprecation"'}
    )
    assert multi is not None and multi.link == "https://d.example/"


class Deprecated:
    """A fake server whose legacy paths answer with deprecation headers (``@epoch`` form)."""

    def __init__(self) -> None:
        self.count = 0
        self.lock = threading.Lock()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        with self.lock:
            self.count += 1
        headers = {}
        if request.url.path.startswith("/api/"):
            headers = {"Deprecation": "@1688169599", "Sunset": SUNSET, "Link": LINK}
        return httpx.Response(200, json={"path": request.url.path}, headers=headers)


def test_one_warning_per_operation_from_the_calling_thread() -> None:
    server = Deprecated()
    with ApiClient(
        "http://api.test", transport=httpx.MockTransport(server), max_concurrency=4
    ) as api:
        with pytest.warns(ApiDeprecationWarning) as caught:
            api.get_json("/api/me", host="legacy")
            api.get_json("/api/me", host="legacy")
            api.get_many([("/api/getContacts", None)] * 6, host="legacy")
            api.get_json("/v1/me")  # not deprecated
        messages = [str(w.message) for w in caught]
        assert len(messages) == 2
        assert messages[0] == (
            "GET /api/me (legacy host) is deprecated since 2023-06-30; sunset 2027-12-31; "
            "see https://docs.example/#deprecation"
        )
        assert messages[1].startswith("GET /api/getContacts (legacy host) is deprecated")
        assert all(w.filename == __file__ for w in caught)  # points at the caller
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            api.with_options(timeout=3.0).get_json("/api/me", host="legacy")  # copies share it
    with (
        ApiClient("http://api.test", transport=httpx.MockTransport(server)) as other,
        pytest.warns(ApiDeprecationWarning),
    ):
        other.get_json("/api/me", host="legacy")  # a new client warns again
    assert server.count == 11
