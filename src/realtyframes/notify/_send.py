"""Send one message to apprise targets: the body in the format each target takes, attachments to
e-mail only, apprise's log records masked, an outcome per target.

>>> message = Message("Watch miami: 2 changes", text="2 changes", markdown="**2** changes",
...                   html="<b>2</b> changes")
>>> send(["json://127.0.0.1:8080/hook"], message)  # doctest: +SKIP
[Delivery(target='json://127.0.0.1:8080/***', ok=True)]
"""

from __future__ import annotations

import html as html_module
import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from realtyframes.errors import NotificationError, NotificationTimeout, QueryError
from realtyframes.notify._targets import (
    NotifyTarget,
    instantiate,
    masked_logging,
    parse_targets,
    quiet_apprise,
)

__all__ = ["NOTIFY_DEADLINE", "Delivery", "Message", "raise_for_failures", "send", "table"]

logger = logging.getLogger("realtyframes.notify")

#: Seconds one target may take to accept a notification, in all (connecting, sending, waiting for
#: its answer, apprise's retries): past it the sending is abandoned and the target not delivered
#: (``NotificationTimeout``). docs/scheduling.md.
NOTIFY_DEADLINE = 60.0


@dataclass(frozen=True)
class Message:
    """One notification: a title and the same body as plain text, Markdown and HTML (each target
    gets the format it renders), and files attached to e-mail (``attach``)."""

    title: str
    text: str
    markdown: str
    html: str
    attach: tuple[Path, ...] = field(default=())


@dataclass(frozen=True)
class Delivery:
    """The outcome of one target: its masked URL, whether apprise delivered the message, and
    why not when it is known (``error``: a :class:`~realtyframes.errors.NotificationTimeout`
    past the deadline)."""

    target: str
    ok: bool
    error: NotificationError | None = None


def _body(plugin: Any, message: Message, email: bool) -> tuple[str, str]:
    """(body, body_format) for the plugin: HTML for e-mail, else the plugin's own format."""
    if email:
        return message.html, "html"
    wanted = getattr(plugin, "notify_format", "text")
    if isinstance(wanted, tuple | list):
        wanted = wanted[0] if wanted else "text"
    wanted = str(getattr(wanted, "value", wanted))
    if wanted == "html":
        return message.html, "html"
    if wanted == "markdown":
        return message.markdown, "markdown"
    return message.text, "text"


def _send_one(target: NotifyTarget, message: Message) -> bool:
    plugin = instantiate(target.url)
    if plugin is None:  # checked when added; a plugin missing now (apprise changed)
        return False
    body, body_format = _body(plugin, message, target.is_email)
    with quiet_apprise():
        import apprise

        manager = apprise.Apprise()
        manager.add(plugin)
        attach = [str(p) for p in message.attach] if target.is_email and message.attach else None
        return bool(
            manager.notify(body=body, title=message.title, body_format=body_format, attach=attach)
        )


def _send_within(target: NotifyTarget, message: Message, deadline: float) -> bool:
    """:func:`_send_one` in a thread of its own, waited for ``deadline`` seconds at most; raises
    :class:`NotificationTimeout` past it (the thread, a daemon, is left to its socket)."""
    outcome: list[bool | BaseException] = []

    def deliver() -> None:
        try:
            outcome.append(_send_one(target, message))
        except BaseException as exc:  # handed to the caller's thread
            outcome.append(exc)

    worker = threading.Thread(target=deliver, name="realtyframes-notify", daemon=True)
    worker.start()
    worker.join(deadline)
    if not outcome:
        raise NotificationTimeout(
            f"the notification to {target} took more than its deadline of {deadline:g} s",
            [str(target)],
            deadline,
        )
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return outcome[0]


