"""Merged wordings: a duplicate keeps its words in the fact's history, and a wrong merge splits back."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from support import sql
from traces import occurrences, scrub, total

import hippo
from hippo.errors import InvalidInput, NotFound
from hippo.providers.fake import FakeLLM

SECRET_WORDING = "User's daughter Mia goes by Zyzzogeton-Quibblefrump at school"


def facts(*pairs: tuple[str, float]) -> str:
    return json.dumps({"facts": [{"fact": f, "intensity": i} for f, i in pairs]})


def duplicate() -> str:
    return json.dumps({"decisions": [{"pair": 1, "label": "DUPLICATE"}]})


@pytest.fixture
def local(make_mem, local_embedder):
    """Alice's memory with the real MiniLM and the released defaults (no LLM)."""
    return make_mem("alice", embedder=local_embedder)


def merges(db) -> list[tuple]:
    return sql(db, "SELECT id, fact_id, content FROM fact_merges ORDER BY id")


def test_the_default_recognises_a_reworded_duplicate_and_keeps_its_words(local, clock):
    first = local.remember_facts("My daughter is named Mia.").facts[0]
    clock.advance(days=2)
    again = local.remember_facts("I have a daughter called Mia.").facts[0]
    assert (again.action, again.decided_by, again.id) == ("duplicate", "offline", first.id)

    history = local.fact_history(first.id)
    [merged] = history.merged
    assert merged.fact_id == first.id and merged.content == again.fact != first.fact
    assert merged.merged_at == clock() and merged.similarity == pytest.approx(again.similarity)
    assert merged.intensity == again.intensity
    assert local.get_memory(first.id).encounter_count == 2


def test_the_same_words_again_add_no_merged_wording(local):
    first = local.remember_facts("My daughter is named Mia.").facts[0]
    again = local.remember_facts("My daughter is named Mia!").facts[0]
    assert (again.action, again.decided_by) == ("duplicate", "text")
    assert local.fact_history(first.id).merged == []


def test_split_fact_makes_a_merged_wording_its_own_fact(local, clock):
    first = local.remember_facts("My daughter is named Mia.").facts[0]
    before = local.get_memory(first.id)
    clock.advance(hours=5)
    merged_at = clock()
    again = local.remember_facts("I have a daughter called Mia.").facts[0]
    assert again.id == first.id
    clock.advance(days=1)

    split = local.split_fact(first.id, "  user HAS a daughter called mia ")  # read up to case and spacing
    assert split.kind == "fact" and split.id != first.id and split.content == again.fact
    assert split.encounter_count == 1 and split.running_intensity == pytest.approx(again.intensity)
    assert split.created_at == merged_at  # learned when it was said, not when it was split
    stored = local.get_memory(split.id)
    assert stored.content == again.fact and stored.has_vector and stored.superseded_by is None
    assert local.fact_history(first.id).merged == []
    restored = local.get_memory(first.id)
    assert restored.encounter_count == before.encounter_count == 1
    assert restored.running_intensity == pytest.approx(before.running_intensity)
    found = local.recall_memories("a daughter called Mia", limit=5, touch=False)
    assert split.id in [h.id for h in found]


def test_a_split_fact_takes_the_metadata_source_and_session_it_was_said_with(local, clock, db):
    first = local.remember_facts("My daughter is named Mia.", metadata={"user": "kris"}).facts[0]
    said = clock() - timedelta(days=3)
    local.remember_facts("I have a daughter called Mia.", metadata={"user": "ana", "tags": ["family"]},
                         observed_at=said)
    [merged] = local.fact_history(first.id).merged
    assert (merged.metadata, merged.observed_at, merged.source) == ({"user": "ana", "tags": ["family"]}, said,
                                                                    "extraction")
    split = local.split_fact(first.id, merged.content)
    assert (split.metadata, split.observed_at, split.source) == ({"user": "ana", "tags": ["family"]}, said,
                                                                 "extraction")
    assert local.get_memory(first.id).metadata == {"user": "kris"}
    found = local.recall_memories("a daughter called Mia", metadata={"user": "ana"}, touch=False)
    assert [h.id for h in found] == [split.id]


def test_a_wording_merged_before_its_provenance_was_kept_splits_without_one(local, db, clock):
    first = local.remember_facts("My daughter is named Mia.", metadata={"user": "kris"}).facts[0]
    sql(db, "INSERT INTO fact_merges (id, agent_id, fact_id, content, similarity, intensity, merged_at) "
            "VALUES ('01J00000000000000000000MRG', 'alice', ?, 'User has a daughter called Mia', NULL, 0.5, ?)",
        (first.id, clock().isoformat()))
    [merged] = local.fact_history(first.id).merged
    assert (merged.metadata, merged.source, merged.session_id, merged.observed_at) == ({}, None, None, None)
    split = local.split_fact(first.id, merged.content)
    assert (split.metadata, split.source, split.session_id, split.observed_at) == ({}, "extraction", None, None)


