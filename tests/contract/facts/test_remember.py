"""remember_facts end to end: extraction, recognition bands, LLM tie-break, actions, history."""

from __future__ import annotations

import json

import pytest
from support import sql

import hippo
from hippo.errors import ProviderError, StorageError
from hippo.providers.fake import FakeLLM

SEED_INPUT = (
    "I NEVER want to use Redux again, it was a nightmare. Oh and I tried that new café on Sukhumvit."
)


def facts(*pairs: tuple[str, float]) -> str:
    return json.dumps({"facts": [{"fact": f, "intensity": i} for f, i in pairs]})


def decisions(*labels: str) -> str:
    return json.dumps({"decisions": [{"pair": n, "label": label} for n, label in enumerate(labels, start=1)]})


@pytest.fixture
def open_mem(db, clock, local_embedder):
    opened = []

    def make(llm=None, **kwargs):
        mem = hippo.open(db, agent_id="alice", embedder=local_embedder, llm=llm,
                         clock=clock, **kwargs)
        opened.append(mem)
        return mem

    yield make
    for mem in opened:
        mem.close()


def dump(path) -> list[tuple]:
    return sql(path, "SELECT id, content, kind, running_intensity, encounter_count, access_count, "
                     "superseded_by FROM chunks ORDER BY id")


# -- the seed's example -------------------------------------------------------


def test_seed_example_offline(open_mem):
    result = open_mem().remember_facts(SEED_INPUT)
    assert result.extractor == "offline" and result.llm_calls == []
    assert len(result.facts) == 2
    redux, cafe = sorted(result.facts, key=lambda f: "Redux" not in f.fact)
    assert "Redux" in redux.fact and redux.intensity >= 0.6
    assert "Sukhumvit" in cafe.fact and cafe.intensity <= 0.3
    assert {f.action for f in result.facts} == {"new"}
    assert result.summary.startswith("Learned 2 facts: 2 new (")


def test_seed_example_with_scripted_llm(open_mem):
    llm = FakeLLM(script=[facts(("User strongly dislikes Redux", 0.85), ("User tried a café on Sukhumvit", 0.15))])
    mem = open_mem(llm)
    result = mem.remember_facts(SEED_INPUT)
    assert result.extractor == "llm"
    assert [(f.fact, f.intensity, f.action) for f in result.facts] == [
        ("User strongly dislikes Redux", 0.85, "new"),
        ("User tried a café on Sukhumvit", 0.15, "new"),
    ]
    assert len(result.llm_calls) == 1 and result.llm_calls[0].purpose == "extract"
    assert result.input_tokens > 0 and result.output_tokens > 0
    assert SEED_INPUT in llm.calls[0]["messages"][0].content and llm.calls[0]["json"] is True
    stored = sql(mem.database, "SELECT kind, running_intensity FROM chunks ORDER BY running_intensity")
    assert stored == [("fact", 0.15), ("fact", 0.85)]


def test_seed_summary_sentence_for_an_update(open_mem):
    llm = FakeLLM(script=[facts(("User strongly dislikes Redux", 0.8)),
                          facts(("User strongly dislikes Redux", 0.85), ("User tried a café on Sukhumvit", 0.15))])
    mem = open_mem(llm)
    mem.remember_facts("I can't stand Redux.")
    result = mem.remember_facts(SEED_INPUT)
    assert result.summary == (
        "Learned 2 facts: 1 new (tried a café on Sukhumvit), "
        "1 updated (strongly dislikes Redux — reinforced, intensity 0.85 → running avg 0.82)"
    )
    dup = result.facts[0]
    assert (dup.action, dup.decided_by, dup.intensity_before) == ("duplicate", "text", 0.8)


# -- supersession and history -------------------------------------------------


