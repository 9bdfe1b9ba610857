"""Parsing page bodies into frames: the Arrow hot path (bodies parsed in chunks against the
models' schema) and the tolerant path for bodies Arrow cannot read; used by :mod:`._shape`."""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import numpy as np
import pandas as pd
import pandera.pandas as pa_model
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from realtyframes._tuning import PARSE_CHUNK_BYTES
from realtyframes.errors import BadResponseError
from realtyframes.schemas._changes import ListingChange
from realtyframes.schemas._contacts import LINK_MEMBERS, Contact
from realtyframes.schemas._listing import DETAIL_FIELDS, SUMMARY_FIELDS, Listing, ListingMedia
from realtyframes.schemas._quarantine import (
    SchemaDriftWarning,
    _kind,
    convert,
    null_series,
    target_dtypes,
)

_STR = pd.StringDtype(na_value=np.nan)
_MIN_BLOCK = 1 << 22  # Arrow JSON block size; grown to fit the longest body
_SPLIT = 8  # a failing chunk is split in this many parts, down to single bodies
_ARRAY_BODY = re.compile(rb"\s*\[")
#: Where shaping's Arrow buffers are allocated: the system allocator, which gives freed buffers
#: back to the system (pyarrow's default pool, mimalloc, kept what each parsed batch freed: #33,
#: a details load of 12,988 listings held 30-40 MB more at its peak).
_POOL = pa.system_memory_pool()


Model: TypeAlias = type[pa_model.DataFrameModel]


@dataclass(frozen=True)
class _Spec:
    """How one resource's JSON records map to its model's columns."""

    model: Model
    columns: tuple[str, ...]  # model columns to produce, in order
    structs: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # member -> {sub: col}
    child: str | None = None  # list-of-objects member pulled out as a long frame
    child_model: Model | None = None
    parent_key: str = ""
    overrides: Mapping[str, pa.DataType] = field(default_factory=dict)  # JSON types not derivable

    def struct_column(self, member: str, sub: str) -> str:
        return self.structs[member].get(sub, f"{member}_{sub}")


def _json_type(dtype: Any) -> pa.DataType | None:
    kind = _kind(dtype)
    return {
        "float": pa.float64(),
        "int": pa.float64(),  # JSON numbers; cast to int64 in Arrow (3 and 3.0 both accepted)
        "bool": pa.bool_(),
        "str": pa.large_string(),  # what pandas' str holds: no offsets cast at conversion
        "category": pa.string(),
        "timestamp": pa.timestamp("us", tz="UTC"),
    }.get(kind)


def _record_type(spec: _Spec) -> pa.StructType:
    dtypes = target_dtypes(spec.model)
    from_struct = {col for subs in spec.structs.values() for col in subs.values()}
    fields: list[pa.Field] = []
    for name in spec.columns:
        if name in from_struct:
            continue
        typ = spec.overrides.get(name) or _json_type(dtypes[name])
        if typ is not None:
            fields.append(pa.field(name, typ))
    for member, subs in spec.structs.items():
        sub_fields = [
            pa.field(sub, _json_type(dtypes[col]) or pa.string()) for sub, col in subs.items()
        ]
        fields.append(pa.field(member, pa.struct(sub_fields)))
    if spec.child and spec.child_model is not None:
        child_dtypes = target_dtypes(spec.child_model)
        child_fields = [
            pa.field(n, t)
            for n, d in child_dtypes.items()
            if n != spec.parent_key and (t := _json_type(d)) is not None
        ]
        fields.append(pa.field(spec.child, pa.list_(pa.struct(child_fields))))
    return pa.struct(fields)


def _listing_spec(detail: bool) -> _Spec:
    columns = SUMMARY_FIELDS + (DETAIL_FIELDS if detail else ())
    return _Spec(
        model=Listing,
        columns=columns,
        structs={"coordinates": {"lat": "Latitude", "lng": "Longitude"}},
        child="Media",
        child_model=ListingMedia,
        parent_key="ListingId",
    )


