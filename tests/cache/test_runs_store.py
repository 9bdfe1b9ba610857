"""The run history (``realtyframes.cache.append_run`` / ``read_runs``): one row per run in the
state database, safe with concurrent processes, read by any SQLite reader; the anomaly rules;
the Parquet run records of realtyframes 0.7 moved in by the first open."""

from __future__ import annotations

import logging
import sqlite3
import subprocess
import sys
import textwrap
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from realtyframes.cache import (
    QUARANTINE_JUMP,
    ROW_DROP_MIN,
    ROW_DROP_SHARE,
    RUN_COLUMNS,
    ParquetCache,
    append_run,
    read_runs,
    state_file,
)

T0 = datetime(2026, 6, 1, tzinfo=UTC)


def test_an_empty_history_has_the_columns(tmp_path: Path) -> None:
    runs = read_runs(tmp_path / "nothing")
    assert runs.empty and list(runs.columns) == list(RUN_COLUMNS)
    assert not (tmp_path / "nothing").exists()  # reading creates nothing


def test_a_watch_appends_through_the_public_function(tmp_path: Path) -> None:
    record = append_run(
        tmp_path,
        kind="watch",
        resource="market",
        scope={"City": "Miami", "MaxListPrice": 900000.0},
        started=T0,
        finished=T0 + timedelta(seconds=3),
        host="https://user:secret-pw@api.example.com",
        requests=7,
        rows=1506,
        new=3,
        changed=5,
        removed=0,
    )
    runs = read_runs(tmp_path)
    assert len(runs) == 1 and runs["run_id"].iloc[0] == record["run_id"]
    row = runs.iloc[0]
    assert row.scope == '{"City": "Miami", "MaxListPrice": "900000"}'
    assert row.host == "https://api.example.com" and row.kind == "watch"
    assert (row.requests, row.rows, row.new, row.changed, row.removed) == (7, 1506, 3, 5, 0)
    assert pd.isna(row.retries) and pd.isna(row.resumed_from) and row.outcome == "ok"
    assert row.finished - row.started == pd.Timedelta(seconds=3)
    state = b"".join(p.read_bytes() for p in state_file(tmp_path).parent.glob("state.sqlite3*"))
    assert b"Miami" in state and b"secret-pw" not in state


@pytest.mark.parametrize(
    ("host", "stored"),
    [
        ("https://user:p@ss-pw@api.example.com/v1", "https://api.example.com/v1"),
        ("http://user:secret-pw@[::1]:8000", "http://[::1]:8000"),
        ("https://API.example.com", "https://API.example.com"),
    ],
)
def test_a_run_record_keeps_its_host_without_user_and_password(
    tmp_path: Path, host: str, stored: str
) -> None:
    """The same rule as the cache's footers: only ``user:password@`` goes (an IPv6 host keeps
    its brackets, so the host stays a URL)."""
    assert append_run(tmp_path, kind="load", resource="listings", host=host)["host"] == stored
    assert read_runs(tmp_path)["host"].tolist() == [stored]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"kind": "nap"}, "kind"),
        ({"outcome": "meh"}, "outcome"),
        ({"rowz": 3}, "unexpected fields"),
    ],
)
def test_bad_fields_are_refused(tmp_path: Path, fields: dict[str, object], message: str) -> None:
    given: dict[str, object] = {"kind": "load", "resource": "listings", **fields}
    with pytest.raises((ValueError, TypeError), match=message):
        append_run(tmp_path, **given)  # type: ignore[arg-type]
    assert not state_file(tmp_path).exists()


def _run(root: Path, minutes: int, rows: int, quarantined: int = 0, **extra: object) -> dict:
    fields: dict = {"kind": "load", "resource": "listings", "scope": {"City": "Miami"}}
    fields.update(extra)
    return append_run(
        root, started=T0 + timedelta(minutes=minutes), rows=rows, quarantined=quarantined, **fields
    )


