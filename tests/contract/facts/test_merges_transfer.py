"""Merged wordings travel with their facts: export lists them, import restores them (a fresh database,
another agent, twice), ``split_fact`` works on them after the trip, and a bad entry writes nothing."""

from __future__ import annotations

import copy
import json

import pytest
from rejection import assert_rejected, snapshot
from support import sql

from hippo.core.transfer import derived_id

MIA = "My daughter is named Mia."
AGAIN = "I have a daughter called Mia."
WORDING = "User has a daughter called Mia"  # AGAIN as the offline extractor words it
PLANT = "01J00000000000000000000PQT"  # a memory's id in hand-written records
SAID = "2025-03-01T10:00:00+00:00"


@pytest.fixture
def fresh(backend, tmp_path, request):
    """A second, empty database on the test's backend."""
    if backend == "sqlite":
        yield str(tmp_path / "fresh.db")
        return
    server = request.getfixturevalue("postgres")
    url = server.new_database()
    yield url
    server.drop(url)


@pytest.fixture
def alice(make_mem, local_embedder, clock):
    """Alice's memory (the real MiniLM, released defaults): a fact with a reworded duplicate merged in."""
    mem = make_mem("alice", embedder=local_embedder)
    first = mem.remember_facts(MIA, metadata={"user": "kris"}).facts[0]
    clock.advance(days=2)
    again = mem.remember_facts(AGAIN, metadata={"user": "ana"}, observed_at=SAID).facts[0]
    assert (again.action, again.id) == ("duplicate", first.id)
    mem.store_memory("A plain note about the garden")
    return mem


def merges(db, agent="alice") -> list[tuple]:
    return sql(db, "SELECT id, fact_id, content, similarity, intensity FROM fact_merges WHERE agent_id = ? "
                   "ORDER BY id", (agent,))


def fact_of(mem):
    [fact] = [c for c in mem.list_memories().items if c.kind == "fact"]
    return fact


@pytest.mark.parametrize("vectors", [False, True], ids=["text", "vectors"])
def test_a_merged_wording_survives_export_and_import_into_a_fresh_database(alice, make_mem, local_embedder,
                                                                            fresh, vectors):
    fact = fact_of(alice)
    [merged] = alice.fact_history(fact.id).merged
    records = list(alice.export_records(vectors=vectors))
    [record] = [r for r in records if r.get("id") == fact.id]
    assert record["merged"] == [{"id": merged.id, "content": merged.content,
                                 "merged_at": merged.merged_at.isoformat(timespec="microseconds"),
                                 "similarity": merged.similarity, "intensity": merged.intensity,
                                 "metadata": {"user": "ana"}, "source": "extraction", "session_id": None,
                                 "observed_at": "2025-03-01T10:00:00.000000+00:00"}]
    assert all("merged" not in r for r in records if r.get("kind") == "memory")
    json.dumps(records)  # JSON-ready, as the CLI writes it

    copy_ = make_mem("alice", embedder=local_embedder, path=fresh)
    result = copy_.import_records(records)
    assert (result.inserted, result.merged) == (2, 1)
    assert copy_.fact_history(fact.id).merged == [merged]  # id, wording, time, similarity, intensity, provenance

    split = copy_.split_fact(fact.id, merged.content)
    assert split.content == merged.content and split.created_at == merged.merged_at
    assert (split.metadata, split.observed_at) == ({"user": "ana"}, merged.observed_at)
    assert split.running_intensity == pytest.approx(merged.intensity)
    assert copy_.fact_history(fact.id).merged == []
    assert copy_.get_memory(fact.id).encounter_count == 1  # the strength the merge added, given back
    assert copy_.get_memory(split.id).has_vector


def test_importing_again_changes_no_merged_wording_and_a_split_one_stays_split(alice, make_mem, local_embedder,
                                                                                fresh):
    fact = fact_of(alice)
    records = list(alice.export_records())
    copy_ = make_mem("alice", embedder=local_embedder, path=fresh)
    copy_.import_records(records)
    assert copy_.import_records(records).merged == 0
    assert len(merges(fresh)) == 1

    copy_.split_fact(fact.id, WORDING)
    again = copy_.import_records(records)
    assert (again.inserted, again.merged) == (0, 0)  # the fact is there: skipped whole
    assert merges(fresh) == [] and copy_.fact_history(fact.id).merged == []


def test_into_the_same_database_the_wording_follows_its_renamed_fact(alice, make_mem, local_embedder, db):
    fact = fact_of(alice)
    [merged] = alice.fact_history(fact.id).merged
    records = list(alice.export_records())
    bob = make_mem("bob", embedder=local_embedder)
    assert bob.import_records(records).merged == 1
    renamed = derived_id(fact.id, "bob")
    [copied] = bob.fact_history(renamed).merged
    assert (copied.id, copied.fact_id, copied.content) == (derived_id(merged.id, "bob"), renamed, merged.content)
    assert bob.import_records(records).merged == 0
    assert len(merges(db, "bob")) == 1

    bob.split_fact(renamed, WORDING)
    assert alice.fact_history(fact.id).merged == [merged]  # alice's is her own