_CHANGE_SPEC = _Spec(model=ListingChange, columns=tuple(target_dtypes(ListingChange)))
_CONTACT_SPEC = _Spec(
    model=Contact,
    columns=tuple(target_dtypes(Contact)),
    structs={
        "links": {m: f"links_{m}" for m in LINK_MEMBERS},
        "registration": {"date": "registration_date"},
    },
    overrides={"phones": pa.list_(pa.string()), "spokenLanguages": pa.list_(pa.string())},
)


# --- Arrow hot path -------------------------------------------------------------------------------


def _one_line(body: bytes) -> bytes:
    # Raw newlines can only be whitespace between JSON tokens (inside strings they are escaped).
    if b"\n" in body or b"\r" in body:
        return body.replace(b"\r", b" ").replace(b"\n", b" ")
    return body


def _read_ndjson(bodies: Sequence[bytes], schema: pa.Schema) -> pa.Table:
    lines = [_one_line(b) for b in bodies]
    block = max(_MIN_BLOCK, 2 * max(map(len, lines)) + 2)
    buf = b"\n".join(lines)
    return pj.read_json(
        pa.BufferReader(buf),
        read_options=pj.ReadOptions(block_size=block, use_threads=True),
        parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="infer"),
        memory_pool=_POOL,
    )


def _encode_enum(arr: pa.ChunkedArray, categories: Sequence[str]) -> pa.ChunkedArray:
    """Strings -> dictionary with the fixed categories (unknown values appended after them)."""
    values = pa.array(list(categories), pa.string())
    if not pa.types.is_string(arr.type) and not pa.types.is_large_string(arr.type):
        arr = pc.cast(arr, pa.string(), memory_pool=_POOL)
    idx = pc.index_in(arr, value_set=values, memory_pool=_POOL)
    unknown = pc.and_(pc.is_valid(arr), pc.is_null(idx), memory_pool=_POOL)
    if pc.any(unknown).as_py():
        extras = pc.unique(pc.filter(arr, unknown)).cast(pa.string())
        extras = pa.array(sorted(extras.to_pylist()), pa.string())
        values = pa.concat_arrays([values, extras])
        idx = pc.index_in(arr, value_set=values, memory_pool=_POOL)
    itype = pa.int8() if len(values) < 128 else pa.int32()
    chunks = [
        pa.DictionaryArray.from_arrays(pc.cast(c, itype, memory_pool=_POOL), values)
        for c in idx.chunks
    ]
    return pa.chunked_array(chunks, pa.dictionary(itype, pa.string()))


def _cast_columns(table: pa.Table, model: Model) -> pa.Table:
    dtypes = target_dtypes(model)
    for i, name in enumerate(table.column_names):
        dtype = dtypes.get(name)
        if dtype is None:
            continue
        col = table.column(i)
        kind = _kind(dtype)
        if kind == "int" and pa.types.is_floating(col.type):
            try:
                col = pc.cast(col, pa.int64(), safe=True, memory_pool=_POOL)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                continue  # a fraction: stays float, validation reports the rows
        elif kind == "category" and not pa.types.is_dictionary(col.type):
            if not pa.types.is_string(col.type) and not pa.types.is_null(col.type):
                continue  # another type altogether: validation reports it
            col = _encode_enum(col, list(dtype.categories))
        else:
            continue
        table = table.set_column(i, name, col)
    return table


def _types_mapper(typ: pa.DataType) -> Any:
    if pa.types.is_integer(typ):
        return pd.Int64Dtype()
    if pa.types.is_boolean(typ):
        return pd.BooleanDtype()
    if pa.types.is_string(typ) or pa.types.is_large_string(typ):
        return _STR
    return None


#: Shaped tables to pandas, each Arrow column freed once converted (the table unusable after).
_TO_PANDAS: Any = dict(types_mapper=_types_mapper, memory_pool=_POOL, self_destruct=True)


