"""``realtyframes report market`` and ``realtyframes fetch``: settings, output, failures, secrets.

Commands run as real processes (exit code, stdout, stderr) where the process matters (cold start,
failure lines); otherwise in-process through :func:`realtyframes.cli.main`.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pytest

import realtyframes as rf
from realtyframes import ConfigError, _spec
from realtyframes._config import (
    Settings,
    default_config_path,
    load_settings,
    read_config,
)
from realtyframes.cli import main
from realtyframes.cli.config import SYNTHETIC_NOTICE
from realtyframes.cli.report import open_report_client
from realtyframes.errors import QueryError
from realtyframes.loaders import ANALYTICS, LISTING_CHANGES, LISTING_SEARCH, prepare
from realtyframes.sandbox import DEMO, Faults, RunningSandbox, _embedded

FAKE_TOKEN = "rf-FAKE-SECRET-TOKEN-7f3a9c"


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment of a fresh machine: no REALTYFRAMES_* settings, a private home."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REALTYFRAMES_")}
    env.update(
        HOME=str(tmp_path / "home"),
        XDG_CONFIG_HOME=str(tmp_path / "home" / ".config"),
        XDG_CACHE_HOME=str(tmp_path / "home" / ".cache"),
        MPLBACKEND="Agg",
        PYTHONWARNINGS="",
    )
    env.update(extra)
    return env


def run_cli(
    args: list[str], tmp_path: Path, *, timeout: float = 120, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "realtyframes.cli", *args],
        cwd=tmp_path,
        env=clean_env(tmp_path, **env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def one_error_line(stderr: str, prog: str, kind: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith(f"realtyframes {prog}: error: {kind}: "), stderr
    assert "Traceback" not in stderr
    return lines[0]


def files_under(*roots: Path) -> list[Path]:
    return [p for root in roots if root.exists() for p in root.rglob("*") if p.is_file()]


# -- settings ------------------------------------------------------------------------------------


def test_settings_precedence_flag_env_file(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        'base_url = "http://file.example"\napi_key = "key-from-file"\ncache_dir = "/tmp/c"\n'
    )
    config.chmod(0o600)
    env = {"REALTYFRAMES_BASE_URL": "http://env.example", "REALTYFRAMES_TOKEN": "env-token"}
    settings = load_settings({"token": "flag-token"}, env=env, config_path=config)
    assert settings.base_url == "http://env.example"
    assert settings.token == "flag-token"
    assert settings.api_key == "key-from-file"
    assert settings.cache_dir == "/tmp/c"
    assert settings.sources["token"] == "flag"
    assert settings.sources["base_url"] == "environment REALTYFRAMES_BASE_URL"
    assert settings.sources["api_key"] == f"config file {config}"
    assert not settings.embedded
    assert settings.client_kwargs() == {
        "base_url": "http://env.example",
        "token": "flag-token",
        "api_key": "key-from-file",
        "cache_dir": "/tmp/c",
    }
    # REALTYFRAMES_CONFIG names the file; the default path is used only when it exists
    named = load_settings({}, env={"REALTYFRAMES_CONFIG": str(config)})
    assert named.api_key == "key-from-file"
    home = {"XDG_CONFIG_HOME": str(tmp_path / "nothing")}
    assert load_settings({}, env=home).embedded
    assert default_config_path(home) == tmp_path / "nothing" / "realtyframes" / "config.toml"


def test_config_file_errors_name_the_key(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('base_url = "http://x"\ntokn = "abc"\n')
    with pytest.raises(ConfigError, match=r"tokn: unknown key; did you mean 'token'\?; allowed"):
        read_config(config)
    config.write_text("timeout = 3\n")
    with pytest.raises(ConfigError, match="unknown key"):
        read_config(config)
    config.write_text("base_url = 3\n")
    with pytest.raises(ConfigError, match="base_url: must be a non-empty string, got a int"):
        read_config(config)
    config.write_text("base_url = [\n")
    with pytest.raises(ConfigError, match="is not valid TOML"):
        read_config(config)
    with pytest.raises(ConfigError, match="not found"):
        read_config(tmp_path / "missing.toml")


def test_config_file_readable_by_others_is_warned_about(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'api_key = "{FAKE_TOKEN}"\n')
    config.chmod(0o644)
    with caplog.at_level(logging.WARNING, logger="realtyframes.cli"):
        assert read_config(config) == {"api_key": FAKE_TOKEN}
    assert "other users can read it; run: chmod 600" in caplog.text
    assert FAKE_TOKEN not in caplog.text
    caplog.clear()
    config.chmod(0o600)
    with caplog.at_level(logging.WARNING, logger="realtyframes.cli"):
        read_config(config)
    assert caplog.text == ""


def test_settings_never_show_secrets() -> None:
    settings = Settings(base_url="http://h", token=FAKE_TOKEN, api_key="k-" + FAKE_TOKEN)
    assert FAKE_TOKEN not in repr(settings) and FAKE_TOKEN not in str(settings)
    assert "token=***" in repr(settings)
    assert settings.mask(f"sent {FAKE_TOKEN} and k-{FAKE_TOKEN}") == "sent *** and ***"


def test_missing_config_file_given_by_flag_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["report", "market", "--config", str(tmp_path / "nope.toml"), "--out", "x"])
    assert code == 2  # a configuration error: bad usage
    err = capsys.readouterr().err
    line = one_error_line(err, "report", "ConfigError")
    assert "nope.toml: not found" in line
    assert not (tmp_path / "x").exists()


def test_report_client_with_an_explicit_date_runs_a_sandbox_at_that_clock() -> None:
    settings = load_settings({}, env={}, config_path=None)
    with open_report_client(settings, dt.date(2026, 6, 30), explicit_date=True) as (client, src):
        clock = client.api.get_json("/_sandbox/clock")
    assert src == "embedded sandbox (synthetic data)"
    assert str(clock["now"]).startswith("2026-06-30T00:00:00")


# -- fetch: help, validation ---------------------------------------------------------------------


def _help(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main([*args, "--help"])
    assert exit_info.value.code == 0
    return " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize(
    ("resource", "table", "enums"),
    [
        (
            "listings",
            LISTING_SEARCH,
            [_spec.PROPERTY_TYPES, _spec.STATUSES, _spec.SORTS, *_spec.SUBTYPES.values()],
        ),
        ("changes", LISTING_CHANGES, [_spec.CHANGE_TYPES]),
        ("analytics", ANALYTICS, [_spec.PERIODS, _spec.DEVICES]),
    ],
)
def test_fetch_help_lists_the_spec_parameters_and_allowed_values(
    capsys: pytest.CaptureFixture[str],
    resource: str,
    table: dict[str, Any],
    enums: list[tuple[str, ...]],
) -> None:
    text = _help(capsys, "fetch", resource)
    for name in table:
        if name in ("Offset", "Limit"):
            assert f"--{name} " not in text  # the loaders page by themselves
        else:
            assert f"--{name} VALUE" in text, name
    for values in enums:
        assert ", ".join(values) in text
    if resource == "listings":
        assert "an integer from 1000 to 9999" in text  # MinYearBuilt's range
        assert "--Pool VALUE true, false" in text
        assert "(default Residential)" in text and "(default Active)" in text


def test_fetch_lists_every_resource(capsys: pytest.CaptureFixture[str]) -> None:
    text = _help(capsys, "fetch")
    for resource in ("listings", "changes", "contacts", "activity", "analytics"):
        assert resource in text
    assert "--contactId ID" in _help(capsys, "fetch", "activity")


@pytest.mark.parametrize(
    ("args", "operation", "params"),
    [
        (["listings", "--Status", "Sold"], "listings", {"Status": "Sold"}),
        (["listings", "--MinListPrice", "abc"], "listings", {"MinListPrice": "abc"}),
        (["listings", "--MinYearBuilt", "99"], "listings", {"MinYearBuilt": "99"}),
        (["listings", "--Pool", "yes"], "listings", {"Pool": "yes"}),
        (
            ["listings", "--Subtypes", "Castle"],
            "listings",
            {"Subtypes": "Castle"},
        ),
        (
            ["listings", "--MinListPrice", "9", "--MaxListPrice", "1"],
            "listings",
            {"MinListPrice": "9", "MaxListPrice": "1"},
        ),
        (["changes", "--ListingIds", "A1"], "listing_changes", {"ListingIds": "A1"}),
        (
            ["changes", "--ListingIds", "A1", "--Since", "yesterday"],
            "listing_changes",
            {"ListingIds": "A1", "Since": "yesterday"},
        ),
        (["analytics", "--Period", "2d"], "analytics", {"Period": "2d"}),
        (["analytics", "--Device", "phone"], "analytics", {"Device": "phone"}),
    ],
)
def test_fetch_bad_values_exit_1_with_the_query_error(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    operation: str,
    params: dict[str, str],
) -> None:
    with pytest.raises(QueryError) as expected:
        prepare(operation, params)
    out = tmp_path / "out.parquet"
    running = _embedded.current()
    code = main(["fetch", *args, "--out", str(out)])
    assert code == 1
    captured = capsys.readouterr()
    line = one_error_line(captured.err, "fetch", "QueryError")
    assert line == f"realtyframes fetch: error: QueryError: {expected.value}"
    assert captured.out == ""
    assert not out.exists()
    assert _embedded.current() is running  # refused before any sandbox (or request)


def test_fetch_refuses_repeats_and_unknown_formats(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["fetch", "listings", "--City", "Miami", "--City", "Doral", "--out", "a.csv"]) == 1
    assert "City: given 2 times ('Miami', 'Doral')" in capsys.readouterr().err
    assert main(["fetch", "listings", "--out", str(tmp_path / "a.xls")]) == 1
    assert (
        "has no known extension; allowed: .parquet, .csv, .json, .xlsx" in capsys.readouterr().err
    )
    code = main(["fetch", "analytics", "--member", "all", "--out", str(tmp_path / "a.csv")])
    assert code == 1
    assert "'all' writes several frames: use a .json or .xlsx output" in capsys.readouterr().err


# -- fetch: output round trips -------------------------------------------------------------------


def _reader(path: Path) -> str:
    if path.suffix == ".parquet":
        return f"read_parquet('{path}')"
    if path.suffix == ".csv":
        return f"read_csv('{path}')"
    return f"read_json_auto('{path}')"


def _read_back(path: Path, key: str) -> tuple[pd.DataFrame, list[str]]:
    """The file through pandas, and its ``key`` column through DuckDB (as text, in order)."""
    if path.suffix == ".parquet":
        frame = pd.read_parquet(path)
    elif path.suffix == ".csv":
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    else:
        frame = pd.read_json(path, orient="records", dtype=False)
    rows = duckdb.sql(f'select "{key}"::varchar from {_reader(path)}').fetchall()
    return frame, [r[0] for r in rows]


def _fetch(capsys: pytest.CaptureFixture[str], url: str, cache: Path, out: Path, *args: str) -> int:
    """Run ``fetch``: stdout is the path only (for pipelines), stderr the row count; returns it."""
    code = main(["fetch", *args, "--out", str(out), "--base-url", url, "--cache-dir", str(cache)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.out == f"{out}\n"
    written = re.search(  # the last line (a deprecated operation logs a warning before it)
        rf"^realtyframes fetch: ([\d,]+) \S+ rows written to {re.escape(str(out))}\n\Z",
        captured.err,
        re.MULTILINE,
    )
    assert written, captured.err
    return int(written.group(1).replace(",", ""))


@pytest.mark.parametrize("fmt", ["parquet", "csv", "json"])
def test_fetch_listings_round_trips_through_pandas_and_duckdb(
    sandbox_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    out = tmp_path / "deep" / f"listings.{fmt}"
    args = ["listings", "--City", "Miami Beach", "--Status", "Closed", "--MinListPrice", "500000"]
    _fetch(capsys, sandbox_url, tmp_path / "cache", out, *args)
    with rf.Client(base_url=sandbox_url, cache=False, progress=False) as client:
        expected = client.listings(City="Miami Beach", Status="Closed", MinListPrice=500000)
    assert len(expected) > 5
    frame, ids = _read_back(out, "ListingId")
    assert ids == frame["ListingId"].tolist() == expected["ListingId"].astype(str).tolist()
    assert list(frame.columns) == list(expected.columns)
    total = duckdb.sql(f"select sum(ListPrice) from {_reader(out)}").fetchall()[0][0]
    assert float(total) == float(expected["ListPrice"].sum())
    assert set(frame["StandardStatus"].astype(str)) == {"Closed"}
    prices = pd.to_numeric(frame["ListPrice"]).to_numpy()
    assert (prices == expected["ListPrice"].to_numpy()).all()
    closed = pd.to_datetime(frame["CloseDate"], utc=True)
    assert (closed == expected["CloseDate"]).all()
    if fmt == "parquet":
        pd.testing.assert_frame_equal(frame, expected.reset_index(drop=True))


def test_fetch_changes_contacts_activity_analytics(
    sandbox_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache"
    with rf.Client(base_url=sandbox_url, cache=False, progress=False) as client:
        active = client.listings(City="Miami")
        ids = active["ListingId"].astype(str).tolist()[:24]
        assert len(ids) == 24
        changes = client.listing_changes(ids, since="2025-06-01")
        contacts = client.contacts()
        activity = client.contact_activity(str(contacts["id"].iloc[0]))
        analytics = client.analytics(period="7d")
    assert len(changes) and len(contacts) and len(activity)

    out = tmp_path / "changes.parquet"
    count = _fetch(capsys, sandbox_url, cache, out, "changes", "--ListingIds", ",".join(ids[:12]),
                   "--ListingIds", ",".join(ids[12:]), "--Since", "2025-06-01")  # fmt: skip
    assert count == len(changes)
    frame, rows = _read_back(out, "ListingId")
    pd.testing.assert_frame_equal(frame, changes.reset_index(drop=True))
    assert rows == changes["ListingId"].astype(str).tolist()

    out = tmp_path / "contacts.csv"
    _fetch(capsys, sandbox_url, cache, out, "contacts")
    frame, rows = _read_back(out, "id")
    assert rows == frame["id"].tolist() == contacts["id"].astype(str).tolist()
    phones = json.loads(frame["phones"].iloc[0])  # list columns are written as JSON arrays
    assert phones == list(contacts["phones"].iloc[0])

    out = tmp_path / "activity.json"
    contact = str(contacts["id"].iloc[0])
    _fetch(capsys, sandbox_url, cache, out, "activity", "--contactId", contact)
    frame, rows = _read_back(out, "type")
    assert rows == frame["type"].tolist() == activity["type"].astype(str).tolist()

    out = tmp_path / "timelines.parquet"
    _fetch(capsys, sandbox_url, cache, out, "analytics", "--Period", "7d", "--member", "timelines")
    frame, rows = _read_back(out, "metric")
    pd.testing.assert_frame_equal(frame, analytics.timelines, check_categorical=False)
    assert rows == analytics.timelines["metric"].astype(str).tolist()
    out = tmp_path / "analytics.json"
    _fetch(capsys, sandbox_url, cache, out, "analytics", "--Period", "7d", "--member", "all")
    payload = json.loads(out.read_text())
    assert set(payload) == set(analytics.frames())
    assert payload["overview"][0]["visitors"] == int(analytics.overview["visitors"].iloc[0])


# -- report: the command -------------------------------------------------------------------------


@pytest.mark.slow
def test_report_from_a_fresh_start_is_quiet_and_idempotent(tmp_path: Path) -> None:
    """The README's first command: embedded sandbox, default output folder (its speed from a
    fresh cache is measured in benchmarks/bench_report.py)."""
    first = run_cli(["report", "market"], tmp_path)
    assert first.returncode == 0, first.stderr
    # a run that goes well says nothing on stderr but where its data come from (synthetic)
    assert first.stderr == f"realtyframes report: WARNING: {SYNTHETIC_NOTICE}\n"
    html = Path(first.stdout.strip())
    assert first.stdout.count("\n") == 1 and html.parent == Path("reports")
    day = html.name.removeprefix("market-report-").removesuffix(".html")
    assert dt.date.fromisoformat(day)  # dated by the as-of date (today)
    written = sorted(p.name for p in (tmp_path / "reports").iterdir())
    # the page, the listings and their history (Parquet, CSV), the manifest: no contacts or
    # website analytics (the brokerage report's)
    assert len(written) == 6 and f"market-report-{day}.listings.parquet" in written
    assert f"market-report-{day}.report.json" in written  # the run's manifest

    assert '<section class="area" data-area="All markets">' in (tmp_path / html).read_text()

    # a rerun on unchanged data: the same data files, and "nothing changed since the last sync"
    second = run_cli(["report", "market", "--as-of", day, "--out", "again", "-q"], tmp_path)
    assert second.returncode == 0, second.stderr
    assert second.stdout == f"again/{html.name}\n" and second.stderr == ""
    again = sorted(p.name for p in (tmp_path / "again").iterdir())
    assert set(again) - set(written) == {
        f"market-report-{day}.since-last.parquet",
        f"market-report-{day}.since-last.csv",
    }
    for name in written:
        if name.endswith((".html", ".report.json")):  # these say what changed since the last run
            continue
        same = (tmp_path / "reports" / name).read_bytes() == (
            tmp_path / "again" / name
        ).read_bytes()
        assert same, name


@pytest.mark.slow
def test_report_unreachable_server_is_one_line(tmp_path: Path) -> None:
    args = ["--base-url", "http://127.0.0.1:9", "--cache-dir", "c", "--max-retries", "1"]
    result = run_cli(["report", "market", *args], tmp_path)
    assert result.returncode == 1
    line = one_error_line(result.stderr, "report", "ConnectError")
    assert "127.0.0.1:9" in line and "is the server reachable?" in line
    assert result.stdout == ""
    assert not (tmp_path / "reports").exists()


@pytest.mark.slow
def test_report_bad_token_is_one_line_without_the_token(
    tmp_path: Path, protected_sandbox_url: str
) -> None:
    result = run_cli(
        ["report", "market", "--base-url", protected_sandbox_url, "--cache-dir", "c"],
        tmp_path,
        REALTYFRAMES_TOKEN=FAKE_TOKEN,
    )
    assert result.returncode == 1
    line = one_error_line(result.stderr, "report", "InvalidTokenError")
    assert "401 invalid_token" in line and "check the token or API key" in line
    assert FAKE_TOKEN not in result.stderr + result.stdout
    assert not (tmp_path / "reports").exists()


@pytest.mark.slow
def test_report_rate_limit_exhausted_is_one_line(
    tmp_path: Path, start_sandbox: Callable[..., RunningSandbox]
) -> None:
    sandbox = start_sandbox(faults=Faults(burst_429=5, burst_every=5, retry_after=1))
    args = ["--base-url", sandbox.url, "--cache-dir", "c", "--max-retries", "0"]
    result = run_cli(["report", "market", *args], tmp_path)
    assert result.returncode == 1
    line = one_error_line(result.stderr, "report", "RateLimitError")
    assert "429 rate_limit_exceeded" in line and "retry in 1 s" in line


@pytest.mark.slow
def test_secrets_never_reach_the_report_data_cache_or_log(
    tmp_path: Path, protected_sandbox_url: str
) -> None:
    """An API key from the config file, a full report with debug logging: the key is nowhere.
    (The market report reads no contacts since #32; the legacy host's ``api_key=`` path is the
    brokerage report's.)
    """
    token = DEMO.premium_api_key
    config = tmp_path / "rf.toml"
    config.write_text(f'api_key = "{token}"\n')
    config.chmod(0o600)
    result = run_cli(
        [
            "report",
            "market",
            "--base-url",
            protected_sandbox_url,
            "--config",
            str(config),
            "--cache-dir",
            "cache",
            "--as-of",
            "2026-06-30",
            "--by",
            "PostalCode",
            "--city",
            "Miami Beach",
            "Coral Gables",
            "-vv",
        ],
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    html = tmp_path / result.stdout.strip()
    assert html.name == "market-report-2026-06-30-miami-beach-coral-gables-by-postalcode.html"
    assert "INFO: loading listings" in result.stderr  # -vv logs
    written = files_under(tmp_path / "reports", tmp_path / "cache")
    assert len(written) > 5
    secret = token.encode()
    assert secret not in (result.stdout + result.stderr).encode()
    for path in written:
        assert secret not in path.read_bytes(), path
        assert token not in str(path)
    text = html.read_text()
    assert "Source: http://127.0.0.1:" in text  # the host, never a credential
    assert 'data-table="funnel"' not in text and ".contacts." not in text  # the market only
    listings = pd.read_parquet(str(html).replace(".html", ".listings.parquet"))
    assert set(listings["City"]) == {"Miami Beach", "Coral Gables"}


def test_a_misspelt_option_gets_a_did_you_mean(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["fetch", "listings", "--Cty", "Miami", "--out", "x.parquet"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments: --Cty Miami; did you mean --City?" in err
    with pytest.raises(SystemExit):
        main(["fetch", "listings", "--city", "Miami", "--out", "x.parquet"])
    assert "did you mean --City?" in capsys.readouterr().err


def test_fetch_warns_on_zero_rows(
    sandbox_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "none.parquet"
    args = ["fetch", "listings", "--City", "Atlantis", "--out", str(out)]
    code = main([*args, "--base-url", sandbox_url, "--cache-dir", str(tmp_path / "c")])
    captured = capsys.readouterr()
    assert code == 0 and captured.out == f"{out}\n"
    assert "warning: 0 listings rows for City=Atlantis" in captured.err
    assert pd.read_parquet(out).empty


def test_fetch_changes_of_a_scope_one_listing_me_and_legacy_contacts(
    sandbox_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache"
    with rf.Client(base_url=sandbox_url, cache=False, progress=False) as client:
        doral = client.listings(City="Doral", Status="Pending")
        changes = client.listing_changes(doral["ListingId"].tolist(), since="2025-06-01")
        one = client.listing(str(doral["ListingId"].iloc[0]))
        me = client.me()
    with (
        rf.Client(base_url=sandbox_url, api_key=DEMO.api_key, cache=False) as keyed,
        pytest.warns(rf.ApiDeprecationWarning, match="getContacts"),
    ):
        legacy = keyed.legacy_contacts()
    assert len(changes) > 0 and len(legacy) > 0

    # the scope finds the ids itself: the same rows as naming them
    out = tmp_path / "scope.parquet"
    args = ["changes", "--City", "Doral", "--Status", "Pending", "--Since", "2025-06-01"]
    assert _fetch(capsys, sandbox_url, cache, out, *args) == len(changes)
    pd.testing.assert_frame_equal(pd.read_parquet(out), changes.reset_index(drop=True))

    out = tmp_path / "one.parquet"
    assert _fetch(capsys, sandbox_url, cache, out, "listing", str(doral["ListingId"].iloc[0])) == 1
    pd.testing.assert_frame_equal(pd.read_parquet(out), one.reset_index(drop=True))

    out = tmp_path / "me.json"
    assert _fetch(capsys, sandbox_url, cache, out, "me") == 1
    assert json.loads(out.read_text())[0]["plan"] == me["plan"]

    out = tmp_path / "legacy.csv"
    count = _fetch(capsys, sandbox_url, cache, out, "legacy-contacts", "--api-key", DEMO.api_key)
    assert count == len(legacy)
    assert DEMO.api_key not in out.read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["changes", "--Since", "2025-06-01"], "ListingIds: missing: name the listings"),
        (
            ["changes", "--ListingIds", "A1", "--City", "Doral", "--Since", "2025-06-01"],
            "ListingIds: given with a scope (City)",
        ),
        (["changes", "--City", "Doral", "--Status", "Sold", "--Since", "2025-06-01"], "Status"),
        (["legacy-contacts"], "needs an API key"),
    ],
)
def test_fetch_changes_scope_errors_come_before_any_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    dead = "http://127.0.0.1:9"  # nothing listens: any request would fail differently
    code = main(["fetch", *args, "--out", str(tmp_path / "x.parquet"), "--base-url", dead,
                 "--cache-dir", str(tmp_path / "c")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1 and message in err, err
    assert "Connect" not in err and not (tmp_path / "x.parquet").exists()


@pytest.mark.parametrize(
    ("text", "number"),
    [("1e30", 1e30), ("-2.5E2", -250.0), ("1e400", float("inf")), ("1.2E11", 1.2e11)],
)
def test_cli_number_messages_match_the_python_api(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, number: float
) -> None:
    """A number typed on the command line is judged as the same number given in Python: '1e30'
    is too large, not "not a number" (the value is shown as it was typed)."""
    for name in ("MinListPrice", "MinYearBuilt"):
        code = main(["fetch", "listings", f"--{name}={text}", "--out", str(tmp_path / "x.csv")])
        line = one_error_line(capsys.readouterr().err, "fetch", "QueryError")
        assert code == 1
        with pytest.raises(QueryError) as expected:
            prepare("listings", {name: number})
        python = str(expected.value).replace(repr(number), repr(text), 1)
        python = python.replace(f"{number!r} ", f"{text!r} ", 1)  # a float's repr, unquoted
        assert line == f"realtyframes fetch: error: QueryError: {python}"


def test_fetch_on_the_sandbox_says_so_and_the_file_carries_its_source(tmp_path: Path) -> None:
    """Nothing configured: stderr says the data are synthetic, once, and the file's metadata
    names the source."""
    import openpyxl
    import pyarrow.parquet as pq

    out = tmp_path / "x.parquet"
    args = ["fetch", "listings", "--City", "Doral", "--max-results", "5", "--out", str(out)]
    done = run_cli(args, tmp_path)
    assert done.returncode == 0, done.stderr
    notices = [line for line in done.stderr.splitlines() if "synthetic data" in line]
    assert len(notices) == 1, done.stderr
    assert "embedded sandbox" in notices[0]
    meta = pq.read_schema(out).metadata
    assert meta[b"realtyframes.source"] == b"embedded sandbox (synthetic data)"
    assert b"pandas" in meta  # the pandas metadata is kept beside it

    book = tmp_path / "x.xlsx"
    done = run_cli([*args[:-1], str(book), "--quiet"], tmp_path)
    assert done.returncode == 0 and done.stderr == ""  # --quiet: no warning lines
    assert "synthetic data" in openpyxl.load_workbook(book).properties.description


def test_a_misspelt_variable_is_a_configuration_error_not_synthetic_data(tmp_path: Path) -> None:
    """``REALTYFRAMES_TOKN`` with nothing else configured: before, a hint and then a synthetic
    report, exit 0 (a cron job would mail demo data). Now exit 2, one line naming the right
    variable (never the value), nothing written, no sandbox started (no synthetic notice)."""
    done = run_cli(["report", "market", "--out", "r"], tmp_path, REALTYFRAMES_TOKN="t-SECRET-9")
    assert done.returncode == 2, done.stderr
    line = one_error_line(done.stderr, "report", "ConfigError")
    assert "REALTYFRAMES_TOKN: not a variable of realtyframes" in line
    assert "did you mean REALTYFRAMES_TOKEN?" in line and "t-SECRET-9" not in line
    assert done.stdout == "" and not (tmp_path / "r").exists()
    two = {"REALTYFRAMES_URL": "https://api.example.com", "REALTYFRAMES_APIKEY": "k-123"}
    done = run_cli(["fetch", "listings", "--out", "x.csv"], tmp_path, **two)
    assert done.returncode == 2, done.stderr
    line = one_error_line(done.stderr, "fetch", "ConfigError")
    assert "REALTYFRAMES_APIKEY" in line and "did you mean REALTYFRAMES_API_KEY?" in line
    assert "(1 more unknown)" in line and "k-123" not in line


def test_client_raises_the_configuration_error_and_known_variables_stay_known(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``rf.Client()`` raises the typed error; every variable another part reads (the MCP
    server's token, the sandbox's admin secret, the threads cap, the cache) is no error."""
    from realtyframes._environment import KNOWN_VARIABLES

    for name in list(os.environ):
        if name.startswith("REALTYFRAMES_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "none"))
    monkeypatch.setenv("REALTYFRAMES_TOKN", "t")
    with pytest.raises(
        ConfigError, match=r"REALTYFRAMES_TOKN: .*did you mean REALTYFRAMES_TOKEN\?"
    ):
        rf.Client()
    known = {name: "1" for name in KNOWN_VARIABLES if name != "REALTYFRAMES_CONFIG"}
    for name in ("REALTYFRAMES_MCP_AUTH_TOKEN", "REALTYFRAMES_SANDBOX_ADMIN_SECRET",
                 "REALTYFRAMES_THREADS", "REALTYFRAMES_CACHE_DIR"):  # fmt: skip
        assert name in known
    assert load_settings(env=known, config_path=None).base_url == "1"
    with pytest.raises(ConfigError, match="REALTYFRAMES_NOPE: not a variable"):
        load_settings(env={**known, "REALTYFRAMES_NOPE": "x"}, config_path=None)


def test_fetch_from_a_configured_service_names_its_host(
    sandbox_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import pyarrow.parquet as pq

    out = tmp_path / "x.parquet"
    _fetch(capsys, sandbox_url, tmp_path / "cache", out, "listings", "--City", "Doral")
    assert pq.read_schema(out).metadata[b"realtyframes.source"] == sandbox_url.encode()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["--city", "Miami Bch"],
            "QueryError: --city: no Residential listings in 'Miami Bch'; did you mean "
            "'Miami Beach'?; allowed: a city with listings (seen: ",
        ),
        (
            ["--city", "Doral", "--city", "Dorall", "--city", "Hialeahh"],
            "QueryError: --city: no Residential listings in 'Dorall'; did you mean 'Doral'? "
            "(none in 'Hialeahh' either)",
        ),
    ],
)
def test_report_exits_1_on_a_market_without_listings(
    sandbox_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    expected: str,
) -> None:
    """A scheduler must not mistake a report of nothing for a report: exit 1, one line with a
    did-you-mean against the market's values, and no report written."""
    out = tmp_path / "reports"
    base = ["--base-url", sandbox_url, "--cache-dir", str(tmp_path / "cache"), "--out", str(out)]
    code = main(["report", "market", *args, "--as-of", "2026-06-30", *base])
    captured = capsys.readouterr()
    assert code == 1
    line = one_error_line(captured.err, "report", "QueryError")
    assert line.startswith(f"realtyframes report: error: {expected}"), line
    assert captured.out == "" and not out.exists()
