"""The HNSW index through hippo.open: recall against exact search, filters, adds and removals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import AGENT, ANN_THRESHOLD, Corpus, sentences

import hippo
from hippo.config import load_settings
from hippo.core.ports import ChunkFilter
from hippo.stores.sqlite.index.exact import ExactIndex
from hippo.stores.sqlite.index.hnsw import HnswIndex


def open_ann(path: Path, embedder, **settings) -> hippo.Memory:
    settings.setdefault("ann_threshold", ANN_THRESHOLD)
    return hippo.open(path, agent_id=AGENT, embedder=embedder, **settings)


def search(mem: hippo.Memory, query: np.ndarray, limit: int = 10, **where) -> list[str]:
    return [i for i, _ in mem.store.vector_search(AGENT, query, limit, ChunkFilter(**where))]


def exact(corpus: Corpus, query: np.ndarray, limit: int = 10, rows: list[int] | None = None) -> list[str]:
    rows = list(range(len(corpus.ids))) if rows is None else rows
    scores = corpus.matrix[rows] @ query
    return [corpus.ids[rows[j]] for j in np.argsort(-scores, kind="stable")[:limit]]


def mean_recall(found: list[list[str]], truth: list[list[str]]) -> float:
    return float(np.mean([len(set(f) & set(t)) / len(t) for f, t in zip(found, truth)]))


def test_ann_recall_at_10_against_exact(ann_corpus, corpus_db, local_embedder):
    with open_ann(corpus_db, local_embedder) as mem:
        assert isinstance(mem.store._vectors.index_of(AGENT), HnswIndex)
        for limit in (10, 50):  # 50: recall asks each side for max(50, 5 * limit) candidates
            found = [search(mem, q, limit) for q in ann_corpus.queries]
            truth = [exact(ann_corpus, q, limit) for q in ann_corpus.queries]
            assert mean_recall(found, truth) >= 0.95


@pytest.mark.parametrize("tag", ["common", "rare"])
def test_filtered_search_on_the_ann_path(ann_corpus, corpus_db, local_embedder, tag):
    rows = ann_corpus.tagged(tag)
    allowed = {ann_corpus.ids[i] for i in rows}
    with open_ann(corpus_db, local_embedder) as mem:
        found = [search(mem, q, tags=(tag,)) for q in ann_corpus.queries]
        assert all(set(f) <= allowed and len(f) == 10 for f in found)
        truth = [exact(ann_corpus, q, rows=rows) for q in ann_corpus.queries]
        assert mean_recall(found, truth) >= 0.95
        hits = mem.recall_memories("Who has a new pet?", limit=5, tags=[tag], touch=False)
        assert hits.hits and all(tag in h.chunk.metadata["tags"] for h in hits)
        assert all(set(search(mem, q, kinds=("fact",))) == set() for q in ann_corpus.queries[:3])


def test_removed_never_returned_and_replaced_vectors_used(ann_corpus, corpus_db, local_embedder):
    ids, matrix = ann_corpus.ids, ann_corpus.matrix
    with open_ann(corpus_db, local_embedder) as mem:
        search(mem, ann_corpus.queries[0])  # the HNSW index is built before the changes below
        gone = set(ids[:100])
        assert mem.store.delete_chunks(AGENT, ids[:100]) == 100
        mem.store.supersede(AGENT, [ids[100]], ids[101])
        mem.store.set_vectors(AGENT, {ids[200]: matrix[300]})
        for row in range(101):
            assert not set(search(mem, matrix[row], 50)) & (gone | {ids[100]})
        assert set(search(mem, matrix[300], 2)) == {ids[200], ids[300]}
        old = dict(mem.store.vector_search(AGENT, matrix[200], 5, ChunkFilter()))
        assert old.get(ids[200], 0.0) < 0.999  # its old vector is gone from the index
        new = mem.store_memory("Zed found a rare blue butterfly in the botanical garden yesterday.")
        assert search(mem, local_embedder.embed_query("a blue butterfly in the garden"), 1) == [new.id]
        assert len(mem.store._vectors.index_of(AGENT)) == len(ids) - 101 + 1


def test_crossing_the_threshold_switches_to_ann(ann_corpus, corpus_db, local_embedder):
    with open_ann(corpus_db, local_embedder, ann_threshold=2050) as mem:
        assert isinstance(mem.store._vectors.index_of(AGENT), ExactIndex)
        added = mem.store_memories(sentences(2060)[2000:])
        assert search(mem, local_embedder.embed_query(sentences(2060)[2000]), 1) == [added[0].id]
        assert isinstance(mem.store._vectors.index_of(AGENT), HnswIndex)
    assert list(Path(f"{corpus_db}.hnsw").glob("*.json"))


def test_default_settings_keep_small_stores_exact(ann_corpus, corpus_db, local_embedder, monkeypatch):
    assert load_settings().ann_threshold == 50_000
    with hippo.open(corpus_db, agent_id=AGENT, embedder=local_embedder) as mem:
        search(mem, ann_corpus.queries[0])
        assert isinstance(mem.store._vectors.index_of(AGENT), ExactIndex)
    with open_ann(corpus_db, local_embedder, ann_threshold=0) as mem:  # 0 turns ANN off
        search(mem, ann_corpus.queries[0])
        assert isinstance(mem.store._vectors.index_of(AGENT), ExactIndex)
    assert not Path(f"{corpus_db}.hnsw").exists()
    monkeypatch.setenv("HIPPO_ANN_THRESHOLD", "off")
    assert load_settings().ann_threshold is None
    monkeypatch.setenv("HIPPO_ANN_THRESHOLD", "1000")
    assert load_settings().ann_threshold == 1000


def test_replacing_a_vector_on_the_exact_path(tmp_path, embedder):
    """A matrix loaded from the file's bytes is read-only; replacing one of its rows must still work."""
    with hippo.open(tmp_path / "h.db", agent_id=AGENT, embedder=embedder) as mem:
        stored = mem.store_memories(["one thing", "two things", "three"])
    with hippo.open(tmp_path / "h.db", agent_id=AGENT, embedder=embedder) as mem:
        query = mem.embedding.query("one thing")
        assert search(mem, query, 1) == [stored[0].id]  # loads the matrix
        mem.store.set_vectors(AGENT, {stored[1].id: query})
        assert set(search(mem, query, 2)) == {stored[0].id, stored[1].id}
        assert isinstance(mem.store._vectors.index_of(AGENT), ExactIndex)


def test_without_hnswlib_the_store_stays_exact_and_says_so(ann_corpus, corpus_db, local_embedder, monkeypatch,
                                                           caplog):
    import hippo.stores.sqlite.index.cache as vectors

    monkeypatch.setattr(vectors, "ann_available", lambda: False)
    with open_ann(corpus_db, local_embedder) as mem:
        found = search(mem, ann_corpus.queries[0])
        assert isinstance(mem.store._vectors.index_of(AGENT), ExactIndex)
        search(mem, ann_corpus.queries[1])
    assert found == exact(ann_corpus, ann_corpus.queries[0])
    from hippo.installed import install_line

    warnings = [r for r in caplog.records if f"{install_line('ann')} for the HNSW index" in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].levelname == "WARNING"
