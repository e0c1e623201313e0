"""A real HTTP server on 127.0.0.1 speaking the OpenAI and Anthropic chat wire formats.

The official SDKs talk to it exactly as they would to the real APIs, so tests
exercise the SDK request building, response parsing and error classes.

Use it as a pytest fixture (import the fixture into the test module)::

    from llm_wire import llm_wire_fixture  # noqa: F401  (registers the ``llm_wire`` fixture)

    def test_something(llm_wire):
        llm_wire.reply('{"facts": []}', ("status", 500, "overloaded"), "drop")
        llm = llm_wire.openai_llm()          # or llm_wire.anthropic_llm()
        ...
        assert llm_wire.requests[0].system == "..."

or as a context manager: ``with LLMWireServer() as server: ...``.

Each request consumes the next item of ``replies``; an item is

* ``"some text"`` or ``("text", "some text")``: a 200 answer in the protocol's
  success envelope (use the tuple form to answer the literal text ``"drop"``);
* ``("status", code, error)``: an HTTP error; ``error`` is a message wrapped in
  the protocol's error envelope, or a dict sent as the body unchanged; an optional
  fourth item is a dict of response headers (``{"retry-after": "0"}``);
* ``"drop"``: read the request, then hang up without answering;
* ``("raw", code, body)``: ``body`` (dict, list or bytes) sent as it is, for
  malformed envelopes (empty ``choices``, null ``content``, non-JSON);
* ``("slow", seconds, reply)``: wait, then answer with ``reply``;
* a callable ``(WireRequest) -> reply``: decide from what was sent.

With the queue empty the server answers ``default`` if set, else HTTP 500
``llm_wire: no reply queued`` (with ``x-should-retry: false`` so SDKs do not retry).
SDK retries are real: with ``max_retries > 0`` a 429/5xx/drop consumes the next reply.
The protocol is chosen by path: ``.../chat/completions`` is OpenAI, ``.../messages``
is Anthropic.
"""

from __future__ import annotations

import itertools
import json
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterator, Union

import pytest

__all__ = ["DROP", "LLMWireServer", "WireRequest", "llm_wire_fixture", "word_count"]

DROP = "drop"
Reply = Union[str, tuple, Callable[["WireRequest"], Any]]

_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}
_NO_REPLY = ("status", 500, "llm_wire: no reply queued", {"x-should-retry": "false"})
_OPENAI_ERROR_CODES = {401: "invalid_api_key", 404: "model_not_found", 429: "rate_limit_exceeded"}


def word_count(text: str) -> int:
    """The server's crude token count, so tests can predict ``usage``."""
    return len(text.split())


def _text_of(content: Any) -> str:
    """A message's text, whether ``content`` is a string or a list of text blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


@dataclass
class WireRequest:
    """One request as the server saw it; header names are lower-cased."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def protocol(self) -> str:
        """``openai``, ``anthropic`` or ``unknown``, from the path."""
        if self.path.rstrip("/").endswith("/chat/completions"):
            return "openai"
        if self.path.rstrip("/").endswith("/messages"):
            return "anthropic"
        return "unknown"

    @property
    def system(self) -> str | None:
        """The system prompt wherever the protocol puts it."""
        if self.protocol == "anthropic":
            system = self.body.get("system")
            return None if system is None else _text_of(system)
        found = [_text_of(m.get("content")) for m in self.body.get("messages", []) if m.get("role") == "system"]
        return "\n".join(found) if found else None

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The conversation without system messages, as sent."""
        return [m for m in self.body.get("messages", []) if m.get("role") != "system"]

    @property
    def prompt_text(self) -> str:
        """System prompt and every message's text, space-joined (what usage counts)."""
        parts = [self.system or ""] + [_text_of(m.get("content")) for m in self.messages]
        return " ".join(p for p in parts if p)


