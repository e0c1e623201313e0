"""PostgreSQL only: the HNSW index is built the first time an agent reaches ``ann_threshold`` vectors,
answers as the exact scan does, and a narrow filter the index cannot fill falls back to exact."""

from __future__ import annotations

import pytest
from support import sql

import hippo
from hippo.core.ports import ChunkFilter, SearchQuery
from hippo.providers.fake import FakeEmbedder


def indexes(db):
    return [r[0] for r in sql(db, "SELECT indexname FROM pg_indexes WHERE indexname = 'chunks_embedding_hnsw'")]


def _ranked(similarity: dict[str, float]) -> list[str]:
    """Ids best first, equal similarities (the fake embedder makes many) in id order: the order
    in which a statement returns tied rows is not defined."""
    return sorted(similarity, key=lambda i: (-round(similarity[i], 6), i))


def test_the_index_is_built_once_an_agent_needs_it_and_agrees_with_the_exact_scan(database):
    embedder = FakeEmbedder()
    texts = [f"note {i} about {topic}" for i in range(40) for topic in ("gardens", "boats", "trains")]
    with hippo.open(database, agent_id="big", embedder=embedder, ann_threshold=100) as mem:
        mem.store_memories(texts)
        mem.for_agent("small").store_memories(texts[:30])
        assert indexes(database) == []  # writes go without a graph until someone needs one
        exact = {q: [h.id for h in mem.for_agent("small").recall_memories(q, touch=False)] for q in ("boats",)}
        assert indexes(database) == []  # the small agent is scanned exactly
        query = embedder.embed_query("note 7 about boats")
        found = mem.store.search("big", SearchQuery(query, (), ChunkFilter(), 10))
        assert indexes(database) == ["chunks_embedding_hnsw"]
        with_index = _ranked(found.similarity)
    with hippo.open(database, agent_id="big", embedder=embedder, ann_threshold=0) as plain:
        found = plain.store.search("big", SearchQuery(query, (), ChunkFilter(), 10))
        assert _ranked(found.similarity)[:5] == with_index[:5]
        assert exact["boats"] == [h.id for h in plain.for_agent("small").recall_memories("boats", touch=False)]


def test_a_narrow_filter_falls_back_to_the_exact_scan(database):
    embedder = FakeEmbedder()
    with hippo.open(database, agent_id="big", embedder=embedder, ann_threshold=50) as mem:
        mem.store_memories([f"ordinary note number {i}" for i in range(200)])
        rare = mem.store_memory("the one tagged note", metadata={"tags": ["rare"]})
        hits = mem.recall_memories("ordinary note", tags=["rare"], touch=False)
        assert [h.id for h in hits] == [rare.id] and indexes(database) == ["chunks_embedding_hnsw"]


def test_a_filter_the_first_walk_cannot_fill_is_asked_again_with_a_wider_walk(database, monkeypatch):
    """pgvector keeps ``hnsw.ef_search`` rows of its walk before the filter: when a few passed, the
    vector side alone is asked again with a walk as much wider as that share needs (not the exact
    scan), and the keyword side's scores are kept."""
    from hippo.stores.postgres.connection import EF_SEARCH
    from hippo.stores.postgres.filters import filter_sql
    from hippo.stores.postgres.search import _with_vectors_of
    from hippo.stores.postgres.store import PostgresStore

    embedder = FakeEmbedder()
    texts = [f"harbour note {i} on {['tides', 'boats', 'nets', 'gulls'][i % 4]}" for i in range(3000)]
    tags = [{"tags": ["rare"]} if i % 30 == 7 else {} for i in range(3000)]  # 100, spread
    query = SearchQuery(embedder.embed_query("harbour note on boats"), ("harbour", "boats"),
                        ChunkFilter(tags=("rare",)), 10)
    clause, params = filter_sql(query.where)
    exacts: list[bool] = []
    real = PostgresStore._candidates
    monkeypatch.setattr(PostgresStore, "_candidates",
                        lambda self, *a, **k: (exacts.append(k.get("walk", EF_SEARCH) is None), real(self, *a, **k))[1])
    with hippo.open(database, agent_id="big", embedder=embedder, ann_threshold=100) as mem:
        mem.store_memories([hippo.MemoryInput(t, m) for t, m in zip(texts, tags)])
        store = mem.store
        store.search("big", query)  # builds the graph
        with store.db.reading("big") as conn:
            first = store._candidates(conn, "big", query.vector, ["harbour", "boats"], clause, params, query)
            exacts.clear()
            # As if the first walk of EF_SEARCH rows had found 5 that pass: a walk of 768 answers.
            again = store._vector_side(conn, "big", query.vector, clause, params, query, found=5, tried=EF_SEARCH)
            assert conn.execute("SHOW hnsw.ef_search").fetchone()[0] == str(EF_SEARCH)  # set for that walk only
        with store.transaction(), store.db.reading("big") as conn:  # in a write transaction too
            store._vector_side(conn, "big", query.vector, clause, params, query, found=5, tried=EF_SEARCH)
            assert conn.execute("SHOW hnsw.ef_search").fetchone()[0] == str(EF_SEARCH)
    assert exacts == [False, False]
    assert sum(r[8] is not None for r in again) >= 10
    rows = _with_vectors_of(first, again)
    assert {r[0]: r[9] for r in rows if r[9] is not None} == {r[0]: r[9] for r in first if r[9] is not None}
    with hippo.open(database, agent_id="big", embedder=embedder, ann_threshold=0) as plain:
        exact = plain.store.search("big", query)
    similarity = {r[0]: r[8] for r in rows if r[8] is not None}
    best = sorted(exact.similarity, key=exact.similarity.get, reverse=True)[:10]
    assert len(set(best) & set(similarity)) >= 8  # HNSW is approximate
    for chunk_id in set(best) & set(similarity):
        assert similarity[chunk_id] == pytest.approx(exact.similarity[chunk_id], abs=1e-5)


def test_the_vector_side_asked_again_replaces_the_first_and_keeps_the_keyword_scores():
    from hippo.stores.postgres.search import _with_vectors_of

    standing = (0.5, 1, 0.0, 0.0, None, True, None)
    first = [("a", *standing, 0.9, None, None, None), ("b", *standing, 0.8, 3.0, None, None),
             ("c", *standing, None, 2.0, 0.4, None)]
    again = [("a", *standing, 0.9, None, None, None), ("d", *standing, 0.85, None, None, None)]
    rows = {r[0]: r for r in _with_vectors_of(first, again)}
    assert set(rows) == {"a", "b", "c", "d"}
    assert rows["b"][8:11] == (None, 3.0, 0.8)  # not found again: its similarity kept as its cosine
    assert rows["c"][8:11] == (None, 2.0, 0.4)
    assert rows["d"][8:11] == (0.85, None, None) and rows["a"][8:11] == (0.9, None, None)
