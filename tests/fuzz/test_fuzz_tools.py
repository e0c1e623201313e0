"""Property-based fuzz of the agent tools in both formats: 2,000 generated tool calls, as OpenAI
Chat, OpenAI Responses and Anthropic tool calls and as whole assistant messages. Each answers
(``ok: false`` for a bad call) or raises a hippo error for what is not a tool call at all; a
rejected call leaves the database unchanged."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nasty import fingerprint, hippo_error_or_none, nasty, texts, values

import hippo
from hippo.providers.fake import FakeEmbedder

CALLS = 2_000
NAMES = ["remember_facts", "store_memory", "replace_memory_block", "append_memory_block", "forget_memory",
         "recall_memories", "recall_memory_block", "recall_conversation", "update_memory", "reinforce_memory",
         "demote_memory", "record_experience"]
FIELDS = ["text", "content", "tags", "intensity", "key", "old_text", "new_text", "description", "preview",
          "query", "limit", "kind", "max_tokens", "observed_at", "id", "type", "context", "importance"]

names = st.one_of(st.sampled_from(NAMES), texts, nasty)
plausible = st.dictionaries(st.sampled_from(FIELDS), st.one_of(texts, values), max_size=4)


def as_json(value: Any) -> str:
    """Arguments as a model sends them: JSON text (a value Python cannot write becomes ``{}``)."""
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (ValueError, RecursionError):
        return "{}"


arguments = st.one_of(plausible, plausible.map(as_json), texts, nasty,
                      st.sampled_from(['{"query": "x", "limit": ' + "9" * 5000 + "}",
                                       '{"content": ' + "[" * 3000 + "]" * 3000 + "}",
                                       '{"content": "bad \\ud800 text"}', '{"query": NaN}', "{", "[]"]))


@st.composite
def tool_calls(draw: st.DrawFn) -> Any:
    name, args = draw(names), draw(arguments)
    shape = draw(st.sampled_from(["chat", "responses", "anthropic", "junk"]))
    if shape == "chat":
        return {"id": "call_1", "type": "function", "function": {"name": name, "arguments": args}}
    if shape == "responses":
        return {"type": "function_call", "call_id": "fc_1", "name": name, "arguments": args}
    if shape == "anthropic":
        return {"type": "tool_use", "id": "toolu_1", "name": name, "input": args}
    return draw(st.one_of(nasty, st.dictionaries(st.sampled_from(["type", "function", "name"]), values)))


@st.composite
def messages(draw: st.DrawFn) -> Any:
    calls = draw(st.lists(tool_calls(), max_size=3))
    return draw(st.sampled_from([
        {"role": "assistant", "tool_calls": calls},
        {"role": "assistant", "content": calls},
        {"role": "assistant", "tool_calls": draw(nasty)},
        draw(nasty),
    ]))


def answered_ok(answer: Any) -> bool:
    """Whether a dispatched answer (in whichever format) reports a success: for several tool calls,
    whether any succeeded (one may write while another is rejected)."""
    if isinstance(answer, list):
        return any(answered_ok(a) for a in answer)
    if answer.get("role") == "user":
        return any(answered_ok(block) for block in answer["content"])
    text = answer.get("content", answer.get("output"))
    return json.loads(text)["ok"] and not answer.get("is_error", False)


def test_generated_tool_calls_answer_or_raise_hippo_errors_and_rejections_change_nothing(tmp_path):
    db = tmp_path / "tools.db"
    mem = hippo.open(db, agent_id="alice", embedder=FakeEmbedder())
    hippo.create_messages_table(db)
    mem.store_memories(["gardening: tomatoes need sun", "We chose SQLite"])
    mem.append_memory_block("human", "Name: Kris")
    tools = mem.tools()
    kinds: list[str] = []

    @settings(max_examples=CALLS, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(how=st.sampled_from(["call", "dispatch", "results_for"]), data=st.data())
    def call(how: str, data: st.DataObject) -> None:
        before = fingerprint(db)
        error, ok = None, False
        try:
            if how == "call":
                ok = tools.call(data.draw(names), data.draw(arguments))["ok"]
            elif how == "dispatch":
                ok = answered_ok(tools.dispatch(data.draw(tool_calls())))
            else:
                ok = answered_ok(tools.results_for(data.draw(messages())))
        except Exception as exc:  # noqa: BLE001 - the property: nothing but hippo errors
            error = exc
        hippo_error_or_none(error)
        if error is not None or not ok:
            assert fingerprint(db) == before, f"a rejected {how} changed the database"
        kinds.append(how)

    call()
    mem.close()
    assert len(kinds) >= CALLS and set(kinds) == {"call", "dispatch", "results_for"}
