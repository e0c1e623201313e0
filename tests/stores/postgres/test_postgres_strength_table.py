"""PostgreSQL only: a recall's retrieval write updates the narrow counters table alone, in place.

Before the counters had a table of their own, each touching recall rewrote its hits' wide rows in
``chunks`` and, never a HOT update, inserted a new entry into every index of them, the HNSW graph
included (25-45 ms a recall at 100k). Now the chunks' own table is not written at all, and every
update of the counters is HOT: no index of theirs holds a column the update changes.
"""

from __future__ import annotations

import time

import psycopg

import hippo
from hippo.providers.fake import FakeEmbedder


def _updates(url: str) -> dict[str, tuple[int, int]]:
    """(updates, HOT updates) of the chunks' table and the counters', once the statistics show the
    latest writes (the server publishes each session's counts within a second or so)."""
    with psycopg.connect(url, autocommit=True) as conn:
        return {r[0]: (r[1], r[2]) for r in conn.execute(
            "SELECT relname, n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables "
            "WHERE relname IN ('chunk_rows', 'chunk_strength')").fetchall()}


def test_a_touching_recall_updates_only_the_counters_and_only_in_place(database):
    with hippo.open(database, agent_id="alice", embedder=FakeEmbedder(), ann_threshold=50) as mem:
        mem.store_memories([f"note {i} about the harbour and its boats" for i in range(120)])
        mem.recall_memories("harbour boats", touch=False)  # the HNSW graph built (120 vectors, threshold 50)
        hits = [h.id for _ in range(10) for h in mem.recall_memories("harbour boats", limit=5)]
        assert mem.get_memory(hits[0]).access_count >= 1

    deadline = time.monotonic() + 10
    while (counts := _updates(database))["chunk_strength"][0] == 0 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert counts["chunk_strength"][0] > 0
    assert counts["chunk_strength"][1] == counts["chunk_strength"][0]  # every one HOT
    assert counts["chunk_rows"][0] == 0  # the rows with text and vector: not written by a recall
    with psycopg.connect(database, autocommit=True) as conn:
        indexed = conn.execute("SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
                               "AND a.attnum = ANY(i.indkey) WHERE i.indrelid = 'chunk_strength'::regclass").fetchall()
    assert {r[0] for r in indexed} <= {"id", "agent_id"}
