"""Self-contained HTML: inline CSS, charts as embedded PNG, no script, no external URL.

Charts are ``rf.plot`` Figures rendered with the Agg canvas (never pyplot) into memory, with the
PNG metadata that would vary (software version) left out, so the same figure gives the same bytes.
Every number in a table carries its exact value in ``data-value`` (and its place in
``data-row``/``data-col``) so tests and scrapers read the numbers without parsing the formatting.

>>> cell = Cell(0.1234, "percent", row="pct_active_with_price_drop", col="Miami")
>>> render_cell(cell)
'<td class="num" data-row="pct_active_with_price_drop" data-col="Miami" data-value="0.1234">12.3%</td>'
"""

from __future__ import annotations

import base64
import datetime as dt
import html
import io
import math
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from realtyframes.report._tables import record

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: Kinds of values and how they are shown: count 1,234 · money $525,000 · percent 12.3% ·
#: number 4.5 · days 45 · ratio 98.7% · date 2026-06-30 · text as is.
KINDS: tuple[str, ...] = ("count", "money", "percent", "number", "days", "date", "text")
#: Shown for a missing value (NaN, None, NaT).
MISSING = "—"
#: Resolution of the embedded charts (pixels per inch of the figure size).
CHART_DPI = 100


def esc(value: object) -> str:
    """HTML-escaped text (quotes too)."""
    return html.escape(str(value), quote=True)


