"""forget_memory: preview, hard delete, no trace left in the database files."""

from __future__ import annotations

import pytest
from support import counts, sql
from traces import FILLER, SECRET, database_files, occurrences, scrub, total

import hippo
from hippo.core.memory import MemoryInput
from hippo.providers.fake import FakeEmbedder


def test_preview_deletes_nothing(mem, db):
    mem.store_memories(FILLER[:3])
    target = mem.store_memory("I like Redux for state management")
    before = sql(db, "SELECT * FROM chunks ORDER BY id")

    result = mem.forget_memory("that I like Redux", preview=True)
    assert result.preview is True
    assert [f.id for f in result.deleted] == [target.id]
    assert result.deleted[0].content == "I like Redux for state management"
    assert sql(db, "SELECT * FROM chunks ORDER BY id") == before
    assert mem.get_memory(target.id).content == "I like Redux for state management"


def test_forget_deletes_and_returns_what_it_deleted(mem, db):
    keep = mem.store_memories(FILLER[:3])
    target = mem.store_memory("I like Redux for state management")
    result = mem.forget_memory("that I like Redux")
    assert result.preview is False
    assert result.count == 1
    [gone] = result.deleted
    assert (gone.id, gone.content, gone.kind) == (target.id, "I like Redux for state management", "memory")
    with pytest.raises(hippo.NotFound):
        mem.get_memory(target.id)
    assert sql(db, "SELECT count(*) FROM chunks WHERE id = ?", (target.id,)) == [(0,)]
    assert {r[0] for r in sql(db, "SELECT id FROM chunks")} == {r.id for r in keep}
    assert all("Redux" not in h.content for h in mem.recall_memories("Redux state management"))
    # Forgetting again finds nothing.
    assert mem.forget_memory("that I like Redux").deleted == []


def test_forget_leaves_no_trace_in_the_files(mem, db):
    mem.store_memories(FILLER)
    secret = mem.store_memory(f"The vault password hint is {SECRET} and nobody may know it", intensity=0.9)
    mem.store_memory(f"The vault password hint is {SECRET} and nobody may know it")  # strengthened
    assert mem.recall_memories(SECRET)[0].id == secret.id  # retrieval writes the row again
    mem.set_memory_block("persona", "A helpful assistant")
    # The premise: before forgetting, the text is in the files.
    assert total(occurrences(db)) > 0

    result = mem.forget_memory(SECRET)
    assert [f.id for f in result.deleted] == [secret.id]
    scrub(mem)

    # Still open: nothing in the database, its WAL or its shared memory.
    found = occurrences(db)
    assert total(found) == 0, {k: v for k, v in found.items() if v}
    # The other memories survive and are still searchable by keyword and vector.
    assert sql(db, "SELECT count(*) FROM chunks")[0][0] == len(FILLER)
    recall = mem.recall_memories("tomatoes watering", limit=5)
    assert len(recall) == 5 and all(h.keyword is not None and h.similarity is not None for h in recall)
    assert mem.recall_memory_block("persona") == "A helpful assistant"
    assert all(SECRET not in h.content for h in mem.recall_memories(SECRET))

    mem.close()
    found = occurrences(db)
    assert total(found) == 0, {k: v for k, v in found.items() if v}


