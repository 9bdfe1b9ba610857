"""Every snippet of the README runs, as written, against the embedded sandbox: it cannot rot.

- ``python`` blocks run in a fresh interpreter (a new process: the embedded sandbox, the warning
  and the cache are what a new user gets), in a temporary folder with a temporary cache; every
  DataFrame a block leaves behind must hold rows.
- ``bash`` blocks: each ``realtyframes`` line runs; a ``sandbox`` line is a server, started,
  checked answering, then stopped. ``make`` lines are the quick start that CI runs itself.
- the ``sql`` block runs in DuckDB on a cache the test fills, at the path the README names.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import httpx
import pytest

import realtyframes as rf

README = Path(__file__).resolve().parents[1] / "README.md"
BIN = Path(sys.executable).parent
_BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def blocks(lang: str) -> list[str]:
    return [code for kind, code in _BLOCK.findall(README.read_text()) if kind == lang]


def commands() -> list[str]:
    """The README's ``realtyframes`` command lines (comments stripped), in order."""
    lines = []
    for code in blocks("bash"):
        for line in code.splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line and not line.startswith(("make", "#")):
                lines.append(line.removeprefix(".venv/bin/"))
    return lines


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REALTYFRAMES_")}
    env["REALTYFRAMES_CACHE_DIR"] = str(tmp_path / "cache")
    env["HOME"] = str(tmp_path)  # no config file of the machine's user
    env["MPLBACKEND"] = "Agg"
    return env


_CHECK = """
import pandas as pd
frames = {k: v for k, v in dict(globals()).items() if isinstance(v, pd.DataFrame)}
empty = sorted(k for k, v in frames.items() if v.empty)
print("FRAMES", sorted(frames), "EMPTY", empty)
"""


def test_the_readme_has_the_snippets_this_test_runs() -> None:
    assert len(blocks("python")) >= 2 and len(blocks("sql")) == 1
    assert any(c.startswith("realtyframes report market") for c in commands())
    assert any(c.startswith("realtyframes sandbox") for c in commands())


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(blocks("python"))))
def test_python_snippet_runs(index: int, tmp_path: Path) -> None:
    code = blocks("python")[index]
    script = tmp_path / "snippet.py"
    script.write_text(code + "\n" + _CHECK)
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    frames = re.search(r"FRAMES (\[.*?\]) EMPTY (\[.*?\])", done.stdout)
    assert frames, done.stdout
    assert frames.group(2) == "[]", f"empty frames: {frames.group(2)}"
    if "rf.Client()" in code:  # the fallback says what it is
        assert "synthetic data" in done.stderr


def _serve(argv: list[str], tmp_path: Path) -> None:
    """Start a ``realtyframes sandbox`` line, check it answers, stop it."""
    proc = subprocess.Popen(
        [str(BIN / argv[0]), *argv[1:]],
        cwd=tmp_path,
        env=_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        url = None
        deadline = time.monotonic() + 120
        assert proc.stdout is not None
        while url is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            found = re.search(r"http://127\.0\.0\.1:\d+", line)
            url = found.group(0) if found else None
        assert url, "the sandbox printed no URL"
        headers = {"X-API-Key": rf.sandbox.DEMO.api_key} if "--protected" in argv else {}
        answer = httpx.get(f"{url}/v1/listings", params={"Limit": 1}, headers=headers)
        assert answer.status_code in (200, 429, 500, 503)  # faults are what that line asks for
        assert "RateLimit" in answer.headers or answer.status_code >= 500
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        if proc.stdout is not None:
            proc.stdout.close()


@pytest.mark.slow
def test_sandbox_lines_serve(tmp_path: Path) -> None:
    # one after the other: two of them name the same port
    lines = [shlex.split(c) for c in commands() if shlex.split(c)[1] == "sandbox"]
    assert len(lines) >= 2
    for argv in lines:
        _serve(argv, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("line", [c for c in commands() if shlex.split(c)[1] != "sandbox"])
def test_command_line_runs(line: str, tmp_path: Path) -> None:
    argv = shlex.split(line)
    done = subprocess.run(
        [str(BIN / argv[0]), *argv[1:]],
        cwd=tmp_path,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip(), "every README command prints its result"
    out = [a for a in argv if a.endswith((".parquet", ".csv", ".json"))]
    for name in out:
        assert (tmp_path / name).stat().st_size > 0


def test_sql_snippet_runs_on_the_cache_path_it_names(tmp_path: Path) -> None:
    """The query reads one scope of overlapping ones: the same count and median as pandas on
    the synced market (reading every scope counted Miami's listings twice)."""
    sql = blocks("sql")[0]
    named = re.findall(r"\('([^']+)/market/\*\*/\*\.parquet'", sql)
    assert named and set(named) == {"~/.cache/realtyframes"}
    cache = tmp_path / "cache"
    with (
        rf.sandbox.serve(listings=800) as url,
        rf.Client(base_url=url, cache_dir=cache, progress=False) as client,
    ):
        market = client.sync_listings(PropertyType="Residential", City="Miami")
        whole = client.sync_listings(PropertyType="Residential")  # overlaps the Miami scope
    assert set(market["ListingId"]) < set(whole["ListingId"])
    active = market[market["StandardStatus"] == "Active"]
    rows = duckdb.sql(sql.replace(named[0], str(cache))).fetchall()
    expected = float(active["ListPrice"].median())
    assert rows == [("Miami", len(active), pytest.approx(expected))]
