"""A batch larger than the embedding cache still gets one vector per text."""

from __future__ import annotations

from hippo.core.embedding import _CACHE_SIZE


def test_store_memories_beyond_the_cache_size(mem):
    texts = [f"note number {i}" for i in range(_CACHE_SIZE + 50)]
    results = mem.store_memories(texts)
    assert len(results) == len(texts) and not any(r.vector_pending for r in results)
    assert mem.recall_memories("note number 7", limit=1, touch=False)[0].content == "note number 7"


def test_threads_of_one_memory_each_see_their_own_embedder_failure(db):
    """A server shares one memory per agent between its threads: a failure met by one request is
    reported on that request, not on another that succeeded meanwhile."""
    import threading

    import hippo
    from hippo.errors import ProviderError
    from hippo.providers.fake import FakeEmbedder

    class Picky(FakeEmbedder):
        def embed_query(self, text):
            if text.startswith("bad"):
                raise ProviderError("the model refused")
            return super().embed_query(text)

    mem = hippo.open(db, embedder=Picky())
    mem.store_memory("a good note about gardening")
    failed, passed = threading.Barrier(2), {}

    def ask(query: str) -> None:
        mem.embedding.query(query)
        failed.wait()  # both calls are done before either reads its error
        passed[query] = mem.embedding.last_error

    threads = [threading.Thread(target=ask, args=(q,)) for q in ("bad query", "good query")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert passed["good query"] is None and "refused" in passed["bad query"]
    mem.close()
