"""Session fixtures shared by every test area: real sandbox servers on loopback.

- ``sandbox_url``: open mode, seed 7, 3000 listings over the default 3 years of history, clock
  fixed at :data:`AS_OF`.
- ``protected_sandbox_url``: the same data in protected mode, with a quota so large that tests
  are never throttled (tests of the quota itself start their own server).
- ``sandbox`` / ``protected_sandbox``: the same servers as :class:`RunningSandbox` (``.url``,
  ``.admin``). Read-only use: never move the clock or change the state of a session server.
- ``http_client``: a shared ``httpx.Client`` (absolute URLs).
- ``start_sandbox``: a factory for a fresh server with custom options, stopped after the test:
  ``sb = start_sandbox(protected=True, faults=Faults(error_rate=1.0))``; defaults are seed 7,
  clock :data:`AS_OF` and a small data set of one year (:data:`SMALL`); use it for clock changes
  and faults.
- ``fault_proxy``: a factory for a fault-injecting proxy in front of a server (tests/faultproxy.py):
  ``proxy = fault_proxy(sb.url); proxy.set("stale_page", times=1)``; clients use ``proxy.url``.
- ``spark``: a local PySpark session (marker ``spark``; needs Java, which ``.ci/run`` installs).
- ``start_mcp_serve``: a factory for ``python -m realtyframes.mcp_server --port N`` as a process
  (streamable HTTP on loopback), on a given sandbox and a temporary cache, stopped after the test.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import settings

from faultproxy import FaultProxy, start_proxy
from realtyframes.sandbox import RunningSandbox, start
from sandbox_options import AS_OF, SESSION_OPTIONS, SMALL

# Hypothesis profiles: `dev` (the default on a workstation: random examples, remembered in the local
# example database) and `ci` (under CI: derandomized, so a run is reproducible, and a failure prints
# the blob that replays it). HYPOTHESIS_PROFILE picks one explicitly. A test's own
# @settings(max_examples=...) still wins over the profile's count.
settings.register_profile("dev", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True, print_blob=True, database=None)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)


@pytest.fixture(scope="session")
def sandbox_as_of() -> datetime:
    """The clock of the shared servers (and the default of ``start_sandbox``)."""
    return AS_OF


@pytest.fixture(scope="session")
def sandbox() -> Iterator[RunningSandbox]:
    """The shared open-mode sandbox (read-only use)."""
    with start(**SESSION_OPTIONS) as running:
        yield running


@pytest.fixture(scope="session")
def sandbox_url(sandbox: RunningSandbox) -> str:
    """Base URL of the shared open-mode sandbox."""
    return sandbox.url


@pytest.fixture(scope="session")
def protected_sandbox() -> Iterator[RunningSandbox]:
    """The shared protected-mode sandbox (read-only use), never throttled."""
    with start(**SESSION_OPTIONS, protected=True, rate_limit=(1_000_000, 60.0)) as running:
        yield running


@pytest.fixture(scope="session")
def protected_sandbox_url(protected_sandbox: RunningSandbox) -> str:
    """Base URL of the shared protected-mode sandbox."""
    return protected_sandbox.url


@pytest.fixture(scope="session")
def http_client() -> Iterator[httpx.Client]:
    """One shared httpx client (building a client per request costs ~50 ms of TLS set-up)."""
    with httpx.Client(timeout=30) as client:
        yield client


@pytest.fixture
def start_sandbox() -> Iterator[Callable[..., RunningSandbox]]:
    """Start fresh sandboxes with custom options; each is stopped when the test ends."""
    with ExitStack() as stack:

        def _start(**options: Any) -> RunningSandbox:
            merged = {"seed": 7, "as_of": AS_OF, **SMALL, **options}
            return stack.enter_context(start(**merged))

        yield _start


@pytest.fixture
def fault_proxy() -> Iterator[Callable[[str], FaultProxy]]:
    """Start fault-injecting proxies in front of a base URL; each is stopped when the test ends."""
    with ExitStack() as stack:

        def _start(upstream: str) -> FaultProxy:
            return stack.enter_context(start_proxy(upstream))

        yield _start


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    """A local PySpark session (2 threads). Without Java or PySpark: a failure under CI
    (``.ci/run`` installs openjdk-17-jre-headless, ``make test-spark`` the spark extra), a skip
    that says why elsewhere."""
    if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
        if os.environ.get("CI"):
            pytest.fail(
                "CI needs Java 17 for PySpark (openjdk-17-jre-headless; .ci/run installs it)"
            )
        pytest.skip("no Java runtime for PySpark (Debian package openjdk-17-jre-headless)")
    if importlib.util.find_spec("pyspark") is None:
        why = "PySpark is in the spark extra: `make test-spark` runs these in .venv-spark"
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("realtyframes-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        # not UTC on purpose: the metrics compare instants, whatever the session's zone
        .config("spark.sql.session.timeZone", "America/New_York")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@dataclass
class McpServe:
    """A running ``mcp serve`` over HTTP: its ``/mcp`` URL and process."""

    url: str
    process: subprocess.Popen[bytes]
    output: tuple[str, str] | None = None

    def stop(self) -> tuple[str, str]:
        """Stop it (if running); its (stdout, stderr)."""
        if self.output is None:
            if self.process.poll() is None:
                self.process.terminate()
            out, err = self.process.communicate(timeout=30)
            self.output = out.decode(errors="replace"), err.decode(errors="replace")
        return self.output


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def start_mcp_serve(tmp_path: Path) -> Iterator[Callable[..., McpServe]]:
    """``start(base_url, *flags, env={...})``: ``python -m realtyframes.mcp_server --port N
    *flags`` with ``REALTYFRAMES_BASE_URL=base_url``, a temporary cache and ``env`` (no other
    ``REALTYFRAMES_*``), once it accepts connections; stopped when the test ends."""
    started: list[McpServe] = []

    def _start(base_url: str, *flags: str, env: dict[str, str] | None = None) -> McpServe:
        port = free_port()
        environ = {k: v for k, v in os.environ.items() if not k.startswith("REALTYFRAMES_")}
        environ.update(REALTYFRAMES_BASE_URL=base_url, REALTYFRAMES_CACHE_DIR=str(tmp_path))
        command = [sys.executable, "-m", "realtyframes.mcp_server", "--port", str(port), *flags]
        process = subprocess.Popen(command, env={**environ, **(env or {})},
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE)  # fmt: skip
        served = McpServe(f"http://127.0.0.1:{port}/mcp", process)
        started.append(served)
        deadline = time.monotonic() + 60
        while True:  # until it listens (or died)
            if process.poll() is not None:
                raise AssertionError(f"mcp serve exited: {served.stop()}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return served
            except OSError:
                assert time.monotonic() < deadline, "mcp serve did not start"
                time.sleep(0.2)

    yield _start
    for served in started:
        served.stop()
