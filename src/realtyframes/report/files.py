"""Writing a market report and reading its data back; the file writers ``fetch`` shares.

:func:`write_market_report` writes one self-contained HTML file and, next to it, every frame the
report was computed from as Parquet and CSV (dated names; same frames and options, same bytes);
:func:`read_report_data` reads those frames back. :func:`market_report` is load, compute and
write in one call. Every file is written atomically (:mod:`realtyframes._files`).

>>> import realtyframes as rf                                        # doctest: +SKIP
>>> market_report(rf.Client(), out_dir="reports").html              # doctest: +SKIP
PosixPath('reports/market-report-2026-06-30.html')
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from realtyframes._files import PRIVATE_MODE, atomic_path, atomic_write_text
from realtyframes.errors import QueryError
from realtyframes.report._tables import collecting
from realtyframes.report.compute import MarketReport, compute_market_report
from realtyframes.report.load import ReportClient, load_market_frames, plain_frame
from realtyframes.report.options import DATA_FILES, MarketReportOptions, data_source
from realtyframes.report.render import render_market_report
from realtyframes.schemas import holds_personal_data

__all__ = [
    "FORMATS",
    "SOURCE_KEY",
    "ReportFiles",
    "csv_ready",
    "data_paths",
    "is_private",
    "market_report",
    "output_format",
    "read_report_data",
    "write_frame",
    "write_market_report",
    "write_output",
]

logger = logging.getLogger("realtyframes.report")

#: Output formats of :func:`write_output`, by file extension.
FORMATS: dict[str, str] = {".parquet": "parquet", ".csv": "csv", ".json": "json", ".xlsx": "xlsx"}
#: Formats that hold several frames in one file (JSON members, workbook sheets).
MULTI_FRAME: frozenset[str] = frozenset({"json", "xlsx"})
#: The report's frames about people (CRM contacts): their files are private (``0600``) although
#: the report keeps no names, e-mails or phones in them.
PERSONAL_FRAMES: frozenset[str] = frozenset({"contacts"})
#: The Parquet key-value metadata (and workbook property) naming where the data came from.
SOURCE_KEY = "realtyframes.source"


@dataclass(frozen=True)
class ReportFiles:
    """Paths written: the HTML and, per data frame, its Parquet and CSV files."""

    html: Path
    data: dict[str, dict[str, Path]]
    manifest: Path | None = None
    workbook: Path | None = None

    def all(self) -> list[Path]:
        """Every path written, HTML first."""
        extra = [p for p in (self.manifest, self.workbook) if p is not None]
        return [self.html, *(p for d in self.data.values() for p in d.values()), *extra]


def data_paths(html: str | os.PathLike[str]) -> dict[str, dict[str, Path]]:
    """The data files next to a report: name -> {"parquet": path, "csv": path}.

    >>> data_paths("reports/r.html")["listings"]["csv"].as_posix()
    'reports/r.listings.csv'
    """
    html = Path(html)
    stem = html.name.removesuffix(".html")
    return {
        name: {fmt: html.with_name(f"{stem}.{name}.{fmt}") for fmt in ("parquet", "csv")}
        for name in DATA_FILES
    }


def read_report_data(html: str | os.PathLike[str]) -> dict[str, pd.DataFrame]:
    """Read the Parquet files written next to a report (the frames it was computed from).

    >>> frames = read_report_data("reports/market-report-2026-06-30.html")  # doctest: +SKIP
    >>> rf.market_summary(frames["listings"], as_of="2026-06-30")  # doctest: +SKIP
    """
    out = {}
    for name, paths in data_paths(html).items():
        if paths["parquet"].exists():
            out[name] = pd.read_parquet(paths["parquet"])
    return out


def csv_ready(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy whose list values (phones, languages ...) are JSON arrays: CSV has no lists.

    >>> csv_ready(pd.DataFrame({"phones": [["1", "2"]]}))["phones"][0]
    '["1", "2"]'
    """

    def encode(value: object) -> object:
        if isinstance(value, np.ndarray):
            value = value.tolist()
        return json.dumps(list(value)) if isinstance(value, list | tuple) else value

    text = frame.copy()
    for column in text.columns:
        if text[column].dtype == object:
            text[column] = text[column].map(encode)
    return text


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
    text = csv_ready(frame)
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
        from realtyframes.report.excel import write_workbook

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