def test_a_forgotten_memory_takes_the_session_items_it_was_captured_from(mem, db):
    mem.add_session_items("chat-1", [
        {"role": "user", "content": "My gardening plan: tomatoes need sun and regular watering"},
        {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": "{}"},
        {"role": "user", "content": f"The vault password hint is {SECRET} and nobody may know it"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Understood."}]},
    ])
    mem.process_pending()
    assert total(occurrences(db)) > 0

    result = mem.forget_memory(SECRET)
    assert [f.content for f in result.deleted] == [f"The vault password hint is {SECRET} and nobody may know it"]
    scrub(mem)
    assert total(occurrences(db)) == 0
    assert [item.get("content", item.get("name")) for item in mem.session_items("chat-1")] == [
        "My gardening plan: tomatoes need sun and regular watering", "lookup",
        [{"type": "output_text", "text": "Understood."}]]


def test_delete_memory_by_id_leaves_no_trace(mem, db):
    mem.store_memories(FILLER[:5])
    secret = mem.store_memory(f"Remember {SECRET} as the code word")
    assert total(occurrences(db)) > 0
    gone = mem.delete_memory(secret.id)
    assert gone.id == secret.id
    scrub(mem)
    assert total(occurrences(db)) == 0
    with pytest.raises(hippo.NotFound):
        mem.delete_memory(secret.id)


def test_forget_keeps_other_memories(mem, db):
    redux = mem.store_memory("I strongly dislike Redux")
    others = mem.store_memories(
        ["I enjoy hiking in the Alps", "My favourite editor is Neovim", "The cat is called Biscuit"]
    )
    mem.forget_memory("Redux")
    remaining = {r[0] for r in sql(db, "SELECT id FROM chunks")}
    assert remaining == {o.id for o in others}
    assert redux.id not in remaining
    for other in others:
        assert mem.get_memory(other.id).content == other.chunk.content


def test_forget_nothing_matching(mem, db):
    mem.store_memories(FILLER[:5] + ["I strongly dislike Redux"])
    before = counts(db)
    result = mem.forget_memory("quantum chromodynamics lattice")
    assert result.deleted == [] and result.count == 0
    assert counts(db) == before
    # Stop words alone match nothing either.
    assert mem.forget_memory("that the of").deleted == []
    assert counts(db) == before


def test_forget_respects_limit(mem, db):
    mem.store_memories(FILLER[:8])
    result = mem.forget_memory("gardening tomatoes sun watering", limit=3)
    assert result.count == 3
    assert sql(db, "SELECT count(*) FROM chunks")[0][0] == 5


def test_forget_does_not_touch_blocks(mem):
    mem.store_memory("I like Redux")
    mem.set_memory_block("human", "Likes Redux")
    mem.forget_memory("Redux")
    assert mem.recall_memory_block("human") == "Likes Redux"


def test_forget_with_failing_embedder_requires_every_word(make_mem, db):
    mem = make_mem("alice", embedder=FakeEmbedder(fail=True))
    red_cat = mem.store_memory("The cat sat on the red mat")
    blue_cat = mem.store_memory("The cat chased a blue ball")
    red_car = mem.store_memory("A red car parked outside")
    assert red_cat.vector_pending

    # "cat" alone is in two memories, "dog" in none: no match, nothing deleted.
    assert mem.forget_memory("the cat and the dog").deleted == []
    assert sql(db, "SELECT count(*) FROM chunks")[0][0] == 3

    result = mem.forget_memory("the red cat")
    assert [f.id for f in result.deleted] == [red_cat.id]
    assert result.deleted[0].similarity is None  # matched by words, not by vector
    assert {r[0] for r in sql(db, "SELECT id FROM chunks")} == {blue_cat.id, red_car.id}


def test_forget_min_similarity(mem, db):
    mem.store_memory("The cat sat on the red mat")
    assert mem.forget_memory("zebra", min_similarity=1.0).deleted == []
    assert mem.forget_memory("cat mat red sat", min_similarity=0.0, preview=True).count == 1


def test_forget_reaches_superseded_chunks(mem, db):
    old = mem.store_memory("The user lives in Berlin Kreuzberg")
    new = mem.store_memory("The user lives in Munich")
    sql(db, "UPDATE chunks SET superseded_by = ? WHERE id = ?", (new.id, old.id))
    result = mem.forget_memory("user lives Berlin Kreuzberg")
    assert old.id in {f.id for f in result.deleted}
    assert sql(db, "SELECT count(*) FROM chunks WHERE id = ?", (old.id,)) == [(0,)]
    scrub(mem)
    assert not any(b"Kreuzberg" in data for _, data in database_files(db))


def test_forgetting_a_memory_forgets_its_tags_too(mem, db):
    """Tags are user text, and each backend indexes them (SQLite's chunk_tags, PostgreSQL's GIN
    index): a forgotten memory's tags leave no trace either."""
    mem.store_memories([MemoryInput(text, {"tags": ["garden", f"note-{i}"]}) for i, text in enumerate(FILLER)])
    vault = mem.store_memory("The vault note for the hint", {"tags": [SECRET, "vault"]})
    other = mem.store_memory("The other vault note", {"tags": ["vault", f"{SECRET.lower()}-copy"]})
    assert [h.id for h in mem.recall_memories("vault note", tags=[SECRET])] == [vault.id]
    assert total(occurrences(db)) > 0

    assert [f.id for f in mem.forget_memory("the vault note for the hint", limit=1).deleted] == [vault.id]
    mem.delete_memory(other.id)
    scrub(mem)
    found = occurrences(db)
    assert total(found) == 0, {k: v for k, v in found.items() if v}
    assert not mem.recall_memories("vault note", tags=[SECRET]).hits
    assert not mem.recall_memories("vault note", tags=["vault"]).hits
    assert len(mem.recall_memories("tomatoes", tags=["garden"], limit=50).hits) == len(FILLER)
