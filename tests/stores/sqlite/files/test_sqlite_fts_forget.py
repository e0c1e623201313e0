"""A thousand forgets and more: each rewrites the keyword index without the forgotten words
(stores/sqlite/fts.py), and SQLite's FTS5 up to 3.40 reported the file corrupt after about 1,000
such rewrites unless the index is rebuilt now and then."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import hippo.stores.sqlite.fts as fts
from hippo.core.memory import MemoryInput

pytestmark = pytest.mark.sqlite_only  # SQLite's FTS5 index and its shadow tables


def structure_bytes(db) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT length(block) FROM chunks_fts_data WHERE id = 10").fetchone()[0]


@pytest.mark.slow  # 1,200 forgets, each its own transaction
def test_more_than_a_thousand_forgets_one_at_a_time(make_mem, db):
    mem = make_mem("alice")
    stored = mem.store_memories([MemoryInput(f"Note {i} about the lantern Qwzx{i}") for i in range(1_300)])
    largest = 0
    for result in stored[:1_200]:
        mem.delete_memory(result.id)
        largest = max(largest, structure_bytes(db))
    assert largest <= fts.STRUCTURE_LIMIT + 10  # rebuilt before it could grow past the limit
    late = mem.store_memory("A late note about the lantern Qwzxlate")
    assert {h.id for h in mem.recall_memories("lantern Qwzxlate", limit=5).hits} >= {late.id}
    assert len(mem.recall_memories("lantern", limit=200).hits) == 101
    with sqlite3.connect(db) as conn:
        assert conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('integrity-check')").fetchall() == []
    data = b"".join(p.read_bytes() for p in Path(db).parent.iterdir() if p.is_file())
    assert b"Qwzx5 " not in data and b"Qwzx1199" not in data and b"Qwzx1250" in data


def test_a_rebuild_keeps_the_index_and_drops_forgotten_words(make_mem, db, monkeypatch):
    monkeypatch.setattr(fts, "STRUCTURE_LIMIT", 40)  # a rebuild every few forgets
    mem = make_mem("alice")
    stored = mem.store_memories([MemoryInput(f"Heron note {i} Vrrk{i}") for i in range(40)])
    for result in stored[:30]:
        mem.delete_memory(result.id)
    assert structure_bytes(db) <= 40 + 10
    assert sorted(h.id for h in mem.recall_memories("heron note", limit=50).hits) == sorted(r.id for r in stored[30:])
    data = b"".join(p.read_bytes() for p in Path(db).parent.iterdir() if p.is_file())
    assert b"Vrrk3 " not in data and b"Vrrk35" in data


def test_a_file_whose_index_grew_under_an_earlier_hippo_is_rebuilt_when_opened(make_mem, db):
    mem = make_mem("alice")
    gone = mem.store_memories([MemoryInput(f"Lantern note {i}") for i in range(900)])
    kept = mem.store_memories([MemoryInput(f"Orchard note {i}") for i in range(50)])
    mem.close()
    with sqlite3.connect(db) as conn:  # what 900 forgets did to the index before this fix
        for result in gone:
            conn.execute("DELETE FROM chunks WHERE id = ?", (result.id,))
            conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('optimize')")
    assert structure_bytes(db) > fts.STRUCTURE_LIMIT
    again = make_mem("alice")
    assert structure_bytes(db) < fts.STRUCTURE_LIMIT
    for result in kept[:5]:
        again.delete_memory(result.id)
    assert len(again.recall_memories("orchard note", limit=100).hits) == 45


def grown_file(make_mem, db) -> list[str]:
    """A file whose index grew under an earlier hippo (900 forgets' optimizes); the ids kept."""
    mem = make_mem("alice")
    gone = mem.store_memories([MemoryInput(f"Lantern note {i}") for i in range(900)])
    kept = [r.id for r in mem.store_memories([MemoryInput(f"Orchard note {i}") for i in range(20)])]
    mem.close()
    with sqlite3.connect(db) as conn:
        for result in gone:
            conn.execute("DELETE FROM chunks WHERE id = ?", (result.id,))
            conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('optimize')")
    assert structure_bytes(db) > fts.STRUCTURE_LIMIT
    return kept


def test_a_grown_file_opens_read_only_and_a_later_write_rebuilds_it(make_mem, db, monkeypatch):
    kept = grown_file(make_mem, db)
    from hippo.stores.sqlite import database as sqlite_database
    from hippo.stores.sqlite.store import SQLiteStore

    class ReadOnly:  # sqlite3, as the database module sees it, opening its file read-only
        def __getattr__(self, name: str):
            return getattr(sqlite3, name)

        def connect(self, path, **kwargs):
            return sqlite3.connect(f"file:{path}?mode=ro", uri=True, **kwargs)

    monkeypatch.setattr(sqlite_database, "sqlite3", ReadOnly())
    reader = SQLiteStore(db)  # cannot rebuild: opens all the same, for reading
    assert reader.counts("alice")["memories"] == 20
    reader.close()
    monkeypatch.undo()
    monkeypatch.setattr(sqlite_database, "rebuild_grown", lambda conn: False)  # as if another process wrote
    writer = SQLiteStore(db)
    monkeypatch.undo()
    assert structure_bytes(db) > fts.STRUCTURE_LIMIT
    writer.delete_chunks("alice", kept[:1])  # the first write rebuilds before it touches the index
    assert structure_bytes(db) < fts.STRUCTURE_LIMIT
    writer.close()