@pytest.mark.parametrize("with_llm", [True, False], ids=["llm", "offline"])
def test_moving_supersedes_and_history_links(open_mem, clock, with_llm):
    llm = FakeLLM(script=[facts(("User lives in Berlin", 0.4)), facts(("User moved to Lisbon", 0.5)),
                          decisions("SUPERSEDES")]) if with_llm else None
    mem = open_mem(llm)
    berlin = mem.remember_facts("I live in Berlin.").facts[0]
    clock.advance(days=3)
    result = mem.remember_facts("I moved to Lisbon.")
    lisbon = result.facts[0]
    assert lisbon.action == "supersedes"
    assert lisbon.superseded == [berlin.id]
    assert lisbon.decided_by == ("llm" if with_llm else "offline")
    assert "replaced" in result.summary

    recall = mem.recall_memories("Where does the user live?", limit=5)
    assert [h.content for h in recall if h.chunk.kind == "fact"] == [lisbon.fact]

    history = mem.fact_history(berlin.id)
    assert [v.id for v in history.versions] == [berlin.id, lisbon.id]
    # Supersession is a link both ways (seed 003's relations).
    assert [(x.kind, x.chunk.id) for x in mem.related(lisbon.id)] == [("supersedes", berlin.id)]
    assert [(x.kind, x.chunk.id) for x in mem.related(berlin.id)] == [("superseded_by", lisbon.id)]
    assert history.versions[0].superseded_by == lisbon.id
    assert history.current is not None and history.current.id == lisbon.id
    assert history.versions[1].created_at - history.versions[0].created_at == clock() - history.versions[0].created_at
    assert mem.fact_history(lisbon.id).versions == history.versions


def test_same_thing_three_times_is_one_fact(open_mem):
    llm = FakeLLM(script=[
        facts(("User loves hiking", 0.5)),
        facts(("User really enjoys hiking", 0.8)), decisions("DUPLICATE"),
        facts(("Hiking is something the user loves", 0.9)), decisions("DUPLICATE"),
    ])
    mem = open_mem(llm)
    first = mem.remember_facts("I love hiking.").facts[0]
    mem.remember_facts("Honestly, I really enjoy hiking!")
    third = mem.remember_facts("Hiking is something I love.").facts[0]
    assert third.action == "duplicate" and third.id == first.id
    rows = sql(mem.database, "SELECT encounter_count, running_intensity FROM chunks WHERE kind = 'fact'")
    assert len(rows) == 1
    encounters, intensity = rows[0]
    assert encounters == 3
    after_two = (0.5 * 1 + 0.8) / 2
    assert intensity == pytest.approx((after_two * 2 + 0.9) / 3)


def test_at_most_two_llm_calls_for_many_ambiguous_pairs(open_mem):
    llm = FakeLLM(script=[
        facts(("User lives in Berlin", 0.4), ("User works at Siemens as a software engineer", 0.4),
              ("User has a dog named Rex", 0.4)),
    ])
    mem = open_mem(llm)
    mem.remember_facts("I live in Berlin, I work at Siemens as a software engineer and I have a dog named Rex.")

    def classify(system, messages):
        text = messages[-1].content
        pairs = [line for line in text.splitlines() if line[:1].isdigit()]
        return decisions(*(["DISTINCT"] * len(pairs)))

    llm.push(facts(("User lives in Lisbon now", 0.6), ("User works at Google as a software engineer", 0.6),
                   ("User has a cat named Rex", 0.4)), classify)
    result = mem.remember_facts("Now I live in Lisbon, work at Google, and have a cat named Rex.")
    assert [c.purpose for c in result.llm_calls] == ["extract", "classify"]
    asked = llm.calls[-1]["messages"][-1].content
    asked_pairs = sum(line[:1].isdigit() for line in asked.splitlines())
    assert [f.decided_by for f in result.facts] == ["llm"] * 3  # every fact had an ambiguous pair ...
    assert asked_pairs >= 3  # ... and all of them went into the one classification call
    assert {f.action for f in result.facts} == {"distinct"}


