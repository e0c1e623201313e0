"""store_memory / store_memories and recall_memories: dedup, batching, filters, scoring, refresh."""

from __future__ import annotations

import itertools
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest
from support import sql
from ulid import ULID

import hippo
from hippo import MemoryInput
from hippo.core.fusion import Fusion
from hippo.core.ports import ChunkFilter, SearchQuery
from hippo.core.recall.pool import as_hits, find_candidates, own_relevance, rank
from hippo.core.strength import ScoreWeights
from hippo.types import Chunk


def add_fact(mem, content: str, **fields) -> str:
    """A fact chunk, written through the store (remember_facts does not exist yet)."""
    now = mem.now()
    chunk = Chunk(
        id=str(ULID()), agent_id=mem.agent_id, content=content, kind="fact", metadata=fields.pop("metadata", {}),
        running_intensity=0.5, encounter_count=1, access_count=0, last_accessed_at=now, created_at=now, **fields,
    )
    [vector] = mem.embedding.documents([content])
    mem.store.insert_chunks(mem.agent_id, [chunk], [vector])
    return chunk.id


def ids(recall) -> set[str]:
    return {h.id for h in recall}


def ids_of(pairs) -> set[str]:
    return {i for i, _ in pairs}


# -- store --------------------------------------------------------------------


def test_insert_then_strengthen(mem, db):
    first = mem.store_memory("We spent two hours debugging the OAuth redirect URI")
    assert first.action == "inserted"
    assert first.vector_pending is False
    again = mem.store_memory("We spent two hours debugging the OAuth redirect URI")
    assert (again.action, again.id) == ("strengthened", first.id)
    # Verbatim only: a different spacing or case is another memory.
    other = mem.store_memory("We spent two hours debugging the OAuth redirect URI.")
    assert other.action == "inserted" and other.id != first.id
    assert sql(db, "SELECT count(*) FROM chunks")[0][0] == 2


def test_stored_memory_round_trips(mem, clock):
    observed = datetime(2024, 6, 1, 9, 30, tzinfo=timezone.utc)
    stored = mem.store_memory(
        "Quarterly report due Friday", {"source": "email", "tags": ["work"]}, 0.3, observed_at=observed
    )
    chunk = mem.get_memory(stored.id)
    assert chunk.content == "Quarterly report due Friday"
    assert chunk.metadata == {"source": "email", "tags": ["work"]}
    assert chunk.running_intensity == 0.3
    assert chunk.observed_at == observed
    assert chunk.created_at == clock()
    assert chunk.agent_id == "alice"
    assert chunk.has_vector


def test_batch_makes_one_embedding_call(mem, embedder, db):
    texts = [
        "The staging cluster has three nodes",
        "The production cluster has nine nodes",
        "The staging cluster has three nodes",  # duplicate inside the batch
        "Backups run nightly at 02:00",
        MemoryInput("Monitoring uses Prometheus", {"tags": ["ops"]}, 0.8),
    ]
    calls = embedder.calls
    results = mem.store_memories(texts)
    assert embedder.calls == calls + 1

    assert [r.action for r in results] == ["inserted", "inserted", "strengthened", "inserted", "inserted"]
    assert results[2].id == results[0].id
    assert results[2].chunk.encounter_count == 2 and results[2].chunk.access_count == 1
    assert not any(r.vector_pending for r in results)
    assert sql(db, "SELECT count(*) FROM chunks")[0][0] == 4
    assert sql(db, "SELECT count(*) FROM chunks WHERE embedding IS NULL")[0][0] == 0
    assert sql(db, "SELECT encounter_count FROM chunks WHERE id = ?", (results[0].id,)) == [(2,)]
    assert mem.get_memory(results[4].id).metadata == {"tags": ["ops"]}
    for text in ("staging cluster", "production cluster", "backups nightly", "Prometheus monitoring"):
        assert len(mem.recall_memories(text, touch=False)) >= 1

    # Storing only known memories needs no embedding at all.
    calls = embedder.calls
    again = mem.store_memories(["Backups run nightly at 02:00", "Monitoring uses Prometheus"])
    assert [r.action for r in again] == ["strengthened", "strengthened"]
    assert embedder.calls == calls


def test_empty_batch(mem, embedder):
    calls = embedder.calls
    assert mem.store_memories([]) == []
    assert embedder.calls == calls


# -- filters ------------------------------------------------------------------


@pytest.mark.embedded_only('reads the store behind the memory')
def test_kind_filter(mem):
    memory = mem.store_memory("The user lives in Berlin near the river")
    fact = add_fact(mem, "The user lives in Berlin")
    assert ids(mem.recall_memories("user lives Berlin", touch=False)) == {memory.id, fact}
    assert ids(mem.recall_memories("user lives Berlin", kind="fact", touch=False)) == {fact}
    assert ids(mem.recall_memories("user lives Berlin", kind="memory", touch=False)) == {memory.id}
    assert ids(mem.recall_memories("user lives Berlin", kind=["fact", "memory"], touch=False)) == {memory.id, fact}


