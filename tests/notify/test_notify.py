"""Notifications through apprise, delivered to real servers on loopback: an SMTP server receiving
the e-mail (HTML body, the report attached) and an HTTP receiver getting the JSON webhook; the
URLs' secrets never in log records, reprs, deliveries or errors."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

import realtyframes as rf
from realtyframes.notify import Message, NotifyTarget, parse_targets, raise_for_failures, send
from receivers import http_receiver, smtp_server

TOKEN = "hook-token-Q7w3Ez"


def _message(tmp_path: Path) -> Message:
    page = tmp_path / "market-report.html"
    page.write_text("<!doctype html><html><body><h1>Market report</h1></body></html>")
    return Message(
        "Weekly: 3 price cuts",
        text="3 price cuts\nA1  $450,000",
        markdown="**3** price cuts\n\n| id | price |\n|---|---|\n| A1 | $450,000 |",
        html="<p>3 price cuts</p><table><tr><td>A1</td><td>$450,000</td></tr></table>",
        attach=(page,),
    )


def _server_records_dropped(caplog: pytest.LogCaptureFixture) -> str:
    """The log text of everything but the test SMTP server's own logger (``mail.log``)."""
    return "\n".join(r.getMessage() for r in caplog.records if not r.name.startswith("mail.log"))


def test_email_over_smtp_carries_the_html_body_and_the_attachment(tmp_path: Path) -> None:
    message = _message(tmp_path)
    with smtp_server() as inbox:
        deliveries = send([inbox.url()], message)
    assert [d.ok for d in deliveries] == [True]
    assert inbox.logins == [(inbox.user, inbox.password)]  # the password was used, and accepted
    (mail,) = inbox.messages
    assert mail["Subject"] == "Weekly: 3 price cuts"
    assert mail["To"] == "analyst@example.com"
    html = mail.get_body(preferencelist=("html",))
    assert html is not None and "<td>$450,000</td>" in html.get_content()
    attached = [(p.get_filename(), p.get_content()) for p in mail.iter_attachments()]
    assert attached == [("market-report.html", (tmp_path / "market-report.html").read_text())]


def test_json_webhook_gets_the_plain_text_and_no_attachment(tmp_path: Path) -> None:
    with http_receiver() as hook:
        deliveries = send([f"json://hookuser:{TOKEN}@{hook.url}/incoming"], _message(tmp_path))
    assert [d.ok for d in deliveries] == [True]
    ((path, headers, body),) = hook.posts
    assert path == "/incoming"
    assert body["title"] == "Weekly: 3 price cuts"
    assert body["message"] == "3 price cuts\nA1  $450,000"
    assert body.get("attachments", []) == []  # the HTML goes to e-mail only
    assert headers["Authorization"].startswith("Basic ")  # the token was sent, to the server


def test_secrets_never_reach_logs_reprs_deliveries_or_errors(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    message = _message(tmp_path)
    with smtp_server() as inbox, http_receiver() as hook:
        hook.status = 500  # the webhook refuses: a failure, logged and raised
        urls = [inbox.url(), f"json://hookuser:{TOKEN}@{hook.url}/in/{TOKEN}?-key={TOKEN}"]
        targets = parse_targets(urls)
        deliveries = send(targets, message)
    assert [d.ok for d in deliveries] == [True, False]
    with pytest.raises(rf.NotificationError) as failure:
        raise_for_failures(deliveries, "the report")
    shown = [
        _server_records_dropped(caplog),
        repr(targets),
        str(targets),
        repr(deliveries),
        str(failure.value),
        repr(failure.value.targets),
    ]
    for text in shown:
        assert inbox.password not in text
        assert TOKEN not in text
    assert "notification to json://" in caplog.text  # the failure is logged, masked
    assert failure.value.targets == (deliveries[1].target,)
    assert "1 of 2 targets" in str(failure.value)


def test_a_url_apprise_cannot_send_to_is_refused_masked_before_anything_is_sent() -> None:
    with pytest.raises(rf.QueryError) as refused:
        NotifyTarget.parse("nosuchscheme://user:pw-Secret-123@example.com/x")
    assert refused.value.param == "notify"
    assert "pw-Secret-123" not in str(refused.value)
    assert "apprise URL" in str(refused.value)
    with pytest.raises(rf.QueryError):
        NotifyTarget.parse("")


def test_each_target_gets_the_format_it_renders(tmp_path: Path) -> None:
    """E-mail gets the HTML, a JSON webhook the plain text (apprise's JSON plugin renders text)."""
    message = _message(tmp_path)
    with smtp_server() as inbox, http_receiver() as hook:
        send([inbox.url(), f"json://{hook.url}/x"], message)
    (mail,) = inbox.messages
    html = mail.get_body(preferencelist=("html",))
    assert html is not None and "<table>" in html.get_content()
    assert hook.bodies[0]["message"] == message.text
