"""Notification targets: apprise URLs, checked when given and never shown with their secrets.

A target's URL holds secrets (an SMTP password, a webhook token in its path or query, a Slack
token in its host): :class:`NotifyTarget` keeps it, and shows only its masked form, apprise's own
privacy form (``url(privacy=True)``) with every password, path segment and query value of the
URL masked on top (a webhook's token in its path is no secret to apprise's JSON plugin).

>>> target = NotifyTarget.parse("json://hook:s3cret@127.0.0.1:8080/in/T0KEN-abc123?-x=1")
>>> target
NotifyTarget('json://hook:****@127.0.0.1:8080/in/***')
>>> "s3cret" in repr(target) or "T0KEN" in str(target)
False
"""

from __future__ import annotations

import logging
import os
import re
import warnings
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from realtyframes.errors import QueryError

__all__ = [
    "MASK",
    "NotifyTarget",
    "instantiate",
    "mask_secrets",
    "masked_logging",
    "parse_targets",
    "quiet_apprise",
    "read_targets_file",
]

MASK = "***"
#: What a notification URL looks like, for error messages.
URL_HELP = (
    "an apprise URL such as mailtos://user:password@smtp.example.com?to=me@example.com, "
    "json://host/path, jsons://host/path, slack://..., msteams://... "
    "(https://github.com/caronc/apprise/wiki)"
)
#: Loggers that may write a target's URL while sending (apprise's plugins; requests / urllib3
#: log the request line of a webhook at debug level). A logger's filters see only its own records.
SENDING_LOGGERS = ("apprise", "urllib3.connectionpool", "requests")
#: Path segments, query values, user names and host tokens shorter than this are not masked.
_MIN_TOKEN = 6
_HOSTNAME = re.compile(r"^(localhost|[\w.-]*\.[\w.-]+|\[[0-9a-fA-F:.]+\])$")


def _secrets_of(url: str) -> tuple[str, ...]:
    """Every part of ``url`` that may be a secret: the password, and (from 6 characters) the user
    of a non-mail URL, a host that is not a host name (tokens), path segments and query values;
    their decoded forms too."""
    try:
        parts = urlsplit(url)
        password, username = parts.password, parts.username
    except ValueError:
        return (url,)
    found: list[str] = []
    if username and not parts.scheme.startswith("mailto"):
        found.append(username)
    netloc_host = parts.netloc.rpartition("@")[2].rsplit(":", 1)[0]
    if netloc_host and not _HOSTNAME.match(netloc_host):
        found.append(netloc_host)
    found += [segment for segment in parts.path.split("/") if segment]
    for pair in parts.query.split("&"):
        value = pair.partition("=")[2]
        if value:
            found.append(value)
    # a token is long; masking every short path word ("in", "hook") would garble log lines
    tokens = [s for s in found if len(s) >= _MIN_TOKEN]
    if password:
        tokens.append(password)
    every = {s for s in [*tokens, *map(unquote, tokens)] if s}
    return tuple(sorted(every, key=len, reverse=True))


def mask_secrets(text: str, secrets: Iterable[str]) -> str:
    """``text`` with each secret replaced by ``***`` (longest first).

    >>> mask_secrets("POST /hook/abc123 failed", ["abc123"])
    'POST /hook/*** failed'
    """
    for secret in sorted(set(secrets), key=len, reverse=True):
        if secret:
            text = text.replace(secret, MASK)
    return text


@contextmanager
def quiet_apprise() -> Iterator[None]:
    """Run apprise with its import-time deprecation of ``imghdr`` (pulled in by its e-mail
    plugin's PGP support on Python < 3.13) silenced: apprise's, not the caller's to act on."""
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message="'imghdr' is deprecated", category=DeprecationWarning
        )
        yield


def instantiate(url: str) -> Any:
    """apprise's plugin for ``url``, or None when apprise cannot send to it (apprise logs the
    URL it loaded: masked here)."""
    with quiet_apprise(), _masking(_secrets_of(url)):
        import apprise

        return apprise.Apprise.instantiate(url, suppress_exceptions=True)


