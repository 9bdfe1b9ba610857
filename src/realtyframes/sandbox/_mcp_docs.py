"""The documentation MCP at ``/docs/mcp``: the service spec's text, searchable, without auth.

The spec ships inside the package (``service-api.md``) and is cut into sections at its headings.
Tools: ``search_docs(query, limit)`` ranks sections (BM25 over words, headings weigh double) and
returns each with its heading and a short excerpt; ``get_doc_section(heading)`` returns one
section's full text. Every section is also an MCP resource (``docs://service-api/<slug>``). The
arguments are declared as :class:`~realtyframes.sandbox._query.Param` like REST parameters, so a
bad one (or a JSON ``null``) is the same 400-shaped tool error naming the parameter and what is
allowed, as text without ``structuredContent``; an unknown tool is the JSON-RPC error -32602.

>>> [s.heading for s in search("retry after 429", 1)]
['Limits']
>>> section("limits").slug
'limits'
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any

from realtyframes.sandbox._errors import SandboxError, bad_param
from realtyframes.sandbox._mcp_common import (
    error_body,
    query_text,
    refuse_nulls,
    tool_result,
    unknown_tool,
)
from realtyframes.sandbox._query import Param, parse
from realtyframes.sandbox._spec import API_VERSION

if TYPE_CHECKING:
    import mcp_types as types
    from mcp.server.lowlevel import Server

    from realtyframes.sandbox._mcp_host import McpHost

__all__ = ["SPEC_FILE", "Section", "docs_host", "search", "section", "sections"]

SPEC_FILE = "service-api.md"
URI_PREFIX = "docs://service-api/"
EXCERPT_CHARS = 240
_WORD = re.compile(r"[a-z0-9]+")
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*$")

SEARCH_ARGS: tuple[Param, ...] = (
    Param("query", "text", "Words to look for in the spec", required=True),
    Param("limit", "integer", "Sections to return", default=5, minimum=1, maximum=20),
)
SECTION_ARGS: tuple[Param, ...] = (
    Param(
        "heading",
        "text",
        "A section's heading (or its slug), as search_docs returns",
        required=True,
    ),
)


@dataclass(frozen=True)
class Section:
    """One section of the spec: its heading, level (1-6), slug and full text (heading included)."""

    heading: str
    level: int
    slug: str
    text: str

    @property
    def uri(self) -> str:
        return URI_PREFIX + self.slug

    def excerpt(self, terms: set[str]) -> str:
        """About :data:`EXCERPT_CHARS` characters of the body around the first matching word."""
        body = " ".join(self.text.split("\n", 1)[-1].split())
        low = body.lower()
        hits = [m.start() for m in _WORD.finditer(low) if m.group() in terms]
        start = max(0, (hits[0] if hits else 0) - EXCERPT_CHARS // 4)
        cut = body[start : start + EXCERPT_CHARS]
        return ("…" if start else "") + cut + ("…" if start + EXCERPT_CHARS < len(body) else "")


def _slug(heading: str) -> str:
    return "-".join(_WORD.findall(heading.lower()))


@functools.cache
def sections() -> tuple[Section, ...]:
    """The spec's sections in document order."""
    text = resources.files("realtyframes.sandbox").joinpath(SPEC_FILE).read_text("utf-8")
    found: list[Section] = []
    heading, level, lines = "", 0, []
    for line in [*text.splitlines(), "# end"]:
        match = _HEADING.match(line)
        if match is None:
            lines.append(line)
            continue
        if heading:
            body = "\n".join(lines).strip()
            found.append(
                Section(heading, level, _slug(heading), f"{'#' * level} {heading}\n\n{body}")
            )
        heading, level, lines = match.group(2), len(match.group(1)), []
    return tuple(found)


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def search(query: str, limit: int = 5) -> list[Section]:
    """The sections best matching ``query`` (BM25; words of the heading count twice)."""
    terms = set(_words(query))
    docs = [Counter(_words(s.text) + _words(s.heading)) for s in sections()]
    lengths = [sum(d.values()) for d in docs]
    average = sum(lengths) / len(lengths)
    scored: list[tuple[float, int]] = []
    for index, (counts, length) in enumerate(zip(docs, lengths, strict=True)):
        score = 0.0
        for term in terms:
            having = sum(1 for d in docs if term in d)
            if counts[term] == 0:
                continue
            idf = math.log(1 + (len(docs) - having + 0.5) / (having + 0.5))
            tf = counts[term]
            score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / average))
        if score > 0:
            scored.append((score, index))
    scored.sort(key=lambda pair: (-pair[0], pair[1]))
    return [sections()[index] for _, index in scored[:limit]]


