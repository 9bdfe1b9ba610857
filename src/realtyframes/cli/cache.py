"""``realtyframes cache list|clear``: the entries of the Parquet cache, or remove them.

``clear`` removes every entry, one resource's (``--resource``) or one scope's (``--where
City=Miami``, matched against each entry's request parameters). It says what it is about to remove
and asks first, unless ``--yes`` is given. With no terminal to ask (a scheduled job, a pipe such as
``echo n | realtyframes cache clear``) it removes nothing and exits 2 unless ``--yes`` is given.

>>> main(["cache", "clear", "--resource", "market", "--where", "City=Miami", "--yes"])  # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from realtyframes.cli.config import EXIT_BUSY, PROG

if TYPE_CHECKING:
    import pandas as pd

    from realtyframes.cache import ParquetCache

__all__ = ["add_cache", "matching", "run_cache"]


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
        action.add_argument(
            "--resource",
            metavar="R",
            help="only this resource (listings, market, changes, contacts, analytics, ...)",
        )
        action.add_argument(
            "--where",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help="only entries whose request had this parameter (e.g. City=Miami); repeatable",
        )
        if name == "clear":
            action.add_argument(
                "--yes",
                "-y",
                action="store_true",
                help="do not ask before removing; needed when stdin is not a terminal (cron, "
                "CI, a pipe), where nothing is removed without it",
            )
    parser.set_defaults(func=run_cache)


def _check_resource(resource: str | None) -> None:
    from realtyframes.loaders.endpoints import TTLS

    if resource is not None and resource not in TTLS:
        raise ValueError(
            f"--resource {resource!r} is not a cache resource; allowed: {', '.join(sorted(TTLS))}"
        )


def _conditions(where: list[str]) -> dict[str, str]:
    conditions: dict[str, str] = {}
    for item in where:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ValueError(f"--where {item!r}: expected NAME=VALUE, e.g. City=Miami")
        conditions[name.strip()] = value.strip()
    return conditions


def matching(
    entries: pd.DataFrame, resource: str | None, conditions: dict[str, str]
) -> pd.DataFrame:
    """The entries of ``resource`` (all if None) whose parameters hold every condition.

    >>> import pandas as pd
    >>> e = pd.DataFrame({"resource": ["market", "market"], "params": ['{"City": "Miami"}', '{}']})
    >>> matching(e, "market", {"City": "Miami"}).index.tolist()
    [0]
    """
    chosen = entries if resource is None else entries[entries["resource"] == resource]
    if not conditions:
        return chosen
    params = chosen["params"].map(json.loads)
    keep = params.map(lambda p: all(str(p.get(k)) == v for k, v in conditions.items()))
    return chosen[keep.astype(bool)]


def _confirm(what: str, root: Path) -> bool:
    answer = input(f"remove {what} from {root}? [y/N] ")
    return answer.strip().lower() in ("y", "yes")


def run_cache(args: argparse.Namespace) -> int:
    """The ``cache`` command: list the entries, or clear them (all, one resource or one scope)."""
    from realtyframes.cache import ParquetCache
    from realtyframes.loaders import default_cache_dir

    root = Path(args.cache_dir).expanduser() if args.cache_dir else default_cache_dir()
    cache = ParquetCache(root)
    try:
        _check_resource(args.resource)
        conditions = _conditions(args.where)
        entries = matching(cache.list(), args.resource, conditions)
    except ValueError as exc:
        print(f"{PROG} cache {args.cache_action}: {exc}", file=sys.stderr)
        return 2
    if args.cache_action == "clear":
        return _clear(cache, root, entries, args)
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


def _clear(cache: ParquetCache, root: Path, entries: pd.DataFrame, args: argparse.Namespace) -> int:
    from realtyframes.errors import ScopeBusyError

    try:
        cache.check_idle(args.resource)  # a scope being synced: refused, nothing removed
    except ScopeBusyError as exc:
        print(f"{PROG} cache clear: {exc}", file=sys.stderr)
        return EXIT_BUSY
    # checkpoints of interrupted loads go too (all, or one resource's; not with --where)
    checkpoints = 0 if args.where else len(cache.checkpoints(args.resource))
    if entries.empty and not checkpoints:
        print(f"no matching cache entries in {root}")
        return 0
    what = f"{len(entries)} cache entries" + (
        f" and {checkpoints} checkpoints of interrupted loads" if checkpoints else ""
    )
    if not args.yes and not sys.stdin.isatty():  # nobody to ask: never remove on a guess
        print(
            f"{PROG} cache clear: would remove {what} from {root}, but "
            "stdin is not a terminal to confirm; nothing removed (pass --yes)",
            file=sys.stderr,
        )
        return 2
    if not args.yes and not _confirm(what, root):
        print("nothing removed", file=sys.stderr)
        return 1
    removed = 0
    for resource, group in entries.groupby("resource", sort=True):
        removed += cache.clear(str(resource), keys=set(group["key"]))
    done = f"{removed} cache entries"
    if checkpoints:
        done += f" and {cache.clear_checkpoints(args.resource)} checkpoints of interrupted loads"
    print(f"removed {done} from {root}")
    return 0
