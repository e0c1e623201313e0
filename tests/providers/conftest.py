"""A real HTTP server on 127.0.0.1 that speaks the Ollama and OpenAI embedding wire formats."""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator

import numpy as np
import pytest


def wire_vector(text: str, dimension: int) -> list[float]:
    """A deterministic, deliberately unnormalised vector for ``text``."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
    return (np.random.default_rng(seed).normal(size=dimension) * 3.0).tolist()


@dataclass
class Received:
    """One request as the server saw it."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class WireServer:
    """State shared with the handler; tests flip ``mode`` and read ``received``."""

    url: str = ""
    mode: str = "ok"  # ok | 500 | 400 | 429 | close | slow | garbage
    dimension: int = 8
    shuffle: bool = False  # OpenAI: return data items in reverse order
    received: list[Received] = field(default_factory=list)

    def reset(self) -> None:
        self.mode, self.dimension, self.shuffle = "ok", 8, False
        self.received.clear()

    def expected(self, texts: list[str], dimension: int = 8) -> np.ndarray:
        """What a client should return for ``texts``: the server's vectors, normalised."""
        rows = np.asarray([wire_vector(t, dimension) for t in texts], dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    def inputs(self) -> list[list[str]]:
        """The ``input`` list of each request received, in order."""
        return [r.body.get("input") for r in self.received]


def _handler(state: WireServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # keep test output clean
            pass

        def _send(self, status: int, body: Any) -> None:
            raw = json.dumps(body).encode() if not isinstance(body, bytes) else body
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            state.received.append(Received(self.path, dict(self.headers), body))
            if state.mode == "close":
                # Hang up without any response: the client sees a dropped connection.
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if state.mode == "slow":
                time.sleep(1.0)
            if state.mode in ("500", "429"):
                return self._send(int(state.mode), {"error": "server is overloaded"})
            if state.mode == "400":
                return self._send(400, {"error": 'model "nope" not found, try pulling it first'})
            if state.mode == "garbage":
                return self._send(200, b"<html>not json</html>")
            texts = body.get("input", [])
            if self.path == "/api/embed":
                vectors = [wire_vector(t, state.dimension) for t in texts]
                return self._send(200, {"model": body.get("model"), "embeddings": vectors})
            if self.path == "/v1/embeddings":
                dim = body.get("dimensions", state.dimension)
                data = [
                    {"object": "embedding", "index": i, "embedding": wire_vector(t, dim)}
                    for i, t in enumerate(texts)
                ]
                if state.shuffle:
                    data.reverse()
                return self._send(200, {"object": "list", "data": data, "model": body.get("model")})
            self._send(404, {"error": {"message": f"no route {self.path}"}})

    return Handler


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # hung-up clients in the "close" and "slow" modes are expected


@pytest.fixture(scope="session")
def _wire_server_process() -> Iterator[WireServer]:
    state = WireServer()
    server = _QuietServer(("127.0.0.1", 0), _handler(state))
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield state
    server.shutdown()
    server.server_close()


@pytest.fixture
def wire(_wire_server_process: WireServer) -> WireServer:
    """The running wire server, reset to answer normally and with no requests recorded."""
    _wire_server_process.reset()
    return _wire_server_process


@pytest.fixture
def closed_port_url() -> str:
    """A URL on 127.0.0.1 where nothing listens, so connecting is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"
