"""``market_trends(definitions=...)``: the default definitions, or Redfin's where they differ
(docs/metrics.md, "Definitions: default and Redfin's").

Three metrics differ; everything else is the same under both:

- ``pending_sales``: Redfin leaves out a listing that went under contract more than
  :data:`REDFIN_PENDING_DAYS` days after it was listed;
- ``median_list_price``: Redfin's is the most recent list price of the homes listed in the
  period (the ``ListPrice`` on the record); ours the price at entry;
- ``avg_sale_to_list``: Redfin's ratio is the sale price over the original list price (the
  price at entry); ours over the final list price (``ListPrice``). ``pct_sold_above_list`` is
  over the final list price under both (Redfin's "sold above list" is above the final one).

>>> check_definitions("redfin", "market_trends")
'redfin'
"""

from __future__ import annotations

import numpy as np

from realtyframes.errors import QueryError

__all__ = ["DEFINITIONS", "REDFIN_PENDING_DAYS", "Prices", "check_definitions"]

#: ``definitions`` values.
DEFINITIONS: tuple[str, ...] = ("default", "redfin")
#: Redfin's pending sales leave out listings under contract more than this many days after entry.
REDFIN_PENDING_DAYS = 90


def check_definitions(value: object, func: str) -> str:
    """``value`` if it is one of :data:`DEFINITIONS`, else a :class:`QueryError` naming them."""
    if not isinstance(value, str) or value not in DEFINITIONS:
        raise QueryError("definitions", f"{func}() got {value!r}", DEFINITIONS)
    return value


class Prices:
    """The list prices a definition reads: ``listed`` (``median_list_price``'s) and ``against``
    (``avg_sale_to_list``'s denominator), per listing, from the price at entry and the
    ``ListPrice`` on the record."""

    def __init__(self, definitions: str, at_entry: np.ndarray, on_record: np.ndarray) -> None:
        redfin = definitions == "redfin"
        self.listed = on_record if redfin else at_entry
        self.against = at_entry if redfin else on_record
        self.pending_days: int | None = REDFIN_PENDING_DAYS if redfin else None
