"""Files holding personal data are private (0600) whatever the umask; other files follow it.

Run under umask 022 (the common default, which makes new files world-readable): contact exports
of ``fetch`` in every format, ``mcp call`` results of a contact tool, the report's contacts frames
and a workbook holding them are ``0600``; a listings export stays ``0644``.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import realtyframes as rf
from realtyframes.cli import main
from realtyframes.report import is_private, write_frame, write_output
from realtyframes.report.excel import write_workbook
from realtyframes.sandbox import DEMO

PRIVATE = 0o600
SHARED = 0o644  # 0o666 under umask 022


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


@pytest.fixture(scope="module")
def contact(sandbox_url: str) -> str:
    """A contact of the shared sandbox."""
    with rf.Client(base_url=sandbox_url, cache=False, progress=False) as client:
        return str(client.contacts()["id"].iloc[0])


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def fetch(url: str, tmp_path: Path, out: Path, *args: str) -> None:
    cache = tmp_path / "cache"
    code = main(["fetch", *args, "--out", str(out), "--base-url", url, "--cache-dir", str(cache)])
    assert code == 0


@pytest.mark.usefixtures("umask_022")
@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".json", ".xlsx"])
def test_contact_exports_are_private_in_every_format(
    sandbox_url: str, tmp_path: Path, suffix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    contacts = tmp_path / f"contacts{suffix}"
    fetch(sandbox_url, tmp_path, contacts, "contacts")
    listings = tmp_path / f"listings{suffix}"
    fetch(sandbox_url, tmp_path, listings, "listings", "--City", "Doral", "--max-results", "5")
    capsys.readouterr()
    assert oct(mode(contacts)) == oct(PRIVATE)
    assert oct(mode(listings)) == oct(SHARED)  # the control: no personal data, the umask's mode


@pytest.mark.usefixtures("umask_022")
def test_activity_and_legacy_contacts_are_private_and_an_old_file_is_replaced(
    sandbox_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], contact: str
) -> None:
    activity = tmp_path / "activity.csv"
    activity.write_text("an older, world-readable file\n")
    assert mode(activity) == SHARED
    fetch(sandbox_url, tmp_path, activity, "activity", "--contactId", contact)
    assert mode(activity) == PRIVATE
    legacy = tmp_path / "legacy.parquet"
    fetch(sandbox_url, tmp_path, legacy, "legacy-contacts", "--api-key", DEMO.api_key)
    assert "deprecated" in capsys.readouterr().err  # the CLI logs the deprecation, once
    assert mode(legacy) == PRIVATE


@pytest.mark.usefixtures("umask_022")
def test_mcp_call_results_holding_a_contact_are_private(
    sandbox_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], contact: str
) -> None:
    base = ["--base-url", sandbox_url, "--cache-dir", str(tmp_path / "cache")]
    one = tmp_path / "contact.json"
    code = main(
        ["mcp", "call", "get_contact", "--arg", f"contactId={contact}", "--out", str(one), *base]
    )
    assert code == 0, capsys.readouterr().err
    assert contact in one.read_text()
    page = tmp_path / "contacts.csv"
    code = main(["mcp", "call", "list_contacts", "--out", str(page), *base])
    assert code == 0, capsys.readouterr().err
    listings = tmp_path / "listings.csv"
    code = main(
        ["mcp", "call", "search_listings", "--arg", "City=Doral", "--out", str(listings), *base]
    )
    assert code == 0, capsys.readouterr().err
    assert (mode(one), mode(page), mode(listings)) == (PRIVATE, PRIVATE, SHARED)


@pytest.mark.usefixtures("umask_022")
def test_report_frames_and_workbooks_with_contacts_are_private(tmp_path: Path) -> None:
    contacts = pd.DataFrame({"id": ["c1"], "stage": ["lead"], "source": ["web"]})
    listings = pd.DataFrame({"ListingId": ["A1"], "City": ["Doral"]})
    # the report's contacts frame keeps no names or e-mails, but is about people: private by name
    assert is_private({"contacts": contacts}) and not is_private({"listings": listings})
    assert not is_private(contacts) and is_private(contacts.assign(email=["a@b.c"]))
    paths = {n: (tmp_path / f"r.{n}.parquet", tmp_path / f"r.{n}.csv") for n in ("c", "l")}
    write_frame(contacts, *paths["c"], private=is_private({"contacts": contacts}))
    write_frame(listings, *paths["l"])
    assert {mode(p) for p in paths["c"]} == {PRIVATE}
    assert {mode(p) for p in paths["l"]} == {SHARED}
    both = write_workbook({"listings": listings, "contacts": contacts}, tmp_path / "b.xlsx",
                          private=is_private({"listings": listings, "contacts": contacts}))  # fmt: skip
    only = write_workbook({"listings": listings}, tmp_path / "l.xlsx")
    assert (mode(both), mode(only)) == (PRIVATE, SHARED)
    rows = write_output({"contacts": contacts}, tmp_path / "all.json", "json")
    assert rows == 1 and mode(tmp_path / "all.json") == PRIVATE
