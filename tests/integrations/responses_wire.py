"""A real HTTP server on 127.0.0.1 speaking the OpenAI Responses API (``POST /v1/responses``, not
streamed), its answers decided by a script: the OpenAI Agents SDK's own ``OpenAIResponsesModel``
and the ``openai`` client talk to it as they would to OpenAI, so a test runs the SDK's real
request building, response parsing and tool-call loop, with no network.

    with ResponsesWire(script) as wire:
        model = wire.model()                 # an OpenAIResponsesModel pointed at the server
        ...
        wire.requests                         # every request body, as JSON

``script(request)`` gets the request body and returns the output items: build them with
:func:`say` (an assistant message) and :func:`call` (a function call).
"""

from __future__ import annotations

import itertools
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

__all__ = ["ResponsesWire", "call", "say"]

Script = Callable[[dict[str, Any]], list[dict[str, Any]]]
_ids = itertools.count(1)


def say(text: str) -> dict[str, Any]:
    """An assistant message item, as the Responses API returns one."""
    return {"type": "message", "id": f"msg_{next(_ids)}", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A function call item: the model asks for tool ``name`` with ``arguments``."""
    n = next(_ids)
    return {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": name,
            "arguments": json.dumps(arguments), "status": "completed"}


def _response(request: dict[str, Any], output: list[dict[str, Any]]) -> dict[str, Any]:
    return {"id": f"resp_{next(_ids)}", "object": "response", "created_at": 1_700_000_000, "status": "completed",
            "model": request.get("model", "scripted"), "output": output, "parallel_tool_calls": True,
            "tool_choice": "auto", "tools": [], "temperature": 1.0, "top_p": 1.0, "error": None,
            "incomplete_details": None, "instructions": None, "metadata": {},
            "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                      "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}}


class ResponsesWire:
    """The server (see the module's docstring); a context manager that starts and stops it."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        wire = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                if not self.path.endswith("/responses"):
                    return self._answer(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                wire.requests.append(body)
                try:
                    answer = _response(body, wire.script(body))
                except Exception as exc:  # the script's own failure, shown to the client and the test
                    return self._answer(500, {"error": {"message": f"script failed: {exc!r}", "type": "server"}})
                self._answer(200, answer)

            def _answer(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.send_header("x-should-retry", "false")
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "ResponsesWire":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def model(self) -> Any:
        """The SDK's Responses model over this server (a real ``AsyncOpenAI`` client, no retries)."""
        from agents import OpenAIResponsesModel
        from openai import AsyncOpenAI

        client = AsyncOpenAI(base_url=self.url, api_key="test-key", max_retries=0)
        return OpenAIResponsesModel(model="scripted", openai_client=client)
