"""An embedder that is down, pending vectors filled later, and switching embedding models."""

from __future__ import annotations

import pytest
from support import sql, vector_sizes

import hippo
from hippo.providers.fake import FakeEmbedder


@pytest.fixture
def failing():
    return FakeEmbedder(fail=True)


def test_store_succeeds_with_vector_pending(make_mem, failing, db):
    mem = make_mem("alice", embedder=failing)
    result = mem.store_memory("The espresso machine needs descaling every month")
    assert result.action == "inserted"
    assert result.vector_pending is True
    assert result.chunk.has_vector is False
    assert sql(db, "SELECT count(*) FROM chunks WHERE embedding IS NULL") == [(1,)]
    # A duplicate still strengthens while the embedder is down.
    again = mem.store_memory("The espresso machine needs descaling every month")
    assert (again.action, again.id, again.vector_pending) == ("strengthened", result.id, True)
    # A batch too.
    results = mem.store_memories(["Backups run nightly", "Monitoring uses Prometheus"])
    assert all(r.vector_pending for r in results)


def test_recall_falls_back_to_keywords(make_mem, failing):
    mem = make_mem("alice", embedder=failing)
    target = mem.store_memory("The espresso machine needs descaling every month")
    mem.store_memory("Bob prefers window seats on long flights")
    recall = mem.recall_memories("espresso descaling")
    assert recall.mode == "keyword"
    assert [h.id for h in recall] == [target.id]
    assert recall[0].similarity is None and recall[0].keyword == pytest.approx(1.0)
    assert recall.warning and "fail" in recall.warning
    # A query with no usable word finds nothing by keyword, and does not raise.
    assert list(mem.recall_memories("?!")) == []


@pytest.mark.embedded_only("follows reembed's progress callback, which stays in the caller's process")
def test_reembed_fills_pending_then_recall_is_hybrid(make_mem, failing, db):
    mem = make_mem("alice", embedder=failing)
    stored = [mem.store_memory(f"Pending memory {i} about the espresso machine") for i in range(5)]
    assert sql(db, "SELECT count(*) FROM embedding_model") == [(0,)]
    with pytest.raises(hippo.ProviderError):
        mem.reembed()  # still down: an error, and nothing lost
    assert sql(db, "SELECT count(*) FROM chunks WHERE embedding IS NULL") == [(5,)]

    failing.fail = False
    seen = []
    result = mem.reembed(progress=lambda done, total: seen.append((done, total)), batch_size=2)
    assert isinstance(result, hippo.ReembedResult)
    assert (result.embedded, result.pending) == (5, 0)
    assert (result.model_id, result.dimension) == ("fake:64", 64)
    assert seen[0] == (0, 5) and seen[-1] == (5, 5)
    assert mem.store.count_pending("alice") == 0
    assert sql(db, "SELECT model_id, dimension FROM embedding_model") == [("fake:64", 64)]
    assert vector_sizes(db) == [(64, 5)]

    recall = mem.recall_memories("espresso machine")
    assert recall.mode == "hybrid"
    assert recall.warning is None
    assert {h.id for h in recall} == {s.id for s in stored}
    assert all(h.similarity is not None for h in recall)
    # Nothing left to do.
    assert mem.reembed().embedded == 0


def test_recovered_embedder_embeds_new_memories_at_once(make_mem, failing):
    mem = make_mem("alice", embedder=failing)
    old = mem.store_memory("Stored while the embedder was down")
    failing.fail = False
    new = mem.store_memory("Stored after it came back")
    assert new.vector_pending is False
    # Strengthening a pending memory while the embedder works fills its vector.
    again = mem.store_memory("Stored while the embedder was down")
    assert (again.id, again.vector_pending) == (old.id, False)
    assert mem.stats().pending_vectors == 0