def test_an_entry_without_provenance_reads_it_as_empty(alice, make_mem, local_embedder, fresh):
    older = ("metadata", "source", "session_id", "observed_at")  # as an export made before they were kept
    records = _bad(list(alice.export_records()), lambda merged: [{k: val for k, val in m.items() if k not in older}
                                                                for m in merged])
    copy_ = make_mem("alice", embedder=local_embedder, path=fresh)
    assert copy_.import_records(records).merged == 1
    [merged] = copy_.fact_history(fact_of(alice).id).merged
    assert (merged.metadata, merged.source, merged.session_id, merged.observed_at) == ({}, None, None, None)


def test_an_export_from_before_merged_wordings_still_imports(alice, make_mem, local_embedder, fresh):
    records = [{k: val for k, val in r.items() if k != "merged"} for r in alice.export_records()]
    copy_ = make_mem("alice", embedder=local_embedder, path=fresh)
    result = copy_.import_records(records)
    assert (result.inserted, result.merged) == (2, 0)
    assert copy_.fact_history(fact_of(alice).id).merged == []
    null = [dict(r, merged=None) if r.get("kind") == "fact" else r for r in records]  # null reads as none
    assert make_mem("carol", embedder=local_embedder, path=fresh).import_records(null).merged == 0


def test_deleting_or_forgetting_an_imported_fact_takes_its_merged_wordings(alice, make_mem, local_embedder, fresh):
    fact = fact_of(alice)
    records = list(alice.export_records())
    copy_ = make_mem("alice", embedder=local_embedder, path=fresh)
    copy_.import_records(records)
    copy_.delete_memory(fact.id)
    assert merges(fresh) == []

    carol = make_mem("carol", embedder=local_embedder, path=fresh)
    carol.import_records(records)
    assert len(merges(fresh, "carol")) == 1
    assert fact.id in {f.id for f in carol.forget_memory("the user's daughter Mia").deleted}
    assert merges(fresh, "carol") == []

    dave = make_mem("dave", embedder=local_embedder, path=fresh)
    dave.import_records(records)
    assert len(merges(fresh, "dave")) == 1
    dave.delete_all()
    assert merges(fresh, "dave") == []


def _bad(records, change):
    """``records`` with the fact's ``merged`` replaced by ``change(merged)``."""
    records = copy.deepcopy(records)
    for record in records:
        if record.get("merged"):
            record["merged"] = change(record["merged"])
    return records


def _entry(**fields):
    return lambda merged: [dict(merged[0], **fields)]


def _without(name):
    return lambda merged: [{k: val for k, val in merged[0].items() if k != name}]


BAD = {
    "not a list": lambda merged: merged[0],
    "not an object": lambda merged: ["a wording"],
    "bad id": _entry(id="not a ulid"),
    "no id": _without("id"),
    "no content": _without("content"),
    "blank content": _entry(content="   "),
    "content not text": _entry(content=["a", "list"]),
    "no merged_at": _without("merged_at"),
    "bad merged_at": _entry(merged_at="yesterday"),
    "intensity above 1": _entry(intensity=1.5),
    "no intensity": _without("intensity"),
    "similarity not a number": _entry(similarity="high"),
    "similarity beyond 1": _entry(similarity=3.0),
    "metadata not an object": _entry(metadata=["user"]),
    "bad metadata key": _entry(metadata={"a b": 1}),
    "bad source": _entry(source="Not A Word"),
    "bad session": _entry(session_id="has space"),
    "bad observed_at": _entry(observed_at="last spring"),
    "id twice": lambda merged: [merged[0], merged[0]],
}


@pytest.mark.parametrize("change", BAD.values(), ids=BAD.keys())
def test_a_malformed_merged_wording_is_refused_and_nothing_is_written(alice, make_mem, local_embedder, db, change):
    records = list(alice.export_records())
    bob = make_mem("bob", embedder=local_embedder)
    before = merges(db, "bob"), snapshot(db)
    error = assert_rejected(db, lambda: bob.import_records(_bad(records, change)))
    assert "merged" in error.message and "record " in error.message
    assert (merges(db, "bob"), snapshot(db)) == before


def test_a_memory_holds_no_merged_wordings(mem, db):
    header = next(mem.export_records())
    wording = {"id": "01J00000000000000000000MRG", "content": "A note", "merged_at": "2025-01-01T00:00:00Z",
               "similarity": None, "intensity": 0.5}
    record = {"type": "chunk", "id": PLANT, "kind": "memory", "content": "A plain note", "metadata": {},
              "running_intensity": 0.5, "encounter_count": 1, "access_count": 0,
              "last_accessed_at": "2025-01-01T00:00:00Z", "created_at": "2025-01-01T00:00:00Z",
              "merged": [wording]}
    error = assert_rejected(db, lambda: mem.import_records([header, record]))
    assert "only facts" in error.message
    assert mem.import_records([header, dict(record, merged=[])]).inserted == 1