def write_market_report(
    report: MarketReport,
    out_dir: str | os.PathLike[str] = "reports",
    *,
    xlsx: bool = False,
    workers: int | None = None,
) -> ReportFiles:
    """Write the HTML report, its data (Parquet + CSV), its manifest (``.report.json``) and,
    with ``xlsx=True``, one Excel workbook of every frame plus a "Definitions" sheet, into
    ``out_dir``; returns the paths. ``workers``: processes drawing the charts beside this one
    (see :func:`render_market_report`; 0: none).

    >>> files = write_market_report(report, "reports")  # doctest: +SKIP
    >>> files.html.name  # doctest: +SKIP
    'market-report-2026-06-30.html'
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stem = report.options.stem
    html_path = out / f"{stem}.html"
    frames = report.frames.data_frames()
    paths = {k: v for k, v in data_paths(html_path).items() if k in frames}
    for name, frame in frames.items():
        private = is_private({name: frame})
        source = report.options.source
        parquet, csv = paths[name]["parquet"], paths[name]["csv"]
        write_frame(frame, parquet, csv, private=private, source=source)
    with collecting() as tables:  # the tables the page shows, for the workbook
        page = render_market_report(report, stem=stem, workers=workers)
    atomic_write_text(html_path, page)
    for listing_id, comps in report.comps.items():  # computed, not input: beside the report too
        name = f"comps-{listing_id}"
        paths[name] = {fmt: out / f"{stem}.{name}.{fmt}" for fmt in ("parquet", "csv")}
        write_frame(comps, paths[name]["parquet"], paths[name]["csv"], source=report.options.source)
    from realtyframes.report.manifest import write_manifest

    workbook = None
    if xlsx:
        from realtyframes.report.definitions import metric_definitions
        from realtyframes.report.excel import write_workbook

        workbook = write_workbook(
            {**tables, **frames},  # what the page shows, then what it was computed from
            out / f"{stem}.xlsx",
            definitions=metric_definitions(),
            private=is_private(frames),
            source=report.options.source,
        )
    return ReportFiles(
        html=html_path,
        data=paths,
        manifest=write_manifest(report, html_path, paths),
        workbook=workbook,
    )


def market_report(
    client: ReportClient | None = None,
    *,
    as_of: dt.date | str | None = None,
    cities: Sequence[str] = (),
    property_types: Sequence[str] = ("Residential",),
    by: str = "City",
    window_days: float = 90,
    out_dir: str | os.PathLike[str] = "reports",
    refresh: bool = False,
    source: str | None = None,
) -> ReportFiles:
    """Load, compute and write the market report in one call (``rf.Client()`` when no client).

    >>> files = market_report(rf.Client(), cities=["Miami Beach", "Coral Gables"])  # doctest: +SKIP
    >>> files.html  # doctest: +SKIP
    PosixPath('reports/market-report-2026-06-30-miami-beach-coral-gables.html')
    """
    if client is None:
        from realtyframes._client import Client

        with Client() as own:
            return market_report(
                own,
                as_of=as_of,
                cities=cities,
                property_types=property_types,
                by=by,
                window_days=window_days,
                out_dir=out_dir,
                refresh=refresh,
                source=source,
            )
    if source is None:
        source = data_source(client)
    options = MarketReportOptions(
        as_of=as_of,
        window_days=window_days,
        by=by,
        cities=tuple(cities),
        property_types=tuple(property_types),
        source=source,
    )
    frames = load_market_frames(client, options, refresh=refresh)
    logger.info("computing the report")
    report = compute_market_report(frames, options)
    return write_market_report(report, out_dir)
