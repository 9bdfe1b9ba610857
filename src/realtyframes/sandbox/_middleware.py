"""The outermost middleware: quotas, rate-limit headers and ``Keep-Alive`` on every answer,
last-resort 500.

>>> LimitsMiddleware.__name__
'LimitsMiddleware'
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from realtyframes.sandbox._errors import SandboxError
from realtyframes.sandbox._negotiate import ErrorRenderer

if TYPE_CHECKING:
    from realtyframes.sandbox._admin import SandboxAdmin

__all__ = ["KEEP_ALIVE_SECONDS", "LimitsMiddleware"]

#: Seconds the sandbox keeps an idle connection open (uvicorn's ``timeout_keep_alive``), said in
#: every answer's ``Keep-Alive: timeout=N``. Above the clients' own idle times (Node's fetch 4 s,
#: httpx 5 s), so a client always closes an idle connection first and never sends on one the
#: server is closing ("other side closed").
KEEP_ALIVE_SECONDS = 65
_KEEP_ALIVE = (b"keep-alive", f"timeout={KEEP_ALIVE_SECONDS}".encode())

_log = logging.getLogger("realtyframes.sandbox")


class LimitsMiddleware:
    """Counts each request against its credential's quota and stamps the headers on every answer.

    Also turns an unhandled exception into a 500 ``server_error`` answer (no stack trace).
    Paths under ``exempt`` (the RESO face, which counts its vendor's own budgets) pass untouched.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        admin: SandboxAdmin,
        render_error: ErrorRenderer,
        exempt: tuple[str, ...] = (),
    ) -> None:
        self.app = app
        self.admin = admin
        self.render_error = render_error
        self.exempt = exempt

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.exempt and scope["path"].startswith(self.exempt):
            await self._answer(scope, receive, send, {})
            return
        request = Request(scope)
        legacy = scope["path"] in self.render_error.legacy_paths
        api_key = request.query_params.get("api_key") if legacy else None
        client = scope.get("client")
        host = str(client[0]) if client else "unknown"
        key, plan = self.admin.auth.quota_identity(request.headers, api_key, host)
        assert self.admin.limiter is not None
        quota = self.admin.limiter.hit(key, plan)
        scope["rf.quota"] = quota
        rate_headers = quota.headers()
        if not quota.allowed:
            window = f"{quota.window:g}"
            detail = f"quota of {quota.limit} requests per {window} s used up; retry in {quota.retry_after} s"
            response = self.render_error(
                scope,
                SandboxError(429, detail),
                {
                    **rate_headers,
                    "Retry-After": str(quota.retry_after),
                    "Keep-Alive": _KEEP_ALIVE[1].decode(),
                },
            )
            await response(scope, receive, send)
            return
        await self._answer(scope, receive, send, rate_headers)

    async def _answer(
        self, scope: Scope, receive: Receive, send: Send, rate_headers: dict[str, str]
    ) -> None:
        """Run the app, adding ``rate_headers``; an unhandled exception becomes a 500 answer."""
        started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                present = {k.lower() for k, _ in message.get("headers", [])}
                extra = [
                    (k.lower().encode(), v.encode())
                    for k, v in rate_headers.items()
                    if k.lower().encode() not in present
                ]
                if _KEEP_ALIVE[0] not in present:
                    extra.append(_KEEP_ALIVE)
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except Exception as exc:
            if started:
                raise  # too late for an error answer: the connection is dropped
            _log.error("unhandled error on %s %s", scope["method"], scope["path"], exc_info=exc)
            response = self.render_error(scope, SandboxError(500))
            await response(scope, receive, send_with_headers)