def test_tags_filter_requires_all(mem):
    both = mem.store_memory("Deploy notes one", {"tags": ["ops", "urgent"]})
    ops = mem.store_memory("Deploy notes two", {"tags": ["ops"]})
    urgent = mem.store_memory("Deploy notes three", {"tags": ["urgent"]})
    untagged = mem.store_memory("Deploy notes four")
    assert ids(mem.recall_memories("deploy notes", touch=False)) == {both.id, ops.id, urgent.id, untagged.id}
    assert ids(mem.recall_memories("deploy notes", tags=["ops", "urgent"], touch=False)) == {both.id}
    assert ids(mem.recall_memories("deploy notes", tags=["ops"], touch=False)) == {both.id, ops.id}
    assert ids(mem.recall_memories("deploy notes", tags="urgent", touch=False)) == {both.id, urgent.id}
    assert ids(mem.recall_memories("deploy notes", tags=["nope"], touch=False)) == set()


def test_metadata_filter_equality(mem):
    pdf = mem.store_memory("Paragraph about invoices", {"source": "pdf", "page": 3, "pinned": True, "owner": None})
    chat = mem.store_memory("Message about invoices", {"source": "chat", "page": 4, "pinned": False, "owner": "bob"})
    bare = mem.store_memory("Note about invoices")

    def found(**fields):
        return ids(mem.recall_memories("invoices", metadata=fields, touch=False))

    assert found() == {pdf.id, chat.id, bare.id}
    assert found(source="pdf") == {pdf.id}
    assert found(source="chat") == {chat.id}
    assert found(page=3) == {pdf.id}
    assert found(page=4, source="chat") == {chat.id}
    assert found(page=4, source="pdf") == set()
    assert found(pinned=True) == {pdf.id}
    assert found(pinned=False) == {chat.id}
    assert found(owner=None) == {pdf.id}  # an explicit null, not a missing key
    assert found(owner="bob") == {chat.id}
    assert found(source="PDF") == set()  # exact equality
    assert found(page="3") == set()  # text is not a number


def test_since_until_on_observed_or_created(mem, clock):
    # Observed long before it was stored: filtered by when it was observed.
    old = mem.store_memory(
        "Trip planning notes for Lisbon", observed_at=datetime(2024, 6, 1, tzinfo=timezone.utc)
    )
    clock.advance(days=10)
    recent = mem.store_memory("Trip planning notes for Porto")  # no observed_at: created_at counts
    cut = datetime(2024, 12, 1, tzinfo=timezone.utc)

    def found(**kw):
        return ids(mem.recall_memories("trip planning notes", touch=False, **kw))

    assert found() == {old.id, recent.id}
    assert found(since=cut) == {recent.id}
    assert found(until=cut) == {old.id}
    assert found(since="2025-01-05T00:00:00Z") == {recent.id}
    assert found(since=clock()) == {recent.id}  # since is inclusive
    assert found(until=clock()) == {old.id}  # until is exclusive
    assert found(since="2024-05-01T00:00:00+00:00", until="2024-07-01T00:00:00+00:00") == {old.id}
    # A naive datetime is taken as UTC.
    assert found(since=datetime(2024, 12, 1)) == {recent.id}


# -- scoring ------------------------------------------------------------------


def assert_score_parts(hit, *, vector_weight=0.6):
    sim = min(1.0, max(0.0, hit.similarity or 0.0))
    own = vector_weight * sim + (1 - vector_weight) * (hit.keyword or 0.0)
    assert hit.relevance == pytest.approx(own)  # its own match: what context lent is apart
    assert 0.0 <= hit.context <= 1.0 - own + 1e-9
    assert hit.score == pytest.approx((hit.relevance + hit.context) * (0.6 + 0.3 * hit.effective_strength
                                                                       + 0.1 * hit.recency))
    assert 0.0 <= hit.relevance <= 1.0
    assert 0.0 <= hit.effective_strength <= 1.0
    assert 0.0 <= hit.recency <= 1.0