def test_the_anomaly_rules(tmp_path: Path) -> None:
    assert (ROW_DROP_SHARE, ROW_DROP_MIN, QUARANTINE_JUMP) == (0.20, 20, 0.05)  # docs/cache.md
    assert _run(tmp_path, 0, 100)["anomaly"] is None  # nothing to compare with
    assert _run(tmp_path, 1, 80)["anomaly"] is None  # exactly 20 % fewer: not flagged
    assert "rows fell 25%" in _run(tmp_path, 2, 60)["anomaly"]  # against 80
    # a failed run neither is flagged nor becomes the comparison
    assert _run(tmp_path, 3, 0, outcome="failed", error_code="ServerError")["anomaly"] is None
    assert _run(tmp_path, 4, 58)["anomaly"] is None  # against 60, not the failed run
    # another scope is compared with its own runs only
    assert _run(tmp_path, 5, 5, scope={"City": "Doral"})["anomaly"] is None
    # the quarantine share: 0 % -> 10 % is flagged, 10 % -> 12 % is not
    assert "quarantined share rose from 0.0% to 10.0%" in _run(tmp_path, 6, 54, 6)["anomaly"]
    assert _run(tmp_path, 7, 53, 7)["anomaly"] is None
    # a small scope (under ROW_DROP_MIN rows) swings by chance: not flagged for its rows
    _run(tmp_path, 8, 10, scope={"City": "Surfside"})
    assert _run(tmp_path, 9, 2, scope={"City": "Surfside"})["anomaly"] is None
    assert read_runs(tmp_path)["anomaly"].notna().sum() == 2


_WRITER = """
import sys
from realtyframes.cache import append_run
root, name = sys.argv[1], sys.argv[2]
for i in range(25):
    append_run(root, kind="load", resource="listings", scope={"City": name}, requests=i, rows=i)
"""

_READER = """
import sqlite3, sys, time
from realtyframes.cache import read_runs
root = sys.argv[1]
reads = 0
end = time.monotonic() + 60
while time.monotonic() < end:
    frame = read_runs(root)
    if len(frame):  # a plain SQLite reader, read-only, as DuckDB's sqlite_scan reads it
        with sqlite3.connect(f"file:{root}/.rf/state.sqlite3?mode=ro", uri=True) as db:
            db.execute("SELECT count(*), sum(requests) FROM runs").fetchall()
    reads += 1
    if len(frame) >= 100:
        break
print(reads, len(frame))
"""


