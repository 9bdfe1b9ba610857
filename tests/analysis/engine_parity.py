"""What "an engine gives the pandas numbers" means in the engines' tests: equal frames and attrs,
floats to 1e-9 relative (an engine sums in its own order), and the DataQualityWarnings a call
gave kept as an attr so they are compared too."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from realtyframes import DataQualityWarning


def warned(call: Callable[..., pd.DataFrame], *args: Any, **kwargs: Any) -> pd.DataFrame:
    """``call``'s frame, its DataQualityWarnings (thin groups) as attrs."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DataQualityWarning)
        out = call(*args, **kwargs)
    out.attrs["warned"] = sorted(str(w.message) for w in caught)
    return out


def close(got: object, want: object, atol: float = 0.0) -> bool:
    """Equal, floats to 1e-9 relative (and ``atol`` absolute), through dicts."""
    if isinstance(want, float) and isinstance(got, float):
        return bool(np.isclose(got, want, rtol=1e-9, atol=atol, equal_nan=True))
    if isinstance(want, dict) and isinstance(got, dict):
        return got.keys() == want.keys() and all(close(got[k], want[k], atol) for k in want)
    return got == want


def assert_same(got: pd.DataFrame, want: pd.DataFrame, atol: float = 0.0) -> None:
    """``got`` equals ``want``: the attrs by :func:`close`, the frame to 1e-9 relative (and
    pandas' default 1e-8 absolute)."""
    assert got.attrs.keys() == want.attrs.keys()
    for key, value in want.attrs.items():
        assert close(got.attrs[key], value, atol), key
    pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=1e-9)
