"""Serving the sandbox with uvicorn: in a background thread (``serve``) or until stopped (CLI).

>>> from realtyframes.sandbox import serve
>>> with serve(listings=500) as url:  # doctest: +SKIP
...     httpx.get(f"{url}/v1/listings").json()["total"]
"""

from __future__ import annotations

import dataclasses
import ipaddress
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import uvicorn
from starlette.applications import Starlette
from uvicorn.config import LOGGING_CONFIG

from realtyframes.sandbox._admin import SandboxAdmin
from realtyframes.sandbox._app import create_app
from realtyframes.sandbox._faults import install_log_filter
from realtyframes.sandbox._middleware import KEEP_ALIVE_SECONDS
from realtyframes.sandbox._options import SandboxOptions

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8642
_START_TIMEOUT = 30.0


@dataclass(frozen=True)
class RunningSandbox:
    """A sandbox served in a background thread: its base URL, app and admin handle."""

    url: str
    app: Starlette

    @property
    def admin(self) -> SandboxAdmin:
        """The app's state: stores, auth registry, limiter, fault counters."""
        return self.app.state.admin  # type: ignore[no-any-return]


def make_options(options: SandboxOptions | None = None, **fields: Any) -> SandboxOptions:
    """``options`` with ``fields`` replaced, or ``SandboxOptions(**fields)``.

    >>> make_options(listings=100).listings
    100
    """
    if options is None:
        return SandboxOptions(**fields)
    return dataclasses.replace(options, **fields) if fields else options


def _bind(host: str, port: int, *, listen: bool = True) -> socket.socket:
    """A listening TCP socket on (host, port); port 0 picks a free one. ``listen=False``: bound
    only (the port is reserved, and a connection is refused until someone listens)."""
    if not 0 <= port <= 65535:
        raise ValueError(f"port: must be within 0..65535, got {port}")
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        if listen:
            sock.listen(2048)
    except OSError:
        sock.close()
        raise
    return sock


#: Said when the sandbox listens beyond this machine: it is a test server.
EXPOSED = (
    "the sandbox listens on %s, beyond this machine: it is for testing. Anyone who can reach it "
    "gets the documented demo credentials' access, its admin routes (the clock; tokens in open "
    "mode) and its synthetic personal data (contacts). Bind to 127.0.0.1 unless you mean it."
)


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (127.0.0.0/8, ::1, localhost).

    >>> is_loopback("127.0.0.1"), is_loopback("localhost"), is_loopback("0.0.0.0")
    (True, True, False)
    """
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


def _config(
    app: Starlette, *, log_level: str, access_log: bool, own_logging: bool
) -> uvicorn.Config:
    config = uvicorn.Config(
        app,
        http="h11",
        ws="none",
        lifespan="off",
        log_level=log_level,
        access_log=access_log,
        log_config=LOGGING_CONFIG if own_logging else None,
        timeout_graceful_shutdown=3,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,  # said in every answer's Keep-Alive header
        server_header=False,
    )
    install_log_filter()
    return config


@contextmanager
def start(
    options: SandboxOptions | None = None,
    *,
    host: str = DEFAULT_HOST,
    port: int = 0,
    log_level: str = "warning",
    access_log: bool = False,
    sock: socket.socket | None = None,
    **fields: Any,
) -> Iterator[RunningSandbox]:
    """Like :func:`serve`, but yields a :class:`RunningSandbox` (URL plus admin handle).
    ``sock``: a socket bound already (its port reserved earlier); served instead of ``host`` and
    ``port``, and closed on exit like one of its own.

    >>> with start(listings=300) as sandbox:  # doctest: +SKIP
    ...     sandbox.admin.faults.requests
    0
    """
    resolved = make_options(options, **fields)
    if sock is None:
        sock = _bind(host, port)  # fail fast on a busy port, before generating the data
    else:
        sock.listen(2048)
        host = sock.getsockname()[0]
    if not is_loopback(host):  # (the command line prints it itself)
        logging.getLogger("realtyframes.sandbox").warning(EXPOSED, host)
    try:
        app = create_app(resolved)
    except BaseException:
        sock.close()
        raise
    server = uvicorn.Server(
        _config(app, log_level=log_level, access_log=access_log, own_logging=False)
    )
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="realtyframes-sandbox", daemon=True
    )
    thread.start()
    try:
        deadline = time.monotonic() + _START_TIMEOUT
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the sandbox server did not start on {_url(sock)}")
            time.sleep(0.005)
        yield RunningSandbox(_url(sock), app)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


@contextmanager
def serve(
    options: SandboxOptions | None = None,
    *,
    host: str = DEFAULT_HOST,
    port: int = 0,
    log_level: str = "warning",
    access_log: bool = False,
    **fields: Any,
) -> Iterator[str]:
    """Run a sandbox in a background thread and yield its base URL; stop it on exit.

    Keyword arguments are :class:`SandboxOptions` fields (or pass ``options=``). The data is
    generated before the URL is yielded; port 0 (the default) picks a free port.

    >>> with serve(listings=2000, protected=True) as url:  # doctest: +SKIP
    ...     print(url)
    http://127.0.0.1:54321
    """
    with start(
        options, host=host, port=port, log_level=log_level, access_log=access_log, **fields
    ) as sandbox:
        yield sandbox.url


def run_forever(
    options: SandboxOptions,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    on_ready: Callable[[str], None] | None = None,
    log_level: str = "warning",
    access_log: bool = False,
) -> None:
    """Serve in the calling (main) thread until SIGINT/SIGTERM; ``on_ready(url)`` once listening.

    >>> run_forever(SandboxOptions(), port=8642, on_ready=print)  # doctest: +SKIP
    """
    sock = _bind(host, port)  # fail fast on a busy port, before generating the data
    try:
        app = create_app(options)
        server = uvicorn.Server(
            _config(app, log_level=log_level, access_log=access_log, own_logging=True)
        )
        if on_ready is not None:
            on_ready(_url(sock))
        server.run(sockets=[sock])
    finally:
        sock.close()
