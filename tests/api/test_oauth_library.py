"""The sandbox's OAuth flow driven by an outside OAuth client library (authlib), with both client
authentication methods, and the hardened consent form and token endpoint (issue #13)."""

from __future__ import annotations

import base64
import re
import warnings

import httpx
import pytest
from test_oauth import submit_consent

from realtyframes.sandbox import DEMO


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
def test_authlib_runs_the_whole_flow(
    protected_sandbox_url: str, monkeypatch: pytest.MonkeyPatch, method: str
) -> None:
    with warnings.catch_warnings():  # authlib warns about its own httpx module on import
        warnings.simplefilter("ignore", DeprecationWarning)
        from authlib.integrations.httpx_client import OAuth2Client

    monkeypatch.setenv("AUTHLIB_INSECURE_TRANSPORT", "1")  # plain http on loopback
    with OAuth2Client(
        DEMO.client_id,
        DEMO.client_secret,
        scope="listings analytics",
        redirect_uri=DEMO.redirect_uri,
        token_endpoint_auth_method=method,
    ) as client:
        url, state = client.create_authorization_url(f"{protected_sandbox_url}/authorize")
        location = submit_consent(url)  # the consent form, submitted like a browser
        token = client.fetch_token(
            f"{protected_sandbox_url}/api/oauth/token", authorization_response=location
        )
        assert token["token_type"].lower() == "bearer" and token["access_token"]
        me = client.get(f"{protected_sandbox_url}/v1/me")
    assert me.status_code == 200 and me.json()["email"] == DEMO.email
    assert state in location


def _authorize(url: str) -> dict[str, str]:
    return {
        "client_id": DEMO.client_id,
        "redirect_uri": DEMO.redirect_uri,
        "scope": "listings",
        "state": "s1",
    }


def test_the_consent_form_needs_its_own_fresh_token(protected_sandbox_url: str) -> None:
    params = _authorize(protected_sandbox_url)
    target = f"{protected_sandbox_url}/authorize"
    with httpx.Client() as browser:
        forged = browser.post(target, data={**params, "decision": "approve"})
        assert forged.status_code == 400 and "csrf_token" in forged.text
        page = browser.get(target, params=params).text
        token = re.search(r'name="csrf_token" value="([^"]+)"', page)
        assert token is not None
        wrong = browser.post(target, data={**params, "decision": "approve", "csrf_token": "x"})
        assert wrong.status_code == 400
        other_state = {**params, "state": "s2", "decision": "approve", "csrf_token": token[1]}
        assert browser.post(target, data=other_state).status_code == 400  # bound to its request
        page = browser.get(target, params=params).text
        token = re.search(r'name="csrf_token" value="([^"]+)"', page)
        assert token is not None
        ok = browser.post(target, data={**params, "decision": "approve", "csrf_token": token[1]})
        assert ok.status_code == 302 and "code=" in ok.headers["location"]
        again = browser.post(target, data={**params, "decision": "approve", "csrf_token": token[1]})
        assert again.status_code == 400  # single use


def test_userinfo_in_redirect_uri_is_refused(protected_sandbox_url: str) -> None:
    params = {
        **_authorize(protected_sandbox_url),
        "redirect_uri": "http://user:pw@127.0.0.1:8765/callback",
    }
    answer = httpx.get(f"{protected_sandbox_url}/authorize", params=params)
    assert answer.status_code == 400 and "redirect_uri" in answer.text


def _code(url: str) -> str:
    query = "&".join(f"{k}={v}" for k, v in _authorize(url).items())
    location = submit_consent(f"{url}/authorize?{query}")
    return httpx.URL(location).params["code"]


def test_the_token_endpoint_requires_redirect_uri_and_takes_basic(
    protected_sandbox_url: str,
) -> None:
    token_url = f"{protected_sandbox_url}/api/oauth/token"
    form = {
        "grant_type": "authorization_code",
        "client_id": DEMO.client_id,
        "client_secret": DEMO.client_secret,
    }
    missing = httpx.post(token_url, data={**form, "code": _code(protected_sandbox_url)})
    assert missing.status_code == 400 and "redirect_uri" in missing.text
    basic = base64.b64encode(f"{DEMO.client_id}:{DEMO.client_secret}".encode()).decode()
    ok = httpx.post(
        token_url,
        data={
            "grant_type": "authorization_code",
            "code": _code(protected_sandbox_url),
            "redirect_uri": DEMO.redirect_uri,
        },
        headers={"Authorization": f"Basic {basic}"},
    )
    assert ok.status_code == 200 and ok.json()["access_token"]
    bad = base64.b64encode(f"{DEMO.client_id}:wrong".encode()).decode()
    refused = httpx.post(
        token_url,
        data={"code": _code(protected_sandbox_url), "redirect_uri": DEMO.redirect_uri},
        headers={"Authorization": f"Basic {bad}"},
    )
    assert refused.status_code == 401
