"""The client edition's plain-language summary, written from the numbers by fixed rules.

Three sentences, each from one rule (docs/report.md lists them; a test checks each):

1. **Tilt** (months supply of the latest month, :data:`TILT`): under 4 months a seller's
   market, 4 to 6 balanced, over 6 a buyer's market.
2. **Prices** (the constant-quality change, :class:`~realtyframes.report.local.PriceChange`):
   "rose"/"fell" when its 95 % band lies wholly above/below zero, else "were about level"; a
   band wider than :data:`FIRM_BAND` gives the range, not the figure (as the page's headline).
3. **Speed** (days on market until sale, latest month against a year earlier): "faster" when
   10 % or more fewer days, "slower" when 10 % or more, else "about as fast".

>>> tilt(3.2)
"a seller's market"
"""

from __future__ import annotations

import math

import pandas as pd

from realtyframes.report.local import PriceChange

__all__ = [
    "FIRM_BAND",
    "SPEED_BAND",
    "TILT",
    "plain_summary",
    "price_sentence",
    "speed_sentence",
    "tilt",
]

#: Months of supply under the first bound: a seller's market; over the second: a buyer's.
TILT: tuple[float, float] = (4.0, 6.0)
#: A change in days on market smaller than this share reads "about as fast".
SPEED_BAND = 0.10
#: A price change whose 95 % band is wider than this (20 points) is not shown as a figure: the
#: headline shows "—" and the summary its range.
FIRM_BAND = 0.2


def tilt(months: float) -> str | None:
    """The market's tilt from its months of supply (rule 1).

    >>> tilt(4.0), tilt(6.5), tilt(float("nan"))
    ('a balanced market', "a buyer's market", None)
    """
    if months is None or not math.isfinite(months):
        return None
    if months < TILT[0]:
        return "a seller's market"
    if months <= TILT[1]:
        return "a balanced market"
    return "a buyer's market"


def _pct(x: float) -> str:
    return f"{abs(x) * 100:.1f} %"


def price_sentence(change: PriceChange) -> str:
    """Rule 2: the direction of prices from the constant-quality change and its band."""
    if not math.isfinite(change.change):
        return f"Too few sales to measure prices against a year earlier ({change.reason})."
    span = f"95 % range {change.low * 100:+.1f} % to {change.high * 100:+.1f} %"
    against = f"in {change.period} against {change.earlier}"
    if change.high - change.low > FIRM_BAND and (change.low > 0 or change.high < 0):
        way = "rose" if change.low > 0 else "fell"
        least, most = sorted((abs(change.low), abs(change.high)))
        return (
            f"Prices of comparable homes {way} {least * 100:.1f} to {_pct(most)} {against} "
            "(95 % range; no firmer figure on these sales)."
        )
    if change.low > 0:
        return f"Prices of comparable homes rose {_pct(change.change)} {against} ({span})."
    if change.high < 0:
        return f"Prices of comparable homes fell {_pct(change.change)} {against} ({span})."
    return (
        f"Prices of comparable homes were about level {against}: "
        f"{change.change * 100:+.1f} %, within the noise ({span})."
    )


def speed_sentence(days: float, days_before: float, n: float, month: str) -> str | None:
    """Rule 3: how fast homes sold in the latest month against the same month a year earlier."""
    if not math.isfinite(days):
        return None
    base = f"Homes sold in {month} took a median of {days:.0f} days to sell (n = {n:.0f})"
    if not math.isfinite(days_before) or days_before <= 0:
        return base + "."
    ratio = days / days_before - 1
    if ratio <= -SPEED_BAND:
        word = "faster than"
    elif ratio >= SPEED_BAND:
        word = "slower than"
    else:
        word = "about as fast as"
    return f"{base}, {word} a year earlier ({days_before:.0f} days)."


def plain_summary(table: pd.DataFrame, change: PriceChange) -> list[str]:
    """The summary's sentences for one area from its Local Market Update ``table`` and its
    price ``change`` (rules 1–3, in order; a rule without its figure is left out).

    >>> plain_summary(table, change)  # doctest: +SKIP
    ["With 3.2 months of supply, this is a seller's market.", ...]
    """
    month = pd.Timestamp(table.attrs.get("month")).strftime("%B %Y")
    out = []
    supply = float(table.loc["months_of_supply", "month"])
    kind = tilt(supply)
    if kind is not None:
        before = float(table.loc["months_of_supply", "month_before"])
        was = f" (a year earlier: {before:.1f})" if math.isfinite(before) else ""
        out.append(f"With {supply:.1f} months of supply in {month}{was}, this is {kind}.")
    out.append(price_sentence(change))
    dom = table.loc["median_dom"]
    speed = speed_sentence(
        float(dom["month"]), float(dom["month_before"]), float(dom["month_n"]), month
    )
    if speed is not None:
        out.append(speed)
    return out
