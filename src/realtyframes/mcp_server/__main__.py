"""``python -m realtyframes.mcp_server [--port N]``: serve the tools (what ``realtyframes mcp
serve`` runs). The client is ``rf.Client()``: ``REALTYFRAMES_*`` > config file > the embedded
sandbox (its "synthetic data" warning goes to stderr, as every log line does).

>>> parse_args(["--port", "8765"]).port
8765
"""

from __future__ import annotations

import argparse
import logging
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from realtyframes._client import Client

__all__ = ["add_port", "main", "parse_args", "run"]


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port number (1 to 65535)")
    return port


def add_port(parser: argparse.ArgumentParser) -> None:
    """Add ``--port N`` (streamable HTTP on 127.0.0.1; default: stdio)."""
    parser.add_argument(
        "--port",
        type=_port,
        metavar="N",
        help="serve streamable HTTP on http://127.0.0.1:N/mcp instead of stdio",
    )


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The arguments of ``python -m realtyframes.mcp_server``."""
    parser = argparse.ArgumentParser(
        prog="python -m realtyframes.mcp_server", description=__doc__.split("\n\n")[0]
    )
    add_port(parser)
    return parser.parse_args(argv)


def run(factory: Callable[[], Client], port: int | None = None) -> int:
    """Serve until stopped (stdio ends with its input); the exit code."""
    from realtyframes.mcp_server._server import serve

    serve(factory, port)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Serve with ``rf.Client()``, logs and warnings on stderr."""
    args = parse_args(argv)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("realtyframes mcp: %(levelname)s: %(message)s"))
    logging.getLogger("realtyframes").addHandler(handler)
    logger = logging.getLogger("realtyframes")
    logger.setLevel(logging.WARNING)

    def show(message: object, category: type[Warning], *_args: object, **_kw: object) -> None:
        logger.warning("%s: %s", category.__name__, message)

    warnings.showwarning = show  # one line on stderr, never on stdout (the protocol)

    from realtyframes._client import Client

    return run(Client, args.port)


if __name__ == "__main__":
    sys.exit(main())
