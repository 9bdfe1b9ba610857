"""The tuning settings: how much the loaders and the analysis hold at once, against how fast they
go. Each is a ``REALTYFRAMES_*`` environment variable (named in ``_environment.py``), read when
it is used, so a notebook or a test can set it between calls; unset, the default. A value that
is not a whole number of 1 or more is a :class:`~realtyframes.ConfigError` naming the variable.

>>> DETAIL_BATCH.get({})
2000
>>> DETAIL_BATCH.get({"REALTYFRAMES_DETAIL_BATCH": "500"})
500
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from realtyframes._environment import TUNING_VARIABLES
from realtyframes.errors import ConfigError

__all__ = ["DETAIL_BATCH", "KNOBS", "PARSE_CHUNK_BYTES", "SHAPE_BATCH", "Knob"]


@dataclass(frozen=True)
class Knob:
    """One tuning setting: its variable, its default and what it bounds."""

    name: str
    default: int
    meaning: str

    @property
    def variable(self) -> str:
        """The environment variable that sets it."""
        return TUNING_VARIABLES[self.name]

    def get(self, env: Mapping[str, str] | None = None) -> int:
        """The value now: ``env`` (default: the process' environment), else the default.

        >>> SHAPE_BATCH.get({"REALTYFRAMES_SHAPE_BATCH": "2"})
        2
        """
        raw = (os.environ if env is None else env).get(self.variable, "").strip()
        if not raw:
            return self.default
        if not raw.isdigit() or int(raw) < 1:
            raise ConfigError(
                f"{self.variable}={raw!r}",
                f"not a whole number of 1 or more ({self.meaning}; default {self.default})",
                ["a whole number >= 1", "unset for the default"],
            )
        return int(raw)


#: A ``details=True`` load fetches and parses this many listing details at a time: its peak
#: memory holds one batch of raw bodies besides the frames.
DETAIL_BATCH = Knob("detail_batch", 2_000, "listing details fetched and parsed per batch")
#: A search shapes its pages this many at a time while the others are fetched.
SHAPE_BATCH = Knob("shape_batch", 50, "search pages shaped per batch")
#: Bytes of answers parsed per Arrow JSON call (a chunk that fails is re-parsed alone, split).
PARSE_CHUNK_BYTES = Knob("parse_chunk_bytes", 1 << 25, "bytes of answers parsed per call")
#: Every tuning setting, by name (the names of ``TUNING_VARIABLES``).
KNOBS: dict[str, Knob] = {
    knob.name: knob for knob in (DETAIL_BATCH, SHAPE_BATCH, PARSE_CHUNK_BYTES)
}
