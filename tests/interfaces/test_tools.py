"""The agent tool layer: names, schemas, provider formats, structured errors, token budget."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from pydantic import TypeAdapter
from support import sql

import hippo
from hippo.core.tokens import estimate_tokens
from hippo.core.tools.args import TOOL_NAMES

SEED_NAMES = [
    "remember_facts", "store_memory", "replace_memory_block", "append_memory_block",
    "forget_memory", "recall_memories", "recall_memory_block", "recall_conversation",
]
NAMES = [*SEED_NAMES, "update_memory", "split_fact", "reinforce_memory", "demote_memory",  # seed 000's eight,
         "record_experience"]  # then the edits and seed 003's feedback, and seed 001's


@pytest.fixture
def tools(mem):
    return mem.tools()


def snapshot(db):
    return (sql(db, "SELECT * FROM chunks ORDER BY id"), sql(db, "SELECT * FROM memory_blocks ORDER BY key"))


# -- names and schemas ------------------------------------------------------------------------------


def test_eight_tools_without_a_messages_table(tools):
    assert tools.names == [n for n in NAMES if n != "recall_conversation"]
    assert "recall_conversation" not in tools


def test_nine_tools_once_the_messages_table_exists(mem, db):
    hippo.create_messages_table(db)
    assert mem.tools().names == NAMES == list(TOOL_NAMES)


def test_messages_table_turned_off_omits_conversation(make_mem, db):
    hippo.create_messages_table(db)
    assert "recall_conversation" not in make_mem("alice", messages_table=None).tools()


def test_every_schema_is_valid_json_schema(mem, db):
    hippo.create_messages_table(db)
    for tool in mem.tools():
        schema = tool.parameters
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert "title" not in json.dumps(schema)  # noise for a model
        assert all("description" in prop for prop in schema["properties"].values())
        assert len(tool.description) > 80


def test_schemas_accept_what_the_tools_accept(tools):
    validator = jsonschema.Draft202012Validator(tools["recall_memories"].parameters)
    assert validator.is_valid({"query": "x", "limit": 5, "kind": "fact", "tags": ["a"], "max_tokens": 100})
    assert not validator.is_valid({"query": "x", "limit": 0})
    assert not validator.is_valid({"limit": 5})
    assert not validator.is_valid({"query": "x", "colour": "red"})


def test_definitions_match_the_sdk_types(mem, db):
    from anthropic.types import ToolParam
    from openai.types.chat import ChatCompletionFunctionToolParam
    from openai.types.responses import FunctionToolParam

    hippo.create_messages_table(db)
    tools = mem.tools()
    for definitions, sdk_type in ((tools.openai(), ChatCompletionFunctionToolParam), (tools.anthropic(), ToolParam),
                                  (tools.openai_responses(), FunctionToolParam)):
        assert len(definitions) == len(NAMES)
        adapter = TypeAdapter(sdk_type)
        for definition in definitions:
            adapter.validate_python(definition, strict=False)
            assert set(definition) <= set(sdk_type.__annotations__)  # no key the SDK does not know
    assert [d["function"]["name"] for d in tools.openai()] == NAMES
    assert [d["name"] for d in tools.anthropic()] == NAMES


# -- results ---------------------------------------------------------------------------------------


def test_results_are_json_and_show_ids(tools, mem):
    stored = tools.call("store_memory", {"content": "We picked SQLite for the embedded store", "tags": ["decision"]})
    assert stored["ok"] and stored["action"] == "inserted"
    found = tools.call("recall_memories", {"query": "SQLite store"})
    json.dumps(found)
    assert found["memories"][0]["id"] == stored["id"]
    assert set(found["memories"][0]) == {"id", "kind", "content", "score", "age"}  # no vectors, no internals
    remembered = tools.call("remember_facts", {"text": "I live in Berlin."})
    assert remembered["ok"] and remembered["summary"].startswith("Learned 1 fact")
    assert mem.get_memory(remembered["facts"][0]["id"]).content == remembered["facts"][0]["fact"]


def test_record_experience_rates_records_and_never_raises(tools, mem):
    decided = tools.call("record_experience", {"type": "decision", "content": "We rolled back release 4.2",
                                               "context": {"taskId": "rel-42", "actionTaken": True}, "tags": ["ops"]})
    assert decided == {"ok": True, "id": decided["id"], "type": "decision", "importance": 0.9, "tier": "long_term"}
    noted = tools.call("record_experience", {"type": "observation", "content": "The queue drained by noon"})
    assert noted["ok"] and noted["importance"] == 0.4 and noted["tier"] == "short_term"
    assert [e.content for e in mem.short_term()] == ["The queue drained by noon"]
    assert [e.id for e in mem.recall_related(task_id="rel-42")] == [decided["id"]]
    assert mem.recall(tags="ops")[0].tags == ["ops"]
    for bad in ({"type": "dream", "content": "x"}, {"type": "chat"}, {"type": "chat", "content": "x", "importance": 2},
                {"type": "chat", "content": "x", "context": {"userId": ["not", "an", "id"]}}, "not json"):
        answer = tools.call("record_experience", bad)
        assert answer["ok"] is False and answer["error"]["code"] == "invalid_input", answer
    schema = tools["record_experience"].parameters
    assert schema["required"] == ["type", "content"] and "insight" in schema["properties"]["type"]["enum"]
    assert len(mem.short_term()) == 1  # the rejected calls kept nothing


def test_max_tokens_trims_recall(tools, mem):
    for i in range(30):
        mem.store_memory(f"Note {i} about the garden project: " + "tomatoes need water and sun " * 8)
    full = tools.call("recall_memories", {"query": "garden tomatoes", "limit": 30, "max_tokens": 20_000})
    small = tools.call("recall_memories", {"query": "garden tomatoes", "limit": 30, "max_tokens": 300})
    assert len(full["memories"]) == 30 and "omitted" not in full
    assert 0 < len(small["memories"]) < 30 and small["omitted"] == 30 - len(small["memories"])
    assert estimate_tokens(small["memories"]) <= 300
    assert [m["id"] for m in small["memories"]] == [m["id"] for m in full["memories"][: len(small["memories"])]]
    tiny = tools.call("recall_memories", {"query": "garden tomatoes", "max_tokens": 50})
    assert tiny["memories"][0]["truncated"] is True and tiny["memories"][0]["content"].endswith("…")
    assert estimate_tokens(tiny["memories"]) <= 50


def test_default_budget_keeps_recall_compact(mem):
    for i in range(40):
        mem.store_memory(f"Garden log {i}: " + "watered the tomatoes and checked the soil " * 30)
    out = mem.tools(recall_max_tokens=500).call("recall_memories", {"query": "garden tomatoes", "limit": 40})
    assert estimate_tokens(out["memories"]) <= 500 and out["omitted"] > 0


def test_recall_conversation_tool(mem, db):
    hippo.create_messages_table(db)
    sql(db, "INSERT INTO messages (agent_id, role, content) VALUES ('alice', 'user', 'the OAuth redirect is wrong')")
    out = mem.tools().call("recall_conversation", {"query": "OAuth redirect"})
    assert out["ok"] and out["messages"][0]["role"] == "user" and "[OAuth]" in out["messages"][0]["snippet"]


# -- structured errors, in both formats ------------------------------------------------------------

ERROR_CASES = {
    "block missing": ("replace_memory_block", {"key": "human", "old_text": "x", "new_text": "y"}, "block_not_found"),
    "text missing": ("replace_memory_block", {"key": "persona", "old_text": "pirate", "new_text": "y"},
                     "text_not_found"),
    "nothing matched": ("forget_memory", {"description": "zebra migration patterns"}, "nothing_matched"),
    "missing argument": ("store_memory", {}, "invalid_input"),
    "empty text": ("remember_facts", {"text": ""}, "invalid_input"),
    "blank text": ("store_memory", {"content": "   "}, "invalid_input"),
    "wrong type": ("recall_memories", {"query": 42}, "invalid_input"),
    "unknown argument": ("recall_memories", {"query": "x", "colour": "red"}, "invalid_input"),
    "limit too big": ("recall_memories", {"query": "x", "limit": 500}, "invalid_input"),
    "bad kind": ("recall_memories", {"query": "x", "kind": "note"}, "invalid_input"),
    "bad intensity": ("store_memory", {"content": "x", "intensity": 3}, "invalid_input"),
    "bad key": ("append_memory_block", {"key": "no spaces allowed", "text": "x"}, "invalid_input"),
    "bad date": ("remember_facts", {"text": "I went out", "observed_at": "yesterday"}, "invalid_input"),
    "oversized": ("store_memory", {"content": "x" * 40_000}, "invalid_input"),
    "over block limit": ("append_memory_block", {"key": "persona", "text": "y" * 300}, "limit_exceeded"),
    "unknown tool": ("recall_everything", {"query": "x"}, "unknown_tool"),
}


def openai_call(name, arguments):
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": "call_1", "type": "function", "function": {"name": name, "arguments": raw}}


def anthropic_call(name, arguments):
    return {"type": "tool_use", "id": "toolu_1", "name": name, "input": arguments}


@pytest.fixture
def seeded_tools(mem):
    mem.store_memory("Something already stored about gardening")
    mem.set_memory_block("persona", "A helpful assistant", char_limit=200)
    return mem.tools()


@pytest.mark.parametrize("case", list(ERROR_CASES), ids=list(ERROR_CASES))
@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
def test_problems_are_structured_errors(seeded_tools, db, case, fmt):
    name, arguments, code = ERROR_CASES[case]
    before = snapshot(db)
    if fmt == "openai":
        reply = seeded_tools.dispatch(openai_call(name, arguments))
        assert reply["role"] == "tool" and reply["tool_call_id"] == "call_1"
        result = json.loads(reply["content"])
    else:
        reply = seeded_tools.dispatch(anthropic_call(name, arguments))
        assert reply["type"] == "tool_result" and reply["tool_use_id"] == "toolu_1" and reply["is_error"] is True
        result = json.loads(reply["content"])
    assert result["ok"] is False and result["error"]["code"] == code and result["error"]["message"]
    assert snapshot(db) == before


def test_malformed_openai_arguments(seeded_tools):
    for raw in ("{not json", "[1, 2]", "\"text\""):
        result = json.loads(seeded_tools.dispatch(openai_call("recall_memories", raw))["content"])
        assert result["error"]["code"] == "invalid_input"


def test_missing_block_reads_as_null_not_error(seeded_tools):
    reply = seeded_tools.dispatch(anthropic_call("recall_memory_block", {"key": "human"}))
    assert reply["is_error"] is False and json.loads(reply["content"]) == {"ok": True, "key": "human", "value": None}


def test_block_edge_cases_through_both_formats(seeded_tools, mem):
    append = seeded_tools.dispatch(anthropic_call("append_memory_block", {"key": "human", "text": "Name: Kris"}))
    assert json.loads(append["content"])["created"] is True  # append creates
    seeded_tools.call("append_memory_block", {"key": "human", "text": "Friend of Kris's sister"})
    reply = seeded_tools.dispatch(openai_call("replace_memory_block",
                                              {"key": "human", "old_text": "Kris", "new_text": "Chris"}))
    result = json.loads(reply["content"])
    assert result["replaced"] == 2  # every match
    assert mem.recall_memory_block("human") == "Name: Chris\nFriend of Chris's sister"


def test_sdk_objects_dispatch_too(seeded_tools):
    from anthropic.types import ToolUseBlock
    from openai.types.chat import ChatCompletionMessageFunctionToolCall

    call = ChatCompletionMessageFunctionToolCall(id="c9", type="function",
                                                 function={"name": "recall_memory_block", "arguments": '{"key":"persona"}'})
    assert json.loads(seeded_tools.dispatch(call)["content"])["value"] == "A helpful assistant"
    block = ToolUseBlock(id="t9", type="tool_use", name="recall_memory_block", input={"key": "persona"})
    assert json.loads(seeded_tools.dispatch(block)["content"])["value"] == "A helpful assistant"
    responses_call = {"type": "function_call", "call_id": "r9", "name": "recall_memory_block",
                      "arguments": '{"key":"persona"}'}
    out = seeded_tools.dispatch(responses_call)
    assert out["type"] == "function_call_output" and json.loads(out["output"])["value"] == "A helpful assistant"


def test_results_for_a_whole_assistant_message(seeded_tools):
    openai_message = {"role": "assistant", "content": None, "tool_calls": [
        openai_call("recall_memory_block", {"key": "persona"}), openai_call("recall_memory_block", {"key": "x"})]}
    assert [m["role"] for m in seeded_tools.results_for(openai_message)] == ["tool", "tool"]
    anthropic_message = {"role": "assistant", "content": [
        {"type": "text", "text": "Let me check."}, anthropic_call("recall_memory_block", {"key": "persona"})]}
    [user] = seeded_tools.results_for(anthropic_message)
    assert user["role"] == "user" and [b["type"] for b in user["content"]] == ["tool_result"]
    assert seeded_tools.results_for({"role": "assistant", "content": "no tools"}) == []


def test_not_a_tool_call_is_a_programming_error(seeded_tools):
    with pytest.raises(hippo.InvalidInput, match="not a tool call"):
        seeded_tools.dispatch({"something": "else"})
    with pytest.raises(hippo.InvalidInput):
        seeded_tools.dispatch(42)


def test_agents_tools_are_isolated(make_mem):
    alice, bob = make_mem("alice").tools(), make_mem("bob").tools()
    alice.call("store_memory", {"content": "Alice's secret launch code is 1234"})
    alice.call("append_memory_block", {"key": "human", "text": "Alice"})
    assert bob.call("recall_memories", {"query": "secret launch code"})["memories"] == []
    assert bob.call("recall_memory_block", {"key": "human"})["value"] is None
    assert bob.call("forget_memory", {"description": "secret launch code"})["error"]["code"] == "nothing_matched"


def test_update_memory_corrects_text_and_tags_in_place(tools, mem, db, backend):
    stored = tools.call("store_memory", {"content": "The staging server is stage-01", "tags": ["infra"]})
    fixed = tools.call("update_memory", {"id": stored["id"], "content": "The staging server is stage-02"})
    assert fixed == {"ok": True, "id": stored["id"], "content": "The staging server is stage-02", "tags": ["infra"]}
    retagged = tools.call("update_memory", {"id": stored["id"], "tags": ["infra", "servers"]})
    assert retagged["tags"] == ["infra", "servers"] and retagged["content"] == "The staging server is stage-02"
    assert tools.call("update_memory", {"id": stored["id"], "tags": []})["tags"] == []
    hits = mem.recall_memories("staging server", touch=False)
    assert [h.content for h in hits] == ["The staging server is stage-02"]
    if backend == "sqlite":  # the forget guarantee of update, on SQLite (tests/core/test_edits.py has both)
        assert not any(b"stage-01" in p.read_bytes() for p in Path(db).parent.glob(Path(db).name + "*"))


def test_update_memory_errors_are_results_and_change_nothing(tools, mem, db):
    stored = tools.call("store_memory", {"content": "keep me"})
    before = snapshot(db)
    assert tools.call("update_memory", {"id": stored["id"]})["error"]["code"] == "invalid_input"
    assert tools.call("update_memory", {"id": "01J00000000000000000000000", "content": "x"})["error"]["code"] \
        == "not_found"
    assert tools.call("update_memory", {"id": "short", "content": "x"})["error"]["code"] == "invalid_input"
    assert tools.call("update_memory", {"id": stored["id"], "content": ""})["error"]["code"] == "invalid_input"
    assert snapshot(db) == before


def test_each_change_through_a_tool_is_recorded_as_the_tools_of_the_local_caller(mem):
    """An agent's own tool calls, in process: one audit record per change, surface ``tools``."""
    tools = mem.tools()
    stored = tools.call("store_memory", {"content": "Herons nest in colonies near the river."})
    assert stored["ok"], stored
    calls = [("remember_facts", {"text": "I live in Lisbon."}),
             ("append_memory_block", {"key": "persona", "text": "A careful helper."}),
             ("reinforce_memory", {"id": stored["id"]}),
             ("update_memory", {"id": stored["id"], "content": "Herons nest in tall trees."}),
             ("record_experience", {"type": "insight", "content": "Deploys on Friday break things",
                                    "importance": 0.9}),
             ("forget_memory", {"description": "herons nest"})]
    for name, arguments in calls:
        assert tools.call(name, arguments)["ok"], name
    records = mem.audit(limit=100).items
    assert {r.operation for r in records} >= {"store_memory", *(name for name, _ in calls)}
    assert {(r.who, r.surface) for r in records} == {("local", "tools")}
    assert mem.verify_audit().ok
