"""Options checked before any load (``realtyframes.cli._preflight``): one line, exit 2, nothing
written, no request made and no sandbox started."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from realtyframes.cli import main
from realtyframes.cli._preflight import CHECKS, Check, preflight
from realtyframes.sandbox import RunningSandbox


def _clean_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REALTYFRAMES_")}
    home = tmp_path / "home"
    return {**env, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"), "MPLBACKEND": "Agg"}  # fmt: skip


def _only_line(stderr: str, prog: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith(f"realtyframes {prog}: error: --out: "), stderr
    return lines[0]


def test_report_out_that_is_a_file_fails_before_the_sandbox_starts(tmp_path: Path) -> None:
    """A real process with nothing configured: today's report loads the whole market on the
    embedded sandbox first. Now: one line, exit 2, no cache (nothing loaded), no synthetic-data
    notice (no sandbox), the file untouched."""
    target = tmp_path / "taken.txt"
    target.write_text("mine")
    result = subprocess.run(
        [sys.executable, "-m", "realtyframes.cli", "report", "market", "--out", str(target)],
        cwd=tmp_path,
        env=_clean_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    line = _only_line(result.stderr, "report market")
    assert f"'{target}' is a file, not a folder" in line
    assert result.stdout == "" and target.read_text() == "mine"
    assert not (tmp_path / "home" / ".cache").exists()  # nothing was loaded or cached
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken.txt"]


def test_report_out_that_cannot_be_created_or_written(
    sandbox: RunningSandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder under a file cannot be created; a folder of sysfs takes no file even for root.
    The configured sandbox counts the requests: none."""
    (tmp_path / "file").write_text("x")
    before = sandbox.admin.faults.requests
    connection = ["--base-url", sandbox.url, "--cache-dir", str(tmp_path / "cache")]
    cases = {
        str(tmp_path / "file" / "reports"): "is a file",
        "/sys/realtyframes-reports": "cannot be created in '/sys'",
        "/sys": "cannot write in the folder '/sys'",
    }
    for out, expected in cases.items():
        assert main(["report", "market", "--out", out, *connection]) == 2
        line = _only_line(capsys.readouterr().err, "report market")
        assert expected in line, line
    assert sandbox.admin.faults.requests == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_fetch_and_mcp_call_out_that_is_a_folder(
    sandbox: RunningSandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    before = sandbox.admin.faults.requests
    connection = ["--base-url", sandbox.url, "--cache-dir", str(tmp_path / "cache")]
    assert main(["fetch", "listings", "--out", str(folder), *connection]) == 2
    assert "is a folder; give a file name" in _only_line(capsys.readouterr().err, "fetch")
    args = ["mcp", "call", "search_listings", "--out", str(folder), *connection]
    assert main(args) == 2
    assert "is a folder" in _only_line(capsys.readouterr().err, "mcp call")
    under_a_file = tmp_path / "notes.txt"
    under_a_file.write_text("x")
    assert main(["fetch", "listings", "--out", str(under_a_file / "m.csv"), *connection]) == 2
    assert "cannot be created" in _only_line(capsys.readouterr().err, "fetch")
    assert sandbox.admin.faults.requests == before
    assert list(folder.iterdir()) == [] and not (tmp_path / "cache").exists()


def test_a_new_check_joins_the_table(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The way the docstring tells other options to join: one row in CHECKS."""
    import argparse

    row = Check("--edition", "edition", lambda v: None if v == "client" else f"unknown {v!r}")
    monkeypatch.setitem(CHECKS, "report market", (*CHECKS["report market"], row))
    fine = argparse.Namespace(out=None, edition="client")
    assert preflight("report market", fine) is None
    assert preflight("report market", argparse.Namespace(out=None, edition="x")) == 2
    assert capsys.readouterr().err == "realtyframes report market: error: --edition: unknown 'x'\n"


def test_brokerage_out_that_is_a_file_makes_no_request(
    sandbox: RunningSandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``report brokerage`` runs the same check on its ``--out`` before it loads anything."""
    target = tmp_path / "taken.txt"
    target.write_text("mine")
    before = sandbox.admin.faults.requests
    args = ["report", "brokerage", "--out", str(target), "--base-url", sandbox.url,
            "--cache-dir", str(tmp_path / "cache")]  # fmt: skip
    assert main(args) == 2
    line = _only_line(capsys.readouterr().err, "report brokerage")
    assert f"'{target}' is a file, not a folder" in line
    assert sandbox.admin.faults.requests == before and target.read_text() == "mine"
