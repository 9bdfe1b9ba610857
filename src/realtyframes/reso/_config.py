"""A RESO source from the config file: its ``[reso]`` table, credentials from the environment.

The file names where the credentials are, never the credentials themselves::

    [reso]
    base_url = "https://api.mlsgrid.com/v2"
    vendor = "mlsgrid"
    originating_system = "mfrmls"
    token_env = "MLSGRID_TOKEN"          # or client_id_env, client_secret_env and token_url

>>> reso_arguments({"base_url": "http://h/odata", "token_env": "T"}, env={"T": "s3cret"})["token"]
's3cret'
"""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from realtyframes.errors import ConfigError

__all__ = ["RESO_KEYS", "RESO_TABLE", "read_reso_table", "reso_arguments"]

#: The config file's table of a RESO source.
RESO_TABLE = "reso"
#: Its keys: the text ones as Client.reso takes them, the ``*_env`` ones name variables.
RESO_KEYS: tuple[str, ...] = (
    "base_url",
    "vendor",
    "originating_system",
    "page_size",
    "token_url",
    "token_env",
    "client_id_env",
    "client_secret_env",
)


def read_reso_table(path: Path | None) -> dict[str, Any]:
    """The ``[reso]`` table of the config file at ``path`` (a ConfigError if it has none)."""
    label = f"config file {path}"
    if path is None:
        raise ConfigError(
            "config file", "none found, and a RESO source needs its [reso] table", "--config PATH"
        )
    try:
        data = tomllib.loads(Path(path).expanduser().read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(label, f"cannot be read ({type(exc).__name__})") from None
    table = data.get(RESO_TABLE)
    if not isinstance(table, dict):
        raise ConfigError(label, "has no [reso] table", "[reso] with base_url, vendor, token_env")
    return table


def reso_arguments(
    table: Mapping[str, Any], *, env: Mapping[str, str] | None = None, label: str = "[reso]"
) -> dict[str, Any]:
    """``Client.reso`` keyword arguments from a ``[reso]`` table, credentials read from the
    variables it names (a missing variable is a ConfigError naming it; no value is logged)."""
    env = os.environ if env is None else env
    out: dict[str, Any] = {}
    for key, value in table.items():
        if key not in RESO_KEYS:
            near = difflib.get_close_matches(key, RESO_KEYS, n=1)
            hint = "; credentials come from the environment: token_env names the variable"
            hint = hint if key in ("token", "client_secret", "client_id") else ""
            hint = hint or (f"; did you mean {near[0]!r}?" if near else "")
            raise ConfigError(f"{label}: {key}", f"unknown key{hint}", RESO_KEYS)
        if key.endswith("_env"):
            variable = str(value)
            secret = env.get(variable, "").strip()
            if not secret:
                raise ConfigError(f"{label}: {key}", f"the variable {variable} is not set")
            out[key.removesuffix("_env")] = secret
        else:
            out[key] = value
    if "base_url" not in out:
        raise ConfigError(f"{label}: base_url", "missing", "the RESO server's service root")
    return out
