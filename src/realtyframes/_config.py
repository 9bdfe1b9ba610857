"""Settings of the command line: credentials and hosts from flags, environment or a config file.

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

import argparse
import contextlib
import difflib
import logging
import os
import stat
import sys
import tomllib
import traceback
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from realtyframes._client import ENV_VARS
from realtyframes.api._auth import SecretMaskingFilter, mask_text
from realtyframes.errors import (
    ApiDeprecationWarning,
    ApiError,
    ConnectError,
    InsufficientScopeError,
    InvalidTokenError,
    QueryError,
    RateLimitError,
    RealtyFramesError,
    RequestTimeoutError,
    TransportError,
)

if TYPE_CHECKING:
    from realtyframes._client import Client

logger = logging.getLogger("realtyframes.cli")

#: Names of the settings, in the order of :data:`realtyframes._client.ENV_VARS`.
SETTING_NAMES: tuple[str, ...] = tuple(ENV_VARS)
#: Settings that hold secrets (never printed, logged or written).
SECRET_NAMES: tuple[str, ...] = ("token", "api_key")
#: Environment variable naming the config file.
CONFIG_ENV = "REALTYFRAMES_CONFIG"
#: The config file's path below the user config directory.
CONFIG_RELATIVE = Path("realtyframes") / "config.toml"


class ConfigError(QueryError):
    """The config file cannot be read or holds an unknown key or a bad value."""


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

    Unknown keys and non-string values raise :class:`ConfigError` naming them; a file holding a
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


def load_settings(
    flags: Mapping[str, str | None] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    config_path: str | os.PathLike[str] | bool | None = True,
) -> Settings:
    """Resolve the settings: ``flags`` (None = not given) > ``env`` > the config file.

    ``config_path``: a path (must exist), True (``REALTYFRAMES_CONFIG`` or the default path, if
    it exists) or None/False (no file).

    >>> load_settings({"base_url": "http://h"}, env={"REALTYFRAMES_BASE_URL": "http://e"},
    ...               config_path=None).base_url
    'http://h'
    """
    env = os.environ if env is None else env
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


# -- the command line's side: flags, client, logging, errors ---------------------------------------


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} must be >= 0")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text} must be > 0")
    return value


def client_options(args: argparse.Namespace) -> dict[str, Any]:
    """Client keyword arguments from the flags given (--max-retries, --timeout)."""
    options = {"max_retries": getattr(args, "max_retries", None)}
    options["timeout"] = getattr(args, "timeout", None)
    return {k: v for k, v in options.items() if v is not None}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the connection flags (--base-url, --token, --api-key, ...) and --config, --quiet."""
    group = parser.add_argument_group(
        "connection",
        "flags win over the environment (REALTYFRAMES_BASE_URL, _TOKEN, _API_KEY, ...), which "
        "wins over the config file; with none of them the embedded sandbox is used",
    )
    group.add_argument("--base-url", metavar="URL", help="the service's base URL")
    group.add_argument(
        "--token",
        metavar="TOKEN",
        help="OAuth access token (prefer REALTYFRAMES_TOKEN: flags show in the process list)",
    )
    group.add_argument(
        "--api-key",
        metavar="KEY",
        help="personal API key (prefer REALTYFRAMES_API_KEY or the config file)",
    )
    group.add_argument("--legacy-url", metavar="URL", help="legacy host (default: base URL)")
    group.add_argument("--auth-url", metavar="URL", help="OAuth host (default: base URL)")
    group.add_argument("--cache-dir", metavar="DIR", help="Parquet cache directory")
    group.add_argument(
        "--config",
        metavar="PATH",
        help=f"TOML config file (default: ${CONFIG_ENV}, else {default_config_path()})",
    )
    group.add_argument(
        "--max-retries",
        type=_non_negative_int,
        metavar="N",
        help="retries of a failed request (default 5; 0 = fail on the first error)",
    )
    group.add_argument(
        "--timeout", type=_positive_float, metavar="SECONDS", help="timeout of each request"
    )
    output = parser.add_argument_group("output")
    output.add_argument(
        "-q", "--quiet", action="store_true", help="no log lines, only the failure line if any"
    )
    output.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="-v: progress (info) lines; -vv: debug lines and tracebacks on failure",
    )


def settings_from_args(args: argparse.Namespace, env: Mapping[str, str] | None = None) -> Settings:
    """The :class:`Settings` of parsed arguments (see :func:`add_arguments`)."""
    flags = {name: getattr(args, name, None) for name in SETTING_NAMES}
    config = getattr(args, "config", None)
    return load_settings(flags, env=env, config_path=config if config else True)


def make_client(settings: Settings, **options: Any) -> Client:
    """A :class:`realtyframes.Client` for ``settings`` (the embedded sandbox when empty).

    >>> client = make_client(load_settings(config_path=None))  # doctest: +SKIP
    """
    from realtyframes._client import Client

    return Client(**settings.client_kwargs(), **options)


