"""Recall with the learned reranking stage (``rerank="learned"``): it reorders the pool recall found,
with the conversation's neighbours joined, and never changes what a memory's own relevance is."""

from __future__ import annotations

import numpy as np
import pytest
from test_context import CONVERSATION, MONDAY, OTHER_DAY, QUESTION, store

import hippo
from hippo.core.recall import rerank

pytest.importorskip("onnxruntime")


@pytest.fixture
def talk(db, local_embedder):
    def open_(**settings):
        # The fusion at its configured weights, whose parts the assertions spell out: a store this
        # small would otherwise trust meaning over keywords (keyword_trust, tested on its own).
        return hippo.open(db, agent_id="caroline", embedder=local_embedder,
                           **{"keyword_trust": False, "prefer_later": False, **settings})

    with open_() as mem:
        store(mem, OTHER_DAY, MONDAY.replace(day=5), "thursday")
        turns = store(mem, CONVERSATION, MONDAY, "monday")
    return open_, [t.id for t in turns]


def test_hits_keep_their_own_relevance_and_score_by_the_model(talk):
    open_, _ = talk
    with open_(rerank="learned") as mem:
        hits = mem.recall_memories(QUESTION, limit=7, touch=False).hits
    assert hits
    for hit in hits:
        # Own relevance as the fusion gives it; the model's probability is relevance + context.
        assert hit.relevance == pytest.approx(0.6 * max(0.0, hit.similarity or 0.0) + 0.4 * (hit.keyword or 0.0))
        assert 0 < hit.relevance + hit.context < 1
        assert hit.score == pytest.approx((hit.relevance + hit.context) * (0.6 + 0.3 * hit.effective_strength
                                                                           + 0.1 * hit.recency))


def only(feature: str, weight: float, bias: float) -> rerank.Model:
    """A model that reads one feature (in its linear range, so that every difference counts)."""
    weights = np.zeros(len(rerank.FEATURES))
    weights[rerank.FEATURES.index(feature)] = weight
    return rerank.Model(weights, bias)


def test_the_model_orders_the_pool(talk, monkeypatch):
    open_, (asked, answer, after) = talk
    monkeypatch.setattr(rerank, "load_model", lambda: only("log_length", 1.0, -4.5))
    with open_(rerank="learned", min_relevance=0) as mem:
        hits = mem.recall_memories(QUESTION, limit=8, touch=False).hits
    lengths = [len(h.content) for h in hits]
    assert len(hits) == 8 and lengths == sorted(lengths, reverse=True)


def test_the_seeds_neighbours_join_the_pool(db, local_embedder, monkeypatch):
    with hippo.open(db, agent_id="a", embedder=local_embedder) as mem:
        asked, answer, after = (t.id for t in store(mem, CONVERSATION, MONDAY, "monday"))
        # Enough notes on support groups (no conversation: no neighbours) that the reply is outside the pool.
        store(mem, [f"Caroline: Support group {n} meets on Tuesdays." for n in range(120)], MONDAY.replace(day=2))
    monkeypatch.setattr(rerank, "load_model", lambda: only("joined", 5.0, -2.5))
    with hippo.open(db, agent_id="a", embedder=local_embedder, min_relevance=0, context_weight=0) as mem:
        plain = [h.id for h in mem.recall_memories(QUESTION, limit=10, touch=False)]
    with hippo.open(db, agent_id="a", embedder=local_embedder, rerank="learned", min_relevance=0) as mem:
        hits = mem.recall_memories(QUESTION, limit=10, touch=False).hits
    assert answer not in plain
    # The question's turn is a seed: both turns after it join, and the model puts the joined first.
    assert {h.id for h in hits[:2]} == {answer, after} and all(h.context > 0 for h in hits[:2])


def test_the_stage_reads_own_relevance_for_min_relevance(talk):
    open_, _ = talk
    with open_(rerank="learned", min_relevance=0.3) as mem:
        hits = mem.recall_memories(QUESTION, limit=7, touch=False).hits
    assert hits and all(h.relevance >= 0.3 for h in hits)


def test_lengths_are_the_agents_own(db, local_embedder):
    with hippo.open(db, agent_id="a", embedder=local_embedder) as mem:
        mine = mem.store_memory("Caroline: Yesterday! It was the first time I went.")
    with hippo.open(db, agent_id="b", embedder=local_embedder) as other:
        text = "Melanie: The museum trip with the kids is booked. Ça coûte 5 €."
        theirs = other.store_memory(text)
        assert other.store.lengths("b", [mine.id, theirs.id, "nope"]) == {theirs.id: len(text)}
        assert other.store.lengths("b", []) == {}


def test_keyword_only_recall_is_reranked_too(db):
    with hippo.open(db, agent_id="a", embedder="none") as mem:
        store(mem, OTHER_DAY + CONVERSATION, MONDAY, "monday")
    with hippo.open(db, agent_id="a", embedder="none", rerank="learned") as mem:
        result = mem.recall_memories(QUESTION, limit=3, touch=False)
    assert result.mode == "keyword"
    assert result.hits and "support group" in result.hits[0].content
    assert rerank.SEEDS >= 8
