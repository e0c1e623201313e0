"""ASGI middleware that refuses a request before any route sees it: body size, Host header."""

from __future__ import annotations

from typing import Any

from hippo.interfaces.http.errors import error_response

__all__ = ["BodyLimit", "HostCheck", "LOOPBACK_HOSTS"]

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


# The most of a refused body read (and dropped) before the 413 is sent. A server that answers and
# closes while the client is still sending resets the connection: a client still writing (or whose
# connection asked to be closed) then sees the reset, not the 413. Beyond this the server answers
# at once and closes: a client sending that much gets the reset.
DRAIN_BYTES = 64 * 1024 * 1024


class BodyLimit:
    """Refuse request bodies over ``limit`` bytes with 413, whether declared or streamed (chunked).

    A streamed body is read in full (at most ``limit`` bytes are kept) before the app sees it:
    refusing in the middle of the app's own read would surface as the framework's 400. A refused
    body is read to its end (up to ``DRAIN_BYTES``, nothing kept) before the 413, so that the
    client, still sending, gets the answer rather than a reset connection."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or ())
        declared = headers.get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            # A client that waits for "100 Continue" has sent nothing yet: answer at once, and close.
            waiting = headers.get(b"expect", b"").lower() == b"100-continue"
            drain = declared.isdigit() and int(declared) <= DRAIN_BYTES and not waiting
            return await self._refuse(scope, receive, send, more=True, drain=drain)
        if declared is not None:
            return await self.app(scope, receive, send)
        messages, seen = [], 0
        while True:
            message = await receive()
            messages.append(message)
            seen += len(message.get("body", b""))
            more = message["type"] == "http.request" and message.get("more_body", False)
            if seen > self.limit:
                return await self._refuse(scope, receive, send, more=more, read=seen)
            if not more:
                break

        async def replay() -> Any:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, scope: Any, receive: Any, send: Any, *, more: bool, drain: bool = True,
                      read: int = 0) -> None:
        while more and drain and read <= DRAIN_BYTES:  # the rest of the body, read and dropped
            message = await receive()
            read += len(message.get("body", b""))
            more = message["type"] == "http.request" and message.get("more_body", False)
        closing = {"connection": "close"} if more else None  # not read to its end: this connection ends
        await error_response(413, "too_large", f"request body over {self.limit} bytes", closing)(scope, receive,
                                                                                                  send)


class HostCheck:
    """Answer 421 to a request whose Host header names another machine (DNS rebinding: a web page
    on evil.example whose name now resolves to 127.0.0.1 must not reach a loopback server)."""

    def __init__(self, app: Any, allowed: frozenset[str]) -> None:
        self.app, self.allowed = app, allowed

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and _hostname(dict(scope.get("headers") or ()).get(b"host", b"")) \
                not in self.allowed:
            response = error_response(421, "misdirected_request",
                                      "this server answers only to the names of this machine's loopback address")
            return await response(scope, receive, send)
        await self.app(scope, receive, send)


def _hostname(header: bytes) -> str:
    """``localhost:8000`` -> ``localhost``, ``[::1]:8000`` -> ``::1``."""
    host = header.decode("latin-1").strip().lower()
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host
