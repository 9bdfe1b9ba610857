"""The report's charts, drawn by several processes at once, each to the same bytes.

A chart on the page is a :class:`Chart`: an ``rf.plot`` function and its arguments. While a page
renders inside :func:`deferred_charts`, :func:`render_chart` only notes the chart and leaves a
placeholder; ``fill`` then draws every chart (worker processes take them from the front, this
process from the back, so it is never idle) and puts each ``<figure>`` in its place. A chart is
drawn from its data in the process that draws it (its Figure never crosses processes), under
the caller's matplotlib settings, and warnings raised while drawing are raised again here:
the page is the same bytes, and warns the same, however many processes drew it.

Workers are spawned (never forked: the calling process may run threads, such as the embedded
sandbox's server), so each pays its imports once; :func:`chart_workers` starts them early, to
import while the caller loads its data (the ``report market`` command does).

>>> with deferred_charts() as charts:  # doctest: +SKIP
...     page = "<main>" + render_chart(chart(rf.plot.devices, traffic), "Devices", "devices")
>>> html = charts.fill(page)  # doctest: +SKIP
"""

from __future__ import annotations

import multiprocessing
import os
import re
import sys
import warnings
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, cast

from realtyframes.report._html import figure_html, figure_png

__all__ = [
    "Chart",
    "chart",
    "chart_workers",
    "default_workers",
    "deferred_charts",
    "draw_charts",
    "render_chart",
]

#: At most this many worker processes (each holds its own pandas and matplotlib, ~150 MB).
MAX_WORKERS = 3
#: Fewer charts than this are drawn here: starting a worker costs more than it saves.
MIN_CHARTS = 4
#: matplotlib settings that are not copied to the workers (which backend draws is theirs).
_LOCAL_RC = frozenset({"backend", "backend_fallback", "interactive"})


@dataclass(frozen=True)
class Chart:
    """A chart to draw: ``func(*args, **kwargs)`` returns a matplotlib Figure (or an Axes on
    one). ``func`` is a module-level function (an ``rf.plot`` function) so that a worker process
    can find it by name."""

    func: Callable[..., Any]
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


def chart(func: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Chart:
    """The chart ``func(*args, **kwargs)``, to be drawn later.

    >>> chart(max, 1, 2).args
    (1, 2)
    """
    return Chart(func, args, kwargs)


def _settings() -> dict[str, Any]:
    """The caller's matplotlib settings, for a worker to draw under."""
    import matplotlib

    return {k: v for k, v in matplotlib.rcParams.items() if k not in _LOCAL_RC}


def _draw(job: Chart, settings: dict[str, Any]) -> tuple[bytes, list[tuple[str, type[Warning]]]]:
    """PNG bytes of one chart under ``settings``, and the warnings drawing it raised (in a
    worker process, or in this one)."""
    import matplotlib
    from matplotlib.figure import Figure

    with warnings.catch_warnings(record=True) as caught, matplotlib.rc_context(cast(Any, settings)):
        warnings.simplefilter("always")
        drawn = job.func(*job.args, **job.kwargs)
        figure = drawn if isinstance(drawn, Figure) else drawn.figure
        if not isinstance(figure, Figure):  # pragma: no cover - rf.plot never draws on subfigures
            raise TypeError("the chart is not on a top-level matplotlib Figure")
        png = figure_png(figure)
    return png, [(str(w.message), w.category) for w in caught]


def _ready() -> None:
    """A worker's first job: import what drawing needs, while the caller loads its data."""
    import realtyframes.plots  # noqa: F401


def default_workers() -> int:
    """How many worker processes draw beside this one: as many as there are idle cores besides
    this process's own (cores it may use minus the 1-minute load average, this process
    included, rounded), at most :data:`MAX_WORKERS`; 0 on one core or a busy machine, where a
    worker only adds its imports (measured: docs/benchmarks.md).

    >>> default_workers() >= 0
    True
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    try:
        idle = round(cores - os.getloadavg()[0])
    except (AttributeError, OSError):  # pragma: no cover - no load average (Windows)
        idle = cores - 1
    return max(0, min(cores - 1, idle, MAX_WORKERS))


def _main_is_safe() -> bool:
    """True when a spawned worker would not run the caller's script again: an interactive
    session, ``python -c``, or a package's ``__main__`` (``python -m ...``). A plain script
    without an ``if __name__ == "__main__"`` guard would run again in each worker."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    return getattr(main, "__file__", None) is None or (
        spec is not None and str(spec.name).endswith("__main__")
    )


def _start(workers: int) -> ProcessPoolExecutor:
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
    for _ in range(workers):  # each start returns at once; the imports run meanwhile
        pool.submit(_ready)
    return pool


_POOL: ContextVar[tuple[ProcessPoolExecutor, int] | None] = ContextVar("chart_pool", default=None)


