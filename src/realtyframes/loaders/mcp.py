"""The service's MCP endpoints as a synchronous session: tools as a frame, calls as frames or dicts.

``client.mcp()`` (the product MCP, ``<base_url>/mcp``) and ``client.mcp(host="docs")`` (the
documentation MCP: ``<docs_url>/mcp``, or ``<base_url>/docs/mcp`` when no ``docs_url`` is set, as
the sandbox serves it) open an :class:`McpSession`.

It speaks MCP's streamable HTTP transport (JSON-RPC 2.0, ``initialize``, ``Mcp-Session-Id``,
``DELETE`` at the end; JSON or ``text/event-stream`` answers) with the client's own httpx client:
its credentials, pacing, retries (429, 5xx, transport errors) and secret masking. Plain
synchronous code, so it works the same inside Jupyter's running loop. Arguments are checked
against the tool's ``inputSchema`` before any request (QueryError); a tool error raises the
ApiError subclass of its code; a listing search has ``client.listings``' columns and dtypes.

>>> with client.mcp() as mcp:  # doctest: +SKIP
...     mcp.tools()[["name", "required"]]
...     miami = mcp.call("search_listings", City="Miami", Limit=50)
"""

from __future__ import annotations

import json
import logging
import warnings
from collections.abc import Mapping
from typing import Any, Literal

import httpx
import pandas as pd

from realtyframes._version import __version__
from realtyframes.api import ApiClient, error_from_response
from realtyframes.errors import (
    ApiError,
    BadResponseError,
    DataQualityWarning,
    NotFoundError,
    QueryError,
    TransportError,
)
from realtyframes.loaders._base import validate_frame
from realtyframes.loaders.endpoints import ENDPOINTS
from realtyframes.schemas import OnInvalid

__all__ = [
    "PROTOCOL_VERSION",
    "RECORD_TOOLS",
    "McpHost",
    "McpSession",
    "allows_null",
    "check_arguments",
]

logger = logging.getLogger("realtyframes.api")

McpHost = Literal["main", "docs"]
#: The MCP revision this client speaks (the SDK's newest ``initialize``-handshake revision).
PROTOCOL_VERSION = "2025-11-25"
#: Product tools whose result is a list of records, and the loader endpoint that shapes them.
RECORD_TOOLS = {
    "search_listings": "listings",
    "listing_changes": "listing_changes",
    "list_contacts": "contacts",
    "contact_activity": "contact_activity",
}
_ACCEPT = "application/json, text/event-stream;q=0.5"


def allows_null(schema: Mapping[str, Any]) -> bool:
    """Whether a JSON ``schema`` takes ``null`` (its type, or one of its ``anyOf``/``oneOf``).

    >>> allows_null({"type": "integer"}), allows_null({"type": ["integer", "null"]})
    (False, True)
    """
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if "enum" in schema and None in schema["enum"]:
        return True
    options = [*schema.get("anyOf", []), *schema.get("oneOf", [])]
    return any(allows_null(option) for option in options)


def _duplicate(values: Any) -> Any:
    """The first value of ``values`` seen before (compared as JSON), else None."""
    seen: set[str] = set()
    for value in values:
        key = json.dumps(value, sort_keys=True, default=str)
        if key in seen:
            return value
        seen.add(key)
    return None


def _array_problem(value: Any, schema: Mapping[str, Any]) -> str | None:
    if not isinstance(value, list | tuple):
        return f"expected a list, got {type(value).__name__}"
    if len(value) < schema.get("minItems", 0):
        return f"at least {schema['minItems']} items, got {len(value)}"
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        return f"at most {schema['maxItems']} items, got {len(value)}"
    if schema.get("uniqueItems") and (twice := _duplicate(value)) is not None:
        return f"duplicate item {twice!r}"
    return next(filter(None, (_problem(v, schema.get("items", {})) for v in value)), None)


