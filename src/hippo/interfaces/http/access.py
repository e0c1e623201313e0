"""Each request's id, its line in the access log, and its count in the metrics.

:class:`Access` is the app's outermost middleware: it takes the request id from ``X-Request-ID``
(a short id of safe characters; anything else is replaced by one it makes), returns it in the
answer's ``X-Request-ID`` (errors included), and once the answer is sent writes one line on the
``hippo.access`` logger: time, request id, method, route template, agent, status, duration in ms
and the error envelope's code, if any. With ``log_format = "json"`` the line is a JSON object;
otherwise a plain line. A line holds nothing the caller wrote but the agent's id and the request
id: no path beyond its template, no query, no body, no key.

:func:`configure_logging` is ``hippo serve``'s set-up: with ``json`` every line it writes on
stderr is one JSON object (the access lines, the start-up lines, uvicorn's, warnings), and an
exception is logged by its class and frames, never its message.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
import uuid
from contextvars import ContextVar
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable

from hippo.errors import ConfigError
from hippo.interfaces.http.errors import ERROR_CODE, route_of, where_raised

if TYPE_CHECKING:
    from hippo.interfaces.http.metrics import Metrics

__all__ = ["LOG_FORMATS", "REQUEST_ID", "Access", "JsonFormatter", "check_log_format", "configure_logging",
           "request_id"]

access_log = logging.getLogger("hippo.access")
LOG_FORMATS = ("text", "json")
REQUEST_ID: ContextVar[str | None] = ContextVar("hippo_request_id", default=None)
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")


def check_log_format(value: str) -> str:
    if value not in LOG_FORMATS:
        raise ConfigError(f"setting log_format must be 'text' or 'json', got {value!r}")
    return value


def request_id(given: bytes | None) -> str:
    """The caller's ``X-Request-ID`` when it is a short id of safe characters (letters, digits,
    ``. _ : -``, at most 64), else a new one: nothing else of a header reaches a log line."""
    if given:
        text = given.decode("latin-1")
        if _SAFE_ID.fullmatch(text):
            return text
    return uuid.uuid4().hex


class Access:
    """ASGI middleware: the request id in and out, one access line, the request's metrics."""

    def __init__(self, app: Any, metrics: "Metrics", log_format: str) -> None:
        self.app, self.metrics, self.json = app, metrics, check_log_format(log_format) == "json"

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        rid = request_id(dict(scope.get("headers") or ()).get(b"x-request-id"))
        token = REQUEST_ID.set(rid)
        began, status = time.perf_counter(), 500

        async def stamped(message: Any) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                kept = [(k, v) for k, v in message.get("headers", ()) if k.lower() != b"x-request-id"]
                message = {**message, "headers": [*kept, (b"x-request-id", rid.encode("ascii"))]}
            await send(message)

        try:
            await self.app(scope, receive, stamped)
        finally:
            self._answered(scope, rid, status, time.perf_counter() - began)
            REQUEST_ID.reset(token)

    def _answered(self, scope: Any, rid: str, status: int, seconds: float) -> None:
        route, method = route_of(scope), scope.get("method", "")
        params = scope.get("path_params") or {}
        error = scope.get(ERROR_CODE)
        self.metrics.request(method=method, route=route, status=status, seconds=seconds, name=params.get("name"),
                             error=error)
        fields = {"time": _now(), "request_id": rid, "method": method, "route": route,
                  "agent": params.get("agent_id"), "status": status, "duration_ms": round(seconds * 1000, 2),
                  "error": error}
        if self.json:
            access_log.info(json.dumps(fields), extra={"access": True})
        else:
            access_log.info("%s %s %s %.1f ms request %s%s%s", method, route, status, seconds * 1000, rid,
                            f" agent {fields['agent']}" if fields["agent"] else "", f" error {error}" if error else "",
                            extra={"access": True})


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time, level, logger, message, the request id of the request it
    belongs to (if any), and an exception's class and frames (never its message). An access line
    is JSON already and is written as it is."""

    def format(self, record: logging.LogRecord) -> str:
        if getattr(record, "access", False) and record.name == access_log.name:
            message = record.getMessage()
            if message.startswith("{"):
                return message
        line: dict[str, Any] = {"time": datetime.fromtimestamp(record.created, timezone.utc).isoformat(
            timespec="milliseconds").replace("+00:00", "Z"), "level": record.levelname.lower(),
            "logger": record.name, "message": record.getMessage()}
        rid = REQUEST_ID.get()
        if rid is not None:
            line["request_id"] = rid
        if record.exc_info and record.exc_info[1] is not None:
            line["exception"] = where_raised(record.exc_info[1])
        return json.dumps(line)


def configure_logging(log_format: str) -> Callable[[str], None] | None:
    """Set up the process's logging for ``hippo serve``. ``text``: as before (nothing changes,
    None returned). ``json``: one handler on stderr writes every record as one JSON line, the
    ``hippo`` loggers at INFO (an access line per request), warnings captured; returns the
    function that writes a start-up line the same way. The handlers already writing to stderr (the
    command line's) write JSON from then on; calling it again adds no second handler."""
    if check_log_format(log_format) == "text":
        return None
    root = logging.getLogger()
    on_stderr = [h for h in root.handlers if isinstance(h, logging.StreamHandler)
                 and getattr(h, "stream", None) in (sys.stderr, sys.__stderr__)]
    for handler in on_stderr:  # the command line's own ("hippo: ..."): the same lines, as JSON now
        handler.setFormatter(JsonFormatter())
    if not on_stderr:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(JsonFormatter())
        root.addHandler(handler)
    if root.level > logging.WARNING or root.level == logging.NOTSET:
        root.setLevel(logging.WARNING)
    logging.getLogger("hippo").setLevel(logging.INFO)
    logging.captureWarnings(True)
    say = logging.getLogger("hippo.serve")
    return say.info
