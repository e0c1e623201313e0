"""The whole-agent summary behind the dashboard's stats (issue 22): strength, experience types and
chunks per day as the database counts them equal a recount in Python over every chunk; the
per-day counters (retrievals, recalls, consolidation, pruning) count each event on its day and go
with the agent."""

from __future__ import annotations

import json
from collections import Counter
from datetime import timedelta

import pytest

from hippo.core.experiences.importance import EXPERIENCE_TYPES
from hippo.core.strength import effective_strength
from hippo.errors import InvalidInput
from hippo.providers.fake import FakeLLM


def fact(text: str) -> str:
    return json.dumps({"facts": [{"fact": text, "intensity": 0.5}]})


def recount(mem, days: int) -> dict:
    """What the summary should say, from every chunk read one by one."""
    chunks = mem.store.list_chunks(mem.agent_id, limit=10_000)
    now = mem.now()
    live = [c for c in chunks if c.superseded_by is None]
    bins = Counter(min(9, max(0, int(10 * effective_strength(c.running_intensity, c.access_count, c.last_accessed_at,
                                                             now, decay_lambda=mem.settings.decay_lambda))))
                   for c in live)
    first = now.date() - timedelta(days=days - 1)
    stored = Counter(c.created_at.date().isoformat() for c in chunks if c.created_at.date() >= first)
    accessed = Counter(c.last_accessed_at.date().isoformat() for c in live
                       if c.access_count > 0 and c.last_accessed_at.date() >= first)
    records = mem.store.experience_records(mem.agent_id, [c.id for c in live])
    return {"strength": [bins.get(i, 0) for i in range(10)], "stored": stored, "accessed": accessed,
            "types": Counter(r.type for r in records.values())}


def by_day(summary, name: str) -> dict[str, int]:
    return {day: n for day, n in zip(summary.days, summary.daily[name]) if n}


@pytest.fixture
def lived(make_mem, clock):
    """Forty days of an agent's life: notes of many strengths, facts (one superseded), experiences
    of three types consolidated, recalls on some days."""
    llm = FakeLLM(script=[fact("User lives in Berlin"), fact("User lives in Lisbon"),
                          json.dumps({"decisions": [{"pair": 1, "label": "SUPERSEDES"}]})])
    mem = make_mem("alice", llm=llm)
    mem.remember_facts("I live in Berlin.")
    for day in range(40):
        mem.store_memory(f"Field note {day}: the heron came back to the pond", intensity=0.05 + 0.9 * (day % 10) / 10)
        if day % 7 == 3:
            mem.recall_memories(f"Field note {day - 2} heron", limit=2)
        if day == 20:
            mem.remember_facts("I moved to Lisbon.")
        clock.advance(hours=23)
    for kind, text in (("decision", "We chose the blue kayak"), ("insight", "Herons feed at dawn"),
                       ("decision", "We moved the meeting to Friday"), ("error", "The upload failed twice")):
        mem.record_experience(kind, text, importance=0.9)
    mem.consolidate()
    clock.advance(days=2)
    return mem


@pytest.mark.embedded_only('recounts every chunk from the store')
def test_the_summary_equals_a_recount_of_every_chunk(lived):
    mem = lived
    summary = mem.memory_summary(days=60)
    expected = recount(mem, 60)
    assert summary.strength == expected["strength"] and sum(summary.strength) == 40 + 1 + 4
    assert by_day(summary, "stored") == expected["stored"] and sum(summary.daily["stored"]) == 40 + 2 + 4
    assert by_day(summary, "last_accessed") == expected["accessed"] and expected["accessed"]
    assert summary.types == {t: expected["types"].get(t, 0) for t in EXPERIENCE_TYPES}
    assert summary.types["decision"] == 2 and summary.types["error"] == 1
    assert summary.days[-1] == mem.now().date().isoformat()
    assert summary.days[0] == min(expected["stored"])  # from the first day with anything to show
    # a shorter window counts only its days; strength and types are whole-agent either way
    week = mem.memory_summary(days=7)
    assert len(week.days) <= 7 and by_day(week, "stored") == recount(mem, 7)["stored"]
    assert week.strength == summary.strength and week.types == summary.types
    with pytest.raises(InvalidInput):
        mem.memory_summary(days=0)


