"""``rf.Client`` set-up: embedded sandbox, environment, options, copies, concurrency."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest

from fakeclock import FakeClock
from realtyframes import Client, ClientSettings
from realtyframes.api import ApiClient
from realtyframes.errors import ConfigError, QueryError
from realtyframes.sandbox import DEMO
from realtyframes.sandbox import _embedded as embedded_sandbox


@pytest.fixture
def nothing_configured(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No REALTYFRAMES_* variable and no config file, whatever the developer's machine has."""
    for name in list(os.environ):
        if name.startswith("REALTYFRAMES_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))


@pytest.mark.usefixtures("nothing_configured")
def test_no_base_url_starts_the_embedded_sandbox_once(caplog: pytest.LogCaptureFixture) -> None:
    already = embedded_sandbox.current() is not None
    with (
        caplog.at_level(logging.INFO, logger="realtyframes"),
        pytest.warns(UserWarning, match=r"embedded sandbox \(synthetic data\)"),
        Client() as first,
        Client() as second,
    ):
        assert first.embedded and second.embedded
        assert first.base_url == second.base_url
        assert first.base_url.startswith("http://127.0.0.1:")
        assert first.me()["email"] == DEMO.email
        assert "embedded sandbox" in repr(first)
    started = [r for r in caplog.records if "started the embedded sandbox" in r.getMessage()]
    assert len(started) == (0 if already else 1)
    if started:
        assert started[0].levelno == logging.INFO and first.base_url in started[0].getMessage()
    with Client.sandbox() as third:  # closing clients does not stop it; explicit: no warning
        assert third.base_url == first.base_url and third.me()["plan"] == "standard"


@pytest.mark.usefixtures("nothing_configured")
def test_credentials_without_a_host_are_a_configuration_error() -> None:
    assert not issubclass(ConfigError, QueryError)  # the call was fine; the configuration is not
    with pytest.raises(ConfigError, match="base_url"):
        Client(api_key="k")
    with pytest.raises(ConfigError, match="base_url"):
        Client(token="t")


def test_from_env(
    monkeypatch: pytest.MonkeyPatch, protected_sandbox_url: str, tmp_path: Path
) -> None:
    monkeypatch.setenv("REALTYFRAMES_BASE_URL", protected_sandbox_url + "/v1/")
    monkeypatch.setenv("REALTYFRAMES_API_KEY", DEMO.api_key)
    monkeypatch.setenv("REALTYFRAMES_LEGACY_URL", protected_sandbox_url)
    monkeypatch.setenv("REALTYFRAMES_AUTH_URL", protected_sandbox_url)
    monkeypatch.setenv("REALTYFRAMES_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("REALTYFRAMES_TOKEN", "")  # empty means unset
    with Client.from_env(max_concurrency=2) as client:
        assert client.base_url == protected_sandbox_url  # a trailing /v1 is the paths' job
        assert client.settings == ClientSettings(cache_dir=tmp_path / "cache")
        assert client.api.max_concurrency == 2 and client.api.auth_kind == "api_key"
        assert client.api.hosts["legacy"] == protected_sandbox_url
        assert client.me()["plan"] == "standard"
        assert not (tmp_path / "cache").exists()  # settings never create directories
    with Client.from_env(api_key=DEMO.premium_api_key) as premium:  # arguments win
        assert premium.me()["plan"] == "premium"


def test_options_are_validated() -> None:
    url = "http://127.0.0.1:9"
    for kwargs, param in [
        ({"cache": "yes"}, "cache"),
        ({"ttl": -1}, "ttl"),
        ({"ttl": {"listings": "1h"}}, "ttl['listings']"),
        ({"progress": "auto"}, "progress"),
        ({"timeout": 0}, "timeout"),
        ({"max_concurrency": 0}, "max_concurrency"),
        ({"max_retries": -1}, "max_retries"),
        ({"error_format": "xml"}, "error_format"),
        ({"cache_dir": 3}, "cache_dir"),
    ]:
        with pytest.raises(QueryError) as caught:
            Client(base_url=url, **kwargs)  # type: ignore[arg-type]
        assert caught.value.param == param
    for bad in ("ftp://x", "not a url", "http://h/?q=1", ""):
        with pytest.raises(QueryError, match="base_url"):
            Client(base_url=bad)
    with Client(base_url=url, ttl={"listings": timedelta(hours=1), "contacts": 60}) as client:
        settings = client.settings
    assert settings.ttl == {"listings": timedelta(hours=1), "contacts": 60}


def test_with_options_shares_pool_and_budget(sandbox_url: str) -> None:
    client = Client(base_url=sandbox_url, timeout=10.0)
    fast = client.with_options(timeout=2.0, max_concurrency=6, cache=False)
    assert (fast.api.timeout, fast.api.max_concurrency, fast.settings.cache) == (2.0, 6, False)
    assert (client.api.timeout, client.api.max_concurrency, client.settings.cache) == (
        10.0,
        4,
        True,
    )
    fast.me()
    assert client.rate_limit is not None and client.rate_limit == fast.rate_limit
    fast.close()  # a copy leaves the shared pool open
    assert client.me()["plan"] == "standard"
    with pytest.raises(QueryError, match="with_options"):
        client.with_options(base_url="http://other")
    client.close()
    with pytest.raises(RuntimeError, match="closed"):
        client.me()


def test_get_many_inside_a_running_event_loop(sandbox_url: str) -> None:
    """Jupyter runs an event loop in the main thread: the client uses threads, so it still works."""

    async def notebook_cell() -> list[int]:
        with ApiClient(sandbox_url, max_concurrency=4) as api:
            pages = api.get_many(
                [("/v1/listings", {"Limit": "10", "Offset": str(10 * i)}) for i in range(8)]
            )
        return [page["offset"] for page in pages]

    assert asyncio.run(notebook_cell()) == [10 * i for i in range(8)]


def test_raw_pages_and_parse_hook(sandbox_url: str) -> None:
    with ApiClient(sandbox_url) as api:
        raw = api.get_bytes("/v1/listings", {"Limit": "3"})
        assert raw.startswith(b"{") and b'"listings"' in raw
        sizes = api.get_many([("/v1/listings", {"Limit": "3"})] * 3, parse=len)
        assert sizes == [len(raw)] * 3


def test_ssl_hosts_and_path_prefix_are_accepted() -> None:
    api = ApiClient("https://api.example.com/v1", legacy_url="https://legacy.example.com/")
    assert api.hosts == {
        "base": "https://api.example.com",
        "auth": "https://api.example.com",
        "legacy": "https://legacy.example.com",
        "docs": "https://api.example.com",
    }
    assert len(api.fingerprint) == 12
    with ApiClient("https://api.example.com", api_key="k") as other:
        assert api.fingerprint != other.fingerprint
    api.close()
    with pytest.raises(QueryError, match="path"), ApiClient("http://127.0.0.1:9") as local:
        local.get_json("v1/me")


def test_connection_refused_is_a_connect_error_after_retries() -> None:
    from realtyframes.api import RetryPolicy
    from realtyframes.errors import ConnectError

    sent: list[httpx.Request] = []
    policy = RetryPolicy(max_retries=2, backoff_base=0.001, backoff_cap=0.002)
    with (
        ApiClient(
            "http://127.0.0.1:9",
            retry=policy,
            event_hooks={"request": [sent.append]},
            clock=FakeClock(),
        ) as api,
        pytest.raises(ConnectError),
    ):
        api.get_json("/v1/me")
    assert len(sent) == 3


def test_max_retries_and_retry_policy_never_silently_disagree(sandbox_url: str) -> None:
    from realtyframes.api import RetryPolicy

    with Client(sandbox_url, retry=RetryPolicy(max_retries=0), cache=False) as client:
        assert client.api.max_retries == 0  # the policy's own value is kept
    with Client(sandbox_url, max_retries=2, cache=False) as client:
        assert client.api.max_retries == 2
    with pytest.raises(QueryError, match="max_retries"):
        Client(sandbox_url, retry=RetryPolicy(max_retries=0), max_retries=3)


def test_client_reads_the_environment_and_the_config_file(
    monkeypatch: pytest.MonkeyPatch, protected_sandbox_url: str, tmp_path: Path
) -> None:
    """A scheduled job writing ``rf.Client()`` with REALTYFRAMES_* set gets that service, not
    synthetic data (the openai / stripe / boto3 convention); arguments win over both."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))
    monkeypatch.setenv("REALTYFRAMES_BASE_URL", protected_sandbox_url)
    monkeypatch.setenv("REALTYFRAMES_API_KEY", DEMO.api_key)
    with Client(cache=False) as client:
        assert not client.embedded and client.base_url == protected_sandbox_url
        assert client.me()["plan"] == "standard"
    with Client(api_key=DEMO.premium_api_key, cache=False) as premium:  # arguments win
        assert premium.me()["plan"] == "premium"
    with Client.sandbox() as sandbox:  # explicit: the sandbox whatever the environment says
        assert sandbox.embedded
    monkeypatch.delenv("REALTYFRAMES_BASE_URL")
    monkeypatch.delenv("REALTYFRAMES_API_KEY")
    config = tmp_path / "config.toml"
    config.write_text(f'base_url = "{protected_sandbox_url}"\napi_key = "{DEMO.api_key}"\n')
    config.chmod(0o600)
    monkeypatch.setenv("REALTYFRAMES_CONFIG", str(config))
    with Client(cache=False) as from_file:
        assert not from_file.embedded and from_file.me()["plan"] == "standard"
    with pytest.raises(QueryError, match="not an option of the sandbox client"):
        Client.sandbox(base_url=protected_sandbox_url)


def test_sync_history_and_state_through_the_client(start_sandbox: Any, tmp_path: Path) -> None:
    sb = start_sandbox(listings=300)
    with Client(sb.url, cache_dir=tmp_path) as client:
        assert client.sync_state(City="Miami") is None
        market = client.sync_listings(City="Miami")
        assert not market.empty and market.ListingId.is_unique
        assert client.sync_state(City="Miami")["syncs"] == 1
        httpx.post(f"{sb.url}/_sandbox/clock", json={"advance_days": 30}).raise_for_status()
        client.sync_listings(City="Miami")
        history = client.listing_history(City="Miami")
        assert set(history.ChangeType.dropna().unique()) <= {"price_change", "status_change"}
        assert client.sync_state(City="Miami")["syncs"] == 2
        reloaded = client.sync_listings(City="Miami", refresh=True)
        assert len(reloaded) >= len(market)
        pd.testing.assert_frame_equal(client.listing_history(City="Miami"), history)


#: The second process of the test below: its own embedded sandbox, the same cache.
SECOND_PROCESS = """
import sys
import pandas as pd
import realtyframes as rf
with rf.Client(cache_dir=sys.argv[1]) as client:
    again = client.listings(City="Miami", max_results=10)
    info = client.last_load
    print(client.base_url, info.from_cache, info.requests, pd.util.hash_pandas_object(again).sum())
"""


def test_embedded_sandbox_cache_entries_survive_its_random_port(tmp_path: Path) -> None:
    # Each process starts the embedded sandbox on a new port; its cache keys must not change.
    with Client(cache_dir=tmp_path) as client:
        assert client.api.cache_host() != client.base_url
        assert ":" + client.base_url.rsplit(":", 1)[1] not in client.api.cache_host()
        first = client.listings(City="Miami", max_results=10)
        assert not client.last_load.from_cache
        url = client.base_url
    again = subprocess.run(
        [sys.executable, "-c", SECOND_PROCESS, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    other_url, from_cache, requests, digest = again.stdout.split()
    assert other_url != url  # another process: another port
    assert (from_cache, requests) == ("True", "0")
    assert int(digest) == int(pd.util.hash_pandas_object(first).sum())


def test_a_client_dropped_without_close_warns_and_closes_its_connections(sandbox_url: str) -> None:
    import gc

    client = Client(sandbox_url, cache=False, progress=False)
    client.me()
    http = client.api.http
    with pytest.warns(ResourceWarning, match="was not closed"):
        del client
        gc.collect()
    assert http.is_closed
    with Client(sandbox_url, cache=False, progress=False) as closed:  # the documented form
        closed.me()
        copy = closed.with_options(timeout=5.0)
    del closed, copy
    gc.collect()  # closed by `with`: no warning (filterwarnings = error would fail the test)


#: One process of the test below: a sync of the embedded sandbox, then whether its server runs
#: (the sandbox's own flag, and whether anything listens on its port), then a request.
LAZY_PROCESS = """
import socket, sys, warnings
import realtyframes as rf
from realtyframes.sandbox._embedded import current
warnings.simplefilter("ignore")
def listening(url):
    host, port = url.removeprefix("http://").split(":")
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
        return True
    except ConnectionRefusedError:
        return False
with rf.Client(cache_dir=sys.argv[1], progress=False) as client:
    started_at_client = current().started
    market = client.sync_listings(City="Doral")
    info = client.last_load
    print(started_at_client, current().started, listening(client.base_url), info.requests,
          len(market), len(info.changes) if info.changes is not None else None)
    client.me()  # the first request starts it
    print(current().started, listening(client.base_url))
"""


def test_a_run_the_cache_answers_starts_no_embedded_sandbox(tmp_path: Path) -> None:
    """``Client()`` reserves the sandbox's port but starts no server; the first request starts
    it. A second process whose sync the cache answers (a warm report) starts none: nothing
    listens on its port, and its answer is the first one's (no change)."""

    def run() -> list[list[str]]:
        done = subprocess.run(
            [sys.executable, "-c", LAZY_PROCESS, str(tmp_path)],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
            timeout=300,
        )
        return [line.split() for line in done.stdout.splitlines()]

    cold, warm = run(), run()
    assert cold[0][:3] == ["False", "True", "True"] and int(cold[0][3]) > 0  # synced: started
    assert warm[0][:4] == ["False", "False", "False", "0"]  # from the cache: no server, no port
    assert warm[0][4] == cold[0][4] and warm[0][5] == "0"  # the same market, nothing changed
    assert warm[1] == ["True", "True"]  # a request still finds it
