"""Website analytics (``GET /v1/analytics``) as :class:`~realtyframes.Analytics`.

>>> analytics, info = load_analytics(ctx, "7d", {"Device": "mobile"})  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from realtyframes.api._params import refuse_none, validate_analytics
from realtyframes.errors import QueryError
from realtyframes.loaders._base import LoadContext, Loaded, LoadInfo, LoadSpec, check_flag, run_load
from realtyframes.schemas import ANALYTICS_MODELS, Analytics, OnInvalid, analytics_from_json

__all__ = ["load_analytics"]

ANALYTICS_PATH = "/v1/analytics"


def load_analytics(
    ctx: LoadContext,
    period: str,
    filters: Mapping[str, Any],
    *,
    refresh: bool = False,
    on_invalid: OnInvalid = "quarantine",
) -> tuple[Analytics, LoadInfo]:
    """Analytics of ``period`` with ``filters`` (spec names: Page, Referrer, Device ...); every
    member frame validated against its model; cached as the overview plus one companion file
    per member.

    >>> analytics, info = load_analytics(ctx, "30d", {})  # doctest: +SKIP
    """
    if "Period" in filters:
        raise QueryError("Period", "give the period as period=...", "period='7d', '30d' ...")
    refuse_none({"period": period, **filters})
    params = validate_analytics({"Period": period, **filters})
    refresh = check_flag("refresh", refresh)
    spec = LoadSpec(
        "analytics", "analytics", params, ANALYTICS_MODELS["overview"], on_invalid, refresh
    )

    def fetch() -> Loaded:
        result = analytics_from_json(ctx.api.get_bytes(ANALYTICS_PATH, params))
        frames = result.frames()
        overview = frames.pop("overview")
        members = {name: (frame, ANALYTICS_MODELS[name]) for name, frame in frames.items()}
        return Loaded(overview, 1, members=members, meta={"period": result.period})

    loaded = run_load(ctx, spec, fetch)
    period_text = str(loaded.meta.get("period") or params["Period"])
    return Analytics(period=period_text, overview=loaded.frame, **loaded.members), loaded.info
