"""The MCP Inspector CLI (npm ``@modelcontextprotocol/inspector``, pinned in ``package.json`` next
to this file) as an outside client: an MCP client built on the official TypeScript SDK, which
validates ``structuredContent`` against a tool's ``outputSchema``.

Install it with ``npm ci --prefix tests/mcp_clients`` (``.ci/run`` does, after installing Node
from the operating system's packages when ``node`` is missing). The session fixture
``inspector`` finds ``node_modules/.bin/mcp-inspector`` and checks it runs; when it cannot, the
tests fail under CI (``CI`` set) and are skipped elsewhere, saying why (as the ``spark`` fixture).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest

CLIENTS = Path(__file__).parent
BINARY = CLIENTS / "node_modules" / ".bin" / "mcp-inspector"
PINNED = json.loads((CLIENTS / "package.json").read_text("utf-8"))["dependencies"][
    "@modelcontextprotocol/inspector"
]
#: The oldest Node major the pinned Inspector runs on here (it declares >= 22.19; 20 works).
MIN_NODE = 20


@dataclass(frozen=True)
class Run:
    """One Inspector CLI run: exit code, stdout, stderr."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def result(self) -> dict[str, Any]:
        """The JSON result it printed on stdout."""
        return dict(json.loads(self.stdout))


@dataclass(frozen=True)
class Inspector:
    """The installed Inspector CLI, run with a private HOME (its catalog and OAuth store)."""

    binary: Path
    home: Path

    def __call__(
        self, url: str, method: str, *flags: str, headers: dict[str, str] | None = None
    ) -> Run:
        """``mcp-inspector --cli URL --transport http --method METHOD *flags`` (never starts
        interactive OAuth: ``--stored-auth-only``)."""
        command = [str(self.binary), "--cli", url, "--transport", "http", "--method", method]
        command += [*flags, "--stored-auth-only"]
        for name, value in (headers or {}).items():
            command += ["--header", f"{name}: {value}"]
        env = {**os.environ, "HOME": str(self.home), "NO_COLOR": "1"}
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
        return Run(done.returncode, done.stdout, done.stderr)

    def call(self, url: str, tool: str, *args: str, **kw: Any) -> Run:
        """``tools/call`` of ``tool`` with ``--tool-arg`` ``args`` (``key=value``)."""
        flags = ["--tool-name", tool, *(f for arg in args for f in ("--tool-arg", arg))]
        return self(url, "tools/call", *flags, **kw)


def _unavailable(why: str) -> NoReturn:
    why += "; install it with: npm ci --prefix tests/mcp_clients (.ci/run does)"
    if os.environ.get("CI"):
        pytest.fail(f"CI needs the MCP Inspector CLI: {why}")
    pytest.skip(why)


@pytest.fixture(scope="session")
def inspector(tmp_path_factory: pytest.TempPathFactory) -> Inspector:
    """The pinned MCP Inspector CLI (see the module docstring)."""
    node = shutil.which("node")
    if node is None:
        _unavailable("no `node` on PATH (Debian packages nodejs npm)")
    version = subprocess.run([str(node), "--version"], capture_output=True, text=True).stdout
    major = re.match(r"v(\d+)\.", version)
    if major is None or int(major.group(1)) < MIN_NODE:
        _unavailable(f"Node {version.strip()} is too old: the Inspector needs Node {MIN_NODE}+")
    if not BINARY.exists():
        _unavailable(f"{BINARY.relative_to(CLIENTS.parent.parent)} is not installed")
    found = subprocess.run([str(BINARY), "--version"], capture_output=True, text=True, timeout=60)
    if PINNED not in found.stdout + found.stderr:
        _unavailable(f"the installed Inspector is not {PINNED}: {found.stdout or found.stderr}")
    return Inspector(BINARY, tmp_path_factory.mktemp("inspector-home"))
