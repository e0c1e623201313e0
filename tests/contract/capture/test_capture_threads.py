"""What capture keeps of a conversation (issue 48) over any store: no memory of a message that only
acknowledges, reacts or reports progress; a decision records the message it answered, and recall
puts the decision above the question that opened the thread."""

from __future__ import annotations

from hippo.core.memories.writer import ANSWERS, SOURCE_IDS

THREAD = [
    {"role": "user", "id": "q1", "content": "We keep getting duplicate invoice emails when the worker retries a "
                                           "send after a timeout. What should we do about the duplicate sends?"},
    {"role": "assistant", "id": "a1", "content": "Two options: an idempotency key per invoice email checked "
                                                 "before sending, or a lock on the invoice row while sending."},
    {"role": "user", "id": "d1", "content": "Let's go with the idempotency key, stored with the send log."},
    {"role": "assistant", "id": "e1", "content": "Noted: idempotency key with the send log."},
    {"role": "user", "id": "k1", "content": "ok"},
    {"role": "user", "id": "k2", "content": "👍"},
    {"role": "assistant", "id": "p1", "content": "Running the tests now."},
    {"role": "assistant", "id": "p2", "content": "edited 1 line"},
    {"role": "user", "id": "t1", "content": "thanks, have a good weekend"},
]


def _sources(mem) -> dict[str, dict]:
    return {i: m.metadata for m in mem.list_memories(limit=100).items for i in m.metadata.get(SOURCE_IDS, [])}


def test_no_memory_of_acknowledgements_reactions_or_progress(mem):
    mem.observe(THREAD, session_id="dup-sends")
    mem.process_pending()
    assert set(_sources(mem)) == {"q1", "a1", "d1"}


def test_a_decision_records_what_it_answered_and_ranks_above_it(make_mem, local_embedder):
    mem = make_mem(embedder=local_embedder)
    mem.observe(THREAD, session_id="dup-sends")
    mem.process_pending()
    held = _sources(mem)
    assert held["d1"][ANSWERS] == "a1" and held["a1"][ANSWERS] == "q1" and ANSWERS not in held["q1"]
    hits = mem.recall_memories("how were we preventing duplicate sends?", limit=3)
    order = [h.chunk.metadata[SOURCE_IDS][0] for h in hits]
    assert order.index("d1") < order.index("q1")