class _Formatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        return text.replace("\n", " | ") if record.exc_info is None else text


@contextlib.contextmanager
def cli_logging(
    prog: str, *, quiet: bool = False, verbose: int = 0, secrets: list[str] | None = None
) -> Iterator[None]:
    """Log ``realtyframes.*`` records and warnings to stderr (masked) while the block runs.

    Default: warnings (a scheduled run that goes well prints nothing on stderr); ``verbose`` 1:
    info (progress), 2: debug; ``quiet``: errors only. ``secrets`` (a list that may be filled
    later) are masked out of every record. The handlers are removed afterwards.
    """
    masks: list[str] = [] if secrets is None else secrets
    level = (
        logging.ERROR
        if quiet
        else logging.DEBUG
        if verbose >= 2
        else logging.INFO
        if verbose == 1
        else logging.WARNING
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(level)
    handler.setFormatter(_Formatter(f"{prog}: %(levelname)s: %(message)s"))

    class _Mask(SecretMaskingFilter):
        def filter(self, record: logging.LogRecord) -> bool:
            super().filter(record)
            message = record.getMessage()
            masked = mask_text(message, masks)
            if masked != message:
                record.msg, record.args = masked, None
            return True

    handler.addFilter(_Mask())
    root = logging.getLogger("realtyframes")
    saved = (root.level, root.propagate)
    root.addHandler(handler)
    root.setLevel(level)
    root.propagate = False
    warned = logging.getLogger("realtyframes.warnings")

    def show(message: Any, category: type[Warning], *_args: Any, **_kwargs: Any) -> None:
        warned.warning("%s: %s", category.__name__, message)

    with warnings.catch_warnings():
        # warnings (data quality, drift ...) become log lines, never errors; the client already
        # logs deprecations itself
        warnings.filterwarnings("default", category=UserWarning)
        warnings.filterwarnings("ignore", category=ApiDeprecationWarning)
        warnings.showwarning = show
        try:
            yield
        finally:
            root.removeHandler(handler)
            root.setLevel(saved[0])
            root.propagate = saved[1]


def error_line(exc: BaseException, settings: Settings | None = None) -> str:
    """One line describing a failure for stderr, secrets masked.

    >>> error_line(QueryError("Status", "unknown value 'Sold'", ["Active", "Closed"]))
    "QueryError: Status: unknown value 'Sold'; allowed: Active, Closed"
    """
    name = type(exc).__name__
    text = str(exc) or name
    if isinstance(exc, InvalidTokenError):
        text += " — check the token or API key (--token/--api-key, REALTYFRAMES_TOKEN/_API_KEY)"
    elif isinstance(exc, InsufficientScopeError):
        text += " — the credential lacks the scope this command needs"
    elif isinstance(exc, RateLimitError):
        wait = f" in {exc.retry_after:g} s" if exc.retry_after is not None else " later"
        text += f" — the rate limit is used up; retry{wait}"
    elif isinstance(exc, ConnectError | RequestTimeoutError):
        text += " — is the server reachable? (--base-url / REALTYFRAMES_BASE_URL)"
    elif isinstance(exc, OSError) and not isinstance(exc, RealtyFramesError):
        text = f"{exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else "")
    line = f"{name}: {text}"
    line = " ".join(line.split())  # one line
    return settings.mask(line) if settings is not None else mask_text(line)


#: Failures reported as one line (anything else is an internal error, also one line).
EXPECTED_ERRORS: tuple[type[BaseException], ...] = (
    RealtyFramesError,
    ApiError,
    TransportError,
    ValueError,
    OSError,
)


def run_guarded(
    prog: str, args: argparse.Namespace, body: Any, settings_env: Mapping[str, str] | None = None
) -> int:
    """Run ``body(settings)`` with CLI logging; on failure print one line to stderr, return 1.

    ``body`` returns an exit code. With ``-vv`` a failure also prints its traceback.
    """
    quiet, verbose = bool(getattr(args, "quiet", False)), int(getattr(args, "verbose", 0) or 0)
    secrets: list[str] = []
    with cli_logging(prog, quiet=quiet, verbose=verbose, secrets=secrets):
        settings: Settings | None = None
        try:
            settings = settings_from_args(args, settings_env)
            secrets.extend(settings.secrets)
            return int(body(settings))
        except KeyboardInterrupt:
            print(f"{prog}: interrupted", file=sys.stderr)
            return 130
        except Exception as exc:
            expected = isinstance(exc, EXPECTED_ERRORS)
            if verbose >= 2:
                print(mask_text(traceback.format_exc(), secrets), file=sys.stderr)
            line = error_line(exc, settings)
            if expected:
                print(f"{prog}: error: {line}", file=sys.stderr)
            else:
                print(
                    f"{prog}: internal error: {line} (run with -vv for the traceback)",
                    file=sys.stderr,
                )
            return 1
