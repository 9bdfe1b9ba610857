"""The ``runs`` table's record, declared once for the run history (:mod:`._runs`) and the
migration of 0.7's run files (:mod:`._migrate`): its columns and types, and how it goes in and
comes out. Times are ISO 8601 text in UTC with microseconds (they sort as time does).

>>> time_text(datetime(2026, 6, 1, 9, tzinfo=UTC))
'2026-06-01T09:00:00.000000+00:00'
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import pandas as pd
import pyarrow as pa

__all__ = ["RUN_COLUMNS", "SCHEMA", "frame_of", "insert_record", "stamp", "time_text"]

_TIME, _TEXT = pa.timestamp("us", tz="UTC"), pa.string()
_TIMES = ("started", "finished")
#: The counts of a run record (Int64; None: unknown).
_INTS = ("requests", "retries", "throttled", "rows", "quarantined", "new", "changed", "removed")
#: The columns of a run record and their Arrow types (the schema of every runs file).
SCHEMA = pa.schema(
    [("run_id", _TEXT)]
    + [(name, _TIME) for name in _TIMES]
    + [(name, _TEXT) for name in ("kind", "resource", "scope", "scope_key", "host", "account")]
    + [(name, pa.int64()) for name in _INTS]
    + [("from_cache", pa.bool_())]
    + [(n, _TEXT) for n in ("outcome", "error_code", "anomaly", "toolkit_version", "resumed_from")]
)
RUN_COLUMNS: tuple[str, ...] = tuple(SCHEMA.names)


def stamp(value: datetime | None) -> pd.Timestamp:
    when = pd.Timestamp(value if value is not None else datetime.now(UTC))
    return when.tz_localize(UTC) if when.tzinfo is None else when.tz_convert(UTC)


def time_text(when: datetime | pd.Timestamp | None) -> str | None:
    """A time as the table keeps it: ISO 8601 in UTC, microseconds always (sorts as time)."""
    if when is None or pd.isna(when):
        return None
    return stamp(when).to_pydatetime().isoformat(timespec="microseconds")


def insert_record(db: sqlite3.Connection, record: Mapping[str, Any]) -> None:
    """Insert one run record (:data:`RUN_COLUMNS`) into the ``runs`` table of ``db``."""
    values = dict(record)
    for name in _TIMES:
        values[name] = time_text(values[name])
    values["from_cache"] = int(bool(values.get("from_cache")))
    db.execute(
        f"INSERT OR IGNORE INTO runs ({', '.join(RUN_COLUMNS)})"
        f" VALUES ({', '.join('?' * len(RUN_COLUMNS))})",
        [values.get(name) for name in RUN_COLUMNS],
    )


def frame_of(rows: list[tuple[Any, ...]]) -> pd.DataFrame:
    """Rows of the ``runs`` table as the history's frame (the dtypes of :data:`SCHEMA`)."""
    records = []
    for row in rows:
        record = dict(zip(RUN_COLUMNS, row, strict=True))
        for name in _TIMES:
            record[name] = datetime.fromisoformat(record[name])
        record["from_cache"] = bool(record["from_cache"])
        records.append(record)
    table = pa.Table.from_pylist(records, schema=SCHEMA)
    frame = table.to_pandas(types_mapper={pa.int64(): pd.Int64Dtype()}.get)
    frame["from_cache"] = frame["from_cache"].astype("boolean")
    for name in RUN_COLUMNS:
        if SCHEMA.field(name).type == pa.string():
            frame[name] = frame[name].astype("str")
    return frame
