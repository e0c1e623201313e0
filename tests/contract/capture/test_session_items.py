"""A session's history (``add_session_items``, ``session_items``, ``pop_session_item``,
``clear_session_items``): the items an agent framework keeps between turns, kept whole and in
order in the agent's database, its chat messages observed by capture in the same write."""

from __future__ import annotations

import pytest
from support import sql

import hippo
from hippo import limits

TURN = [
    {"role": "user", "content": "I moved to Lisbon last spring and I work on the billing service."},
    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "recall_memories",
     "arguments": "{\"query\": \"Lisbon\"}", "status": "completed"},
    {"type": "function_call_output", "call_id": "call_1", "output": "{\"ok\":true,\"memories\":[]}"},
    {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA=="},
    {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": "Lisbon is lovely; noted that you run billing.", "annotations": []}]},
]


def test_items_read_back_exactly_as_written_in_order(mem):
    odd = {"role": "user", "content": [{"type": "input_text", "text": "Grüße, 東京 🌸 \u2028"}],
           "z": 1, "a": [None, 2.5]}
    mem.add_session_items("chat-1", TURN)
    mem.add_session_items("chat-1", [odd])
    assert mem.session_items("chat-1") == [*TURN, odd]
    assert list(mem.session_items("chat-1")[-1]) == ["role", "content", "z", "a"]  # the keys' order too
    assert mem.session_items("chat-1", limit=2) == [TURN[-1], odd]
    assert mem.session_items("chat-1", limit=0) == []
    assert mem.session_items("chat-1", limit=100) == [*TURN, odd]
    assert mem.session_items("no-such-session") == []


def test_the_messages_among_the_items_are_observed_in_the_same_write(mem):
    seen = mem.add_session_items("chat-1", TURN)
    assert (seen.session_id, seen.accepted, seen.duplicates, seen.skipped) == ("chat-1", 2, 0, 0)
    captured = mem.process_pending()
    assert captured.memories == 2
    contents = {h.content: h.chunk for h in mem.recall_memories("Lisbon billing", limit=5)}
    user = contents["I moved to Lisbon last spring and I work on the billing service."]
    assert user.session_id == "chat-1" and user.source == "conversation"
    assert "Assistant: Lisbon is lovely; noted that you run billing." in contents


def test_a_message_capture_cannot_take_stays_in_the_history_only(mem):
    long = {"role": "user", "content": "word " * (limits.CONTENT_CHARS // 4)}
    items = [long, {"role": "user", "content": "We decided to ship billing on Fridays only."}]
    seen = mem.add_session_items("chat-1", items)
    assert (seen.accepted, seen.skipped) == (1, 1)
    assert mem.session_items("chat-1") == items


def test_pop_removes_the_latest_item_and_clear_removes_them_all(mem):
    mem.add_session_items("chat-1", TURN)
    mem.add_session_items("chat-2", TURN[:1])
    assert mem.pop_session_item("chat-1") == TURN[-1]
    assert mem.pop_session_item("chat-1") == TURN[-2]
    assert mem.session_items("chat-1") == TURN[:-2]
    assert mem.clear_session_items("chat-1") == len(TURN) - 2
    assert mem.session_items("chat-1") == [] and mem.pop_session_item("chat-1") is None
    assert mem.clear_session_items("chat-1") == 0
    assert mem.session_items("chat-2") == TURN[:1]  # another session of the agent is untouched
    mem.add_session_items("chat-1", TURN[:1])  # a cleared session starts again
    assert mem.session_items("chat-1") == TURN[:1]


def test_agents_never_see_each_others_sessions(make_mem):
    alice, bob = make_mem("alice"), make_mem("bob")
    alice.add_session_items("chat-1", TURN)
    assert bob.session_items("chat-1") == [] and bob.pop_session_item("chat-1") is None
    assert bob.clear_session_items("chat-1") == 0
    bob.add_session_items("chat-1", TURN[:1])
    assert alice.session_items("chat-1") == TURN and bob.session_items("chat-1") == TURN[:1]
    bob.process_pending()
    assert alice.process_pending().memories == 2


DEEP: list = []
for _ in range(limits.NESTING + 1):
    DEEP = [DEEP]


@pytest.mark.parametrize("session_id, items", [
    (None, TURN), ("", TURN), ("a b", TURN), ("x" * 200, TURN), (7, TURN),
    ("chat-1", "not a list"), ("chat-1", {"role": "user", "content": "hi"}),
    ("chat-1", [*TURN, "an item that is no object"]), ("chat-1", [{"n": float("nan")}]),
    ("chat-1", [{"n": 2**70}]), ("chat-1", [{1: "a key that is no string"}]),
    ("chat-1", [{"text": "a lone \ud800 surrogate"}]), ("chat-1", [{"value": {1, 2}}]),
    ("chat-1", [{"deep": DEEP}]),
    ("chat-1", [{"text": "x" * (limits.JSON_BYTES + 1)}]),
    ("chat-1", [{}] * (limits.SESSION_ITEMS + 1)),
])
def test_bad_items_are_refused_and_change_nothing(mem, db, session_id, items):
    mem.add_session_items("chat-1", TURN[:1])
    before = sql(db, "SELECT seq, agent_id, session_id, message_id, item FROM session_items ORDER BY seq")
    inbox = sql(db, "SELECT count(*) FROM observed_messages")
    with pytest.raises(hippo.InvalidInput):
        mem.add_session_items(session_id, items)
    assert sql(db, "SELECT seq, agent_id, session_id, message_id, item FROM session_items ORDER BY seq") == before
    assert sql(db, "SELECT count(*) FROM observed_messages") == inbox


@pytest.mark.parametrize("limit", [-1, True, 1.5, "3", 2**64])
def test_a_bad_limit_or_session_is_refused(mem, limit):
    with pytest.raises(hippo.InvalidInput):
        mem.session_items("chat-1", limit=limit)
    for bad in (None, "", "a b", 3):
        for read in (mem.session_items, mem.pop_session_item, mem.clear_session_items):
            with pytest.raises(hippo.InvalidInput):
                read(bad)


def test_delete_all_takes_the_agents_sessions(make_mem, db):
    alice, bob = make_mem("alice"), make_mem("bob")
    alice.add_session_items("chat-1", TURN)
    bob.add_session_items("chat-1", TURN)
    alice.delete_all()
    assert alice.session_items("chat-1") == []
    assert sql(db, "SELECT count(*) FROM session_items WHERE agent_id = 'alice'") == [(0,)]
    assert bob.session_items("chat-1") == TURN


def test_rewriting_a_captured_memory_takes_its_item_but_no_other(mem):
    mem.add_session_items("chat-1", TURN)
    mem.process_pending()
    [hit] = [h for h in mem.recall_memories("Lisbon spring", limit=5) if h.content.startswith("I moved")]
    mem.update_memory(hit.id, content="I moved to Porto last spring.")
    assert mem.session_items("chat-1") == TURN[1:]


def test_a_forget_reaches_an_item_whose_message_is_not_processed_yet(mem):
    said = {"role": "user", "content": "My locker code at the climbing gym is 4471."}
    mem.add_session_items("chat-1", [*TURN[:1], said])
    assert mem.forget_memory("locker code climbing gym").messages == 1
    assert mem.session_items("chat-1") == TURN[:1]
    mem.process_pending()
    assert mem.recall_memories("locker code climbing gym").hits == []
