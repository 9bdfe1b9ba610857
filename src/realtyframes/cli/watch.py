"""``realtyframes watch add|list|remove|run``: saved searches that notify what changed (for cron).

``watch run`` prints one line per watch (stdout) and exits 0 when every run completed and every
notification was delivered; 1 on a failure (a sync that failed, a notification not delivered:
the next run reports those changes again); 2 on bad usage; 3 when all went well but a run was
flagged in the run history (RunAnomalyWarning: the matches fell by over a fifth ...); 75
(``EX_TEMPFAIL``) when another process kept syncing the same scope past ``--wait`` (nothing was
synced twice; run it later).
Notification URLs are shown masked everywhere (``watch list`` too).

>>> main(["watch", "add", "miami", "--City", "Miami", "--MaxListPrice", "900000",
...       "--notify", "mailtos://me:app-pw@smtp.example.com?to=me@example.com"])  # doctest: +SKIP
>>> main(["watch", "run"])  # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from realtyframes._config import Settings
from realtyframes.cli.config import (
    EXIT_BUSY,
    EXIT_FAILURE,
    EXIT_OK,
    PROG,
    add_arguments,
    checked,
    client_options,
    make_client,
    run_guarded,
)
from realtyframes.cli.fetch import PAGING, RESOURCES, allowed_text, collect_params
from realtyframes.notify import NOTIFY_DEADLINE

__all__ = ["add_watch", "run_watch_command"]

#: Search parameters a watch does not take (the sync pages, orders and dates by itself).
_NOT_FILTERS = {*PAGING, "Sort", "Since"}

_seconds = checked(
    float, "a number of seconds", lambda v: 0 <= v < 1e7, lambda t, v: f"{t} must be >= 0"
)
_deadline = checked(
    float, "a number of seconds", lambda v: 0 < v < 1e7, lambda t, v: f"{t} must be > 0"
)


def _name(text: str) -> str:
    """A watch name on the command line: a control character is bad usage (exit 2), before any
    file is read (the rest of the name's rules are the watch API's)."""
    if not text.isprintable():
        raise argparse.ArgumentTypeError(f"{text!r} holds a control character")
    return text


def add_watch(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``watch`` and its subcommands."""
    watch = subparsers.add_parser(
        "watch",
        help="saved searches that notify what changed since their last run",
        description="Saved searches: each run syncs the scope, compares with the watch's last "
        "run (new matches, price cuts, pending, closed, back on market, removed) and sends one "
        "message to the watch's apprise URLs when something changed. Kept in the cache folder "
        "(.watches/, mode 0600). See docs/scheduling.md for cron, systemd and CI.",
    )
    sub = watch.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = sub.add_parser(
        "add",
        help="save a watch",
        description="Save a watch: listing search filters (the sync follows the scope; Status, "
        "Min/MaxListPrice and MaxDaysOnMarket choose listings in it), apprise URLs to notify.",
    )
    add.add_argument(
        "name", type=_name, metavar="NAME", help="the watch's name (letters, digits, _ . -)"
    )
    add.add_argument(
        "--notify",
        action="append",
        default=[],
        metavar="URL",
        help="apprise URL to notify (repeatable): mailtos://user:pw@smtp.host?to=addr, "
        "json://host/path, slack://..., msteams://... (stored 0600, always shown masked)",
    )
    add.add_argument(
        "--notify-file",
        metavar="PATH",
        help="apprise URLs, one a line, from a file of mode 0600 (no URL in the process list)",
    )
    add.add_argument(
        "--link", metavar="TEMPLATE", help="listing page URL with {ListingId}, linked in messages"
    )
    add.add_argument("--replace", action="store_true", help="replace a watch of that name")
    group = add.add_argument_group("filters", "the spec's listing search parameters")
    for name, checker in RESOURCES["listings"].table.items():
        if name not in _NOT_FILTERS:
            group.add_argument(
                f"--{name}",
                dest=f"p_{name}",
                action="append",
                metavar="VALUE",
                help=allowed_text(name, checker),
            )
    listing = sub.add_parser("list", help="list the watches (notification URLs masked)")
    remove = sub.add_parser("remove", help="forget a watch")
    remove.add_argument("name", type=_name, metavar="NAME")
    run = sub.add_parser(
        "run",
        help="run watches (all, or those named): sync, compare, notify",
        description="Run the watches (all when none is named). Exit codes: 0 done, 1 failure "
        "(including a notification not delivered), 2 bad usage, 3 done but a run was flagged "
        "in the run history (see `realtyframes runs`), 75 another run kept syncing the same "
        "scope past --wait.",
    )
    run.add_argument("names", nargs="*", type=_name, metavar="NAME")
    run.add_argument(
        "--always", action="store_true", help="send a message even when nothing changed"
    )
    run.add_argument(
        "--wait",
        type=_seconds,
        default=900.0,
        metavar="SECONDS",
        help="wait this long for another run syncing the same scope (default 900; 0: do not "
        "wait), then exit 75",
    )
    run.add_argument(
        "--notify-deadline",
        type=_deadline,
        default=NOTIFY_DEADLINE,
        metavar="SECONDS",
        help="seconds each notification target has in all (default 60); past it, not delivered "
        "(NotificationTimeout, exit 1)",
    )
    for parser in (add, listing, remove, run):
        add_arguments(parser)
        parser.set_defaults(func=_run_watch)


