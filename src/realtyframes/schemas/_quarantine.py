"""Validation with a quarantine: split a frame into valid rows and invalid rows with their reasons.

``validate(frame, model)`` first conforms the frame to the model's dtypes (missing columns become
typed null columns; lossless conversions such as ``int64 -> Int64`` are done; a value of the wrong
type -- ``ListPrice`` arriving as ``"450000"`` -- is never coerced: its column is named in a
:class:`SchemaDriftWarning` and its row quarantined), then runs the pandera model lazily and moves
every row that failed a check to the quarantine frame, whose ``_quarantine_reason`` column names
the failing check(s). ``len(valid) + len(quarantined) == len(frame)`` always.

>>> valid, quarantined = validate(listings, Listing)  # doctest: +SKIP
>>> quarantined[["ListingId", "_quarantine_reason"]]  # doctest: +SKIP
"""

from __future__ import annotations

import functools
import warnings
from datetime import date, datetime
from typing import Any, Literal, get_args

import numpy as np
import pandas as pd
import pandera.pandas as pa
from pandera.errors import SchemaErrors

from realtyframes.errors import DataQualityWarning, SchemaDriftWarning, SchemaValidationError

__all__ = [
    "ON_INVALID",
    "QUARANTINE_REASON",
    "DataQualityWarning",
    "OnInvalid",
    "SchemaDriftWarning",
    "SchemaValidationError",
    "conform",
    "empty_frame",
    "target_dtypes",
    "validate",
]

#: Name of the reason column of a quarantine frame.
QUARANTINE_REASON = "_quarantine_reason"
OnInvalid = Literal["quarantine", "raise", "keep"]
#: ``on_invalid`` values.
ON_INVALID: tuple[str, ...] = get_args(OnInvalid)
_FAILURE_COLUMNS = ["column", "check", "failure_case", "index"]
_STR = pd.StringDtype(na_value=np.nan)


# --- target dtypes --------------------------------------------------------------------------------


@functools.cache
def _schema(model: type[pa.DataFrameModel]) -> pa.DataFrameSchema:
    return model.to_schema()


@functools.cache
def target_dtypes(model: type[pa.DataFrameModel]) -> dict[str, Any]:
    """The pandas dtype of every column of ``model`` (categoricals with their full category list).

    >>> target_dtypes(Listing)["StandardStatus"].categories.tolist()  # doctest: +SKIP
    ['Active', 'Active Under Contract', 'Pending', 'Closed']
    """
    out: dict[str, Any] = {}
    for name, col in _schema(model).columns.items():
        dtype = col.dtype.type
        if isinstance(dtype, pd.CategoricalDtype):
            cats = (col.metadata or {}).get("categories", ())
            dtype = pd.CategoricalDtype(pd.Index(list(cats), dtype=_STR), ordered=False)
        out[name] = dtype
    return out


def _required(model: type[pa.DataFrameModel]) -> frozenset[str]:
    return frozenset(n for n, c in _schema(model).columns.items() if c.required)


def _open_categories(model: type[pa.DataFrameModel]) -> frozenset[str]:
    cols = _schema(model).columns.items()
    return frozenset(n for n, c in cols if (c.metadata or {}).get("open"))


def empty_frame(model: type[pa.DataFrameModel], *, optional: bool = False) -> pd.DataFrame:
    """An empty frame with the model's columns and dtypes (``optional=True``: detail fields too).

    >>> empty_frame(Contact).dtypes["createdAt"]  # doctest: +SKIP
    datetime64[us, UTC]
    """
    required = _required(model)
    return pd.DataFrame(
        {
            name: null_series(dtype, 0)
            for name, dtype in target_dtypes(model).items()
            if optional or name in required
        }
    )


def null_series(dtype: Any, length: int, index: pd.Index | None = None) -> pd.Series:
    """An all-null Series of ``dtype``."""
    if isinstance(dtype, pd.CategoricalDtype):
        values: Any = pd.Categorical.from_codes(np.full(length, -1, dtype=np.int8), dtype=dtype)
    elif dtype == np.dtype(object):
        values = np.full(length, None, dtype=object)
    else:
        values = pd.array([None] * length, dtype=dtype) if length else pd.array([], dtype=dtype)
    return pd.Series(values, index=index if index is not None else pd.RangeIndex(length))


