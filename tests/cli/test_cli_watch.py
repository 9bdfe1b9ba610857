"""``realtyframes watch`` and ``report market --notify`` for cron: exit codes, one line per watch,
URLs masked in every output, and the overlap lock between two processes (a second run of the same
scope waits for the first and takes its sync, or exits 75 when it would wait too long)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

import realtyframes as rf
from realtyframes.cache import file_lock, is_locked
from realtyframes.cli import main
from realtyframes.cli.config import EXIT_BUSY, EXIT_FAILURE, EXIT_OK
from realtyframes.loaders import sync_lock
from realtyframes.sandbox import RunningSandbox
from receivers import Hook, http_receiver, smtp_server

TOKEN = "cli-hook-token-Vb71Qa"
SRC = Path(__file__).resolve().parents[2] / "src"


def _cli(tmp_path: Path, sandbox: RunningSandbox) -> list[str]:
    return ["--base-url", sandbox.url, "--cache-dir", str(tmp_path / "cache")]


def _subprocess(args: list[str], tmp_path: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REALTYFRAMES_")}
    env.update(
        PYTHONPATH=os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")]), HOME=str(tmp_path)
    )
    return subprocess.Popen(
        [sys.executable, "-m", "realtyframes.cli", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_watch_commands_print_what_they_did_with_urls_masked(
    tmp_path: Path,
    start_sandbox: Callable[..., RunningSandbox],
    http_client: httpx.Client,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    sandbox = start_sandbox(listings=800)
    flags = _cli(tmp_path, sandbox)
    with http_receiver() as hook:
        url = f"json://hooks:{TOKEN}@{hook.url}/w"
        add = ["watch", "add", "miami", "--City", "Miami", "--MaxListPrice", "900000"]
        assert main([*add, "--notify", url, *flags]) == EXIT_OK
        assert main(["watch", "list", *flags]) == EXIT_OK
        assert main(["watch", "run", *flags]) == EXIT_OK
        http_client.post(f"{sandbox.url}/_sandbox/clock", json={"advance_days": 10})
        assert main(["watch", "run", "miami", *flags]) == EXIT_OK
        hook.status = 500
        http_client.post(f"{sandbox.url}/_sandbox/clock", json={"advance_days": 10})
        assert main(["watch", "run", *flags]) == EXIT_FAILURE
        assert main(["watch", "remove", "miami", *flags]) == EXIT_OK
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert (
        lines[0]
        == "miami: City=Miami PropertyType=Residential MaxListPrice=900000; notify 1 target(s)"
    )
    assert "json://hooks:****@127.0.0.1:" in lines[2]  # the list: masked
    assert lines[3].startswith("miami: ") and "first run" in lines[3]
    assert "sent to 1 of 1" in lines[4]
    assert "sent to 0 of 1" in lines[5]
    assert lines[-1] == "removed miami"
    assert "not delivered to json://hooks:****@127.0.0.1:" in err
    assert "the next run reports these changes again" in err
    for text in (out, err, caplog.text):
        assert TOKEN not in text


def test_watch_bad_usage_exits_2_and_bad_values_exit_1_before_any_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as usage:
        main(["watch", "run", "--wait", "soon"])
    assert usage.value.code == 2
    with pytest.raises(SystemExit) as usage:
        main(["watch", "frobnicate"])
    assert usage.value.code == 2
    for deadline in ("0", "-1", "soon"):
        with pytest.raises(SystemExit) as usage:
            main(["watch", "run", "--notify-deadline", deadline])
        assert usage.value.code == 2
    cache = ["--cache-dir", str(tmp_path / "cache")]
    assert main(["watch", "run", *cache]) == EXIT_OK  # nothing to run: said, no client started
    assert capsys.readouterr().out.startswith("no watches to run")
    code = main(["watch", "add", "x", "--notify", "nosuch://u:pw-Secret-4@h", *cache])
    assert code == EXIT_FAILURE
    err = capsys.readouterr().err
    assert "QueryError: notify: not a notification URL" in err and "pw-Secret-4" not in err
    assert main(["watch", "add", "x", "--Status", "Sold", *cache]) == EXIT_FAILURE
    assert "QueryError: Status" in capsys.readouterr().err
    for action in (["add", "miami\n", "--City", "Miami"], ["remove", "mia\tmi"], ["run", "x\r"]):
        with pytest.raises(SystemExit) as usage:
            main(["watch", *action, *cache])
        assert usage.value.code == 2
        assert "control character" in capsys.readouterr().err
    assert not (tmp_path / "cache" / ".watches" / "watches.json").exists()


def test_two_processes_on_one_scope_sync_once(
    tmp_path: Path, start_sandbox: Callable[..., RunningSandbox]
) -> None:
    """The test holds the scope's lock (``loaders.sync_lock``) as a running sync does; a second
    process started on the same scope exits 75 without waiting (``--wait 0``), and with a wait,
    blocks until the test's own sync (paused at its first request, the lock held) completes, and
    then takes that sync instead of syncing again."""
    sandbox = start_sandbox(listings=600)
    cache = tmp_path / "cache"
    flags = ["--base-url", sandbox.url, "--cache-dir", str(cache)]
    assert main(["watch", "add", "doral", "--City", "Doral", *flags]) == EXIT_OK
    go = threading.Event()
    hooks = {"request": [lambda request: go.wait(120)]}
    with rf.Client(base_url=sandbox.url, cache_dir=cache, progress=False) as client:
        scope = rf.Watches(client).get("doral").scope
        client.sync_listings(**scope)
        lock = sync_lock(client.session, scope)
        assert lock is not None
        with file_lock(lock, timeout=5):
            busy = _subprocess(["watch", "run", "--wait", "0", *flags], tmp_path)
            out, err = busy.communicate(timeout=120)
            assert busy.returncode == EXIT_BUSY, err
            assert out == ""
            assert "ScopeBusyError: another run kept syncing City=Doral" in err
        syncs_before = client.sync_state(**scope)["syncs"]
    with (
        rf.Client(base_url=sandbox.url, cache_dir=cache, progress=False, event_hooks=hooks) as c,
        ThreadPoolExecutor(1) as pool,
    ):
        first = pool.submit(c.sync_listings, **scope)  # holds the lock, paused at its 1st request
        while not is_locked(lock):
            assert not first.done(), first.exception()
            time.sleep(0.01)
        waiting = _subprocess(["watch", "run", "--wait", "120", "-v", *flags], tmp_path)
        assert waiting.stderr is not None
        seen = []
        for line in waiting.stderr:  # wait until it waits for the lock
            seen.append(line)
            if "waiting up to 120 s" in line:
                break
        assert any("another run is syncing City=Doral" in s for s in seen), seen
        go.set()  # the first run's sync goes on while the second waits
        first.result(timeout=120)
        out, err = waiting.communicate(timeout=120)
        assert waiting.returncode == EXIT_OK, err
        assert out.strip().endswith("(synced by another run)")
        assert "another run synced it meanwhile" in err
        # one sync by the first run, none by the waiting process
        assert c.sync_state(**scope)["syncs"] == syncs_before + 1


def test_report_market_notify_sends_the_html_by_email_and_a_summary_elsewhere(
    tmp_path: Path,
    start_sandbox: Callable[..., RunningSandbox],
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    sandbox = start_sandbox(listings=400)
    out_dir = tmp_path / "reports"
    with smtp_server() as inbox, http_receiver() as hook:
        code = main(
            [
                "report",
                "market",
                "--out",
                str(out_dir),
                "--chart-workers",
                "0",
                *_cli(tmp_path, sandbox),
                "--notify",
                inbox.url(),
                "--notify",
                f"json://hooks:{TOKEN}@{hook.url}/report",
            ]
        )
    out, err = capsys.readouterr()
    assert code == EXIT_OK, err
    html_file = Path(out.strip())
    (mail,) = inbox.messages
    assert mail["Subject"].startswith("realtyframes market report ")
    attached = [(p.get_filename(), p.get_payload(decode=True)) for p in mail.iter_attachments()]
    assert attached == [(html_file.name, html_file.read_bytes())]  # the report, byte for byte
    ((_, _, body),) = _posts(hook)
    assert body["title"] == mail["Subject"]
    assert "Active listings" in body["message"] and "Homes sold" in body["message"]
    assert body.get("attachments", []) == []
    for text in (out, err, caplog.text):
        assert TOKEN not in text and inbox.password not in text


def test_report_notify_refuses_a_bad_url_before_loading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "report",
            "market",
            "--base-url",
            "http://127.0.0.1:9",
            "--out",
            str(tmp_path / "r"),
            "--notify",
            "nosuch://user:pw-Secret-5@x",
        ]
    )
    err = capsys.readouterr().err
    assert code == EXIT_FAILURE
    assert "QueryError: notify" in err and "pw-Secret-5" not in err
    assert "ConnectError" not in err  # refused before any request
    assert not (tmp_path / "r").exists()


def _posts(hook: Hook) -> list[tuple[str, dict[str, str], object]]:
    return hook.posts


def test_notify_file_keeps_urls_out_of_the_process_list_and_must_be_private(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = ["--cache-dir", str(tmp_path / "cache")]
    urls = tmp_path / "notify.txt"
    urls.write_text(f"# the team\njsons://hooks.example.com/in/{TOKEN}\n\n")
    urls.chmod(0o644)
    code = main(["watch", "add", "w", "--City", "Doral", "--notify-file", str(urls), *cache])
    assert code == EXIT_FAILURE
    err = capsys.readouterr().err
    assert "QueryError: notify-file:" in err and "chmod 600" in err and TOKEN not in err
    urls.chmod(0o600)
    code = main(["watch", "add", "w", "--City", "Doral", "--notify-file", str(urls), *cache])
    assert code == EXIT_OK
    assert capsys.readouterr().out.endswith("notify 1 target(s)\n")
    assert rf.Watches(cache_dir=tmp_path / "cache").get("w").notify[0].url.endswith(TOKEN)
