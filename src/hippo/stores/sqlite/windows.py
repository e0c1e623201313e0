"""``chunk_windows``: the vectors of a long chunk's later windows, keyed as the vector index keys them.

A chunk keeps its own vector (the model's read of its start) in ``chunks.embedding``; a text longer
than the model reads has more windows (``Embedder.embed_windows``), one row each here under
``window_key(rowid, n)`` (``hippo.stores.sqlite.index.windowed``): the key names its chunk, so the table needs no
index of its own and a chunk's windows are one range of the primary key. Triggers take a chunk's
windows with it when it is deleted (forget, delete, archive) and when its text or vector is
rewritten (an update, a re-embedding, a model switch); the store writes the new ones after the
vector, in the same transaction. Only vectors, never text.
"""

from __future__ import annotations

import sqlite3
from typing import Sequence

import numpy as np

from hippo.stores import vectors
from hippo.stores.sqlite.index.windowed import WINDOW_BASE, WINDOW_SLOTS, window_key
from hippo.stores.vectors import encode_vector

__all__ = ["MIGRATION", "best_windows", "split", "write_windows"]



def _between(rowid: str) -> str:
    """The SQL range of the window keys of the chunk whose rowid is the expression ``rowid``."""
    low = f"{WINDOW_BASE} + {rowid} * {WINDOW_SLOTS}"
    return f"BETWEEN {low} + 1 AND {low} + {WINDOW_SLOTS - 1}"


_RANGE = f"key {_between('old.rowid')}"

MIGRATION = f"""
CREATE TABLE chunk_windows (
    key       INTEGER PRIMARY KEY,  -- window_key(chunk rowid, n), n from 1: names its chunk
    embedding BLOB NOT NULL         -- little-endian float32, as chunks.embedding
);
CREATE TRIGGER chunk_windows_ad AFTER DELETE ON chunks BEGIN
    DELETE FROM chunk_windows WHERE {_RANGE};
END;
CREATE TRIGGER chunk_windows_au AFTER UPDATE OF content, embedding ON chunks BEGIN
    DELETE FROM chunk_windows WHERE {_RANGE};
END;
"""


def split(vector: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A chunk's own vector and its later windows, as many as the window keys can name."""
    return vectors.split(vector, windows=WINDOW_SLOTS)


def write_windows(conn: sqlite3.Connection, rowid: int, vector: np.ndarray) -> None:
    """Store the later windows of the chunk ``rowid`` (inside the write that set its vector, which
    the triggers cleared its old windows for)."""
    later = split(vector)[1]
    if len(later):
        conn.executemany("INSERT OR REPLACE INTO chunk_windows(key, embedding) VALUES (?, ?)",
                         [(window_key(rowid, n), encode_vector(row)) for n, row in enumerate(later, start=1)])


def best_windows(conn: sqlite3.Connection, agent_id: str, ids: Sequence[str], vector: np.ndarray) -> dict[str, float]:
    """The best cosine to ``vector`` over the later windows of each of the agent's chunks among
    ``ids`` that has any (one matrix product for all of them)."""
    if not ids:
        return {}
    rows = conn.execute(
        f"SELECT c.id, w.embedding FROM chunks c JOIN chunk_windows w ON w.key {_between('c.rowid')} "
        f"WHERE +c.agent_id = ? AND c.id IN ({','.join('?' * len(ids))})", (agent_id, *ids),
    ).fetchall()
    if not rows:
        return {}
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), -1)
    if matrix.shape[1] != len(vector):
        return {}
    best: dict[str, float] = {}
    for (chunk_id, _), score in zip(rows, (matrix @ np.asarray(vector, dtype=np.float32)).tolist()):
        if score > best.get(chunk_id, -2.0):
            best[chunk_id] = score
    return best