# --- conversion of one column to its target dtype ----------------------------------------------


def _kind(dtype: Any) -> str:
    if isinstance(dtype, pd.CategoricalDtype):
        return "category"
    if isinstance(dtype, pd.DatetimeTZDtype):
        return "timestamp"
    if isinstance(dtype, pd.StringDtype):
        return "str"
    if isinstance(dtype, pd.BooleanDtype):
        return "bool"
    if isinstance(dtype, pd.Int64Dtype):
        return "int"
    if dtype == np.dtype("float64"):
        return "float"
    return "object"


_KIND_TEXT = {
    "float": "a number",
    "int": "an integer",
    "bool": "a boolean",
    "str": "a string",
    "category": "a string",
    "timestamp": "an ISO 8601 timestamp",
}


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float | np.integer | np.floating) and not isinstance(
        v, bool | np.bool_
    )


def _is_null(v: Any) -> bool:
    return v is None or v is pd.NA or v is pd.NaT or (isinstance(v, float) and v != v)


def _object_values_ok(values: np.ndarray, kind: str) -> np.ndarray:
    """Per-value type test for an object column (the tolerant path only)."""
    ok = np.ones(len(values), dtype=bool)
    for i, v in enumerate(values):
        if _is_null(v):
            continue
        if kind == "float":
            ok[i] = _is_number(v) and np.isfinite(float(v))
        elif kind == "int":
            ok[i] = _is_number(v) and np.isfinite(float(v)) and float(v) == int(v)
        elif kind == "bool":
            ok[i] = isinstance(v, bool | np.bool_)
        elif kind in ("str", "category"):
            ok[i] = isinstance(v, str)
        elif kind == "timestamp":
            ok[i] = isinstance(v, str | datetime | date | np.datetime64)
    return ok


