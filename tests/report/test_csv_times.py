"""The report's CSV files write UTC timestamps without pandas' tz-aware per-value formatting (a
fifth of a warm client run, issue #32); the bytes must be those ``DataFrame.to_csv`` writes."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from realtyframes.report import write_frame

WHOLE = ["2026-06-30 14:01:15", "2026-06-30", None, "1850-01-01 23:59:59", "9999-01-01"]


@pytest.mark.parametrize(
    "values",
    [
        pd.to_datetime(WHOLE, utc=True, format="ISO8601"),  # whole seconds and a NaT
        pd.to_datetime(WHOLE[:3], utc=True, format="ISO8601").as_unit("ns"),
        pd.to_datetime(["2026-06-30", "2026-07-01"], utc=True),  # midnights only
        pd.to_datetime(["2026-06-30 00:00:00.5", None], utc=True),  # sub-second: pandas' path
        pd.to_datetime(["2026-06-30 12:00"], utc=True).tz_convert("America/New_York"),
        pd.to_datetime([None, None], utc=True),
        pd.to_datetime([], utc=True),
    ],
)
def test_csv_bytes_equal_pandas_to_csv(tmp_path: Path, values: pd.DatetimeIndex) -> None:
    frame = pd.DataFrame({"t": values, "ListingId": [f"A{i}" for i in range(len(values))]})
    write_frame(frame, tmp_path / "f.parquet", tmp_path / "f.csv")
    expected = frame.to_csv(index=False, lineterminator="\n")
    assert (tmp_path / "f.csv").read_text(encoding="utf-8") == expected
    parquet = pd.read_parquet(tmp_path / "f.parquet")["t"]  # still timestamps, not text
    assert isinstance(parquet.dtype, pd.DatetimeTZDtype)
    utc = [parquet.dt.tz_convert("UTC").dt.as_unit("us"), frame["t"].dt.tz_convert("UTC")]
    pd.testing.assert_series_equal(*(t.dt.as_unit("us") for t in utc))
