"""``report brokerage --notify``: the internal report mailed to a real SMTP server on loopback,
its PDF with ``--pdf`` (else the HTML) attached, a body of the page's headline counts and no
contact's data, and every log line naming the target masked."""

from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path

import pytest

import realtyframes as rf
from realtyframes.cli import main
from realtyframes.cli.config import EXIT_OK
from realtyframes.report import pdf_problem
from receivers import smtp_server


def _contact_strings(sandbox_url: str, cache: Path) -> set[str]:
    """Every contact's name, e-mail, phone, street address and id, as the sandbox has them."""
    with rf.Client(base_url=sandbox_url, cache_dir=cache, progress=False) as client:
        contacts = client.contacts()
    found: set[str] = set()
    for column in ("id", "name", "email", "streetAddress", "phones"):
        for value in contacts[column].dropna():
            found.update(str(v) for v in (value if isinstance(value, list | tuple) else [value]))
    return {s for s in found if len(s) > 3}


def _need_engine() -> None:
    """The PDF engine (playwright and Chromium): a skip without it on a developer's machine, a
    failure in CI (which installs it)."""
    problem = pdf_problem()
    if problem is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs the PDF engine: {problem}")
        pytest.skip(str(problem))


@pytest.mark.parametrize("pdf", [False, True], ids=["html", "pdf"])
def test_report_brokerage_notify_mails_the_report_without_contact_data_and_masks_the_url(
    pdf: bool,
    sandbox_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    if pdf:
        _need_engine()
    caplog.set_level(logging.DEBUG)
    out = tmp_path / "internal"
    flags = ["--base-url", sandbox_url, "--cache-dir", str(tmp_path / "cache"), "--top", "3"]
    with smtp_server() as inbox:
        code = main(["report", "brokerage", "-v", "--out", str(out), "--notify", inbox.url(),
                     *(["--pdf"] if pdf else []), *flags])  # fmt: skip
    printed, err = capsys.readouterr()
    assert code == EXIT_OK, err
    paths = [Path(line) for line in printed.split()]
    html = paths[0]
    sent = paths[1] if pdf else html
    assert len(paths) == (2 if pdf else 1) and sent.suffix == (".pdf" if pdf else ".html")
    assert stat.S_IMODE(sent.stat().st_mode) == 0o600  # it holds the CRM's funnel
    (mail,) = inbox.messages
    assert inbox.logins == [(inbox.user, inbox.password)]
    assert "brokerage report" in mail["Subject"] and "internal" in mail["Subject"]
    attached = [(p.get_filename(), p.get_payload(decode=True)) for p in mail.iter_attachments()]
    assert attached == [(sent.name, sent.read_bytes())]
    body = mail.get_body(("html", "plain"))
    assert body is not None
    text = body.get_content()
    assert "CRM contacts" in text and "Website visitors" in text  # the page's headline counts
    leaked = [s for s in _contact_strings(sandbox_url, tmp_path / "c2") if s in text]
    assert leaked == []
    assert "@example" not in text.replace("watcher@example.com", "")
    for shown in (printed, err, caplog.text):  # the URL's password never shown
        assert inbox.password not in shown
    assert f"notification sent to mailto://{inbox.user}:***@" in err  # -v: the log, masked


@pytest.mark.browser
@pytest.mark.parametrize("edition", ["client", "analyst"])
def test_the_market_pdf_is_in_report_files_and_the_manifest(
    edition: str, sandbox_url: str, tmp_path: Path
) -> None:
    _need_engine()
    from realtyframes.report import compute_market_report, load_market_frames, write_market_report
    from realtyframes.report.options import MarketReportOptions

    options = MarketReportOptions(as_of="2026-06-30", cities=("Coral Gables",), edition=edition,
                                  source="test sandbox")  # fmt: skip
    with rf.Client(base_url=sandbox_url, cache_dir=tmp_path / "cache", progress=False) as client:
        report = compute_market_report(load_market_frames(client, options), options)
    plain = write_market_report(report, tmp_path / "plain", workers=0)
    printed = write_market_report(report, tmp_path / "printed", workers=0, pdf=True)
    assert plain.pdf is None and "pdf" not in json.loads(plain.manifest.read_text())
    assert printed.pdf == printed.html.with_suffix(".pdf") and printed.pdf in printed.all()
    assert printed.pdf.read_bytes().startswith(b"%PDF-")
    assert printed.manifest is not None
    assert json.loads(printed.manifest.read_text())["pdf"] == printed.pdf.name