def _categorical(values: pd.Series, dtype: pd.CategoricalDtype) -> pd.Series:
    """Strings -> categorical with the fixed categories first, unknown values kept after them."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        observed = values.cat.categories
        strings = values.astype(_STR) if not isinstance(observed.dtype, pd.StringDtype) else None
        if strings is None:
            extras = [c for c in observed if c not in set(dtype.categories)]
            cats = dtype.categories.append(pd.Index(extras, dtype=_STR)) if extras else None
            target = pd.CategoricalDtype(cats, ordered=False) if cats is not None else dtype
            return values.cat.set_categories(target.categories, ordered=False)
        values = strings
    uniques = pd.unique(values.dropna())
    fixed = set(dtype.categories)
    extras = [u for u in uniques if u not in fixed]
    if extras:
        cats = dtype.categories.append(pd.Index(sorted(map(str, extras)), dtype=_STR))
        dtype = pd.CategoricalDtype(cats, ordered=False)
    return pd.Series(pd.Categorical(values.astype(object), dtype=dtype), index=values.index)


def convert(series: pd.Series, dtype: Any) -> tuple[pd.Series, np.ndarray]:
    """Convert ``series`` to ``dtype`` losslessly; values of another type become null.

    Returns the converted series and a boolean mask of the values that had the wrong type (all
    False when the conversion lost nothing). Categoricals keep values outside the fixed categories
    as extra categories (the enumeration check reports them).
    """
    kind = _kind(dtype)
    src = series.dtype
    n = len(series)
    bad = np.zeros(n, dtype=bool)
    if kind == "object":
        return series, bad
    if isinstance(dtype, pd.CategoricalDtype):
        if isinstance(src, pd.CategoricalDtype) and src.categories.equals(dtype.categories):
            return series, bad
    elif src == dtype:
        return series, bad
    index = series.index
    if src == np.dtype(object):
        ok = _object_values_ok(series.to_numpy(), kind)
        bad = ~ok
        if bad.any():
            series = series.where(ok, None)
        if kind == "timestamp":
            out = _to_utc(series.astype(object))
            unparsed = series.notna().to_numpy() & out.isna().to_numpy()
            if unparsed.any():
                bad = bad | unparsed
        elif kind in ("str", "category"):
            out = series.astype(_STR)
            if kind == "category":
                out = _categorical(out, dtype)
        elif kind == "bool":
            out = series.astype("boolean")
        elif kind == "int":
            out = pd.Series(pd.array(series.astype("Float64"), dtype="Int64"), index=index)
        else:
            out = pd.to_numeric(series, errors="raise").astype("float64")
        return out, bad
    numeric = pd.api.types.is_numeric_dtype(src) and not pd.api.types.is_bool_dtype(src)
    is_text = isinstance(src, pd.StringDtype) or (
        isinstance(src, pd.CategoricalDtype) and src.categories.dtype != np.dtype("float64")
    )
    if kind == "float" and numeric:
        return pd.Series(series.to_numpy(dtype="float64", na_value=np.nan), index=index), bad
    if kind == "int" and numeric:
        floats = series.to_numpy(dtype="float64", na_value=np.nan)
        finite = np.isfinite(floats)
        integral = np.zeros(n, dtype=bool)
        integral[finite] = floats[finite] == np.round(floats[finite])
        bad = ~np.isnan(floats) & ~integral
        floats = np.where(bad, np.nan, floats)
        return pd.Series(pd.array(floats, dtype="Float64").astype("Int64"), index=index), bad
    if kind == "bool" and pd.api.types.is_bool_dtype(src):
        return series.astype("boolean"), bad
    if kind == "str" and is_text:
        return series.astype(_STR), bad
    if kind == "category" and is_text:
        return _categorical(series, dtype), bad
    if (
        kind == "timestamp"
        and isinstance(src, pd.DatetimeTZDtype | np.dtype)
        and (isinstance(src, pd.DatetimeTZDtype) or src.kind == "M")
    ):
        return _to_utc(series), bad
    if kind == "timestamp" and is_text:
        out = _to_utc(series.astype(object))
        bad = series.notna().to_numpy() & out.isna().to_numpy()
        return out, bad
    # another kind altogether (numbers where text is expected, text where numbers are ...)
    bad = series.notna().to_numpy()
    return null_series(dtype, n, index), bad


def _to_utc(series: pd.Series) -> pd.Series:
    """Timestamps or ISO 8601 strings -> datetime64[us, UTC]; naive values are taken as UTC."""
    if isinstance(series.dtype, pd.DatetimeTZDtype):
        out = series.dt.tz_convert("UTC")
    elif series.dtype.kind == "M":
        out = series.dt.tz_localize("UTC")
    else:
        out = pd.to_datetime(series, utc=True, errors="coerce", format="ISO8601")
    return out.dt.as_unit("us")


def conform(
    frame: pd.DataFrame, model: type[pa.DataFrameModel], *, _stacklevel: int = 2
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Bring ``frame`` to the model's dtypes; report values of the wrong type, never coerce them.

    Missing required columns are added as typed null columns; extra columns are kept unchanged.
    Returns the conformed frame (same index) and the type failures (columns ``column``, ``check``,
    ``failure_case``, ``index``). A :class:`SchemaDriftWarning` names each column that changed type.
    """
    out = frame
    failures: list[pd.DataFrame] = []
    required = _required(model)
    changed: dict[str, Any] = {}
    for name, dtype in target_dtypes(model).items():
        if name not in frame.columns:
            if name in required:
                changed[name] = null_series(dtype, len(frame), frame.index)
            continue
        series = frame[name]
        if isinstance(series, pd.DataFrame):  # duplicate column label: not ours to guess
            raise SchemaValidationError(
                f"{model.__name__}: column {name!r} appears more than once",
                model=model.__name__,
                failure_cases=pd.DataFrame(columns=_FAILURE_COLUMNS),
            )
        converted, bad = convert(series, dtype)
        if converted is not series:
            changed[name] = converted
        if bad.any():
            raw = series[bad]
            kinds = _KIND_TEXT.get(_kind(dtype), str(dtype))
            failures.append(
                pd.DataFrame(
                    {
                        "column": name,
                        "check": f"type_changed(expected {kinds})",
                        "failure_case": [f"{v!r} ({type(v).__name__})" for v in raw.to_numpy()],
                        "index": raw.index,
                    }
                )
            )
            sample = ", ".join(f"{v!r}" for v in raw.to_numpy()[:3])
            warnings.warn(
                f"{model.__name__}: column {name!r} changed type: {int(bad.sum())} of {len(series)} "
                f"values are not {kinds} (e.g. {sample}); those rows fail validation",
                SchemaDriftWarning,
                stacklevel=_stacklevel,
            )
    if changed:
        out = frame.assign(**changed)
        order = [c for c in target_dtypes(model) if c in out.columns]
        out = out[order + [c for c in out.columns if c not in set(order)]]
    fails = (
        pd.concat(failures, ignore_index=True)
        if failures
        else pd.DataFrame({c: pd.Series(dtype=object) for c in _FAILURE_COLUMNS})
    )
    return out, fails


