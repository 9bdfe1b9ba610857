"""``realtyframes report brokerage``: the internal report against the sandbox. The most viewed
listing pages are shown by the address of the MLS listing they show (never by a bare id), their
figures are the analytics' own, and the files holding contact data are ``0600`` under umask 022.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from report_html import parse, same

import realtyframes as rf
from realtyframes.cli import main
from realtyframes.report import BrokerageReport, load_brokerage_report, write_brokerage_report
from realtyframes.report.brokerage import listing_pages, top_listings

AS_OF = "2026-06-30"


@pytest.fixture(scope="module")
def report(sandbox_url: str, tmp_path_factory: pytest.TempPathFactory) -> BrokerageReport:
    cache = tmp_path_factory.mktemp("cache")
    with rf.Client(base_url=sandbox_url, cache_dir=cache, progress=False) as client:
        return load_brokerage_report(client, as_of=AS_OF, window_days=90, source="test sandbox")


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_most_viewed_listings_are_shown_by_the_address_of_their_mls_listing(
    report: BrokerageReport, sandbox_url: str, tmp_path: Path
) -> None:
    top = report.listings
    assert len(top) == 10
    assert top["Address"].notna().all()  # every page joins its listing (the sandbox's own)
    assert list(top["pageviews"]) == sorted(top["pageviews"], reverse=True)
    # the views are the analytics' own, and each address is that of the listing the page shows
    with rf.Client(base_url=sandbox_url, cache_dir=tmp_path / "c", progress=False) as client:
        pages = client.analytics(period="90d").frames()["pages"]
        for _, row in top.head(3).iterrows():
            page = pages[pages["name"] == f"/listings/{row['ListingId']}"].iloc[0]
            assert int(page["pageviews"]) == int(row["pageviews"])
            mls = client.listing(row["ListingId"]).iloc[0]
            assert mls["UnparsedAddress"] == row["Address"]
            assert mls["ListPrice"] == pytest.approx(row["ListPrice"])
    html = write_brokerage_report(report, tmp_path / "out", workers=0).html.read_text("utf-8")
    cells = parse(html).values
    for _, row in top.iterrows():  # each row is headed by its address and shows its views
        shown, _ = cells[("top_listings", row["Address"], "pageviews")]
        assert same(shown, row["pageviews"])
    for listing_id in top["ListingId"]:  # shown by address, never by a bare id
        assert listing_id not in html.split("<footer>")[0]
    for section in ("Website traffic", "Traffic sources", "Most viewed listings", "Leads"):
        assert f">{section}</h2>" in html
    referrers = report.traffic["referrers"]  # type: ignore[index]
    for _, row in referrers.iterrows():  # the sources table is the traffic summary's
        assert same(cells[("traffic_sources", row["name"], "visitors")][0], row["visitors"])


def test_a_page_whose_listing_left_the_mls_keeps_its_views_without_an_address() -> None:
    pages = pd.DataFrame(
        {
            "name": ["/listings/A1", "/listings/A2", "/about", "/listings/A1/"],
            "visitors": [5, 9, 50, 1],
            "pageviews": [7, 12, 60, 2],
            "conversions": [0, 2, 1, 0],
        }
    )
    ranked = listing_pages(pages)
    assert ranked.to_dict("list") == {
        "ListingId": ["A2", "A1"],
        "pageviews": [12, 9],  # a trailing slash is the same page
        "visitors": [9, 6],
        "conversions": [2, 0],
    }
    mls = pd.DataFrame({"ListingId": ["A1"], "UnparsedAddress": ["1 Ocean Dr, Miami, FL 33139"],
                        "City": ["Miami"], "PropertyType": ["Residential"],
                        "StandardStatus": ["Active"], "ListPrice": [500000.0]})  # fmt: skip
    joined = top_listings(ranked, mls)
    assert joined["Address"].isna().tolist() == [True, False]
    assert joined["Address"].iloc[1] == "1 Ocean Dr, Miami, FL 33139"
    assert joined["ListPrice"].isna().tolist() == [True, False]
    assert joined["pageviews"].tolist() == [12, 9]


def test_files_with_contact_data_are_private_under_umask_022(
    report: BrokerageReport, tmp_path: Path, umask_022: None
) -> None:
    files = write_brokerage_report(report, tmp_path, workers=0)
    assert report.private
    modes = {p.name.removeprefix(report.stem + "."): _mode(p) for p in files.all()}
    assert modes["html"] == modes["report.json"] == 0o600  # its funnel: from the contacts
    assert modes["contacts.parquet"] == modes["contacts.csv"] == 0o600
    public = {
        k: v for k, v in modes.items() if not k.startswith(("html", "contacts", "report.json"))
    }
    assert public and set(public.values()) == {0o644}  # the umask's, for the rest
    assert {"top-listings.csv", "analytics-overview.parquet"} <= set(public)
    contacts = pd.read_parquet(files.data["contacts"]["parquet"])
    assert len(contacts) == int(report.funnel.by_stage["contacts"].sum())  # type: ignore[union-attr]


def test_the_manifest_lists_each_frame_by_hash_and_holds_no_contact(
    report: BrokerageReport, tmp_path: Path
) -> None:
    import json

    from realtyframes.report.manifest import frame_hash

    files = write_brokerage_report(report, tmp_path, workers=0)
    assert files.manifest == tmp_path / f"{report.stem}.report.json"
    content = json.loads(files.manifest.read_text("utf-8"))
    assert content["report"] == "brokerage" and content["as_of"] == AS_OF
    assert content["parameters"] == {"window_days": 90.0, "period": "90d"}
    assert content["rows"] == {name: len(frame) for name, frame in report.frames.items()}
    for name, frame in report.frames.items():
        written = pd.read_parquet(files.data[name]["parquet"])
        assert content["data"][name]["sha256"] == frame_hash(frame)
        assert len(written) == content["rows"][name]
    text = files.manifest.read_text("utf-8")
    ids = [str(i) for i in report.frames["contacts"]["id"].dropna()]
    assert len(ids) > 10  # the control: the report holds contacts
    assert not [i for i in ids if f'"{i}"' in text]  # counts and hashes only


def test_the_command_writes_the_report_and_prints_its_path(
    sandbox_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], umask_022: None
) -> None:
    out = tmp_path / "internal"
    flags = ["--base-url", sandbox_url, "--cache-dir", str(tmp_path / "cache")]
    code = main(["report", "brokerage", "--out", str(out), "--window-days", "30", "--top", "5",
                 *flags])  # fmt: skip
    printed, err = capsys.readouterr()
    assert code == 0, err
    html = Path(printed.strip())
    assert html.parent == out and re.fullmatch(
        r"brokerage-report-\d{4}-\d\d-\d\d-30d\.html", html.name
    )
    assert _mode(html) == 0o600
    top = pd.read_csv(out / html.name.replace(".html", ".top-listings.csv"))
    assert len(top) == 5 and top["Address"].notna().all()
    assert "period 30d" in html.read_text("utf-8")
