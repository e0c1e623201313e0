"""SQLite only: what the SQLite store's search reads (standings) and its two plans for a filtered
vector search. The behaviour they serve is in the contract suite (tests/contract/memories/test_store_recall.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from hippo.core.ports import ChunkFilter, SearchQuery

pytestmark = pytest.mark.sqlite_only  # SQLiteStore's own search internals


def test_standings_are_what_ranking_reads_of_chunks(make_mem, clock):
    alice, bob = make_mem("alice"), make_mem("bob")
    first = alice.store_memory("The ferry leaves at nine", intensity=0.7)
    clock.advance(hours=5)
    second = alice.store_memory("The ferry returns at six")
    theirs = bob.store_memory("Bob's ferry is private")
    alice.recall_memories("ferry nine", limit=1)  # touches the first one

    ids = [second.id, "no-such-id", theirs.id, first.id]
    standings = alice.store.standings("alice", ids)
    assert [s.id for s in standings] == [second.id, first.id]  # in the order asked; others' and unknown left out
    for standing, chunk in zip(standings, alice.store.get_chunks("alice", [second.id, first.id])):
        assert standing.running_intensity == chunk.running_intensity
        assert standing.access_count == chunk.access_count
        assert standing.last_accessed == pytest.approx(chunk.last_accessed_at.timestamp(), abs=0.001)
        assert standing.created == pytest.approx(chunk.created_at.timestamp(), abs=0.001)
        assert standing.superseded_by is None and standing.has_vector
    assert standings[1].access_count == 1


def test_a_wide_filter_is_checked_on_the_results_and_a_narrow_one_listed_first(mem, clock, embedder):
    texts = [f"Harbour log {i}: the {'north' if i % 3 else 'south'} pier, tide {i % 7}" for i in range(60)]
    for i, text in enumerate(texts):
        mem.store_memory(text, observed_at=clock() - timedelta(days=i))
    query = embedder.embed_query("south pier tide")
    ids = {c.id: c for c in mem.store.get_chunks("alice", [h.id for h in mem.store.list_chunks("alice", limit=100)])}
    vectors = mem.store.get_vectors("alice", list(ids))

    for days, limit in ((50, 5), (3, 5), (0, 5)):  # most rows pass; 4 pass; only today's passes
        allowed = {i for i, c in ids.items() if c.observed_at >= clock() - timedelta(days=days)}
        best = sorted((float(vectors[i] @ query) for i in allowed), reverse=True)[:limit]
        found = mem.store.vector_search("alice", query, limit, ChunkFilter(since=clock() - timedelta(days=days)))
        assert {i for i, _ in found} <= allowed
        assert [s for _, s in found] == pytest.approx(best, abs=1e-6)  # ties may come in either order


def test_an_agent_without_chunks_is_answered_without_a_search_until_one_is_written(make_mem):
    alice, bob = make_mem("alice"), make_mem("bob")
    bob.store_memory("Bob keeps the ferry timetable")
    statements: list[str] = []
    alice.store.db.conn.set_trace_callback(statements.append)
    assert alice.recall_memories("ferry timetable").hits == []  # bob's chunk is not alice's
    assert not any("chunks_fts" in s for s in statements)
    writer = make_mem("alice")  # another connection: the file's change is seen
    writer.store_memory("Alice takes the ferry at nine")
    assert [h.chunk.content for h in alice.recall_memories("ferry").hits] == ["Alice takes the ferry at nine"]
    alice.store.db.conn.set_trace_callback(None)
    only = writer.list_memories().items[0]
    assert writer.store.archive_chunks("alice", [only.id], writer.now()) == 1  # archived: no longer a chunk
    assert alice.recall_memories("ferry").hits == []


def test_what_a_search_kept_inside_a_rolled_back_transaction_is_not_kept(make_mem):
    """A rollback moves neither the file's version nor the connection's change count."""
    mem = make_mem("alice")
    stored = mem.store_memory("Alice takes the ferry at nine")
    query = SearchQuery(None, ("ferry",), ChunkFilter(), 10)
    with pytest.raises(RuntimeError):
        with mem.store.transaction():
            mem.store.delete_chunks("alice", [stored.id])
            assert mem.store.search("alice", query).chunks == []  # the agent holds nothing, in there
            raise RuntimeError
    assert [c.id for c in mem.store.search("alice", query).chunks] == [stored.id]