def test_switch_model_with_hippo_reembed(make_mem, db):
    mem = make_mem("alice", embedder=FakeEmbedder())
    stored = mem.store_memory("The staging cluster runs on three small nodes")
    make_mem("bob", embedder=FakeEmbedder()).store_memory("Bob's cluster notes")
    mem.close()

    seen = []
    result = hippo.reembed(db, embedder=FakeEmbedder(dimension=32), progress=lambda d, t: seen.append((d, t)))
    assert (result.embedded, result.pending, result.model_id, result.dimension) == (2, 0, "fake:32", 32)
    assert seen[-1] == (2, 2)
    assert sql(db, "SELECT model_id, dimension FROM embedding_model") == [("fake:32", 32)]
    assert [size for size, _ in vector_sizes(db, "true")] == [32]

    with pytest.raises(hippo.EmbedderMismatch) as info:
        hippo.open(db, agent_id="alice", embedder=FakeEmbedder())
    assert "reembed" in str(info.value)
    assert "fake:32" in str(info.value)

    for spec in ("fake:32", FakeEmbedder(dimension=32)):
        reopened = make_mem("alice", embedder=spec)
        recall = reopened.recall_memories("staging cluster nodes")
        assert recall.mode == "hybrid"
        assert recall[0].id == stored.id and recall[0].similarity is not None
        reopened.close()


def test_reembed_with_same_model_only_fills_pending(make_mem, failing, db):
    mem = make_mem("alice", embedder=FakeEmbedder())
    mem.store_memory("Embedded right away")
    failing_mem = make_mem("alice", embedder=failing)
    failing_mem.store_memory("Stored while down")
    before = sql(db, "SELECT id, embedding FROM chunks WHERE embedding IS NOT NULL")
    result = hippo.reembed(db, embedder="fake")
    assert (result.embedded, result.pending) == (1, 0)
    assert set(before) <= set(sql(db, "SELECT id, embedding FROM chunks"))


def test_open_with_other_dimension_is_refused(make_mem, db):
    make_mem("alice", embedder=FakeEmbedder()).store_memory("Recorded with fake:64")
    for other in (FakeEmbedder(dimension=32), "fake:32"):
        with pytest.raises(hippo.EmbedderMismatch) as info:
            hippo.open(db, agent_id="alice", embedder=other)
        assert "reembed" in str(info.value)
        assert isinstance(info.value, hippo.ConfigError)
    # Refusing touched nothing: the old model still works.
    assert len(make_mem("alice", embedder="fake").recall_memories("recorded")) == 1


def test_keyword_only_memory_needs_no_embedder(make_mem, db):
    mem = make_mem("alice", embedder="none")
    stored = mem.store_memory("Keyword only memory about kayaks")
    # Nothing waits for a vector that keyword-only memory never asked for (no "embedder failed" note).
    assert stored.vector_pending is False and not stored.chunk.has_vector
    recall = mem.recall_memories("kayaks")
    assert (recall.mode, [h.id for h in recall]) == ("keyword", [stored.id])
    with pytest.raises(hippo.ProviderError):
        mem.reembed()
    # Later opened with an embedder, the pending vector can be filled.
    with_vectors = make_mem("alice", embedder="fake")
    assert with_vectors.reembed().embedded == 1


def test_reembed_without_embedder_is_config_error(db, make_mem):
    make_mem("alice")
    with pytest.raises(hippo.ConfigError):
        hippo.reembed(db, embedder="none")


def test_stale_handle_cannot_mix_models(make_mem, db):
    """A Memory left open while the database switches models must not write vectors of the old one."""
    stale = make_mem("alice", embedder=FakeEmbedder())
    stale.store_memory("Stored before the switch")
    hippo.reembed(db, embedder=FakeEmbedder(dimension=32))

    with pytest.raises(hippo.EmbedderMismatch):
        stale.recall_memories("stored before")
    with pytest.raises(hippo.EmbedderMismatch):
        stale.store_memory("Stored by the stale handle after the switch")
    assert [size for size, _ in vector_sizes(db)] == [32]

    fresh = make_mem("alice", embedder="fake:32")
    recall = fresh.recall_memories("stored before the switch")
    assert recall.mode == "hybrid" and len(recall) >= 1
