"""Deprecation signals of a response (``Deprecation``, ``Sunset``, ``Link rel=deprecation``).

``Deprecation`` is accepted as ``true``, as a structured date ``@1688169599`` (RFC 9745) and as an
HTTP-date (older drafts); ``Sunset`` is an HTTP-date (RFC 8594). The parsers never raise.

>>> notice = parse_deprecation({"Deprecation": "true",
...                             "Sunset": "Wed, 30 Jun 2027 23:59:59 GMT",
...                             "Link": '<https://docs.example/#legacy>; rel="deprecation"'})
>>> notice.message("GET /api/me")
'GET /api/me is deprecated; sunset 2027-06-30; see https://docs.example/#legacy'
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime


@dataclass(frozen=True)
class Deprecation:
    """What a response said about its operation's deprecation."""

    since: datetime | None = None  # when it was (or will be) deprecated, if given as a date
    sunset: datetime | None = None  # earliest removal
    link: str | None = None  # documentation of the deprecation

    def message(self, operation: str) -> str:
        """One line naming the operation, the sunset date and the link."""
        text = f"{operation} is deprecated"
        if self.since is not None:
            text += f" since {self.since.date().isoformat()}"
        text += f"; sunset {self.sunset.date().isoformat()}" if self.sunset else "; no sunset date"
        if self.link:
            text += f"; see {self.link}"
        return text


def http_date(text: str | None) -> datetime | None:
    """An HTTP-date in UTC (a naive one read as UTC); None if malformed."""
    if not text:
        return None
    try:
        when = parsedate_to_datetime(text.strip())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def _deprecation_value(text: str) -> tuple[bool, datetime | None]:
    value = text.strip()
    lowered = value.lower()
    if lowered in ("true", "?1"):
        return True, None
    if lowered in ("false", "?0", ""):
        return False, None
    if value.startswith("@"):
        digits = value[1:]
        if digits.lstrip("-").isdigit() and len(digits) <= 12:
            try:
                return True, datetime.fromtimestamp(int(digits), UTC)
            except (ValueError, OverflowError, OSError):
                return True, None
        return True, None  # present but unreadable: still a deprecation signal
    when = http_date(value)
    return True, when


_LINK = re.compile(r"<(?P<url>[^>]*)>(?P<params>[^<]*)")
_REL = re.compile(r"""(?:^|;)\s*rel\s*=\s*(?:"(?P<q>[^"]*)"|(?P<t>[^;,\s]+))""", re.IGNORECASE)


def _deprecation_link(text: str | None) -> str | None:
    if not text:
        return None
    for match in _LINK.finditer(text[:8192]):
        rel = _REL.search(match.group("params"))
        if rel is None:
            continue
        rels = (rel.group("q") or rel.group("t") or "").lower().split()
        if "deprecation" in rels:
            return match.group("url").strip() or None
    return None


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    return value if isinstance(value, str) else None


def parse_deprecation(headers: Mapping[str, str]) -> Deprecation | None:
    """The deprecation notice of a response, or None if it is not deprecated.

    >>> parse_deprecation({"Deprecation": "@1688169599"}).since.year
    2023
    >>> parse_deprecation({"Content-Type": "application/json"}) is None
    True
    """
    try:
        raw = _header(headers, "Deprecation")
        if raw is None:
            return None
        deprecated, since = _deprecation_value(raw)
        if not deprecated:
            return None
        return Deprecation(
            since=since,
            sunset=http_date(_header(headers, "Sunset")),
            link=_deprecation_link(_header(headers, "Link")),
        )
    except Exception:  # never let a header break a request
        return None


class DeprecationRegistry:
    """Remembers which operations already warned, so each warns once per client; thread-safe."""

    def __init__(self) -> None:
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def first_time(self, operation: str) -> bool:
        """True the first time ``operation`` is seen."""
        with self._lock:
            if operation in self._seen:
                return False
            self._seen.add(operation)
            return True

    def forget(self, operation: str) -> None:
        """Let ``operation`` warn again (its call failed before the warning could be given)."""
        with self._lock:
            self._seen.discard(operation)
