"""Secrets never appear in logs (DEBUG on), exception text, reprs or files written."""

from __future__ import annotations

import logging
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from realtyframes import Client, oauth
from realtyframes.api import ApiClient, ApiKeyAuth, BearerAuth, LegacyKeyAuth, RetryPolicy
from realtyframes.errors import ApiDeprecationWarning, RealtyFramesError
from realtyframes.sandbox import DEMO

FAKE_TOKEN = "tok-FAKESECRET-7d1e0c"
FAKE_KEY = "rfk-FAKESECRET-93ab41"
FAKE_CLIENT_SECRET = "cs-FAKESECRET-55aa17"
FAST = RetryPolicy(max_retries=1, backoff_base=0.001, backoff_cap=0.002)


def _exception_texts(exc: BaseException) -> list[str]:
    texts = ["".join(traceback.format_exception(exc))]
    while exc is not None:
        texts += [str(exc), repr(exc), repr(getattr(exc, "body", None))]
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return texts


def test_no_secret_in_logs_errors_reprs_or_files(
    protected_sandbox_url: str,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    url = protected_sandbox_url
    minted = httpx.post(
        f"{url}/_sandbox/tokens",
        json={"scopes": ["listings"]},
        headers={"X-Sandbox-Admin": DEMO.admin_secret},
    ).json()["access_token"]
    secrets = {FAKE_TOKEN, FAKE_KEY, FAKE_CLIENT_SECRET, DEMO.api_key, DEMO.client_secret, minted}
    texts: list[str] = []
    codes: list[str] = []

    def attempt(call: Callable[[], Any]) -> None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ApiDeprecationWarning)
                call()
        except RealtyFramesError as exc:
            texts.extend(_exception_texts(exc))

    caplog.set_level(logging.DEBUG)
    for name in ("httpx", "httpcore", "realtyframes"):
        caplog.set_level(logging.DEBUG, logger=name)

    cache_dir = tmp_path / "cache"
    clients = [
        Client(base_url=url, token=FAKE_TOKEN, cache_dir=cache_dir, retry=FAST),
        Client(base_url=url, api_key=FAKE_KEY, cache_dir=cache_dir, retry=FAST),
        Client(base_url=url, api_key=DEMO.api_key, cache_dir=cache_dir, retry=FAST),
        Client(base_url=url, token=minted, cache_dir=cache_dir, retry=FAST),
    ]
    for client in clients:
        texts += [repr(client), str(client), repr(client.api), repr(client.settings)]
        attempt(client.me)
        attempt(lambda c=client: c.api.call("listings", {"Limit": 1}))
        attempt(lambda c=client: c.api.call("contacts"))
        attempt(lambda c=client: c.api.get_json("/v1/listings", {"Status": "Sold"}))
        attempt(lambda c=client: c.api.get_many([("/v1/listings/NOPE", None)] * 3))
        if client.api.auth_kind == "api_key":
            attempt(client.legacy_me)
            attempt(lambda c=client: c.api.call("legacy_contacts"))
    texts += [
        repr(BearerAuth(FAKE_TOKEN)),
        repr(ApiKeyAuth(FAKE_KEY)),
        repr(LegacyKeyAuth(FAKE_KEY)),
    ]

    # A broken service echoing the credentials back in its error answers.
    def echo(request: httpx.Request) -> httpx.Response:
        said = f"{request.headers.get('Authorization')} {request.headers.get('X-API-Key')} {request.url}"
        return httpx.Response(401, json={"error": {"code": "invalid_token", "message": said}})

    for kwargs in ({"token": FAKE_TOKEN}, {"api_key": FAKE_KEY}):
        with ApiClient("http://echo.test", transport=httpx.MockTransport(echo), **kwargs) as api:  # type: ignore[arg-type]
            attempt(lambda a=api: a.get_json("/v1/me"))
            attempt(lambda a=api: a.get_json("/api/me", host="legacy"))

    # The OAuth flow: a wrong client secret, then a real login with a token file.
    attempt(
        lambda: oauth.exchange_code(
            "some-code",
            client_id=DEMO.client_id,
            client_secret=FAKE_CLIENT_SECRET,
            redirect_uri=DEMO.redirect_uri,
            state="s",
            expected_state="s",
            auth_url=url,
        )
    )

    def browser(authorize_url: str) -> None:
        with httpx.Client() as web:
            page = web.get(authorize_url)
            fields = dict(
                (part.split('name="')[1].split('"')[0], part.split('value="')[1].split('"')[0])
                for part in page.text.split("<input")[1:]
            )
            answer = web.post(f"{url}/authorize", data={**fields, "decision": "approve"})
            location = answer.headers["location"]
            codes.extend(parse_qs(urlsplit(location).query)["code"])
            web.get(location)

    token_path = tmp_path / "token.json"
    token = oauth.login(
        DEMO.client_id,
        DEMO.client_secret,
        ["listings"],
        auth_url=url,
        open_browser=browser,
        token_path=token_path,
    )
    texts += [repr(token), str(token)]
    with Client(base_url=url, token=token, retry=FAST) as logged_in:
        texts.append(repr(logged_in))
        attempt(logged_in.me)
        attempt(lambda: logged_in.api.call("contacts"))
    for client in clients:
        client.close()

    assert codes and any("HTTP Request: GET" in r.getMessage() for r in caplog.records)
    assert any("api_key=***" in r.getMessage() for r in caplog.records)  # the legacy URL, masked
    secrets |= {token.access_token, *codes}
    logged = [caplog.text] + [r.getMessage() for r in caplog.records]
    captured = capsys.readouterr()
    files = {
        path: path.read_text(errors="replace") for path in tmp_path.rglob("*") if path.is_file()
    }
    for secret in secrets:
        assert not any(secret in line for line in logged), f"secret in the logs: {secret[:6]}..."
        assert not any(secret in text for text in texts), (
            f"secret in an exception or repr: {secret[:6]}..."
        )
        assert secret not in captured.out and secret not in captured.err
        for path, content in files.items():
            if path == token_path and secret == token.access_token:
                continue  # the token file holds the token, by design (mode 0600)
            assert secret not in content, f"secret in {path}"
    assert len(texts) > 60


def test_a_password_in_the_base_url_is_a_secret(
    sandbox_url: str, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    """``https://user:password@host`` (a proxy or gateway): the password never shows in reprs,
    logs or the errors of the requests made with it (the runs helper saw it in a traceback)."""
    password = "pw-FAKESECRET-0c4f2a"
    parts = urlsplit(sandbox_url)
    url = f"{parts.scheme}://analyst:{password}@{parts.netloc}"
    caplog.set_level(logging.DEBUG)
    with Client(base_url=url, cache_dir=tmp_path, retry=FAST) as client:
        texts = [repr(client), str(client), repr(client.api)]
        client.listings(City="Miami", max_results=5)
        try:
            client.listing("NO-SUCH-LISTING")
        except RealtyFramesError as exc:
            texts += _exception_texts(exc)
        else:  # pragma: no cover - the sandbox answers 404
            raise AssertionError("an unknown listing id was found")
    texts += [r.getMessage() for r in caplog.records]
    assert "analyst:***@" in repr(client.api)
    assert not [t for t in texts if password in t]
