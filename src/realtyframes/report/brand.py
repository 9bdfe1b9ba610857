"""The client edition's brand: the brokerage's name and logo, the agent, the disclaimer.

A logo is checked before anything loads (:func:`check_logo`: a PNG, JPEG or SVG by its first
bytes, not its name) and embedded in the page as a data URI (the HTML stays one file). The
settings come from flags or the config file's ``[report]`` table (:func:`brand_from_config`).

>>> Brand(name="Sunshine Realty").disclaimer_for("the MLS", "2026-06-30")
'Source: the MLS, data as of 2026-06-30. Information deemed reliable, not guaranteed.'
"""

from __future__ import annotations

import base64
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from realtyframes.errors import QueryError

__all__ = ["BRAND_KEYS", "LOGO_KINDS", "Brand", "brand_from_config", "check_logo", "logo_data_uri"]

#: Image kinds a logo may be: media type by the file's first bytes.
LOGO_KINDS: dict[str, str] = {"png": "image/png", "jpeg": "image/jpeg", "svg": "image/svg+xml"}
#: Keys of the config file's ``[report]`` table.
BRAND_KEYS: tuple[str, ...] = ("brand_name", "brand_logo", "agent", "disclaimer")
#: A logo larger than this is refused (it is embedded in every report).
MAX_LOGO_BYTES = 2_000_000


@dataclass(frozen=True)
class Brand:
    """Who sends the report: ``name`` (the brokerage), ``logo`` (a checked image path),
    ``agent`` ("name, phone, e-mail") and ``disclaimer`` (None: :meth:`disclaimer_for`'s default)."""

    name: str | None = None
    logo: Path | None = None
    agent: str | None = None
    disclaimer: str | None = None

    def disclaimer_for(self, source: str, day: object) -> str:
        """The disclaimer printed on every page: the given one, else one naming the source and
        its date."""
        if self.disclaimer:
            return self.disclaimer
        return f"Source: {source}, data as of {day}. Information deemed reliable, not guaranteed."


def _kind(head: bytes) -> str | None:
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if head.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    text = head.lstrip(b"\xef\xbb\xbf").lstrip().lower()
    if text.startswith(b"<svg") or (text.startswith(b"<?xml") and b"<svg" in head.lower()):
        return "svg"
    return None


def check_logo(path: str | os.PathLike[str]) -> Path:
    """``path`` if it is a readable PNG, JPEG or SVG file (by its first bytes), else a
    :class:`QueryError` naming ``--brand-logo`` (checked before any load).

    >>> check_logo("README.md")  # doctest: +SKIP
    Traceback (most recent call last):
    ...
    realtyframes.errors.QueryError: --brand-logo: README.md is not a PNG, JPEG or SVG image; allowed: ...
    """
    where = Path(path).expanduser()
    allowed = "a PNG, JPEG or SVG file"
    try:
        size = where.stat().st_size
        with where.open("rb") as handle:
            head = handle.read(512)
    except OSError as exc:
        raise QueryError(
            "--brand-logo", f"{where} cannot be read ({exc.strerror})", allowed
        ) from None
    if _kind(head) is None:
        raise QueryError("--brand-logo", f"{where} is not a PNG, JPEG or SVG image", allowed)
    if size > MAX_LOGO_BYTES:
        raise QueryError("--brand-logo", f"{where} is {size:,} bytes", "an image of at most 2 MB")
    return where


def logo_data_uri(path: str | os.PathLike[str]) -> str:
    """The logo as a ``data:`` URI (embedded: the page needs no other file).

    >>> logo_data_uri("logo.png")[:22]  # doctest: +SKIP
    'data:image/png;base64,'
    """
    data = Path(path).read_bytes()
    kind = _kind(data[:512]) or "png"
    return f"data:{LOGO_KINDS[kind]};base64,{base64.b64encode(data).decode('ascii')}"


def brand_from_config(path: str | os.PathLike[str] | None, **flags: str | None) -> Brand:
    """The brand from ``flags`` (``brand_name``, ``brand_logo``, ``agent``, ``disclaimer``; None:
    not given) over the config file's ``[report]`` table; the logo is checked.

    >>> brand_from_config(None, brand_name="Sunshine Realty").name
    'Sunshine Realty'
    """
    table: Mapping[str, Any] = {}
    if path is not None and Path(path).expanduser().is_file():
        data = tomllib.loads(Path(path).expanduser().read_text(encoding="utf-8"))
        table = data.get("report", {}) if isinstance(data.get("report", {}), dict) else {}
    for key, value in table.items():
        if key not in BRAND_KEYS:
            raise QueryError(f"config file {path}: [report] {key}", "unknown key", BRAND_KEYS)
        if not isinstance(value, str) or not value.strip():
            raise QueryError(f"config file {path}: [report] {key}", "must be a non-empty string")
    values = {k: (flags.get(k) if flags.get(k) is not None else table.get(k)) for k in BRAND_KEYS}
    logo = values["brand_logo"]
    return Brand(
        name=values["brand_name"],
        logo=check_logo(logo) if logo else None,
        agent=values["agent"],
        disclaimer=values["disclaimer"],
    )
