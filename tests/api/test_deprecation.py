"""Deprecation headers in their three forms: one ApiDeprecationWarning per operation.

The once-per-operation rule is tested against the sandbox's legacy routes, which send the ``true``
form with Sunset and Link; the ``@epoch`` and HTTP-date forms, which the sandbox never sends, are
parsed here and the ``@epoch`` form is scripted once through the client.
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
from realtyframes.sandbox import DEMO

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


class Counted:
    """An httpx request hook counting the requests that reach the wire, by path."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, request: httpx.Request) -> None:
        with self.lock:
            self.paths.append(request.url.path)


def test_one_warning_per_operation_from_the_calling_thread(protected_sandbox_url: str) -> None:
    url = protected_sandbox_url
    sent = Counted()
    hooks = {"request": [sent]}
    with ApiClient(url, api_key=DEMO.api_key, max_concurrency=4, event_hooks=hooks) as api:
        with pytest.warns(ApiDeprecationWarning) as caught:
            assert api.get_json("/api/me", host="legacy")["domain"] == DEMO.domain
            api.get_json("/api/me", host="legacy")
            pages = api.get_many([("/api/getContacts", None)] * 6, host="legacy")
            api.get_json("/v1/me")  # not deprecated
        assert len(pages) == 6 and all(isinstance(p, list) and p for p in pages)
        messages = [str(w.message) for w in caught]
        assert len(messages) == 2
        assert messages[0] == (
            "GET /api/me (legacy host) is deprecated; sunset 2027-12-31; "
            f"see {url}/docs#deprecation"
        )
        assert messages[1].startswith("GET /api/getContacts (legacy host) is deprecated")
        assert all(w.filename == __file__ for w in caught)  # points at the caller
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            api.with_options(timeout=3.0).get_json("/api/me", host="legacy")  # copies share it
    assert sent.paths.count("/api/getContacts") == 6 and len(sent.paths) == 10
    with (
        ApiClient(url, api_key=DEMO.api_key, event_hooks=hooks) as other,
        pytest.warns(ApiDeprecationWarning),
    ):
        other.get_json("/api/me", host="legacy")  # a new client warns again
    assert len(sent.paths) == 11


def test_epoch_form_through_the_client() -> None:
    """The sandbox sends ``Deprecation: true``; the ``@epoch`` form is scripted here."""

    def answer(request: httpx.Request) -> httpx.Response:
        headers = {"Deprecation": "@1688169599", "Sunset": SUNSET, "Link": LINK}
        return httpx.Response(200, json={"path": request.url.path}, headers=headers)

    with (
        ApiClient("http://api.test", transport=httpx.MockTransport(answer)) as api,
        pytest.warns(ApiDeprecationWarning) as caught,
    ):
        api.get_json("/api/me", host="legacy")
    assert [str(w.message) for w in caught] == [
        "GET /api/me (legacy host) is deprecated since 2023-06-30; sunset 2027-12-31; "
        "see https://docs.example/#deprecation"
    ]
