"""Scale: a national market on local Spark (``local[2]``) and DuckDB, with the driver's memory.

Writes ``n`` synthetic listings and their change records (about 2.5 per listing: status changes
through Active Under Contract, Pending and Closed, and price cuts) **as the cache's Parquet
layout** (docs/cache.md: ``market/account=…/scope=key-…/part-0.parquet`` and
``market.history/…``, one scope per chunk of ``CHUNK`` listings, as a market synced city group by
city group), generated chunk by chunk with numpy and pyarrow (never the whole market in memory).
Then each case, in its own Python process (so each peak is its own): the engine reads the
dataset (DuckDB ``read_parquet`` with hive partitions; Spark ``spark.read.parquet`` in
``local[2]``) and runs one call; the process reports its time and its peak resident memory
(``resource.getrusage``: the Python driver's own, Spark's JVM is a child process and not in it).

Calls: ``market_trends(freq="M", by="City")``, ``market_trends(freq="M", by="City",
tiers=True)`` and ``price_index(freq="M")`` (hedonic). On a smaller sample (``SAMPLE`` listings,
the same generator) each engine's result is compared with pandas' on the same files, cell by
cell to 1e-9 (attrs too).

Command: ``.venv/bin/python benchmarks/run_all.py scale`` (sizes: ``RF_SCALE_N``, default
1,000,000; ``RF_SCALE_SAMPLE``, default 200,000; the Spark interpreter: ``RF_SPARK_PYTHON``,
default ``.venv-spark/bin/python`` when present). One case by hand:
``python benchmarks/bench_scale.py case duckdb trends DATASET OUT`` (``OUT``: a file), with
``RF_SCALE_STEPS=1`` to log the memory at each step of the engine trends and tiers.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

N = int(os.environ.get("RF_SCALE_N", 1_000_000))
SAMPLE = int(os.environ.get("RF_SCALE_SAMPLE", 200_000))
#: Cases to run, ``engine/call`` (``RF_SCALE_CASES``, comma-separated; default: all).
CASES = [c for c in os.environ.get("RF_SCALE_CASES", "").split(",") if c]
#: Seconds a case may take before it is reported as not completed.
TIMEOUT = float(os.environ.get("RF_SCALE_TIMEOUT", 6 * 3600))
#: DuckDB's own memory (it runs inside the Python process, so its buffers count in its RSS).
DUCKDB_MEMORY = os.environ.get("RF_SCALE_DUCKDB_MEMORY", "512MB")
#: ``RF_SCALE_STEPS=1``: a case logs its resident memory (VmRSS, VmHWM) and DuckDB's own
#: (``duckdb_memory()``) before and after each step of the engine trends and tiers, to stderr.
STEPS = os.environ.get("RF_SCALE_STEPS", "") == "1"
#: Spark's shuffle partitions (``RF_SCALE_SPARK_PARTITIONS``): twice the two cores, not Spark's
#: default 200, which on ``local[2]`` runs 200 tasks per shuffle for a few rows each.
SPARK_PARTITIONS = int(os.environ.get("RF_SCALE_SPARK_PARTITIONS", 4))
CHUNK = 500_000
CITIES = 50
END = pd.Timestamp("2026-06-30 23:59:59", tz="UTC")
SPAN_DAYS = 4 * 365
STATUSES = ("Active", "Active Under Contract", "Pending", "Closed")
TYPES = ("Residential", "Residential Lease")
SUBTYPES = ("Single Family Residence", "Condominium", "Townhouse")
CHANGE_TYPES = ("status_change", "price_change")
ENGINES = ("duckdb", "spark")
_US = 1_000_000
_DAY = 86_400 * _US


def _stamps(micros: np.ndarray, missing: np.ndarray | None = None) -> pa.Array:
    return pa.array(micros, type=pa.timestamp("us", tz="UTC"), mask=missing)


def _category(codes: np.ndarray, names: tuple[str, ...], missing: Any = None) -> pa.Array:
    indices = pa.array(codes.astype(np.int8), mask=missing)
    return pa.DictionaryArray.from_arrays(indices, pa.array(list(names)))


def _text(prefix: str, numbers: np.ndarray) -> pa.Array:
    return pc.binary_join_element_wise(prefix, pa.array(numbers).cast(pa.string()), "")


def _homes(pid: np.ndarray) -> dict[str, np.ndarray]:
    """A property's fixed facts from its id (the same home each time it is sold)."""
    return {
        "city": pid % CITIES,
        "beds": 1 + (pid // CITIES) % 5,
        "baths": 1 + (pid // (CITIES * 5)) % 3,
        "area": 600.0 + (pid * 7919) % 3401,
        "year": 1950 + (pid * 104729) % 74,
        "subtype": (pid // (CITIES * 15)) % len(SUBTYPES),
    }


def _timeline(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """Entry, under-contract, pending, close and cut times (µs) and the status at ``END``."""
    end = END.value // 1000
    entered = end - rng.integers(0, SPAN_DAYS * _DAY, n)
    pending = entered + (rng.gamma(2.0, 20.0, n) * _DAY).astype(np.int64)
    auc = np.where(rng.random(n) < 0.16, entered + (pending - entered) // 2, -1)
    closed = pending + (rng.gamma(2.0, 15.0, n) * _DAY).astype(np.int64)
    cut = np.where(rng.random(n) < 0.5, entered + ((pending - entered) * 0.6).astype(np.int64), -1)
    status = np.select(
        [closed <= end, pending <= end, (auc >= 0) & (auc <= end)], [3, 2, 1], default=0
    )
    return {"entered": entered, "auc": auc, "pending": pending, "closed": closed, "cut": cut,
            "status": status, "end": np.full(n, end)}  # fmt: skip


def _chunk(rng: np.random.Generator, first: int, n: int, homes: int) -> tuple[pa.Table, pa.Table]:
    """``n`` listings (ids from ``first``) and their change records, as the client types them."""
    pid = rng.integers(0, homes, n)
    home, t = _homes(pid), _timeline(rng, n)
    days = (t["entered"] - (t["end"][0] - SPAN_DAYS * _DAY)) / _DAY
    log_price = (5.6 + 0.9 * np.log(home["area"]) + 0.04 * home["beds"] + 0.01 * home["city"]
                 + 0.00018 * days + rng.normal(0, 0.12, n))  # fmt: skip
    price = np.round(np.exp(log_price), -2)
    cut_ok = (t["cut"] >= 0) & (t["cut"] <= t["end"])
    now = np.where(cut_ok, np.round(price * 0.96, -2), price)
    sold = t["status"] == 3
    close = np.round(now * rng.uniform(0.94, 1.05, n), -2)
    last = np.select([sold, t["status"] == 2, t["status"] == 1], [t["closed"], t["pending"], t["auc"]],
                     default=t["entered"])  # fmt: skip
    ids = _text("L", np.arange(first, first + n))
    kind = (rng.random(n) < 0.08).astype(np.int8)
    listings = pa.table({
        "ListingId": ids,
        "UnparsedAddress": pc.binary_join_element_wise(pa.array(pid).cast(pa.string()), " Main St", ""),
        "City": _text("City ", home["city"]),
        "PostalCode": _text("33", 100 + home["city"] * 3 + pid % 3),
        "PropertyType": _category(kind, TYPES),
        "PropertySubType": pa.array(np.asarray(SUBTYPES, dtype=object)[home["subtype"]], pa.string()),
        "StandardStatus": _category(t["status"], STATUSES),
        "ListPrice": now,
        "PreviousListPrice": pa.array(price, mask=~cut_ok),
        "ClosePrice": pa.array(close, mask=~sold),
        "LivingArea": home["area"],
        "BedroomsTotal": home["beds"],
        "BathroomsTotalInteger": home["baths"],
        "YearBuilt": home["year"],
        "DaysOnMarket": (np.minimum(np.where(sold, t["closed"], t["end"]), t["end"]) - t["entered"]) // _DAY,
        "OriginalEntryTimestamp": _stamps(t["entered"]),
        "MajorChangeTimestamp": _stamps(last),
        "CloseDate": _stamps(t["closed"], ~sold),
        "ModificationTimestamp": _stamps(np.maximum(last, np.where(cut_ok, t["cut"], 0))),
    })  # fmt: skip
    return listings, _history(ids, t, price, now, cut_ok)


def _history(ids: pa.Array, t: dict[str, np.ndarray], price: np.ndarray, now: np.ndarray,
             cut_ok: np.ndarray) -> pa.Table:  # fmt: skip
    """The change records up to ``END``: to AUC, to Pending, to Closed, and the price cuts."""
    end = t["end"]
    auc = (t["auc"] >= 0) & (t["auc"] <= end)
    parts = []
    for at, ok, before, after in (
        (t["auc"], auc, np.zeros(len(end)), 1),
        (t["pending"], t["pending"] <= end, np.where(auc, 1, 0), 2),
        (t["closed"], t["closed"] <= end, np.full(len(end), 2), 3),
    ):
        rows = np.flatnonzero(ok)
        parts.append(pa.table({
            "ListingId": ids.take(rows),
            "ChangeType": _category(np.zeros(len(rows)), CHANGE_TYPES),
            "ChangeTimestamp": _stamps(at[rows]),
            "PreviousListPrice": pa.nulls(len(rows), pa.float64()),
            "ListPrice": pa.nulls(len(rows), pa.float64()),
            "PreviousStatus": _category(before[rows], STATUSES),
            "StandardStatus": _category(np.full(len(rows), after), STATUSES),
        }))  # fmt: skip
    rows = np.flatnonzero(cut_ok)
    none = np.ones(len(rows), dtype=bool)
    parts.append(pa.table({
        "ListingId": ids.take(rows),
        "ChangeType": _category(np.ones(len(rows)), CHANGE_TYPES),
        "ChangeTimestamp": _stamps(t["cut"][rows]),
        "PreviousListPrice": price[rows],
        "ListPrice": now[rows],
        "PreviousStatus": _category(np.zeros(len(rows)), STATUSES, none),
        "StandardStatus": _category(np.zeros(len(rows)), STATUSES, none),
    }))  # fmt: skip
    return pa.concat_tables(parts)


def write_dataset(root: Path, n: int, seed: int = 11) -> tuple[int, int]:
    """``n`` listings and their history under ``root`` in the cache's layout; (listings,
    changes) written. One scope per ``CHUNK`` listings; at most one chunk in memory."""
    rng = np.random.default_rng(seed)
    homes = max(1, int(n * 0.8))  # one home in five is sold more than once in the span
    account = "account=acct-5ca1eb3c4d00"
    written = [0, 0]
    for i, first in enumerate(range(0, n, CHUNK)):
        listings, history = _chunk(rng, first, min(CHUNK, n - first), homes)
        for resource_, table in (("market", listings), ("market.history", history)):
            folder = root / resource_ / account / f"scope=key-{i:04d}"
            folder.mkdir(parents=True, exist_ok=True)
            pq.write_table(table, folder / "part-0.parquet", row_group_size=131_072)
        written[0] += listings.num_rows
        written[1] += history.num_rows
    return written[0], written[1]


def _calls() -> dict[str, Callable[[Any, Any], pd.DataFrame]]:
    """Each call on (market, history) as the engine gives them."""
    import realtyframes as rf

    return {
        "trends": lambda m, h: rf.market_trends(m, h, freq="M", by="City"),
        "tiers": lambda m, h: rf.market_trends(m, h, freq="M", by="City", tiers=True),
        "price_index": lambda m, h: rf.price_index(m, freq="M"),
    }


def _read(engine: str, root: Path) -> tuple[Any, Any]:
    paths = [root / "market", root / "market.history"]
    if engine == "pandas":
        return tuple(pd.read_parquet(p).drop(columns=["account", "scope"]) for p in paths)  # type: ignore[return-value]
    if engine == "duckdb":
        import duckdb

        con = duckdb.connect()
        spill = root.parent / f"duckdb-spill-{os.getpid()}"  # beside the data, removed with it
        con.execute(f"SET threads TO 2; SET memory_limit = '{DUCKDB_MEMORY}'; "
                    f"SET temp_directory = '{spill}'; SET preserve_insertion_order = false")  # fmt: skip
        return tuple(con.read_parquet(f"{p}/*/*/*.parquet", hive_partitioning=True) for p in paths)  # type: ignore[return-value]
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "3g")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", str(SPARK_PARTITIONS))
        .config("spark.sql.adaptive.enabled", "true")  # Spark's default; coalesces small ones
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return tuple(spark.read.parquet(str(p)) for p in paths)  # type: ignore[return-value]


class _Steps:
    """Where a case's memory goes (``RF_SCALE_STEPS=1``): each step of the engine tiers and
    trends wrapped to log the process's VmRSS / VmHWM and DuckDB's accounted memory and spill."""

    def __init__(self, market: Any) -> None:
        from realtyframes.analysis import _tiers_engine, _trends_engine

        duck = type(market).__module__.startswith("duckdb")
        self.relation, self.start = market if duck else None, time.perf_counter()
        steps = ("_stocks", "_flows", "_sales", "_age", "_cuts", "_contracts")
        for name in steps:
            self._wrap(_trends_engine, name)
        self._wrap(_trends_engine.EngineTrends, "__init__", "the trends' inputs")
        self._wrap(_trends_engine.EngineTrends, "prepare")
        self._wrap(_tiers_engine.EngineTiers, "tag")
        self._wrap(_tiers_engine.EngineTiers, "tagged_rows")

    def log(self, what: str) -> None:
        mb = {}
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(("VmRSS", "VmHWM")):
                mb[line[:5]] = int(line.split()[1]) // 1024
        duck = ""
        if self.relation is not None:  # the relation's own database
            used = self.relation.query("_m", "SELECT sum(memory_usage_bytes) >> 20, "
                                       "sum(temporary_storage_bytes) >> 20 FROM duckdb_memory()")  # fmt: skip
            duck = "; DuckDB {} MB, spilled {} MB".format(*used.fetchall()[0])
        seconds = time.perf_counter() - self.start
        print(f"{seconds:8.1f} s  RSS {mb['VmRSS']:5d} MB  peak {mb['VmHWM']:5d} MB  {what}{duck}",
              file=sys.stderr, flush=True)  # fmt: skip

    def _wrap(self, owner: Any, name: str, label: str | None = None) -> None:
        step = getattr(owner, name)

        def logged(*args: Any, **kwargs: Any) -> Any:
            self.log(f"> {label or name}")
            try:
                return step(*args, **kwargs)
            finally:
                self.log(f"< {label or name}")

        setattr(owner, name, logged)


def case(engine: str, call: str, root: Path, out: Path) -> dict[str, Any]:
    """One call on one engine (this process): seconds, the process's peak RSS, result rows."""
    start = time.perf_counter()
    market, history = _read(engine, root)
    if STEPS:
        _Steps(market)
    result = _calls()[call](market, history)
    seconds = time.perf_counter() - start
    result.to_pickle(out)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    return {"seconds": seconds, "peak_mb": peak, "rows": len(result)}


def _spark_python() -> str:
    here = Path(__file__).resolve().parent.parent
    for candidate in (os.environ.get("RF_SPARK_PYTHON"), here / ".venv-spark/bin/python",
                      Path("/work/main/.venv-spark/bin/python")):  # fmt: skip
        if candidate and Path(candidate).exists():
            return str(candidate)
    return sys.executable


def _run_case(engine: str, call: str, root: Path, out: Path) -> dict[str, Any]:
    python = _spark_python() if engine == "spark" else sys.executable
    try:
        done = subprocess.run(
            [python, __file__, "case", engine, call, str(root), str(out)],
            capture_output=True, text=True, check=False, timeout=TIMEOUT,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return {"error": f"not completed in {TIMEOUT:.0f} s (stopped)"}
    if done.returncode:
        lines = done.stderr.strip().splitlines()
        return {"error": lines[-1] if lines else f"failed (exit {done.returncode})"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def _wanted(engine: str, call: str) -> bool:
    return not CASES or f"{engine}/{call}" in CASES


def _close(got: Any, want: Any) -> bool:
    """Equal, floats to 1e-9 relative (an engine sums in its own order), through dicts."""
    if isinstance(want, float) and isinstance(got, float):
        return bool(np.isclose(got, want, rtol=1e-9, atol=0.0, equal_nan=True))
    if isinstance(want, dict) and isinstance(got, dict):
        return got.keys() == want.keys() and all(_close(got[k], want[k]) for k in want)
    return bool(got == want)


def _same(got: pd.DataFrame, want: pd.DataFrame) -> int:
    assert got.attrs.keys() == want.attrs.keys()
    for key, value in want.attrs.items():
        assert _close(got.attrs[key], value), key
    pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=1e-9)
    return want.size


def check_sample(folder: Path, n: int = SAMPLE) -> dict[str, int]:
    """Every engine's result on ``n`` listings equals pandas' (cells compared, per call)."""
    root = folder / "sample"
    write_dataset(root, n, seed=5)
    cells = {}
    for call in _calls():
        if not any(_wanted(e, call) for e in ENGINES):
            continue
        want = folder / f"sample-pandas-{call}.pkl"
        report = _run_case("pandas", call, root, want)
        assert "error" not in report, report
        for engine in [e for e in ENGINES if _wanted(e, call)]:
            got = folder / f"sample-{engine}-{call}.pkl"
            report = _run_case(engine, call, root, got)
            assert "error" not in report, (engine, call, report)
            cells[f"{engine}/{call}"] = _same(pd.read_pickle(got), pd.read_pickle(want))
    return cells


def run() -> str:
    from _util import table

    with tempfile.TemporaryDirectory(prefix="rf-bench-scale-") as tmp:
        folder = Path(tmp)
        cells = check_sample(folder) if SAMPLE else {}
        start = time.perf_counter()
        listings, changes = write_dataset(folder / "big", N)
        written = time.perf_counter() - start
        size = sum(p.stat().st_size for p in (folder / "big").rglob("*.parquet")) / 1e9
        rows = []
        for engine in ENGINES:
            for call in [c for c in _calls() if _wanted(engine, c)]:
                r = _run_case(engine, call, folder / "big", folder / f"{engine}-{call}.pkl")
                cell = r.get("error") or f"{r['seconds']:.0f} s, driver peak {r['peak_mb']:,.0f} MB"
                rows.append([engine, call, cell])
                print(f"| {engine} | {call} | {cell} |", file=sys.stderr, flush=True)
    return _section(
        listings, changes, written, size, cells, table(["engine", "call", "result"], rows)
    )


def _section(listings: int, changes: int, written: float, size: float, cells: dict[str, int],
             body: str) -> str:  # fmt: skip
    checked = ", ".join(f"{k} {v:,}" for k, v in cells.items())
    return (
        f"## Scale: {listings:,} listings on local Spark and DuckDB\n\n"
        "Command: `.venv/bin/python benchmarks/run_all.py scale` "
        f"(`RF_SCALE_N={listings}`). {listings:,} synthetic listings and {changes:,} change "
        f"records written as the cache's Parquet layout ({size:.2f} GB, {written:.0f} s, chunk "
        "by chunk). Each case in its own Python process: time including the read, and that "
        "process's peak RSS (Spark's JVM is a separate process; DuckDB runs inside the process, "
        f"its memory limited to {DUCKDB_MEMORY}). "
        + (
            f"Before, on {SAMPLE:,} listings, each engine's result equalled pandas' to 1e-9 "
            f"(cells: {checked}).\n\n"
            if cells
            else "No sample compared in this run.\n\n"
        )
        + body
        + "\n"
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["case"]:
        engine, call, root, out = sys.argv[2:6]
        print(json.dumps(case(engine, call, Path(root), Path(out))))
    else:
        print(run())
