"""What the two MCP servers of the sandbox share (the product tools at ``/mcp``, :mod:`._mcp`,
and the documentation at ``/docs/mcp``, :mod:`._mcp_docs`): arguments as REST query text, JSON
``null`` refused, a REST error as a tool error, and the JSON-RPC error of an unknown tool.

>>> query_text("Subtype", ["Condo", "Townhouse"])
'Condo,Townhouse'
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from realtyframes.sandbox._errors import SandboxError, bad_param

if TYPE_CHECKING:
    import mcp_types as types

__all__ = ["error_body", "query_text", "refuse_nulls", "tool_result", "unknown_tool"]


def query_text(name: str, value: Any) -> str:
    """An argument as the REST query writes it (lists comma-separated, booleans lower case)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return ",".join(str(v) for v in value)
    raise bad_param(name, f"unsupported JSON value {json.dumps(value)[:60]}", "a string, number, "
                    "boolean or a list of strings")  # fmt: skip


def _takes_null(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(_takes_null(option) for option in schema.get("anyOf", []))


def refuse_nulls(properties: dict[str, Any], arguments: dict[str, Any]) -> None:
    """A 400 naming the first argument that is JSON ``null`` where its schema does not take null
    (``null`` is never "left out": a client's typo must not run the default).

    >>> refuse_nulls({"Limit": {"type": "integer"}}, {"Limit": None})
    Traceback (most recent call last):
    ...
    realtyframes.sandbox._errors.SandboxError: 400 bad_request: Limit: null is not allowed (leave the argument out); allowed: an integer
    """
    for name, value in arguments.items():
        schema = properties.get(name)
        if value is None and schema is not None and not _takes_null(schema):
            kind = {"array": "list"}.get(schema.get("type", "value"), schema.get("type", "value"))
            article = "an" if str(kind)[:1] in "aeiou" else "a"
            hint = ", ".join(map(str, schema["enum"])) if "enum" in schema else f"{article} {kind}"
            raise bad_param(name, "null is not allowed (leave the argument out)", hint)


def error_body(error: SandboxError) -> dict[str, Any]:
    """The REST ApiError body of ``error`` (what the same REST request answers)."""
    message = f"{error.message}: {error.detail}" if error.detail else error.message
    body: dict[str, Any] = {"code": error.code, "message": message, "status": error.status}
    if error.param is not None:
        body["param"] = error.param
    return {"error": body}


def tool_result(body: dict[str, Any], *, is_error: bool) -> types.CallToolResult:
    """A result: ``body`` as JSON text, and as ``structuredContent`` unless it is an error."""
    import mcp_types as types

    text = types.TextContent(type="text", text=json.dumps(body))
    if is_error:  # an error body matches no outputSchema: text only
        return types.CallToolResult(content=[text], is_error=True)
    return types.CallToolResult(content=[text], structured_content=body)


def unknown_tool(name: str, tools: Iterable[str]) -> Exception:
    """The JSON-RPC error -32602 (Invalid params) of a ``tools/call`` naming no tool."""
    from mcp.shared.exceptions import MCPError
    from mcp_types import INVALID_PARAMS

    return MCPError(INVALID_PARAMS, f"Unknown tool: {name!r}; tools: {', '.join(tools)}")
