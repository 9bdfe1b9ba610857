"""``realtyframes fetch``: one resource as a Parquet, CSV or JSON file, for pipelines and tools.

Built from the declarations: each subcommand is an operation of the spec
(:data:`realtyframes.loaders.OPERATIONS`, the rows the loaders' ``ENDPOINTS`` carry: its summary and
path give the help, its parameter table the ``--Name`` options, its defaults the "(default ...)"
hints; the loader's options are checked by the endpoint's own checks) and the allowed
values come from the validators themselves (:class:`~realtyframes.errors.QueryError`'s
``values``: an enumeration as values, never parsed from the message). Values are checked by the
same validators as the Python API, so a bad value stops before any request with the QueryError
message. The file writers are shared with the report (:func:`realtyframes.report.write_output`).

>>> main(["fetch", "listings", "--City", "Miami", "--Status", "Pending", "--out", "p.parquet"])  # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from realtyframes._config import Settings
from realtyframes._spec import BREAKDOWNS
from realtyframes.api import MAX_LISTING_IDS
from realtyframes.cli._preflight import preflight
from realtyframes.cli.config import (
    PROG,
    add_arguments,
    add_source_argument,
    client_options,
    make_client,
    run_guarded,
)
from realtyframes.errors import QueryError
from realtyframes.loaders import OPERATIONS, PAGING_PARAMETERS, SUBTYPES, Operation

if TYPE_CHECKING:
    import pandas as pd

    from realtyframes._client import Client

__all__ = ["RESOURCES", "Resource", "add_fetch", "collect_params", "fetch_frames", "run_fetch"]

logger = logging.getLogger("realtyframes.cli")

#: Members of the analytics result (``--member``), plus ``all`` (JSON only).
ANALYTICS_MEMBERS: tuple[str, ...] = ("overview", "timelines", *BREAKDOWNS, "utm")
#: Values given as a list (comma-separated or the option repeated).
LIST_PARAMS: frozenset[str] = frozenset({"Subtypes", "ListingIds"})
#: Paging parameters: the loaders page by themselves, so they are not options.
PAGING: frozenset[str] = frozenset(PAGING_PARAMETERS)


def _cli_value(value: Any) -> str:
    """A value as written on the command line, where every value is text (``True``: true)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def allowed_text(name: str, checker: Callable[[str, Any], str]) -> str:
    """What a parameter allows, as its validator declares it (asked with an empty value, it
    raises a QueryError whose ``values`` are the enumeration, else whose ``allowed`` says it).

    >>> from realtyframes.loaders import LISTING_SEARCH
    >>> allowed_text("Status", LISTING_SEARCH["Status"])
    'Active, Pending, Closed, Active Under Contract'
    >>> allowed_text("Pool", LISTING_SEARCH["Pool"])
    'true, false'
    """
    try:
        checker(name, "")
    except QueryError as exc:
        if exc.values is not None:
            text = ", ".join(dict.fromkeys(_cli_value(v) for v in exc.values))
        else:
            text = exc.allowed or ""
    else:  # pragma: no cover - every checker refuses an empty value
        text = "text"
    if name == "Subtypes":
        per_type = "; ".join(f"{k}: {', '.join(v)}" for k, v in SUBTYPES.items())
        text = f"comma-separated, for PropertyType {per_type}"
    elif name == "ListingIds":
        text = (
            f"{text}, comma-separated or the option repeated "
            f"(at most {MAX_LISTING_IDS} per request)"
        )
    return text


@dataclass(frozen=True)
class Resource:
    """One ``fetch`` target: the command's name and the spec operation it fetches (its
    parameter table, defaults, summary and path). The API layer only: ``--help`` loads no data
    library."""

    name: str
    spec: Operation

    @property
    def operation(self) -> str:
        """The operation's name (``listing_changes``)."""
        return self.spec.name

    @property
    def table(self) -> Mapping[str, Callable[[str, Any], str]]:
        """The operation's query parameters and their checkers (paging included)."""
        return self.spec.parameters

    @property
    def defaults(self) -> Mapping[str, str]:
        """What the service applies when a parameter is omitted."""
        return self.spec.defaults

    @property
    def help(self) -> str:
        """The summary and the request, from the operation (``... (GET /v1/listings)``)."""
        spec = self.spec
        path = spec.path.replace("{}", "{" + (spec.path_param or "id") + "}")
        return f"{spec.summary[:1].lower()}{spec.summary[1:]} (GET {path})"


#: The command's names for the endpoints it fetches, in the order ``--help`` lists them.
COMMANDS: dict[str, str] = {
    "listings": "listings",
    "changes": "listing_changes",
    "listing": "listing",
    "contacts": "contacts",
    "activity": "contact_activity",
    "analytics": "analytics",
    "me": "me",
    "legacy-contacts": "legacy_contacts",
}
RESOURCES: dict[str, Resource] = {
    name: Resource(name, OPERATIONS[operation]) for name, operation in COMMANDS.items()
}
#: Listing search filters that choose the listings of ``fetch changes`` (instead of --ListingIds).
SCOPE_OF_CHANGES: tuple[str, ...] = tuple(
    name
    for name in RESOURCES["listings"].table
    if name not in RESOURCES["changes"].table and name not in PAGING and name != "Sort"
)


