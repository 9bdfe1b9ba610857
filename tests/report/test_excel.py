"""Excel output: ``fetch --out x.xlsx`` and the workbook writer read back equal to the frames."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pandas as pd
import pytest

import realtyframes as rf
from realtyframes.cli import main
from realtyframes.report.excel import excel_ready, number_format, write_workbook


def _read_back(path: Path, sheet: str, like: pd.DataFrame) -> pd.DataFrame:
    """A sheet through ``pandas.read_excel``, typed like ``like`` (Excel keeps no dtypes)."""
    read = pd.read_excel(path, sheet_name=sheet)
    return read.astype({c: like[c].dtype for c in like.columns if like[c].dtype != object})


def test_fetch_xlsx_reads_back_equal_to_the_frame(
    sandbox_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "miami.xlsx"
    args = ["fetch", "listings", "--City", "Miami", "--Status", "Closed", "--out", str(out)]
    assert main([*args, "--base-url", sandbox_url, "--cache-dir", str(tmp_path / "c")]) == 0
    assert capsys.readouterr().out == f"{out}\n"
    with rf.Client(base_url=sandbox_url, cache=False, progress=False) as client:
        expected = excel_ready(client.listings(City="Miami", Status="Closed"))
    assert len(expected) > 5
    book = openpyxl.load_workbook(out)
    assert book.sheetnames == ["listings"]
    sheet = book["listings"]
    assert sheet.freeze_panes == "A2"
    header = [c.value for c in sheet[1]]
    assert header == list(expected.columns) and "CloseDate (UTC)" in header
    price = sheet.cell(row=2, column=header.index("ClosePrice") + 1)
    assert price.number_format == '"$"#,##0' and price.value == expected["ClosePrice"].iloc[0]
    read = _read_back(out, "listings", expected)
    pd.testing.assert_frame_equal(read, expected, check_dtype=False, check_exact=False)


def test_a_workbook_holds_every_frame_and_the_definitions(tmp_path: Path) -> None:
    frames = {
        "summary": pd.DataFrame(
            {
                "City": ["Miami", "Doral"],
                "homes_sold": pd.array([12, None], dtype="Int64"),
                "median_sale_price": [512_000.0, float("nan")],
                "pct_sold_above_list": [0.25, 0.0],
            }
        ),
        "changes": pd.DataFrame(
            {
                "ListingId": ["A1"],
                "at": pd.to_datetime(["2026-06-01 10:30"], utc=True),
                "tags": [["pool", "view"]],
            }
        ),
    }
    definitions = pd.DataFrame({"metric": ["homes_sold"], "definition": ["Closed in the window"]})
    path = write_workbook(frames, tmp_path / "out" / "report.xlsx", definitions=definitions)
    book = openpyxl.load_workbook(path)
    assert book.sheetnames == ["summary", "changes", "Definitions"]
    assert book["summary"]["D2"].number_format == "0.0%"
    assert book["summary"]["B2"].number_format == "#,##0"
    assert book["summary"]["B3"].value is None  # a missing count is an empty cell, not 0
    changes = pd.read_excel(path, sheet_name="changes")
    assert changes.columns.tolist() == ["ListingId", "at (UTC)", "tags"]
    assert changes["at (UTC)"][0] == pd.Timestamp("2026-06-01 10:30")
    assert changes["tags"][0] == '["pool", "view"]'
    summary = pd.read_excel(path, sheet_name="summary")
    pd.testing.assert_frame_equal(summary, excel_ready(frames["summary"]), check_dtype=False)


@pytest.mark.parametrize(
    ("column", "dtype", "expected"),
    [("ListPrice", "float64", '"$"#,##0'), ("conversion_rate", "float64", "0.0%"),
     ("visitors", "int64", "#,##0"), ("LivingArea", "float64", "#,##0.00"), ("City", "string", None),
     ("WaterfrontYN", "boolean", None)],
)  # fmt: skip
def test_number_formats_follow_the_column(column: str, dtype: str, expected: str | None) -> None:
    assert number_format(column, pd.Series([], dtype=dtype).dtype) == expected
