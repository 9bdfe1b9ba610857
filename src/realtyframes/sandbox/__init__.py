"""The embedded sandbox: a real HTTP server implementing the whole service spec.

A second, independent implementation of the spec (it imports nothing from the client side), with
deterministic synthetic data, an open and a protected mode, an adjustable clock and faults.

>>> from realtyframes.sandbox import serve
>>> with serve(listings=2000) as url:  # doctest: +SKIP
...     httpx.get(f"{url}/v1/listings", params={"City": "Miami"}).json()["total"]
"""

from __future__ import annotations

from realtyframes.sandbox._app import SandboxAdmin, create_app
from realtyframes.sandbox._embedded import EmbeddedSandbox, embedded
from realtyframes.sandbox._options import DEMO, Faults, SandboxOptions
from realtyframes.sandbox._server import RunningSandbox, serve, start

__all__ = [
    "DEMO",
    "EmbeddedSandbox",
    "Faults",
    "RunningSandbox",
    "SandboxAdmin",
    "SandboxOptions",
    "create_app",
    "embedded",
    "serve",
    "start",
]
