"""An unexpected exception ends as one 500 answer, and the connection lives on.

Starlette's own error middleware (the app's outermost layer) sends the same 500 envelope, then
raises the exception again, for the server to log; uvicorn closes the connection when it does.
A client holding that kept-alive connection had its next request reset: a fuzzed ``put_item``
got its 500, and the call after it ``Connection reset by peer`` (issue 46). :class:`Contained`
sits just outside the routes and stops the exception there, after logging it; the handlers of
:mod:`hippo.interfaces.http.errors` still answer every error they know.
"""

from __future__ import annotations

import logging
from typing import Any

from hippo.interfaces.http.errors import error_response, route_of, where_raised

__all__ = ["Contained"]

log = logging.getLogger("hippo.http")


class Contained:
    """ASGI middleware: an exception no handler took becomes the 500 envelope (the traceback goes
    to the log, nothing about the server to the client), unless part of the answer is already
    out, when only closing the connection can end it."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = False

        async def watched(message: Any) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except Exception as exc:
            if started:
                raise
            log.error("unhandled error on %s %s: %s", scope.get("method"), route_of(scope), where_raised(exc))
            await error_response(500, "internal", "internal server error")(scope, receive, send)
