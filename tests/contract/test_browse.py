"""Browsing (issue 22's dashboard): sorted by strength, last access and feedback as well as newest
first, filtered by kind, tag, source, session and time, archived memories on request and marked;
nothing counts as a retrieval."""

from __future__ import annotations

from datetime import timedelta

import pytest

from hippo.errors import InvalidInput


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


def test_browse_shows_archived_memories_on_request_and_marks_them(make_mem, clock):
    mem = make_mem("alice")
    old = mem.store_memory("An old note about the heron").id
    clock.advance(days=30)
    mem.store_memory("A new note about the pond")
    mem.store.archive_chunks("alice", [old], clock())
    assert old not in ids(mem.browse_memories())
    shown = mem.browse_memories(archived_matching="heron")
    assert old in ids(shown) and shown.archived == frozenset({old})
