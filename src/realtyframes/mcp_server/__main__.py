"""``python -m realtyframes.mcp_server [--port N [--host H] [--auth-token T]]``: serve the tools
(what ``realtyframes mcp serve`` runs). The client is ``rf.Client()``: ``REALTYFRAMES_*`` > config
file > the embedded sandbox (its "synthetic data" warning goes to stderr, as every log line does).
Over HTTP, a bearer token (``--auth-token`` or ``REALTYFRAMES_MCP_AUTH_TOKEN``) is required from
clients when set, and needed to bind anything but a loopback address.

>>> parse_args(["--port", "8765"]).port
8765
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from realtyframes.errors import ConfigError
from realtyframes.mcp_server._http import AUTH_ENV, AuthToken, check_bind

if TYPE_CHECKING:
    from realtyframes._client import Client

__all__ = ["add_http_arguments", "http_options", "main", "parse_args", "run"]

#: The default interface of the HTTP transport.
DEFAULT_HOST = "127.0.0.1"


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port number (1 to 65535)")
    return port


def _token(text: str) -> AuthToken:
    try:
        return AuthToken(text)
    except ConfigError:
        raise argparse.ArgumentTypeError("empty or not a header value") from None


def add_http_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--port N`` (streamable HTTP; default: stdio), ``--host`` and ``--auth-token``."""
    group = parser.add_argument_group(
        "HTTP transport",
        f"with --port, clients must send Authorization: Bearer <token> when a token is set "
        f"(--auth-token, else {AUTH_ENV}); an address other than loopback needs one",
    )
    group.add_argument(
        "--port",
        type=_port,
        metavar="N",
        help="serve streamable HTTP on http://HOST:N/mcp instead of stdio",
    )
    group.add_argument(
        "--host",
        metavar="HOST",
        help=f"address to bind with --port (default {DEFAULT_HOST}; another than loopback "
        "needs a token)",
    )
    group.add_argument(
        "--auth-token",
        type=_token,
        metavar="TOKEN",
        help=f"bearer token MCP clients must send over HTTP (prefer {AUTH_ENV}: flags show in "
        "the process list); not the API credential --token",
    )


def http_options(args: argparse.Namespace, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``serve()``'s ``port``, ``host`` and ``auth_token`` from the flags and the environment.

    ``--host``/``--auth-token`` without ``--port`` and a non-loopback host without a token are a
    :class:`~realtyframes.ConfigError` (the environment's token is ignored on stdio).

    >>> http_options(parse_args(["--port", "8765"]), env={})
    {'port': 8765, 'host': '127.0.0.1', 'auth_token': None}
    """
    port = getattr(args, "port", None)
    host, given = getattr(args, "host", None), getattr(args, "auth_token", None)
    if port is None:
        for flag, value in (("--host", host), ("--auth-token", given)):
            if value is not None:
                raise ConfigError(flag, "applies to HTTP only", "with --port N")
        return {"port": None, "host": DEFAULT_HOST, "auth_token": None}
    env = os.environ if env is None else env
    token = given if given is not None else AuthToken.from_options(None, env)
    host = DEFAULT_HOST if host is None else host
    check_bind(host, token)
    return {"port": port, "host": host, "auth_token": token}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m realtyframes.mcp_server", description=__doc__.split("\n\n")[0]
    )
    add_http_arguments(parser)
    return parser


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The arguments of ``python -m realtyframes.mcp_server``."""
    return _parser().parse_args(argv)


def run(factory: Callable[[], Client], port: int | None = None, **http: Any) -> int:
    """Serve until stopped (stdio ends with its input); the exit code. ``http``: ``host``,
    ``auth_token`` (see :func:`http_options`)."""
    from realtyframes.mcp_server._server import serve

    serve(factory, port, **http)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Serve with ``rf.Client()``, logs and warnings on stderr; a bad option: exit 2."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        options = http_options(args)
    except ConfigError as error:
        parser.error(str(error))  # usage and the reason on stderr, exit 2, as a bad option
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("realtyframes mcp: %(levelname)s: %(message)s"))
    logging.getLogger("realtyframes").addHandler(handler)
    logger = logging.getLogger("realtyframes")
    logger.setLevel(logging.WARNING)

    def show(message: object, category: type[Warning], *_args: object, **_kw: object) -> None:
        logger.warning("%s: %s", category.__name__, message)

    warnings.showwarning = show  # one line on stderr, never on stdout (the protocol)

    from realtyframes._client import Client

    return run(Client, **options)


if __name__ == "__main__":
    sys.exit(main())
