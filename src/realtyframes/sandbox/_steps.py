"""Generation in steps: each step draws its part and leaves its variables for the next ones.

The listing and session generators are split into steps that must run in a fixed order (the order
of the random draws). A step reads what earlier steps made as ``d.<name>`` and ends with
``keep(d, locals())``.

>>> from types import SimpleNamespace
>>> d = SimpleNamespace(n=3)
>>> def step(rng: object, d: SimpleNamespace) -> None:
...     doubled = d.n * 2
...     keep(d, locals())
>>> step(None, d); d.doubled
6
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

__all__ = ["keep"]

_NOT_KEPT = frozenset({"rng", "t", "d"})


def keep(d: SimpleNamespace, scope: dict[str, Any]) -> None:
    """Put a step's local variables on ``d`` (all but the generator, the tables and ``d``)."""
    vars(d).update({k: v for k, v in scope.items() if k not in _NOT_KEPT})