def test_observed_at_is_offered_and_stored(open_mem):
    llm = FakeLLM(script=[facts(("User went to the dentist on 2026-03-09", 0.3))])
    mem = open_mem(llm)
    result = mem.remember_facts("I went to the dentist yesterday.", observed_at="2026-03-10T09:00:00Z")
    assert "2026-03-10T09:00:00" in llm.calls[0]["messages"][0].content
    chunk = mem.get_memory(result.facts[0].id)
    assert chunk.observed_at.isoformat().startswith("2026-03-10T09:00:00")


def test_nothing_to_learn(open_mem):
    llm = FakeLLM(script=[facts()])
    result = open_mem(llm).remember_facts("Hi there!")
    assert result.facts == [] and result.summary == "Learned nothing: no facts found."


# -- failures change nothing ---------------------------------------------------


def test_provider_error_after_extraction_changes_nothing(open_mem):
    llm = FakeLLM(script=[facts(("User lives in Berlin", 0.4))])
    mem = open_mem(llm)
    mem.remember_facts("I live in Berlin.")
    before = dump(mem.database)
    llm.push(facts(("User moved to Lisbon", 0.5), ("User adopted a cat", 0.5)),
             ProviderError("classification service down", retryable=True))
    with pytest.raises(ProviderError):
        mem.remember_facts("I moved to Lisbon and adopted a cat.")
    assert dump(mem.database) == before


def test_store_error_during_actions_changes_nothing(open_mem, monkeypatch):
    llm = FakeLLM(script=[facts(("User lives in Berlin", 0.4)),
                          facts(("User adopted a cat", 0.5), ("User moved to Lisbon", 0.5)), decisions("SUPERSEDES")])
    mem = open_mem(llm)
    mem.remember_facts("I live in Berlin.")
    before = dump(mem.database)

    def broken(*args, **kwargs):
        raise StorageError("disk full (injected)")

    monkeypatch.setattr(mem.store, "supersede", broken)  # fails after the cat was inserted
    with pytest.raises(StorageError):
        mem.remember_facts("I adopted a cat and moved to Lisbon.")
    assert dump(mem.database) == before
    monkeypatch.undo()
    assert [h.content for h in mem.recall_memories("Berlin", touch=False)] == ["User lives in Berlin"]


def test_malformed_twice_fails_loudly_and_writes_nothing(open_mem):
    llm = FakeLLM(script=["Sure! Here are the facts: User likes tea.", "I cannot produce JSON, sorry."])
    mem = open_mem(llm)
    with pytest.raises(ProviderError, match="after a retry"):
        mem.remember_facts("I like tea.")
    assert dump(mem.database) == []
    assert "not usable" in llm.calls[1]["messages"][-1].content


def test_deleting_the_newest_version_keeps_the_old_one_hidden(open_mem):
    mem = open_mem()
    berlin = mem.remember_facts("I live in Berlin.").facts[0]
    lisbon = mem.remember_facts("I moved to Lisbon.").facts[0]
    mem.delete_memory(lisbon.id)
    history = mem.fact_history(berlin.id)
    assert [v.id for v in history.versions] == [berlin.id] and history.current is None
    assert "Berlin" not in " ".join(h.content for h in mem.recall_memories("Where does the user live?"))


def test_a_latin_only_model_never_merges_texts_it_cannot_read(open_mem, db, local_embedder):
    # MiniLM reads most Chinese characters as [UNK]: "lives in Shanghai" and "works in Shanghai"
    # score 0.98 against each other. Its cosine alone must not merge them; offline, both stay.
    lives, works = local_embedder.embed_documents(["用户住在上海", "用户在上海工作"])
    assert float(lives @ works) > local_embedder.thresholds.duplicate  # what the band alone would merge
    mem = open_mem()
    first = mem.remember_facts("用户住在上海")
    second = mem.remember_facts("用户在上海工作")
    assert [f.action for f in first.facts] == ["new"]
    assert [f.action for f in second.facts] == ["distinct"], second.summary  # kept beside it
    assert sum(row[2] == "fact" for row in dump(db)) == 2
