"""hippo in the OpenAI Agents SDK: real ``Runner.run`` calls through the SDK's own Responses model
and the ``openai`` client, against a scripted model on loopback (``responses_wire``). A run
remembers across runs for its user and never for another, by the tools and by the session; the
session's history is kept in hippo's database and read back exactly; the tools are hippo's."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, RunConfig, Runner, UserError  # noqa: E402
from agents.memory import Session, SessionSettings  # noqa: E402
from responses_wire import ResponsesWire, call, say  # noqa: E402

import hippo  # noqa: E402
from hippo.integrations.openai_agents import HippoSession, hippo_tools  # noqa: E402
from hippo.providers.fake import FakeEmbedder  # noqa: E402

QUIET = RunConfig(tracing_disabled=True)  # the SDK's traces would go to OpenAI


def _text(item: dict[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    return " ".join(part.get("text", "") for part in content or [])


def script(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The scripted model: "Remember: ..." -> remember_facts; "Forget ..." -> forget_memory; a
    question -> recall_memories; a tool's answer -> a reply made of it; anything else -> "Noted."."""
    last = request["input"][-1]
    if last.get("type") == "function_call_output":
        result = json.loads(last["output"])
        if "memories" in result:
            found = "; ".join(m["content"] for m in result["memories"])
            return [say(f"You told me: {found}" if found else "I know nothing about that.")]
        return [say("Done." if result["ok"] else f"That failed: {result['error']['code']}")]
    text = _text(last)
    if text.startswith("Remember: "):
        return [call("remember_facts", {"text": text.removeprefix("Remember: ")})]
    if text.startswith("Forget "):
        return [call("forget_memory", {"description": text.removeprefix("Forget ").rstrip(".")})]
    if text.endswith("?"):
        return [call("recall_memories", {"query": text})]
    return [say("Noted.")]


@pytest.fixture
def wire():
    with ResponsesWire(script) as server:
        yield server


@pytest.fixture
def memory(tmp_path: Path):
    mem = hippo.open(tmp_path / "memory.db", agent_id="app", embedder=FakeEmbedder())
    yield mem
    mem.close()


def run(agent: Agent, text: str, user: str, session: Session) -> str:
    result = asyncio.run(Runner.run(agent, text, session=session, context={"user": user}, run_config=QUIET))
    return str(result.final_output)


def assistant(wire: ResponsesWire, memory: hippo.Memory) -> Agent:
    """One Agent for every user: each tool call works on the hippo agent named by the run's context."""
    return Agent(name="assistant", instructions="Use your memory.", model=wire.model(),
                 tools=hippo_tools(memory, user=lambda context: context["user"]))


def test_a_run_remembers_across_runs_for_its_user_and_not_for_another_through_the_tools(wire, memory):
    agent = assistant(wire, memory)
    alice, bob = memory.for_agent("alice"), memory.for_agent("bob")
    told = run(agent, "Remember: I am allergic to peanuts.", "alice", HippoSession(alice, "a-1", process=False))
    assert told == "Done."
    assert [f.content for f in alice.list_memories(kind="fact").items] == ["User is allergic to peanuts"]

    # A later run for alice, in a new conversation: only her memory can answer.
    later = run(agent, "What am I allergic to?", "alice", HippoSession(alice, "a-2", process=False))
    assert later == "You told me: User is allergic to peanuts"
    assert wire.requests[-2]["input"] == [{"role": "user", "content": "What am I allergic to?"}]  # no history

    other = run(agent, "What am I allergic to?", "bob", HippoSession(bob, "b-1", process=False))
    assert other == "I know nothing about that."
    assert bob.stats().facts == 0 and bob.stats().memories == 0
    assert memory.stats().facts == 0  # the app's own agent holds nothing either


def test_what_a_session_hears_becomes_memories_of_its_user_only(wire, memory, tmp_path):
    agent = assistant(wire, memory)
    alice, bob = memory.for_agent("alice"), memory.for_agent("bob")
    chat = HippoSession(alice, "a-1")
    assert run(agent, "I am allergic to peanuts and I live in Lisbon.", "alice", chat) == "Noted."
    assert run(agent, "Thanks for listening", "alice", chat) == "Noted."
    # The second run was sent the first one's items: the history, read from hippo's database.
    assert [_text(i) for i in wire.requests[-1]["input"]] == [
        "I am allergic to peanuts and I live in Lisbon.", "Noted.", "Thanks for listening"]
    assert asyncio.run(chat.get_items()) == alice.session_items("a-1")
    assert len(alice.session_items("a-1")) == 4
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memory.db", "memory.db-shm", "memory.db-wal"]

    # Nothing was called a tool: capture made the memory, and a new conversation recalls it.
    later = run(agent, "What am I allergic to?", "alice", HippoSession(alice, "a-2"))
    assert later.startswith("You told me: I am allergic to peanuts and I live in Lisbon.")
    assert run(agent, "What am I allergic to?", "bob", HippoSession(bob, "b-1")) == "I know nothing about that."
    assert bob.recall_memories("peanuts Lisbon").hits == []
    assert bob.session_items("a-1") == []