def section(heading: str) -> Section:
    """The section whose heading or slug is ``heading`` (any case); else a 404 naming them."""
    wanted = heading.strip().lower()
    for candidate in sections():
        if wanted in (candidate.heading.lower(), candidate.slug):
            return candidate
    known = "; ".join(s.heading for s in sections())
    raise SandboxError(404, f"heading: no section {heading!r}; sections: {known}")


def _search_result(arguments: dict[str, Any]) -> dict[str, Any]:
    args = _parse(SEARCH_ARGS, arguments)
    terms = set(_words(args["query"]))
    results = [
        {"heading": s.heading, "level": s.level, "uri": s.uri, "excerpt": s.excerpt(terms)}
        for s in search(args["query"], args["limit"])
    ]
    return {"query": args["query"], "results": results}


def _section_result(arguments: dict[str, Any]) -> dict[str, Any]:
    found = section(_parse(SECTION_ARGS, arguments)["heading"])
    return {"heading": found.heading, "level": found.level, "uri": found.uri, "text": found.text}


def _parse(declared: tuple[Param, ...], arguments: dict[str, Any]) -> dict[str, Any]:
    allowed = [p.name for p in declared]
    for name in arguments:
        if name not in allowed:
            raise bad_param(name, "not an argument of this tool", ", ".join(allowed))
    refuse_nulls({p.name: p.schema() for p in declared}, arguments)
    raw = {k: query_text(k, v) for k, v in arguments.items()}
    return parse(declared, raw)


_STRING = {"type": "string"}
_OUTPUTS: dict[str, dict[str, Any]] = {
    "search_docs": {
        "type": "object",
        "properties": {
            "query": _STRING,
            "results": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "heading": _STRING,
                        "level": {"type": "integer"},
                        "uri": _STRING,
                        "excerpt": _STRING,
                    },
                    "required": ["heading", "level", "uri", "excerpt"],
                },
            },
        },
        "required": ["query", "results"],
    },
    "get_doc_section": {
        "type": "object",
        "properties": {
            "heading": _STRING,
            "level": {"type": "integer"},
            "uri": _STRING,
            "text": _STRING,
        },
        "required": ["heading", "level", "uri", "text"],
    },
}
_TOOLS = {
    "search_docs": (
        SEARCH_ARGS,
        _search_result,
        "Search the service spec: ranked sections with excerpts",
    ),
    "get_doc_section": (
        SECTION_ARGS,
        _section_result,
        "One section of the service spec, full text",
    ),
}


def _tools() -> list[types.Tool]:
    import mcp_types as types

    out = []
    for name, (declared, _, summary) in _TOOLS.items():
        properties = {p.name: {**p.schema(), "description": p.description} for p in declared}
        schema = {
            "type": "object",
            "properties": properties,
            "required": [p.name for p in declared if p.required],
            "additionalProperties": False,
        }
        out.append(
            types.Tool(
                name=name,
                description=summary,
                input_schema=schema,
                output_schema=_OUTPUTS[name],
                annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
            )
        )
    return out


def _server() -> Server[Any]:
    import mcp_types as types
    from mcp.server.lowlevel import Server

    tools = _tools()

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        entry = _TOOLS.get(params.name)
        if entry is None:
            raise unknown_tool(params.name, _TOOLS)
        try:
            return tool_result(entry[1](dict(params.arguments or {})), is_error=False)
        except SandboxError as error:
            return tool_result(error_body(error), is_error=True)

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(name=s.slug, title=s.heading, uri=s.uri, mime_type="text/markdown")
                for s in sections()
            ]
        )

    async def read_resource(
        ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        found = next((s for s in sections() if s.uri == uri), None)
        if found is None:
            from mcp.shared.exceptions import MCPError

            raise MCPError(code=-32002, message=f"Resource not found: {uri}")
        text = types.TextResourceContents(uri=uri, mime_type="text/markdown", text=found.text)
        return types.ReadResourceResult(contents=[text])

    return Server(
        "realtyframes-sandbox-docs",
        version=API_VERSION,
        title="realtyframes sandbox: documentation",
        instructions="Search the service spec (search_docs), read a section (get_doc_section); "
        "every section is also a resource.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )


def docs_host() -> McpHost:
    """The ASGI app of ``/docs/mcp`` (one per sandbox app; no auth)."""
    from realtyframes.sandbox._mcp_host import McpHost

    return McpHost(_server)
