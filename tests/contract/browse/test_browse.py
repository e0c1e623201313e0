"""Browsing (issue 22's dashboard): sorted by strength, last access and feedback as well as newest
first, filtered by kind, tag, source, session and time, archived memories on request and marked;
nothing counts as a retrieval."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from datetime import timedelta

import pytest

from hippo.core.memories.browsing import SORTS, sort_key
from hippo.core.memories.writer import MemoryInput
from hippo.core.recall.filters import passes, recall_filter
from hippo.errors import InvalidInput
from hippo.providers.fake import FakeLLM


@pytest.fixture
def notes(make_mem, clock):
    mem = make_mem("alice")
    weak = mem.store_memory("A faint note about the heron", {"tags": ["birds"]}, intensity=0.2, source="migration").id
    clock.advance(days=1)
    strong = mem.store_memory("A strong note about the pond", intensity=0.9, session_id="s1").id
    clock.advance(days=1)
    liked = mem.store_memory("A liked note about the garden", {"tags": ["birds", "garden"]}, intensity=0.5).id
    clock.advance(hours=1)
    mem.reinforce_memory(liked)
    mem.get_memory(weak)
    return mem, weak, strong, liked


def ids(listing) -> list[str]:
    return [c.id for c in listing.items]


def test_browse_sorts_by_newest_strength_last_access_and_feedback(notes, clock):
    mem, weak, strong, liked = notes
    assert ids(mem.browse_memories()) == [liked, strong, weak]
    assert ids(mem.browse_memories(sort="strength")) == [strong, liked, weak]
    assert ids(mem.browse_memories(sort="feedback"))[0] == liked
    mem.recall_memories("heron faint", 1, touch=True)
    assert ids(mem.browse_memories(sort="last_access"))[0] == weak
    before = {c.id: c.access_count for c in mem.browse_memories().items}
    mem.browse_memories(sort="strength")
    assert {c.id: c.access_count for c in mem.browse_memories().items} == before
    with pytest.raises(InvalidInput):
        mem.browse_memories(sort="loudest")
    for bad in (-1, True, "2", 10**30, 1.5):
        with pytest.raises(InvalidInput, match="offset"):
            mem.browse_memories(offset=bad)
    with pytest.raises(InvalidInput, match="scan"):
        mem.browse_memories(archived=True, scan=0)


def test_browse_filters_and_pages(notes, clock):
    mem, weak, strong, liked = notes
    assert ids(mem.browse_memories(tags=["birds"])) == [liked, weak]
    assert ids(mem.browse_memories(tags=["birds"], source="migration")) == [weak]
    assert ids(mem.browse_memories(session_id="s1")) == [strong]
    assert ids(mem.browse_memories(kind="fact")) == []
    assert ids(mem.browse_memories(since=clock() - timedelta(hours=2))) == [liked]
    assert ids(mem.browse_memories(until=clock() - timedelta(hours=2))) == [strong, weak]
    first = mem.browse_memories(limit=2)
    assert len(first.items) == 2 and first.next_offset == 2 and first.matched == 3 and first.complete
    assert ids(mem.browse_memories(limit=2, offset=first.next_offset)) == [weak]


@pytest.mark.embedded_only("archives through the store (archiving is maintain's, database-wide)")
def test_browse_shows_archived_memories_on_request_and_marks_them(make_mem, clock):
    mem = make_mem("alice")
    old = mem.store_memory("An old note about the heron").id
    clock.advance(days=30)
    mem.store_memory("A new note about the pond")
    mem.store.archive_chunks("alice", [old], clock())
    assert old not in ids(mem.browse_memories())
    shown = mem.browse_memories(archived_matching="heron")
    assert old in ids(shown) and shown.archived == frozenset({old})



WORDS = ["heron", "pond", "garden", "lantern", "orchard", "harbour"]


@pytest.fixture
def many(make_mem, clock):
    """2,200 memories (more than the 2,000 an earlier browse read) stored over a year with many
    strengths, accesses and feedback, two facts (one superseded) and experiences of two types,
    beside another agent's memories."""
    llm = FakeLLM(script=[fact("User lives in Berlin"), fact("User lives in Lisbon"),
                          json.dumps({"decisions": [{"pair": 1, "label": "SUPERSEDES"}]})])
    mem = make_mem("alice", llm=llm)
    rng = random.Random(22)
    mem.remember_facts("I live in Berlin.")
    inputs = [MemoryInput(f"Note {i} on the {rng.choice(WORDS)}", {"tags": [rng.choice(WORDS[:3])]},
                          round(rng.uniform(0.05, 1.0), 3), session_id=f"s{i % 5}") for i in range(2_200)]
    stored: list[str] = []
    for step in range(0, len(inputs), 200):  # 11 batches, four weeks apart
        stored += [r.id for r in mem.store_memories(inputs[step:step + 200])]
        clock.advance(days=28)
    mem.remember_facts("I moved to Lisbon.")
    for chunk_id in rng.sample(stored, 300):
        clock.advance(minutes=7)
        mem.store.record_retrievals(mem.agent_id, [chunk_id], clock(), boost=0.02)
    for chunk_id in rng.sample(stored, 120):
        (mem.reinforce_memory if rng.random() < 0.7 else mem.demote_memory)(chunk_id)
    for kind in ("decision", "insight", "decision", "error"):
        mem.record_experience(kind, f"A {kind} about the {rng.choice(WORDS)}", importance=0.9)
    mem.consolidate()
    make_mem("bob").store_memories([MemoryInput(f"Bob's note {i} on the heron") for i in range(50)])
    return mem