def _problem(value: Any, schema: Mapping[str, Any]) -> str | None:
    """What is wrong with ``value`` for a JSON ``schema`` (the subset tools use), else None."""
    kind = schema.get("type")
    if value is None:
        return None if allows_null(schema) else "null is not allowed (leave the argument out)"
    if "enum" in schema and value not in schema["enum"]:
        return f"unknown value {value!r}"
    if kind == "array":
        return _array_problem(value, schema)
    if kind == "boolean" and not isinstance(value, bool):
        return f"not a boolean: {value!r}"
    if kind in ("integer", "number"):
        numeric = int if kind == "integer" else int | float
        if isinstance(value, bool) or not isinstance(value, numeric):
            return f"not {'an integer' if kind == 'integer' else 'a number'}: {value!r}"
        if "minimum" in schema and value < schema["minimum"]:
            return f"at least {schema['minimum']}, got {value}"
        if "maximum" in schema and value > schema["maximum"]:
            return f"at most {schema['maximum']}, got {value}"
    if kind == "string" and not isinstance(value, str):
        return f"not a string: {value!r}"
    return None


def _allowed(schema: Mapping[str, Any]) -> str:
    items = schema.get("items", {})
    if "enum" in schema or "enum" in items:
        return ", ".join(str(v) for v in schema.get("enum", items.get("enum", [])))
    if schema.get("type") == "array":
        cap = f"at most {schema['maxItems']} " if "maxItems" in schema else ""
        return f"a list of {cap}values" + (", each once" if schema.get("uniqueItems") else "")
    low, high = schema.get("minimum"), schema.get("maximum")
    kind = schema.get("type", "value")
    article = "an" if str(kind)[:1] in "aeiou" else "a"
    if low is not None and high is not None:
        return f"{article} {kind} from {low} to {high}"
    return f"{article} {kind} >= {low}" if low is not None else f"{article} {kind}"


def check_arguments(tool: str, schema: Mapping[str, Any], arguments: dict[str, Any]) -> None:
    """Refuse arguments the tool's ``inputSchema`` does not allow (QueryError, before any request):
    unknown names, missing required ones, ``null`` where the schema does not take it, enums,
    ranges, types, list lengths and duplicates (``uniqueItems``).

    >>> schema = {"type": "object", "properties": {"Limit": {"type": "integer", "maximum": 50}}}
    >>> check_arguments("t", schema, {"Limit": 51})
    Traceback (most recent call last):
    ...
    realtyframes.errors.QueryError: Limit: at most 50, got 51; allowed: an integer
    """
    properties: Mapping[str, Any] = schema.get("properties", {})
    for name in schema.get("required", []):
        if name not in arguments:
            raise QueryError(name, f"required by {tool}", _allowed(properties.get(name, {})))
    for name, value in arguments.items():
        if name not in properties:
            if schema.get("additionalProperties") is False:
                raise QueryError(name, f"not an argument of {tool}", sorted(properties) or "none")
            continue
        problem = _problem(value, properties[name])
        if problem is not None:
            raise QueryError(name, problem, _allowed(properties[name]))


def _sse_messages(text: str) -> list[Any]:
    """The JSON messages of a ``text/event-stream`` body."""
    out = []
    for event in text.replace("\r\n", "\n").split("\n\n"):
        data = "\n".join(
            line[5:].lstrip() for line in event.split("\n") if line.startswith("data:")
        )
        if data:
            out.append(json.loads(data))
    return out


