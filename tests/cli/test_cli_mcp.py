"""``realtyframes mcp tools|call`` against the running sandbox (in-process through ``main``)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from realtyframes.cli import main
from realtyframes.sandbox import DEMO


@pytest.fixture(autouse=True)
def _clean_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No REALTYFRAMES_* settings or config file of this machine; a private cache."""
    for name in ("BASE_URL", "TOKEN", "API_KEY", "LEGACY_URL", "AUTH_URL", "CONFIG"):
        monkeypatch.delenv(f"REALTYFRAMES_{name}", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("REALTYFRAMES_CACHE_DIR", str(tmp_path / "cache"))


def test_tools_lists_both_hosts(sandbox_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "tools", "--base-url", sandbox_url]) == 0
    out = capsys.readouterr().out
    for name in ("search_listings", "get_listing", "listing_changes", "me", "contact_activity"):
        assert f"{name}\n" in out
    assert "required: ListingId" in out
    assert main(["mcp", "tools", "--docs", "--base-url", sandbox_url]) == 0
    docs = capsys.readouterr().out
    assert docs.startswith("search_docs\n") and "required: query" in docs


def test_call_writes_a_table(
    sandbox_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out" / "condos.csv"
    args = ["mcp", "call", "search_listings", "--arg", "City=Miami", "--arg", "Limit=7",
            "--arg", "Subtypes=Condominium,Villa", "--out", str(out), "--base-url", sandbox_url]  # fmt: skip
    assert main(args) == 0
    assert capsys.readouterr().out.strip() == str(out)
    frame = pd.read_csv(out)
    assert len(frame) == 7 and set(frame["PropertySubType"]) <= {"Condominium", "Villa"}


def test_call_prints_json(sandbox_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "call", "me", "--base-url", sandbox_url]) == 0
    assert json.loads(capsys.readouterr().out)["email"] == DEMO.email
    args = ["mcp", "call", "search_docs", "--docs", "--arg", "query=retry after 429",
            "--arg", "limit=1", "--base-url", sandbox_url]  # fmt: skip
    assert main(args) == 0
    (found,) = json.loads(capsys.readouterr().out)
    assert "Retry-After" in found["excerpt"]


def test_bad_arguments_fail_with_one_line(
    sandbox_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = [
        (["search_listings", "--arg", "Limit=many"], "Limit: not an integer"),
        (["search_listings", "--arg", "Status=Sold"], "allowed: Active, Pending"),
        (["search_listings", "--arg", "City"], "is not key=value"),
        (["no_such_tool"], "allowed: contact_activity, get_analytics"),
        (["me", "--out", str(tmp_path / "me.csv")], "one object: use a .json output"),
    ]
    for args, message in cases:
        assert main(["mcp", "call", *args, "--base-url", sandbox_url]) == 1
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err


def test_tool_error_and_masked_key(
    protected_sandbox_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["mcp", "call", "list_contacts", "--base-url", protected_sandbox_url]
    assert main([*args, "--api-key", DEMO.api_key]) == 1
    err = capsys.readouterr().err
    assert "InsufficientScopeError" in err and DEMO.api_key not in err
    assert main([*args, "--api-key", "rfk_secret_but_wrong_42"]) == 1
    err = capsys.readouterr().err
    assert "InvalidTokenError" in err and "rfk_secret_but_wrong_42" not in err
