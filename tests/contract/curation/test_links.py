"""Co-recall links (seed 003's relations): memories recalled together link together."""

from __future__ import annotations

import pytest
from support import sql
from traces import scrub

from hippo.core.curation.links import EXPAND_MIN_STRENGTH


def test_joint_recalls_link_memories_and_expand_brings_the_partner(mem):
    hmac = mem.store_memory("The payment API signs every request with HMAC").id
    onboarding = mem.store_memory("New clients get their API credentials during onboarding").id
    mem.store_memories([f"Gardening note {i}: tomatoes need sun" for i in range(20)])
    for _ in range(2):  # the agent asks about the API twice; both come back together
        found = [h.id for h in mem.recall_memories("payment API request credentials", limit=2)]
        assert set(found) == {hmac, onboarding}
    (link,) = [x for x in mem.related(hmac) if x.chunk.id == onboarding]
    assert (link.kind, link.strength) == ("co_recall", 2.0) and link.strength >= EXPAND_MIN_STRENGTH

    alone = mem.recall_memories("HMAC signature", limit=1, touch=False)
    assert [h.id for h in alone] == [hmac]
    expanded = mem.recall_memories("HMAC signature", limit=1, expand=True, touch=False)
    assert [h.id for h in expanded] == [hmac, onboarding]
    assert expanded[1].linked_from == hmac and expanded[0].linked_from is None
    # Browsing does not link: touch=False left the strength as it was.
    assert [x.strength for x in mem.related(hmac) if x.chunk.id == onboarding] == [2.0]


def test_a_single_joint_recall_is_not_yet_a_strong_link(mem):
    a = mem.store_memory("The staging database is db-2").id
    b = mem.store_memory("The staging database restarts nightly").id
    mem.recall_memories("staging database", limit=2)
    assert [x.strength for x in mem.related(a)] == [1.0]
    assert b not in [h.id for h in mem.recall_memories("db-2", limit=1, expand=True, touch=False)][1:]


@pytest.mark.parametrize("end", ["a", "b"])
def test_forget_removes_the_links_with_either_end(make_mem, db, end):
    mem = make_mem("alice", retrieval_delay=0)  # the links are read from the table right after the recall
    a = mem.store_memory("Project Zeppelin ships in March").id
    b = mem.store_memory("Project Zeppelin needs a new logo").id
    mem.recall_memories("Project Zeppelin", limit=2)
    assert sql(db, "SELECT count(*) FROM chunk_links") == [(1,)]
    gone, kept = (a, b) if end == "a" else (b, a)
    description = mem.get_memory(gone).content
    assert [f.id for f in mem.forget_memory(description, min_similarity=0.99).deleted] == [gone]
    scrub(mem)
    assert sql(db, "SELECT count(*) FROM chunk_links") == [(0,)] and mem.related(kept) == []


def test_related_of_an_unknown_memory_is_not_found(mem):
    import pytest

    from hippo.errors import InvalidInput, NotFound

    with pytest.raises(NotFound):
        mem.related("0" * 26)
    with pytest.raises(InvalidInput):
        mem.related("nope")