class McpSession:
    """An MCP session on the service, opened by ``client.mcp()``; a context manager.

    >>> with client.mcp(host="docs") as docs:  # doctest: +SKIP
    ...     docs.call("search_docs", query="retry after 429", limit=3)
    """

    def __init__(
        self, api: ApiClient, host: McpHost = "main", on_invalid: OnInvalid = "quarantine"
    ) -> None:
        if host not in ("main", "docs"):
            raise QueryError("host", f"unknown MCP host {host!r}", ["main", "docs"])
        self._api = api
        self.host: McpHost = host
        hosts = api.hosts
        if host == "main":
            self.url = hosts["base"] + "/mcp"
        else:
            own_docs = hosts["docs"] != hosts["base"]
            self.url = hosts["docs"] + "/mcp" if own_docs else hosts["base"] + "/docs/mcp"
        self._pacer_host = "base" if host == "main" else "docs"
        self._on_invalid = on_invalid
        self._session_id: str | None = None
        self._next_id = 0
        self._tools: dict[str, dict[str, Any]] | None = None
        self.server_info: dict[str, Any] = {}
        self.protocol_version: str | None = None

    # -- lifetime ---------------------------------------------------------------------------------
    def open(self) -> McpSession:
        """The ``initialize`` handshake (then ``notifications/initialized``)."""
        params = {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "realtyframes", "version": __version__},
        }
        result = self._request("initialize", params)
        self.protocol_version = result.get("protocolVersion")
        self.server_info = dict(result.get("serverInfo") or {})
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return self

    def close(self) -> None:
        """End the session (``DELETE``); an error here is only logged."""
        if self._session_id is None:
            return
        try:
            self._api.http.delete(self.url, headers=self._headers(), auth=self._auth())
        except httpx.HTTPError as exc:
            logger.info("MCP %s: ending the session failed (%s)", self.url, type(exc).__name__)
        self._session_id = None

    @property
    def session_id(self) -> str | None:
        """The server's ``Mcp-Session-Id`` of this session (None before ``open`` / after ``close``)."""
        return self._session_id

    def __enter__(self) -> McpSession:
        return self.open()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "open" if self._session_id else "closed"
        return f"McpSession(url={self.url!r}, {state})"

    # -- tools ------------------------------------------------------------------------------------
    def _tool_schemas(self) -> dict[str, dict[str, Any]]:
        if self._tools is None:
            tools = self._request("tools/list", {}).get("tools", [])
            self._tools = {t["name"]: t for t in tools}
        return self._tools

    def input_schema(self, name: str) -> dict[str, Any]:
        """The ``inputSchema`` of the tool ``name`` (QueryError naming the tools if unknown)."""
        tools = self._tool_schemas()
        if name not in tools:
            raise QueryError("name", f"no tool {name!r} on {self.url}", sorted(tools))
        return dict(tools[name].get("inputSchema") or {})

    def tools(self) -> pd.DataFrame:
        """The server's tools: name, description, required and optional arguments (lists).

        >>> client.mcp().open().tools().name.tolist()  # doctest: +SKIP
        ['search_listings', 'get_listing', ...]
        """
        rows = []
        for name, tool in self._tool_schemas().items():
            schema = tool.get("inputSchema") or {}
            required = list(schema.get("required", []))
            optional = [p for p in schema.get("properties", {}) if p not in required]
            rows.append((name, tool.get("description") or "", required, optional))
        return pd.DataFrame(rows, columns=["name", "description", "required", "optional"])

    def call(self, name: str, **arguments: Any) -> pd.DataFrame | dict[str, Any]:
        """Call the tool ``name``: a DataFrame when its result is a list of records, else a dict.

        Bad arguments raise :class:`~realtyframes.QueryError` before the request; a tool error
        raises the :class:`~realtyframes.ApiError` subclass of its code.

        >>> with client.mcp() as mcp:  # doctest: +SKIP
        ...     mcp.call("search_listings", City="Miami", Status="Closed")
        """
        schema = self.input_schema(name)
        given = {k: v for k, v in arguments.items() if v is not None}
        check_arguments(name, schema, given)
        result = self._request("tools/call", {"name": name, "arguments": given})
        body = result.get("structuredContent")
        if body is None:
            texts = [
                c.get("text", "") for c in result.get("content", []) if c.get("type") == "text"
            ]
            try:
                body = json.loads(texts[0]) if texts else {}
            except ValueError:
                body = {"text": "\n".join(texts)}
        if result.get("isError"):
            raise self._tool_error(name, body)
        return self._shape(name, body)

    def _shape(self, name: str, body: Any) -> pd.DataFrame | dict[str, Any]:
        loader = RECORD_TOOLS.get(name)
        if loader is not None and self.host == "main":
            endpoint = ENDPOINTS[loader]
            assert endpoint.shape is not None
            shaped = endpoint.shape([json.dumps(body).encode()])
            valid, quarantined = validate_frame(shaped.frame, endpoint.model, self._on_invalid)
            if len(quarantined):
                message = f"{name}: {len(quarantined)} of {len(shaped.frame)} rows quarantined"
                warnings.warn(message, DataQualityWarning, stacklevel=3)
            return valid
        if isinstance(body, dict):
            lists = [v for v in body.values() if isinstance(v, list)]
            if len(lists) == 1 and lists[0] and all(isinstance(r, dict) for r in lists[0]):
                return pd.DataFrame(lists[0])
            return body
        return {"result": body}

    def _tool_error(self, name: str, body: Any) -> ApiError:
        """The ApiError subclass of a tool error, from the one status/code mapping of ``api``."""
        error = body.get("error") if isinstance(body, dict) else None
        status = error.get("status") if isinstance(error, dict) else None
        status = status if isinstance(status, int) and 400 <= status < 600 else 500
        request = httpx.Request("POST", f"{self.url}#tools/call:{name}")
        response = httpx.Response(status, json=body, request=request)
        return error_from_response(response, method="MCP", url=f"{self.url} tool {name}",
                                   secrets=self._api.secrets)  # fmt: skip

    # -- the wire ---------------------------------------------------------------------------------
    def _auth(self) -> Any:
        """The product MCP's sign-in (the client's); the docs MCP takes none."""
        auth = self._api.auth_for("base") if self.host == "main" else None
        return auth or httpx.USE_CLIENT_DEFAULT

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": _ACCEPT}
        if self._session_id is not None:
            headers["Mcp-Session-Id"] = self._session_id
            headers["MCP-Protocol-Version"] = self.protocol_version or PROTOCOL_VERSION
        return headers

    def _request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        message = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}
        try:
            answer = self._send(message)
        except NotFoundError:
            if self._session_id is None or method == "initialize":
                raise
            # the server ended the session (idle timeout, restart): open a new one, once
            logger.info("MCP %s: session expired; opening a new one", self.url)
            self._session_id = None
            self.open()
            answer = self._send(message)
        if not isinstance(answer, dict):
            raise BadResponseError(f"MCP {method}: no JSON-RPC answer", method="POST", url=self.url)
        if "error" in answer:
            error = answer["error"] or {}
            text = self._api.mask(f"MCP {method}: {error.get('message')} ({error.get('code')})")
            raise ApiError(
                text, status=500, code="server_error", body=answer, method="POST", url=self.url
            )
        result = answer.get("result")
        return result if isinstance(result, dict) else {}

    def _send(self, message: dict[str, Any]) -> Any:
        """POST one message through the client's transports (pacing, pool, retries of 429 / 5xx and
        transport errors, counting); the JSON-RPC answer (or None), or the typed error."""
        try:
            response = self._api.post(self._pacer_host, self.url, message,
                                      headers=self._headers(), auth=self._auth())  # fmt: skip
        except httpx.HTTPError as exc:
            text = self._api.mask(f"{type(exc).__name__}: {exc}")
            raise TransportError(text, method="POST", url=self.url) from None
        logger.debug("MCP %s %s -> %d", message.get("method"), self.url, response.status_code)
        if response.status_code >= 400:
            raise error_from_response(response, method="POST", url=self.url,
                                      secrets=self._api.secrets)  # fmt: skip
        return self._answer(response, message)

    def _answer(self, response: httpx.Response, message: dict[str, Any]) -> Any:
        if message.get("method") == "initialize":
            self._session_id = response.headers.get("Mcp-Session-Id")
        if response.status_code == 202 or "id" not in message:
            return None
        kind = response.headers.get("content-type", "")
        try:
            if kind.startswith("text/event-stream"):
                found = [m for m in _sse_messages(response.text) if m.get("id") == message["id"]]
                return found[-1] if found else None
            return response.json()
        except ValueError as exc:
            raise BadResponseError(
                f"MCP answer is not JSON ({exc})", method="POST", url=self.url
            ) from None
