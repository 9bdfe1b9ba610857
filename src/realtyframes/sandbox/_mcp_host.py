"""Hosting an MCP server of the official ``mcp`` SDK inside the sandbox's Starlette app.

:class:`McpHost` is the ASGI app routed at ``/mcp`` and ``/docs/mcp``: the streamable HTTP
transport of the SDK (``StreamableHTTPSessionManager``, stateful: ``Mcp-Session-Id``, ``DELETE``
ends a session), with what the sandbox adds around it:

- the MCP server is made on the first request (importing the SDK takes a good part of a second:
  a sandbox that is never asked for MCP starts without it), and the session managers start then,
  in the serving event loop (the sandbox runs uvicorn with ``lifespan="off"``, and a mounted app's
  lifespan never runs anyway);
- two managers, one answering ``application/json`` and one ``text/event-stream``: a session gets
  the kind its ``initialize`` request accepts (an Accept of ``application/json`` alone gets JSON);
- an optional ``guard`` that may answer instead of MCP (the product host's 401).

>>> McpHost.__name__
'McpHost'
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

__all__ = ["SESSION_HEADER", "Guard", "McpHost", "wants_sse"]

SESSION_HEADER = "mcp-session-id"
#: Answers instead of MCP when it returns a Response (e.g. 401), else lets the request through.
Guard = Callable[[Scope], Awaitable[Response | None]]


def wants_sse(accept: str) -> bool:
    """Whether an Accept header takes ``text/event-stream`` (or any type).

    >>> wants_sse("application/json, text/event-stream"), wants_sse("application/json")
    (True, False)
    """
    types = {part.split(";")[0].strip().lower() for part in accept.split(",")}
    return bool(types & {"text/event-stream", "text/*", "*/*"})


class _Managers:
    """The JSON and SSE session managers of one event loop, and which owns each session."""

    def __init__(self, server: Server[Any]) -> None:
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        self.json = StreamableHTTPSessionManager(server, json_response=True)
        self.sse = StreamableHTTPSessionManager(server, json_response=False)
        self.sessions: dict[str, StreamableHTTPSessionManager] = {}
        self.ready = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    async def run(self) -> None:
        async with contextlib.AsyncExitStack() as stack:
            await stack.enter_async_context(self.json.run())
            await stack.enter_async_context(self.sse.run())
            self.ready.set()
            await asyncio.Event().wait()  # until the loop shuts down and cancels this task

    def pick(self, headers: Headers) -> StreamableHTTPSessionManager:
        session = headers.get(SESSION_HEADER)
        if session is not None:
            return self.sessions.get(session, self.sse)  # unknown: the SDK's 404
        return self.sse if wants_sse(headers.get("accept", "")) else self.json


async def _buffered(receive: Receive) -> Receive | None:
    """A request's body read whole, replayed as one message to whoever reads it next; None when
    the client went away before sending all of it (a client timed out on a slow first request):
    nothing to answer, and not the SDK's "Error handling POST request" traceback on stderr."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if replayed:
            return await receive()
        replayed = True
        return {"type": "http.request", "body": b"".join(chunks), "more_body": False}

    return replay


class McpHost:
    """ASGI app serving one MCP ``Server`` over streamable HTTP (see the module docstring)."""

    def __init__(self, make_server: Callable[[], Server[Any]], guard: Guard | None = None) -> None:
        self._make_server = make_server
        self._server: Server[Any] | None = None
        self.guard = guard
        self._loop: asyncio.AbstractEventLoop | None = None
        self._managers: _Managers | None = None

    @property
    def server(self) -> Server[Any]:
        """The MCP server, made on first use."""
        if self._server is None:
            self._server = self._make_server()
        return self._server

    async def _started(self) -> _Managers:
        loop = asyncio.get_running_loop()
        if self._managers is None or self._loop is not loop:
            # A new loop (the app served again): new managers; sessions never cross loops.
            managers = _Managers(self.server)
            managers.task = loop.create_task(managers.run(), name="mcp session managers")
            self._loop, self._managers = loop, managers
        managers = self._managers
        await managers.ready.wait()
        return managers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.guard is not None and (refusal := await self.guard(scope)) is not None:
            await refusal(scope, receive, send)
            return
        if scope.get("method") == "POST":
            body = await _buffered(receive)
            if body is None:
                return
            receive = body
        managers = await self._started()
        headers = Headers(scope=scope)
        manager = managers.pick(headers)

        session = headers.get(SESSION_HEADER)

        async def note_session(message: Message) -> None:
            if message["type"] == "http.response.start":
                for name, value in message.get("headers", []):
                    if name.lower() == SESSION_HEADER.encode():
                        managers.sessions.setdefault(value.decode("latin-1"), manager)
                if session is not None and message["status"] == 404:
                    managers.sessions.pop(session, None)  # ended (idle timeout): forget it
            await send(message)

        await manager.handle_request(scope, receive, note_session)
        if scope.get("method") == "DELETE" and session is not None:
            managers.sessions.pop(session, None)
