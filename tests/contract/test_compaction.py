"""``Memory.compact`` over any store (seed 004, issue 21): what fades is stored, not lost. Every
compressed, pointer or dropped entry's content comes back by the id on its line and by
``recall_memories`` with a query about it (the real local model); compacting again stores nothing
twice; the goal line holds the user's intents; decisions outlive tool outputs of the same age."""

from __future__ import annotations

import re

import pytest
from support import load_bench

from hippo.core.compaction.compact import content_of
from hippo.core.messages import read_messages
from hippo.errors import InvalidInput

STORED = ("compressed", "pointer", "dropped")


@pytest.fixture(scope="module")
def session() -> list[dict]:
    return load_bench("compaction_session").session(20_000)


def _contents(session: list[dict]) -> list[str]:
    return [content_of(m) for m in read_messages(session)]


def test_every_faded_entry_comes_back_by_id_and_by_recall(make_mem, local_embedder, session):
    mem = make_mem(embedder=local_embedder)
    result = mem.compact(session, session_id="sess-1")
    contents = _contents(session)
    faded = [e for e in result.entries if e.action in STORED]
    assert faded and all(e.memory_ids for e in faded)
    assert not any(e.memory_ids for e in result.entries if e.action == "kept")
    for entry in faded:
        chunks = [mem.get_memory(i) for i in entry.memory_ids]
        assert "".join(c.content for c in chunks) == contents[entry.index]
        first = chunks[0]
        assert first.source == "compaction" and first.session_id == "sess-1"
        assert first.metadata["type"] == entry.type and "position" in first.metadata
        if entry.action != "dropped":
            assert re.search(rf"\[id:{','.join(entry.memory_ids)}\]$", result.summary, re.M)
    missed = []
    for entry in faded:
        # Its opening 200 characters: several outputs of this session open with the same first line
        # (the file they are about), which says which file but not which output.
        query = contents[entry.index][:200]
        hits = mem.recall_memories(query, limit=10)
        if not set(entry.memory_ids) & {h.id for h in hits}:
            missed.append((entry.index, query))
    assert missed == []


def test_pointer_lines_carry_ids_within_the_cap(make_mem, session):
    mem = make_mem()
    result = mem.compact(session, session_id="sess-1", config={"maxSparseIndexTokens": 300})
    index = result.summary.split("## Sparse Index (decayed — pointers only)\n")[1].split("\n\n")[0].split("\n")
    assert len(index) == result.stats.sparse and all(re.search(r" \[id:[0-9A-Z,]+\]$", line) for line in index)
    assert result.stats.sparse_index_tokens <= 300 and result.stats.dropped > 0
    dropped = [e for e in result.entries if e.action == "dropped"]
    assert all(mem.get_memory(e.memory_ids[0]).content for e in dropped)  # no line, still kept


def test_compacting_the_same_session_again_keeps_the_same_ids(make_mem, session):
    mem = make_mem()
    first = mem.compact(session, session_id="sess-1")
    held = mem.stats()
    again = mem.compact(session, session_id="sess-1")
    assert [e.memory_ids for e in again.entries] == [e.memory_ids for e in first.entries]
    assert again.summary == first.summary
    assert mem.stats().memories == held.memories


def test_the_goal_line_holds_the_users_intents(make_mem, session):
    mem = make_mem()
    result = mem.compact(session, session_id="sess-1", previous_summary="We shipped the auth rewrite yesterday.")
    goals = result.summary.split("## Goal\n")[1].split("\n\n")[0].split("\n")
    asks = [m["content"] for m in session if m["role"] == "user" and m["content"] != "HEARTBEAT"]
    assert goals == ["- " + (a if len(a) <= 120 else a[:120] + "…") for a in asks]
    assert "## Prior Context\nWe shipped the auth rewrite yesterday.\n" in result.summary
    intents = mem.recall_memories(asks[0], limit=5, source="compaction", session_id="sess-1")
    assert intents and intents[0].content == asks[0]


def test_decisions_outlive_tool_outputs_of_the_same_age(make_mem, session):
    mem = make_mem()
    result = mem.compact(session, session_id="sess-1")
    total = len(result.entries)
    decisions = [e for e in result.entries if e.type == "decision"]
    tools = [e for e in result.entries if e.type == "tool_result"]
    assert all(e.action in ("kept", "compressed") for e in decisions)
    for decision in decisions:
        age = total - 1 - decision.index
        older_tools = [t for t in tools if total - 1 - t.index <= age]  # as old or younger
        assert all(decision.retention > t.retention for t in older_tools if total - 1 - t.index >= age - 2)
    old_tools = [t for t in tools if total - 1 - t.index > 5]
    assert old_tools and all(t.action in ("pointer", "dropped") for t in old_tools)
    stored = {mem.get_memory(e.memory_ids[0]).metadata["type"] for e in decisions + old_tools if e.memory_ids}
    assert stored == {"decision", "tool_result"}


def test_content_longer_than_a_memory_is_stored_in_parts(make_mem):
    mem = make_mem(max_content_chars=1_000)
    lines = [f"line {n}: the nightly export wrote batch {n} to the archive" for n in range(80)]
    output = "\n".join(lines)
    messages = [{"role": "user", "content": "Run the export and show me the log"},
                {"role": "tool", "tool_call_id": "c1", "content": output},
                *[{"role": "user", "content": f"Next question number {n}"} for n in range(12)]]
    result = mem.compact(messages, session_id="sess-2")
    entry = result.entries[1]
    assert entry.action in ("pointer", "compressed") and len(entry.memory_ids) == len(output) // 1_000 + 1
    parts = [mem.get_memory(i) for i in entry.memory_ids]
    assert "".join(p.content for p in parts) == output
    assert [p.metadata["part"] for p in parts] == list(range(1, len(parts) + 1))
    assert all(len(p.content) <= 1_000 for p in parts)


def test_a_session_id_is_required_and_bad_input_stores_nothing(make_mem):
    mem = make_mem()
    with pytest.raises(InvalidInput):
        mem.compact([{"role": "user", "content": "hi"}], session_id=None)
    with pytest.raises(InvalidInput):
        mem.compact([{"role": "user", "content": "hi"}, {"role": "robot", "content": "x"}], session_id="s")
    assert mem.stats().memories == 0
