"""The RESO face's records: the sandbox's market at its clock, translated to Data Dictionary names.

:class:`ResoData` reads the :class:`~realtyframes.sandbox._store.ListingStore` (the same listings
the REST API serves at the same clock) and derives, deterministically from the seed, what the REST
API does not have: buyer agents of closed listings, the member and office rosters, open houses.
Media are the REST detail's photos. Records are rebuilt when the store's snapshot changes.

>>> from datetime import UTC, datetime
>>> from realtyframes.sandbox._store import ListingStore
>>> data = ResoData(ListingStore(n=60, as_of=datetime(2026, 5, 1, tzinfo=UTC)))
>>> rec = data.records("Property")[0]
>>> rec["ListingKey"] == rec["ListingId"], rec["OriginatingSystemName"]
(True, 'rfsandbox')
"""

from __future__ import annotations

import bisect
import calendar
import hashlib
import itertools
import random
import threading
import time
from typing import Any

import numpy as np

from realtyframes.sandbox._market_data import STATE
from realtyframes.sandbox._reso_fields import MLG_CAN_VIEW
from realtyframes.sandbox._reso_lookups import (
    LOCAL_FIELD,
    LOOKUP_FIELDS,
    encode,
    lookup_records,
)
from realtyframes.sandbox._spec import STATUSES
from realtyframes.sandbox._store import ListingStore

__all__ = ["ORIGINATING_SYSTEM", "ResoData"]

#: The sandbox MLS's ``OriginatingSystemName``.
ORIGINATING_SYSTEM = "rfsandbox"
_FIRST = ("Ana", "Luis", "Maria", "James", "Sofia", "David", "Laura", "Carlos", "Emily", "Jorge",
          "Sarah", "Miguel", "Rachel", "Daniel", "Elena", "Michael", "Paula", "Kevin", "Isabel",
          "Robert", "Nicole", "Andres", "Julia", "Thomas")  # fmt: skip
_LAST = ("Garcia", "Rodriguez", "Smith", "Fernandez", "Johnson", "Lopez", "Williams", "Perez",
         "Brown", "Gonzalez", "Miller", "Diaz", "Davis", "Martinez", "Wilson", "Sanchez", "Moore",
         "Ramirez", "Taylor", "Torres", "Anderson", "Rivera", "Thomas", "Cruz")  # fmt: skip
_DAY = 86_400