@contextmanager
def chart_workers(workers: int | None = None) -> Iterator[int]:
    """Start the chart workers now (``workers``, default :func:`default_workers`), so that they
    import while the block loads data; reports written inside the block draw with them. Yields
    the number started (0: charts are drawn in this process)."""
    n = default_workers() if workers is None else workers
    if n < 1 or not _main_is_safe():
        yield 0
        return
    pool = _start(n)
    token = _POOL.set((pool, n))
    try:
        yield n
    finally:
        _POOL.reset(token)
        pool.shutdown(wait=True, cancel_futures=True)


def _together(
    pool: ProcessPoolExecutor, workers: int, jobs: list[Chart], settings: dict[str, Any]
) -> list[Any]:
    """Every job drawn: the workers take them from the front (each with one more queued, so it
    never waits for this process), this process from the back. Nothing is ever cancelled: a
    worker that dies (killed, out of memory) leaves its charts to this process."""
    todo = deque(range(len(jobs)))
    running: dict[Future[Any], int] = {}
    drawn: list[Any] = [None] * len(jobs)
    broken = False
    while todo or running:
        while todo and not broken and len(running) < 2 * workers:
            i = todo.popleft()
            try:
                running[pool.submit(_draw, jobs[i], settings)] = i
            except BrokenProcessPool:
                todo.appendleft(i)
                broken = True
        if todo:
            i = todo.pop()
            drawn[i] = _draw(jobs[i], settings)
            done = [f for f in running if f.done()]
        else:
            done = list(wait(running, return_when=FIRST_COMPLETED).done)
        for future in done:
            i = running.pop(future)
            try:
                drawn[i] = future.result()
            except BrokenProcessPool:
                broken = True
                todo.append(i)
    return drawn


def draw_charts(jobs: list[Chart], *, workers: int | None = None) -> list[bytes]:
    """PNG bytes of each chart, in order. ``workers``: processes drawing beside this one (0: none;
    default: those of :func:`chart_workers` if started, else :func:`default_workers`), when
    there are enough charts and the caller's main module allows spawning (a script without an
    ``if __name__ == "__main__"`` guard would run again in each worker: drawn here alone).
    Warnings raised while drawing are raised here, in order."""
    settings = _settings()
    shared, own = _POOL.get(), None
    if workers == 0 or len(jobs) < MIN_CHARTS:
        shared = None
    elif shared is None:
        n = default_workers() if workers is None else workers
        if n >= 1 and _main_is_safe():
            shared = (own := _start(n)), n
    try:
        if shared is None:
            drawn = [_draw(job, settings) for job in jobs]
        else:
            drawn = _together(*shared, jobs, settings)
    finally:
        if own is not None:
            own.shutdown(wait=True)
    for _, caught in drawn:
        for message, category in caught:
            warnings.warn(message, category, stacklevel=2)
    return [png for png, _ in drawn]


_PLACEHOLDER = "<!--rf-chart-{}-->"  # never in escaped text: esc() turns "<" into "&lt;"
_PLACEHOLDERS = re.compile(r"<!--rf-chart-(\d+)-->")


class DeferredCharts:
    """The charts a page names while it renders; ``fill`` draws them into it."""

    def __init__(self) -> None:
        self.jobs: list[Chart] = []
        self.figures: list[tuple[str, str, str | None]] = []  # alt, chart id, caption

    def add(self, job: Chart, alt: str, chart_id: str, caption: str | None) -> str:
        self.jobs.append(job)
        self.figures.append((alt, chart_id, caption))
        return _PLACEHOLDER.format(len(self.jobs) - 1)

    def fill(self, page: str, *, workers: int | None = None) -> str:
        """``page`` with each chart drawn in its place (see :func:`draw_charts`)."""
        pngs = draw_charts(self.jobs, workers=workers)
        html = [
            figure_html(png, alt, chart_id, caption=caption)
            for png, (alt, chart_id, caption) in zip(pngs, self.figures, strict=True)
        ]
        return _PLACEHOLDERS.sub(lambda m: html[int(m.group(1))], page)


_DEFERRED: ContextVar[DeferredCharts | None] = ContextVar("deferred_charts", default=None)


@contextmanager
def deferred_charts() -> Iterator[DeferredCharts]:
    """Charts rendered inside the block are noted, not drawn; draw them with ``fill``."""
    charts = DeferredCharts()
    token = _DEFERRED.set(charts)
    try:
        yield charts
    finally:
        _DEFERRED.reset(token)


def render_chart(job: Chart, alt: str, chart_id: str, *, caption: str | None = None) -> str:
    """A ``<figure>`` with the chart as an embedded PNG: drawn now, or, inside
    :func:`deferred_charts`, a placeholder that ``fill`` replaces."""
    deferred = _DEFERRED.get()
    if deferred is not None:
        return deferred.add(job, alt, chart_id, caption)
    png = draw_charts([job], workers=0)[0]
    return figure_html(png, alt, chart_id, caption=caption)
