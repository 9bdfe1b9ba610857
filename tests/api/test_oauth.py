"""The OAuth flow end to end against the sandbox's consent page, submitted like a browser would."""

from __future__ import annotations

import base64
import hashlib
import os
import socket
import stat
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
import pytest

from realtyframes import Client, oauth
from realtyframes.errors import BadRequestError, InvalidTokenError, OAuthError, QueryError
from realtyframes.sandbox import DEMO


class FormParser(HTMLParser):
    """Collects the first form of a page: action, method, hidden inputs, submit buttons."""

    def __init__(self) -> None:
        super().__init__()
        self.action: str | None = None
        self.method = "get"
        self.fields: dict[str, str] = {}
        self.buttons: dict[str, list[str]] = {}
        self._in_form = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {k: v or "" for k, v in attrs}
        if tag == "form" and self.action is None:
            self._in_form = True
            self.action = attributes.get("action", "")
            self.method = attributes.get("method", "get").lower()
        elif self._in_form and tag == "input" and attributes.get("type") == "hidden":
            self.fields[attributes["name"]] = attributes.get("value", "")
        elif self._in_form and tag == "button" and attributes.get("type", "submit") == "submit":
            self.buttons.setdefault(attributes["name"], []).append(attributes.get("value", ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._in_form = False


def submit_consent(url: str, decision: str = "approve") -> str:
    """Open the consent page, press a button, return the redirect target (not followed)."""
    with httpx.Client(follow_redirects=False) as browser:
        page = browser.get(url, headers={"Accept": "text/html"})
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        form = FormParser()
        form.feed(page.text)
        assert form.method == "post" and decision in form.buttons["decision"]
        answer = browser.post(
            urljoin(url, form.action or ""), data={**form.fields, "decision": decision}
        )
        assert answer.status_code in (302, 303)
        return answer.headers["location"]


def _callback(location: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


def _s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def test_authorization_url_and_fresh_state(protected_sandbox_url: str) -> None:
    request = oauth.authorization_url(
        DEMO.client_id, DEMO.redirect_uri, ["listings", "analytics"], auth_url=protected_sandbox_url
    )
    url, state = request
    other = oauth.authorization_url(
        DEMO.client_id, DEMO.redirect_uri, "listings", auth_url=protected_sandbox_url
    )
    assert state != other.state and len(state) >= 40
    assert request.code_verifier != other.code_verifier and len(request.code_verifier) >= 43
    query = _callback(url)
    assert query == {
        "client_id": DEMO.client_id,
        "redirect_uri": DEMO.redirect_uri,
        "scope": "listings,analytics",
        "state": state,
        "code_challenge": _s256(request.code_verifier),  # PKCE S256 (RFC 7636 4.2)
        "code_challenge_method": "S256",
    }
    assert url.startswith(f"{protected_sandbox_url}/authorize?")
    with pytest.raises(QueryError, match="unknown scope 'admin'"):
        oauth.authorization_url(
            "a", "http://127.0.0.1/cb", ["admin"], auth_url=protected_sandbox_url
        )


def test_auth_url_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REALTYFRAMES_AUTH_URL", raising=False)
    with pytest.raises(QueryError, match="auth_url"):
        oauth.authorization_url("a", "http://127.0.0.1/cb", ["listings"])


def test_flow_end_to_end_state_mismatch_and_code_reuse(protected_sandbox_url: str) -> None:
    auth = protected_sandbox_url
    request = oauth.authorization_url(
        DEMO.client_id, DEMO.redirect_uri, ["listings", "contacts"], auth_url=auth
    )
    url, state = request
    callback = _callback(submit_consent(url))
    assert callback["state"] == state and callback["code"]
    exchange = {
        "client_id": DEMO.client_id,
        "client_secret": DEMO.client_secret,
        "redirect_uri": DEMO.redirect_uri,
        "auth_url": auth,
        "code_verifier": request.code_verifier,
    }
    with pytest.raises(OAuthError, match="state mismatch"):
        oauth.exchange_code(
            callback["code"], state="forged-state", expected_state=state, **exchange
        )
    # Nothing was sent on the mismatch: the single-use code still works.
    token = oauth.exchange_code(
        callback["code"], state=callback["state"], expected_state=state, **exchange
    )
    assert set(token.scopes) == {"listings", "contacts"} and token.token_type == "Bearer"
    assert token.expires_at is not None and not token.expired
    assert token.access_token not in repr(token) and token.access_token not in str(token)
    with Client(base_url=auth, token=token) as client:
        assert client.api.call("contacts", {"Limit": 1})["limit"] == 1
    with pytest.raises(BadRequestError, match="already used") as reused:
        oauth.exchange_code(callback["code"], state=state, expected_state=state, **exchange)
    assert DEMO.client_secret not in str(reused.value) and callback["code"] not in str(reused.value)
    with Client(base_url=auth, token=token) as client, pytest.raises(InvalidTokenError):
        client.me()  # reusing a code revokes the token of its first use


def test_exchange_refusals(protected_sandbox_url: str) -> None:
    auth = protected_sandbox_url
    url, state = oauth.authorization_url(
        DEMO.client_id, DEMO.redirect_uri, ["listings"], auth_url=auth
    )
    code = _callback(submit_consent(url))["code"]
    base = {"client_id": DEMO.client_id, "state": state, "expected_state": state, "auth_url": auth}
    with pytest.raises(InvalidTokenError) as wrong_secret:
        oauth.exchange_code(
            code, client_secret="wrong-secret-xyz", redirect_uri=DEMO.redirect_uri, **base
        )
    assert "wrong-secret-xyz" not in str(wrong_secret.value)
    assert wrong_secret.value.code == "invalid_client"  # RFC 6749 5.2
    with pytest.raises(BadRequestError, match="redirect_uri"):
        oauth.exchange_code(
            code, client_secret=DEMO.client_secret, redirect_uri="http://127.0.0.1:9/other", **base
        )


def _browser_that_approves(decision: str = "approve") -> tuple[list[str], object]:
    visited: list[str] = []

    def open_browser(url: str) -> None:
        visited.append(url)
        location = submit_consent(url, decision)
        httpx.get(location)  # the browser follows the redirect to the loopback listener

    return visited, open_browser


def test_login_end_to_end_saves_a_private_token_file(
    protected_sandbox_url: str, tmp_path: Path
) -> None:
    visited, browser = _browser_that_approves()
    path = tmp_path / "conf" / "token.json"
    token = oauth.login(
        DEMO.client_id,
        DEMO.client_secret,
        ["listings", "analytics"],
        auth_url=protected_sandbox_url,
        open_browser=browser,  # type: ignore[arg-type]
        token_path=path,
        timeout=20,
    )
    redirect = _callback(visited[0])["redirect_uri"]
    assert redirect.startswith("http://127.0.0.1:") and redirect.endswith("/callback")
    assert set(token.scopes) == {"listings", "analytics"}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert oauth.load_token(path) == token
    with Client(base_url=protected_sandbox_url, token=oauth.load_token(path)) as client:
        assert client.me()["scopes"] == ["listings", "analytics"]
    os.chmod(path, 0o644)
    with pytest.raises(OAuthError, match="chmod 600"):
        oauth.load_token(path)
    path.write_text("overwritten")  # saving again replaces it and makes it private again
    oauth.save_token(token, path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and oauth.load_token(path) == token


def test_login_denied_and_timeout(
    protected_sandbox_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    _, deny = _browser_that_approves("deny")
    with pytest.raises(OAuthError, match="access_denied"):
        oauth.login(
            DEMO.client_id,
            DEMO.client_secret,
            "listings",
            auth_url=protected_sandbox_url,
            open_browser=deny,
            timeout=20,
        )  # type: ignore[arg-type]
    with pytest.raises(OAuthError, match=r"no authorization callback within 0\.3 s"):
        oauth.login(
            DEMO.client_id,
            DEMO.client_secret,
            "listings",
            auth_url=protected_sandbox_url,
            open_browser=False,
            timeout=0.3,
        )
    printed = caplog.text
    assert f"{protected_sandbox_url}/authorize?" in printed and DEMO.client_secret not in printed


def test_login_gives_the_url_to_show_url_when_no_browser_opens(
    protected_sandbox_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    shown: list[str] = []
    with pytest.raises(OAuthError, match="no authorization callback"):
        oauth.login(
            DEMO.client_id,
            DEMO.client_secret,
            "listings",
            auth_url=protected_sandbox_url,
            open_browser=False,
            timeout=0.3,
            show_url=shown.append,
        )
    assert len(shown) == 1 and shown[0].startswith(f"{protected_sandbox_url}/authorize?")
    assert "authorize" not in caplog.text  # shown by the caller, not logged as well


def test_token_round_trip_and_repr() -> None:
    token = oauth.Token("tok-VISIBLE-NEVER", scopes=("listings",))
    assert "tok-VISIBLE-NEVER" not in repr(token)
    assert oauth.Token.from_dict(token.to_dict()) == token


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_login_listens_on_the_given_redirect_uri(protected_sandbox_url: str) -> None:
    # The registered redirect's path on an explicit port (loopback: any port, RFC 8252 7.3).
    path = urlsplit(DEMO.redirect_uri).path
    redirect = f"http://127.0.0.1:{_free_port()}{path}"
    visited: list[str] = []
    locations: list[str] = []

    def browser(url: str) -> None:
        visited.append(url)
        locations.append(submit_consent(url))
        assert httpx.get(locations[-1]).status_code == 200  # the listener took the callback

    token = oauth.login(
        DEMO.client_id,
        DEMO.client_secret,
        "listings",
        auth_url=protected_sandbox_url,
        open_browser=browser,
        timeout=20,
        redirect_uri=redirect,
    )
    assert _callback(visited[0])["redirect_uri"] == redirect
    assert locations[0].startswith(f"{redirect}?") and "code" in _callback(locations[0])
    with Client(base_url=protected_sandbox_url, token=token) as client:
        assert client.me()["scopes"] == ["listings"]


@pytest.mark.parametrize(
    ("redirect_uri", "problem"),
    [
        ("https://127.0.0.1:8765/callback", "plain http"),
        ("http://example.com:8765/callback", "not a loopback host"),
        ("http://10.0.0.1:8765/callback", "not a loopback host"),
        ("http://127.0.0.1.example.com/callback", "not a loopback host"),
        ("http://127.0.0.1:99999/callback", "invalid port"),
        ("http://127.0.0.1:8765/callback#top", "fragment"),
        ("http://me:hunter2-secret@127.0.0.1:8765/callback", "credentials"),
        ("ftp://me:hunter2-secret@127.0.0.1:99999/callback", "credentials"),
        ("  ", "non-empty"),
    ],
)
def test_login_refuses_a_redirect_uri_it_cannot_listen_on(
    protected_sandbox_url: str, redirect_uri: str, problem: str
) -> None:
    opened: list[str] = []
    with pytest.raises(QueryError, match=problem) as caught:
        oauth.login(
            DEMO.client_id,
            DEMO.client_secret,
            "listings",
            auth_url=protected_sandbox_url,
            open_browser=opened.append,
            timeout=5,
            redirect_uri=redirect_uri,
        )
    assert caught.value.param == "redirect_uri" and "loopback" in str(caught.value)
    assert "hunter2-secret" not in str(caught.value)
    assert opened == []  # refused before any listener or browser


def test_login_refuses_a_busy_port(protected_sandbox_url: str) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        with pytest.raises(QueryError, match=f"cannot listen on 127.0.0.1:{port}") as caught:
            oauth.login(
                DEMO.client_id,
                DEMO.client_secret,
                "listings",
                auth_url=protected_sandbox_url,
                open_browser=False,
                timeout=5,
                redirect_uri=f"http://127.0.0.1:{port}/callback",
            )
    assert caught.value.param == "redirect_uri"


@pytest.mark.parametrize(
    ("redirect_uri", "bind", "uri"),
    [
        ("http://localhost:5000/cb", "127.0.0.1", "http://localhost:5000/cb"),
        ("http://[::1]:5000/cb", "::1", "http://[::1]:5000/cb"),
        ("http://127.0.0.2/cb?app=x", "127.0.0.2", "http://127.0.0.2:5000/cb?app=x"),
        ("http://127.0.0.1:5000", "127.0.0.1", "http://127.0.0.1:5000/"),
    ],
)
def test_loopback_redirect_uri_forms(redirect_uri: str, bind: str, uri: str) -> None:
    target = oauth._listen_target(redirect_uri)
    assert target.bind_host == bind and target.uri(5000) == uri
