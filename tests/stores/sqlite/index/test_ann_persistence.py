"""The saved HNSW index: reused when current, rebuilt when stale or missing, shredded on forget."""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path

from conftest import AGENT
from test_ann_recall import open_ann, search

import hippo
from hippo.core.ports.vectors import quantize
from hippo.stores.sqlite.index.hnsw import HnswIndex

BUTTERFLY = "Zed found a rare blue butterfly in the botanical garden yesterday."


def sidecar(db: Path) -> dict:
    (path,) = Path(f"{db}.hnsw").glob("*.json")
    return json.loads(path.read_text())


def saved_bytes(db: Path) -> bytes:
    return b"".join(p.read_bytes() for p in Path(f"{db}.hnsw").glob("*") if p.is_file())


def test_reopen_uses_the_saved_index(ann_corpus, corpus_db, local_embedder):
    with open_ann(corpus_db, local_embedder) as mem:
        before = [search(mem, q) for q in ann_corpus.queries]
    first = sidecar(corpus_db)
    assert first["count"] == len(ann_corpus.ids)
    with open_ann(corpus_db, local_embedder) as mem:
        assert [search(mem, q) for q in ann_corpus.queries] == before
        assert isinstance(mem.store._vectors.index_of(AGENT), HnswIndex)
    assert sidecar(corpus_db) == first  # loaded, not rebuilt: every build saves under a new token


def test_own_writes_are_saved_on_close(ann_corpus, corpus_db, local_embedder):
    with open_ann(corpus_db, local_embedder) as mem:
        search(mem, ann_corpus.queries[0])
        first = sidecar(corpus_db)
        new = mem.store_memory(BUTTERFLY)
    second = sidecar(corpus_db)
    assert second["version"] > first["version"] and second["count"] == first["count"] + 1
    with open_ann(corpus_db, local_embedder) as mem:
        assert search(mem, local_embedder.embed_query("a blue butterfly in the garden"), 1) == [new.id]
    assert sidecar(corpus_db) == second
    assert len(list(Path(f"{corpus_db}.hnsw").glob("*.bin"))) == 1  # older graphs are removed


def test_another_connection_writing_makes_the_saved_index_stale(ann_corpus, corpus_db, local_embedder, caplog):
    query = local_embedder.embed_query("a blue butterfly in the garden")
    with open_ann(corpus_db, local_embedder) as mem:
        search(mem, query)
        with hippo.open(corpus_db, agent_id=AGENT, embedder=local_embedder, ann_threshold=0) as other:
            new = other.store_memory(BUTTERFLY)
        assert search(mem, query, 1) == [new.id]  # the open index notices the other writer
    saved = sidecar(corpus_db)
    with hippo.open(corpus_db, agent_id=AGENT, embedder=local_embedder, ann_threshold=0) as other:
        newer = other.store_memory("Zed saw a green butterfly in the garden today.")
    assert sidecar(corpus_db) == saved  # now older than the database
    caplog.set_level(logging.INFO, logger="hippo.stores.sqlite")
    with open_ann(corpus_db, local_embedder) as mem:
        assert search(mem, local_embedder.embed_query("a green butterfly in the garden"), 1) == [newer.id]
    # caught up with the one new row, not rebuilt from all 2,000
    assert "catching up the saved ANN index of an agent: 1 rows added, 0 removed" in caplog.text
    assert "building the ANN index" not in caplog.text
    assert sidecar(corpus_db)["version"] > saved["version"]
    assert sidecar(corpus_db)["count"] == saved["count"] + 1


def test_missing_or_damaged_graph_file_is_rebuilt(ann_corpus, corpus_db, local_embedder):
    with open_ann(corpus_db, local_embedder) as mem:
        before = [search(mem, q) for q in ann_corpus.queries]
    for damage in ("delete", "garbage"):
        token = sidecar(corpus_db)["token"]
        (graph,) = Path(f"{corpus_db}.hnsw").glob(f"*-{token}.bin")
        if damage == "delete":
            graph.unlink()
        else:
            graph.write_bytes(b"\x00" * 1000)
        with open_ann(corpus_db, local_embedder) as mem:
            assert [search(mem, q) for q in ann_corpus.queries] == before
        assert sidecar(corpus_db)["token"] != token


