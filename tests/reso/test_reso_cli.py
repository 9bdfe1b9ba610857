"""``realtyframes fetch listings --source reso`` and ``report market --source reso``: the config
file's ``[reso]`` table, credentials from the environment variable it names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import realtyframes as rf
from realtyframes.cli import main
from realtyframes.reso import reso_arguments


def _config(tmp_path: Path, url: str, **extra: str) -> Path:
    lines = [
        "[reso]",
        f'base_url = "{url}/reso/odata"',
        'vendor = "generic"',
        'token_env = "RF_TEST_MLS_TOKEN"',
        *(f'{k} = "{v}"' for k, v in extra.items()),
    ]
    path = tmp_path / "config.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_fetch_listings_from_the_reso_source_equals_the_platform(
    sandbox_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RF_TEST_MLS_TOKEN", "mls-secret-token")
    config = _config(tmp_path, sandbox_url)
    out_reso, out_platform = tmp_path / "reso.parquet", tmp_path / "platform.parquet"
    common = ["--City", "Miami", "--Status", "Closed", "--cache-dir", str(tmp_path / "cache")]
    assert main(["fetch", "listings", *common, "--out", str(out_reso), "--config", str(config),
                 "--source", "reso", "-q"]) == 0  # fmt: skip
    assert main(["fetch", "listings", *common, "--out", str(out_platform),
                 "--base-url", sandbox_url, "-q"]) == 0  # fmt: skip
    got, expected = pd.read_parquet(out_reso), pd.read_parquet(out_platform)
    assert len(got) > 0
    pd.testing.assert_frame_equal(got, expected)


def test_report_market_on_the_reso_source(
    sandbox_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RF_TEST_MLS_TOKEN", "mls-secret-token")
    config = _config(tmp_path, sandbox_url)
    pages = {}
    for source in ("reso", "platform"):
        out = tmp_path / source
        where = (
            ["--config", str(config), "--source", "reso"]
            if source == "reso"
            else ["--base-url", sandbox_url]
        )
        code = main(["report", "market", "--city", "Miami Beach", "--out", str(out), "-q",
                     "--cache-dir", str(tmp_path / f"cache-{source}"), *where])  # fmt: skip
        assert code == 0
        (page,) = out.glob("*.html")
        pages[source] = page.read_text(encoding="utf-8")
    assert "mls-secret-token" not in pages["reso"]
    # the reports are equal but for their source line
    assert pages["reso"].count(" (RESO Web API, generic)") == 1
    assert pages["reso"].replace(" (RESO Web API, generic)", "") == pages["platform"]


@pytest.mark.parametrize(
    ("table", "env", "message"),
    [
        ({"base_url": "http://h", "token": "x"}, {}, "credentials come from the environment"),
        ({"base_url": "http://h", "vendr": "mlsgrid"}, {}, "did you mean 'vendor'"),
        ({"base_url": "http://h", "token_env": "NOPE_TOKEN"}, {}, "NOPE_TOKEN is not set"),
        ({"vendor": "trestle"}, {}, "base_url: missing"),
    ],
)
def test_the_reso_table_is_checked(
    table: dict[str, Any], env: dict[str, str], message: str
) -> None:
    with pytest.raises(rf.ConfigError, match=message):
        reso_arguments(table, env=env)
