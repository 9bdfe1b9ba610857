"""The message of a watch run: a title with the counts, then a short table of the changes (price
cuts with their amount and %), each listing linked when the watch has a link template.

>>> import realtyframes as rf  # doctest: +SKIP
>>> watch_message(watch, changes, matches=120, first_run=False).title  # doctest: +SKIP
'realtyframes watch miami: 2 new, 1 price cut'
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pandas as pd

from realtyframes._changes import CHANGE_KINDS
from realtyframes.notify import Message, table

if TYPE_CHECKING:
    from realtyframes.watch._store import Watch

__all__ = ["LABELS", "MAX_ROWS", "watch_message"]

#: How each kind of change reads in a message (singular, plural).
LABELS: dict[str, tuple[str, str]] = {
    "new": ("new", "new"),
    "price_cut": ("price cut", "price cuts"),
    "price_increase": ("price increase", "price increases"),
    "pending": ("pending", "pending"),
    "closed": ("closed", "closed"),
    "back_on_market": ("back on market", "back on market"),
    "status_change": ("status change", "status changes"),
    "removed": ("removed", "removed"),
}
#: Rows shown in one message; the rest are counted ("and 12 more").
MAX_ROWS = 40
_COLUMNS = ("Listing", "Change", "Price", "Was", "Cut", "Status", "Address")


def _money(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or pd.isna(value):
        return ""
    return f"${float(value):,.0f}"


def _text(value: Any) -> str:
    return "" if value is None or pd.isna(value) else str(value)


def _row(change: Any) -> list[str]:
    kind = str(change.change)
    old, new = change.old_price, change.new_price
    cut = ""
    if kind in ("price_cut", "price_increase") and pd.notna(old) and pd.notna(new) and old:
        delta = float(new) - float(old)
        sign = "-" if delta < 0 else "+"
        cut = f"{sign}${abs(delta):,.0f} ({sign}{abs(delta) / float(old):.1%})"
    status = _text(change.new_status)
    if pd.notna(change.old_status) and kind != "new":
        status = f"{_text(change.old_status)} -> {status}"
    address = ", ".join(v for v in (_text(change.UnparsedAddress), _text(change.City)) if v)
    return [
        str(change.ListingId),
        LABELS.get(kind, (kind, kind))[0],
        _money(new),
        _money(old) if kind != "new" else "",
        cut,
        status,
        address,
    ]


def _summary(counts: dict[str, int]) -> str:
    parts = [
        f"{n} {LABELS[k][0] if n == 1 else LABELS[k][1]}"
        for k, n in counts.items()
        if n and k in LABELS
    ]
    return ", ".join(parts) if parts else "no changes"


def watch_message(watch: Watch, changes: pd.DataFrame, matches: int, *, first_run: bool) -> Message:
    """The notification of one run of ``watch`` (see the module docstring)."""
    found = changes["change"].astype("string").value_counts()
    counts = {k: int(found.get(k, 0)) for k in CHANGE_KINDS}
    summary = _summary(counts)
    title = f"realtyframes watch {watch.name}: " + (
        f"watching {matches} listings" if first_run else summary
    )
    intro = f"{watch.describe()}: {matches} listings match now."
    if first_run:
        intro += " First run: the next runs report what changes from here."
    shown = changes.head(MAX_ROWS)
    rows = [_row(c) for c in shown.itertuples(index=False)]
    links = (
        {
            n: watch.link.replace("{ListingId}", str(c.ListingId))
            for n, c in enumerate(shown.itertuples())
        }
        if watch.link
        else {}
    )
    more = len(changes) - len(shown)
    tail = f"and {more} more" if more > 0 else ""
    if not rows:
        text = md = f"{intro} {'' if first_run else 'No changes since the last run.'}".strip()
        html = f"<p>{md}</p>"
        return Message(title, text, md, html)
    t_text, t_md, t_html = table(_COLUMNS, rows, links)
    text = "\n\n".join(p for p in (intro, t_text, tail) if p)
    md = "\n\n".join(p for p in (intro, t_md, tail) if p)
    html = f"<p>{intro}</p>{t_html}" + (f"<p>{tail}</p>" if tail else "")
    return Message(title, text, md, html)
