"""Settings: credentials and hosts from explicit values (flags), the environment or a config file.

Precedence, per setting: a command-line flag, then the environment (``REALTYFRAMES_BASE_URL``,
``_TOKEN``, ``_API_KEY``, ``_LEGACY_URL``, ``_AUTH_URL``, ``_CACHE_DIR``), then the config file
(``--config PATH``, else ``REALTYFRAMES_CONFIG``, else ``$XDG_CONFIG_HOME/realtyframes/config.toml``
or ``~/.config/realtyframes/config.toml`` when it exists). The file is TOML with the same names::

    base_url = "https://api.example.com"
    api_key = "..."          # keep the file private: chmod 600
    cache_dir = "~/data/realtyframes"

Secrets (``token``, ``api_key``) are never echoed: :class:`Settings` hides them in its ``repr``
and :meth:`Settings.mask` scrubs them from any text. With no base URL and no credentials the
client runs on the embedded sandbox.

>>> settings = load_settings({"base_url": None}, env={}, config_path=None)
>>> settings.embedded
True
"""

from __future__ import annotations

import contextlib
import difflib
import logging
import os
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from realtyframes._environment import (
    CONFIG_VARIABLE,
    KNOWN_VARIABLES,
    SETTING_VARIABLES,
    unknown_variables,
)
from realtyframes.api import mask_text
from realtyframes.errors import ConfigError, QueryError

__all__ = [
    "CONFIG_ENV",
    "SECRET_NAMES",
    "SETTING_NAMES",
    "ConfigError",
    "Settings",
    "check_variables",
    "default_config_path",
    "load_settings",
    "read_config",
]

logger = logging.getLogger("realtyframes.config")

#: Environment variables read by :meth:`Client.from_env`.
ENV_VARS: dict[str, str] = SETTING_VARIABLES
#: Names of the settings, in the order of :data:`ENV_VARS`.
SETTING_NAMES: tuple[str, ...] = tuple(ENV_VARS)
#: Settings that hold secrets (never printed, logged or written).
SECRET_NAMES: tuple[str, ...] = ("token", "api_key")
#: Environment variable naming the config file.
CONFIG_ENV = CONFIG_VARIABLE
#: The config file's table of report settings (brand, agent, disclaimer), read by the report.
REPORT_TABLE = "report"
#: The config file's table of a RESO source (read by :mod:`realtyframes.reso`).
RESO_TABLE = "reso"
#: The config file's path below the user config directory.
CONFIG_RELATIVE = Path("realtyframes") / "config.toml"