def add_fetch(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``fetch`` and one subcommand per resource (see :data:`RESOURCES`)."""
    fetch = subparsers.add_parser(
        "fetch",
        help="fetch listings, changes, contacts, activity or analytics into a file",
        description="Fetch one resource into a Parquet, CSV or JSON file (for shell pipelines "
        "and other data tools). Options use the spec's parameter names; see "
        "`realtyframes fetch RESOURCE --help` for each one's allowed values. Files holding "
        "personal data (contacts, activity, legacy-contacts) are created readable by their "
        "owner only (mode 0600).",
    )
    sub = fetch.add_subparsers(dest="resource", metavar="RESOURCE", required=True)
    for resource in RESOURCES.values():
        parser = sub.add_parser(
            resource.name,
            help=resource.help,
            description=f"Fetch into a Parquet, CSV or JSON file: {resource.help}. Options named "
            "like the spec's parameters; values are checked before any request.",
            usage="%(prog)s ID --out FILE [options]"
            if resource.name == "listing"
            else "%(prog)s --out FILE [--PARAM VALUE ...] [options]",
        )
        parser.add_argument(
            "--out",
            metavar="FILE",
            help="output file: .parquet, .csv, .json (records) or .xlsx (Excel); parent folders "
            "are created; personal data (contacts) is written mode 0600, owner only",
        )
        _add_spec_options(parser, resource)
        _add_resource_options(parser, resource.name)
        add_arguments(parser)
        if resource.name == "listings":
            add_source_argument(parser)
        parser.set_defaults(func=_run_fetch)


def _add_spec_options(parser: argparse.ArgumentParser, resource: Resource) -> None:
    """One ``--Name`` option per spec parameter of the resource (paging left out)."""
    if not resource.table:
        return
    group = parser.add_argument_group(
        "spec parameters", "the service's query parameters, as the spec names them"
    )
    for name, checker in resource.table.items():
        if name in PAGING:
            continue
        default = resource.defaults.get(name)
        hint = f" (default {default})" if default else ""
        group.add_argument(
            f"--{name}",
            dest=f"p_{name}",
            action="append",
            metavar="VALUE",
            help=f"{allowed_text(name, checker)}{hint}",
        )


def _add_resource_options(parser: argparse.ArgumentParser, name: str) -> None:
    """The options of one resource that are not spec query parameters."""
    if name == "listing":
        parser.add_argument("p_ListingId", nargs=1, metavar="ID", help="the MLS listing number")
    if name == "changes":
        group = parser.add_argument_group(
            "scope", "listing search filters choosing the listings, instead of --ListingIds"
        )
        for param in SCOPE_OF_CHANGES:
            checker = RESOURCES["listings"].table[param]
            group.add_argument(
                f"--{param}",
                dest=f"s_{param}",
                action="append",
                metavar="VALUE",
                help=allowed_text(param, checker),
            )
    if name == "listings":
        parser.add_argument("--max-results", type=int, metavar="N", help="stop after N listings")
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="print what the fetch would cost (requests, time at the rate limit) from one "
            "cheap request, and fetch nothing (--out not needed)",
        )
        parser.add_argument(
            "--details", action="store_true", help="every detail field (one request each)"
        )
    if name == "activity":
        group = parser.add_argument_group("spec parameters")
        group.add_argument(
            "--contactId",
            dest="p_contactId",
            action="append",
            metavar="ID",
            required=True,
            help="the contact's id (path parameter)",
        )
    if name == "analytics":
        parser.add_argument(
            "--member",
            default="overview",
            choices=(*ANALYTICS_MEMBERS, "all"),
            help="which frame of the result to write (default overview; 'all' needs .json)",
        )
    if name in ("listings", "listing", "changes", "contacts", "activity", "legacy-contacts"):
        parser.add_argument(
            "--refresh", action="store_true", help="ignore cached results and fetch again"
        )


def _run_fetch(args: argparse.Namespace) -> int:
    return preflight("fetch", args) or run_guarded(
        f"{PROG} fetch", args, lambda settings: run_fetch(args, settings)
    )


def collect_params(args: argparse.Namespace, prefix: str = "p_") -> dict[str, str]:
    """The spec parameters given on the command line (list parameters joined with commas);
    ``prefix="s_"``: the scope filters of ``fetch changes``."""
    params: dict[str, str] = {}
    for key, values in sorted(vars(args).items()):
        if not key.startswith(prefix) or values is None:
            continue
        name = key[len(prefix) :]
        if name in LIST_PARAMS:
            params[name] = ",".join(values)
        elif len(values) > 1:
            raise QueryError(
                name, f"given {len(values)} times ({', '.join(map(repr, values))})", "one value"
            )
        else:
            params[name] = values[0]
    return params


def _prepare(
    resource: Resource, params: dict[str, str], scope: dict[str, str], options: dict[str, Any]
) -> None:
    """Validate before any request (and before starting a sandbox): the parameters by the
    operation's validator, the loader's options (``max_results``, ``details``) by the endpoint's
    checks (:data:`realtyframes.loaders.ENDPOINTS`)."""
    from realtyframes.loaders import ENDPOINTS

    endpoint = ENDPOINTS[resource.operation]
    if resource.name == "changes" and "ListingIds" not in params:
        if not scope:
            raise QueryError(
                "ListingIds",
                "missing: name the listings (--ListingIds) or a scope that finds them",
                "--ListingIds A1,A2 or listing search filters such as --City Miami",
            )
        RESOURCES["listings"].spec.prepare(scope)
        endpoint.prepare({**params, "ListingIds": "-"})
    elif resource.name == "changes" and scope:
        raise QueryError(
            "ListingIds",
            f"given with a scope ({', '.join(sorted(scope))})",
            "either --ListingIds or scope filters",
        )
    elif endpoint.options:
        endpoint.call(params, options)
    else:
        endpoint.prepare(params)


def fetch_frames(
    client: Client, resource: str, params: dict[str, str], *, options: Mapping[str, Any]
) -> dict[str, pd.DataFrame] | pd.DataFrame:
    """Fetch ``resource`` with ``params`` through the client: a frame (or analytics members)."""
    refresh = bool(options.get("refresh", False))
    filters: dict[str, Any] = dict(params)
    if resource == "listings":
        return client.listings(
            max_results=options.get("max_results"),
            details=bool(options.get("details", False)),
            refresh=refresh,
            **filters,
        )
    if resource == "changes":
        scope = dict(options.get("scope") or {})
        if "ListingIds" in filters:
            ids = str(filters.pop("ListingIds")).split(",")
        else:  # the listings of the scope: one paged search
            ids = client.listings(**scope, refresh=refresh)["ListingId"].tolist()
        since = filters.pop("Since")
        change_type = filters.pop("ChangeType", None)
        if not ids:  # no listing in the scope: no request, the feed's columns
            from realtyframes.schemas import ListingChange, empty_frame

            return empty_frame(ListingChange)
        return client.listing_changes(ids, since, change_type, refresh=refresh)
    if resource == "listing":
        return client.listing(str(filters["ListingId"]), refresh=refresh)
    if resource == "me":
        import pandas as pd

        return pd.json_normalize(client.me())
    if resource == "legacy-contacts":
        return client.legacy_contacts(refresh=refresh)
    if resource == "contacts":
        return client.contacts(refresh=refresh)
    if resource == "activity":
        return client.contact_activity(str(filters["contactId"]), refresh=refresh)
    period = str(filters.pop("Period", RESOURCES["analytics"].defaults["Period"]))
    analytics = client.analytics(period, **filters)
    return dict(analytics.frames())


def run_fetch(args: argparse.Namespace, settings: Settings) -> int:
    """The ``fetch`` command: validate, fetch through the client, write, print the path."""
    from realtyframes.report import output_format, write_output
    from realtyframes.report.options import data_source

    resource = RESOURCES[args.resource]
    dry_run = bool(getattr(args, "dry_run", False))
    if args.out is None and not dry_run:
        raise QueryError("--out", "missing", "an output file: .parquet, .csv, .json or .xlsx")
    params = collect_params(args)
    scope = collect_params(args, "s_")
    member = getattr(args, "member", None)
    fmt = output_format(args.out, member) if not dry_run else None
    max_results = getattr(args, "max_results", None)
    loader_options = {"max_results": max_results, "details": bool(getattr(args, "details", False))}
    _prepare(resource, dict(params), scope, loader_options)
    quiet = bool(getattr(args, "quiet", False))
    options = client_options(args)
    with make_client(
        settings, getattr(args, "source", "platform"), progress=False if quiet else None, **options
    ) as client:
        if dry_run:
            plan = client.plan_listings(
                max_results=max_results, details=bool(args.details), **params
            )
            print(repr(plan), flush=True)
            return 0
        source = data_source(client)
        data = fetch_frames(
            client,
            resource.name,
            params,
            options={
                "refresh": getattr(args, "refresh", False),
                "max_results": max_results,
                "details": getattr(args, "details", False),
                "scope": scope,
            },
        )
    if isinstance(data, dict) and member != "all":
        data = data[member or "overview"]
    assert fmt is not None
    rows = write_output(data, args.out, fmt, name=resource.name, source=source)
    logger.info("%s: %d rows written to %s", resource.name, rows, args.out)
    if rows == 0:  # exit 0 (a valid answer), but a scheduled job must not mistake it for data
        shown = ", ".join(f"{k}={v}" for k, v in {**scope, **params}.items()) or "no filters"
        print(f"{PROG} fetch: warning: 0 {resource.name} rows for {shown}; "
              f"{args.out} holds the columns only", file=sys.stderr)  # fmt: skip
    elif not quiet:  # the count for people (stderr); stdout stays the path, for pipelines
        print(f"{PROG} fetch: {rows:,} {resource.name} rows written to {args.out}", file=sys.stderr)
    print(os.fspath(args.out), flush=True)
    return 0
