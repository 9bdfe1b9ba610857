"""``realtyframes cache list|clear``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from realtyframes import Client
from realtyframes.cli import main


def test_cache_list_and_clear(
    sandbox_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "cache"
    assert main(["cache", "list", "--cache-dir", str(root)]) == 0
    assert f"no cache entries in {root}" in capsys.readouterr().out
    assert not root.exists()  # listing never creates the folder

    with Client(sandbox_url, cache_dir=root, progress=False) as client:
        listings = client.listings(City="Miami")
        client.contacts()
    assert main(["cache", "list", "--cache-dir", str(root)]) == 0
    out = capsys.readouterr().out
    assert f"2 entries in {root}" in out
    assert "listings" in out and "contacts" in out and str(len(listings)) in out
    assert "City" in out and "Miami" in out

    clear = ["cache", "clear", "--resource", "listings", "--cache-dir", str(root)]
    assert main(clear) == 2  # stdin is not a terminal here: nobody to confirm, nothing removed
    err = capsys.readouterr().err
    assert "would remove 1 cache entries" in err and "pass --yes" in err
    assert list((root / "listings").glob("**/*.parquet"))
    assert main([*clear, "--yes"]) == 0
    assert "removed 1 cache entries" in capsys.readouterr().out
    assert not list((root / "listings").glob("**/*.parquet"))
    assert list((root / "contacts").glob("**/*.parquet"))

    assert main(["cache", "clear", "--resource", "No Such", "--cache-dir", str(root)]) == 2
    err = capsys.readouterr().err
    assert "--resource 'No Such'" in err and "allowed: " in err and "market" in err


class _Terminal:
    """stdin as a terminal that answers ``answer`` to the prompt (records the prompts)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, answer: str) -> None:
        self.prompts: list[str] = []
        monkeypatch.setattr("sys.stdin.isatty", lambda: True)
        monkeypatch.setattr("builtins.input", self.ask)
        self.answer = answer

    def ask(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return self.answer


def test_cache_clear_asks_first_and_clears_one_scope(
    sandbox_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = tmp_path / "cache"
    with Client(sandbox_url, cache_dir=root, progress=False) as client:
        client.listings(City="Miami")
        client.listings(City="Doral")
        client.contacts()
    args = ["cache", "clear", "--cache-dir", str(root)]

    terminal = _Terminal(monkeypatch, "n")  # a person says no: nothing goes
    assert main(args) == 1
    assert terminal.prompts == [f"remove 3 cache entries from {root}? [y/N] "]
    assert "nothing removed" in capsys.readouterr().err
    assert len(list((root / "listings").glob("**/*.parquet"))) == 2

    terminal = _Terminal(monkeypatch, "y")  # one scope only, after saying yes
    assert main([*args, "--resource", "listings", "--where", "City=Miami"]) == 0
    assert terminal.prompts == [f"remove 1 cache entries from {root}? [y/N] "]
    assert "removed 1 cache entries" in capsys.readouterr().out
    assert main(["cache", "list", "--cache-dir", str(root)]) == 0
    listed = capsys.readouterr().out
    assert "Doral" in listed and "Miami" not in listed and "contacts" in listed

    terminal = _Terminal(monkeypatch, "n")
    assert main([*args, "--yes"]) == 0  # --yes: no question
    assert terminal.prompts == []
    assert "removed 2 cache entries" in capsys.readouterr().out

    assert main([*args, "--where", "City"]) == 2
    assert "expected NAME=VALUE" in capsys.readouterr().err


def test_cache_dir_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("REALTYFRAMES_CACHE_DIR", str(tmp_path / "env"))
    assert main(["cache", "clear"]) == 0
    assert f"no matching cache entries in {tmp_path / 'env'}" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exited:
        main(["cache"])  # an action is required
    assert exited.value.code == 2


def test_cache_clear_through_a_pipe_removes_nothing_without_yes(
    sandbox_url: str, tmp_path: Path
) -> None:
    """``echo n | realtyframes cache clear``: no terminal, so no answer is guessed (a real process,
    stdin a pipe)."""
    import subprocess
    import sys

    root = tmp_path / "cache"
    with Client(sandbox_url, cache_dir=root, progress=False) as client:
        client.listings(City="Doral")
    command = [sys.executable, "-m", "realtyframes.cli", "cache", "clear", "--cache-dir", str(root)]
    # even a "y" on a pipe is not a person's answer (so neither is the "n")
    done = subprocess.run(command, input="y\n", capture_output=True, text=True, check=False)
    assert done.returncode == 2, done.stderr
    assert "nothing removed (pass --yes)" in done.stderr
    assert list((root / "listings").glob("**/*.parquet"))


def test_output_into_a_closed_pipe_exits_quietly(tmp_path: Path) -> None:
    """``realtyframes cache list | head -1``: the reader is gone before the command writes (the
    pipe's read end closed first, so it is so on every run): exit 141 (128 + SIGPIPE, as a shell
    reports it for a Unix tool), nothing on stderr; before, a BrokenPipeError traceback."""
    read, write = os.pipe()
    os.close(read)
    env = {k: v for k, v in os.environ.items() if not k.startswith("REALTYFRAMES_")}
    try:
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "realtyframes.cli",
                "cache",
                "list",
                "--cache-dir",
                str(tmp_path / "cache"),
            ],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )
    finally:
        os.close(write)
    assert (result.returncode, result.stderr) == (141, "")