def test_forgetting_through_the_tool_takes_the_said_item_out_of_the_history(wire, memory, tmp_path):
    agent = assistant(wire, memory)
    alice = memory.for_agent("alice")
    chat = HippoSession(alice, "a-1")
    run(agent, "My locker code at the climbing gym is 4471.", "alice", chat)
    assert alice.recall_memories("locker code climbing gym").hits
    assert run(agent, "Forget my locker code.", "alice", chat) == "Done."
    items = alice.session_items("a-1")
    history = [_text(i) for i in items]
    assert "My locker code at the climbing gym is 4471." not in history
    assert history[0] == "Noted."  # the reply to it stays: it held nothing of the code
    # The SDK keeps tool results in the session: the forget's names what it deleted by id, not by text.
    [result] = [i for i in items if i.get("type") == "function_call_output"]
    assert json.loads(result["output"])["count"] >= 1 and "4471" not in result["output"]
    with open(tmp_path / "memory.db", "rb") as db, open(tmp_path / "memory.db-wal", "rb") as wal:
        assert b"4471" not in db.read() + wal.read()
    asyncio.run(chat.clear_session())
    assert alice.session_items("a-1") == []
    assert run(agent, "What is my locker code?", "alice", HippoSession(alice, "a-2")) == "I know nothing about that."


def test_the_session_follows_the_sdks_session_protocol(memory):
    alice = memory.for_agent("alice")
    items = [{"role": "user", "content": "We decided to ship billing on Fridays only."},
             {"type": "function_call", "call_id": "c1", "name": "recall_memories", "arguments": "{}"},
             {"type": "function_call_output", "call_id": "c1", "output": "{}"},
             {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Fridays it is."}]}]

    async def scenario() -> None:
        session = HippoSession(alice, "chat-1", process=False)
        assert isinstance(session, Session)
        await session.add_items(items)
        assert await session.get_items() == items
        assert await session.get_items(limit=2) == items[2:]
        capped = HippoSession(alice, "chat-1", session_settings=SessionSettings(limit=1))
        assert await capped.get_items() == items[3:] and await capped.get_items(limit=3) == items[1:]
        assert alice.pending_agents() == ["alice"]  # observed, not processed: process=False
        assert await session.pop_item() == items[-1]
        assert await session.get_items() == items[:-1]
        await session.clear_session()
        assert await session.get_items() == [] and await session.pop_item() is None
        await HippoSession(hippo.open_async(memory.database, agent_id="alice", embedder=FakeEmbedder()),
                           "chat-2").add_items(items[:1])  # an async memory serves as well
        assert alice.session_items("chat-2") == items[:1]

    asyncio.run(scenario())
    with pytest.raises(hippo.InvalidInput):
        HippoSession(alice, "no spaces please")


def test_the_tools_are_hippos_tools_with_their_names_descriptions_and_schemas(wire, memory):
    tools = hippo_tools(memory)
    offered = memory.tools()
    assert [(t.name, t.description, t.params_json_schema, t.strict_json_schema) for t in tools] == [
        (t.name, t.description, t.parameters, False) for t in offered]
    # And so they reach the model, through the SDK's own request building.
    agent = Agent(name="assistant", model=wire.model(), tools=tools)
    asyncio.run(Runner.run(agent, "hello", run_config=QUIET))
    sent = [(t["name"], t["description"], t["parameters"]) for t in wire.requests[-1]["tools"]]
    assert sent == [(t.name, t.description, t.parameters) for t in offered]


def test_a_tool_problem_is_the_models_to_read_and_a_bad_user_fails_the_run(wire, memory):
    agent = assistant(wire, memory)
    # Nothing matches (the request itself is not captured yet: process=False): the tool answers
    # {"ok": false, ...} to the model, and the run goes on.
    chat = HippoSession(memory.for_agent("alice"), "a-1", process=False)
    assert run(agent, "Forget the moon landing.", "alice", chat) == "That failed: nothing_matched"
    with pytest.raises(UserError, match="invalid agent id"):
        run(agent, "What do you know?", "not an id", HippoSession(memory, "x-1"))