@dataclass(frozen=True)
class Settings:
    """Resolved hosts and credentials, with where each value came from (``sources``).

    >>> s = Settings(base_url="http://127.0.0.1:8642", token="t0ps3cret")
    >>> "t0ps3cret" in repr(s)
    False
    """

    base_url: str | None = None
    token: str | None = field(default=None, repr=False)
    api_key: str | None = field(default=None, repr=False)
    legacy_url: str | None = None
    auth_url: str | None = None
    cache_dir: str | None = None
    config_path: Path | None = None
    sources: Mapping[str, str] = field(default_factory=dict)

    @property
    def embedded(self) -> bool:
        """True when nothing points elsewhere: the client starts the embedded sandbox."""
        return self.base_url is None and self.token is None and self.api_key is None

    @property
    def secrets(self) -> tuple[str, ...]:
        """The secret values, longest first (to mask them out of any text)."""
        return tuple(sorted((v for v in (self.token, self.api_key) if v), key=len, reverse=True))

    def mask(self, text: str) -> str:
        """``text`` with every secret (and any ``api_key=``/Bearer value) replaced by ``***``.

        >>> Settings(token="abc123").mask("sent abc123")
        'sent ***'
        """
        return mask_text(text, self.secrets)

    def client_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for :class:`realtyframes.Client` (only the settings given)."""
        return {
            name: getattr(self, name) for name in SETTING_NAMES if getattr(self, name) is not None
        }

    def __repr__(self) -> str:
        shown = [f"{n}={getattr(self, n)!r}" for n in SETTING_NAMES if n not in SECRET_NAMES]
        shown += [f"{n}={'***' if getattr(self, n) else None}" for n in SECRET_NAMES]
        return f"Settings({', '.join(shown)})"


def default_config_path(env: Mapping[str, str] | None = None) -> Path:
    """Where the config file is looked for when neither ``--config`` nor ``REALTYFRAMES_CONFIG``
    is given: ``$XDG_CONFIG_HOME/realtyframes/config.toml``, else ``~/.config/...``.

    >>> default_config_path({"XDG_CONFIG_HOME": "/cfg"}).as_posix()
    '/cfg/realtyframes/config.toml'
    """
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME", "").strip()
    root = Path(base) if base else Path(env.get("HOME") or Path.home()) / ".config"
    return root / CONFIG_RELATIVE


def read_config(path: str | os.PathLike[str]) -> dict[str, str]:
    """Read a TOML config file: string values under the setting names only.

    A ``[report]`` table (the report's brand) is left to the report. Unknown keys and
    non-string values raise :class:`ConfigError` naming them; a file holding a
    secret that other users can read is logged as a warning.

    >>> read_config("~/.config/realtyframes/config.toml")  # doctest: +SKIP
    {'base_url': 'https://api.example.com', 'api_key': '...'}
    """
    where = Path(path).expanduser()
    label = f"config file {where}"
    try:
        data = tomllib.loads(where.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(label, "not found", "an existing TOML file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(label, f"cannot be read ({type(exc).__name__})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(label, f"is not valid TOML ({exc})") from None
    values: dict[str, str] = {}
    for key, value in data.items():
        if key in (REPORT_TABLE, RESO_TABLE) and isinstance(value, dict):
            continue  # the report's brand (realtyframes.report.brand), a RESO source (.reso)
        if key not in SETTING_NAMES:
            near = difflib.get_close_matches(key, SETTING_NAMES, n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise ConfigError(f"{label}: {key}", f"unknown key{hint}", SETTING_NAMES)
        if not isinstance(value, str) or not value.strip():
            kind = type(value).__name__
            raise ConfigError(f"{label}: {key}", f"must be a non-empty string, got a {kind}")
        values[key] = value.strip()
    if any(name in values for name in SECRET_NAMES):
        with contextlib.suppress(OSError):
            if where.stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO):
                logger.warning(
                    "%s holds a secret and other users can read it; run: chmod 600 %s",
                    label,
                    where,
                )
    return values


def check_variables(env: Mapping[str, str] | None = None) -> None:
    """Raise :class:`~realtyframes.ConfigError` for the first ``REALTYFRAMES_*`` variable of
    ``env`` (default: the process') the toolkit does not read, naming what it most likely meant.

    >>> check_variables({"REALTYFRAMES_TOKN": "t"})
    Traceback (most recent call last):
    ...
    realtyframes.errors.ConfigError: REALTYFRAMES_TOKN: not a variable of realtyframes; did you mean REALTYFRAMES_TOKEN? (rename or unset it)
    """
    unknown = unknown_variables(env)
    if not unknown:
        return
    name, near = unknown[0]
    hint = f"; did you mean {near}?" if near else ""
    others = f" ({len(unknown) - 1} more unknown)" if len(unknown) > 1 else ""
    problem = f"not a variable of realtyframes{hint} (rename or unset it){others}"
    raise ConfigError(name, problem, KNOWN_VARIABLES, brief=near is not None)


def load_settings(
    flags: Mapping[str, str | None] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    config_path: str | os.PathLike[str] | bool | None = True,
) -> Settings:
    """Resolve the settings: ``flags`` (None = not given) > ``env`` > the config file.

    ``config_path``: a path (must exist), True (``REALTYFRAMES_CONFIG`` or the default path, if
    it exists) or None/False (no file). A ``REALTYFRAMES_*`` variable of ``env`` that the toolkit
    does not read raises :class:`~realtyframes.ConfigError` naming the one it most likely meant.

    >>> load_settings({"base_url": "http://h"}, env={"REALTYFRAMES_BASE_URL": "http://e"},
    ...               config_path=None).base_url
    'http://h'
    """
    env = os.environ if env is None else env
    check_variables(env)  # a misspelt REALTYFRAMES_* is an error, not a quiet fallback
    flags = dict(flags or {})
    unknown = set(flags) - set(SETTING_NAMES)
    if unknown:
        raise QueryError(sorted(unknown)[0], "unknown setting", SETTING_NAMES)

    path: Path | None = None
    if config_path is True:
        named = env.get(CONFIG_ENV, "").strip()
        if named:
            path = Path(named).expanduser()
        else:
            candidate = default_config_path(env)
            path = candidate if candidate.is_file() else None
    elif config_path:
        path = Path(config_path).expanduser()
    from_file = read_config(path) if path is not None else {}

    values: dict[str, str | None] = {}
    sources: dict[str, str] = {}
    for name in SETTING_NAMES:
        flag = flags.get(name)
        env_value = env.get(ENV_VARS[name], "").strip()
        if flag is not None:
            if not str(flag).strip():
                raise QueryError(f"--{name.replace('_', '-')}", "empty value", "a non-empty value")
            values[name], sources[name] = str(flag).strip(), "flag"
        elif env_value:
            values[name], sources[name] = env_value, f"environment {ENV_VARS[name]}"
        elif name in from_file:
            values[name], sources[name] = from_file[name], f"config file {path}"
        else:
            values[name] = None
    return Settings(**values, config_path=path, sources=sources)
