"""Real servers on loopback that receive notifications: an SMTP server (aiosmtpd, with AUTH on a
plain connection so a test can check the password was used) and an HTTP server keeping each POST
(apprise's ``json://``). Each records what it received; nothing is mocked.

>>> with smtp_server() as inbox: ...  # doctest: +SKIP
"""

from __future__ import annotations

import email
import email.policy
import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Inbox:
    """What the SMTP server received: each message parsed, and the logins it accepted."""

    host: str = "127.0.0.1"
    port: int = 0
    user: str = "watcher"
    password: str = "smtp-pw-Zq81xv"
    messages: list[EmailMessage] = field(default_factory=list)
    logins: list[tuple[str, str]] = field(default_factory=list)

    def url(self, to: str = "analyst@example.com") -> str:
        """An apprise URL sending to this server with its login (no TLS on loopback)."""
        return (
            f"mailto://{self.user}:{self.password}@{self.host}:{self.port}"
            f"?to={to}&from=watcher@example.com&mode=insecure"
        )


class _Handler:
    def __init__(self, inbox: Inbox) -> None:
        self.inbox = inbox

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        parsed = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
        self.inbox.messages.append(parsed)  # type: ignore[arg-type]
        return "250 Message accepted"


@contextmanager
def smtp_server() -> Iterator[Inbox]:
    """An SMTP server on loopback accepting one login (``Inbox.user`` / ``password``)."""
    from aiosmtpd.controller import Controller
    from aiosmtpd.smtp import AuthResult, LoginPassword

    inbox = Inbox(port=free_port())

    def authenticate(server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> Any:
        if isinstance(data, LoginPassword):
            login, password = data.login.decode(), data.password.decode()
            inbox.logins.append((login, password))
            return AuthResult(success=(login, password) == (inbox.user, inbox.password))
        return AuthResult(success=False)

    controller = Controller(
        _Handler(inbox),
        hostname=inbox.host,
        port=inbox.port,
        authenticator=authenticate,
        auth_require_tls=False,
        auth_exclude_mechanism=["CRAM-MD5"],
    )
    controller.start()
    try:
        yield inbox
    finally:
        controller.stop()


@dataclass
class Hook:
    """What the HTTP receiver got: one (path, headers, JSON body) per POST."""

    url: str
    posts: list[tuple[str, dict[str, str], Any]] = field(default_factory=list)
    status: int = 200

    @property
    def bodies(self) -> list[Any]:
        return [body for _, _, body in self.posts]


@contextmanager
def http_receiver() -> Iterator[Hook]:
    """An HTTP server on loopback keeping every POST's path, headers and JSON body."""
    hook = Hook(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body: Any = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
            hook.posts.append((self.path, dict(self.headers.items()), body))
            self.send_response(hook.status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    hook.url = f"127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield hook
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@contextmanager
def dripping_receiver(interval: float = 2.0) -> Iterator[Hook]:
    """An HTTP server on loopback that reads each POST, then answers one byte every
    ``interval`` seconds (a receiver stuck behind a slow proxy): never a read timeout, never
    done. Stopping it ends the answers."""
    hook = Hook(url="")
    stop = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            hook.posts.append((self.path, dict(self.headers.items()), self.rfile.read(length)))
            answer = b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n" + b"." * 1000000
            for byte in answer:
                if stop.wait(interval):
                    return
                try:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                except OSError:
                    return

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    hook.url = f"127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield hook
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
        thread.join()
