"""The manifest of a report run (``<stem>.report.json`` next to the HTML): what it covered, with
what, and a hash of every frame, so a run can be checked and reproduced (``--as-of``).

>>> sorted(manifest(report, files))  # doctest: +SKIP
['as_of', 'data', 'files', 'notes', 'parameters', 'quarantined', 'realtyframes', 'scope', ...]
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import platform
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from realtyframes._files import atomic_write_text
from realtyframes._version import __version__
from realtyframes.report.compute import MarketReport

__all__ = ["MANIFEST_SUFFIX", "brokerage_manifest", "frame_hash", "manifest", "write_manifest"]

#: The manifest's file name after the report's stem.
MANIFEST_SUFFIX = ".report.json"


def frame_hash(frame: pd.DataFrame) -> str:
    """A SHA-256 of a frame's values, column names and dtypes (independent of file format).

    >>> frame_hash(pd.DataFrame({"a": [1]})) == frame_hash(pd.DataFrame({"a": [1]}))
    True
    """
    digest = hashlib.sha256()
    digest.update(json.dumps([[str(c), str(t)] for c, t in frame.dtypes.items()]).encode())
    digest.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    return digest.hexdigest()


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):  # the brand
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return value


def manifest(
    report: MarketReport, data: Mapping[str, Mapping[str, Path]], *, pdf: Path | None = None
) -> dict[str, Any]:
    """The manifest's content: as_of, scope, every parameter, versions, rows, quarantine counts,
    each frame's hash and file names, and the PDF's file name when one was printed (``pdf``).
    No wall-clock time: the same run gives the same manifest."""
    o = report.options
    frames = {k: v for k, v in report.frames.data_frames().items() if k in data}
    return {
        "report": "market",
        "as_of": o.day.isoformat(),
        "scope": {"cities": list(o.cities), "property_types": list(o.property_types), "by": o.by},
        "parameters": {f.name: _jsonable(getattr(o, f.name)) for f in dataclasses.fields(o)},
        "source": o.source,
        "realtyframes": __version__,
        "versions": {"python": platform.python_version(), "pandas": pd.__version__},
        "first_run": report.frames.since_last is None,
        "rows": {name: len(frame) for name, frame in frames.items()},
        "quarantined": dict(report.frames.quarantined),
        "data": _data(frames, data),
        "comps": {
            listing_id: {
                "rows": len(comps),
                "sha256": frame_hash(comps),
                "files": {fmt: p.name for fmt, p in data.get(f"comps-{listing_id}", {}).items()},
            }
            for listing_id, comps in report.comps.items()
        },
        "notes": [*report.frames.notes, *report.notes],
        **({"pdf": pdf.name} if pdf is not None else {}),
    }


def _data(frames: Mapping[str, pd.DataFrame], data: Mapping[str, Mapping[str, Path]]) -> Any:
    return {
        name: {"sha256": frame_hash(frame), "files": {f: p.name for f, p in data[name].items()}}
        for name, frame in frames.items()
        if name in data
    }


def brokerage_manifest(
    report: Any, data: Mapping[str, Mapping[str, Path]], *, pdf: Path | None = None
) -> dict[str, Any]:
    """The brokerage report's manifest (a ``BrokerageReport``): as_of, window, source, versions,
    rows and each frame's hash and files; counts and hashes only, no contact's data.

    >>> brokerage_manifest(report, files.data)["report"]  # doctest: +SKIP
    'brokerage'
    """
    frames: Mapping[str, pd.DataFrame] = report.frames
    return {
        "report": "brokerage",
        "as_of": report.day.isoformat(),
        "parameters": {"window_days": float(report.window_days), "period": report.period},
        "source": report.source,
        "realtyframes": __version__,
        "versions": {"python": platform.python_version(), "pandas": pd.__version__},
        "rows": {name: len(frame) for name, frame in frames.items() if name in data},
        "data": _data(frames, data),
        "notes": list(report.notes),
        **({"pdf": pdf.name} if pdf is not None else {}),
    }


def write_manifest(
    report: Any,
    html: Path,
    data: Mapping[str, Mapping[str, Path]],
    *,
    pdf: Path | None = None,
    mode: int | None = None,
) -> Path:
    """Write the manifest of a market report (or, for a ``BrokerageReport``, the brokerage
    manifest) next to the HTML, atomically, with file ``mode`` if given; returns its path."""
    path = html.with_name(html.name.removesuffix(".html") + MANIFEST_SUFFIX)
    if isinstance(report, MarketReport):
        content = manifest(report, data, pdf=pdf)
    else:
        content = brokerage_manifest(report, data, pdf=pdf)
    atomic_write_text(path, json.dumps(content, indent=1, sort_keys=True) + "\n", mode=mode)
    return path