def send(
    targets: Sequence[NotifyTarget | str],
    message: Message,
    *,
    deadline: float = NOTIFY_DEADLINE,
) -> list[Delivery]:
    """Send ``message`` to each target (apprise URLs; strings are checked first); one
    :class:`Delivery` per target, in order. Each target has ``deadline`` seconds in all
    (:data:`NOTIFY_DEADLINE`); past it, the sending is abandoned and its Delivery is not ok, with
    a :class:`~realtyframes.errors.NotificationTimeout`. A failure is logged (masked) and
    reported in its Delivery, never raised here: see :func:`raise_for_failures`.

    >>> send(["mailtos://me:pw@smtp.example.com?to=me@example.com"], message)  # doctest: +SKIP
    """
    if isinstance(deadline, bool) or not isinstance(deadline, int | float) or not deadline > 0:
        raise QueryError("deadline", f"{deadline!r} is not a number of seconds > 0", "seconds > 0")
    checked = parse_targets(list(targets))
    deliveries: list[Delivery] = []
    with masked_logging(checked):
        for target in checked:
            error: NotificationError | None = None
            try:
                ok = _send_within(target, message, float(deadline))
            except NotificationTimeout as late:
                logger.warning("%s; abandoned", late)
                ok, error = False, late
            except Exception as exc:  # a plugin's own bug: report it masked, go on
                shown = " ".join(f"{type(exc).__name__}: {exc}".split())
                for secret in target.secrets:
                    shown = shown.replace(secret, "***")
                logger.warning("notification to %s raised %s", target, shown)
                ok = False
            if ok:
                logger.info("notification sent to %s", target)
            else:
                logger.warning("notification to %s was not delivered", target)
            deliveries.append(Delivery(str(target), ok, error))
    return deliveries


def raise_for_failures(deliveries: Sequence[Delivery], what: str) -> None:
    """Raise :class:`~realtyframes.errors.NotificationError` naming the targets (masked) that
    did not get ``what``; nothing when all did.

    >>> raise_for_failures([Delivery("json://h/***", True)], "the report")
    """
    failed = [d.target for d in deliveries if not d.ok]
    if failed:
        raise NotificationError(
            f"{what} was not delivered to {len(failed)} of {len(deliveries)} targets: "
            + ", ".join(failed),
            failed,
        )


def table(
    columns: Sequence[str], rows: Sequence[Sequence[str]], links: Mapping[int, str] | None = None
) -> tuple[str, str, str]:
    """A small table as (plain text, Markdown, HTML); ``links`` maps a row number to a URL that
    the row's first cell links to (Markdown and HTML; appended in plain text).

    >>> print(table(["id", "price"], [["A1", "$450,000"]])[0])
    id  price
    A1  $450,000
    """
    links = links or {}
    widths = [max(len(str(c)), *(len(str(r[i])) for r in rows)) for i, c in enumerate(columns)]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip()]
    for n, row in enumerate(rows):
        line = "  ".join(str(v).ljust(w) for v, w in zip(row, widths, strict=True)).rstrip()
        lines.append(line + (f"  {links[n]}" if n in links else ""))
    text = "\n".join(lines)

    def md_cell(value: str) -> str:
        return str(value).replace("|", "\\|")

    md = ["| " + " | ".join(map(md_cell, columns)) + " |", "|" + "---|" * len(columns)]
    for n, row in enumerate(rows):
        cells = [md_cell(v) for v in row]
        if n in links:
            cells[0] = f"[{cells[0]}]({links[n]})"
        md.append("| " + " | ".join(cells) + " |")
    esc = html_module.escape
    head = "".join(f"<th align='left'>{esc(str(c))}</th>" for c in columns)
    body = []
    for n, row in enumerate(rows):
        cells = [esc(str(v)) for v in row]
        if n in links:
            cells[0] = f"<a href='{esc(links[n], quote=True)}'>{cells[0]}</a>"
        body.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    html = (
        "<table cellpadding='4' style='border-collapse:collapse'>"
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )
    return text, "\n".join(md), html
