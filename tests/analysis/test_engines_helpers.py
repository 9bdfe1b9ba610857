"""The engine trends' reductions that keep the driver small, against a plain computation:
the age of inventory's medians over the windows each row is held in (:func:`held_medians`,
computed on DuckDB and Polars; only groups × windows come back), and each fetched row's market
code without a tuple per row (:func:`market_codes`)."""

from __future__ import annotations

from typing import Any

import duckdb
import narwhals as nw
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

from realtyframes.analysis._engine_frames import held_medians, market_codes


def _spans(seed: int, n: int) -> pd.DataFrame:
    """Rows held in windows lo .. hi - 1 (spans up to 40 windows), two keys, entry days."""
    rng = np.random.default_rng(seed)
    lo = rng.integers(0, 30, n)
    return pd.DataFrame({
        "City": rng.choice(["Doral", "Miami", "Coral Gables"], n),
        "tier": rng.choice([0, 1, 12], n),
        "day": rng.integers(19_000, 19_060, n),
        "lo": lo,
        "hi": lo + 1 + (rng.integers(0, 4, n) ** 3 % 40),
    })  # fmt: skip


def _plain(rows: pd.DataFrame, groups: list[str]) -> pd.DataFrame:
    """Each row once per window it is held in, then pandas' median and count per window."""
    held = rows.loc[rows.index.repeat(rows["hi"] - rows["lo"])].copy()
    held["win"] = held["lo"] + held.groupby(level=0).cumcount()
    out = held.groupby([*groups, "win"])["day"].agg(["median", "size"]).reset_index()
    return out.rename(columns={"size": "n"})


def _on(engine: str, rows: pd.DataFrame) -> Any:
    if engine == "duckdb":
        con = duckdb.connect()
        return nw.from_native(con.from_arrow(pa.Table.from_pandas(rows, preserve_index=False)))
    return nw.from_native(pl.from_pandas(rows).lazy())


@pytest.mark.parametrize("engine", ["duckdb", "polars"])
@pytest.mark.parametrize("groups", [["City", "tier"], ["City"], []])
def test_held_medians_equal_the_medians_of_each_window_s_rows(engine: str, groups: list[str]):
    rows = _spans(3, 2_000)
    assert (rows["hi"] - rows["lo"]).max() > 20  # spread over more than one copy of each kind
    got = held_medians(_on(engine, rows), groups, "day")
    want = _plain(rows, groups)
    on = [*groups, "win"]
    got = got.sort_values(on).reset_index(drop=True)[[*on, "median", "n"]]
    want = want.sort_values(on).reset_index(drop=True)
    assert len(want) > 50 and (want["n"] % 2 == 0).any() and (want["n"] % 2 == 1).any()
    pd.testing.assert_frame_equal(got, want, check_dtype=False)


@pytest.mark.parametrize("engine", ["duckdb", "polars"])
def test_held_medians_of_no_rows_is_an_empty_table(engine: str):
    rows = _spans(4, 10).iloc[:0]
    got = held_medians(_on(engine, rows), ["City"], "day")
    assert got.empty and list(got.columns) == ["City", "win", "median", "n"]


def test_market_codes_equal_a_lookup_of_each_row_s_key_tuple():
    rng = np.random.default_rng(7)
    markets = pd.Index(
        sorted((c, t) for c in ("Doral", "Miami") for t in (0, 1, 12)), tupleize_cols=False
    )
    cities = rng.choice(["Doral", "Miami", "Weston"], 500)  # Weston: no market
    tiers = rng.choice([0, 1, 12, 5], 500)  # 5: no market
    columns = [
        [pd.Series(cities, dtype="str"), pd.Series(tiers)],
        [pd.Series(cities, dtype=object), pd.Series(tiers, dtype="Int64")],
        [
            pd.Series(pa.array(cities), dtype=pd.ArrowDtype(pa.string())),
            pd.Series(tiers, dtype="int32"),
        ],
    ]
    want = markets.get_indexer(pd.Index(list(zip(cities, tiers, strict=True)), tupleize_cols=False))
    assert (want == -1).any() and (want >= 0).sum() > 200
    for pair in columns:
        np.testing.assert_array_equal(market_codes(markets, pair), want)
    assert (
        market_codes(markets, [pd.Series([], dtype="str"), pd.Series([], dtype="int64")]).size == 0
    )
