"""The ``mcp serve`` CLI handler and the tool runner in-process: parsing, failures, masking."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

import realtyframes as rf
from realtyframes.cli.mcp_serve import add_serve_parser, run_mcp_serve
from realtyframes.mcp_server import MAX_ROWS, ToolRunner, table

SECRET = "s3cr3t-token-never-shown-0123456789"


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="realtyframes mcp")
    add_serve_parser(parser.add_subparsers(dest="mcp_action"))
    return parser.parse_args(argv)


def test_cli_handler_parses_port_and_connection_flags_and_fails_cleanly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _parse(["serve", "--port", "8765", "--base-url", "http://127.0.0.1:9", "-q"])
    assert args.func is run_mcp_serve and args.port == 8765
    assert args.base_url == "http://127.0.0.1:9"
    # a config file that does not exist stops before serving: one error line on stderr, exit 2
    # (a configuration error is bad usage)
    missing = tmp_path / "missing.toml"
    args = _parse(["serve", "--config", str(missing), "--token", SECRET])
    assert run_mcp_serve(args) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "realtyframes mcp serve: error:" in captured.err and "missing.toml" in captured.err
    assert SECRET not in captured.err


def test_tool_errors_never_show_the_secret(
    protected_sandbox_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    runner = ToolRunner(lambda: rf.Client(base_url=protected_sandbox_url, token=SECRET,
                                          cache_dir=tmp_path))  # fmt: skip
    try:
        body, is_error = runner.call("market_summary", {"City": "Miami Beach"})
        traffic, traffic_error = runner.call("traffic_summary", {"Period": "7d"})
    finally:
        runner.close()
    assert is_error is True and traffic_error is True
    assert body["error"]["type"] == "InvalidTokenError" and body["error"]["status"] == 401
    assert SECRET not in json.dumps([body, traffic]) and SECRET not in caplog.text


def test_table_caps_rows_and_flattens_columns() -> None:
    import pandas as pd

    frame = pd.DataFrame({("sale", "Miami"): range(MAX_ROWS + 5)})
    frame.index.name = "metric"
    out = table(frame)
    assert out["columns"] == ["metric", "sale / Miami"]
    assert out["row_count"] == MAX_ROWS + 5 and out["truncated"] is True
    assert len(out["rows"]) == MAX_ROWS and out["rows"][1] == {"metric": 1, "sale / Miami": 1}


def test_compare_markets_of_a_two_column_by_takes_lists_as_markets(
    sandbox_url: str, tmp_path: Path
) -> None:
    runner = ToolRunner(lambda: rf.Client(base_url=sandbox_url, cache_dir=tmp_path))
    arguments = {
        "City": "Miami Beach",
        "by": ["City", "PropertySubType"],
        "markets": [["Miami Beach", "Condominium"]],
        "metrics": ["active_listings", "median_list_price"],
    }
    try:
        body, is_error = runner.call("compare_markets", arguments)
        scope_error, _ = runner.call("price_drops", {"City": "Miami Beach", "MaxListPrice": 1e6})
    finally:
        runner.close()
    assert is_error is False, body
    assert body["columns"] == ["metric", "Miami Beach / Condominium", "All markets / All markets"]
    assert [row["metric"] for row in body["rows"]] == ["active_listings", "median_list_price"]
    assert body["rows"][0]["Miami Beach / Condominium"] > 0
    error = scope_error["error"]
    assert error["param"] == "MaxListPrice" and "filter the returned frame" in error["message"]
