"""ParquetCache: keys, hits and misses, metadata, atomic writes, corrupt files, ttl, list/clear."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import realtyframes.schemas as rs
from realtyframes.cache import (
    META_KEY,
    CacheWarning,
    ParquetCache,
    account_fingerprint,
    cache_key,
    is_fresh,
)
from realtyframes.cache._runs import scope_text

HOST = "http://127.0.0.1:8765"
SECRET = "rfk_live_DO_NOT_LEAK_4242"


def listings_frame(n: int = 50, start: int = 0) -> pd.DataFrame:
    """A small typed frame with every kind of column the shaped listings have."""
    i = np.arange(start, start + n)
    status = pd.Categorical(
        np.array(rs.STANDARD_STATUSES)[i % 3], categories=list(rs.STANDARD_STATUSES)
    )
    return pd.DataFrame(
        {
            "ListingId": pd.array([f"A{k}" for k in i], dtype="str"),
            "ListPrice": (i * 1000.0 + 250_000.0),
            "StandardStatus": status,
            "BedroomsTotal": pd.array(np.where(i % 7 == 0, None, i % 5), dtype="Int64"),
            "WaterfrontYN": pd.array(np.where(i % 4 == 0, None, i % 2 == 0), dtype="boolean"),
            "ModificationTimestamp": pd.to_datetime(
                i, unit="D", utc=True, origin="2025-01-01"
            ).as_unit("us"),
            "City": pd.array(np.where(i % 6 == 0, None, "Miami"), dtype="str"),
        }
    )


@pytest.fixture
def cache(tmp_path: Path) -> ParquetCache:
    # lifetimes come from the caller (the loaders pass their endpoints'); "history" never expires
    return ParquetCache(tmp_path / "cache", ttl={"history": None})


def key_of(params: dict, account: str | None = None) -> str:
    return cache_key(host=HOST, operation="listings", params=params, account=account or "anon")


# --- keys -----------------------------------------------------------------------------------------


def test_fingerprint_separates_accounts_and_hides_the_secret():
    a = account_fingerprint(SECRET, HOST)
    assert a == account_fingerprint(SECRET, HOST + "/")
    assert a != account_fingerprint(SECRET + "x", HOST)
    assert a != account_fingerprint(SECRET, "https://api.example")
    assert a != account_fingerprint(None, HOST)
    assert SECRET not in a and len(a) == 16
    assert account_fingerprint(None, HOST) == account_fingerprint(None, HOST)


def test_key_normalises_parameters_and_separates_accounts():
    base = key_of({"City": "Miami", "MaxListPrice": 500000, "Subtypes": ["Villa", "Condominium"]})
    same = key_of(
        {
            "Subtypes": ("Condominium", "Villa"),
            "MaxListPrice": 500000.0,
            "City": "Miami",
            "Since": None,
        }
    )
    assert base == same
    assert base != key_of(
        {"City": "Miami", "MaxListPrice": 500001, "Subtypes": ["Villa", "Condominium"]}
    )
    other_account = key_of(
        {"City": "Miami", "MaxListPrice": 500000, "Subtypes": ["Villa", "Condominium"]}, "acct2"
    )
    assert base != other_account
    assert base != cache_key(
        host="https://other", operation="listings", params={"City": "Miami"}, account="anon"
    )
    assert base != cache_key(
        host=HOST, operation="changes", params={"City": "Miami"}, account="anon"
    )


# --- hit / miss / metadata --------------------------------------------------------------------------


def test_miss_then_hit_with_metadata(cache: ParquetCache):
    key = key_of({"City": "Miami"})
    assert cache.read("listings", key) is None
    frame = listings_frame()
    media = pd.DataFrame(
        {
            "ListingId": frame["ListingId"].repeat(2).to_numpy(),
            "Order": pd.array([0, 1] * 50, dtype="Int64"),
        }
    )
    quarantine = frame.iloc[:2].assign(_quarantine_reason=pd.array(["x", "y"], dtype="str"))
    fetched = datetime(2025, 6, 1, 12, tzinfo=UTC)
    cache.write(
        "listings",
        key,
        frame,
        {
            "host": HOST,
            "operation": "GET /v1/listings",
            "params": {"City": "Miami"},
            "account": "anon",
            "fetched_at": fetched,
            "total": 52,
        },
        extra_frames={"media": media, "quarantine": quarantine},
    )
    entry = cache.read("listings", key)
    assert entry is not None
    pd.testing.assert_frame_equal(entry.frame, frame, check_dtype=True)
    pd.testing.assert_frame_equal(entry.extra["media"], media)
    pd.testing.assert_frame_equal(entry.extra["quarantine"], quarantine)
    assert entry.fetched_at == fetched
    assert entry.params == {"City": "Miami"}
    meta = entry.meta
    assert meta["host"] == HOST and meta["operation"] == "GET /v1/listings"
    assert meta["rows"] == 50 and meta["quarantined"] == 2 and meta["total"] == 52
    assert meta["schema_version"] == rs.SCHEMA_VERSION
    assert meta["extras"]["media"]["rows"] == 100
    # the same facts are in the file's own key-value metadata, for other tools
    kv = json.loads(pq.read_schema(cache.path("listings", key)).metadata[META_KEY])
    assert kv["params"] == {"City": "Miami"} and kv["fetched_at"] == "2025-06-01T12:00:00+00:00"


def test_shaped_frames_roundtrip_through_the_cache(cache: ParquetCache):
    records = [
        {
            "ListingId": f"A{i}",
            "ListPrice": 400_000.0 + i,
            "StandardStatus": "Closed" if i % 2 else "Active",
            "ClosePrice": 390_000.0 if i % 2 else None,
            "CloseDate": "2025-05-01" if i % 2 else None,
            "PropertyType": "Residential",
            "PostalCode": "33139",
            "BedroomsTotal": 2,
            "coordinates": {"lat": 25.79, "lng": -80.13},
            "ModificationTimestamp": "2025-05-02T10:00:00Z",
            "WaterfrontYN": i % 3 == 0,
            "Media": [
                {
                    "Order": 0,
                    "MediaURL": f"https://cdn.example/{i}.jpg",
                    "ShortDescription": "Front",
                }
            ],
            "Furnished": "Unfurnished",
        }
        for i in range(25)
    ]
    body = json.dumps({"total": 25, "offset": 0, "limit": 50, "listings": records}).encode()
    listings, media = rs.listings_from_pages([body])
    valid, quarantined = rs.validate(listings, rs.Listing)
    cache.write("listings", "k1", valid, extra_frames={"media": media, "quarantine": quarantined})
    entry = cache.read("listings", "k1")
    assert entry is not None
    pd.testing.assert_frame_equal(entry.frame, valid, check_dtype=True)
    pd.testing.assert_frame_equal(entry.extra["media"], media, check_dtype=True)
    pd.testing.assert_frame_equal(entry.extra["quarantine"], quarantined, check_dtype=True)
    assert entry.frame["StandardStatus"].cat.categories.tolist() == list(rs.STANDARD_STATUSES)


def test_empty_frames_keep_their_categories(cache: ParquetCache):
    empty = rs.empty_frame(rs.Listing)
    cache.write("listings", "k0", empty, {"host": HOST})
    entry = cache.read("listings", "k0")
    assert entry is not None
    pd.testing.assert_frame_equal(entry.frame, empty, check_dtype=True)


def test_a_frame_of_several_row_groups_with_long_texts_roundtrips(cache: ParquetCache):
    # written in row groups of 64 KB pages, long unique texts past the dictionary limit (#33)
    n = 70_000
    frame = listings_frame(n)
    frame["PublicRemarks"] = pd.array([f"remarks {k} " + "x" * (k % 300) for k in range(n)])
    cache.write("listings", "big", frame, {"host": HOST})
    entry = cache.read("listings", "big")
    assert entry is not None
    pd.testing.assert_frame_equal(entry.frame, frame, check_dtype=True)
    (part,) = (cache.root / "listings").rglob("part-0.parquet")
    meta = pq.ParquetFile(part).metadata
    assert [meta.row_group(g).num_rows for g in range(meta.num_row_groups)] == [65_536, 4_464]
    pd.testing.assert_frame_equal(pq.read_table(part).to_pandas(), frame, check_dtype=False)


def test_reads_never_create_anything(tmp_path: Path):
    root = tmp_path / "nowhere"
    cache = ParquetCache(root)
    assert cache.read("listings", "abc") is None
    assert cache.list().empty
    assert cache.clear() == 0
    assert not root.exists()


def test_files_are_private_to_their_owner(tmp_path: Path):
    """Cache files can hold personal data (contacts): 0600 files, 0700 folders, whatever the umask."""
    old_umask = os.umask(0o022)
    try:
        cache = ParquetCache(tmp_path / "deep" / "cache")
        cache.write(
            "contacts",
            "k",
            listings_frame(3),
            {"host": HOST},
            extra_frames={"media": listings_frame(1)},
        )
    finally:
        os.umask(old_umask)
    folders = [
        tmp_path / "deep",
        cache.root,
        cache.root / "contacts",
        cache.root / "contacts.media",
    ]
    assert {oct(stat.S_IMODE(p.stat().st_mode)) for p in folders} == {oct(0o700)}
    files = [p for p in cache.root.rglob("*") if p.is_file()]
    assert len(files) >= 3  # entry, companion, lock
    assert {oct(stat.S_IMODE(p.stat().st_mode)) for p in files} == {oct(0o600)}


def test_opening_the_cache_removes_only_dead_writers_temporary_files(tmp_path: Path):
    cache = ParquetCache(tmp_path)
    cache.write("listings", "k", listings_frame(3), {"host": HOST})
    folder = tmp_path / ".rf" / "staging"
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead = folder / f".listings.other.parquet.tmp-{int(done.stdout)}-abcd"
    live = folder / f".listings.other.parquet.tmp-{os.getpid()}-beef"
    dead.write_bytes(b"half")
    live.write_bytes(b"half")  # a write in progress in a live process: left alone
    no_such_pid = folder / f".listings.other.parquet.tmp-{2**70}-cafe"  # os.kill overflows
    no_such_pid.write_bytes(b"half")
    ParquetCache(tmp_path)  # opening never fails on a stray name
    assert not dead.exists() and live.exists() and not no_such_pid.exists()


@pytest.mark.parametrize("name", ["api_key", "X-Api-Key", "key", "access_key", "passwd",
                                  "Authorization", "refresh_token", "client_secret"])  # fmt: skip
def test_one_rule_for_secret_names_in_footers_and_run_records(cache: ParquetCache, name: str):
    """The cache footers and the run records redact the same names (the footers missed
    ``passwd``, ``key`` and ``access_key``); a record's key such as ``ListingKey`` is kept in both
    (the run records redacted it)."""
    params = {"City": "Miami", name: SECRET, "ListingKey": "L-1"}
    key = cache_key(host=HOST, operation="listings", params=params, account="a")
    entry = cache.write("listings", key, listings_frame(), {"host": HOST, "params": params})
    shown = json.loads(scope_text(params))
    for kept in (entry.meta["params"], shown):
        assert kept[name] == "<redacted>" and kept["ListingKey"] == "L-1", kept


def test_secrets_never_reach_the_files(cache: ParquetCache):
    fingerprint = account_fingerprint(SECRET, HOST)
    params = {"City": "Miami", "api_key": SECRET, "access_token": SECRET}
    key = cache_key(host=HOST, operation="listings", params=params, account=fingerprint)
    entry = cache.write(
        "listings", key, listings_frame(), {"host": HOST, "params": params, "account": fingerprint}
    )
    assert entry.meta["params"]["api_key"] == "<redacted>"
    for path in cache.root.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in repr(cache) and SECRET not in key


@pytest.mark.parametrize("password", [SECRET, f"p@ss-{SECRET}"])  # an "@" in it, too
def test_a_password_in_the_host_url_never_reaches_the_files(cache: ParquetCache, password: str):
    """A base URL with ``user:password@`` is stored without them (footers, state database)."""
    with_password = HOST.replace("://", f"://analyst:{password}@")
    entry = cache.write("listings", "k1", listings_frame(), {"host": with_password})
    assert entry.meta["host"] == HOST
    assert cache.list()["host"].tolist() == [HOST]
    for path in cache.root.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_names_are_checked(cache: ParquetCache):
    with pytest.raises(ValueError, match=r"resource: '\.\./etc' is not allowed"):
        cache.read("../etc", "k")
    with pytest.raises(ValueError, match="key: 'a/b' is not allowed"):
        cache.write("listings", "a/b", listings_frame())
    with pytest.raises(ValueError, match="fetched_at must be timezone-aware"):
        cache.write("listings", "k", listings_frame(), {"fetched_at": datetime(2025, 1, 1)})
    with pytest.raises(ValueError, match="meta: rows are set by the cache"):
        cache.write("listings", "k", listings_frame(), {"rows": 3})


# --- atomic writes ---------------------------------------------------------------------------------


def test_overwrite_is_atomic_and_leaves_no_temporary_files(cache: ParquetCache):
    cache.write("listings", "k1", listings_frame(10), {"host": HOST})
    cache.write("listings", "k1", listings_frame(20, start=100), {"host": HOST})
    entry = cache.read("listings", "k1")
    assert entry is not None and len(entry.frame) == 20
    files = sorted(
        p.relative_to(cache.root).as_posix() for p in cache.root.rglob("*") if p.is_file()
    )
    assert [f for f in files if not f.startswith(".rf/generations/")] == [
        ".rf/state.sqlite3",
        "listings/account=unset/scope=key-k1/part-0.parquet",
    ]
    assert not [f for f in files if ".tmp-" in f]


def test_a_failed_write_keeps_the_previous_file(cache: ParquetCache):
    good = listings_frame(10)
    cache.write("listings", "k1", good, {"host": HOST})
    unwritable = good.assign(ListPrice=pd.Series([object()] * 10, dtype=object))
    with pytest.raises(Exception, match="object"):
        cache.write("listings", "k1", unwritable, {"host": HOST})
    entry = cache.read("listings", "k1")
    assert entry is not None
    pd.testing.assert_frame_equal(entry.frame, good)
    assert not [p for p in cache.root.rglob("*") if ".tmp-" in p.name]


def test_companion_from_another_write_is_a_miss_and_stale_ones_are_removed(cache: ParquetCache):
    frame = listings_frame(10)
    quarantine = frame.iloc[:1].assign(_quarantine_reason="r")
    cache.write("listings", "k1", frame, extra_frames={"media": frame, "quarantine": quarantine})
    media_path = cache.path("listings", "k1", "media")
    older = media_path.read_bytes()
    cache.write("listings", "k1", frame, extra_frames={"media": frame})
    assert not cache.path("listings", "k1", "quarantine").exists()  # no stale quarantine left
    entry = cache.read("listings", "k1")
    assert entry is not None and set(entry.extra) == {"media"}
    media_path.write_bytes(older)  # written over from outside with another generation's file
    with pytest.warns(CacheWarning, match="of generation"):
        assert cache.read("listings", "k1") is None


# --- corrupt files ------------------------------------------------------------------------------------


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "flipped"])
def test_corrupt_file_is_a_miss_moved_aside(cache: ParquetCache, damage: str):
    cache.write("listings", "k1", listings_frame(2000), {"host": HOST})
    path = cache.path("listings", "k1")
    data = path.read_bytes()
    if damage == "garbage":
        path.write_bytes(b"this is not parquet at all")
    elif damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "empty":
        path.write_bytes(b"")
    else:  # a flipped byte inside the first data page: caught by the page checksums
        pos = 200
        path.write_bytes(data[:pos] + bytes([data[pos] ^ 0xFF]) + data[pos + 1 :])
    with pytest.warns(CacheWarning, match="unreadable.*treated as a miss, moved aside"):
        assert cache.read("listings", "k1") is None
    assert not path.exists() and not path.parent.exists()  # the dataset holds no broken file
    aside = list((cache.root / ".rf" / "corrupt").iterdir())
    assert len(aside) == 1 and aside[0].name.startswith("listings.k1.")
    cache.write("listings", "k1", listings_frame(5), {"host": HOST})  # refetched
    entry = cache.read("listings", "k1")
    assert entry is not None and len(entry.frame) == 5


def test_corrupt_companion_is_a_miss(cache: ParquetCache):
    frame = listings_frame(10)
    cache.write("listings", "k1", frame, extra_frames={"media": frame})
    cache.path("listings", "k1", "media").write_bytes(b"PAR1 broken")
    with pytest.warns(CacheWarning):
        assert cache.read("listings", "k1") is None


# --- ttl ---------------------------------------------------------------------------------------------


def test_ttl(cache: ParquetCache):
    two_hours_ago = datetime.now(UTC) - timedelta(hours=2)
    entry = cache.write("listings", "k1", listings_frame(3), {"fetched_at": two_hours_ago})
    assert not is_fresh(entry, timedelta(hours=1))
    assert is_fresh(entry, timedelta(hours=3))
    assert is_fresh(entry, 3 * 3600.0)
    assert is_fresh(entry, None)  # never expires
    assert not cache.is_fresh(entry)  # listings: one hour by default
    assert ParquetCache(cache.root, ttl={"listings": timedelta(days=1)}).is_fresh(entry)
    assert cache.is_fresh(entry, None)
    history = cache.write("history", "k1", listings_frame(3), {"fetched_at": two_hours_ago})
    assert cache.is_fresh(history)  # kept current by sync, never expires


# --- inventory ---------------------------------------------------------------------------------------


def test_list_and_clear(cache: ParquetCache):
    cache.write("listings", "k1", listings_frame(10), {"host": HOST, "params": {"City": "Miami"}},
                extra_frames={"quarantine": listings_frame(2)})  # fmt: skip
    cache.write("listings", "k2", listings_frame(20), {"host": HOST})
    cache.write("contacts", "k3", listings_frame(3), {"host": HOST})
    (cache.root / ".rf" / "corrupt").mkdir()
    (cache.root / ".rf" / "corrupt" / "listings.k9.20250101T000000Z.parquet").write_bytes(b"x")
    inventory = cache.list()
    assert inventory["resource"].tolist() == ["contacts", "listings", "listings"]
    assert inventory["rows"].tolist() == [3, 10, 20]
    assert inventory["quarantined"].tolist()[1] == 2
    assert inventory.dtypes["fetched_at"] == pd.DatetimeTZDtype("us", "UTC")
    assert (inventory["size"] > 0).all()
    assert json.loads(inventory.loc[1, "params"]) == {"City": "Miami"}
    assert cache.clear("listings") == 2
    assert cache.list()["resource"].tolist() == ["contacts"]
    assert not any((cache.root / "listings").iterdir())
    assert not any((cache.root / "listings.quarantine").iterdir())
    assert not any((cache.root / ".rf" / "corrupt").iterdir())
    assert cache.clear() == 1 and cache.list().empty


def test_unnamed_index_is_not_stored_named_one_is(cache: ParquetCache):
    gapped = listings_frame(6).drop(index=[1, 4])  # as validate leaves the valid rows
    cache.write("listings", "k1", gapped)
    entry = cache.read("listings", "k1")
    assert entry is not None
    pd.testing.assert_frame_equal(entry.frame, gapped.reset_index(drop=True))
    assert pq.read_schema(cache.path("listings", "k1")).names == list(gapped.columns)
    named = listings_frame(3).set_index("ListingId")
    cache.write("listings", "k2", named)
    entry = cache.read("listings", "k2")
    assert entry is not None
    pd.testing.assert_frame_equal(entry.frame, named)