def test_hits_carry_score_parts(make_mem, clock):
    mem = make_mem("alice", min_relevance=0.0)  # keep the unrelated memory in view
    mem.store_memory("The team decided to use SQLite instead of PostgreSQL", intensity=0.8)
    mem.store_memory("SQLite handles the prototype load fine", intensity=0.4)
    mem.store_memory("Lunch is at noon on Fridays", intensity=0.6)

    recall = mem.recall_memories("SQLite database decision", touch=False)
    assert recall.mode == "hybrid"
    assert len(recall) == 3
    for hit in recall:
        assert_score_parts(hit)
        assert hit.recency == pytest.approx(1.0)
        assert hit.effective_strength == pytest.approx(hit.chunk.running_intensity)
        assert hit.similarity is not None
    assert [h.score for h in recall] == sorted((h.score for h in recall), reverse=True)
    keyword_hits = [h for h in recall if h.keyword is not None]
    assert {h.content for h in keyword_hits} == {
        "The team decided to use SQLite instead of PostgreSQL",
        "SQLite handles the prototype load fine",
    }
    assert max(h.keyword for h in keyword_hits) == pytest.approx(1.0)  # scaled against the best

    clock.advance(days=30)
    recall = mem.recall_memories("SQLite database decision", touch=False)
    for hit in recall:
        assert_score_parts(hit)
        assert hit.recency == pytest.approx(0.74, abs=0.005)
        assert hit.effective_strength == pytest.approx(hit.chunk.running_intensity * 0.4868, rel=1e-3)
    data = recall.to_dict()
    assert set(data["hits"][0]) >= {"chunk", "score", "relevance", "similarity", "keyword", "effective_strength", "recency"}


def test_stronger_memory_ranks_higher_when_equally_relevant(mem):
    weak = mem.store_memory("Notes on the Lisbon trip itinerary", intensity=0.1)
    strong = mem.store_memory("Notes on the Lisbon trip itinerary!", intensity=0.9)
    recall = mem.recall_memories("Lisbon trip itinerary", touch=False)
    assert [h.id for h in recall][:2] == [strong.id, weak.id]


def test_rare_token_found_by_keyword(make_mem, local_embedder):
    # The real model: the fake one finds the permuted part numbers as close to the query as
    # the target, and their run lends them context (docs/decisions/recall.md, "Conversational context").
    mem = make_mem("alice", embedder=local_embedder)
    codes = sorted({"XR-" + "".join(p) for p in itertools.permutations("7731")} - {"XR-7731"})
    mem.store_memories([f"Part {code} is back in stock" for code in codes])
    mem.store_memories([f"General note number {i} about the espresso machine in the kitchen" for i in range(20)])
    target = mem.store_memory(
        "Last winter the shipment labelled XR-7731 held the replacement grinder for the espresso machine"
    )
    recall = mem.recall_memories("XR-7731", limit=3)
    assert recall[0].id == target.id
    assert recall[0].keyword == pytest.approx(1.0)
    recall = mem.recall_memories("where is XR-7731?", limit=3)
    assert recall[0].id == target.id


def test_limit_respected(mem):
    mem.store_memories([f"Gardening tip {i}: tomatoes like sun" for i in range(15)])
    assert len(mem.recall_memories("gardening tomatoes", touch=False)) == 10  # the default
    assert len(mem.recall_memories("gardening tomatoes", limit=3, touch=False)) == 3
    assert len(mem.recall_memories("gardening tomatoes", limit=1, touch=False)) == 1
    assert len(mem.recall_memories("gardening tomatoes", limit=1000, touch=False)) == 15


def test_recall_on_empty_memory(mem):
    recall = mem.recall_memories("anything at all")
    assert list(recall) == []
    assert recall.mode == "hybrid"


def test_query_of_only_punctuation_uses_vectors(make_mem):
    mem = make_mem("alice", min_relevance=0.0)
    stored = mem.store_memory("Some memory")
    recall = mem.recall_memories("?!", touch=False)
    assert recall.mode == "vector"
    assert [h.id for h in recall] == [stored.id]


@pytest.mark.embedded_only("reads the memory's settings")
def test_irrelevant_candidates_are_left_out(mem):
    mem.store_memory("The team decided to use SQLite instead of PostgreSQL")
    lunch = mem.store_memory("Lunch is at noon on Fridays")
    recall = mem.recall_memories("SQLite database decision")
    assert recall and all(h.relevance >= mem.settings.min_relevance for h in recall)
    assert lunch.id not in {h.id for h in recall}
    assert mem.get_memory(lunch.id).access_count == 0  # no retrieval event for what was not returned


# -- another connection writes -------------------------------------------------


def vector_side(mem, vector, depth):
    """The ids the store's vector side finds (a search with no words)."""
    return set(mem.store.search(mem.agent_id, SearchQuery(vector, (), ChunkFilter(), depth)).similarity)


@pytest.mark.embedded_only('reads the store behind the memory')
def test_another_connection_store_is_seen(make_mem):
    first = make_mem("alice")
    first.store_memory("The staging cluster runs on three small nodes")
    assert len(first.recall_memories("staging cluster nodes", touch=False)) == 1  # vector matrix loaded

    second = make_mem("alice")
    stored = second.store_memory("The production cluster runs on nine large nodes")

    recall = first.recall_memories("production cluster nine large nodes", touch=False)
    hit = next(h for h in recall if h.id == stored.id)
    assert hit.similarity is not None  # found by the refreshed vector matrix, not only by keyword
    # The vector side alone finds it too.
    vector = first.embedding.query("The production cluster runs on nine large nodes")
    assert stored.id in vector_side(first, vector, 5)


