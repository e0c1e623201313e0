"""BM25 from the postings (stores/sqlite/bm25.py) gives FTS5's own scores, however the file changed."""

from __future__ import annotations

import random
import sqlite3

import numpy as np
import pytest

import hippo.stores.sqlite.bm25 as bm25_module
import hippo.stores.sqlite.narrowing.changes as changes
from hippo.core.ports import ChunkFilter
from hippo.core.recall.pool import keyword_match

pytestmark = pytest.mark.sqlite_only  # the SQLite store's own keyword scoring



@pytest.fixture(autouse=True)
def postings_at_any_size(monkeypatch):
    """These files are small; the postings are read from ``bm25.SMALL`` rows on."""
    monkeypatch.setattr(bm25_module, "SMALL", 0)


WORDS = ("garden tomato river bicycle violin mountain coffee winter teacher market harbour pottery "
         "camping running painting library kitchen museum").split()


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 14)))


def fts5_ranks(mem, words: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The reference: FTS5's bm25() for every row an OR of ``words`` matches, by rowid."""
    match = " OR ".join(f'"{w}"' for w in words)
    with mem.store.db.reading() as conn:
        rows = conn.execute("SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ? "
                            "ORDER BY rowid", (match,)).fetchall()
    return np.array([r[0] for r in rows], dtype=np.int64), np.array([r[1] for r in rows])


def assert_same_as_fts5(mem, rng: random.Random, queries: int = 25) -> None:
    for _ in range(queries):
        words = rng.sample([*WORDS, "absent"], rng.randint(1, 5))
        found = mem.store._bm25.ranks(words)
        assert found is not None, words
        expected = fts5_ranks(mem, words)
        np.testing.assert_array_equal(found[0], expected[0])
        np.testing.assert_allclose(found[1], expected[1], rtol=1e-9, atol=1e-12)


def test_scores_equal_fts5s_through_inserts_edits_forgets_and_archives(make_mem):
    rng = random.Random(3)
    mem, other = make_mem("alice"), make_mem("bob")
    stored = [r.id for r in mem.store_memories([sentence(rng) for _ in range(300)])]
    other.store_memories([sentence(rng) for _ in range(100)])
    assert_same_as_fts5(mem, rng)
    for chunk_id in stored[:20]:  # rewritten text: new lengths under the same rowids
        mem.update_memory(chunk_id, content=sentence(rng) + " kitchen kitchen")
    assert_same_as_fts5(mem, rng)
    for chunk_id in stored[20:40]:
        mem.delete_memory(chunk_id)
    mem.store.archive_chunks("alice", stored[40:60], mem.now())
    assert_same_as_fts5(mem, rng)
    mem.restore_memory(stored[45])
    mem.store_memories([sentence(rng) for _ in range(50)])
    assert_same_as_fts5(mem, rng)


def test_words_that_share_a_stem_count_once_each_as_in_fts5(make_mem):
    mem = make_mem("alice")
    mem.store_memories(["running in the garden", "she runs and runs", "a run of tomatoes", "the garden wall"])
    for words in (["running", "runs"], ["running", "runs", "run", "garden"], ["garden", "gardens"]):
        found = mem.store._bm25.ranks(words)
        expected = fts5_ranks(mem, words)
        np.testing.assert_array_equal(found[0], expected[0])
        np.testing.assert_allclose(found[1], expected[1], rtol=1e-9, atol=1e-12)


def test_another_connections_writes_are_seen(make_mem):
    rng = random.Random(5)
    mem = make_mem("alice")
    mem.store_memories([sentence(rng) for _ in range(100)])
    assert_same_as_fts5(mem, rng, queries=5)
    writer = make_mem("alice")  # a second store: its own connection to the file
    ids = [r.id for r in writer.store_memories([sentence(rng) for _ in range(80)])]
    writer.update_memory(ids[0], content="museum museum museum")
    writer.delete_memory(ids[1])
    writer.close()
    assert_same_as_fts5(mem, rng)


def test_a_reader_far_behind_the_log_reloads_every_length(make_mem, db, monkeypatch):
    rng = random.Random(7)
    mem = make_mem("alice")
    mem.store_memories([sentence(rng) for _ in range(50)])
    assert_same_as_fts5(mem, rng, queries=3)
    seen = mem.store._bm25._seq
    mem.store_memories([sentence(rng) for _ in range(40)])
    with sqlite3.connect(db) as conn:  # trimmed past what this reader saw (as after LOG_KEPT more writes)
        conn.execute("DELETE FROM chunk_changes")
    mem.store_memories([sentence(rng) for _ in range(10)])
    loads = []
    monkeypatch.setattr(bm25_module.Bm25, "_load", lambda self, last, real=bm25_module.Bm25._load:
                        (loads.append(last), real(self, last))[1])
    assert_same_as_fts5(mem, rng)
    assert len(loads) == 1 and loads[0] > seen


def test_the_log_is_bounded_and_holds_no_text(make_mem, db, monkeypatch):
    rng = random.Random(11)
    mem = make_mem("alice")
    mem.store_memories([sentence(rng) for _ in range(120)])
    with sqlite3.connect(db) as conn:
        columns = [row[1] for row in conn.execute("PRAGMA table_info(chunk_changes)")]
        assert columns == ["seq", "chunk"]
        assert conn.execute("SELECT count(*) FROM chunk_changes").fetchone()[0] <= changes.LOG_KEPT + 1
        assert conn.execute("SELECT count(*) FROM chunk_changes WHERE typeof(chunk) != 'integer'").fetchone()[0] == 0


def test_what_the_postings_cannot_score_is_left_to_fts5(make_mem, monkeypatch):
    mem = make_mem("alice")
    mem.store_memories(["the e-mail arrived", "mail for the garden"])
    monkeypatch.setattr(bm25_module, "SMALL", 3)
    assert mem.store._bm25.ranks(["garden"]) is None  # a small index: FTS5 is as quick
    monkeypatch.setattr(bm25_module, "SMALL", 0)
    assert mem.store._bm25.ranks(["e-mail"]) is None  # two tokens: a phrase
    with mem.store.transaction():
        assert mem.store._bm25.ranks(["garden"]) is None  # a write transaction's log could roll back
    assert mem.store._bm25.ranks(["garden"]) is not None
    # Recall still finds both ways.
    assert [h.chunk.content for h in mem.recall_memories("garden", limit=5)] == ["mail for the garden"]


def test_recall_ranks_keyword_hits_as_before(make_mem):
    """The store's keyword search through the postings equals the unbounded FTS5 join."""
    rng = random.Random(13)
    mem = make_mem("alice")
    mem.store_memories([sentence(rng) for _ in range(400)])
    for query in ("garden tomato", "violin winter market", "library"):
        match = " OR ".join(f'"{w}"' for w in keyword_match(query))
        fast = mem.store.keyword_search("alice", match, 20, ChunkFilter())
        with mem.store.db.reading() as conn:
            joined = conn.execute(
                "SELECT c.id, -bm25(chunks_fts) FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid "
                "WHERE chunks_fts MATCH ? AND c.agent_id = 'alice' ORDER BY bm25(chunks_fts), c.rowid LIMIT 20",
                (match,)).fetchall()
        assert [s for _, s in fast] == pytest.approx([s for _, s in joined])


def postings_reads(mem) -> list[str]:
    """Records each statement that reads a word's postings on the store's connection."""
    reads: list[str] = []
    mem.store.db.conn.set_trace_callback(lambda sql: reads.append(sql) if "hippo_postings" in sql else None)
    return reads


def test_a_words_postings_are_kept_until_anything_changes(make_mem):
    rng = random.Random(17)
    mem = make_mem("alice")
    mem.store_memories([sentence(rng) for _ in range(200)])
    bm25 = mem.store._bm25
    first = bm25.ranks(["garden", "violin"])
    reads = postings_reads(mem)
    again = bm25.ranks(["violin", "garden", "garden"])  # kept: no read, in any order, repeated
    assert reads == []
    np.testing.assert_array_equal(first[0], again[0])
    np.testing.assert_allclose(again[1], fts5_ranks(mem, ["violin", "garden", "garden"])[1], rtol=1e-9)
    mem.store_memories(["a teacher at the market"])  # holds neither word, yet changes both weights (N, avgdl)
    reads.clear()
    changed = bm25.ranks(["garden", "violin"])
    assert len(reads) == 2
    np.testing.assert_allclose(changed[1], fts5_ranks(mem, ["garden", "violin"])[1], rtol=1e-9, atol=1e-12)
    assert not np.allclose(changed[1], first[1])
    mem.store.db.conn.set_trace_callback(None)


def test_kept_words_answer_the_keyword_budget_until_a_write(make_mem):
    rng = random.Random(19)
    mem = make_mem("alice")
    mem.store_memories([sentence(rng) for _ in range(200)])
    bm25 = mem.store._bm25
    assert bm25.matches(["garden", "winter"]) == [None, None]  # nothing kept yet
    bm25.ranks(["garden"])
    expected = len(fts5_ranks(mem, ["garden"])[0])
    assert bm25.matches(["garden", "winter", "e-mail"]) == [expected, None, None]
    writer = make_mem("alice")  # another connection's write is seen too
    writer.store_memories(["garden garden"])
    writer.close()
    assert bm25.matches(["garden"]) == [None]
    bm25.ranks(["garden"])
    assert bm25.matches(["garden"]) == [expected + 1]


def test_kept_postings_are_bounded_in_rows(make_mem, monkeypatch):
    monkeypatch.setattr(bm25_module, "POSTINGS_KEPT", 140)
    rng = random.Random(23)
    mem = make_mem("alice")
    mem.store_memories([sentence(rng) for _ in range(200)] + [f"kitchen table {i}" for i in range(100)])
    assert len(fts5_ranks(mem, ["kitchen"])[0]) > 140 > len(fts5_ranks(mem, ["garden"])[0])
    bm25 = mem.store._bm25
    for word in [*WORDS, "kitchen"]:
        found = bm25.ranks([word])
        np.testing.assert_allclose(found[1], fts5_ranks(mem, [word])[1], rtol=1e-9, atol=1e-12)
        held = sum(len(rows) for rows, _ in bm25._postings.values())
        assert held == bm25._postings_rows <= 140
    assert bm25.matches(["kitchen", "museum"])[0] is None  # more rows than all may hold: never kept
    assert bm25.matches(["museum"]) == [len(fts5_ranks(mem, ["museum"])[0])]  # the last kept stays
