"""Long memories read whole, on every backend: a memory longer than the embedder reads is embedded in
overlapping windows and matched by its best one; whatever removes or rewrites the memory takes its
windows, and their vectors leave every file. The fake embedder windows by words here (``window``);
``test_windows_local_model.py`` checks the same with the real model, where meaning matters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support import sql

from hippo.core.ports import ChunkFilter, SearchQuery
from hippo.providers.base import normalize_rows
from hippo.providers.fake import FakeEmbedder

WINDOW = 6
FILLER = " ".join(f"plain{i} words{i} about{i} nothing{i}" for i in range(8))
LONG = f"{FILLER} zebra giraffe elephant okapi at the river"  # the animals only in the last windows
QUERY = "zebra giraffe elephant okapi"
SHORT = [f"Gardening note {i}: tomatoes need sun and regular watering" for i in range(12)]


@pytest.fixture
def embedder() -> FakeEmbedder:
    return FakeEmbedder(window=WINDOW)


def best(embedder: FakeEmbedder, text: str, query: str = QUERY) -> tuple[float, float]:
    """The cosine of ``query`` to ``text``'s own vector, and to its best window."""
    scores = embedder.embed_windows([text])[0] @ embedder.embed_query(query)
    return float(scores[0]), float(scores.max())


def similarity(mem: Any, chunk_id: str, query: str = QUERY, **filters: Any) -> float | None:
    found = {h.id: h for h in mem.recall_memories(query, limit=20, touch=False, **filters)}
    return found[chunk_id].similarity if chunk_id in found else None


@pytest.mark.embedded_only("reads the store's vector search window by window")
def test_a_long_memory_is_matched_by_its_best_window(make_mem, embedder):
    mem = make_mem()
    mem.store_memories(SHORT)
    chunk_id = mem.store_memory(LONG).id
    own, window = best(embedder, LONG)
    assert window > own + 0.2  # the premise: the animals are read in a later window
    assert similarity(mem, chunk_id) == pytest.approx(window, abs=1e-5)
    # The cosine of given ids (what context and surfacing read) is the best window's too.
    _, cosines = mem.store.score("alice", [chunk_id], embedder.embed_query(QUERY))
    assert cosines[chunk_id] == pytest.approx(window, abs=1e-5)
    # A filtered search reads the windows as well.
    assert similarity(mem, chunk_id, kind="memory") == pytest.approx(window, abs=1e-5)


@pytest.mark.embedded_only("reads the store's vector search window by window")
def test_windows_never_crowd_other_memories_out_of_a_search(make_mem, embedder):
    mem = make_mem()
    many = " ".join(["zebra giraffe elephant okapi grazing"] * 30)  # many windows, each close to the query
    mem.store_memories([many, *(f"zebra note {i} about giraffe {i}" for i in range(8))])
    vector = embedder.embed_query(QUERY)
    for depth in (1, 3, 6):
        found = mem.store.search("alice", SearchQuery(vector, (), ChunkFilter(), depth, score_all=False))
        assert len(found.similarity) == depth


@pytest.mark.embedded_only('archives with maintain (database-wide: hippo.connect does not offer it)')
def test_a_new_text_takes_the_old_windows_and_restore_brings_them_back(make_mem, embedder):
    mem = make_mem()
    mem.store_memories(SHORT)
    chunk_id = mem.store_memory(LONG).id
    new = "A short note about the river"
    mem.update_memory(chunk_id, content=new)
    assert similarity(mem, chunk_id) == pytest.approx(best(embedder, new)[1], abs=1e-5)
    mem.update_memory(chunk_id, content=LONG)
    assert similarity(mem, chunk_id) == pytest.approx(best(embedder, LONG)[1], abs=1e-5)

    make_mem("alice", max_db_bytes=1).maintain()  # everything that can be is archived
    assert similarity(mem, chunk_id) is None
    mem.restore_memory(chunk_id)
    assert similarity(mem, chunk_id) == pytest.approx(best(embedder, LONG)[1], abs=1e-5)


