"""A forget racing another process's index build: the builder's snapshot predates the forget and
its save comes after, yet no file beside the database holds the forgotten vector or text."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import hippo
from hippo.core.ports.vectors import quantize
from hippo.providers.fake import FakeEmbedder

pytest.importorskip("hnswlib")

SECRET = "The safe deposit box number is Quillwhistle-7741"

# The builder: opens the database with a low ANN threshold, builds the HNSW index from its
# snapshot on its first load, and holds its save until the test says go (the pause is the
# test's: it patches the save from outside; nothing in hippo waits).
BUILDER = """
import pathlib, sys, time
import hippo
from hippo.stores.sqlite.index.annfiles import AnnFiles

db, ready, go = sys.argv[1:4]
save = AnnFiles.save

def held(self, agent_id, index, *args, **kwargs):
    listed = pathlib.Path(ready + ".tmp")
    listed.write_text(" ".join(map(str, index.keys().tolist())))  # the keys its snapshot held
    listed.rename(ready)
    while not pathlib.Path(go).exists():
        time.sleep(0.02)
    return save(self, agent_id, index, *args, **kwargs)

AnnFiles.save = held
with hippo.open(db, agent_id="alice", embedder="fake", ann_threshold=50) as mem:
    # One load, as a first search makes it: snapshot, build, save. Nothing after it reloads.
    assert type(mem.store._vectors.index_of("alice")).__name__ == "HnswIndex"
"""


def every_file(db: Path) -> dict[Path, bytes]:
    files = [Path(f"{db}{suffix}") for suffix in ("", "-wal", "-shm")]
    files += [p for p in Path(f"{db}.hnsw").glob("*") if p.is_file()] if Path(f"{db}.hnsw").is_dir() else []
    return {p: p.read_bytes() for p in files if p.exists()}


def wait_for(path: Path, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "the builder never reached its save"
        time.sleep(0.02)


@pytest.mark.parametrize("reuse", [False, True], ids=["forget", "forget-then-store"])
def test_a_forget_during_another_process_build_leaves_no_trace(tmp_path, reuse):
    """``forget-then-store``: SQLite hands the forgotten row's rowid (the highest) to the next
    insert, so the builder finds that key alive again, under another vector."""
    db = tmp_path / "race.db"
    with hippo.open(db, agent_id="alice", embedder=FakeEmbedder(), ann_threshold=0) as mem:
        mem.store_memories([f"note {i} about topic {i % 9}" for i in range(200)])
        secret = mem.store_memory(SECRET)
        vector = mem.store.get_vectors("alice", [secret.id])[secret.id].astype("<f4").tobytes()
        secret_rowid = rowid(mem, secret.id)
    ready, go = tmp_path / "ready", tmp_path / "go"
    builder = subprocess.Popen([sys.executable, "-c", BUILDER, str(db), str(ready), str(go)],
                               stderr=subprocess.PIPE, text=True)
    try:
        wait_for(ready, builder)
        # Its index, built from a snapshot that holds the secret, is not saved yet.
        assert secret_rowid in map(int, ready.read_text().split())
        with hippo.open(db, agent_id="alice", embedder=FakeEmbedder(), ann_threshold=0) as mem:
            assert mem.forget_memory(SECRET).count == 1
            if reuse:
                newer = mem.store_memory("a later note about the garden shed")
                assert rowid(mem, newer.id) == secret_rowid
        go.touch()
        assert builder.wait(timeout=60) == 0, builder.stderr.read()
    finally:
        builder.kill()
    saved = every_file(db)
    assert any(p.suffix == ".bin" for p in saved), "the builder saved no index"
    query = np.frombuffer(vector, dtype="<f4")
    codes = quantize(query[None])[0][0].tobytes()  # the secret's row in the int8 rows file
    for path, data in saved.items():
        assert vector not in data, f"the forgotten vector is in {path.name}"
        assert codes not in data, f"the forgotten vector's int8 row is in {path.name}"
        assert b"Quillwhistle" not in data, f"the forgotten text is in {path.name}"
    with hippo.open(db, agent_id="alice", embedder=FakeEmbedder(), ann_threshold=50) as mem:
        assert secret.id not in [cid for cid, _ in mem.store.vector_search("alice", query, 10, _all())]
        if reuse:  # the row that took the key is found under its own vector
            mine = mem.store.get_vectors("alice", [newer.id])[newer.id]
            assert mem.store.vector_search("alice", mine, 1, _all())[0][0] == newer.id


def rowid(mem: hippo.Memory, chunk_id: str) -> int:
    return mem.store.db.conn.execute("SELECT rowid FROM chunks WHERE id = ?", (chunk_id,)).fetchone()[0]


def _all():
    from hippo.core.ports import ChunkFilter

    return ChunkFilter(include_superseded=True)


def test_a_replaced_index_file_is_zeroed_before_it_is_unlinked(tmp_path):
    db = tmp_path / "old.db"
    with hippo.open(db, agent_id="alice", embedder=FakeEmbedder(), ann_threshold=50) as mem:
        mem.store_memories([f"note {i} about topic {i % 9}" for i in range(200)])
        mem.store._vectors.index_of("alice")  # built and saved
    (old,) = Path(f"{db}.hnsw").glob("*.bin")
    with open(old, "rb") as held:  # what an unlinked file's blocks still hold, read through an open handle
        with hippo.open(db, agent_id="alice", embedder=FakeEmbedder(), ann_threshold=50) as mem:
            mem.store._vectors.index_of("alice")
            mem.store_memory("one more note, so that closing saves a new index")
        assert not old.exists() and len(list(Path(f"{db}.hnsw").glob("*.bin"))) == 1
        assert held.read().strip(b"\0") == b""