def _split_records(
    records: pa.Table, spec: _Spec
) -> tuple[pa.Table, pa.Table | None, np.ndarray | None]:
    """Pull struct members into columns and the child list into its own table."""
    for member in spec.structs:
        if member not in records.column_names:
            continue
        col = records.column(member)
        at = records.column_names.index(member)
        records = records.remove_column(at)
        if pa.types.is_struct(col.type):
            for j in range(col.type.num_fields):
                sub = col.type.field(j).name
                records = records.append_column(
                    spec.struct_column(member, sub), pc.struct_field(col, [j], memory_pool=_POOL)
                )
    child = parents = None
    if spec.child and spec.child in records.column_names:
        col = records.column(spec.child)
        records = records.remove_column(records.column_names.index(spec.child))
        if pa.types.is_list(col.type) and pa.types.is_struct(col.type.value_type):
            parents = pc.list_parent_indices(col, memory_pool=_POOL)
            items = pc.list_flatten(col, memory_pool=_POOL)
            child = pa.Table.from_struct_array(items)
            keys = pc.take(records.column(spec.parent_key), parents, memory_pool=_POOL)
            child = child.add_column(0, spec.parent_key, keys)
            parents = parents.to_numpy()
    return records, child, parents


def _order(frame: pd.DataFrame, columns: Sequence[str], dtypes: Mapping[str, Any]) -> pd.DataFrame:
    """Model columns first (missing ones as typed nulls), then the server's extra columns."""
    missing = {
        c: null_series(dtypes[c], len(frame), frame.index) for c in columns if c not in frame
    }
    if missing:
        frame = frame.assign(**missing)
    extras = [c for c in frame.columns if c not in set(columns)]
    order = list(columns) + extras
    return frame if list(frame.columns) == order else frame[order]


@dataclass
class _Unit:
    """Shaped rows of some consecutive bodies."""

    frame: pd.DataFrame
    child: pd.DataFrame | None
    parents: np.ndarray | None  # row (within frame) of each child row


def _arrow_unit(held: list[pa.Table], spec: _Spec) -> _Unit:
    """The table ``held`` holds (taken out: nothing else keeps it) -> a unit, converted to
    pandas a column at a time (:data:`_TO_PANDAS`), the listings' before the media's."""
    records, child, parents = _split_records(held.pop(), spec)
    frame = _cast_columns(records, spec.model).to_pandas(**_TO_PANDAS)
    frame = _order(frame, spec.columns, target_dtypes(spec.model))
    child_frame = None
    if child is not None and spec.child_model is not None:
        child_frame = _cast_columns(child, spec.child_model).to_pandas(**_TO_PANDAS)
        child_frame = _order(child_frame, _child_columns(spec), target_dtypes(spec.child_model))
    return _Unit(frame, child_frame, parents)


def _child_columns(spec: _Spec) -> tuple[str, ...]:
    return tuple(target_dtypes(spec.child_model)) if spec.child_model is not None else ()


def _page_schema(spec: _Spec, key: str) -> pa.Schema:
    counts = [pa.field(name, pa.int64()) for name in ("total", "offset", "limit")]
    return pa.schema([*counts, pa.field(key, pa.list_(_record_type(spec)))])


def _chunks(bodies: Sequence[bytes], target: int) -> list[Sequence[bytes]]:
    """Consecutive runs of bodies of about ``target`` bytes each."""
    out: list[Sequence[bytes]] = []
    start = size = 0
    for i, body in enumerate(bodies):
        size += len(body)
        if size >= target:
            out.append(bodies[start : i + 1])
            start, size = i + 1, 0
    if start < len(bodies):
        out.append(bodies[start:])
    return out


_PageInfo = tuple[Any, Any, Any, int]  # total, offset, limit, records of one body


