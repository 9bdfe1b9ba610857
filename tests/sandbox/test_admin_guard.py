"""The admin routes under attack (issue #13): protected mode needs the admin secret, every POST
is JSON only, and another origin is refused."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from realtyframes.sandbox import DEMO

SECRET = {"X-Sandbox-Admin": DEMO.admin_secret}


def test_protected_admin_posts_need_the_secret(start_sandbox: Callable[..., Any]) -> None:
    sb = start_sandbox(protected=True)
    with httpx.Client(base_url=sb.url) as http:
        before = http.get("/_sandbox/clock").json()["now"]
        for headers in ({}, {"X-Sandbox-Admin": "guess"}):
            minted = http.post("/_sandbox/tokens", json={"scopes": ["contacts"]}, headers=headers)
            assert minted.status_code == 401 and "access_token" not in minted.text
            moved = http.post("/_sandbox/clock", json={"advance_days": 30}, headers=headers)
            assert moved.status_code == 401 and "X-Sandbox-Admin" in moved.text
        assert http.get("/_sandbox/clock").json()["now"] == before
        ok = http.post("/_sandbox/tokens", json={"scopes": ["listings"]}, headers=SECRET)
        assert ok.status_code == 200 and ok.json()["access_token"]
    custom = start_sandbox(protected=True, admin_secret="s3")
    with httpx.Client(base_url=custom.url) as http:
        assert (
            http.post("/_sandbox/clock", json={"advance_days": 1}, headers=SECRET).status_code
            == 401
        )
        moved = http.post(
            "/_sandbox/clock", json={"advance_days": 1}, headers={"X-Sandbox-Admin": "s3"}
        )
        assert moved.status_code == 200


def test_admin_posts_take_json_only(start_sandbox: Callable[..., Any]) -> None:
    for protected in (False, True):
        sb = start_sandbox(protected=protected)
        with httpx.Client(base_url=sb.url, headers=SECRET) as http:
            before = http.get("/_sandbox/clock").json()["now"]
            for kind in ("text/plain", "application/x-www-form-urlencoded", None):
                headers = {"Content-Type": kind} if kind else {}
                sent = http.post(
                    "/_sandbox/clock", content=b'{"advance_days": 30}', headers=headers
                )
                assert sent.status_code == 400 and "Content-Type" in sent.text, (protected, kind)
                minted = http.post("/_sandbox/tokens", content=b"{}", headers=headers)
                assert minted.status_code == 400 and "access_token" not in minted.text
            assert http.get("/_sandbox/clock").json()["now"] == before


def test_admin_routes_refuse_other_origins(start_sandbox: Callable[..., Any]) -> None:
    sb = start_sandbox()
    with httpx.Client(base_url=sb.url) as http:
        evil = {"Origin": "https://evil.example"}
        assert (
            http.post("/_sandbox/clock", json={"advance_days": 1}, headers=evil).status_code == 403
        )
        assert http.get("/_sandbox/faults", headers=evil).status_code == 403
        own = {"Origin": sb.url}
        assert (
            http.post("/_sandbox/clock", json={"advance_days": 1}, headers=own).status_code == 200
        )
        assert (
            http.post("/_sandbox/clock", json={"advance_days": 1}).status_code == 200
        )  # no Origin


def test_serving_beyond_loopback_is_warned_about(capsys: Any) -> None:
    from realtyframes.cli import main
    from realtyframes.sandbox import is_loopback

    assert is_loopback("127.0.0.2") and is_loopback("[::1]") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.0.2.1")
    # 192.0.2.1 (TEST-NET-1) is not this machine's: the bind fails, nothing is ever exposed
    assert main(["sandbox", "--host", "192.0.2.1", "--port", "0"]) == 1
    err = capsys.readouterr().err
    assert "for testing" in err and "admin routes" in err and "personal data" in err
