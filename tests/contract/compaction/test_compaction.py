"""``Memory.compact`` over any store (issues 21 and 48): what fades is stored, not lost. Every
entry shortened in the summary (a goal, a decision, a compressed line, a pointer) has its content
stored, and it comes back by the id on its line and by ``recall_memories`` with a query about it
(the real local model); acknowledgements and trivia are not stored; compacting again stores nothing
twice; the goal lines hold the user's requests; decisions outlive tool outputs of the same age."""

from __future__ import annotations

import re

import pytest
from support import load_bench

from hippo.core.compaction.compact import content_of
from hippo.core.compaction.kinds import trivial, worth_keeping
from hippo.core.messages import read_messages
from hippo.errors import InvalidInput

STORED = ("compressed", "pointer", "dropped")
MORE = re.compile(r"^(?:\d+ more|left out, acknowledgements and trivia): (.+)$", re.M)


def _places(summary: str) -> set[int]:
    """The places the sparse index lists as ranges ("12 more: #40-#47, #52")."""
    found: set[int] = set()
    for part in (m.group(1) for m in MORE.finditer(summary)):
        for item in part.split(", "):
            low, _, high = item.partition("-")
            found.update(range(int(low[1:]), int((high or low)[1:]) + 1))
    return found


@pytest.fixture(scope="module")
def session() -> list[dict]:
    return load_bench("compaction_session").session(20_000)


def _contents(session: list[dict]) -> list[str]:
    return [content_of(m) for m in read_messages(session)]


def test_every_faded_entry_comes_back_by_id_and_by_recall(make_mem, local_embedder, session):
    mem = make_mem(embedder=local_embedder)
    result = mem.compact(session, session_id="sess-1")
    contents = _contents(session)
    faded = [e for e in result.entries if e.retention < 0.65 and e.action != "omitted"]
    trivia = [e for e in faded if trivial(contents[e.index]) or not worth_keeping(contents[e.index])]
    faded = [e for e in faded if e not in trivia]
    assert faded and all(e.memory_ids for e in faded) and not any(e.memory_ids for e in trivia)
    assert not any(e.memory_ids for e in result.entries if e.retention >= 0.65 or e.action == "omitted")
    listed = _places(result.summary)
    for entry in faded:
        chunks = [mem.get_memory(i) for i in entry.memory_ids]
        assert "".join(c.content for c in chunks) == contents[entry.index]
        first = chunks[0]
        assert first.source == "compaction" and first.session_id == "sess-1"
        assert first.metadata["type"] == entry.type and "position" in first.metadata
        assert entry.index in listed or re.search(
            rf"#{entry.index} .*\[id:{','.join(entry.memory_ids)}\]$", result.summary, re.M)
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
    lines = [line for line in index if line.startswith("#")]
    for line in lines:  # each pointer carries the ids of what it stored (trivia is not stored)
        ids = result.entries[int(line[1:].split()[0])].memory_ids
        assert line.endswith(f" [id:{','.join(ids)}]") if ids else "[id:" not in line
    assert result.stats.sparse_index_tokens <= 300 and result.stats.dropped == 0
    unlisted = {i for i in _places(result.summary) if result.entries[i].action == "pointer"}
    assert unlisted and len(lines) + len(unlisted) == result.stats.sparse  # no room: listed as places
    assert all(mem.get_memory(result.entries[i].memory_ids[0]).content for i in unlisted
               if result.entries[i].memory_ids)


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
    asks = [(n, m["content"]) for n, m in enumerate(session) if m["role"] == "user" and m["content"] != "HEARTBEAT"]
    assert [re.sub(r" \[id:[0-9A-Z,]+\]$", "", g) for g in goals] == [
        f"- #{n} " + (a if len(a) <= 150 else a[:a.rindex(" ", 0, 150)] + "…") for n, a in asks]
    assert "## Prior Context\nWe shipped the auth rewrite yesterday.\n" in result.summary
    intents = mem.recall_memories(asks[0][1], limit=5, source="compaction", session_id="sess-1")
    assert intents and intents[0].content == asks[0][1]


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