class LLMWireServer:
    """A loopback OpenAI/Anthropic chat server fed from a queue of replies."""

    def __init__(self) -> None:
        self.requests: list[WireRequest] = []
        self.replies: deque[Reply] = deque()
        self.default: Reply | None = None
        self.url = ""
        self._server: _QuietServer | None = None
        self._ids = itertools.count(1)

    # -- lifecycle -----------------------------------------------------------------

    def start(self) -> "LLMWireServer":
        self._server = _QuietServer(("127.0.0.1", 0), _handler(self))
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        # A short poll interval keeps stop() (and so each test's teardown) quick.
        threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> "LLMWireServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- conveniences ----------------------------------------------------------------

    @property
    def openai_base_url(self) -> str:
        """What to pass as an OpenAI ``base_url`` (the SDK appends ``/chat/completions``)."""
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        """What to pass as an Anthropic ``base_url`` (the SDK appends ``/v1/messages``)."""
        return self.url

    @property
    def last(self) -> WireRequest:
        """The most recent request."""
        return self.requests[-1]

    def reply(self, *items: Reply) -> "LLMWireServer":
        """Queue replies, answered in order."""
        self.replies.extend(items)
        return self

    def reset(self) -> None:
        self.requests.clear()
        self.replies.clear()
        self.default = None

    def openai_llm(self, model: str = "gpt-wire", **options: Any) -> Any:
        """An ``OpenAILLM`` pointed here, with SDK retries off so failures are immediate."""
        from hippo.providers.openai import OpenAILLM

        options = {"api_key": "sk-wire", "max_retries": 0, "timeout": 5.0, **options}
        return OpenAILLM(model, base_url=self.openai_base_url, **options)

    def anthropic_llm(self, model: str = "claude-wire", **options: Any) -> Any:
        """An ``AnthropicLLM`` pointed here, with SDK retries off so failures are immediate."""
        from hippo.providers.anthropic import AnthropicLLM

        options = {"api_key": "sk-ant-wire", "max_retries": 0, "timeout": 5.0, **options}
        return AnthropicLLM(model, base_url=self.anthropic_base_url, **options)

    # -- building answers ----------------------------------------------------------

    def _next_reply(self, request: WireRequest) -> Reply:
        try:
            reply = self.replies.popleft()
        except IndexError:
            reply = self.default if self.default is not None else _NO_REPLY
        while callable(reply):
            reply = reply(request)
        return reply

    def success_body(self, request: WireRequest, text: str) -> dict[str, Any]:
        """The protocol's 200 envelope around ``text``; usage counts words."""
        model = request.body.get("model", "unknown")
        prompt, completion = word_count(request.prompt_text), word_count(text)
        n = next(self._ids)
        if request.protocol == "anthropic":
            return {
                "id": f"msg_wire_{n}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": prompt, "output_tokens": completion},
            }
        return {
            "id": f"chatcmpl-wire-{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
        }

    @staticmethod
    def error_body(request: WireRequest, status: int, error: Any) -> Any:
        """The protocol's error envelope around a message (a dict is passed through)."""
        if isinstance(error, (dict, list, bytes)):
            return error
        message = str(error) if error is not None else f"llm_wire error {status}"
        if request.protocol == "anthropic":
            kind = _ANTHROPIC_ERROR_TYPES.get(status, "api_error")
            return {"type": "error", "error": {"type": kind, "message": message}}
        kind = "invalid_request_error" if status < 500 else "server_error"
        return {"error": {"message": message, "type": kind, "code": _OPENAI_ERROR_CODES.get(status)}}


def _handler(state: LLMWireServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # keep test output clean
            pass

        def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
            raw = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(raw)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {"_unparsed": raw.decode("utf-8", "replace")}
            request = WireRequest(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            state.requests.append(request)
            if request.protocol == "unknown":
                return self._send(404, {"error": {"message": f"llm_wire: no route {self.path}"}})
            self._answer(request, state._next_reply(request))

        def _answer(self, request: WireRequest, reply: Any) -> None:
            if reply == DROP:
                # Hang up without a response: the client sees a dropped connection.
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if isinstance(reply, str):
                return self._send(200, state.success_body(request, reply))
            if not isinstance(reply, tuple) or not reply:
                raise TypeError(f"llm_wire: not a reply: {reply!r}")
            kind = reply[0]
            if kind == "text":
                return self._send(200, state.success_body(request, reply[1]))
            if kind == "status":
                status, error = reply[1], reply[2] if len(reply) > 2 else None
                headers = reply[3] if len(reply) > 3 else None
                return self._send(status, state.error_body(request, status, error), headers)
            if kind == "raw":
                return self._send(reply[1], reply[2])
            if kind == "slow":
                time.sleep(reply[1])
                return self._answer(request, reply[2])
            raise TypeError(f"llm_wire: unknown reply kind {kind!r}")

    return Handler


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients that hang up (drops, timeouts) are expected


# Named apart from the fixture so importing it does not shadow test parameters (ruff F811).
@pytest.fixture(name="llm_wire")
def llm_wire_fixture() -> Iterator[LLMWireServer]:
    """A fresh server for one test: no replies queued, no requests recorded."""
    with LLMWireServer() as server:
        yield server
