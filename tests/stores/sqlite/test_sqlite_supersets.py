"""Filter parts' listings kept across searches (supersets.py) through the change log (changes.py)."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

import hippo
import hippo.stores.sqlite.narrowing.changes as changes
import hippo.stores.sqlite.narrowing.driving as driving
import hippo.stores.sqlite.narrowing.supersets as supersets
from hippo.core.memory import MemoryInput
from hippo.core.ports import ChunkFilter

pytestmark = pytest.mark.sqlite_only  # the SQLite store's own kept listings


def tagged(mem, tag: str, n: int, start: int = 0) -> list[str]:
    return [r.id for r in mem.store_memories([MemoryInput(f"Note {start + i} tagged {tag}", {"tags": [tag]})
                                              for i in range(start, start + n)])]


def found_ids(mem, where: ChunkFilter, words: str = "note tagged") -> set[str]:
    query = mem.embedding.query(words)
    return {i for i, _ in mem.store.vector_search(mem.agent_id, query, 500, where)}


def listings(monkeypatch) -> list[tuple[str, tuple]]:
    seen: list[tuple[str, tuple]] = []
    original = supersets.listed

    def listing(conn, sql, params, bound):
        seen.append((sql, tuple(params)))
        return original(conn, sql, params, bound)

    monkeypatch.setattr(supersets, "listed", listing)
    return seen


@pytest.fixture
def mem(make_mem):
    mem = make_mem("alice")
    mem.store_memories([f"Untagged filler {i}" for i in range(300)])
    tagged(mem, "rare", 5)
    return mem


def test_a_kept_listing_takes_in_rows_written_since_by_any_connection(mem, make_mem, monkeypatch):
    where = ChunkFilter(tags=("rare",))
    seen = listings(monkeypatch)
    assert len(found_ids(mem, where)) == 5 and len(seen) == 1
    other = make_mem("alice")
    later = tagged(other, "rare", 3, start=5)
    mine = tagged(mem, "rare", 2, start=8)
    other.update_metadata(other.store_memory("Untagged filler 999").id, {"tags": ["rare"]})
    assert len(found_ids(mem, where)) == 11 and set(later + mine) <= found_ids(mem, where)
    assert len(seen) == 1  # answered from the kept listing and the log


def test_nothing_listed_inside_a_write_transaction_is_kept(db, embedder, clock, monkeypatch):
    mem = hippo.open(db, agent_id="alice", embedder=embedder, clock=clock)  # sync: the test holds the store's lock
    mem.store_memories([f"Untagged filler {i}" for i in range(300)])
    tagged(mem, "rare", 5)
    where = ChunkFilter(tags=("rare",))
    seen = listings(monkeypatch)
    with pytest.raises(RuntimeError):
        with mem.store.transaction():
            mem.store_memories([MemoryInput("Written then rolled back", {"tags": ["rare"]})])
            assert len(found_ids(mem, where)) == 6
            raise RuntimeError("roll back")
    assert mem.store._supersets._kept == {}
    tagged(mem, "rare", 1, start=50)  # takes the log numbers the rollback gave back
    assert len(found_ids(mem, where)) == 6 and len(seen) == 2
    mem.close()


def test_a_listing_the_log_no_longer_reaches_back_to_is_listed_again(mem, db, monkeypatch):
    where = ChunkFilter(tags=("rare",))
    seen = listings(monkeypatch)
    found_ids(mem, where)
    tagged(mem, "rare", 2, start=20)
    with sqlite3.connect(db) as conn:  # trimmed past the listing, as after LOG_KEPT more writes
        conn.execute("DELETE FROM chunk_changes")
    tagged(mem, "rare", 1, start=30)
    assert len(found_ids(mem, where)) == 8 and len(seen) == 2


def test_many_changes_since_list_again(mem, monkeypatch):
    where = ChunkFilter(tags=("rare",))
    seen = listings(monkeypatch)
    found_ids(mem, where)
    monkeypatch.setattr(supersets, "RELIST_MIN", 10)
    mem.store_memories([f"More filler {i}" for i in range(11)])
    assert len(found_ids(mem, where)) == 5 and len(seen) == 2


def test_kept_listings_are_bounded(mem, monkeypatch):
    monkeypatch.setattr(supersets, "ROWS_KEPT", 12)
    for tag in ("a", "b", "c", "d"):
        tagged(mem, tag, 5, start=100)
    for tag in ("a", "b", "c", "d"):
        assert len(found_ids(mem, ChunkFilter(tags=(tag,)))) == 5
    kept = mem.store._supersets._kept
    assert sum(len(k.rows) for k in kept.values() if k.rows is not None) <= 12 and len(kept) == 2
    monkeypatch.setattr(supersets, "ROWS_KEPT", 1_000)
    monkeypatch.setattr(supersets, "LISTINGS_KEPT", 3)  # empty listings count too
    for tag in ("a", "b", "c", "d", "none-1", "none-2"):
        found_ids(mem, ChunkFilter(tags=(tag,)))
    assert len(kept) == 3
    listing_of = {tag: ("SELECT chunk FROM chunk_tags WHERE tag_key = ?", (driving.tag_key("alice", tag),))
                  for tag in "abcdef"}
    assert listing_of["a"] not in kept and listing_of["d"] in kept
    mem.store_memories(["Untagged filler after"])  # the file changed: the listings are asked again
    found_ids(mem, ChunkFilter(tags=("d",)))  # used last: it outlives the next two
    found_ids(mem, ChunkFilter(tags=("e",)))
    found_ids(mem, ChunkFilter(tags=("f",)))
    assert list(kept) == [listing_of["d"], listing_of["e"], listing_of["f"]]
    assert mem.store._supersets._rows == sum(len(k.rows) for k in kept.values() if k.rows is not None)


def test_the_log_says_what_changed_and_when_it_no_longer_can(mem):
    conn = mem.store.db.conn
    last = changes.latest(conn)
    ids = tagged(mem, "rare", 2, start=60)
    mem.update_metadata(ids[0], {"tags": ["other"]})
    mem.recall_memories("rare", limit=3)  # a retrieval changes nothing kept: not logged
    now, changed = changes.changed_since(conn, last)
    rowids = [r[0] for r in conn.execute("SELECT rowid FROM chunks WHERE id IN (?, ?) ORDER BY rowid", ids)]
    assert now == last + 3 and changed is not None and changed.tolist() == rowids
    assert changes.changed_since(conn, now)[1].tolist() == []
    conn.execute("DELETE FROM chunk_changes WHERE seq <= ?", (now - 1,))
    assert changes.changed_since(conn, last)[1] is None
    assert isinstance(changes.changed_since(conn, now - 1)[1], np.ndarray)


def test_another_connections_forget_during_a_filtered_search_is_no_error(db, embedder, clock, monkeypatch):
    """A write between the int8 pass and the exact scores (another process) leaves the search on
    the index it started with: no error, and recall drops the row that is gone."""
    mem = hippo.open(db, agent_id="alice", embedder=embedder, clock=clock)
    other = hippo.open(db, agent_id="alice", embedder=embedder, clock=clock)
    mem.store_memories([f"Untagged filler {i}" for i in range(300)])
    rare = tagged(mem, "rare", 5)
    where = ChunkFilter(tags=("rare",))
    found_ids(mem, where)
    real = driving.FilteredSearch._passing
    fired: list[int] = []

    def passing(self, conn, agent_id, rowids, clause, params):
        out = real(self, conn, agent_id, rowids, clause, params)
        if not fired:
            fired.append(1)
            other.delete_memory(rare[0])  # commits after the filter test, before the exact scores
        return out

    monkeypatch.setattr(driving.FilteredSearch, "_passing", passing)
    query = mem.embedding.query("note tagged rare")
    found = mem.store.vector_search("alice", query, 3, where)
    assert fired and 2 <= len(found) <= 3 and rare[0] not in {i for i, _ in found}
    assert rare[0] not in {h.chunk.id for h in mem.recall_memories("note tagged rare", tags=["rare"], limit=5)}
    other.close()
    mem.close()