def test_split_fact_refuses_bad_input_and_changes_nothing(local, db):
    first = local.remember_facts("My daughter is named Mia.").facts[0]
    local.remember_facts("I have a daughter called Mia.")
    memory = local.store_memory("a plain note about Mia")
    chunks = sql(db, "SELECT * FROM chunks ORDER BY id")
    kept = merges(db)
    assert len(kept) == 1

    with pytest.raises(InvalidInput, match="was not merged into fact"):
        local.split_fact(first.id, "User has a son called Mia")
    with pytest.raises(NotFound):
        local.split_fact("01J0000000000000000000000Z", "User has a daughter called Mia")
    with pytest.raises(InvalidInput):
        local.split_fact("not an id", "User has a daughter called Mia")
    with pytest.raises(InvalidInput):
        local.split_fact(first.id, "   ")
    with pytest.raises(InvalidInput, match="not a fact"):
        local.split_fact(memory.id, "User has a daughter called Mia")
    assert sql(db, "SELECT * FROM chunks ORDER BY id") == chunks
    assert merges(db) == kept

    local.split_fact(first.id, "User has a daughter called Mia")
    with pytest.raises(InvalidInput, match="no wording was merged"):
        local.split_fact(first.id, "User has a daughter called Mia")  # split already


def test_an_llm_merge_keeps_the_wording_too(make_mem, local_embedder):
    llm = FakeLLM(script=[facts(("User's daughter is named Mia", 0.5)), facts((SECRET_WORDING, 0.7)), duplicate()])
    mem = make_mem("alice", embedder=local_embedder, llm=llm)
    first = mem.remember_facts("My daughter is named Mia.").facts[0]
    again = mem.remember_facts("At school they call Mia Zyzzogeton-Quibblefrump.").facts[0]
    assert (again.action, again.decided_by, again.id) == ("duplicate", "llm", first.id)
    assert [m.content for m in mem.fact_history(first.id).merged] == [SECRET_WORDING]


@pytest.mark.parametrize("how", ["delete", "forget", "delete_all"])
def test_removing_a_fact_removes_its_merged_wordings_from_every_file(make_mem, local_embedder, db, how):
    llm = FakeLLM(script=[facts(("User's daughter is named Mia", 0.5)), facts((SECRET_WORDING, 0.7)), duplicate()])
    mem = make_mem("alice", embedder=local_embedder, llm=llm)
    first = mem.remember_facts("My daughter is named Mia.").facts[0]
    mem.remember_facts("At school they call Mia Zyzzogeton-Quibblefrump.")
    mem.store_memories([f"Gardening note {i}: tomatoes need sun" for i in range(20)])
    assert total(occurrences(db)) > 0

    if how == "delete":
        result = mem.delete_memory(first.id)
    elif how == "forget":
        result = mem.forget_memory("the user's daughter Mia")
        assert first.id in [f.id for f in result.deleted]
    else:
        result = mem.delete_all()
    scrub(mem, result)
    assert merges(db) == []
    found = occurrences(db)
    assert total(found) == 0, {k: v for k, v in found.items() if v}


def test_archiving_keeps_merged_wordings_and_restoring_brings_them_back(db, clock, local_embedder):
    llm = FakeLLM(script=[facts(("User's daughter is named Mia", 0.5)), facts((SECRET_WORDING, 0.7)), duplicate()])
    with hippo.open(db, agent_id="alice", embedder=local_embedder, llm=llm, clock=clock) as mem:
        first = mem.remember_facts("My daughter is named Mia.").facts[0]
        mem.remember_facts("At school they call Mia Zyzzogeton-Quibblefrump.")
        assert mem.store.archive_chunks("alice", [first.id], clock()) == 1
        assert [row[2] for row in merges(db)] == [SECRET_WORDING]
        assert mem.restore_memory(first.id)
        assert [m.content for m in mem.fact_history(first.id).merged] == [SECRET_WORDING]
        mem.store.archive_chunks("alice", [first.id], clock())
        mem.delete_memory(first.id)  # deleting the archived fact takes its wordings with it
        assert merges(db) == []


def test_merged_wordings_belong_to_their_agent(make_mem, local_embedder):
    alice = make_mem("alice", embedder=local_embedder)
    bob = make_mem("bob", embedder=local_embedder)
    first = alice.remember_facts("My daughter is named Mia.").facts[0]
    alice.remember_facts("I have a daughter called Mia.")
    with pytest.raises(NotFound):
        bob.split_fact(first.id, "User has a daughter called Mia")
    assert len(alice.fact_history(first.id).merged) == 1
