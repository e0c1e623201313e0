"""Malformed MCP requests get an answer, never a traceback or silence: through the official
client and through raw JSON-RPC lines written to `hippo mcp` over stdio."""

from __future__ import annotations

import json
import select
import subprocess
import time

import anyio
import pytest

pytest.importorskip("mcp")
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from test_mcp import HIPPO, env, server_args  # noqa: E402

BAD_URIS = ["hippo://blocks/../human", "hippo://blocks/" + "k" * 10_000, "hippo://blocks/human?x=1",
            "hippo://blocks/human\n"]


class RawServer:
    """`hippo mcp` on stdio, spoken to one JSON-RPC line at a time."""

    def __init__(self, db) -> None:
        self.proc = subprocess.Popen([HIPPO, *server_args(db, "--embedder", "fake")], env=env(),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def send(self, line: str) -> None:
        self.proc.stdin.write(line.encode("utf-8") + b"\n")
        self.proc.stdin.flush()

    def answer(self, timeout: float = 10) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.proc.stdout], [], [], deadline - time.monotonic())
            if ready:
                return json.loads(self.proc.stdout.readline())
        raise AssertionError("no answer from the server")

    def initialise(self) -> None:
        self.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}))
        assert "result" in self.answer()
        self.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def close(self) -> str:
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        return self.proc.stderr.read().decode()


@pytest.fixture
def raw(tmp_path):
    server = RawServer(tmp_path / "raw.db")
    server.initialise()
    yield server
    server.close()


def test_a_lone_surrogate_in_a_tool_call_is_answered_with_an_error(raw):
    # Written as the JSON escape: valid JSON for Python, refused by the SDK's parser.
    raw.send('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"store_memory",'
             '"arguments":{"content":"bad \\ud800 text"}}}')
    answer = raw.answer()
    assert answer["id"] == 7 and answer["error"]["code"] == -32602 and "surrogate" in answer["error"]["message"]
    raw.send(json.dumps({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
                         "params": {"name": "store_memory", "arguments": {"content": "still serving"}}}))
    assert raw.answer()["result"]["structuredContent"]["action"] == "inserted"


@pytest.mark.parametrize("uri", BAD_URIS, ids=["dot-dot", "10k-key", "query", "newline"])
def test_an_invalid_block_key_is_invalid_params_without_a_traceback(tmp_path, uri):
    server = RawServer(tmp_path / "raw.db")
    server.initialise()
    server.send(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": uri}}))
    answer = server.answer()
    stderr = server.close()
    assert answer["id"] == 3 and answer["error"]["code"] == -32602, answer
    assert "invalid block key" in answer["error"]["message"] and len(answer["error"]["message"]) < 300
    assert "Traceback" not in stderr


def test_the_official_client_gets_invalid_params_for_bad_keys(tmp_path):
    params = StdioServerParameters(command=HIPPO, args=server_args(tmp_path / "c.db", "--embedder", "fake"),
                                   env=env())

    async def main() -> list[int]:
        codes = []
        async with Client(params, read_timeout_seconds=30) as client:
            for uri in BAD_URIS[:3]:
                with pytest.raises(MCPError) as info:
                    await client.read_resource(uri)
                codes.append(info.value.error.code)
            stored = await client.call_tool("store_memory", {"content": "the server still answers"})
            assert stored.is_error is False
        return codes

    assert anyio.run(main) == [-32602] * 3
