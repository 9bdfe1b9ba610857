"""The spec's operations are a plain table on the loaders' floor, above the api (#33): a load's
parameters are validated and keyed there and handed down once. ``prepare`` works in a fresh
interpreter without pandas (the command line's help reads the tables); the api has no table of
its own, and ``ApiClient.call`` validates with the ``prepare`` it was given (a ``Client`` gives
the loaders'), else refuses before any request."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

import realtyframes.api
from realtyframes import Client
from realtyframes.api import ApiClient
from realtyframes.errors import QueryError
from realtyframes.loaders import ENDPOINTS, OPERATIONS, Operation, prepare

SRC = Path(__file__).resolve().parents[2] / "src"


def _fresh(code: str) -> str:
    """Run ``code`` in a new interpreter on this worktree's sources; its standard output."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_prepare_works_in_a_fresh_interpreter_without_pandas() -> None:
    out = _fresh(
        "import sys, json\n"
        "from realtyframes.loaders import prepare\n"
        "r = prepare('listings', {'City': 'Miami'})\n"
        "print(json.dumps([r.path, r.params, r.host, 'pandas' in sys.modules]))\n"
    )
    assert json.loads(out) == ["/v1/listings", {"City": "Miami"}, "base", False]


def test_the_python_c_line_of_the_issue_prints_the_request() -> None:
    out = _fresh(
        "from realtyframes.loaders import prepare; print(prepare('listings', {'City': 'Miami'}))"
    )
    assert "path='/v1/listings'" in out and "'City': 'Miami'" in out


def test_the_api_holds_no_operations_table() -> None:
    for name in ("OPERATIONS", "Operation", "prepare", "validate_listing_search", "refuse_none"):
        assert not hasattr(realtyframes.api, name), name


def test_api_client_call_validates_with_the_prepare_it_was_given(sandbox_url: str) -> None:
    sent: list[httpx.Request] = []
    hooks = {"request": [sent.append]}
    with ApiClient(sandbox_url, event_hooks=hooks, prepare=prepare) as api:
        page = api.call("listings", {"City": "Miami", "Limit": 2})
        assert (page["limit"], len(page["listings"])) == (2, 2)
        with pytest.raises(QueryError) as caught:
            api.call("listings", {"Citty": "Miami"})
        assert caught.value.param == "Citty"
    assert len(sent) == 1  # the refused call sent nothing


def test_api_client_call_without_a_table_refuses_before_any_request(sandbox_url: str) -> None:
    sent: list[httpx.Request] = []
    hooks = {"request": [sent.append]}
    with ApiClient(sandbox_url, event_hooks=hooks) as api, pytest.raises(QueryError) as caught:
        api.call("me")
    assert caught.value.param == "operation"
    assert "realtyframes.loaders.prepare" in str(caught.value)
    assert sent == []


def test_a_clients_api_validates_with_the_loaders_table(sandbox_url: str, tmp_path: Path) -> None:
    with Client(base_url=sandbox_url, cache_dir=tmp_path) as client:
        before = client.api.request_counts()
        with pytest.raises(QueryError, match="did you mean 'City'"):
            client.api.call("listings", {"city": "Miami"})
        assert (client.api.request_counts() - before).requests == 0
        assert client.api.with_options(timeout=5.0).call("me")["plan"]


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
