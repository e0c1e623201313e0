"""A body over the server's limit gets 413, never a reset connection: declared (Content-Length) or
streamed (chunked), from a client that keeps its connection or asks to close it, and however slowly
it sends, against a real server on loopback (1.2 MB over the default limit of 1,000,000 bytes)."""

from __future__ import annotations

import json
import socket
import time
from typing import Iterator

import httpx
import pytest

pytest.importorskip("fastapi")
import hippo  # noqa: E402
from hippo.interfaces.http.server import BackgroundServer  # noqa: E402
from hippo.providers.fake import FakeEmbedder  # noqa: E402

BODY = b'{"content": "' + b"x" * 1_199_900 + b'"}'  # 1.2 MB of one bare memory
PIECE = 64 * 1024
HEAD = ("POST /v1/agents/default/memories HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        "{connection}{length}\r\n")


@pytest.fixture
def server(tmp_path) -> Iterator[tuple[str, int]]:
    mem = hippo.open(tmp_path / "h.db", agent_id="default", embedder=FakeEmbedder())
    with BackgroundServer(mem) as url:
        yield url, int(url.rsplit(":", 1)[1])


def _pieces(chunked: bool) -> Iterator[bytes]:
    for start in range(0, len(BODY), PIECE):
        piece = BODY[start:start + PIECE]
        yield b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece
    if chunked:
        yield b"0\r\n\r\n"


def _answer(sock: socket.socket) -> tuple[int, dict]:
    received = b""
    while b"\r\n\r\n" not in received or len(received.partition(b"\r\n\r\n")[2]) < _length(received):
        more = sock.recv(65536)
        assert more, received
        received += more
    head, _, body = received.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body[:_length(received)])


def _length(received: bytes) -> int:
    for line in received.partition(b"\r\n\r\n")[0].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return 1 << 30


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
@pytest.mark.parametrize("close", [False, True], ids=["keep-alive", "connection-close"])
def test_a_slow_client_over_the_limit_gets_413_from_a_raw_socket(server, chunked, close):
    """The client pauses after the first 1.1 MB, past the limit: the server, which has seen enough
    to refuse, must not answer and close before the client has sent the rest."""
    _, port = server
    length = "Transfer-Encoding: chunked\r\n" if chunked else f"Content-Length: {len(BODY)}\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(HEAD.format(connection="Connection: close\r\n" if close else "", length=length).encode())
        for number, piece in enumerate(_pieces(chunked)):
            sock.sendall(piece)  # a reset shows here (BrokenPipeError, ConnectionResetError)
            if number == 17:  # 1.1 MB sent
                time.sleep(0.5)
        status, body = _answer(sock)
    assert status == 413 and body["error"]["code"] == "too_large"


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_httpx_sending_1_2_mb_gets_413_and_the_connection_still_serves(server, chunked):
    url, _ = server

    def slowly() -> Iterator[bytes]:
        for number, start in enumerate(range(0, len(BODY), PIECE)):
            if number == 17:
                time.sleep(0.5)
            yield BODY[start:start + PIECE]

    declared = {} if chunked else {"Content-Length": str(len(BODY))}
    with httpx.Client(base_url=url, timeout=30) as client:
        for close in (True, False):
            headers = {"Content-Type": "application/json", **declared, **({"Connection": "close"} if close else {})}
            refused = client.post("/v1/agents/default/memories", content=slowly(), headers=headers)
            assert refused.status_code == 413 and refused.json()["error"]["code"] == "too_large"
        assert client.post("/v1/agents/default/memories", json={"content": "small"}).status_code == 201
        assert client.post("/v1/agents/default/memories", content=BODY,
                           headers={"Content-Type": "application/json"}).status_code == 413


def test_a_client_waiting_for_100_continue_is_answered_at_once(server):
    _, port = server
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(HEAD.format(connection="Expect: 100-continue\r\n", length=f"Content-Length: {len(BODY)}\r\n")
                     .encode())
        status, body = _answer(sock)  # without having sent the body
    assert status == 413 and body["error"]["code"] == "too_large"