@pytest.mark.embedded_only("reads every chunk's access count from the store")
def test_reading_the_summary_is_not_a_retrieval(lived):
    mem = lived
    before = {c.id: c.access_count for c in mem.store.list_chunks(mem.agent_id, limit=1000)}
    mem.memory_summary()
    assert {c.id: c.access_count for c in mem.store.list_chunks(mem.agent_id, limit=1000)} == before
    assert sum(mem.memory_summary().daily["recalls"]) == 6


def test_retrievals_and_recalls_are_counted_on_their_day(make_mem, clock):
    mem = make_mem("alice")
    for i in range(5):
        mem.store_memory(f"Note {i} about the heron by the pond")
    first = clock().date().isoformat()
    returned = len(mem.recall_memories("heron pond", limit=3).hits)
    mem.recall_memories("heron pond", limit=2, touch=False)  # a look: not counted
    clock.advance(days=1)
    mem.recall_memories("heron", limit=1)
    mem.recall_memories("no such words zebra quasar", limit=3)  # returned nothing: nothing to count
    summary = mem.memory_summary()
    assert by_day(summary, "retrievals") == {first: returned, clock().date().isoformat(): 1}
    assert by_day(summary, "recalls") == {first: 1, clock().date().isoformat(): 1}
    assert make_mem("bob").memory_summary().daily["retrievals"] == [0]  # another agent's counters are its own


def test_consolidation_and_pruning_are_counted_per_day(make_mem, clock):
    mem = make_mem("alice", ltm_max_memories=3)
    for i in range(4):
        mem.store_memory(f"Old note {i} about the garden")
        clock.advance(hours=1)
    mem.record_experience("decision", "We chose the blue kayak", importance=0.9)
    mem.record_experience("chat", "Said hello", importance=0.1)
    clock.advance(hours=2)  # past short_term_max_age: the chat is pruned by the next run
    mem.consolidate()
    today = clock().date().isoformat()
    summary = mem.memory_summary()
    totals = mem.stats().consolidation
    assert by_day(summary, "consolidated") == {today: 1} == {today: int(totals["consolidated"])}
    assert by_day(summary, "pruned") == {today: int(totals["pruned"])} == {today: 1}
    assert by_day(summary, "archived") == {today: 2} and mem.stats().archived == 2  # 5 memories, at most 3


@pytest.mark.embedded_only('archives with maintain (database-wide: hippo.connect does not offer it)')
def test_archiving_for_size_is_counted_on_its_day(make_mem, clock):
    mem = make_mem("alice")
    for day in range(60):
        mem.store_memory(f"Field note {day}: the heron came back to the pond at dawn " + "x" * 400)
        clock.advance(hours=12)
    capped = make_mem("alice", max_db_bytes=int(mem.store.used_bytes() * 0.9))
    result = capped.maintain()
    assert result.archived > 0
    assert by_day(capped.memory_summary(), "archived") == {mem.now().date().isoformat(): result.archived}


def test_forgetting_the_agent_removes_its_counters(lived, make_mem, clock):
    mem = lived
    bob = make_mem("bob")
    bob.store_memory("Bob's note about the vault")
    bob.recall_memories("vault", limit=1)
    assert sum(mem.memory_summary().daily["retrievals"]) > 0
    mem.delete_all()
    empty = mem.memory_summary()
    assert all(not any(series) for series in empty.daily.values()) and not any(empty.strength)
    assert not any(empty.types.values()) and empty.days == [clock().date().isoformat()]
    assert by_day(bob.memory_summary(), "retrievals") == {clock().date().isoformat(): 1}