def test_saved_index_of_other_vectors_is_not_used(ann_corpus, corpus_db, local_embedder):
    """Same version, rows and model, other vectors (a database recreated under the same name)."""
    with open_ann(corpus_db, local_embedder) as mem:
        search(mem, ann_corpus.queries[0])
    version = sidecar(corpus_db)["version"]
    conn = sqlite3.connect(corpus_db, isolation_level=None)
    rows = conn.execute("SELECT rowid FROM chunks ORDER BY rowid").fetchall()
    flipped = ann_corpus.matrix[::-1]
    conn.execute("BEGIN")
    conn.executemany("UPDATE chunks SET embedding = ? WHERE rowid = ?",
                     [(flipped[i].astype("<f4").tobytes(), r) for i, (r,) in enumerate(rows)])
    conn.execute("UPDATE agent_versions SET version = ? WHERE agent_id = ?", (version, AGENT))
    conn.execute("COMMIT")
    conn.close()
    with open_ann(corpus_db, local_embedder) as mem:
        assert search(mem, ann_corpus.matrix[0], 1) == [ann_corpus.ids[-1]]
    assert sidecar(corpus_db)["version"] == version and sidecar(corpus_db)["token"]


def test_forgetting_shreds_the_saved_index(ann_corpus, corpus_db, local_embedder):
    ids, matrix = ann_corpus.ids, ann_corpus.matrix
    with open_ann(corpus_db, local_embedder) as mem:
        search(mem, ann_corpus.queries[0])
    codes = quantize(matrix[3:5])[0]
    assert matrix[3].astype("<f4").tobytes() in saved_bytes(corpus_db)  # the premise: vectors are in the file
    assert codes[0].tobytes() in saved_bytes(corpus_db)  # and their int8 copy
    with open_ann(corpus_db, local_embedder) as mem:
        search(mem, ann_corpus.queries[0])
        mem.store.delete_chunks(AGENT, [ids[3]])
        assert not list(Path(f"{corpus_db}.hnsw").glob("[!.]*"))  # gone at once, before close (the lock file holds nothing)
    assert matrix[3].astype("<f4").tobytes() not in saved_bytes(corpus_db)  # the save on close holds zeros
    assert sidecar(corpus_db)["count"] == len(ids) - 1
    # A process that never loaded the index forgets too: the saved files go all the same.
    with hippo.open(corpus_db, agent_id=AGENT, embedder=local_embedder, ann_threshold=0) as other:
        other.store.delete_chunks(AGENT, [ids[4]])
    assert not list(Path(f"{corpus_db}.hnsw").glob("[!.]*"))
    with open_ann(corpus_db, local_embedder) as mem:
        assert not {ids[3], ids[4]} & set(search(mem, matrix[3], 50) + search(mem, matrix[4], 50))
    saved = saved_bytes(corpus_db)
    assert all(matrix[i].astype("<f4").tobytes() not in saved for i in (3, 4))
    assert all(code.tobytes() not in saved for code in codes)


def test_rows_retired_by_another_connection_leave_the_caught_up_index(ann_corpus, corpus_db, local_embedder, caplog):
    ids, matrix = ann_corpus.ids, ann_corpus.matrix
    with open_ann(corpus_db, local_embedder) as mem:
        assert search(mem, matrix[5], 1) == [ids[5]]
    with hippo.open(corpus_db, agent_id=AGENT, embedder=local_embedder, ann_threshold=0) as other:
        assert other.store.supersede(AGENT, [ids[5]], ids[6]) == [ids[5]]  # ids[5] is history now
    caplog.set_level(logging.INFO, logger="hippo.stores.sqlite")
    with open_ann(corpus_db, local_embedder) as mem:
        assert ids[5] not in search(mem, matrix[5], 50)
        assert isinstance(mem.store._vectors.index_of(AGENT), HnswIndex)
    assert "0 rows added, 1 removed" in caplog.text
    assert sidecar(corpus_db)["count"] == len(ids) - 1
