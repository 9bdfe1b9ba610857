"""Notifications through apprise: e-mail over SMTP, JSON webhooks, Slack, Teams ... by URL.

:class:`NotifyTarget` checks a URL when it is given and shows it only masked (``_targets``);
:func:`send` delivers one :class:`Message` to each target in the format it renders, attachments
to e-mail only, and reports a :class:`Delivery` per target (``_send``). Watches
(:mod:`realtyframes.watch`) and ``realtyframes report market --notify`` use it; it knows nothing
about listings.

>>> from realtyframes.notify import Message, send
>>> send(["json://127.0.0.1:8080/hook"], Message("t", "text", "md", "<p>html</p>"))  # doctest: +SKIP
"""

from realtyframes.notify._send import (
    NOTIFY_DEADLINE,
    Delivery,
    Message,
    raise_for_failures,
    send,
    table,
)
from realtyframes.notify._targets import (
    MASK,
    URL_HELP,
    NotifyTarget,
    mask_secrets,
    masked_logging,
    parse_targets,
    read_targets_file,
)

__all__ = [
    "MASK",
    "NOTIFY_DEADLINE",
    "URL_HELP",
    "Delivery",
    "Message",
    "NotifyTarget",
    "mask_secrets",
    "masked_logging",
    "parse_targets",
    "raise_for_failures",
    "read_targets_file",
    "send",
    "table",
]
