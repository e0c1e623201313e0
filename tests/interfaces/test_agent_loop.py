"""The agent loop example: a scripted model uses the tools; the same loop over the real SDKs' wire formats."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from llm_wire import llm_wire_fixture  # noqa: F401  (registers the llm_wire fixture)
from support import sql

import hippo
from hippo.providers.base import Message, ToolCall
from hippo.providers.fake import FakeLLM

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent_loop.py"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("agent_loop_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


def test_scripted_conversation_leaves_the_expected_database(example, tmp_path, capsys, local_embedder):
    db = tmp_path / "agent.db"
    assert example.main(["--db", str(db), "--agent", "kris-bot"]) == 0
    out = capsys.readouterr().out
    assert "tool remember_facts" in out and "tool forget_memory" in out and "Traceback" not in out

    rows = sql(db, "SELECT kind, content, superseded_by IS NOT NULL FROM chunks WHERE agent_id = 'kris-bot' "
                   "ORDER BY content")
    assert rows == [
        ("fact", "User is Kris", 0),
        ("fact", "User is allergic to peanuts", 0),
        ("fact", "User lives in Berlin", 1),  # superseded, kept as history
        ("fact", "User moved to Lisbon", 0),
    ]
    assert sql(db, "SELECT key, value FROM memory_blocks") == [("human", "Name: Kris (lives in Lisbon)")]
    for suffix in ("", "-wal", "-shm"):  # forgotten for real
        path = Path(f"{db}{suffix}")
        assert not path.exists() or b"lasagne" not in path.read_bytes()
    with hippo.open(db, agent_id="kris-bot", embedder=local_embedder) as mem:
        lives = [h.content for h in mem.recall_memories("Where does the user live?", kind="fact", touch=False)]
        assert "User moved to Lisbon" in lives and "User lives in Berlin" not in lives


def test_model_sees_tool_results_and_errors(example, mem):
    llm = FakeLLM(script=[
        ToolCall("a", "replace_memory_block", {"key": "human", "old_text": "x", "new_text": "y"}),
        lambda system, messages: "error seen: " + json.loads(messages[-1].content)["error"]["code"],
    ])
    history: list[Message] = []
    answer = example.agent_turn(llm, mem.tools(), history, "fix my name")
    assert answer == "error seen: block_not_found"
    assert [m.role for m in history] == ["user", "assistant", "tool", "assistant"]
    assert llm.calls[0]["tools"] == mem.tools().names


def openai_tool_reply(calls):
    def reply(request):
        return ("raw", 200, {
            "id": "chatcmpl-tools", "object": "chat.completion", "created": 0, "model": request.body["model"],
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": None,
                "tool_calls": [{"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                               for i, n, a in calls]}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        })
    return reply


def anthropic_tool_reply(calls):
    def reply(request):
        return ("raw", 200, {
            "id": "msg_tools", "type": "message", "role": "assistant", "model": request.body["model"],
            "content": [{"type": "text", "text": "Let me look."}]
            + [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in calls],
            "stop_reason": "tool_use", "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5},
        })
    return reply


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_loop_over_the_sdk_wire_formats(example, mem, llm_wire, protocol):
    pytest.importorskip(protocol)
    mem.append_memory_block("human", "Name: Kris")
    calls = [("call_1", "store_memory", {"content": "Kris likes green tea"}),
             ("call_2", "recall_memory_block", {"key": "human"})]
    tool_reply = openai_tool_reply(calls) if protocol == "openai" else anthropic_tool_reply(calls)
    llm_wire.reply(tool_reply, "Stored it, Kris.")
    llm = llm_wire.openai_llm() if protocol == "openai" else llm_wire.anthropic_llm()
    tools = mem.tools()

    answer = example.agent_turn(llm, tools, [], "I like green tea")
    assert answer == "Stored it, Kris."
    assert [h.content for h in mem.recall_memories("green tea", touch=False)] == ["Kris likes green tea"]

    first, second = llm_wire.requests
    offered = first.body["tools"]
    if protocol == "openai":
        assert offered == tools.openai()
        sent = second.body["messages"]
        assert sent[-3]["tool_calls"][0]["function"]["name"] == "store_memory"
        results = {m["tool_call_id"]: json.loads(m["content"]) for m in sent[-2:]}
    else:
        assert offered == tools.anthropic()
        sent = second.body["messages"]
        assert [b["type"] for b in sent[-2]["content"]] == ["text", "tool_use", "tool_use"]
        results = {b["tool_use_id"]: json.loads(b["content"]) for b in sent[-1]["content"]}
    assert results["call_1"]["action"] == "inserted"
    assert results["call_2"] == {"ok": True, "key": "human", "value": "Name: Kris"}