@pytest.mark.embedded_only('reads the store behind the memory')
def test_another_connection_deletes_disappear(make_mem):
    first = make_mem("alice")
    keep = first.store_memory("The staging cluster runs on three small nodes")
    doomed = first.store_memory("The production cluster runs on nine large nodes")
    gone_by_id = first.store_memory("The test cluster runs on one node")
    assert len(first.recall_memories("cluster nodes", touch=False)) == 3

    second = make_mem("alice")
    assert second.forget_memory("production cluster nine large nodes").count >= 1
    second.delete_memory(gone_by_id.id)

    recall = first.recall_memories("cluster nodes", touch=False)
    assert ids(recall) == {keep.id}
    vector = first.embedding.query("The production cluster runs on nine large nodes")
    assert vector_side(first, vector, 10) == {keep.id}
    with pytest.raises(hippo.NotFound):
        first.get_memory(doomed.id)


def test_other_connection_strengthens_same_row(make_mem, db):
    first = make_mem("alice")
    second = make_mem("alice")
    a = first.store_memory("Shared note", intensity=0.2)
    b = second.store_memory("Shared note", intensity=0.8)
    assert (b.action, b.id) == ("strengthened", a.id)
    assert b.chunk.running_intensity == pytest.approx(0.5)
    assert sql(db, "SELECT count(*) FROM chunks")[0][0] == 1


def test_recency_and_decay_follow_the_clock(mem, clock):
    stored = mem.store_memory("Old but gold", intensity=1.0)
    clock.advance(days=3)
    [hit] = mem.recall_memories("old gold", touch=False)
    assert hit.recency == pytest.approx(0.97, abs=0.001)

    # A memory recalled every month stays; its recency still falls with age.
    for _ in range(12):
        clock.advance(days=30)
        recall = mem.recall_memories("old gold")
        assert [h.id for h in recall] == [stored.id]
    clock.advance(days=2)  # 365 days old
    [hit] = mem.recall_memories("old gold", touch=False)
    assert hit.recency == pytest.approx(0.026, abs=0.001)
    assert hit.chunk.access_count == 12

    # Left alone for a year, even full intensity decays below 0.05 and is hidden.
    clock.advance(days=365 * 2)
    assert len(mem.recall_memories("old gold", touch=False)) == 0


def test_observed_at_does_not_change_recency(mem, clock):
    """Recency is seed 000's days since creation."""
    stored = mem.store_memory("Backfilled note", observed_at=clock() - timedelta(days=300))
    [hit] = mem.recall_memories("backfilled note", touch=False)
    assert hit.id == stored.id
    assert hit.recency == pytest.approx(1.0)


@pytest.mark.embedded_only('reads the store behind the memory')
def test_a_hit_deleted_while_ranking_is_left_out(mem, clock):
    kept = mem.store_memory("The cellar key hangs by the door")
    gone = mem.store_memory("The cellar light is broken")
    query = "cellar"
    found = find_candidates(mem.agent_context.store, query, mem.embedding.query(query), 50, ChunkFilter())
    ranked = rank(found, own_relevance(found, Fusion()), clock(), limit=10, weights=ScoreWeights(),
                  decay_lambda=0.001)
    assert {r.standing.id for r in ranked} == {kept.id, gone.id}
    mem.store.delete_chunks("alice", [gone.id])  # another process, between ranking and reading
    assert [h.id for h in as_hits(mem.agent_context.store, ranked)] == [kept.id]


def test_the_vector_side_reads_the_cosine_above_the_embedders_unrelated_level():
    plain, high = Fusion(0.6), Fusion(0.6, floor=0.7)
    assert plain.relevance(0.85, None) == pytest.approx(0.6 * 0.85)
    assert high.relevance(0.85, None) == pytest.approx(0.6 * 0.5)  # half-way from 0.7 to 1
    assert high.relevance(0.65, 1.0) == pytest.approx(0.4)  # below the floor: the keyword side alone
    assert high.relevance(1.0, None) == pytest.approx(0.6)


def test_a_memory_fuses_with_its_embedders_floor(make_mem, embedder, monkeypatch):
    monkeypatch.setattr(embedder, "thresholds", replace(embedder.thresholds, unrelated=0.5))
    mem = make_mem("alice")
    mem.store_memory("Notes on the Lisbon trip itinerary")
    hit = mem.recall_memories("Lisbon trip itinerary notes", touch=False)[0]
    sim = (hit.similarity - 0.5) / 0.5
    assert hit.relevance == pytest.approx(0.6 * sim + 0.4 * hit.keyword)