@dataclass(frozen=True)
class NotifyTarget:
    """One notification URL (apprise's syntax). ``str()`` and ``repr()`` show it masked; the URL
    itself is ``.url``, read only to send (never logged).

    >>> NotifyTarget.parse("mailto://me:pw@example.com").masked
    'mailto://me:****@example.com/'
    """

    url: str = field(repr=False)
    masked: str
    secrets: tuple[str, ...] = field(repr=False, default=())

    @classmethod
    def parse(cls, url: str, *, param: str = "notify") -> NotifyTarget:
        """Check ``url`` is a URL apprise can send to (no request is made); a bad one raises
        :class:`~realtyframes.errors.QueryError` naming ``param`` (with the URL masked)."""
        if not isinstance(url, str) or not url.strip():
            raise QueryError(param, f"expected a notification URL, got {url!r}", URL_HELP)
        url = url.strip()
        secrets = _secrets_of(url)
        plugin = instantiate(url)
        if plugin is None:
            shown = mask_secrets(url, secrets)
            raise QueryError(
                param, f"not a notification URL apprise can send to: {shown}", URL_HELP
            )
        masked = mask_secrets(str(plugin.url(privacy=True)), secrets)
        return cls(url=url, masked=_tidy(masked), secrets=secrets)

    @property
    def is_email(self) -> bool:
        """Whether the target sends e-mail (``mailto://`` / ``mailtos://``, and apprise's
        provider e-mail schemes)."""
        return urlsplit(self.url).scheme.lower() in ("mailto", "mailtos")

    def __str__(self) -> str:
        return self.masked

    def __repr__(self) -> str:
        return f"NotifyTarget({self.masked!r})"


def _tidy(masked: str) -> str:
    """apprise's privacy form carries its default parameters (``?format=...&overflow=...``):
    keep the URL short; the masking already happened."""
    return masked.partition("?")[0]


def parse_targets(
    urls: Sequence[NotifyTarget | str] | str | None, *, param: str = "notify"
) -> list[NotifyTarget]:
    """:meth:`NotifyTarget.parse` for each URL (a single string is one URL).

    >>> [str(t) for t in parse_targets(["json://localhost/hook/0a1b2c3d4e"])]
    ['json://localhost/hook/***']
    """
    if urls is None:
        return []
    if isinstance(urls, str):
        urls = [urls]
    return [u if isinstance(u, NotifyTarget) else NotifyTarget.parse(u, param=param) for u in urls]


def read_targets_file(
    path: str | os.PathLike[str], *, param: str = "notify-file"
) -> list[NotifyTarget]:
    """The notification URLs of a file, one a line (blank lines and ``#`` comments skipped), so
    that no URL shows in a process list. The file must be readable by its owner only (0600).

    >>> read_targets_file("~/.config/realtyframes/notify.txt")  # doctest: +SKIP
    [NotifyTarget('mailtos://me:****@smtp.example.com/me%40example.com')]
    """
    file = Path(path).expanduser()
    try:
        mode = file.stat().st_mode & 0o777
        lines = file.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise QueryError(param, f"cannot read {file}: {exc.strerror}", "a readable file") from None
    if os.name == "posix" and mode & 0o077:
        raise QueryError(
            param,
            f"{file} is readable by others (mode {mode:o}): it holds secrets; chmod 600 {file}",
            "a file of mode 0600",
        )
    urls = [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
    if not urls:
        raise QueryError(param, f"{file} holds no URL", "one apprise URL a line")
    return parse_targets(urls, param=param)


class _MaskingFilter(logging.Filter):
    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self.secrets = tuple(secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: logging reports it itself
            return True
        masked = mask_secrets(message, self.secrets)
        if masked != message:
            record.msg, record.args = masked, None
        return True


@contextmanager
def masked_logging(targets: Iterable[NotifyTarget]) -> Iterator[None]:
    """While the block runs, the records of :data:`SENDING_LOGGERS` have the targets' secrets
    masked before any handler sees them."""
    with _masking([s for t in targets for s in t.secrets]):
        yield


@contextmanager
def _masking(secrets: Sequence[str]) -> Iterator[None]:
    mask = _MaskingFilter(secrets)
    loggers = [logging.getLogger(name) for name in SENDING_LOGGERS]
    for logger in loggers:
        logger.addFilter(mask)
    try:
        yield
    finally:
        for logger in loggers:
            logger.removeFilter(mask)
