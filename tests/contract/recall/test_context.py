"""Recall in conversational context: memories stored one after another in one conversation (one
session) lend each other relevance; memories that merely share an hour lend nothing."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

import hippo
from hippo.core.memory import MemoryInput
from hippo.core.ports import ChunkFilter

pytest.importorskip("onnxruntime")

MONDAY = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
# The answer ("Yesterday!") shares no word and little meaning with the question; the turn
# before it names the group.
CONVERSATION = [
    "Melanie: Did you ever make it to the LGBTQ support group you told me about?",
    "Caroline: Yesterday! It was the first time I went.",
    "Melanie: That is brave. How did it feel?",
]
OTHER_DAY = [
    "Caroline: My book club group meets every Thursday evening.",
    "Melanie: The museum trip with the kids is booked for the weekend.",
    "Caroline: I went to the lake to paint sunsets.",
    "Caroline: Our running group went to the coast.",
    "Melanie: Our dog learned to open the back door.",
]
QUESTION = "When did Caroline go to the LGBTQ support group?"


def store(mem, texts, when, session=None):
    return mem.store_memories([MemoryInput(t, observed_at=when + timedelta(seconds=i), session_id=session)
                               for i, t in enumerate(texts)])


@pytest.fixture
def talk(db, local_embedder):
    def open_(**settings):
        # The fusion at its configured weights, whose parts the assertions spell out: a store this
        # small would otherwise trust meaning over keywords (keyword_trust, tested on its own).
        return hippo.open(db, agent_id="caroline", embedder=local_embedder, **{"keyword_trust": False, **settings})

    with open_() as mem:
        store(mem, OTHER_DAY, MONDAY - timedelta(days=3), "thursday")
        turns = store(mem, CONVERSATION, MONDAY, "monday")
    return open_, [t.id for t in turns]


def test_the_reply_after_the_question_rises_with_context(talk):
    open_, (asked, answer, _) = talk
    with open_(context_weight=0) as mem:
        alone = [h.id for h in mem.recall_memories(QUESTION, limit=7, touch=False)]
    with open_() as mem:
        hits = mem.recall_memories(QUESTION, limit=7, touch=False).hits
    ranked = [h.id for h in hits]
    assert ranked[0] == asked
    assert alone.index(answer) > 1, alone  # below other days' talk of groups and going
    assert ranked.index(answer) == 1
    reply = hits[1]
    assert reply.context > 0
    # Its relevance is its own match; what the question before it lent only moves it up.
    assert reply.relevance == pytest.approx(0.6 * max(0.0, reply.similarity) + 0.4 * (reply.keyword or 0))
    assert 0 <= reply.relevance + reply.context <= 1


def test_a_memory_without_a_session_borrows_nothing(db, local_embedder):
    # prefer_later off: a later word on a subject reports its move as context too (core/recall/later.py)
    with hippo.open(db, agent_id="a", embedder=local_embedder, prefer_later=False) as mem:
        store(mem, OTHER_DAY, MONDAY - timedelta(days=3))
        turns = [t.id for t in store(mem, CONVERSATION, MONDAY)]
        assert mem.store.neighbours("a", turns, 2, ChunkFilter()) == {t: [] for t in turns}
        hits = mem.recall_memories(QUESTION, limit=7, touch=False).hits
        assert hits and all(h.context == 0 for h in hits)
    with hippo.open(db, agent_id="a", embedder=local_embedder, context_weight=0, prefer_later=False) as mem:
        assert [h.id for h in mem.recall_memories(QUESTION, limit=7, touch=False)] == [h.id for h in hits]


def test_memories_of_another_session_lend_nothing_however_close_in_time(db, local_embedder):
    with hippo.open(db, agent_id="a", embedder=local_embedder) as mem:
        ids, others = [], []
        for n, text in enumerate(CONVERSATION):  # each turn followed, the same second, by other sessions'
            ids.append(mem.store_memory(text, observed_at=MONDAY + timedelta(seconds=n), session_id="chat").id)
            others.append(mem.store_memory(OTHER_DAY[n], observed_at=MONDAY + timedelta(seconds=n),
                                           session_id=f"other-{n}").id)
        loner = mem.store_memory("Caroline: The support group meets in the library.", observed_at=MONDAY).id
        near = mem.store.neighbours("a", [ids[1], others[0], loner], 2, ChunkFilter())
        assert near == {ids[1]: [(ids[0], 1), (ids[2], 1)], others[0]: [], loner: []}
        hits = {h.id: h for h in mem.recall_memories(QUESTION, touch=False)}
        assert all(hits[i].context == 0 for i in [*others, loner] if i in hits)
        assert hits[ids[1]].context > 0


def test_a_conversation_resumed_days_later_is_still_one_conversation(db, local_embedder):
    with hippo.open(db, agent_id="a", embedder=local_embedder) as mem:
        first = mem.store_memory(CONVERSATION[0], observed_at=MONDAY, session_id="chat").id
        later = mem.store_memory(CONVERSATION[1], observed_at=MONDAY + timedelta(days=2), session_id="chat").id
        assert mem.store.neighbours("a", [first], 2, ChunkFilter()) == {first: [(later, 1)]}


def test_neighbours_follow_storage_order_within_the_session_and_filter(db, local_embedder):
    with hippo.open(db, agent_id="a", embedder=local_embedder) as a, \
            hippo.open(db, agent_id="b", embedder=local_embedder) as b:
        ids = []
        for i, text in enumerate(CONVERSATION + OTHER_DAY[:2]):
            ids.append(a.store_memory(text, observed_at=MONDAY, session_id="s",
                                      metadata={"tags": ["t"]} if i != 1 else None).id)
            b.store_memory(f"{text} (b)", observed_at=MONDAY, session_id="s")  # interleaved, another agent
        fact = a.remember_facts("I live in Berlin.").facts[0].id
        near = a.store.neighbours("a", [ids[2]], 2, ChunkFilter())
        assert near == {ids[2]: [(ids[1], 1), (ids[0], 2), (ids[3], 1), (ids[4], 2)]}
        tagged = a.store.neighbours("a", [ids[2]], 2, ChunkFilter(tags=("t",)))
        assert tagged == {ids[2]: [(ids[0], 2), (ids[3], 1), (ids[4], 2)]}  # the untagged one is skipped
        assert a.store.neighbours("b", [ids[2]], 2, ChunkFilter()) == {}  # not b's memory
        assert a.store.neighbours("a", [fact], 2, ChunkFilter()) == {}  # facts have no neighbours
        # A recall filtered by tag never returns the untagged neighbour, however close.
        hits = a.recall_memories(QUESTION, tags=["t"], touch=False)
        assert ids[1] not in [h.id for h in hits]
