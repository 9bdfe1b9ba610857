"""The loopback listener of :func:`realtyframes.oauth.login`: one OAuth callback, then it stops.

Only loopback ``http`` redirect URIs are accepted (RFC 8252 7.3: any port); the request line
carries the code, so nothing is logged.

>>> _listen_target("http://localhost:5000/cb").bind_host
'127.0.0.1'
"""

from __future__ import annotations

import html
import ipaddress
import socket
import socketserver
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from realtyframes.errors import OAuthError, QueryError

CALLBACK_PATH = "/callback"

_DONE_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>realtyframes</title></head><body style="font-family: system-ui, sans-serif">
<h1>{title}</h1><p>{text}</p></body></html>"""


class _CallbackServer(HTTPServer):
    result: dict[str, str] | None
    received: threading.Event
    callback_path: str = CALLBACK_PATH

    def server_bind(self) -> None:
        # HTTPServer.server_bind does a reverse DNS lookup (getfqdn); a loopback listener needs none.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = str(self.server_address[0]), self.server_address[1]


class _CallbackServer6(_CallbackServer):
    address_family = socket.AF_INET6


@dataclass(frozen=True)
class _Listen:
    """Where the loopback listener binds, and how the redirect URI names it."""

    bind_host: str
    port: int  # 0: an ephemeral port
    uri_host: str  # as written in the redirect URI (brackets for IPv6)
    path: str
    query: str = ""  # kept in the redirect URI; the callback adds code and state to it

    def uri(self, port: int) -> str:
        query = f"?{self.query}" if self.query else ""
        return f"http://{self.uri_host}:{port}{self.path}{query}"


def _listen_target(redirect_uri: str | None) -> _Listen:
    """Parse and check a ``redirect_uri`` for :func:`login` (loopback ``http`` only)."""
    if redirect_uri is None:
        return _Listen("127.0.0.1", 0, "127.0.0.1", CALLBACK_PATH)
    allowed = (
        "an http URI on a loopback host: http://127.0.0.1:<port>/<path>, "
        "http://[::1]:<port>/<path> or http://localhost:<port>/<path>"
    )
    if not isinstance(redirect_uri, str) or not redirect_uri.strip():
        raise QueryError("redirect_uri", "expected a non-empty string", allowed)
    parts = urlsplit(redirect_uri.strip())
    if parts.username is not None or parts.password is not None:  # not echoed: may be secret
        raise QueryError("redirect_uri", "must not carry user:password@ credentials", allowed)
    try:
        port = parts.port
    except ValueError:
        raise QueryError("redirect_uri", f"{redirect_uri!r} has an invalid port", allowed) from None
    host = (parts.hostname or "").lower()
    if parts.scheme != "http":
        raise QueryError(
            "redirect_uri", f"{redirect_uri!r}: the listener speaks plain http only", allowed
        )
    if parts.fragment or redirect_uri.strip().endswith("#"):
        raise QueryError("redirect_uri", f"{redirect_uri!r} must not have a fragment", allowed)
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise QueryError(
            "redirect_uri", f"{host or redirect_uri!r} is not a loopback host", allowed
        )
    bind_host = "127.0.0.1" if host == "localhost" else host
    uri_host = f"[{host}]" if ":" in host else host
    return _Listen(bind_host, port or 0, uri_host, parts.path or "/", parts.query)


def _callback_server(target: _Listen) -> _CallbackServer:
    cls = _CallbackServer6 if ":" in target.bind_host else _CallbackServer
    try:
        server = cls((target.bind_host, target.port), _CallbackHandler)
    except OSError as exc:
        raise QueryError(
            "redirect_uri",
            f"cannot listen on {target.uri_host}:{target.port} ({exc.strerror or exc})",
            "a free port on this machine (or omit the port for an ephemeral one)",
        ) from None
    server.callback_path = target.path
    server.result = None
    server.received = threading.Event()
    server.timeout = 0.2
    return server


def wait_for_callback(
    server: _CallbackServer, timeout: float, present: Callable[[], object]
) -> dict[str, str]:
    """Serve ``server`` until one callback arrives (its query) or ``timeout`` seconds pass
    (:class:`OAuthError`); ``present`` (showing the consent page) runs once it listens. The
    server is closed afterwards."""
    deadline = time.monotonic() + timeout

    def listen() -> None:
        while not server.received.is_set() and time.monotonic() < deadline:
            server.handle_request()

    listener = threading.Thread(target=listen, name="realtyframes-oauth-callback", daemon=True)
    listener.start()
    try:
        present()
        if not server.received.wait(max(0.0, deadline - time.monotonic())):
            raise OAuthError(f"no authorization callback within {timeout:g} s")
        listener.join(timeout=5)
    finally:
        server.received.set()
        server.server_close()
    return server.result or {}


class _CallbackHandler(BaseHTTPRequestHandler):
    server: _CallbackServer

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        if parts.path != self.server.callback_path or self.server.received.is_set():
            self._answer(404, "Not found", "This address only takes one OAuth callback.")
            return
        query = {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        self.server.result = query
        self.server.received.set()
        if "error" in query:
            self._answer(400, "Authorization refused", "You can close this window.")
        else:
            self._answer(200, "Authorization received", "You can close this window and go back.")

    def _answer(self, status: int, title: str, text: str) -> None:
        body = _DONE_PAGE.format(title=html.escape(title), text=html.escape(text)).encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # the URL carries the code: no logs
        return