# --- validation -----------------------------------------------------------------------------------


@functools.cache
def _schema_of_values(model: type[pa.DataFrameModel]) -> pa.DataFrameSchema:
    """``model``'s schema without its columns' dtype checks (the value checks only)."""
    schema = _schema(model)
    return schema.update_columns({name: {"dtype": None} for name in schema.columns})


def _conformed(frame: pd.DataFrame, model: type[pa.DataFrameModel]) -> bool:
    """Whether every column of ``model`` in ``frame`` has its target dtype exactly."""
    dtypes = target_dtypes(model)
    return all(frame[name].dtype == dtype for name, dtype in dtypes.items() if name in frame)


def _pandera_failures(frame: pd.DataFrame, model: type[pa.DataFrameModel]) -> pd.DataFrame:
    # a frame :func:`conform` brought to the model's dtypes passes pandera's dtype checks: only
    # its values are checked (2/3 of pandera's time on a search of 20,912 listings, #33)
    schema = _schema_of_values(model) if _conformed(frame, model) else _schema(model)
    try:
        schema.validate(frame, lazy=True, inplace=True)
    except SchemaErrors as exc:
        fc = exc.failure_cases
        column_level = (fc["schema_context"] == "Column").to_numpy()
        out = fc[_FAILURE_COLUMNS].copy()
        # dataframe-wide checks list every column of a failing row: keep one line per row
        out.loc[~column_level, "column"] = None
        out.loc[~column_level, "failure_case"] = None
        return out.drop_duplicates(["column", "check", "index"]).reset_index(drop=True)
    return pd.DataFrame({c: pd.Series(dtype=object) for c in _FAILURE_COLUMNS})


def _reason_text(failures: pd.DataFrame) -> pd.Series:
    column = failures["column"]
    has_col = column.notna().to_numpy()
    case = failures["failure_case"].map(lambda v: "" if _is_null(v) else f"={v!r}")
    text = np.where(
        has_col,
        column.astype(object).astype(str) + case.astype(str) + ": " + failures["check"].astype(str),
        failures["check"].astype(str),
    )
    return pd.Series(text, index=failures.index)


def _summary(failures: pd.DataFrame, limit: int = 5) -> str:
    label = np.where(
        failures["column"].notna(),
        failures["column"].astype(object).astype(str) + ": " + failures["check"].astype(str),
        failures["check"].astype(str),
    )
    counts = pd.Series(label).value_counts()
    parts = [f"{name} ({count})" for name, count in counts.head(limit).items()]
    if len(counts) > limit:
        parts.append(f"... {len(counts) - limit} more checks")
    return "; ".join(parts)


