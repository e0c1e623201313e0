"""The MCP server, driven by the official MCP client: `hippo mcp` over stdio and over streamable HTTP."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

import hippo  # noqa: E402
from hippo.core.tools.capture import CAPTURE_TOOL_NAMES  # noqa: E402

HIPPO = str(Path(sys.executable).with_name("hippo"))
SEED_TOOLS = ["remember_facts", "store_memory", "replace_memory_block", "append_memory_block",
              "forget_memory", "recall_memories", "recall_memory_block"]


def server_args(db: Path, *extra: str) -> list[str]:
    return ["--db", str(db), "--agent", "alice", *extra, "mcp"]


def env() -> dict[str, str]:
    return {**os.environ, "HF_HUB_OFFLINE": "1"}


async def store_and_recall(client: Client) -> None:
    listed = await client.list_tools()
    assert [t.name for t in listed.tools] == [*SEED_TOOLS, "update_memory", "split_fact", "reinforce_memory",
                                              "demote_memory", "record_experience", *CAPTURE_TOOL_NAMES]
    schemas = {t.name: t.input_schema for t in listed.tools}
    assert schemas["recall_memories"]["required"] == ["query"]

    stored = await client.call_tool("store_memory", {"content": "We chose SQLite with WAL for the embedded store"})
    assert stored.is_error is False and stored.structured_content["action"] == "inserted"
    recalled = await client.call_tool("recall_memories", {"query": "which database did we choose?"})
    memories = json.loads(recalled.content[0].text)["memories"]
    assert memories[0]["id"] == stored.structured_content["id"]
    assert memories[0]["content"] == "We chose SQLite with WAL for the embedded store"

    seen = await client.call_tool("observe_messages", {"session_id": "s-1", "messages": [
        {"role": "user", "id": "m1", "content": "We moved the staging cluster to Frankfurt"}]})
    assert seen.is_error is False and seen.structured_content["accepted"] == 1
    compacted = await client.call_tool("compact_session", {"messages": [{"role": "user", "content": "Fix the build"}]})
    assert compacted.structured_content["summary"].startswith("# Session compaction (hippo)")
    decided = await client.call_tool("record_experience", {"type": "decision", "content": "We moved CI to arm64",
                                                           "context": {"taskId": "ci-7"}})
    assert decided.is_error is False and decided.structured_content["importance"] == 0.8
    unknown = await client.call_tool("record_experience", {"type": "dream", "content": "x"})
    assert unknown.is_error is True and unknown.structured_content["error"]["code"] == "invalid_input"

    missing = await client.call_tool("replace_memory_block", {"key": "human", "old_text": "a", "new_text": "b"})
    assert missing.is_error is True and missing.structured_content["error"]["code"] == "block_not_found"
    bad = await client.call_tool("recall_memories", {"limit": 3})
    assert bad.is_error is True and bad.structured_content["error"]["code"] == "invalid_input"

    await client.call_tool("append_memory_block", {"key": "human", "text": "Name: Kris"})
    resources = await client.list_resources()
    assert [(r.name, r.uri) for r in resources.resources] == [("human", "hippo://blocks/human")]
    read = await client.read_resource("hippo://blocks/human")
    assert read.contents[0].text == "Name: Kris"
    with pytest.raises(MCPError, match="no memory block"):
        await client.read_resource("hippo://blocks/persona")


def test_stdio_server_subprocess(tmp_path):
    db = tmp_path / "mcp.db"
    params = StdioServerParameters(command=HIPPO, args=server_args(db), env=env(), cwd=str(tmp_path))

    async def main() -> None:
        async with Client(params, read_timeout_seconds=60) as client:
            await store_and_recall(client)

    anyio.run(main)
    with hippo.open(db, agent_id="alice") as mem:  # the server wrote a real file, with the local model
        assert [h.content for h in mem.recall_memories("SQLite", touch=False)] == [
            "We chose SQLite with WAL for the embedded store"]
        assert mem.stats().embedder.startswith("local:")


def test_stdio_lists_conversation_when_the_table_exists(tmp_path):
    db = tmp_path / "mcp.db"
    hippo.create_messages_table(db)
    params = StdioServerParameters(command=HIPPO, args=server_args(db, "--embedder", "fake"), env=env())

    async def main() -> list[str]:
        async with Client(params, read_timeout_seconds=60) as client:
            return [t.name for t in (await client.list_tools()).tools]

    assert anyio.run(main) == [*SEED_TOOLS, "recall_conversation", "update_memory", "split_fact",
                                "reinforce_memory", "demote_memory", "record_experience", *CAPTURE_TOOL_NAMES]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"server exited: {proc.stderr.read().decode()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("server did not start")


def test_streamable_http_on_loopback(tmp_path):
    db, port = tmp_path / "mcp.db", free_port()
    cmd = [HIPPO, *server_args(db), "--http", "--port", str(port)]
    proc = subprocess.Popen(cmd, env=env(), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for_port(port, proc)

        async def main() -> None:
            async with Client(f"http://127.0.0.1:{port}/mcp", read_timeout_seconds=60) as client:
                await store_and_recall(client)

        anyio.run(main)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
    assert b"Traceback" not in proc.stderr.read()


def test_http_refuses_a_public_bind_without_consent(tmp_path):
    result = subprocess.run([HIPPO, *server_args(tmp_path / "x.db"), "--http", "--host", "0.0.0.0"],
                            env=env(), capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and "--allow-remote" in result.stderr and "Traceback" not in result.stderr


def _readme_mcp_section() -> str:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    return readme.split("\n## MCP server\n", 1)[1].split("\n## ", 1)[0]


def test_the_documented_configuration_works_with_the_official_client(tmp_path):
    import re
    import shlex

    section = _readme_mcp_section()
    config = json.loads(re.search(r"```json\n(.*?)```", section, re.S).group(1))["mcpServers"]["hippo"]
    claude = shlex.split(re.search(r"\$ claude mcp add hippo -- (.*)", section).group(1))
    assert [config["command"], *config["args"]] == claude  # one agent, one database, in every snippet
    assert "~" in config["args"][config["args"].index("--db") + 1]
    home = tmp_path / "home"
    home.mkdir()
    command = HIPPO if config["command"] == "hippo" else config["command"]  # `hippo` on the user's PATH
    params = StdioServerParameters(command=command, args=config["args"], env={**env(), "HOME": str(home)},
                                   cwd=str(tmp_path))

    async def main() -> None:
        async with Client(params, read_timeout_seconds=60) as client:
            await store_and_recall(client)

    anyio.run(main)
    assert (home / "hippo.db").is_file() and not (tmp_path / "~").exists()
    agent = config["args"][config["args"].index("--agent") + 1]
    with hippo.open(home / "hippo.db", agent_id=agent) as mem:
        assert mem.recall_memories("SQLite", touch=False)[0].content == "We chose SQLite with WAL for the embedded store"


def test_changes_through_mcp_are_recorded_with_its_surface(tmp_path):
    """Each change a tool call makes over MCP, the agent's tools and the capture tools alike, leaves
    its audit record as ``local`` (the MCP endpoint has no keys) through ``mcp``, not ``tools``."""
    from hippo.providers.fake import FakeEmbedder

    db = tmp_path / "mcp.db"
    params = StdioServerParameters(command=HIPPO, args=server_args(db, "--embedder", "fake"), env=env())

    async def main() -> None:
        async with Client(params, read_timeout_seconds=60) as client:
            stored = await client.call_tool("store_memory", {"content": "The staging cluster runs in Frankfurt"})
            memory_id = stored.structured_content["id"]
            for name, arguments in (
                    ("update_memory", {"id": memory_id, "content": "The staging cluster runs in Dublin"}),
                    ("reinforce_memory", {"id": memory_id}),
                    ("append_memory_block", {"key": "human", "text": "Name: Kris"}),
                    ("record_experience", {"type": "decision", "content": "We moved CI to arm64"}),
                    ("observe_messages", {"session_id": "s-1", "messages": [
                        {"role": "user", "id": "m1", "content": "We use pnpm"}]}),
                    ("forget_memory", {"description": "staging cluster Dublin"})):
                answer = await client.call_tool(name, arguments)
                assert answer.is_error is False, (name, answer.structured_content)

    anyio.run(main)
    with hippo.open(db, agent_id="alice", embedder=FakeEmbedder()) as mem:
        records = mem.audit(limit=100).items
        assert mem.verify_audit().ok
    assert list(dict.fromkeys(r.operation for r in reversed(records))) == [  # an experience: one or two
        "store_memory", "update_memory", "reinforce_memory", "append_memory_block", "record_experience",
        "observe", "forget_memory"]
    assert {(r.who, r.surface) for r in records} == {("local", "mcp")}
