"""Every error a client can get, in one envelope: ``{"error": {"code", "message"}}``.

One table maps hippo's error classes to HTTP statuses; nothing matches on
message text, and an unexpected exception becomes a 500 whose body says
nothing about the server (the traceback goes to the log). Every envelope
leaves its ``code`` in the request's scope, where the access log and the
metrics read it (:mod:`hippo.interfaces.http.access`).

What the log says of an error is its code, its class, the route's template and,
for an unexpected one, where it was raised: never its message, which may quote
what the caller sent (a memory's text, a query).
"""

from __future__ import annotations

import logging
import traceback
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from hippo.errors import (
    ConfigError,
    Conflict,
    EmbedderMismatch,
    Forbidden,
    HippoError,
    InvalidInput,
    MissingDependency,
    NotFound,
    ProviderError,
    StorageError,
    Unauthorized,
)

__all__ = ["ERROR_CODE", "ApiError", "Envelope", "STATUS", "error_response", "install", "route_of", "where_raised"]

log = logging.getLogger("hippo.http")

# Most specific first: the first class an error is an instance of decides.
STATUS: list[tuple[type[HippoError], int]] = [
    (EmbedderMismatch, 503),
    (MissingDependency, 503),
    (ProviderError, 503),
    (StorageError, 503),
    (InvalidInput, 400),
    (NotFound, 404),
    (Conflict, 409),
    (ConfigError, 409),  # the request needs something this server is not configured for
    (Unauthorized, 401),  # no API key, or one the server does not know
    (Forbidden, 403),  # a key that may not reach this agent
]


class ApiError(Exception):
    """An HTTP-level refusal (an unknown route or tool, a malformed request) with its own status and code."""

    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers


ERROR_CODE = "hippo.error_code"  # the scope's key for the code of the envelope sent


class Envelope(JSONResponse):
    """The error envelope; when sent it leaves its code in the request's scope."""

    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None, *,
                 extra: dict[str, Any] | None = None) -> None:
        self.code = code
        super().__init__({"error": {"code": code, "message": message}, **(extra or {})}, status_code=status,
                         headers=headers)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        scope[ERROR_CODE] = self.code
        await super().__call__(scope, receive, send)


def error_response(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Envelope:
    # A message that quotes what the caller sent may hold a lone surrogate, which UTF-8 cannot
    # carry: written escaped, or the refusal itself would fail as a 500.
    message = message.encode("utf-8", "backslashreplace").decode("utf-8")
    return Envelope(status, code, message, headers)


def route_of(scope: Any) -> str:
    """The template of the route a request matched (``/v1/agents/{agent_id}/memories``), never the
    raw path, whose ids (and session ids, block names) are the caller's; ``unmatched`` when none did."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    return path if isinstance(path, str) else "unmatched"


def where_raised(exc: BaseException) -> str:
    """An exception's class and the frames it came through, without its message (which may quote
    the request): the traceback an operator needs, and nothing of what the caller sent."""
    frames = "".join(traceback.format_list(traceback.extract_tb(exc.__traceback__)))
    return f"{type(exc).__module__}.{type(exc).__qualname__} raised at\n{frames.rstrip()}"


def status_of(exc: HippoError) -> int:
    return next((status for cls, status in STATUS if isinstance(exc, cls)), 500)


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "request"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return "; ".join(parts) or "invalid request"


def install(app: FastAPI) -> None:
    @app.exception_handler(HippoError)
    async def hippo_error(request: Request, exc: HippoError) -> Envelope:
        status = status_of(exc)
        if status >= 500:
            log.warning("%s %s: %s (%s)", request.method, route_of(request.scope), exc.code, type(exc).__name__)
        challenge = {"WWW-Authenticate": "Bearer"} if isinstance(exc, Unauthorized) else None
        return error_response(status, exc.code, exc.message, challenge)

    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> Envelope:
        return error_response(exc.status, exc.code, exc.message, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> Envelope:
        return error_response(422, "invalid_request", _validation_message(exc))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Envelope:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return error_response(exc.status_code, code, str(exc.detail), getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Envelope:
        log.error("unhandled error on %s %s: %s", request.method, route_of(request.scope), where_raised(exc))
        return error_response(500, "internal", "internal server error")
