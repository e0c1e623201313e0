"""Seed 003's archive: over its size cap the database archives its least useful memories, never
deletes them; archive search, restore, and a forget that reaches the archive too."""

from __future__ import annotations

import pytest
from support import sql
from traces import SECRET, occurrences, scrub, total

from hippo.errors import ConfigError, NotFound
from hippo.providers.fake import FakeEmbedder

pytestmark = pytest.mark.embedded_only("fills the archive with maintain (database-wide: hippo.connect does not offer "
                                       "it) and sizes it with the store's own bytes")

WIDE = FakeEmbedder(dimension=1024)  # 4 kB vectors: what archiving saves is visible at test sizes


@pytest.fixture
def filled(make_mem, clock):
    """200 notes stored over 200 days, the newest last; every tenth one reinforced by the agent."""
    mem = make_mem("alice", embedder=WIDE)
    ids = []
    for day in range(200):
        ids.append(mem.store_memory(f"Field note {day}: the heron came back to the pond at dawn").id)
        clock.advance(days=1)
    for chunk_id in ids[::10]:
        mem.reinforce_memory(chunk_id)
    return mem, ids


def test_over_its_cap_the_database_archives_until_under_and_deletes_nothing(filled, make_mem, db):
    mem, ids = filled
    used = mem.store.used_bytes()
    capped = make_mem("alice", embedder=WIDE, max_db_bytes=int(used * 0.85), prune_percent=5)
    seen = []
    result = capped.maintain(progress=lambda done, total: seen.append((done, total)))
    assert result.bytes_before == used and result.bytes_after <= result.cap and result.note is None
    assert 0 < result.archived < len(ids) and seen and seen[-1][0] <= seen[-1][1] == len(ids)
    assert capped.store.used_bytes() <= result.cap
    # Nothing deleted: every note is live or archived, once.
    stats = capped.stats()
    assert (stats.memories, stats.archived) == (len(ids) - result.archived, result.archived)
    archived = {h.id for h in capped.search_archive("heron pond", limit=200)}
    live = {c.id for c in capped.list_memories(limit=200).items}
    assert archived | live == set(ids) and not archived & live and len(archived) == result.archived
    # Seed 003's order: the oldest go first, and a reinforced note outlasts unreinforced ones of its age.
    oldest_live = min(live - set(ids[::10]))
    assert all(i < oldest_live for i in archived)
    assert ids[0] in live and ids[10] in live  # reinforced: feedback 3 and a fresh recency clock


def test_archived_memories_are_found_by_words_and_restored(filled, make_mem):
    mem, ids = filled
    capped = make_mem("alice", embedder=WIDE, max_db_bytes=int(mem.store.used_bytes() * 0.85))
    capped.maintain()
    gone = ids[1]  # an old, unreinforced note: among the first archived
    assert gone not in {h.id for h in capped.recall_memories("Field note 1: heron", limit=200, touch=False)}
    (hit,) = [h for h in capped.search_archive("Field note 1 heron", limit=200) if h.id == gone]
    assert hit.chunk.content.startswith("Field note 1:") and not hit.chunk.has_vector and hit.score > 0
    mixed = capped.recall_memories("note 1 heron", limit=200, include_archived=True, touch=False)
    marked = {h.id for h in mixed if h.archived}
    assert gone in marked and marked.isdisjoint({h.id for h in mixed if not h.archived})
    assert all(h.similarity is None for h in mixed if h.archived)

    restored = capped.restore_memory(gone)
    assert restored.id == gone and restored.has_vector and restored.content == hit.chunk.content
    assert restored.access_count == hit.chunk.access_count + 1
    assert gone not in {h.id for h in capped.search_archive("Field note 1 heron", limit=200)}
    back = {h.id: h for h in capped.recall_memories("heron pond dawn", limit=200, touch=False)}
    assert back[gone].similarity is not None  # live again, by meaning too, and not faded: restoring is a use
    with pytest.raises(NotFound):
        capped.restore_memory(gone)


def test_under_the_cap_or_without_one_maintain_changes_nothing(filled, make_mem):
    mem, ids = filled
    assert mem.maintain().archived == 0  # no cap by default
    roomy = make_mem("alice", embedder=WIDE, max_db_bytes=mem.store.used_bytes() * 2)
    assert roomy.maintain().archived == 0 and roomy.stats().archived == 0
    with pytest.raises(ConfigError):
        make_mem("alice", prune_percent=0)


def test_forget_reaches_the_archive_and_leaves_no_trace(make_mem, db, clock):
    mem = make_mem("alice", embedder=WIDE)
    secret = mem.store_memory(f"The vault password hint is {SECRET}").id
    clock.advance(days=400)
    mem.store_memories([f"Gardening note {i}: tomatoes need sun" for i in range(60)])
    capped = make_mem("alice", embedder=WIDE, max_db_bytes=int(mem.store.used_bytes() * 0.97))
    capped.maintain()
    assert [h.id for h in capped.search_archive(SECRET)] == [secret]
    preview = capped.forget_memory(SECRET, preview=True)
    assert [f.id for f in preview.deleted] == [secret]
    result = capped.forget_memory(SECRET)
    assert [f.id for f in result.deleted] == [secret]
    scrub(capped)
    assert capped.search_archive(SECRET) == [] and total(occurrences(db)) == 0