def fact(text: str) -> str:
    return json.dumps({"facts": [{"fact": text, "intensity": 0.5}]})


def every(mem, sort: str, **where) -> list[str]:
    """The order browse must give: the Python sort (``sort_key``) over every chunk of the agent."""
    types = where.pop("types", None)
    chunks = mem.store.list_chunks(mem.agent_id, limit=10_000)
    if types:
        records = mem.store.experience_records(mem.agent_id, [c.id for c in chunks])
        chunks = [c for c in chunks if c.id in records and records[c.id].type in types]
    kept = [c for c in chunks if passes(c, replace(recall_filter(**where), include_superseded=True))]
    return [c.id for c in sorted(kept, key=sort_key(sort, mem.now(), mem.settings.decay_lambda), reverse=True)]


WHERES = [{}, {"tags": ["pond"]}, {"session_id": "s3", "tags": ["heron"]}, {"kind": "fact"}, {"types": ["decision"]}]


@pytest.mark.embedded_only('recounts every chunk from the store')
def test_browse_sorts_every_chunk_not_a_window(many):
    """Each order, under each filter, equals the Python sort of every chunk: page after page, and
    the last page far past the 2,000 newest."""
    for sort in SORTS:
        for where in WHERES:
            expected = every(many, sort, **where)
            assert len(expected) >= (2 if where.get("kind") or where.get("types") else 100), where
            pages, offset = [], 0
            while offset is not None and offset < 300:
                listing = many.browse_memories(sort=sort, limit=100, offset=offset, **where)
                assert listing.matched == len(expected) and listing.complete
                pages += ids(listing)
                offset = listing.next_offset
            assert pages == expected[:len(pages)] and len(pages) == min(len(expected), 300), (sort, where)
            tail = many.browse_memories(sort=sort, limit=50, offset=max(0, len(expected) - 30), **where)
            assert ids(tail) == expected[-30:] and tail.next_offset is None, (sort, where)


def test_memories_decayed_to_nothing_still_sort_and_count(make_mem, clock):
    """Years without a retrieval under a fast decay: PostgreSQL's exp would underflow (an error where
    SQLite gives 0); browse and the stats still answer, every strength about 0."""
    mem = make_mem("alice", decay_lambda=0.1)
    stored = [r.id for r in mem.store_memories([MemoryInput(f"Old note {i}") for i in range(3)])]
    clock.advance(days=1_000)
    fresh = mem.store_memory("A fresh note").id
    assert ids(mem.browse_memories(sort="strength"))[0] == fresh
    assert sorted(ids(mem.browse_memories(sort="feedback"))[1:]) == sorted(stored)
    assert mem.memory_summary().strength[0] == 3
