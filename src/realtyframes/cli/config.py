"""The command line's common side: connection flags, the client, logging, error lines, exit codes.

Settings themselves (flags > environment > config file) are resolved by
:mod:`realtyframes._config`, which a library user needs too; here they come from parsed arguments.
A command body runs inside :func:`run_guarded`: log records and warnings go to stderr (secrets
masked), a failure is one line on stderr and exit code 1 (2 for a configuration error, 130 on
Ctrl-C, 75 when another run kept the scope busy, 3 when the command completed but a run it
recorded was flagged).

>>> from realtyframes.errors import QueryError
>>> error_line(QueryError("Status", "unknown value 'Sold'", ["Active", "Closed"]))
"QueryError: Status: unknown value 'Sold'; allowed: Active, Closed"
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
import traceback
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from realtyframes._config import (
    CONFIG_ENV,
    SETTING_NAMES,
    Settings,
    default_config_path,
    load_settings,
)
from realtyframes.api import SecretMaskingFilter, mask_text
from realtyframes.errors import (
    ApiDeprecationWarning,
    ApiError,
    ConfigError,
    ConnectError,
    InsufficientScopeError,
    InvalidTokenError,
    RateLimitError,
    RealtyFramesError,
    RequestTimeoutError,
    RunAnomalyWarning,
    ScopeBusyError,
    TransportError,
)

if TYPE_CHECKING:
    from realtyframes._client import Client

PROG = "realtyframes"

#: Exit codes of every command (docs/scheduling.md): done; a failure (one line on stderr); bad
#: usage (argparse, a bad option value, an --out that cannot be written, a ConfigError: a
#: misspelt REALTYFRAMES_* variable, a bad config file); done, but a run it recorded was flagged
#: in the run history (RunAnomalyWarning: rows fell, or the quarantine rose, against the previous
#: run of its scope); another run held the scope past its wait (``EX_TEMPFAIL`` of sysexits.h:
#: try again later); interrupted (Ctrl-C, SIGINT); stdout's reader closed the pipe early
#: (``cache list | head -1``: 128 + SIGPIPE, what a shell shows for a Unix tool a closed pipe
#: ended; no traceback, nothing on stderr). A failure or a busy scope wins over an anomaly.
EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_ANOMALY = 3
EXIT_BUSY = 75
EXIT_INTERRUPTED = 130
EXIT_CLOSED_PIPE = 141

logger = logging.getLogger("realtyframes.cli")

#: What a command says (once, on stderr) when nothing is configured and it runs on the sandbox.
SYNTHETIC_NOTICE = (
    "no REALTYFRAMES_BASE_URL, credentials or config file: using the embedded sandbox "
    "(synthetic data, not a real market)"
)

_T = TypeVar("_T", int, float)


def checked(
    kind: Callable[[str], _T],
    what: str,
    ok: Callable[[_T], bool],
    problem: Callable[[str, _T], str],
) -> Callable[[str], _T]:
    """An argparse ``type``: ``kind(text)`` (else "'x' is not <what>") that passes ``ok``
    (else ``problem(text, value)``).

    >>> checked(int, "an integer", lambda v: v >= 0, lambda t, v: f"{v} must be >= 0")("3")
    3
    """

    def parse(text: str) -> _T:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if not ok(value):
            raise argparse.ArgumentTypeError(problem(text, value))
        return value

    return parse


_non_negative_int = checked(int, "an integer", lambda v: v >= 0, lambda t, v: f"{v} must be >= 0")
_positive_float = checked(
    float, "a number", lambda v: 0 < v < float("inf"), lambda t, v: f"{t} must be > 0"
)


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
        "-q",
        "--quiet",
        action="store_true",
        help="no log lines, only the failure line if any (and a flagged run's: exit code 3)",
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


def add_source_argument(parser: argparse.ArgumentParser) -> None:
    """``--source platform|reso``: the platform's API, or the config file's ``[reso]`` source."""
    parser.add_argument(
        "--source",
        choices=("platform", "reso"),
        default="platform",
        help="where the data comes from: the platform's API (default) or the RESO Web API "
        "source of the config file's [reso] table (credentials from the variables it names)",
    )


def make_client(settings: Settings, source: str = "platform", **options: Any) -> Client:
    """A :class:`realtyframes.Client` for ``settings`` (the embedded sandbox when empty);
    ``source="reso"``: the config file's ``[reso]`` source (``Client.reso``).

    >>> client = make_client(load_settings(config_path=None))  # doctest: +SKIP
    """
    from realtyframes._client import Client

    if source == "reso":
        from realtyframes.reso import read_reso_table, reso_arguments

        table = reso_arguments(read_reso_table(settings.config_path))
        if settings.cache_dir is not None:
            options.setdefault("cache_dir", settings.cache_dir)
        return Client.reso(table.pop("base_url"), **table, **options)  # type: ignore[no-any-return]
    announce_source(settings)
    if settings.embedded:
        return Client.sandbox(**settings.client_kwargs(), **options)
    return Client(**settings.client_kwargs(), **options)


def announce_source(settings: Settings) -> None:
    """Say on stderr (a warning line) that the command runs on the embedded sandbox's synthetic
    data when nothing is configured (a misspelt ``REALTYFRAMES_*`` variable never gets here: it
    is a :class:`~realtyframes.ConfigError`, exit 2, from :func:`load_settings`).

    >>> announce_source(load_settings(config_path=None, env={}))  # doctest: +SKIP
    """
    if settings.embedded:
        logger.warning(SYNTHETIC_NOTICE)


class _Formatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        return text.replace("\n", " | ") if record.exc_info is None else text


@contextlib.contextmanager
def cli_logging(
    prog: str,
    *,
    quiet: bool = False,
    verbose: int = 0,
    secrets: list[str] | None = None,
    flagged: list[str] | None = None,
) -> Iterator[None]:
    """Log ``realtyframes.*`` records and warnings to stderr (masked) while the block runs.

    Default: warnings (a scheduled run that goes well prints nothing on stderr); ``verbose`` 1:
    info (progress), 2: debug; ``quiet``: errors only. ``secrets`` (a list that may be filled
    later) are masked out of every record; ``flagged`` gets the message of each
    RunAnomalyWarning (every one, even under ``quiet``). The handlers are removed afterwards.
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
        if flagged is not None and issubclass(category, RunAnomalyWarning):
            flagged.append(mask_text(str(message), masks))
        warned.warning("%s: %s", category.__name__, message)

    with warnings.catch_warnings():
        # warnings (data quality, drift ...) become log lines, never errors; the client already
        # logs deprecations itself
        warnings.filterwarnings("default", category=UserWarning)
        warnings.filterwarnings("ignore", category=ApiDeprecationWarning)
        warnings.filterwarnings("always", category=RunAnomalyWarning)  # each one: the exit code
        warnings.showwarning = show
        try:
            yield
        finally:
            root.removeHandler(handler)
            root.setLevel(saved[0])
            root.propagate = saved[1]


