"""``chunk_windows`` on PostgreSQL: the vectors of a long chunk's later windows, searched beside the chunks'.

As in SQLite (``stores/sqlite/windows.py``): a chunk keeps its own vector (the model's read of its
start) in ``chunks.embedding``; a text longer than the model reads has more windows, one row each
here, keyed by the chunk and the window's number. The rows go with their chunk (a foreign key that
cascades: forget, delete, archive) and when its text or vector is rewritten (a trigger: an update,
a re-embedding, a model switch); the store writes the new ones after the vector, in the same
transaction. Only vectors, never text. A search reads the windows beside the chunks (``vector_side``):
a chunk's similarity is the best of its own vector's and its windows'. The windows have an HNSW
index of their own, built with the chunks' (``schema.vector_index``).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from hippo.stores.vectors import split

__all__ = ["MIGRATION", "WINDOW_REACH", "best_cosine", "vector_side", "vector_values", "write_windows"]

MIGRATION = """
CREATE TABLE chunk_windows (
    chunk_id  text NOT NULL REFERENCES chunks (id) ON DELETE CASCADE,
    n         integer NOT NULL,            -- 1: the window after the chunk's own vector
    agent_id  text NOT NULL,
    embedding vector NOT NULL,
    PRIMARY KEY (chunk_id, n)
);
CREATE INDEX chunk_windows_agent ON chunk_windows (agent_id);
CREATE FUNCTION hippo_windows_rewritten() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM chunk_windows WHERE chunk_id = OLD.id;
    RETURN NULL;
END $$;
CREATE TRIGGER chunk_windows_rewritten AFTER UPDATE OF content, embedding ON chunks
    FOR EACH ROW EXECUTE FUNCTION hippo_windows_rewritten();
"""


def write_windows(cur: Any, agent_id: str, vectors: Sequence[tuple[str, np.ndarray | None]]) -> int:
    """Store the later windows of these chunks (inside the write that set their vectors, which the
    trigger cleared their old windows for); how many rows were written."""
    rows = [(chunk_id, n, agent_id, row) for chunk_id, vector in vectors if vector is not None
            for n, row in enumerate(split(vector)[1], start=1)]
    if rows:
        cur.executemany("INSERT INTO chunk_windows (chunk_id, n, agent_id, embedding) VALUES (%s, %s, %s, %s) "
                        "ON CONFLICT (chunk_id, n) DO UPDATE SET embedding = excluded.embedding", rows)
    return len(rows)


def best_cosine(dimension: int) -> str:
    """SQL for the cosine of chunk ``c`` to the query (the parameter, twice): the best of its own
    vector's and its windows'."""
    return (f"CASE WHEN vector_dims(c.embedding) = {dimension} THEN greatest(-(c.embedding <#> %s::vector), "
            f"(SELECT max(-(w.embedding <#> %s::vector)) FROM chunk_windows w WHERE w.chunk_id = c.id "
            f"AND vector_dims(w.embedding) = {dimension})) END")


# Windows read beyond the depth: a chunk's windows may fill several of the best places, and each
# chunk counts once. Three times the depth keeps the best ``depth`` chunks unless those places go
# to fewer than ``depth`` chunks with many windows each.
WINDOW_REACH = 3


def vector_side(dimension: int, indexed: bool, clause: str, windows: bool) -> str:
    """The ``v`` part of a search statement: the chunks by their best vector, ``depth`` of them.
    Parameters: :func:`vector_values`."""

    def distance(column: str) -> str:
        return (f"({column}::vector({dimension})) <#> %s::vector({dimension})" if indexed
                else f"{column} <#> %s::vector")

    own = (f"SELECT c.id, -({distance('c.embedding')}) AS sim FROM chunk_rows c WHERE c.agent_id = %s AND {clause} "
           f"AND vector_dims(c.embedding) = {dimension} ORDER BY {distance('c.embedding')} LIMIT %s")
    if not windows:
        return f"v AS ({own})"
    later = (f"SELECT c.id, -({distance('w.embedding')}) AS sim FROM chunk_windows w "
             f"JOIN chunk_rows c ON c.id = w.chunk_id WHERE w.agent_id = %s AND c.agent_id = %s AND {clause} "
             f"AND vector_dims(w.embedding) = {dimension} ORDER BY {distance('w.embedding')} LIMIT %s")
    return (f"v AS (SELECT id, max(sim) AS sim FROM (({own}) UNION ALL ({later})) found "
            "GROUP BY id ORDER BY max(sim) DESC, id LIMIT %s)")


def vector_values(vector: np.ndarray, agent_id: str, params: list[Any], depth: int, windows: bool) -> list[Any]:
    """The parameters of :func:`vector_side`, in its order."""
    values = [vector, agent_id, *params, vector, depth]
    if windows:
        values += [vector, agent_id, agent_id, *params, vector, depth * WINDOW_REACH, depth]
    return values
