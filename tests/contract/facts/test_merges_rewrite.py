"""A fact's new text takes the wordings merged into it (they were rewordings of the old text), in the
write that replaces it; the same text, new metadata, a supersession or another fact keep theirs."""

from __future__ import annotations

import json

import pytest
from support import sql
from traces import occurrences, scrub, total
from ulid import ULID

import hippo
from hippo.errors import InvalidInput
from hippo.providers.fake import FakeLLM

SECRET_WORDING = "User's daughter Mia goes by Zyzzogeton-Quibblefrump at school"


def facts(*pairs: tuple[str, float]) -> str:
    return json.dumps({"facts": [{"fact": f, "intensity": i} for f, i in pairs]})


def decided(label: str) -> str:
    return json.dumps({"decisions": [{"pair": 1, "label": label}]})


def merges(db) -> list[tuple]:
    return sql(db, "SELECT fact_id, content FROM fact_merges ORDER BY merged_at, id")


def merged_mia(mem) -> str:
    """Mia's fact, with the canary's wording merged into it by the LLM; its id."""
    first = mem.remember_facts("My daughter is named Mia.").facts[0]
    again = mem.remember_facts("At school they call Mia Zyzzogeton-Quibblefrump.").facts[0]
    assert (again.action, again.id) == ("duplicate", first.id)
    assert [m.content for m in mem.fact_history(first.id).merged] == [SECRET_WORDING]
    return first.id


@pytest.fixture
def llm_mem(make_mem, local_embedder):
    """Alice's memory with the real MiniLM and an LLM that merges the canary's wording into Mia's fact."""
    def make(*script: str):
        llm = FakeLLM(script=[facts(("User's daughter is named Mia", 0.5)), facts((SECRET_WORDING, 0.7)),
                              decided("DUPLICATE"), *script])
        return make_mem("alice", embedder=local_embedder, llm=llm)
    return make


def test_a_new_text_takes_the_merged_wordings_from_every_file(llm_mem, db):
    mem = llm_mem()
    mem.store_memories([f"Gardening note {i}: tomatoes need sun" for i in range(20)])
    fact_id = merged_mia(mem)
    before = mem.get_memory(fact_id)
    assert total(occurrences(db)) > 0  # only the merged wording holds the canary

    updated = mem.update_memory(fact_id, content="User's daughter is named Mia Rose")

    assert updated.content == "User's daughter is named Mia Rose"
    assert (updated.encounter_count, updated.running_intensity) == (before.encounter_count,
                                                                    before.running_intensity)  # strength stays
    assert mem.fact_history(fact_id).merged == [] and merges(db) == []
    with pytest.raises(InvalidInput, match="no wording was merged"):
        mem.split_fact(fact_id, SECRET_WORDING)  # the old text's wording cannot come back
    scrub(mem)
    found = occurrences(db)
    assert total(found) == 0, {k: v for k, v in found.items() if v}
    mem.close()
    assert total(occurrences(db)) == 0


def test_the_same_text_or_new_metadata_keeps_them(llm_mem, db):
    mem = llm_mem()
    fact_id = merged_mia(mem)
    mem.update_memory(fact_id, metadata={"checked": True})
    mem.update_memory(fact_id, content=mem.get_memory(fact_id).content)  # no new text
    assert [m.content for m in mem.fact_history(fact_id).merged] == [SECRET_WORDING]
    assert mem.get_memory(fact_id).metadata == {"checked": True}


def imported_fact(mem, fact_id: str, content: str, wording: str) -> None:
    """A fact brought by an export with one wording merged into it."""
    when = "2025-01-01T00:00:00Z"
    record = {"type": "chunk", "id": fact_id, "kind": "fact", "content": content, "metadata": {},
              "running_intensity": 0.5, "encounter_count": 2, "access_count": 0, "last_accessed_at": when,
              "created_at": when, "merged": [{"id": str(ULID()), "content": wording, "merged_at": when,
                                              "similarity": 0.9, "intensity": 0.5}]}
    assert mem.import_records([next(mem.export_records()), record]).merged == 1


def test_only_the_rewritten_facts_wordings_go(llm_mem, make_mem, local_embedder, db):
    mem, bob = llm_mem(), make_mem("bob", embedder=local_embedder)
    mia = merged_mia(mem)
    leo, rex = str(ULID()), str(ULID())
    imported_fact(mem, leo, "User's son is named Leo", "User has a son called Leo")
    imported_fact(bob, rex, "Bob's dog is Rex", "Bob has a dog called Rex")

    mem.update_memory(mia, content="User's daughter is named Mia Rose")

    assert sorted(merges(db)) == sorted([(leo, "User has a son called Leo"), (rex, "Bob has a dog called Rex")])
    assert [m.content for m in mem.fact_history(leo).merged] == ["User has a son called Leo"]
    assert [m.content for m in bob.fact_history(rex).merged] == ["Bob has a dog called Rex"]


def test_a_superseded_version_keeps_its_wordings_and_the_new_fact_starts_without(llm_mem):
    mem = llm_mem(facts(("User's daughter Mia changed schools and is now called Mia Rose", 0.6)),
                  decided("SUPERSEDES"))
    old = merged_mia(mem)
    new = mem.remember_facts("Mia goes by Mia Rose at her new school.").facts[0]
    assert (new.action, new.superseded) == ("supersedes", [old])

    history = mem.fact_history(new.id)
    assert [(m.fact_id, m.content) for m in history.merged] == [(old, SECRET_WORDING)]  # the old version's
    assert mem.get_memory(old).superseded_by == new.id

    mem.update_memory(new.id, content="User's daughter is called Mia Rose at school")  # the new version's text
    assert [(m.fact_id, m.content) for m in mem.fact_history(new.id).merged] == [(old, SECRET_WORDING)]
    mem.update_memory(old, content="User's daughter was called something else at her old school")
    assert mem.fact_history(new.id).merged == []


def test_the_wordings_go_in_the_transaction_that_replaces_the_text(db, clock, local_embedder):
    llm = FakeLLM(script=[facts(("User's daughter is named Mia", 0.5)), facts((SECRET_WORDING, 0.7)),
                          decided("DUPLICATE")])
    with hippo.open(db, agent_id="alice", embedder=local_embedder, llm=llm, clock=clock) as mem:
        fact_id = merged_mia(mem)
        with pytest.raises(RuntimeError), mem.store.transaction():
            assert mem.store.update_content("alice", fact_id, "User's daughter is named Mia Rose", "h", None,
                                            clock())
            assert mem.store.merged_wordings("alice", [fact_id]) == []
            raise RuntimeError("the caller fails after the write")
        assert mem.get_memory(fact_id).content == "User's daughter is named Mia"  # rolled back together
        assert [m.content for m in mem.fact_history(fact_id).merged] == [SECRET_WORDING]
