"""The embedded sandbox: one shared, reference-counted server per process.

:func:`embedded` makes the server on first use (default :class:`SandboxOptions`) and hands out
references to it; the server stops when the last reference is released (``atexit`` stops it
anyway as a safety net). ``Client()`` with nothing configured takes a reference and keeps it for
the life of the process.

The server may be lazy (``embedded(lazy=True)``, what ``Client()`` asks for): its port is
reserved at once (so its URL is known), but the data are generated and the server listens only
at :meth:`EmbeddedSandbox.ensure_started`, which the client calls before its first request. A run
answered from the cache alone (a warm report) starts no server at all.

>>> with embedded() as sandbox:  # doctest: +SKIP
...     httpx.get(f"{sandbox.url}/v1/me").json()["email"]
'demo@demo-realty.example'
"""

from __future__ import annotations

import atexit
import socket
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from importlib.metadata import PackageNotFoundError, version
from types import TracebackType

from realtyframes.sandbox._options import SandboxOptions
from realtyframes.sandbox._server import DEFAULT_HOST, RunningSandbox, _bind, _url, start

__all__ = ["EMBEDDED_HISTORY_YEARS", "EMBEDDED_LISTINGS", "EmbeddedSandbox", "current", "embedded"]

#: Years of history of the embedded sandbox: four, one more than ``SandboxOptions``' default, so
#: that the months the report's coverage rule keeps (from 180 days after the oldest listing's
#: entry: about 41 of them) are more than the 3 years a seasonal adjustment needs (with 3 years
#: of history 29 complete months were covered and the report could adjust none; docs/decisions.md).
EMBEDDED_HISTORY_YEARS = 4
#: Listings of the embedded sandbox: as many a year of history as twice ``SandboxOptions``'
#: default over 3 years (10,000), so that a month of the default report still holds about 130
#: sales (65 before: its medians, their YoY and a monthly price index moved by 30-40 % from
#: chance alone; docs/decisions.md).
EMBEDDED_LISTINGS = 13_000
_lock = threading.Lock()
_current: EmbeddedSandbox | None = None


def _package_version() -> str:
    try:
        return version("realtyframes")
    except PackageNotFoundError:  # pragma: no cover - a source tree that was never installed
        return "0+unknown"


class EmbeddedSandbox:
    """A sandbox server shared by its holders: ``url``, ``identity``, ``release()``.

    ``identity`` names the data (seed, size, years of history, day, package version), not the
    random port: caches keyed by it are reused across runs of the same day's data and never mixed
    with another's. The port is reserved when the object is made; the server starts at
    :meth:`ensure_started` (at once unless made lazy).
    """

    def __init__(
        self,
        options: SandboxOptions,
        *,
        lazy: bool = False,
        on_start: Callable[[EmbeddedSandbox], None] | None = None,
    ) -> None:
        self.options = options
        self._sock: socket.socket | None = _bind(DEFAULT_HOST, 0, listen=False)  # the URL is known
        self.url: str = _url(self._sock)
        self.identity: str = (
            f"realtyframes-sandbox:seed={options.seed}:listings={options.listings}:"
            f"history_years={options.history_years}:as_of={options.as_of:%Y-%m-%d}:v{_package_version()}"
        )
        self._context: AbstractContextManager[RunningSandbox] | None = None
        self._running: RunningSandbox | None = None
        self._stopped = False
        self._start_lock = threading.Lock()
        self._on_start = on_start
        self._refs = 0
        atexit.register(self._stop)
        if not lazy:
            self.ensure_started()

    def ensure_started(self) -> RunningSandbox:
        """Start the server if it is not running yet (generate the data, listen on the reserved
        port; ``on_start`` is called then, once); its :class:`RunningSandbox`.

        >>> embedded(lazy=True).ensure_started().url.startswith("http://127.0.0.1:")  # doctest: +SKIP
        True
        """
        with self._start_lock:
            if self._running is None:
                if self._stopped or self._sock is None:
                    raise RuntimeError("the embedded sandbox was stopped")
                context = start(self.options, sock=self._sock)
                self._running = context.__enter__()
                self._context = context
                if self._on_start is not None:
                    self._on_start(self)
            return self._running

    @property
    def started(self) -> bool:
        """True once the server runs (a lazy one: after the first request)."""
        return self._running is not None

    @property
    def running(self) -> RunningSandbox:
        """The server's :class:`RunningSandbox` handle (admin state, app); starts it if needed."""
        return self.ensure_started()

    @property
    def stopped(self) -> bool:
        """True once the last reference was released (or the process is exiting)."""
        return self._stopped

    @property
    def references(self) -> int:
        """How many holders the server has now."""
        return self._refs

    def release(self) -> None:
        """Give back one reference; the server stops with the last one."""
        global _current
        with _lock:
            if self._refs <= 0:
                raise RuntimeError("release() without a reference: the sandbox is not held")
            self._refs -= 1
            if self._refs > 0:
                return
            if _current is self:
                _current = None
        self._stop()

    def _stop(self) -> None:
        with self._start_lock:
            self._stopped = True
            context, self._context = self._context, None
            sock, self._sock = self._sock, None
            self._running = None
        if context is not None:
            context.__exit__(None, None, None)  # closes the socket too
        elif sock is not None:
            sock.close()  # never started: give the reserved port back
        atexit.unregister(self._stop)

    def __enter__(self) -> EmbeddedSandbox:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()

    def __repr__(self) -> str:
        state = "stopped" if self.stopped else f"{self._refs} reference(s)"
        state += "" if self.started or self.stopped else ", not started"
        return f"EmbeddedSandbox({self.url!r}, {state})"


def embedded(
    on_start: Callable[[EmbeddedSandbox], None] | None = None, *, lazy: bool = False
) -> EmbeddedSandbox:
    """A reference to this process's embedded sandbox, made now if there is none.

    ``on_start`` is called once, when the server starts (given by the call that made it).
    ``lazy``: a sandbox made by this call starts at its first :meth:`~EmbeddedSandbox.ensure_started`
    (the client's first request) instead of now. Release the reference with ``release()`` or use
    the result as a context manager.

    >>> with embedded() as sandbox:  # doctest: +SKIP
    ...     sandbox.url.startswith("http://127.0.0.1:")
    True
    """
    global _current
    with _lock:
        if _current is None:
            options = SandboxOptions(
                listings=EMBEDDED_LISTINGS, history_years=EMBEDDED_HISTORY_YEARS
            )
            _current = EmbeddedSandbox(options, lazy=True, on_start=on_start)
        sandbox = _current
        sandbox._refs += 1
    if not lazy:
        sandbox.ensure_started()
    return sandbox


def current() -> EmbeddedSandbox | None:
    """The running embedded sandbox, if any (starts nothing, takes no reference)."""
    return _current