def _parse_chunk(
    bodies: Sequence[bytes],
    schema: pa.Schema,
    spec: _Spec,
    key: str | None,
    info: list[_PageInfo],
) -> list[pa.Table | _Unit]:
    """Records tables (Arrow) or tolerant units, in body order; a failing run is split up.

    ``info`` receives each body's total, offset, limit and record count, in order.
    """
    try:
        table = _read_ndjson(bodies, schema)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        if len(bodies) == 1:
            return [_tolerant_unit(bodies[0], spec, key, info)]
        step = max(1, -(-len(bodies) // _SPLIT))
        return [
            part
            for k in range(0, len(bodies), step)
            for part in _parse_chunk(bodies[k : k + step], schema, spec, key, info)
        ]
    if not key:
        info.extend((None, None, None, 1) for _ in range(table.num_rows))
        return [table]
    col = table.column(key)
    if not (pa.types.is_list(col.type) and pa.types.is_struct(col.type.value_type)):
        return [_tolerant_unit(b, spec, key, info) for b in bodies]
    counts = pc.fill_null(pc.list_value_length(col), 0).to_pylist()
    info.extend(
        zip(
            table.column("total").to_pylist(),
            table.column("offset").to_pylist(),
            table.column("limit").to_pylist(),
            counts,
            strict=True,
        )
    )
    return [pa.Table.from_struct_array(pc.list_flatten(col, memory_pool=_POOL))]


def _parse_bodies(
    bodies: Sequence[bytes], spec: _Spec, key: str | None
) -> tuple[list[_Unit], list[_PageInfo]]:
    """Parse bodies with Arrow in chunks (a body that fails goes the tolerant way alone)."""
    info: list[_PageInfo] = []
    return _assemble(_parse_parts(bodies, spec, key, info), spec), info


def _parse_parts(
    bodies: Sequence[bytes], spec: _Spec, key: str | None, info: list[_PageInfo]
) -> list[pa.Table | _Unit]:
    """Arrow records tables (chunks of about ``PARSE_CHUNK_BYTES``) or tolerant units, in body
    order, not yet converted to pandas; ``info`` receives each body's envelope."""
    if not bodies:
        return []
    schema = _page_schema(spec, key) if key else pa.schema(list(_record_type(spec)))
    parts: list[pa.Table | _Unit] = []
    for chunk in _chunks(bodies, PARSE_CHUNK_BYTES.get()):  # REALTYFRAMES_PARSE_CHUNK_BYTES
        parts.extend(_parse_chunk(chunk, schema, spec, key, info))
    return parts


def _assemble(parts: list[pa.Table | _Unit], spec: _Spec) -> list[_Unit]:
    """Parts (:func:`_parse_parts`, of one or several calls) -> units: each run of Arrow tables
    converted to pandas once (:func:`_arrow_units`). ``parts`` is emptied."""
    units: list[_Unit] = []
    run: list[pa.Table] = []
    parts.reverse()
    while parts:
        part = parts.pop()  # not held by the list while the run is converted
        if isinstance(part, pa.Table):
            run.append(part)
            continue
        if run:
            units.extend(_arrow_units(run, spec))
            run = []
        units.append(part)
    if run:
        units.extend(_arrow_units(run, spec))
    return units


def _arrow_units(tables: list[pa.Table], spec: _Spec) -> list[_Unit]:
    """One unit for tables whose added fields agree, else one per table (``tables`` is emptied)."""
    if len(tables) > 1:
        try:
            merged = pa.concat_tables(tables, promote_options="permissive", memory_pool=_POOL)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            return [_arrow_unit([t], spec) for t in tables]
        tables[:] = [merged]  # the merged table holds the same buffers
        del merged
    return [_arrow_unit(tables, spec)]


# --- tolerant path (bodies Arrow cannot parse against the schema; small inputs) -----------------


def _decode(body: bytes | str, what: str) -> Any:
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadResponseError(f"{what} is not valid JSON: {exc}") from None


def _tolerant_unit(body: bytes, spec: _Spec, key: str | None, info: list[_PageInfo]) -> _Unit:
    obj = _decode(body, "a response body")
    page: dict[str, Any] = {}
    if key is None:
        records: Any = [obj]
    elif isinstance(obj, list):
        records = obj
    elif isinstance(obj, dict):
        page = obj
        records = obj.get(key)
        if records is None:
            records = []
    else:
        raise BadResponseError(f"a response body is a JSON {type(obj).__name__}, not an object")
    n = len(records) if isinstance(records, list) else 1
    info.append((page.get("total"), page.get("offset"), page.get("limit"), n))
    if not isinstance(records, list):
        warnings.warn(
            f"{spec.model.__name__}: member {key!r} is a {type(records).__name__}, not a list; "
            "the body is read as one record",
            SchemaDriftWarning,
            stacklevel=4,
        )
        records = [records]
    return _dict_unit(records, spec)


def _dict_unit(records: Sequence[Any], spec: _Spec) -> _Unit:
    rows: list[dict[str, Any]] = []
    child_rows: list[dict[str, Any]] = []
    parents: list[int] = []
    not_lists = 0
    for i, rec in enumerate(records):
        if not isinstance(rec, dict):  # kept as a row without id: validation quarantines it
            rec = {"_record": rec}
        row: dict[str, Any] = {}
        for k, v in rec.items():
            if k in spec.structs:
                if isinstance(v, dict):
                    for sub, sv in v.items():
                        row[spec.struct_column(k, sub)] = sv
                elif v is not None:  # a type change: every member column shows the raw value
                    for col in spec.structs[k].values():
                        row[col] = v
            elif k == spec.child:
                if isinstance(v, list):
                    for item in v:
                        child_row = dict(item) if isinstance(item, dict) else {"MediaURL": item}
                        child_row[spec.parent_key] = rec.get(spec.parent_key)
                        child_rows.append(child_row)
                        parents.append(i)
                elif v is not None:
                    not_lists += 1
                    row[k] = v
            else:
                row[k] = v
        rows.append(row)
    if not_lists:
        warnings.warn(
            f"{spec.model.__name__}: {spec.child!r} is not a list on {not_lists} records; "
            f"it is kept as a column {spec.child!r} and no {spec.child} rows are made for them",
            SchemaDriftWarning,
            stacklevel=5,
        )
    frame = _typed_frame(rows, spec.model, spec.columns)
    child = None
    if spec.child and spec.child_model is not None:
        child = _typed_frame(child_rows, spec.child_model, _child_columns(spec))
    return _Unit(frame, child, np.asarray(parents, dtype=np.int64) if spec.child else None)


def _typed_frame(
    rows: Sequence[Mapping[str, Any]], model: Model, columns: Sequence[str]
) -> pd.DataFrame:
    """Dicts -> frame; each model column typed when all its values fit, else left ``object``."""
    dtypes = target_dtypes(model)
    raw = pd.DataFrame.from_records(list(rows)) if rows else pd.DataFrame(index=pd.RangeIndex(0))
    raw = raw.reset_index(drop=True)
    typed: dict[str, Any] = {}
    for name in raw.columns:
        if name not in dtypes:
            continue
        series = raw[name]
        values = series.astype(object) if series.dtype != object else series
        converted, bad = convert(values, dtypes[name])
        typed[name] = series.astype(object) if bad.any() else converted
    if typed:
        raw = raw.assign(**typed)
    extras = {}
    for name in raw.columns:
        if name not in dtypes and _is_json_list(raw[name]):
            extras[name] = raw[name].map(
                lambda v: np.asarray(v, dtype=object) if isinstance(v, list) else v
            )
    if extras:
        raw = raw.assign(**extras)
    return _order(raw, columns, dtypes)


def _is_json_list(series: pd.Series) -> bool:
    return series.dtype == object and any(isinstance(v, list) for v in series.to_numpy()[:1000])