def validate(
    frame: pd.DataFrame,
    model: type[pa.DataFrameModel],
    *,
    on_invalid: OnInvalid = "quarantine",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Validate ``frame`` against ``model``; return ``(valid, quarantined)``.

    ``on_invalid``: ``"quarantine"`` (default) moves invalid rows to ``quarantined`` (original
    columns plus ``_quarantine_reason``) and warns with a :class:`DataQualityWarning` giving the
    count; ``"raise"`` raises :class:`SchemaValidationError` carrying the failure cases; ``"keep"``
    keeps every row in ``valid`` (values of a wrong type become null) and only warns.
    ``len(valid) + len(quarantined) == len(frame)`` in every mode. Both frames keep ``frame``'s
    index labels.

    >>> valid, quarantined = validate(listings, Listing)  # doctest: +SKIP
    >>> quarantined["_quarantine_reason"].iloc[0]  # doctest: +SKIP
    'ListPrice=-5.0: greater_than_or_equal_to(0)'
    """
    if on_invalid not in ON_INVALID:
        raise ValueError(
            f"on_invalid: unknown value {on_invalid!r}; allowed: {', '.join(ON_INVALID)}"
        )
    name = model.__name__
    labels = frame.index
    work = frame.reset_index(drop=True)
    work, type_failures = conform(work, model, _stacklevel=3)
    failures = pd.concat(
        [f for f in (type_failures, _pandera_failures(work, model)) if len(f)] or [type_failures],
        ignore_index=True,
    )
    n = len(work)
    positions = pd.to_numeric(failures["index"], errors="coerce")
    unattributed = positions.isna().to_numpy()
    reasons = pd.Series("", index=pd.RangeIndex(n), dtype=object)
    bad = np.zeros(n, dtype=bool)
    if len(failures):
        text = _reason_text(failures)
        if unattributed.any():
            whole = "; ".join(dict.fromkeys(text[unattributed]))
            bad[:] = True
            reasons[:] = whole
        rows = failures.loc[~unattributed].assign(_pos=positions[~unattributed].astype(np.int64))
        rows = rows.assign(_text=text[~unattributed]).drop_duplicates(["_pos", "_text"])
        grouped = rows.groupby("_pos", sort=False)["_text"].agg("; ".join)
        idx = grouped.index.to_numpy(dtype=np.int64)
        bad[idx] = True
        reasons.iloc[idx] = [
            (prev + "; " + new) if prev else new
            for prev, new in zip(reasons.iloc[idx], grouped.to_numpy(), strict=True)
        ]
    out_failures = failures.assign(
        index=[labels[int(p)] if p == p else None for p in positions]
    ).reset_index(drop=True)
    n_bad = int(bad.sum())
    if n_bad and on_invalid == "raise":
        raise SchemaValidationError(
            f"{name}: {n_bad} of {n} rows invalid: {_summary(failures)}",
            model=name,
            failure_cases=out_failures,
        )
    if n_bad:
        action = "kept (on_invalid='keep')" if on_invalid == "keep" else "quarantined"
        warnings.warn(
            f"{name}: {n_bad} of {n} rows {action}: {_summary(failures)}",
            DataQualityWarning,
            stacklevel=2,
        )
    work = work.set_axis(labels, axis=0)
    if not n_bad:
        return _close_categories(work, model), _empty_quarantine(work)
    if on_invalid == "keep":  # unknown enumeration values stay visible as extra categories
        return work, _empty_quarantine(work)
    valid = _close_categories(work.loc[~bad], model)
    quarantined = work.loc[bad].assign(**{QUARANTINE_REASON: reasons.to_numpy()[bad]})
    quarantined[QUARANTINE_REASON] = quarantined[QUARANTINE_REASON].astype(_STR)
    return valid, quarantined


def _empty_quarantine(work: pd.DataFrame) -> pd.DataFrame:
    empty = work.iloc[:0].copy()
    empty[QUARANTINE_REASON] = pd.Series(dtype=_STR)
    return empty


def _close_categories(frame: pd.DataFrame, model: type[pa.DataFrameModel]) -> pd.DataFrame:
    """Give closed enumerations exactly their fixed categories (unknown values were quarantined)."""
    open_cols = _open_categories(model)
    fixes: dict[str, pd.Series] = {}
    for name, dtype in target_dtypes(model).items():
        if not isinstance(dtype, pd.CategoricalDtype) or name in open_cols:
            continue
        if name in frame.columns and not frame[name].cat.categories.equals(dtype.categories):
            fixes[name] = frame[name].cat.set_categories(dtype.categories)
    return frame.assign(**fixes) if fixes else frame
