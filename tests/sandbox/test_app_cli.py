"""``realtyframes sandbox`` as a subprocess, and its option checking."""

from __future__ import annotations

import contextlib
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from realtyframes.cli import build_parser, main
from realtyframes.cli.sandbox import _options
from realtyframes.sandbox import DEMO, SandboxOptions


def _read_until_ready(proc: subprocess.Popen[str], timeout: float = 60) -> list[str]:
    """Lines printed by the CLI up to and including the 'Press Ctrl-C' line.

    A helper thread reads stdout and stops right after that line, so the caller can later
    ``communicate()`` without two readers on one pipe.
    """
    assert proc.stdout is not None
    stdout = proc.stdout
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        for line in stdout:
            lines.put(line)
            if line.startswith("Press Ctrl-C"):
                return
        lines.put(None)  # end of output: the process is gone

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.2)
        except queue.Empty:
            continue
        if line is None:
            break
        seen.append(line.rstrip("\n"))
        if line.startswith("Press Ctrl-C"):
            reader.join(timeout=5)
            return seen
    proc.kill()
    reader.join(timeout=5)
    raise AssertionError(f"no ready message; output so far: {seen}")


@pytest.mark.slow
def test_cli_serves_until_interrupted() -> None:
    command = [sys.executable, "-m", "realtyframes.cli", "sandbox", "--port", "0", "--protected"]
    command += [
        "--listings",
        "300",
        "--contacts",
        "20",
        "--as-of",
        "2026-06-30",
        "--rate-limit",
        "100/10s",
        "--history-years",
        "2",
    ]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    ) as proc:
        try:
            lines = _read_until_ready(proc)
            match = re.search(r"serving (http://127\.0\.0\.1:\d+)", lines[0])
            assert match, lines
            assert "300 listings over 2 years" in lines[0]
            url = match.group(1)
            text = "\n".join(lines)
            assert DEMO.api_key in text and DEMO.client_id in text and "curl" in text
            # Its own client, closed before the interrupt: no keep-alive connection for the
            # server's graceful shutdown to wait for.
            with httpx.Client(base_url=url, timeout=30) as http:
                assert http.get("/v1/listings").status_code == 401
                response = http.get("/v1/listings", headers={"X-API-Key": DEMO.api_key})
                assert response.status_code == 200 and response.json()["total"] > 0
                assert response.headers["RateLimit-Policy"] == "100;w=10"
                assert http.get("/_sandbox/clock").json()["now"] == "2026-06-30T00:00:00Z"
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
            try:
                _, stderr = proc.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                _, stderr = proc.communicate()
    assert proc.returncode == 0, stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--port", "70000"], "--port"),
        (["--rate-limit", "fast"], "--rate-limit"),
        (["--faults", "error_rate=2"], "error_rate"),
        (["--faults", "explode=1"], "unknown fault"),
        (["--listings", "0"], "--listings"),
        (["--as-of", "yesterday"], "--as-of"),
        (["--latency-ms", "-5"], "--latency-ms"),
        (["--history-years", "0"], "--history-years: 0 is not within 1..10"),
        (["--history-years", "11"], "--history-years: 11 is not within 1..10"),
        (["--history-years", "2.5"], "--history-years: '2.5' is not a whole number of years"),
    ],
)
def test_bad_options_exit_2(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["sandbox", *args])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_no_subcommand_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "sandbox" in capsys.readouterr().err


def test_parser_defaults() -> None:
    args = build_parser().parse_args(["sandbox"])
    assert (args.port, args.host, args.protected, args.rate_limit) == (
        8642,
        "127.0.0.1",
        False,
        None,
    )
    parsed = build_parser().parse_args(
        ["sandbox", "--faults", "drift=2", "--as-of", "2026-01-02T03:04:05+02:00"]
    )
    assert parsed.faults.drift == 2
    assert parsed.as_of.isoformat() == "2026-01-02T01:04:05+00:00"
    assert _options(args).history_years == SandboxOptions().history_years == 3
    five = build_parser().parse_args(["sandbox", "--history-years", "5"])
    assert _options(five).history_years == 5


@contextlib.contextmanager
def _protected_cli(env: dict[str, str], *args: str) -> Iterator[tuple[str, str]]:
    """``realtyframes sandbox --protected`` as a subprocess: (its URL, what it printed)."""
    command = [sys.executable, "-m", "realtyframes.cli", "sandbox", "--port", "0", "--protected"]
    command += ["--listings", "200", "--contacts", "10", *args]
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **env}
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env
    ) as proc:
        try:
            lines = _read_until_ready(proc)
            match = re.search(r"serving (http://127\.0\.0\.1:\d+)", lines[0])
            assert match, lines
            yield match.group(1), "\n".join(lines)
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
            try:
                proc.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()


def _admin_post(url: str, secret: str) -> int:
    with httpx.Client(base_url=url, timeout=30) as http:
        minted = http.post(
            "/_sandbox/tokens", json={"scopes": ["listings"]}, headers={"X-Sandbox-Admin": secret}
        )
    return minted.status_code


def test_protected_cli_makes_a_random_admin_secret_per_run() -> None:
    """Never the documented demo admin secret: a fresh one each run, printed (issue #24)."""
    env = {"REALTYFRAMES_SANDBOX_ADMIN_SECRET": ""}
    printed: list[str] = []
    for _ in range(2):
        with _protected_cli(env) as (url, text):
            found = re.search(r"Admin secret:\s+(\S+)\s+\(random, this run only\)", text)
            assert found, text
            printed.append(found[1])
            assert len(found[1]) >= 32 and DEMO.admin_secret not in text
            assert _admin_post(url, found[1]) == 200
            assert _admin_post(url, DEMO.admin_secret) == 401
    assert printed[0] != printed[1]


@pytest.mark.parametrize("how", ["option", "environment"])
def test_protected_cli_uses_the_given_admin_secret(how: str) -> None:
    given = "team-sandbox-admin-7f3a"
    env = {"REALTYFRAMES_SANDBOX_ADMIN_SECRET": given if how == "environment" else ""}
    args = ("--admin-secret", given) if how == "option" else ()
    with _protected_cli(env, *args) as (url, text):
        assert given not in text and "Admin secret:             (as given by" in text
        assert _admin_post(url, given) == 200
        assert _admin_post(url, DEMO.admin_secret) == 401


def test_empty_admin_secret_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["sandbox", "--protected", "--admin-secret", " "])
    assert exit_info.value.code == 2 and "--admin-secret" in capsys.readouterr().err
