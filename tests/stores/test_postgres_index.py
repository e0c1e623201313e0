"""PostgreSQL only: the HNSW index is built the first time an agent reaches ``ann_threshold`` vectors,
answers as the exact scan does, and a narrow filter the index cannot fill falls back to exact."""

from __future__ import annotations

import pytest
from support import sql

import hippo
from hippo.providers.fake import FakeEmbedder
from hippo.stores.base import ChunkFilter, SearchQuery


@pytest.fixture
def database(postgres):
    url = postgres.new_database()
    yield url
    postgres.drop(url)


def indexes(db):
    return [r[0] for r in sql(db, "SELECT indexname FROM pg_indexes WHERE indexname = 'chunks_embedding_hnsw'")]


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
        with_index = sorted(found.similarity, key=found.similarity.get, reverse=True)
    with hippo.open(database, agent_id="big", embedder=embedder, ann_threshold=0) as plain:
        found = plain.store.search("big", SearchQuery(query, (), ChunkFilter(), 10))
        assert sorted(found.similarity, key=found.similarity.get, reverse=True)[:5] == with_index[:5]
        assert exact["boats"] == [h.id for h in plain.for_agent("small").recall_memories("boats", touch=False)]


def test_a_narrow_filter_falls_back_to_the_exact_scan(database):
    embedder = FakeEmbedder()
    with hippo.open(database, agent_id="big", embedder=embedder, ann_threshold=50) as mem:
        mem.store_memories([f"ordinary note number {i}" for i in range(200)])
        rare = mem.store_memory("the one tagged note", metadata={"tags": ["rare"]})
        hits = mem.recall_memories("ordinary note", tags=["rare"], touch=False)
        assert [h.id for h in hits] == [rare.id] and indexes(database) == ["chunks_embedding_hnsw"]
