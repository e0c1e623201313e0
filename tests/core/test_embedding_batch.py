"""A batch larger than the embedding cache still gets one vector per text."""

from __future__ import annotations

from hippo.core.embedding import _CACHE_SIZE


def test_store_memories_beyond_the_cache_size(mem):
    texts = [f"note number {i}" for i in range(_CACHE_SIZE + 50)]
    results = mem.store_memories(texts)
    assert len(results) == len(texts) and not any(r.vector_pending for r in results)
    assert mem.recall_memories("note number 7", limit=1, touch=False)[0].content == "note number 7"