def is_missing(value: object) -> bool:
    """True for None, NaN, NaT and pandas NA."""
    if value is None:
        return True
    try:
        return bool(pd.isna(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def format_value(value: Any, kind: str = "number") -> str:
    """A value as shown in the report.

    >>> format_value(525000.0, "money"), format_value(0.0526, "percent"), format_value(1234, "count")
    ('$525,000', '5.3%', '1,234')
    >>> format_value(float("nan"), "money")
    '—'
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    if is_missing(value):
        return MISSING
    if kind == "text":
        return str(value)
    if kind == "date":
        if isinstance(value, dt.datetime | pd.Timestamp):
            return pd.Timestamp(value).strftime("%Y-%m-%d")
        return str(value)[:10]
    x = float(value)
    if not math.isfinite(x):
        return MISSING
    if kind == "money":
        return f"-${-x:,.0f}" if x < 0 else f"${x:,.0f}"
    if kind == "percent":
        return f"{x:.1%}"
    if kind in ("count", "days"):
        return f"{x:,.0f}"
    return f"{x:,.1f}"


def data_value(value: Any) -> str:
    """The exact value for ``data-value``: ``repr`` of a float, ISO text of a timestamp, '' if
    missing.

    >>> data_value(0.1), data_value(3), data_value(float("nan"))
    ('0.1', '3', '')
    """
    if is_missing(value):
        return ""
    if isinstance(value, bool | np.bool_):
        return "true" if value else "false"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        return repr(float(value))
    if isinstance(value, pd.Timestamp | dt.datetime):
        return pd.Timestamp(value).isoformat()
    return str(value)


@dataclass(frozen=True)
class Cell:
    """One table cell: a value, how to show it, and its place (row / column keys)."""

    value: Any
    kind: str = "text"
    row: str | None = None
    col: str | None = None
    note: str | None = None  # small text after the value (e.g. a change)


def render_cell(cell: Cell, tag: str = "td") -> str:
    """A ``<td>`` with the formatted value and its exact value in data attributes."""
    attrs = [' class="num"' if cell.kind not in ("text", "date") else ""]
    if cell.kind == "date":
        attrs[0] = ' class="date"'  # 2026-11-24 never breaks at its hyphens
    if cell.row is not None:
        attrs.append(f' data-row="{esc(cell.row)}"')
    if cell.col is not None:
        attrs.append(f' data-col="{esc(cell.col)}"')
    if cell.kind != "text" or cell.row is not None:
        attrs.append(f' data-value="{esc(data_value(cell.value))}"')
    text = esc(format_value(cell.value, cell.kind))
    if cell.note:
        text += f' <span class="note">{esc(cell.note)}</span>'
    return f"<{tag}{''.join(attrs)}>{text}</{tag}>"


def _shown(cell: Cell) -> tuple[Any, str]:
    """A cell's value as the workbook holds it (missing where the page shows "—")."""
    value = None if is_missing(cell.value) else cell.value
    if cell.kind not in ("text", "date") and value is not None:
        x = float(value)
        value = x if math.isfinite(x) else None
    return value, cell.kind


def render_table(
    table_id: str,
    header: Sequence[str],
    rows: Iterable[Sequence[Cell | str]],
    *,
    caption: str | None = None,
    numeric_header: Sequence[bool] | None = None,
) -> str:
    """A ``<table data-table=ID>``; plain strings in a row are row headers (``<th>``)."""
    numeric = list(numeric_header or [False] * len(header))
    num = ' class="num"'
    head = "".join(
        f'<th scope="col"{num if numeric[i] else ""}>{esc(h)}</th>' for i, h in enumerate(header)
    )
    body = []
    rows = list(rows)
    record(table_id, header, [[c if isinstance(c, str) else _shown(c) for c in r] for r in rows])
    for row in rows:
        cells = "".join(
            f'<th scope="row">{esc(c)}</th>' if isinstance(c, str) else render_cell(c) for c in row
        )
        body.append(f"<tr>{cells}</tr>")
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    return (
        f'<div class="table-wrap"><table data-table="{esc(table_id)}">{cap}'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
    )


def figure_png(fig: Figure, *, dpi: int = CHART_DPI) -> bytes:
    """PNG bytes of a Figure, drawn by the Agg canvas; no varying metadata (same figure, same
    bytes). The figure is not registered anywhere (no pyplot).

    Drawn once: ``savefig`` on a figure with a layout engine (``rf.plot`` figures use constrained
    layout) draws it twice, once without rendering to place the axes and once for the pixels (and
    still twice after ``set_layout_engine("none")``, which leaves a placeholder engine); here the
    layout engine places the axes itself (its own measuring pass), then the canvas draws the
    pixels once and they are encoded as ``savefig`` encodes them (``_print_pil``).
    """
    import matplotlib.image
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)  # attaches itself as fig.canvas
    engine, figure_dpi = fig.get_layout_engine(), fig.dpi
    buffer = io.BytesIO()
    try:
        fig.set_dpi(dpi)  # laid out at the resolution it is drawn at, as savefig does
        if engine is not None:
            engine.execute(fig)
            fig.set_layout_engine("none")
        canvas.draw()
        no_software: Any = {"Software": None}  # no version in the bytes (savefig's default)
        matplotlib.image.imsave(buffer, np.asarray(canvas.buffer_rgba()), format="png",
                                origin="upper", dpi=dpi, metadata=no_software)  # fmt: skip
    finally:
        if engine is not None:
            fig.set_layout_engine(engine)
        fig.set_dpi(figure_dpi)
    return buffer.getvalue()


def render_figure(
    fig: Figure | Axes, alt: str, chart_id: str, *, caption: str | None = None
) -> str:
    """A ``<figure>`` with the chart embedded as a base64 PNG data URI."""
    from matplotlib.figure import Figure

    figure = fig if isinstance(fig, Figure) else fig.figure  # an Axes: the figure it is on
    if not isinstance(figure, Figure):  # pragma: no cover - rf.plot never draws on subfigures
        raise TypeError("the chart is not on a top-level matplotlib Figure")
    return figure_html(figure_png(figure), alt, chart_id, caption=caption)


def figure_html(png: bytes, alt: str, chart_id: str, *, caption: str | None = None) -> str:
    """A ``<figure>`` with ``png`` embedded as a base64 data URI, at its own pixel size."""
    width, height = struct.unpack(">II", png[16:24])  # the PNG header's IHDR size
    src = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    cap = f"<figcaption>{esc(caption)}</figcaption>" if caption else ""
    return (
        f'<figure class="chart" data-chart="{esc(chart_id)}">'
        f'<img src="{src}" alt="{esc(alt)}" width="{width}" height="{height}">{cap}</figure>'
    )


@dataclass(frozen=True)
class Card:
    """A headline number."""

    key: str
    label: str
    value: Any
    kind: str
    note: str | None = None


def render_cards(cards: Sequence[Card]) -> str:
    """The headline numbers as a grid of cards (``data-row`` = the card's key)."""
    items = []
    record(
        "headline",
        ["Metric", "Value", "Note"],
        [[c.label, _shown(Cell(c.value, c.kind)), c.note or ""] for c in cards],
    )
    for card in cards:
        note = f'<div class="card-note">{esc(card.note)}</div>' if card.note else ""
        items.append(
            f'<div class="card"><div class="card-label">{esc(card.label)}</div>'
            f'<div class="card-value" data-row="{esc(card.key)}" '
            f'data-value="{esc(data_value(card.value))}">'
            f"{esc(format_value(card.value, card.kind))}</div>{note}</div>"
        )
    return f'<div class="cards" data-table="headline">{"".join(items)}</div>'


@dataclass(frozen=True)
class Section:
    """A titled part of the page."""

    anchor: str
    title: str
    body: str
    intro: str | None = None


CSS = """
:root { --ink: #1d2733; --muted: #5b6776; --line: #d9dee5; --accent: #1f5f8b; --bg: #f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #fff;
  font: 15px/1.45 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1120px; margin: 0 auto; padding: 24px 28px 48px; }
header.report { border-bottom: 3px solid var(--accent); margin-bottom: 18px; padding-bottom: 10px; }
h1 { font-size: 28px; margin: 0 0 4px; }
h2 { font-size: 21px; margin: 34px 0 8px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 16px; margin: 22px 0 6px; }
p { margin: 6px 0; }
.meta { color: var(--muted); font-size: 13px; }
.meta span + span::before { content: " · "; }
nav.toc { font-size: 13px; margin: 8px 0 0; }
nav.toc a { color: var(--accent); margin-right: 14px; text-decoration: none; }
.intro { color: var(--muted); font-size: 13.5px; max-width: 900px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(165px, 1fr)); gap: 10px; margin: 14px 0 6px; }
.card { background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; }
.card-label { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
.card-value { font-size: 22px; font-weight: 650; margin-top: 2px; font-variant-numeric: tabular-nums; }
.card-note { color: var(--muted); font-size: 12px; }
.table-wrap { overflow-x: auto; margin: 8px 0 14px; }
table { border-collapse: collapse; font-size: 13px; font-variant-numeric: tabular-nums; }
caption { text-align: left; color: var(--muted); font-size: 12.5px; padding: 0 0 4px; caption-side: top; }
th, td { padding: 4px 9px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
thead th { background: var(--bg); border-bottom: 2px solid var(--line); font-weight: 600; }
tbody tr:nth-child(even) { background: #fbfcfd; }
tbody th { font-weight: 500; min-width: 8em; max-width: 17em; }
thead th.num { white-space: normal; min-width: 5em; }
.num, .date { white-space: nowrap; }
.num { text-align: right; }
.note { color: var(--muted); font-size: 11.5px; }
figure.chart { margin: 10px 0 18px; }
figure.chart img { display: block; max-width: 100%; height: auto; border: 1px solid var(--line); }
figcaption { color: var(--muted); font-size: 12.5px; margin-top: 4px; }
.grid2 { display: grid; grid-template-columns: repeat(auto-fit, minmax(440px, 1fr)); gap: 0 18px; }
footer { margin-top: 40px; padding-top: 10px; border-top: 1px solid var(--line); color: var(--muted); font-size: 12.5px; }
footer code { font-size: 12px; }
.empty { color: var(--muted); font-style: italic; }
dl { margin: 4px 0 10px; font-size: 13px; }
dt { margin-top: 6px; } dd { margin: 0 0 0 18px; color: var(--muted); }
.notice { border-left: 3px solid #e07b39; background: #fff7f0; padding: 5px 10px; margin: 8px 0; font-size: 13.5px; }
@media print {
  @page { size: A4; margin: 12mm; }
  body { font-size: 10.5pt; }
  main { max-width: none; padding: 0; }
  nav.toc { display: none; }
  h2 { break-after: avoid; page-break-after: avoid; }
  .card, figure.chart, tr, .table-wrap { break-inside: avoid; page-break-inside: avoid; }
  .table-wrap { overflow: visible; }
  table { font-size: 8.5pt; }
  th, td { padding: 2px 5px; }
  .grid2 { display: block; }
  a { color: inherit; text-decoration: none; }
}
"""


def render_page(
    title: str,
    sections: Sequence[Section],
    *,
    meta: Sequence[str] = (),
    lead: str = "",
    footer: str = "",
) -> str:
    """The whole HTML document: header (title, meta line, table of contents), sections, footer."""
    toc = "".join(f'<a href="#{esc(s.anchor)}">{esc(s.title)}</a>' for s in sections)
    meta_line = "".join(f"<span>{esc(m)}</span>" for m in meta)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(title)}</title>",
        f"<style>{CSS}</style>",
        "</head>",
        "<body><main>",
        f'<header class="report"><h1>{esc(title)}</h1><p class="meta">{meta_line}</p>',
        f'<nav class="toc">{toc}</nav></header>',
        lead,
    ]
    for s in sections:
        intro = f'<p class="intro">{esc(s.intro)}</p>' if s.intro else ""
        parts.append(
            f'<section id="{esc(s.anchor)}"><h2>{esc(s.title)}</h2>{intro}{s.body}</section>'
        )
    parts.append(f"<footer>{footer}</footer>" if footer else "")
    parts.append("</main></body></html>")
    return "\n".join(parts) + "\n"
