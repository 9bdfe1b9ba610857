"""``serve()`` / ``start()``: options, start-up, clean shutdown, bad options."""

from __future__ import annotations

import socket
import threading
from datetime import datetime

import httpx
import pytest

from realtyframes.cli import main
from realtyframes.sandbox import Faults, SandboxOptions, serve


def test_serve_yields_a_running_server_and_stops_it(
    http_client: httpx.Client, sandbox_as_of: datetime
) -> None:
    options = SandboxOptions(listings=300, contacts=10, as_of=sandbox_as_of)
    threads_before = threading.active_count()
    with serve(options, protected=True) as url:
        assert url.startswith("http://127.0.0.1:")
        assert http_client.get(f"{url}/v1/me").status_code == 401  # protected= overrides
        clock = http_client.get(f"{url}/_sandbox/clock").json()["now"]
        assert clock.startswith(sandbox_as_of.date().isoformat())
    port = int(url.rsplit(":", 1)[1])
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/v1/me", timeout=2)
    assert threading.active_count() <= threads_before
    with socket.socket() as sock:  # nobody listens on the port any more
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"latency_ms": -1}, "latency_ms"),
        ({"rate_limit": (0, 60)}, "rate_limit"),
        ({"faults": Faults(truncate_rate=3)}, "truncate_rate"),
        ({"as_of": datetime(2026, 1, 1)}, "as_of"),
    ],
)
def test_bad_options_are_refused_before_serving(fields: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message), serve(listings=100, contacts=5, **fields):
        pass


def test_busy_port(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(OSError), serve(port=port, listings=100, contacts=5):
            pass
        assert main(["sandbox", "--port", str(port), "--listings", "100"]) == 1
    assert f"cannot serve on 127.0.0.1:{port}" in capsys.readouterr().err


def test_every_answer_says_how_long_the_server_keeps_an_idle_connection(
    http_client: httpx.Client,
) -> None:
    """Node's fetch keeps idle connections 4 s and believes ``Keep-Alive: timeout=N``; the server
    kept them 5 s and said nothing, so a TypeScript client under load sometimes sent on a
    connection the server was closing ("other side closed"). Now the server keeps them
    ``KEEP_ALIVE_SECONDS`` (above the clients') and says so in every answer, errors and 429s too,
    on the wire of the real server."""
    from realtyframes.sandbox import start
    from realtyframes.sandbox._middleware import KEEP_ALIVE_SECONDS
    from realtyframes.sandbox._server import _config

    with start(listings=100, contacts=5, rate_limit=(3, 60)) as sandbox:
        config = _config(sandbox.app, log_level="warning", access_log=False, own_logging=False)
        assert config.timeout_keep_alive == KEEP_ALIVE_SECONDS > 5
        statuses = []
        for path in ("/v1/listings?Limit=1", "/v1/listings/nosuch", "/v1", "/v1", "/v1"):
            response = http_client.get(sandbox.url + path)
            statuses.append(response.status_code)
            assert response.headers["keep-alive"] == f"timeout={KEEP_ALIVE_SECONDS}", path
        assert statuses[:2] == [200, 404] and 429 in statuses
        # as bytes on the socket, past httpx: one header, HTTP/1.1, the connection kept
        host, port = sandbox.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(b"GET /_sandbox/clock HTTP/1.1\r\nHost: x\r\n\r\n")
            head = sock.recv(65536).split(b"\r\n\r\n", 1)[0].lower()
        assert head.count(b"keep-alive:") == 1
        assert f"keep-alive: timeout={KEEP_ALIVE_SECONDS}".encode() in head.split(b"\r\n")