def _iso(ts: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def _share(seed: int, key: str, salt: str) -> float:
    """A stable uniform number in [0, 1) for ``key``."""
    digest = hashlib.blake2b(f"{seed}:{salt}:{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


class ResoData:
    """The five resources' records at the store's clock, in key order.

    ``shared_timestamps``: the first N Property records (by key) all carry one
    ModificationTimestamp (a page-boundary test); ``hidden_share``: the share of listing keys
    with ``MlgCanView = false`` when ``local_fields`` has it; ``lookups``: how lookup values
    are carried (:mod:`~realtyframes.sandbox._reso_lookups`).
    """

    def __init__(
        self,
        store: ListingStore,
        *,
        shared_timestamps: int = 0,
        hidden_share: float = 0.0,
        local_fields: tuple[str, ...] = (),
        lookups: str = "string",
    ) -> None:
        self.store = store
        self.lookups = lookups
        #: Bumped by whoever changes records in place (not by a rebuild): the face's cursors
        #: (kept ordered matches of a query) are keyed by it and by the record lists.
        self.generation = 0
        self.shared_timestamps = shared_timestamps
        self.hidden_share = hidden_share
        self.local_fields = local_fields
        self._lock = threading.Lock()
        self._built_for: object = None
        self._sets: dict[str, list[dict[str, Any]]] = {}
        self._media: dict[str, list[dict[str, Any]]] = {}
        self._rows: dict[str, int] = {}
        #: server-side changes (``/_sandbox/reso/records``): keys flipped to MlgCanView = false
        #: (with the clock of the flip), keys deleted
        self._hidden: dict[str, str] = {}
        self._deleted: set[str] = set()
        t = store.tables
        weights = np.asarray(t.agent_weights, dtype=float)
        self._cum = list(itertools.accumulate(weights.tolist()))

    # -- access --------------------------------------------------------------------------------
    def records(self, resource: str) -> list[dict[str, Any]]:
        """Every record of ``resource`` at the clock, in key order."""
        self._refresh()
        if resource == "Media":
            return self._all_media()
        return self._sets[resource]

    def media_of(self, listing_key: str) -> list[dict[str, Any]]:
        """The Media records of one listing (its REST detail's photos), in ``Order``."""
        self._refresh()
        cached = self._media.get(listing_key)
        if cached is not None:
            return cached
        snap = self.store.snapshot
        row = self._rows[listing_key]
        summary = self.store.summaries(snap, np.array([row]))[0]
        photos = self.store.detail_of(snap, row, summary)["Media"]
        stamp = summary["OriginalEntryTimestamp"]
        out = [
            {
                "MediaKey": f"{listing_key}-{p['Order']:02d}",
                "ResourceRecordKey": listing_key,
                "ResourceRecordID": summary["ListingId"],
                "ResourceName": "Property",
                "MediaCategory": "Photo",
                "MediaURL": p["MediaURL"],
                "Order": p["Order"],
                "ShortDescription": p["ShortDescription"],
                "ModificationTimestamp": stamp,
                "OriginatingSystemName": ORIGINATING_SYSTEM,
            }
            for p in photos
        ]
        self._media[listing_key] = out
        return out

    def change(self, *, hide: list[str], delete: list[str]) -> None:
        """Flip ``hide`` to ``MlgCanView = false`` (their ModificationTimestamp the clock, as MLS
        Grid stamps it) and delete ``delete`` from Property, from now on (keys checked first)."""
        self._refresh()
        known = set(self._rows)
        unknown = sorted((set(hide) | set(delete)) - known)
        if unknown:
            raise ValueError(f"no Property with ListingKey {', '.join(unknown[:5])}")
        with self._lock:
            stamp = _iso(int(self.store.snapshot.state.now))
            self._hidden.update(dict.fromkeys(hide, stamp))
            self._deleted.update(delete)
            self._built_for = None

    def _all_media(self) -> list[dict[str, Any]]:
        keys = [r["ListingKey"] for r in self._sets["Property"]]
        return [m for k in keys for m in self.media_of(k)]

    # -- building ------------------------------------------------------------------------------
    def _refresh(self) -> None:
        snap = self.store.snapshot
        if snap is self._built_for:
            return
        with self._lock:
            if snap is self._built_for:
                return
            rows = np.flatnonzero(snap.state.visible)
            summaries = self.store.summaries(snap, rows)
            first = int(snap.cols["entry"].min()) if len(snap.cols["entry"]) else 0
            props = [
                self._property(snap, int(r), s)
                for r, s in zip(rows.tolist(), summaries, strict=True)
            ]
            props.sort(key=lambda p: p["ListingKey"])
            self._share_timestamps(props)
            props = self._changed(props)
            self._rows = {
                s["ListingId"]: int(r) for r, s in zip(rows.tolist(), summaries, strict=True)
            }
            self._sets = {
                "Property": props,
                "Member": self._members(_iso(first)),
                "Office": self._offices(_iso(first)),
                "OpenHouse": self._open_houses(props),
                "HistoryTransactional": self._history(snap, props),
            }
            if self.lookups == "lookup":
                self._sets["Lookup"] = lookup_records()
            if self.lookups != "string":
                for p in props:
                    for name in LOOKUP_FIELDS:
                        p[name] = encode(self.lookups, name, p[name])
                    if self.lookups == "lookup":
                        p[LOCAL_FIELD] = p["StandardStatus"]
            self._built_for = snap

    def _changed(self, props: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``props`` after the server-side changes (:meth:`change`)."""
        out = [p for p in props if p["ListingKey"] not in self._deleted]
        for p in out:
            stamp = self._hidden.get(p["ListingKey"])
            if stamp is not None:
                p[MLG_CAN_VIEW] = False
                p["ModificationTimestamp"] = max(p["ModificationTimestamp"], stamp)
        return out

    def _buyer(self, key: str) -> int:
        """The buyer agent of a closed listing: drawn from the roster by activity, per key (a
        stable hash of the key, not a generator seeded per key: the build's costliest step)."""
        drawn = _share(self.store.seed, key, "buyer") * self._cum[-1]
        return min(bisect.bisect_right(self._cum, drawn), len(self._cum) - 1)

    def _property(self, snap: Any, row: int, s: dict[str, Any]) -> dict[str, Any]:
        t = self.store.tables
        key = s["ListingId"]
        coords = s["coordinates"]
        rec: dict[str, Any] = {
            "ListingKey": key,
            **{k: v for k, v in s.items() if k != "coordinates"},
            "OriginalListPrice": int(snap.cols["prices"][row][0]),
            "Latitude": coords["lat"],
            "Longitude": coords["lng"],
            "OnMarketDate": s["OriginalEntryTimestamp"][:10],
            "PhotosChangeTimestamp": s["OriginalEntryTimestamp"],
            "ListAgentKey": s["ListAgentMlsId"],
            "ListOfficeKey": s["ListOfficeMlsId"],
            "BuyerAgentKey": None,
            "BuyerAgentMlsId": None,
            "BuyerOfficeKey": None,
            "BuyerOfficeMlsId": None,
            "BuyerOfficeName": None,
            "OriginatingSystemName": ORIGINATING_SYSTEM,
        }
        if s["StandardStatus"] == "Closed":
            agent = self._buyer(key)
            office = int(t.agent_office[agent])
            rec.update(
                BuyerAgentKey=t.agent_ids[agent],
                BuyerAgentMlsId=t.agent_ids[agent],
                BuyerOfficeKey=t.office_ids[office],
                BuyerOfficeMlsId=t.office_ids[office],
                BuyerOfficeName=t.office_names[office],
            )
        if MLG_CAN_VIEW in self.local_fields:
            rec[MLG_CAN_VIEW] = _share(self.store.seed, key, "mlg") >= self.hidden_share
        return rec

    def _share_timestamps(self, props: list[dict[str, Any]]) -> None:
        """The first N records share the latest ModificationTimestamp among them."""
        block = props[: self.shared_timestamps]
        if not block:
            return
        stamp = max(p["ModificationTimestamp"] for p in block)
        for p in block:
            p["ModificationTimestamp"] = stamp

    def _history(self, snap: Any, props: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Each listing's price and status changes up to the clock: the change feed's records
        (``GET /v1/listings/changes``) as HistoryTransactional, in key order."""
        c, now, out = snap.cols, snap.state.now, []
        for p in props:
            key, row = p["ListingKey"], self._rows[p["ListingKey"]]
            for field, ts_col, values_col in (
                ("ListPrice", "pc_ts", "prices"),
                ("StandardStatus", "st_ts", "st_code"),
            ):
                values = c[values_col][row].tolist()
                for i, ts in enumerate(c[ts_col][row].tolist()):
                    if ts > now:
                        continue
                    before, after = values[i], values[i + 1]
                    if field == "StandardStatus":
                        before, after = STATUSES[before], STATUSES[after]
                        kind = "Back On Market" if after == "Active" else after
                        before = encode(self.lookups, field, before)
                        after = encode(self.lookups, field, after)
                    else:
                        before, after, kind = str(int(before)), str(int(after)), "Price Change"
                    out.append(
                        {
                            "HistoryTransactionalKey": f"{key}-{field}-{i:03d}",
                            "ResourceName": "Property",
                            "ResourceRecordKey": key,
                            "ResourceRecordID": p["ListingId"],
                            "FieldName": field,
                            "PreviousValue": before,
                            "NewValue": after,
                            "ChangeType": kind,
                            "ModificationTimestamp": _iso(int(ts)),
                            "OriginatingSystemName": ORIGINATING_SYSTEM,
                        }
                    )
        return sorted(out, key=lambda h: h["HistoryTransactionalKey"])

    def _members(self, stamp: str) -> list[dict[str, Any]]:
        t, seed = self.store.tables, self.store.seed
        out = []
        for agent, key in enumerate(t.agent_ids):
            rng = random.Random(f"{seed}:member:{key}")
            first, last = rng.choice(_FIRST), rng.choice(_LAST)
            office = int(t.agent_office[agent])
            out.append(
                {
                    "MemberKey": key,
                    "MemberMlsId": key,
                    "MemberFirstName": first,
                    "MemberLastName": last,
                    "MemberFullName": f"{first} {last}",
                    "MemberEmail": f"{first}.{last}.{key}@agents.example.com".lower(),
                    "MemberStatus": "Active",
                    "OfficeKey": t.office_ids[office],
                    "OfficeMlsId": t.office_ids[office],
                    "OfficeName": t.office_names[office],
                    "ModificationTimestamp": stamp,
                    "OriginatingSystemName": ORIGINATING_SYSTEM,
                }
            )
        return sorted(out, key=lambda m: m["MemberKey"])

    def _offices(self, stamp: str) -> list[dict[str, Any]]:
        t = self.store.tables
        out = [
            {
                "OfficeKey": key,
                "OfficeMlsId": key,
                "OfficeName": t.office_names[i],
                "OfficeStatus": "Active",
                "OfficeStateOrProvince": STATE,
                "ModificationTimestamp": stamp,
                "OriginatingSystemName": ORIGINATING_SYSTEM,
            }
            for i, key in enumerate(t.office_ids)
        ]
        return sorted(out, key=lambda o: o["OfficeKey"])

    def _open_houses(self, props: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A third of the listings hold one or two public open houses on the Sundays after entry."""
        seed, out = self.store.seed, []
        for p in props:
            key = p["ListingKey"]
            u = _share(seed, key, "openhouse")
            if u >= 1 / 3:
                continue
            entry = int(epoch_seconds(p["OriginalEntryTimestamp"]))
            day0 = entry - entry % _DAY
            sunday = day0 + ((3 - (day0 // _DAY)) % 7) * _DAY  # 1970-01-04 was a Sunday
            if sunday <= entry:
                sunday += 7 * _DAY
            for k in range(1 if u < 1 / 6 else 2):
                start = sunday + 7 * k * _DAY + 13 * 3600
                out.append(
                    {
                        "OpenHouseKey": f"{key}-OH{k + 1}",
                        "ListingKey": key,
                        "ListingId": p["ListingId"],
                        "OpenHouseDate": _iso(start)[:10],
                        "OpenHouseStartTime": _iso(start),
                        "OpenHouseEndTime": _iso(start + 3 * 3600),
                        "OpenHouseType": "Public",
                        "OpenHouseStatus": "Active",
                        "ShowingAgentKey": p["ListAgentKey"],
                        "ModificationTimestamp": p["OriginalEntryTimestamp"],
                        "OriginatingSystemName": ORIGINATING_SYSTEM,
                    }
                )
        return out


def epoch_seconds(text: str) -> int:
    """``YYYY-MM-DDTHH:MM:SSZ`` as seconds since the epoch.

    >>> epoch_seconds("1970-01-02T00:00:00Z")
    86400
    """
    return calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ"))