def error_line(exc: BaseException, settings: Settings | None = None) -> str:
    """One line describing a failure for stderr, secrets masked.

    >>> from realtyframes.errors import QueryError
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
    prog: str,
    args: argparse.Namespace,
    body: Callable[[Settings], int],
    settings_env: Mapping[str, str] | None = None,
    *,
    anomalies: bool = True,
) -> int:
    """Run ``body(settings)`` with CLI logging; on failure print one line to stderr, return 1
    (2 for a :class:`ConfigError`: a misspelt variable, a bad config file; 75 for
    :class:`ScopeBusyError`).

    ``body`` returns an exit code; when it is 0 and a run it recorded was flagged
    (RunAnomalyWarning), 3 (``anomalies=False``: 0 still; a server's status is not its runs').
    With ``-vv`` a failure also prints its traceback.
    """
    quiet, verbose = bool(getattr(args, "quiet", False)), int(getattr(args, "verbose", 0) or 0)
    secrets: list[str] = []
    flagged: list[str] = []
    with cli_logging(prog, quiet=quiet, verbose=verbose, secrets=secrets, flagged=flagged):
        settings: Settings | None = None
        try:
            settings = settings_from_args(args, settings_env)
            secrets.extend(settings.secrets)
            code = int(body(settings))
            if code != EXIT_OK or not flagged or not anomalies:
                return code
            if quiet:  # the warnings were not shown: say why the exit code is 3
                for message in flagged:
                    print(f"{prog}: warning: RunAnomalyWarning: {message}", file=sys.stderr)
            return EXIT_ANOMALY
        except KeyboardInterrupt:
            print(f"{prog}: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        except ScopeBusyError as exc:
            print(f"{prog}: error: {error_line(exc, settings)}", file=sys.stderr)
            return EXIT_BUSY
        except ConfigError as exc:  # the configuration, not the run: bad usage, nothing tried
            print(f"{prog}: error: {error_line(exc, settings)}", file=sys.stderr)
            return EXIT_USAGE
        except BrokenPipeError:  # stdout's reader is gone: not a failure; main() ends quietly
            raise
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
