"""SQLite's own side of long memories read whole: the window vectors in chunk_windows, in the ANN
index saved beside the file and loaded again, and in step when another connection writes."""

from __future__ import annotations

import pytest
from support import sql

import hippo
from hippo.core.ports.audit import unaudited
from hippo.providers.fake import FakeEmbedder
from hippo.stores.sqlite.index.windowed import WINDOW_BASE

pytestmark = pytest.mark.sqlite_only

FILLER = " ".join(f"plain{i} words{i} about{i} nothing{i}" for i in range(8))
LONG = f"{FILLER} zebra giraffe elephant okapi at the river"
QUERY = "zebra giraffe elephant okapi"
SHORT = [f"Tomatoes need sun {i}" for i in range(12)]  # within the fake's window of six words


def best_window(embedder: FakeEmbedder, text: str) -> float:
    return float((embedder.embed_windows([text])[0] @ embedder.embed_query(QUERY)).max())


def similarity(mem: hippo.Memory, chunk_id: str) -> float | None:
    found = {h.id: h.similarity for h in mem.recall_memories(QUERY, limit=20, touch=False)}
    return found.get(chunk_id)


def test_windows_are_stored_under_their_chunks_keys_and_go_with_it(db_path):
    embedder = FakeEmbedder(window=6)
    with hippo.open(db_path, agent_id="alice", embedder=embedder) as mem:
        chunk_id = mem.store_memory(LONG).id
        mem.store_memories(SHORT)
    (rowid,) = sql(db_path, "SELECT rowid FROM chunks WHERE id = ?", (chunk_id,))[0]
    keys = [k for (k,) in sql(db_path, "SELECT key FROM chunk_windows ORDER BY key")]
    assert keys == [WINDOW_BASE + rowid * 256 + n for n in range(1, len(embedder.embed_windows([LONG])[0]))]
    with hippo.open(db_path, agent_id="alice", embedder=embedder) as mem:
        mem.delete_memory(chunk_id)
    assert sql(db_path, "SELECT count(*) FROM chunk_windows") == [(0,)]


def test_a_saved_ann_index_comes_back_with_its_windows(db_path):
    pytest.importorskip("hnswlib")
    embedder = FakeEmbedder(window=6)
    with hippo.open(db_path, agent_id="alice", embedder=embedder, ann_threshold=5) as mem:
        mem.store_memories(SHORT)
        chunk_id = mem.store_memory(LONG).id
        assert similarity(mem, chunk_id) == pytest.approx(best_window(embedder, LONG), abs=1e-5)
    assert any(p.suffix == ".bin" for p in (db_path.parent / (db_path.name + ".hnsw")).iterdir())
    with hippo.open(db_path, agent_id="alice", embedder=embedder, ann_threshold=5) as mem:
        index = mem.store._vectors.index_of("alice")
        assert type(index).__name__ == "HnswIndex" and len(index) == 13 + (len(embedder.embed_windows([LONG])[0]) - 1)
        assert similarity(mem, chunk_id) == pytest.approx(best_window(embedder, LONG), abs=1e-5)


def test_another_connections_long_memory_is_searched_with_its_windows(db_path):
    embedder = FakeEmbedder(window=6)
    with hippo.open(db_path, agent_id="alice", embedder=embedder) as reader, \
            hippo.open(db_path, agent_id="alice", embedder=embedder) as writer:
        writer.store_memories(SHORT)
        assert reader.recall_memories(QUERY, limit=3, touch=False) is not None  # the reader loads its index
        chunk_id = writer.store_memory(LONG).id
        assert similarity(reader, chunk_id) == pytest.approx(best_window(embedder, LONG), abs=1e-5)
        writer.update_memory(chunk_id, content="A short note about the river")
        assert similarity(reader, chunk_id) is None or similarity(reader, chunk_id) < 0.5


def test_a_database_from_before_windows_opens_unchanged(db_path, monkeypatch):
    from hippo.stores.sqlite import schema

    names = [name for name, _ in schema.MIGRATIONS]
    before = schema.MIGRATIONS[:names.index("0022_chunk_windows")]
    embedder = FakeEmbedder()  # reads every text whole: one vector each, as before
    with monkeypatch.context() as patched:
        patched.setattr(schema, "MIGRATIONS", before)
        # a schema from before the audit trail too: its writes leave no record
        with hippo.open(db_path, agent_id="alice", embedder=embedder) as mem, unaudited():
            chunk_id = mem.store_memory(LONG).id
    assert sql(db_path, "SELECT count(*) FROM sqlite_master WHERE name = 'chunk_windows'") == [(0,)]
    with hippo.open(db_path, agent_id="alice", embedder=FakeEmbedder(window=6)) as mem:
        assert sql(db_path, "PRAGMA user_version") == [(len(schema.MIGRATIONS),)]
        # the stored vector stays the memory's only one until its text is embedded again
        assert similarity(mem, chunk_id) == pytest.approx(float(embedder.embed_documents([LONG])[0]
                                                                @ embedder.embed_query(QUERY)), abs=1e-5)
        mem.update_memory(chunk_id, content=LONG + " again")  # a new text: read whole
        assert similarity(mem, chunk_id) == pytest.approx(best_window(FakeEmbedder(window=6), LONG + " again"),
                                                          abs=1e-5)