def test_delete_all_and_delete_by_id_reach_the_archive(make_mem, clock):
    mem = make_mem("alice", embedder=WIDE)
    old = mem.store_memory("An old note about the heron").id
    clock.advance(days=300)
    mem.store_memories([f"Note {i} about the garden" for i in range(40)])
    make_mem("alice", embedder=WIDE, max_db_bytes=int(mem.store.used_bytes() * 0.97)).maintain()
    assert mem.stats().archived >= 1
    assert mem.delete_memory(old).id == old and mem.search_archive("heron") == []
    make_mem("alice", embedder=WIDE, max_db_bytes=1).maintain()
    assert mem.stats().archived > 0
    erased = mem.delete_all()
    assert erased.memories == 40 and mem.stats().archived == 0
    assert sql(mem.database if mem.database.startswith("postgresql") else mem.store.location,
               "SELECT count(*) FROM chunks_archive") == [(0,)]


def test_one_process_maintains_the_database_at_a_time(filled, make_mem):
    mem, ids = filled
    cap = int(mem.store.used_bytes() * 0.85)
    capped = make_mem("alice", embedder=WIDE, max_db_bytes=cap)
    other = make_mem("bob", embedder=WIDE)  # another opening of the database, as another server's
    with other.store.exclusive("maintain") as mine:
        assert mine
        busy = capped.maintain()
        assert busy.archived == 0 and busy.note == "another process is maintaining this database"
        with capped.store.exclusive("maintain") as second:
            assert not second
    assert capped.maintain().archived > 0  # released


def test_a_flooding_agent_archives_its_own_memories_first(make_mem, clock):
    """The cap is database-wide, but an agent's memories go only once every agent holding more
    has come down to its size: one agent's flood never archives another's few memories."""
    alice = make_mem("alice", embedder=WIDE)
    kept = [r.id for r in alice.store_memories([f"Alice's note {i}: the heron nests by the old mill"
                                                for i in range(50)])]
    clock.advance(days=30)  # older than the flood: a database-wide ranking would archive them first
    bob = make_mem("bob", embedder=WIDE)
    bob.store_memories([f"Bob's log {i}: the build scrolled past another uneventful line" for i in range(600)])
    capped = make_mem("alice", embedder=WIDE, max_db_bytes=int(alice.store.used_bytes() * 0.7), prune_percent=5)
    result = capped.maintain()
    assert result.archived > 0 and result.bytes_after <= result.cap and result.note is None
    assert (alice.stats().memories, alice.stats().archived) == (len(kept), 0)
    assert bob.stats().archived == result.archived


def test_forget_reaches_archived_memories_by_meaning_as_it_reaches_live_ones(make_mem, clock, db, local_embedder):
    """"the garage PIN" holds a word the memory lacks: found by meaning (cosine over the forget
    threshold), live or archived; a memory archived before archives kept vectors is reached too."""
    mem = make_mem("alice", embedder=local_embedder)
    pin, old, heron = (mem.store_memory(text).id for text in (
        "The code to open the garage door is 4821", "Garage door opener PIN: 4821", "The heron nests by the old mill"))
    assert mem.store.archive_chunks("alice", [pin, old, heron], clock()) == 3
    sql(db, "UPDATE chunks_archive SET embedding_int8 = NULL WHERE id = ?", (old,))  # as archived before
    preview = mem.forget_memory("the garage PIN", preview=True)
    assert {f.id for f in preview.deleted} == {pin, old}
    assert all(f.similarity is not None and f.similarity >= 0.5 for f in preview.deleted)
    assert mem.stats().archived == 3  # a preview deletes nothing
    result = mem.forget_memory("the garage PIN")
    assert [(f.id, f.similarity) for f in result.deleted] == [(f.id, f.similarity) for f in preview.deleted]
    assert mem.search_archive("garage") == [] and [h.id for h in mem.search_archive("heron")] == [heron]


def test_a_quiet_agent_keeps_its_memories_when_the_flood_alone_cannot_meet_the_cap(make_mem, caplog):
    """Issue 46: cap 200,000 bytes, a flood of 400 memories whose archive alone keeps the database
    over it. The flood is archived whole; the quiet agent, within its share of the cap, keeps all
    15, and maintain says it stopped over the cap (its result and a warning), run after run."""
    quiet = make_mem("quiet")
    kept = {r.id for r in quiet.store_memories([f"Quiet note {i}: the heron nests by the old mill" for i in range(15)])}
    noisy = make_mem("noisy")
    noisy.store_memories([f"Flood line {i}: " + "the build scrolled past another uneventful line " * 6
                          for i in range(400)])
    capped = make_mem("noisy", max_db_bytes=200_000)
    with caplog.at_level("WARNING", logger="hippo.archive"):
        result = capped.maintain()
    assert result.archived == 400 and result.bytes_after > result.cap
    assert result.note is not None and "within their share (1) keep theirs" in result.note
    assert any("over the cap of 200,000" in r.getMessage() for r in caplog.records)
    assert (quiet.stats().memories, quiet.stats().archived) == (15, 0)
    assert {c.id for c in quiet.list_memories(limit=50).items} == kept
    assert (noisy.stats().memories, noisy.stats().archived) == (0, 400)
    again = capped.maintain()  # the flood is in the archive now: it still counts as the noisy agent's
    assert again.archived == 0 and again.note is not None and quiet.stats().memories == 15
