"""The spec's operations are a plain table in ``api/``: ``prepare`` and ``ApiClient.call`` work in
a fresh interpreter that never imported the loaders, and the loaders' endpoints carry its rows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from realtyframes.api import OPERATIONS, Operation, prepare
from realtyframes.errors import QueryError
from realtyframes.loaders import ENDPOINTS

SRC = Path(__file__).resolve().parents[2] / "src"


def _fresh(code: str) -> str:
    """Run ``code`` in a new interpreter on this worktree's sources; its standard output."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_prepare_works_in_a_fresh_interpreter_without_the_loaders() -> None:
    out = _fresh(
        "import sys, json\n"
        "from realtyframes.api import prepare\n"
        "r = prepare('listings', {'City': 'Miami'})\n"
        "print(json.dumps([r.path, r.params, r.host, 'realtyframes.loaders' in sys.modules]))\n"
    )
    assert json.loads(out) == ["/v1/listings", {"City": "Miami"}, "base", False]


def test_api_client_call_works_in_a_fresh_interpreter(sandbox_url: str) -> None:
    out = _fresh(
        "import sys, json\n"
        "from realtyframes.api import ApiClient\n"
        f"with ApiClient({sandbox_url!r}) as api:\n"
        "    page = api.call('listings', {'City': 'Miami', 'Limit': 2})\n"
        "print(json.dumps([page['limit'], len(page['listings'])]))\n"
    )
    assert json.loads(out) == [2, 2]


def test_the_python_c_line_of_the_issue_prints_the_request() -> None:
    out = _fresh(
        "from realtyframes.api import prepare; print(prepare('listings', {'City': 'Miami'}))"
    )
    assert "path='/v1/listings'" in out and "'City': 'Miami'" in out


def test_the_table_is_read_only() -> None:
    with pytest.raises(TypeError):
        OPERATIONS["extra"] = OPERATIONS["me"]  # type: ignore[index]


def test_every_endpoint_carries_its_operation() -> None:
    assert list(ENDPOINTS) == list(OPERATIONS)
    for name, endpoint in ENDPOINTS.items():
        assert endpoint.operation is OPERATIONS[name]
        assert (endpoint.name, endpoint.host, endpoint.path) == (
            name,
            OPERATIONS[name].host,
            OPERATIONS[name].path,
        )


def test_an_unknown_operation_lists_the_table() -> None:
    with pytest.raises(QueryError) as info:
        prepare("analytix", {})
    assert "did you mean 'analytics'" in str(info.value)
    assert info.value.allowed == ", ".join(OPERATIONS)


def test_an_operation_builds_its_path() -> None:
    assert isinstance(OPERATIONS["contact"], Operation)
    assert OPERATIONS["contact"].at("c 1") == "/v1/contacts/c%201"
