"""Two agents in one file: nothing agent A does returns or changes agent B's data."""

from __future__ import annotations

import pytest
from support import sql

import hippo
from hippo.providers.fake import FakeEmbedder

SHARED = [
    "The launch code is Tango-Foxtrot-Nine",
    "The user lives in Berlin and dislikes Redux",
    "Weekly sync is on Tuesday at ten",
]


def b_state(db):
    """Every row agent bob owns, in full."""
    return (
        sql(db, "SELECT * FROM chunks WHERE agent_id = 'bob' ORDER BY id"),
        sql(db, "SELECT * FROM memory_blocks WHERE agent_id = 'bob' ORDER BY key"),
    )


@pytest.fixture
def pair(make_mem):
    alice = make_mem("alice")
    bob = make_mem("bob")
    bob_results = bob.store_memories(SHARED + ["Bob's private note about kayaks"])
    bob.set_memory_block("persona", "Bob's persona")
    bob.set_memory_block("human", "Bob lives in Berlin")
    alice.store_memories(SHARED)  # the same texts: dedup is per agent, so these are new rows
    alice.set_memory_block("persona", "Alice's persona")
    alice.set_memory_block("human", "Alice lives in Berlin")
    return alice, bob, bob_results


def test_same_text_is_two_rows(pair, db):
    assert sql(db, "SELECT agent_id, count(*) FROM chunks GROUP BY agent_id ORDER BY agent_id") == [
        ("alice", 3), ("bob", 4)
    ]


def test_recall_never_returns_other_agent(pair, db):
    alice, bob, _ = pair
    before = b_state(db)
    for query in SHARED + ["kayaks", "Bob private note", "launch code"]:
        recall = alice.recall_memories(query, limit=1000)
        assert all(h.chunk.agent_id == "alice" for h in recall), query
        assert all("kayaks" not in h.content for h in recall)
    # Alice's retrievals did not touch Bob's strength.
    assert b_state(db) == before
    assert {h.chunk.agent_id for h in bob.recall_memories("kayaks", touch=False)} == {"bob"}


def test_by_id_access_is_scoped(pair, db):
    alice, _, bob_results = pair
    before = b_state(db)
    for result in bob_results:
        with pytest.raises(hippo.NotFound):
            alice.get_memory(result.id)
        with pytest.raises(hippo.NotFound):
            alice.delete_memory(result.id)
    assert b_state(db) == before


def test_forget_never_deletes_other_agent(pair, db):
    alice, bob, _ = pair
    before = b_state(db)
    for description in SHARED + ["Bob's private note about kayaks", "kayaks"]:
        alice.forget_memory(description, limit=1000, min_similarity=0.0)
    assert sql(db, "SELECT count(*) FROM chunks WHERE agent_id = 'alice'") == [(0,)]
    assert b_state(db) == before
    assert len(bob.recall_memories("launch code Tango", touch=False)) >= 1


def test_forget_preview_shows_only_own(pair):
    alice, _, bob_results = pair
    previewed = alice.forget_memory("kayaks private note", preview=True, min_similarity=0.0, limit=1000)
    assert not {f.id for f in previewed.deleted} & {r.id for r in bob_results}


def test_blocks_are_per_agent(pair, db):
    alice, bob, _ = pair
    before = b_state(db)
    assert alice.recall_memory_block("persona") == "Alice's persona"
    assert alice.replace_memory_block("human", "Berlin", "Munich").replaced == 1
    assert alice.append_memory_block("persona", "More about Alice").value.endswith("More about Alice")
    assert alice.set_memory_block("human", "Reset", char_limit=10).value == "Reset"
    assert b_state(db) == before
    # A block only Bob has is missing for Alice, and Alice's append creates her own.
    bob.set_memory_block("bob_only", "secret")
    before = b_state(db)
    assert alice.recall_memory_block("bob_only") is None
    with pytest.raises(hippo.BlockNotFound):
        alice.replace_memory_block("bob_only", "secret", "x")
    assert alice.append_memory_block("bob_only", "alice's own").created is True
    assert b_state(db) == before
    assert bob.recall_memory_block("human") == "Bob lives in Berlin"
    assert bob.recall_memory_block("bob_only") == "secret"
    assert bob.memory_block("human").char_limit is None
    assert [b.key for b in alice.memory_blocks()] == ["bob_only", "human", "persona"]


def test_conversation_is_per_agent(pair, db):
    alice, bob, _ = pair
    hippo.create_messages_table(db)
    for row in [("alice", "Alice talks about kayaks"), ("bob", "Bob talks about kayaks"), (None, "Nobody's kayaks")]:
        sql(db, "INSERT INTO messages(agent_id, content) VALUES (?, ?)", row)
    assert [h.content for h in alice.recall_conversation("kayaks")] == ["Alice talks about kayaks"]
    assert [h.content for h in bob.recall_conversation("kayaks")] == ["Bob talks about kayaks"]


def test_reembed_fills_only_own_pending(make_mem, db):
    embedder = FakeEmbedder(fail=True)
    alice = make_mem("alice", embedder=embedder)
    bob = make_mem("bob", embedder=embedder)
    alice.store_memories(["Alice pending one", "Alice pending two"])
    bob.store_memories(["Bob pending one", "Bob pending two", "Bob pending three"])
    before = b_state(db)

    embedder.fail = False
    result = alice.reembed()
    assert (result.embedded, result.pending) == (2, 0)
    assert sql(db, "SELECT agent_id, count(*) FROM chunks WHERE embedding IS NULL GROUP BY agent_id") == [
        ("bob", 3)
    ]
    assert b_state(db) == before
    assert bob.reembed().embedded == 3


def test_vector_matrices_are_per_agent(make_mem):
    alice = make_mem("alice")
    bob = make_mem("bob")
    alice.store_memory("Alice's note on the staging cluster")
    assert len(alice.recall_memories("staging cluster", touch=False)) == 1
    assert len(bob.recall_memories("staging cluster", touch=False)) == 0
    bob.store_memory("Bob's note on the staging cluster")
    # Bob's write does not leak into Alice's loaded matrix, nor the reverse.
    assert {h.chunk.agent_id for h in alice.recall_memories("staging cluster", touch=False)} == {"alice"}
    assert {h.chunk.agent_id for h in bob.recall_memories("staging cluster", touch=False)} == {"bob"}
    bob.forget_memory("Bob's note on the staging cluster")
    assert len(alice.recall_memories("staging cluster", touch=False)) == 1
    assert len(bob.recall_memories("staging cluster", touch=False)) == 0


def test_agent_ids_are_case_sensitive_and_exact(make_mem):
    make_mem("alice").store_memory("lower-case alice")
    assert len(make_mem("Alice").recall_memories("alice", touch=False)) == 0
    assert len(make_mem("alice2").recall_memories("alice", touch=False)) == 0
