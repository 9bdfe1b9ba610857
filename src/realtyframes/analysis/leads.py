"""CRM leads: contacts by stage and by source, the funnel, new leads per week."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from realtyframes.analysis._common import (
    AnalysisInputError,
    as_key,
    check_columns,
    check_frame,
    safe_div,
    to_utc,
)

#: Default funnel order of contact stages. The spec names lead, client and active-client and
#: leaves the full set open; pass ``stages=`` for another CRM's order.
DEFAULT_STAGES: tuple[str, ...] = ("lead", "client", "active-client", "past-client")


@dataclass(frozen=True)
class LeadFunnel:
    """What :func:`lead_funnel` returns.

    - ``stages``: the funnel order used.
    - ``by_stage``: one row per stage (funnel stages in order, then other stages found, then
      missing): ``contacts`` (now at the stage), ``share`` (of all contacts), ``in_funnel``,
      ``reached`` (contacts at this funnel stage or a later one) and ``reached_share`` (reached /
      contacts in the funnel; NA outside the funnel); with activity also ``with_activity``
      (contacts with at least one activity record) and ``activity_share``.
    - ``by_source``: one row per source, most contacts first: ``contacts``, ``share``,
      ``converted`` (contacts past the first funnel stage), ``conversion_rate`` (converted /
      the source's contacts in the funnel).
    - ``weekly``: one row per week (index ``week``: Monday 00:00 UTC), ``new_leads`` (contacts
      created that week, zero-filled), with activity also ``activities``.
    - ``activity_by_type``: with activity, per type: ``activities`` and ``contacts``; else None.
    """

    stages: tuple[str, ...]
    by_stage: pd.DataFrame
    by_source: pd.DataFrame
    weekly: pd.DataFrame
    activity_by_type: pd.DataFrame | None = None


def _week(ts: pd.Series) -> pd.Series:
    day = ts.dt.floor("D")
    return day - pd.to_timedelta(ts.dt.day_of_week, unit="D")


def lead_funnel(
    contacts: pd.DataFrame,
    activity: pd.DataFrame | None = None,
    *,
    stages: Sequence[str] = DEFAULT_STAGES,
) -> LeadFunnel:
    """Contacts by stage and by source, the share reaching each funnel stage, leads per week.

    ``contacts`` needs ``stage``, ``source`` and ``createdAt`` (and ``id`` when ``activity`` is
    given); ``activity`` (records of every contact, e.g. concatenated ``contact_activity`` frames)
    needs ``contactId``, ``type`` and ``timestamp``. A contact "reached" a funnel stage when its
    current stage is that stage or a later one in ``stages`` (default lead, client, active-client,
    past-client); contacts in other stages are counted but stay out of the funnel shares.
    Returns a :class:`LeadFunnel`.

    >>> funnel = rf.lead_funnel(client.contacts())  # doctest: +SKIP
    >>> funnel.by_stage, funnel.weekly.tail()  # doctest: +SKIP
    """
    func = "lead_funnel"
    check_frame(contacts, "contacts", func)
    order = [stages] if isinstance(stages, str) else list(stages)
    if not order or not all(isinstance(s, str) for s in order) or len(set(order)) != len(order):
        raise AnalysisInputError(
            f"{func}(): `stages` must be a non-empty list of distinct stage names, got {stages!r}"
        )
    check_columns(contacts, ["stage", "source", "createdAt"], "contacts", func)
    if activity is not None:
        check_frame(activity, "activity", func)
        check_columns(contacts, ["id"], "contacts", func)
        check_columns(activity, ["contactId", "type", "timestamp"], "activity", func)

    stage = as_key(contacts["stage"]).astype(object).where(contacts["stage"].notna(), np.nan)
    rank = stage.map({s: i for i, s in enumerate(order)})  # NaN outside the funnel
    total = len(contacts)
    in_funnel_total = int(rank.notna().sum())

    by_stage = _by_stage(stage, order, total, in_funnel_total)

    by_source = _by_source(contacts, rank, total)

    created = to_utc(contacts["createdAt"], "createdAt", func)
    series = {"new_leads": _week(created).dropna().value_counts()}
    activity_by_type = None
    if activity is not None:
        when = to_utc(activity["timestamp"], "timestamp", func)
        series["activities"] = _week(when).dropna().value_counts()
        activity_by_type = _activity(contacts, activity, stage, by_stage)

    weekly = _weekly(series)
    return LeadFunnel(
        stages=tuple(order),
        by_stage=by_stage,
        by_source=by_source,
        weekly=weekly,
        activity_by_type=activity_by_type,
    )


def _by_stage(stage: pd.Series, order: list[str], total: int, in_funnel_total: int) -> pd.DataFrame:
    """Contacts per stage (funnel stages first, then the others), their share, and how many
    reached each funnel stage or a later one."""
    counts = stage.value_counts(dropna=False)
    others = sorted(k for k in counts.index if isinstance(k, str) and k not in order)
    missing = [k for k in counts.index if not isinstance(k, str)]
    index = pd.Index([*order, *others, *missing[:1]], dtype=object, name="stage")
    by_stage = pd.DataFrame(index=index)
    by_stage["contacts"] = counts.reindex(index, fill_value=0).astype("int64")
    by_stage["share"] = safe_div(by_stage["contacts"], total)
    by_stage["in_funnel"] = [k in order for k in index]
    funnel_counts = by_stage["contacts"].to_numpy()[: len(order)]
    reached = np.cumsum(funnel_counts[::-1])[::-1]
    by_stage["reached"] = pd.array(
        [*reached.tolist(), *[pd.NA] * (len(index) - len(order))], dtype="Int64"
    )
    by_stage["reached_share"] = np.concatenate(
        [safe_div(reached, in_funnel_total), np.full(len(index) - len(order), np.nan)]
    )

    return by_stage


def _by_source(contacts: pd.DataFrame, rank: pd.Series, total: int) -> pd.DataFrame:
    """Contacts per lead source, their share, and how many converted (past the first stage)."""
    source = as_key(contacts["source"]).astype(object).where(contacts["source"].notna(), np.nan)
    work = pd.DataFrame(
        {
            "source": source.to_numpy(),
            "in_funnel": rank.notna().to_numpy(),
            "converted": (rank >= 1).to_numpy(),
        }
    )
    by_source = work.groupby("source", dropna=False, sort=True).agg(
        contacts=("in_funnel", "size"),
        in_funnel=("in_funnel", "sum"),
        converted=("converted", "sum"),
    )
    by_source["share"] = safe_div(by_source["contacts"], total)
    by_source["conversion_rate"] = safe_div(by_source["converted"], by_source["in_funnel"])
    by_source = by_source.sort_values("contacts", ascending=False, kind="stable")
    by_source = by_source[["contacts", "share", "converted", "conversion_rate"]].astype(
        {"contacts": "int64", "converted": "int64"}
    )
    by_source.index.name = "source"

    return by_source


def _activity(
    contacts: pd.DataFrame, activity: pd.DataFrame, stage: pd.Series, by_stage: pd.DataFrame
) -> pd.DataFrame:
    """Adds the contacts with activity per stage to ``by_stage``; returns activities by type."""
    index = by_stage.index
    ids = pd.Index(activity["contactId"].dropna().astype("str").unique())
    has = ids.get_indexer(contacts["id"].astype("str")) >= 0
    with_act = pd.Series(has).groupby(stage.to_numpy(), dropna=False).sum()
    by_stage["with_activity"] = with_act.reindex(index, fill_value=0).astype("int64")
    by_stage["activity_share"] = safe_div(by_stage["with_activity"], by_stage["contacts"])
    kinds = pd.DataFrame(
        {
            "type": as_key(activity["type"]).to_numpy(),
            "contactId": activity["contactId"].astype("str").to_numpy(),
        }
    )
    activity_by_type = kinds.groupby("type", dropna=False, sort=True).agg(
        activities=("contactId", "size"), contacts=("contactId", "nunique")
    )
    activity_by_type = activity_by_type.sort_values(
        "activities", ascending=False, kind="stable"
    ).astype("int64")

    return activity_by_type


def _weekly(series: dict[str, pd.Series]) -> pd.DataFrame:
    """Weekly counts of each series, every week from the first to the last (0 when none)."""
    weeks = [s.index.min() for s in series.values() if len(s)]
    if weeks:
        start = min(weeks)
        stop = max(s.index.max() for s in series.values() if len(s))
        index_w = pd.date_range(start, stop, freq="7D", name="week").as_unit("us")
    else:
        index_w = pd.DatetimeIndex([], tz="UTC", name="week").as_unit("us")
    weekly = pd.DataFrame(
        {name: s.reindex(index_w, fill_value=0).astype("int64") for name, s in series.items()},
        index=index_w,
    )
    return weekly
