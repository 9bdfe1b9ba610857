"""The general file writers: a frame (or several) to Parquet, CSV, JSON or an Excel workbook,
atomically, ``0600`` when the data are personal. ``realtyframes fetch``, the MCP tools' files and
the market report (:mod:`realtyframes.report.files`) all write through them.

>>> output_format("out/miami.parquet")
'parquet'
>>> write_output(client.listings(City="Miami"), "out/miami.csv", "csv")  # doctest: +SKIP
412
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from realtyframes._files import PRIVATE_MODE, atomic_path, atomic_write_text
from realtyframes.errors import QueryError
from realtyframes.report._plain import csv_ready, csv_times, plain_frame
from realtyframes.report.excel import write_workbook
from realtyframes.schemas import holds_personal_data

__all__ = [
    "FORMATS",
    "PERSONAL_FRAMES",
    "SOURCE_KEY",
    "is_private",
    "output_format",
    "write_frame",
    "write_output",
]

#: Output formats of :func:`write_output`, by file extension.
FORMATS: dict[str, str] = {".parquet": "parquet", ".csv": "csv", ".json": "json", ".xlsx": "xlsx"}
#: Formats that hold several frames in one file (JSON members, workbook sheets).
MULTI_FRAME: frozenset[str] = frozenset({"json", "xlsx"})
#: The report's frames about people (CRM contacts): their files are private (``0600``) although
#: the report keeps no names, e-mails or phones in them.
PERSONAL_FRAMES: frozenset[str] = frozenset({"contacts"})
#: The Parquet key-value metadata (and workbook property) naming where the data came from.
SOURCE_KEY = "realtyframes.source"


def _mode(private: bool) -> int | None:
    """The mode a new file is created with: owner-only for personal data, else the umask's."""
    return PRIVATE_MODE if private else None


def is_private(data: pd.DataFrame | Mapping[str, pd.DataFrame]) -> bool:
    """Whether a file holding ``data`` must be private (``0600``): a frame with personal columns
    (:data:`realtyframes.schemas.PERSONAL_COLUMNS`), or one of the report's :data:`PERSONAL_FRAMES`.

    >>> is_private(pd.DataFrame(columns=["id", "email"])), is_private({"listings": pd.DataFrame()})
    (True, False)
    """
    if isinstance(data, pd.DataFrame):
        return holds_personal_data(data.columns)
    return any(name in PERSONAL_FRAMES or is_private(f) for name, f in data.items())


def _write_parquet(
    frame: pd.DataFrame,
    path: Path,
    compression: str | None = None,
    *,
    private: bool = False,
    source: str | None = None,
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(frame, preserve_index=False)
    if source is not None:
        meta = {**(table.schema.metadata or {}), SOURCE_KEY.encode(): source.encode()}
        table = table.replace_schema_metadata(meta)
    with atomic_path(path, mode=_mode(private)) as tmp:
        if compression is None:
            pq.write_table(table, tmp)
        else:
            pq.write_table(table, tmp, compression=compression)


def _write_csv(frame: pd.DataFrame, path: Path, *, private: bool = False) -> None:
    text = csv_times(csv_ready(frame))
    with atomic_path(path, mode=_mode(private)) as tmp:
        text.to_csv(tmp, index=False, lineterminator="\n")


def write_frame(
    frame: pd.DataFrame,
    parquet: Path,
    csv: Path,
    *,
    private: bool = False,
    source: str | None = None,
) -> None:
    """Write one frame as Parquet and CSV (atomically; no index; deterministic bytes);
    ``private`` (or personal columns in the frame): both files ``0600``; ``source``: where the
    data came from, in the Parquet file's key-value metadata (:data:`SOURCE_KEY`)."""
    private = private or is_private(frame)
    frame = plain_frame(frame)
    _write_parquet(frame, parquet, compression="zstd", private=private, source=source)
    _write_csv(frame, csv, private=private)


def output_format(path: str | os.PathLike[str], member: str | None = None) -> str:
    """The output format from the file extension (QueryError for others).

    >>> output_format("out/miami.parquet")
    'parquet'
    """
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise QueryError("--out", f"{os.fspath(path)!r} has no known extension", list(FORMATS))
    if member == "all" and FORMATS[suffix] not in MULTI_FRAME:
        raise QueryError(
            "--member", "'all' writes several frames: use a .json or .xlsx output", "a member"
        )
    return FORMATS[suffix]


def _jsonable(frame: pd.DataFrame) -> list[dict[str, Any]]:
    text = frame.to_json(orient="records", date_format="iso", date_unit="us", force_ascii=False)
    return json.loads(text)  # type: ignore[no-any-return]


def _json_text(payload: object) -> str:
    return json.dumps(payload, ensure_ascii=False, indent=1) + "\n"


def write_output(
    data: pd.DataFrame | Mapping[str, pd.DataFrame],
    path: str | os.PathLike[str],
    fmt: str,
    *,
    name: str = "data",
    private: bool = False,
    source: str | None = None,
) -> int:
    """Write a frame (or, for JSON and Excel, several by name) to ``path``; returns the rows.

    ``fmt``: parquet, csv, json (records) or xlsx (a sheet per frame; a single frame's sheet is
    ``name``); parent folders are created. The file is created ``0600`` (its owner only) when
    ``private`` or when the data hold personal columns (:func:`is_private`). ``source`` (where
    the data came from, e.g. "embedded sandbox (synthetic data)") goes in the Parquet file's
    key-value metadata under :data:`SOURCE_KEY` and in a workbook's properties (CSV and JSON
    records have no place for it).

    >>> write_output(client.listings(City="Miami"), "out/miami.csv", "csv")  # doctest: +SKIP
    412
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    private = private or is_private(data)
    if fmt == "xlsx":
        frames = dict(data) if isinstance(data, Mapping) else {name: data}
        write_workbook(frames, target, private=private, source=source)
        return sum(len(f) for f in frames.values())
    if isinstance(data, Mapping):
        if fmt != "json":
            raise QueryError("--out", "several frames need a .json or .xlsx output", [".json"])
        payload = {name: _jsonable(plain_frame(f)) for name, f in data.items()}
        atomic_write_text(target, _json_text(payload), mode=_mode(private))
        return sum(len(f) for f in data.values())
    frame = plain_frame(data)
    if fmt == "parquet":
        _write_parquet(frame, target, private=private, source=source)
    elif fmt == "csv":
        _write_csv(frame, target, private=private)
    else:
        atomic_write_text(target, _json_text(_jsonable(frame)), mode=_mode(private))
    return len(frame)
