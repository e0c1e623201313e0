"""Contextual word alignment for the offline pair classifier (hippo.core.facts.pair_tokens) and the word states it
reads (LocalEmbedder.word_states, EmbeddingService.word_states), with the real local model."""

from __future__ import annotations

import numpy as np
import pytest

from hippo.core.facts.pair_tokens import TOKEN_FEATURES, contextual

pytest.importorskip("onnxruntime")


class _BrokenSession:
    """An ONNX session that fails the way a corrupt or vanished model does."""

    def run(self, *_args, **_kwargs):
        raise RuntimeError("model file is gone")


def test_word_states_give_the_words_as_written_with_one_unit_vector_each(local_embedder):
    texts = ["User lives in Zürich.", "User's home is in Zürich, Switzerland", "ok"]
    found = local_embedder.word_states(texts)
    assert [words for words, _ in found] == [
        ["User", "lives", "in", "Zürich", "."],
        ["User", "'", "s", "home", "is", "in", "Zürich", ",", "Switzerland"],
        ["ok"],
    ]
    for words, vectors in found:
        assert vectors.shape == (len(words), 384) and vectors.dtype == np.float32
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # "Zürich" is several word pieces averaged into one vector, in context: close across the two texts.
    assert float(found[0][1][3] @ found[1][1][6]) > 0.8
    assert local_embedder.word_states([]) == []


def test_word_states_in_a_batch_match_word_states_alone(local_embedder):
    from hippo.providers.local import LocalEmbedder

    texts = ["User likes tea", "User's sister moved to Lisbon last spring", "User drinks tea"]
    alone = [local_embedder.word_states([t])[0] for t in texts]
    for batched in (local_embedder.word_states(texts), LocalEmbedder(batch_size=2).word_states(texts)):
        assert [words for words, _ in batched] == [words for words, _ in alone]
        assert all(np.allclose(a[1], b[1], atol=1e-4) for a, b in zip(alone, batched))


def test_a_paraphrase_aligns_better_than_a_one_detail_change(local_embedder):
    states = local_embedder.word_states
    paraphrase = contextual("User lives in Berlin", "User resides in Berlin", states, readable=True)
    changed = contextual("User hates early meetings", "User hates long meetings", states, readable=True)
    assert set(paraphrase) == set(TOKEN_FEATURES)
    assert paraphrase["tok_min"] > changed["tok_min"] + 0.2
    assert paraphrase["tok_weak"] == 0.0 < changed["tok_weak"]
    same = contextual("User likes tea", "User likes tea", states, readable=True)
    assert same["tok_min"] == pytest.approx(1.0, abs=1e-5) and same["tok_only_old"] == same["tok_only_new"] == 0.0


def test_no_states_or_an_unreadable_script_is_no_evidence(local_embedder):
    zeros = dict.fromkeys(TOKEN_FEATURES, 0.0)
    assert contextual("User lives in Berlin", "User resides in Berlin", None, readable=True) == zeros
    assert contextual("ผู้ใช้ชอบกาแฟ", "ผู้ใช้ชอบชา", local_embedder.word_states, readable=False) == zeros
    assert contextual("User lives in Berlin", "User resides in Berlin", lambda texts: [], readable=True) == zeros


def test_the_memory_reads_word_states_through_its_embedding_service(tmp_path, local_embedder):
    import hippo

    with hippo.open(tmp_path / "states.db", embedder=local_embedder, offline_pairs="model") as mem:
        found = mem.embedding.word_states(["User drinks coffee"])
        assert found[0][0] == ["User", "drinks", "coffee"] and found[0][1].shape == (3, 384)
        assert mem.agent_context.offline_rule.states == mem.embedding.word_states


def test_an_embedder_that_is_down_gives_no_evidence(tmp_path):
    import hippo
    from hippo.providers.local import LocalEmbedder

    down = LocalEmbedder()
    session, tokenizer = down._load()
    with hippo.open(tmp_path / "down.db", embedder=down, offline_pairs="model") as mem:
        down._runtime = (_BrokenSession(), tokenizer)
        assert mem.embedding.word_states(["User drinks coffee", "User drinks tea"]) == []
        assert "model file is gone" in (mem.embedding.last_error or "")
        feats = contextual("User drinks coffee", "User drinks tea", mem.embedding.word_states, readable=True)
        assert feats == dict.fromkeys(TOKEN_FEATURES, 0.0)
    with hippo.open(tmp_path / "none.db", embedder="none") as keyword_only:
        assert keyword_only.embedding.word_states(["User drinks coffee"]) == []
    del session
