"""CRM contact and contact-activity models.

Contacts follow the spec's legacy Contact table. The two objects are flattened: ``links`` to
``links_facebook`` ... ``links_service`` and ``registration`` to ``registration_date`` (UTC
midnight). ``phones`` and ``spokenLanguages`` stay lists: object columns holding one array per
contact (Parquet ``list<string>``; ``frame.explode("spokenLanguages")`` gives one row per
language). Activity is long: one row per event with the owning ``contactId``; members a record type
adds (``path``, ``listPrice``, ``durationSeconds`` ...) are kept as columns.

>>> Contact.to_schema().columns["links_facebook"].dtype
DataType(string[pyarrow])
"""

from __future__ import annotations

from collections.abc import Iterable

import pandera.pandas as pa
from pandera.typing import Series

from realtyframes.schemas._listing import Stamp, Str, Text, UtcStamp

__all__ = ["LINK_MEMBERS", "PERSONAL_COLUMNS", "Contact", "ContactActivity", "holds_personal_data"]

#: Members of a contact's ``links`` object (spec order; ``service`` = the platform's own page).
LINK_MEMBERS: tuple[str, ...] = (
    "facebook",
    "twitter",
    "instagram",
    "linkedin",
    "youtube",
    "website",
    "whatsapp",
    "service",
)

#: Columns that identify or describe a person (a contact's details, or an event's ``contactId``):
#: a file holding any of them is written readable by its owner only (``0600``), like the cache.
#: ``name`` alone is not among them (analytics breakdowns have a ``name`` too); a contact frame
#: always has its ``email`` and ``phones`` beside it.
PERSONAL_COLUMNS: frozenset[str] = frozenset(
    {"email", "phones", "image", "address", "streetAddress", "notes", "contactId"}
    | {f"links_{member}" for member in LINK_MEMBERS}
)


def holds_personal_data(columns: Iterable[object]) -> bool:
    """Whether a frame with these columns (or an object with these keys) holds personal data.

    >>> holds_personal_data(["id", "name", "email"]), holds_personal_data(["ListingId", "City"])
    (True, False)
    """
    return any(str(column) in PERSONAL_COLUMNS for column in columns)


class Contact(pa.DataFrameModel):
    """One CRM contact per row.

    Checks: ``id`` unique and non-null; ``email`` looks like an address.

    >>> valid, quarantined = validate(contacts, Contact)  # doctest: +SKIP
    """

    id: Series[Str] = pa.Field(nullable=False, unique=True, str_length={"min_value": 1})
    name: Series[Str] = Text()
    email: Series[Str] = Text(str_matches=r"^[^@\s]+@[^@\s]+$")
    phones: Series[object] = Text()
    createdAt: Series[UtcStamp] = Stamp()
    stage: Series[Str] = Text()
    source: Series[Str] = Text()
    image: Series[Str] = Text()
    spokenLanguages: Series[object] = Text()
    address: Series[Str] = Text()
    streetAddress: Series[Str] = Text()
    notes: Series[Str] = Text()
    links_facebook: Series[Str] = Text()
    links_twitter: Series[Str] = Text()
    links_instagram: Series[Str] = Text()
    links_linkedin: Series[Str] = Text()
    links_youtube: Series[Str] = Text()
    links_website: Series[Str] = Text()
    links_whatsapp: Series[Str] = Text()
    links_service: Series[Str] = Text()
    registration_date: Series[UtcStamp] = Stamp()

    class Config:
        strict = False
        coerce = False


class ContactActivity(pa.DataFrameModel):
    """One activity event per row (page view, listing view, call, showing, offer, note ...).

    >>> activity.groupby("type").size()  # doctest: +SKIP
    """

    contactId: Series[Str] = pa.Field(nullable=False)
    id: Series[Str] = Text()
    type: Series[Str] = Text()
    timestamp: Series[UtcStamp] = Stamp()
    description: Series[Str] = Text()

    class Config:
        strict = False
        coerce = False
