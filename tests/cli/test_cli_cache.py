"""``realtyframes cache list|clear``."""

from __future__ import annotations

from pathlib import Path

import pytest

from realtyframes._client import Client
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

    assert main(["cache", "clear", "--resource", "listings", "--cache-dir", str(root)]) == 0
    assert "removed 1 listings entries" in capsys.readouterr().out
    assert not list((root / "listings").glob("*.parquet"))
    assert list((root / "contacts").glob("*.parquet"))

    assert main(["cache", "clear", "--resource", "No Such", "--cache-dir", str(root)]) == 2
    assert "--resource" in capsys.readouterr().err


def test_cache_dir_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("REALTYFRAMES_CACHE_DIR", str(tmp_path / "env"))
    assert main(["cache", "clear"]) == 0
    assert f"removed 0 entries from {tmp_path / 'env'}" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exited:
        main(["cache"])  # an action is required
    assert exited.value.code == 2
