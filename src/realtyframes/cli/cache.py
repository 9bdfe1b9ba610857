"""``realtyframes cache list|clear``: the entries of the Parquet cache, or remove them.

>>> main(["cache", "list", "--cache-dir", "data/cache"])  # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import sys

from realtyframes.cli.config import PROG

__all__ = ["add_cache", "run_cache"]


def add_cache(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``cache list`` and ``cache clear``."""
    parser = subparsers.add_parser(
        "cache",
        help="list or clear the Parquet cache",
        description="List the entries of the Parquet cache, or remove them. The cache folder is "
        "--cache-dir, else REALTYFRAMES_CACHE_DIR, else the user cache directory.",
    )
    actions = parser.add_subparsers(dest="cache_action", metavar="ACTION", required=True)
    for name, text in (("list", "print every cache entry"), ("clear", "remove cache entries")):
        action = actions.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
        action.add_argument("--cache-dir", metavar="DIR", help="the cache folder")
        if name == "clear":
            action.add_argument(
                "--resource",
                metavar="R",
                help="only this resource (listings, changes, contacts, analytics, ...)",
            )
    parser.set_defaults(func=run_cache)


def run_cache(args: argparse.Namespace) -> int:
    """The ``cache`` command: list the entries, or clear them (all, or one resource)."""
    from pathlib import Path

    from realtyframes.cache import ParquetCache
    from realtyframes.loaders import default_cache_dir

    root = Path(args.cache_dir).expanduser() if args.cache_dir else default_cache_dir()
    cache = ParquetCache(root)
    if args.cache_action == "clear":
        try:
            removed = cache.clear(args.resource)
        except ValueError as exc:
            print(f"{PROG} cache clear: --resource: {exc}", file=sys.stderr)
            return 2
        what = f"{args.resource} entries" if args.resource else "entries"
        print(f"removed {removed} {what} from {root}")
        return 0
    entries = cache.list()
    if entries.empty:
        print(f"no cache entries in {root}")
        return 0
    shown = entries[["resource", "rows", "quarantined", "fetched_at", "size", "key", "params"]]
    shown = shown.assign(
        fetched_at=shown["fetched_at"].dt.strftime("%Y-%m-%d %H:%M:%SZ"),
        quarantined=shown["quarantined"].fillna(0),
        params=shown["params"].str.slice(0, 60),
    )
    print(f"{len(entries)} entries in {root} ({int(entries['size'].sum())} bytes)")
    print(shown.to_string(index=False))
    return 0
