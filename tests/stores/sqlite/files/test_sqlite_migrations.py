"""Schema migrations on files written by an older hippo, and the time-filter index (0004)."""

from __future__ import annotations

import sqlite3
from datetime import timedelta

import pytest
from support import sql

import hippo
from hippo.core.ports import ChunkFilter
from hippo.stores.sqlite.filters import filter_sql
from hippo.stores.sqlite.schema import MIGRATIONS, _statements

pytestmark = pytest.mark.sqlite_only  # SQLite's own files and schema


def version_3_file(path) -> None:
    """A database as hippo wrote it before migration 0004, holding one memory of 'alice'."""
    conn = sqlite3.connect(str(path), isolation_level=None)
    for _, script in MIGRATIONS[:3]:
        for statement in _statements(script):
            conn.execute(statement)
    conn.execute("PRAGMA user_version = 3")
    conn.execute(
        "INSERT INTO chunks(id, agent_id, content, kind, last_accessed_at, created_at, observed_at) "
        "VALUES ('old-1', 'alice', 'The lighthouse was repainted in June', 'memory', "
        "'2024-12-30T00:00:00.000000+00:00', '2024-12-30T00:00:00.000000+00:00', '2024-06-02T00:00:00.000000+00:00')"
    )
    conn.close()


def file_before(path, migration: str) -> sqlite3.Connection:
    """A connection to a new file with every migration before ``migration`` ("0023") applied."""
    from hippo.stores.sqlite.narrowing import driving

    before = next(i for i, (name, _) in enumerate(MIGRATIONS) if name.startswith(f"{migration}_"))
    conn = sqlite3.connect(str(path), isolation_level=None)
    driving.register(conn)
    for _, script in MIGRATIONS[:before]:
        for statement in _statements(script):
            conn.execute(statement)
    conn.execute(f"PRAGMA user_version = {before}")
    return conn


def test_an_older_file_gains_the_time_index_and_keeps_its_memories(db_path, clock):
    version_3_file(db_path)
    mem = hippo.open(db_path, agent_id="alice", embedder=None, clock=clock)
    assert sql(db_path, "PRAGMA user_version") == [(len(MIGRATIONS),)]
    assert sql(db_path, "SELECT name FROM sqlite_master WHERE name = 'idx_chunks_when'") == [("idx_chunks_when",)]
    hits = mem.recall_memories("lighthouse repainted", since="2024-06-01", until="2024-07-01", touch=False).hits
    assert [h.id for h in hits] == ["old-1"]
    assert mem.recall_memories("lighthouse repainted", since="2024-07-01", touch=False).hits == []


def test_a_time_filter_reads_the_index_not_every_row(mem, clock):
    mem.store_memory("Planted the tomatoes", observed_at=clock() - timedelta(days=40))
    clause, params = filter_sql(ChunkFilter(since=clock() - timedelta(days=60), until=clock() - timedelta(days=30)))
    with mem.store.db.reading() as conn:
        plan = " ".join(row[3] for row in conn.execute(
            f"EXPLAIN QUERY PLAN SELECT c.rowid FROM chunks c WHERE c.agent_id = ? AND {clause}", ("alice", *params)))
    assert "idx_chunks_when" in plan and "SCAN" not in plan


def test_a_merged_wording_from_before_0023_is_kept_and_splits_without_provenance(db_path, clock):
    """A file whose fact_merges lacks metadata, source, session and observed_at (migration 0023)."""
    conn = file_before(db_path, "0023")
    now = clock().isoformat(timespec="microseconds")
    conn.execute("INSERT INTO chunks(id, agent_id, content, kind, metadata, last_accessed_at, created_at, "
                 "encounter_count, running_intensity, source) VALUES ('01J0000000000000000000FACT', 'alice', "
                 "'User has a daughter named Mia', 'fact', '{\"user\": \"kris\"}', ?, ?, 2, 0.5, 'extraction')",
                 (now, now))
    conn.execute("INSERT INTO fact_merges (id, agent_id, fact_id, content, similarity, intensity, merged_at) "
                 "VALUES ('01J00000000000000000000MRG', 'alice', '01J0000000000000000000FACT', "
                 "'User has a daughter called Mia', 0.9, 0.5, ?)", (now,))
    conn.close()

    mem = hippo.open(db_path, agent_id="alice", embedder=None, clock=clock)
    assert sql(db_path, "PRAGMA user_version") == [(len(MIGRATIONS),)]
    [merged] = mem.fact_history("01J0000000000000000000FACT").merged
    assert (merged.content, merged.metadata, merged.source, merged.session_id) == (
        "User has a daughter called Mia", {}, None, None)
    split = mem.split_fact("01J0000000000000000000FACT", merged.content)
    assert (split.metadata, split.source, split.observed_at) == ({}, "extraction", None)
    mem.close()


def test_a_file_from_before_0024_drops_merged_wordings_on_a_new_text(db_path, clock):
    """A file whose chunks had no trigger for merged wordings on a new text (migration 0024): the
    wording merged before the upgrade goes with the text replaced after it."""
    conn = file_before(db_path, "0024")
    now = clock().isoformat(timespec="microseconds")
    conn.execute("INSERT INTO chunks(id, agent_id, content, kind, last_accessed_at, created_at, encounter_count, "
                 "running_intensity, source) VALUES ('01J0000000000000000000FACT', 'alice', "
                 "'User has a daughter named Mia', 'fact', ?, ?, 2, 0.5, 'extraction')", (now, now))
    conn.execute("INSERT INTO fact_merges (id, agent_id, fact_id, content, similarity, intensity, merged_at) "
                 "VALUES ('01J00000000000000000000MRG', 'alice', '01J0000000000000000000FACT', "
                 "'User has a daughter called Mia', 0.9, 0.5, ?)", (now,))
    conn.close()

    with hippo.open(db_path, agent_id="alice", embedder=None, clock=clock) as mem:
        assert sql(db_path, "SELECT name FROM sqlite_master WHERE name = 'fact_merges_chunk_au'") == [
            ("fact_merges_chunk_au",)]
        assert len(mem.fact_history("01J0000000000000000000FACT").merged) == 1
        mem.update_memory("01J0000000000000000000FACT", content="User has a daughter named Mia Rose")
        assert mem.fact_history("01J0000000000000000000FACT").merged == []
        assert sql(db_path, "SELECT count(*) FROM fact_merges") == [(0,)]
