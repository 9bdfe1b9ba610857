"""Every ``REALTYFRAMES_*`` environment variable the toolkit reads, declared once.

A ``REALTYFRAMES_*`` variable that is none of these (``REALTYFRAMES_TOKN``, ``REALTYFRAMES_URL``) is
a configuration error: ``realtyframes._config.check_variables`` raises :class:`~realtyframes.ConfigError` naming the
one it most likely meant (:func:`unknown_variables`), wherever settings are read from the
environment (``rf.Client()``, every command). Otherwise a misspelt setting silently leaves the
toolkit on the embedded sandbox's synthetic data, and a scheduled job mails demo figures. A new
variable is declared here, once, or every run that sets it fails.

>>> unknown_variables({"REALTYFRAMES_URL": "https://api.example.com", "HOME": "/root"})
[('REALTYFRAMES_URL', 'REALTYFRAMES_BASE_URL')]
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping

__all__ = [
    "CONFIG_VARIABLE",
    "KNOWN_VARIABLES",
    "MCP_AUTH_TOKEN_VARIABLE",
    "PREFIX",
    "SANDBOX_ADMIN_SECRET_VARIABLE",
    "SETTING_VARIABLES",
    "THREADS_VARIABLE",
    "TUNING_VARIABLES",
    "unknown_variables",
]

PREFIX = "REALTYFRAMES_"
#: Settings of a client, by setting name (flags > these > the config file).
SETTING_VARIABLES: dict[str, str] = {
    "base_url": "REALTYFRAMES_BASE_URL",
    "token": "REALTYFRAMES_TOKEN",
    "api_key": "REALTYFRAMES_API_KEY",
    "legacy_url": "REALTYFRAMES_LEGACY_URL",
    "auth_url": "REALTYFRAMES_AUTH_URL",
    "cache_dir": "REALTYFRAMES_CACHE_DIR",
}
#: The config file's path.
CONFIG_VARIABLE = "REALTYFRAMES_CONFIG"
#: Caps the analysis' threads (1: only the calling thread).
THREADS_VARIABLE = "REALTYFRAMES_THREADS"
#: The bearer token of ``realtyframes mcp serve`` over HTTP (not an API credential).
MCP_AUTH_TOKEN_VARIABLE = "REALTYFRAMES_MCP_AUTH_TOKEN"
#: The admin secret of ``realtyframes sandbox --protected`` (else a random one per run).
SANDBOX_ADMIN_SECRET_VARIABLE = "REALTYFRAMES_SANDBOX_ADMIN_SECRET"
#: Tuning settings (memory against speed), by setting name; defaults and meanings in ``_tuning.py``.
TUNING_VARIABLES: dict[str, str] = {
    "detail_batch": "REALTYFRAMES_DETAIL_BATCH",
    "shape_batch": "REALTYFRAMES_SHAPE_BATCH",
    "parse_chunk_bytes": "REALTYFRAMES_PARSE_CHUNK_BYTES",
}
#: Every variable read, in one tuple.
KNOWN_VARIABLES: tuple[str, ...] = (
    *SETTING_VARIABLES.values(),
    CONFIG_VARIABLE,
    THREADS_VARIABLE,
    MCP_AUTH_TOKEN_VARIABLE,
    SANDBOX_ADMIN_SECRET_VARIABLE,
    *TUNING_VARIABLES.values(),
)


def _suggestion(name: str) -> str | None:
    rest = name.removeprefix(PREFIX)
    stems = {known.removeprefix(PREFIX): known for known in KNOWN_VARIABLES}
    near = difflib.get_close_matches(rest, list(stems), n=1, cutoff=0.5)
    if near:
        return stems[near[0]]
    squeezed = rest.replace("_", "")
    for stem, known in stems.items():  # APIKEY -> API_KEY, URL -> BASE_URL
        if squeezed == stem.replace("_", "") or (squeezed and stem.endswith(rest)):
            return known
    return None


def unknown_variables(env: Mapping[str, str] | None = None) -> list[tuple[str, str | None]]:
    """``REALTYFRAMES_*`` variables set in ``env`` (default: the process') that the toolkit never
    reads, each with the known variable it most likely meant (None when nothing is close).

    >>> unknown_variables({"REALTYFRAMES_APIKEY": "k", "REALTYFRAMES_TOKEN": "t"})
    [('REALTYFRAMES_APIKEY', 'REALTYFRAMES_API_KEY')]
    """
    env = os.environ if env is None else env
    return [
        (name, _suggestion(name))
        for name in sorted(env)
        if name.startswith(PREFIX) and name not in KNOWN_VARIABLES
    ]