def test_each_text_is_embedded_once(make_mem, embedder):
    mem = make_mem()
    before = embedder.calls
    mem.store_memory(LONG)
    assert embedder.calls == before + 1  # its own vector and its windows in one call
    mem.store_memory(LONG)  # stored again: strengthened, nothing embedded
    assert embedder.calls == before + 1


@pytest.mark.embedded_only('supersedes through the store')
def test_a_superseded_fact_leaves_recall_with_its_windows(make_mem, embedder):
    mem = make_mem()
    old = mem.store.get_chunks("alice", [mem.store_memory(LONG).id])[0]
    fact = mem.remember_facts("My favourite animal is the zebra.").facts[0]
    assert mem.store.supersede("alice", [old.id], fact.id) == [old.id]
    assert old.id not in {h.id for h in mem.recall_memories(QUERY, limit=20, touch=False)}


def _window_bytes(embedder: FakeEmbedder, text: str) -> list[bytes]:
    """Each later window's vector as stored (little-endian float32, made unit length once more by
    the embedding service)."""
    return [np.asarray(row, "<f4").tobytes() for row in normalize_rows(embedder.embed_windows([text])[0])[1:]]


def _files(db: str) -> list[bytes]:
    if not db.startswith("postgresql://"):
        paths = [Path(db + s) for s in ("", "-wal", "-shm")]
        folder = Path(db + ".hnsw")
        paths += [p for p in folder.iterdir() if p.is_file()] if folder.is_dir() else []
        return [p.read_bytes() for p in paths if p.exists()]
    sql(db, "CHECKPOINT")
    home = Path(sql(db, "SHOW data_directory")[0][0])
    relations = sql(db, "SELECT pg_relation_filepath(c.oid) FROM pg_class c WHERE c.relname IN ('chunks', "
                        "'chunk_windows') OR c.oid IN (SELECT i.indexrelid FROM pg_index i JOIN pg_class t "
                        "ON t.oid = i.indrelid WHERE t.relname IN ('chunks', 'chunk_windows'))")
    return [f.read_bytes() for (rel,) in relations if rel for f in home.glob(rel + "*")]


def _held(db: str, needles: list[bytes]) -> int:
    files = _files(db)
    return sum(1 for needle in needles if any(needle in data for data in files))


EXITS = {
    "forget": lambda mem, chunk_id: mem.forget_memory(QUERY, limit=20),
    "delete by id": lambda mem, chunk_id: mem.delete_memory(chunk_id),
    "new text": lambda mem, chunk_id: mem.update_memory(chunk_id, content="The animals went home."),
    "delete_all": lambda mem, chunk_id: mem.delete_all(),
    "archive": lambda mem, chunk_id: mem.store.archive_chunks("alice", [chunk_id], mem.now()),
}


@pytest.mark.parametrize("exit", [pytest.param(e, marks=pytest.mark.embedded_only("archives through the store"))
                                  if e == "archive" else e for e in sorted(EXITS)])
def test_forgotten_windows_leave_every_file(make_mem, embedder, db, exit):
    mem = make_mem("alice", ann_threshold=1)  # SQLite: the windows in a saved ANN index too
    mem.store_memories(SHORT)
    chunk_id = mem.store_memory(LONG).id
    assert mem.recall_memories(QUERY, limit=1, touch=False)[0].id == chunk_id
    mem.close()  # SQLite saves the ANN index beside the file
    mem = make_mem("alice", ann_threshold=1)
    needles = _window_bytes(embedder, LONG)
    assert len(needles) >= 3 and _held(db, needles) == len(needles)  # the premise: every window is stored

    EXITS[exit](mem, chunk_id)
    if mem.database.startswith("postgresql://"):
        assert mem.scrub() is None
    mem.close()
    assert _held(db, needles) == 0


def test_an_imported_long_memory_is_read_whole(make_mem, embedder):
    source = make_mem("source")
    source.store_memories([*SHORT, LONG])
    records = list(source.export_records())  # without vectors: the importer embeds each text
    mem = make_mem()
    assert mem.import_records(records).embedded == len(SHORT) + 1
    chunk_id = next(h.id for h in mem.recall_memories(QUERY, limit=20, touch=False) if h.content == LONG)
    assert similarity(mem, chunk_id) == pytest.approx(best(embedder, LONG)[1], abs=1e-5)
