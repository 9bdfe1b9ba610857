"""CRM: contacts (paged), one contact, a contact's activity, and the legacy contacts list.

>>> result = load_contacts(ctx)  # doctest: +SKIP
"""

from __future__ import annotations

import logging

import pandas as pd

from realtyframes.api._params import prepare
from realtyframes.errors import NotFoundError
from realtyframes.loaders._base import LoadContext, Loaded, LoadSpec, Result, check_flag, run_load
from realtyframes.loaders._paging import fetch_pages
from realtyframes.schemas import (
    Contact,
    ContactActivity,
    OnInvalid,
    activity_from_json,
    contacts_from_pages,
)

logger = logging.getLogger("realtyframes.loaders")

__all__ = ["load_activity", "load_contact", "load_contacts", "load_legacy_contacts"]

CONTACTS_PATH = "/v1/contacts"


def _dedupe(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per contact id (a contact read twice while paging is kept once)."""
    again = frame["id"].duplicated(keep="last") & frame["id"].notna()
    return frame.loc[~again].reset_index(drop=True) if again.any() else frame


def load_contacts(
    ctx: LoadContext, *, refresh: bool = False, on_invalid: OnInvalid = "quarantine"
) -> Result:
    """Every CRM contact of the account (``GET /v1/contacts``, paged)."""
    refresh = check_flag("refresh", refresh)
    spec = LoadSpec("contacts", "contacts", {}, Contact, on_invalid, refresh)

    def fetch() -> Loaded:
        paged = fetch_pages(
            ctx.api, CONTACTS_PATH, {}, item_key="contacts", progress=ctx.progress, desc="contacts"
        )
        frame = _dedupe(contacts_from_pages(paged.pages))
        return Loaded(
            frame, paged.requests, total=paged.total, expected=paged.total, warnings=paged.warnings
        )

    return run_load(ctx, spec, fetch)


def load_contact(
    ctx: LoadContext,
    contact_id: str,
    *,
    refresh: bool = False,
    on_invalid: OnInvalid = "quarantine",
) -> Result:
    """One contact (``GET /v1/contacts/{contactId}``): one row."""
    prepared = prepare("contact", {"contactId": contact_id})
    refresh = check_flag("refresh", refresh)
    spec = LoadSpec("contact", "contact", {"contactId": contact_id}, Contact, on_invalid, refresh)

    def fetch() -> Loaded:
        body = ctx.api.get_bytes(prepared.path)
        return Loaded(contacts_from_pages([b"[" + body + b"]"]), 1, total=1, expected=1)

    return run_load(ctx, spec, fetch)


def load_activity(
    ctx: LoadContext,
    contact_id: str,
    *,
    refresh: bool = False,
    on_invalid: OnInvalid = "quarantine",
) -> Result:
    """A contact's activity (``GET /v1/contacts/{contactId}/activity``): one row per event."""
    prepared = prepare("contact_activity", {"contactId": contact_id})
    refresh = check_flag("refresh", refresh)
    params = {"contactId": contact_id}
    spec = LoadSpec("activity", "contact_activity", params, ContactActivity, on_invalid, refresh)

    def fetch() -> Loaded:
        frame = activity_from_json(ctx.api.get_bytes(prepared.path))
        return Loaded(frame, 1)

    return run_load(ctx, spec, fetch)


def load_legacy_contacts(
    ctx: LoadContext, *, refresh: bool = False, on_invalid: OnInvalid = "quarantine"
) -> Result:
    """The legacy contacts list (``GET /api/getContacts?api_key=...``, deprecated). Its 404
    ("no contacts for the domain or key", spec) is an empty frame with the contact columns."""
    prepared = prepare("legacy_contacts")
    refresh = check_flag("refresh", refresh)
    spec = LoadSpec(
        "legacy_contacts", "legacy_contacts", {}, Contact, on_invalid, refresh, host="legacy"
    )

    def fetch() -> Loaded:
        try:
            body = ctx.api.get_bytes(prepared.path, prepared.params, host="legacy")
        except NotFoundError as exc:
            logger.info("legacy contacts: 404 (%s): no contacts, an empty frame", exc.message)
            return Loaded(contacts_from_pages([]), 1, total=0, expected=0, meta={"empty": True})
        frame = _dedupe(contacts_from_pages([body]))
        return Loaded(frame, 1, total=len(frame))

    return run_load(ctx, spec, fetch)