def test_concurrent_processes_append_whole_files(tmp_path: Path) -> None:
    env_python = [sys.executable, "-c"]
    reader = subprocess.Popen(
        [*env_python, textwrap.dedent(_READER), str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    writers = [
        subprocess.Popen(
            [*env_python, _WRITER, str(tmp_path), f"city-{n}"], stderr=subprocess.PIPE, text=True
        )
        for n in range(4)
    ]
    for writer in writers:
        _, failure = writer.communicate(timeout=120)
        assert writer.returncode == 0, failure
    out, err = reader.communicate(timeout=120)
    assert reader.returncode == 0, err  # every read of a file being appended succeeded
    assert out.split()[1] == "100"
    runs = read_runs(tmp_path)
    assert len(runs) == 100 and runs["run_id"].is_unique
    assert runs.groupby("scope")["requests"].sum().tolist() == [sum(range(25))] * 4
    assert _sql(tmp_path, "SELECT count(*) FROM runs") == [(100,)]


def _sql(root: Path, query: str) -> list[tuple[object, ...]]:
    """``query`` through a plain, read-only SQLite reader (the SQL DuckDB's ``sqlite_scan``
    runs; its sqlite extension downloads, so the tests use the standard library's)."""
    with closing(sqlite3.connect(f"file:{state_file(root)}?mode=ro", uri=True)) as db:
        return db.execute(query).fetchall()


def test_the_history_is_a_table_other_readers_query(tmp_path: Path) -> None:
    _run(tmp_path, 0, 100, requests=4)
    _run(tmp_path, 1, 60, requests=3)
    daily = _sql(
        tmp_path,
        "SELECT substr(started, 1, 10) AS day, sum(requests), sum(rows) FROM runs"
        " WHERE kind = 'load' GROUP BY day",
    )
    assert daily == [("2026-06-01", 7, 160)]
    flagged = _sql(tmp_path, "SELECT started, anomaly FROM runs WHERE anomaly IS NOT NULL")
    assert flagged == [("2026-06-01T00:01:00.000000+00:00", read_runs(tmp_path).anomaly[1])]


def test_a_record_dated_in_the_future_is_never_a_baseline(tmp_path: Path) -> None:
    """A run recorded with a clock set ahead (here a year) must not be what every later run is
    compared with: it would flag all of them (and ``fetch`` exits 3) for good."""
    now = datetime.now(UTC)
    miami = {"kind": "load", "resource": "listings", "scope": {"City": "Miami"}}
    append_run(tmp_path, **miami, started=now - timedelta(hours=1), rows=100)
    future = append_run(
        tmp_path,
        kind="load",
        resource="listings",
        scope={"City": "Miami"},
        started=now + timedelta(days=365),
        rows=1000,
    )
    assert future["anomaly"] is None
    later = append_run(tmp_path, kind="load", resource="listings", scope={"City": "Miami"}, rows=99)
    assert later["anomaly"] is None  # compared with the run an hour ago, not the future one
    dropped = append_run(
        tmp_path, kind="load", resource="listings", scope={"City": "Miami"}, rows=50
    )
    assert "rows fell 49%" in dropped["anomaly"]  # ... which still flags a real drop
    assert len(read_runs(tmp_path)) == 4  # the future record is kept, only never compared with


_TIME = pa.timestamp("us", tz="UTC")
#: A run file's schema as realtyframes 0.7 wrote it (its docs/cache.md, "The run history").
OLD_SCHEMA = pa.schema(
    [("run_id", pa.string()), ("started", _TIME), ("finished", _TIME)]
    + [(name, pa.string()) for name in ("kind", "resource", "scope", "scope_key", "host")]
    + [("account", pa.string())]
    + [(name, pa.int64()) for name in ("requests", "retries", "throttled", "rows")]
    + [(name, pa.int64()) for name in ("quarantined", "new", "changed", "removed")]
    + [("from_cache", pa.bool_())]
    + [(name, pa.string()) for name in ("outcome", "error_code", "anomaly", "toolkit_version")]
    + [("resumed_from", pa.string())]
)


def _old_record(folder: Path, minutes: int, rows: int, run_id: str) -> Path:
    """A run record as realtyframes 0.7 wrote it: one Parquet file per run in ``runs/``."""
    started = T0 + timedelta(minutes=minutes)
    record = {name: None for name in OLD_SCHEMA.names}
    record.update(
        run_id=run_id,
        started=started,
        finished=started,
        kind="load",
        resource="listings",
        scope='{"City": "Miami"}',
        scope_key="0123456789abcdef",
        rows=rows,
        quarantined=0,
        from_cache=False,
        outcome="ok",
        toolkit_version="0.7.0",
    )
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"run.{started:%Y%m%dT%H%M%S%fZ}.0123456789abcdef.{run_id}.parquet"
    pq.write_table(pa.Table.from_pylist([record], schema=OLD_SCHEMA), path)
    return path


def test_old_run_files_move_into_the_table_and_other_schemas_are_skipped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Parquet files of another schema in ``runs/`` (12 of them became blank rows in 0.7's
    reading) are skipped with a log line and left alone; the run records move in whole."""
    caplog.set_level(logging.WARNING, logger="realtyframes.cache")
    runs = tmp_path / "runs"
    moved = [_old_record(runs, m, 100 + m, f"{m:016x}") for m in range(3)]
    for n in range(12):
        pq.write_table(
            pa.table({"ListingId": [f"L{n}"], "ListPrice": [1.0]}), runs / f"x{n}.parquet"
        )
    pq.write_table(
        pa.table({"run_id": ["abc"], "started": ["not a time"]}), runs / "run.bad.parquet"
    )
    older = _old_record(runs, 3, 103, f"{3:016x}")  # of a version before resumed_from
    pq.write_table(pq.read_table(older).drop_columns(["resumed_from"]), older)
    moved.append(older)
    history = read_runs(tmp_path)
    assert history["run_id"].tolist() == [f"{m:016x}" for m in range(4)]
    assert history["rows"].tolist() == [100, 101, 102, 103] and history["kind"].eq("load").all()
    assert not any(p.exists() for p in moved)  # in the table now
    assert len(list(runs.glob("*.parquet"))) == 13  # the others, left where they were
    skipped = [
        r.getMessage() for r in caplog.records if "another schema); skipped" in r.getMessage()
    ]
    assert len(skipped) == 13
    assert "4 run records moved" in caplog.text
    assert _run(tmp_path, 10, 60)["anomaly"] is None  # another scope key: its own history


def test_opening_the_cache_leaves_the_runs_alone(tmp_path: Path) -> None:
    _run(tmp_path, 0, 10)
    cache = ParquetCache(tmp_path)  # moves 0.1's flat files into partitions: not the history
    assert len(read_runs(tmp_path)) == 1
    assert cache.list().empty
    cache.clear()  # the run history is not a cache entry
    assert len(read_runs(tmp_path)) == 1
