"""The run history's files (``realtyframes.cache.append_run`` / ``read_runs``): one whole Parquet
file per run, safe with concurrent processes, read by DuckDB; the anomaly rules."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from realtyframes.cache import (
    QUARANTINE_JUMP,
    ROW_DROP_MIN,
    ROW_DROP_SHARE,
    RUN_COLUMNS,
    ParquetCache,
    append_run,
    read_runs,
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
    assert b"secret-pw" not in next((tmp_path / "runs").glob("*.parquet")).read_bytes()


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
    assert not (tmp_path / "runs").exists()


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
import sys, time
import duckdb
from realtyframes.cache import read_runs
root = sys.argv[1]
reads = 0
end = time.monotonic() + 60
while time.monotonic() < end:
    frame = read_runs(root)
    if len(frame):
        duckdb.sql(f"SELECT count(*), sum(requests) FROM read_parquet('{root}/runs/*.parquet')").fetchall()
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
    files = list((tmp_path / "runs").iterdir())
    assert len(files) == 100 and all(p.name.startswith("run.") for p in files)  # nothing partial
    total = duckdb.sql(f"SELECT count(*) FROM read_parquet('{tmp_path}/runs/*.parquet')")
    assert total.fetchall() == [(100,)]


def test_opening_the_cache_leaves_the_runs_alone(tmp_path: Path) -> None:
    _run(tmp_path, 0, 10)
    before = sorted(p.name for p in (tmp_path / "runs").iterdir())
    cache = ParquetCache(tmp_path)  # moves 0.1's flat files into partitions: not these
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == before
    assert cache.list().empty
    cache.clear()  # the run history is not a cache entry
    assert len(read_runs(tmp_path)) == 1