def _run_watch(args: argparse.Namespace) -> int:
    return run_guarded(f"{PROG} watch", args, lambda s: run_watch_command(args, s))


def run_watch_command(args: argparse.Namespace, settings: Settings) -> int:
    """The ``watch`` subcommands (stdout: what they did; exit codes in the module docstring)."""
    from realtyframes.notify import read_targets_file
    from realtyframes.watch import Watches

    if args.action != "run":
        watches = Watches(cache_dir=settings.cache_dir)
        if args.action == "add":
            notify: list[Any] = list(args.notify)
            if args.notify_file:
                notify += read_targets_file(args.notify_file)
            watch = watches.add(
                args.name,
                notify=notify,
                link=args.link,
                replace=bool(args.replace),
                **collect_params(args),
            )
            print(f"{watch.name}: {watch.describe()}; notify {len(watch.notify)} target(s)")
        elif args.action == "remove":
            watches.remove(args.name)
            print(f"removed {args.name}")
        else:
            table = watches.list()
            print(table.to_string(index=False) if len(table) else "no watches")
        return EXIT_OK
    if not args.names and not Watches(cache_dir=settings.cache_dir).names():
        print("no watches to run (add one with `realtyframes watch add NAME --City ...`)")
        return EXIT_OK
    with make_client(settings, progress=False, **client_options(args)) as client:
        results = Watches(client).run(
            *args.names,
            always=bool(args.always),
            wait=args.wait,
            notify_deadline=args.notify_deadline,
        )
    for result in results:
        if result.busy:
            print(f"{PROG} watch: error: {result.name}: {result.error}", file=sys.stderr)
            continue
        print(_line(result), flush=True)
        if result.failed:
            print(
                f"{PROG} watch: error: {result.name}: not delivered to "
                + ", ".join(result.failed)
                + " (the next run reports these changes again)",
                file=sys.stderr,
            )
    if any(r.failed for r in results):
        return EXIT_FAILURE
    return EXIT_BUSY if any(r.busy for r in results) else EXIT_OK


def _line(result: Any) -> str:
    """``miami: 17 match; 2 new, 1 price_cut; sent to 1 of 1``."""
    counts = ", ".join(f"{n} {k}" for k, n in result.counts.items() if n) or "no changes"
    if result.first_run:
        counts = "first run (recorded where the watch starts)"
    sent = sum(d.ok for d in result.deliveries)
    delivery = f"; sent to {sent} of {len(result.deliveries)}" if result.deliveries else ""
    synced = "" if result.synced else " (synced by another run)"
    return f"{result.name}: {result.matches} match; {counts}{delivery}{synced}"
