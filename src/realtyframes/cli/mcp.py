"""``realtyframes mcp``: the service's MCP from the command line.

``mcp tools [--docs]`` lists the tools (name, required and optional arguments, description);
``mcp call NAME --arg key=value ... [--docs] [--out FILE]`` calls one, with the values read as the
tool's ``inputSchema`` types them (lists comma-separated), checked before any request. The
result goes to ``--out`` (a table: .parquet, .csv or .json; a single object: .json) or to stdout
as JSON. ``--docs``: the documentation MCP instead of the product one. Both go through
``client.mcp()`` (:mod:`realtyframes.loaders.mcp`), with the connection flags of every command.

>>> main(["mcp", "call", "search_listings", "--arg", "City=Miami", "--out", "m.csv"])  # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from realtyframes._config import Settings
from realtyframes.cli._preflight import preflight
from realtyframes.cli.config import PROG, add_arguments, client_options, make_client, run_guarded
from realtyframes.cli.mcp_serve import add_serve_parser
from realtyframes.errors import QueryError

if TYPE_CHECKING:  # pandas loads on first use: `realtyframes --help` stays light
    import pandas as pd

__all__ = ["add_mcp", "parse_arguments", "run_mcp_call", "run_mcp_tools"]

_NUMBERS = {"integer": int, "number": float}


def _value(name: str, text: str, schema: Mapping[str, Any]) -> Any:
    """One ``--arg`` value as the JSON type its schema names."""
    kind = schema.get("type")
    if kind == "array":
        return [_value(name, part.strip(), schema.get("items", {})) for part in text.split(",")]
    if kind == "boolean":
        if text.lower() not in ("true", "false"):
            raise QueryError(name, f"not a boolean: {text!r}", ["true", "false"])
        return text.lower() == "true"
    if kind in _NUMBERS:
        try:
            return _NUMBERS[kind](text)
        except ValueError:
            raise QueryError(name, f"not {'an integer' if kind == 'integer' else 'a number'}: "
                             f"{text!r}", f"a {kind}") from None  # fmt: skip
    return text


def parse_arguments(pairs: Sequence[str], schema: Mapping[str, Any]) -> dict[str, Any]:
    """``["City=Miami", "Limit=5"]`` -> arguments typed by the tool's ``inputSchema``.

    >>> schema = {"properties": {"Limit": {"type": "integer"}, "Subtypes": {"type": "array"}}}
    >>> parse_arguments(["Limit=5", "Subtypes=Condominium,Villa", "City=Miami"], schema)
    {'Limit': 5, 'Subtypes': ['Condominium', 'Villa'], 'City': 'Miami'}
    """
    properties: Mapping[str, Any] = schema.get("properties", {})
    out: dict[str, Any] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or not name.strip():
            raise QueryError("--arg", f"{pair!r} is not key=value", "NAME=VALUE, e.g. City=Miami")
        name = name.strip()
        if name in out:
            raise QueryError(name, "given more than once; give it once", "one --arg per name")
        out[name] = _value(name, text, properties.get(name, {}))
    return out


def add_mcp(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``mcp tools``, ``mcp call`` and ``mcp serve`` (:mod:`realtyframes.cli.mcp_serve`)."""
    parser = subparsers.add_parser(
        "mcp",
        help="the service's MCP (list its tools, call one); serve the toolkit's own",
        description="The service's MCP endpoints (product tools at /mcp; --docs: the "
        "documentation MCP), with this client's credentials, rate budget and retries.",
    )
    actions = parser.add_subparsers(dest="mcp_action", metavar="ACTION", required=True)
    tools = actions.add_parser(
        "tools", help="list the tools", description="List the tools and their arguments."
    )
    call = actions.add_parser(
        "call",
        help="call one tool",
        description="Call one tool; a table goes to --out (.parquet, .csv, .json), else the "
        "result is printed as JSON.",
    )
    call.add_argument("name", metavar="NAME", help="the tool (see: realtyframes mcp tools)")
    call.add_argument(
        "--arg",
        dest="arguments",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an argument, by its spec name (repeat the option; lists comma-separated)",
    )
    call.add_argument("--out", metavar="FILE", help="write the result here instead of stdout")
    for sub, func in ((tools, run_mcp_tools), (call, run_mcp_call)):
        sub.add_argument("--docs", action="store_true", help="the documentation MCP")
        add_arguments(sub)
        sub.set_defaults(func=func)
    add_serve_parser(actions)  # the toolkit's own MCP server


def run_mcp_tools(args: argparse.Namespace) -> int:
    """The ``mcp tools`` command."""

    def body(settings: Settings) -> int:
        with make_client(settings, **client_options(args)) as client, client.mcp(
            host="docs" if args.docs else "main"
        ) as session:  # fmt: skip
            tools = session.tools()
        for row in tools.itertuples():
            required = ", ".join(row.required) or "-"
            optional = ", ".join(row.optional) or "-"
            print(f"{row.name}\n    {row.description}\n    required: {required}\n"
                  f"    optional: {optional}")  # fmt: skip
        return 0

    return run_guarded(f"{PROG} mcp tools", args, body)


def _write(result: pd.DataFrame | dict[str, Any], out: str | None, source: str) -> str:
    import pandas as pd

    from realtyframes._files import PRIVATE_MODE, atomic_write_text
    from realtyframes.report import output_format, write_output
    from realtyframes.schemas import holds_personal_data

    if out is None:
        if isinstance(result, pd.DataFrame):
            return result.to_json(orient="records", date_format="iso") or "[]"
        return json.dumps(result, indent=2, default=str)
    fmt = output_format(out)
    if isinstance(result, pd.DataFrame):
        write_output(result, out, fmt, source=source)
    elif fmt != "json":
        raise QueryError("--out", "this tool's result is one object: use a .json output", [".json"])
    else:
        private = holds_personal_data(result)  # a contact's details: owner only, like the cache
        text = json.dumps(result, indent=2, default=str)
        atomic_write_text(out, text, mode=PRIVATE_MODE if private else None)
    return os.fspath(out)


def run_mcp_call(args: argparse.Namespace) -> int:
    """The ``mcp call`` command."""

    def body(settings: Settings) -> int:
        from realtyframes.report.options import data_source

        if args.out is not None:
            from realtyframes.report import output_format

            output_format(args.out)  # a bad --out stops before any request
        with make_client(settings, **client_options(args)) as client, client.mcp(
            host="docs" if args.docs else "main"
        ) as session:  # fmt: skip
            arguments = parse_arguments(args.arguments, session.input_schema(args.name))
            result = session.call(args.name, **arguments)
            source = data_source(client)
        print(_write(result, args.out, source), flush=True)
        return 0

    return preflight("mcp call", args) or run_guarded(f"{PROG} mcp call", args, body)
