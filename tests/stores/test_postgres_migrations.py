"""PostgreSQL only: a database migrated by an older hippo takes the later migrations with its rows kept."""

from __future__ import annotations

import psycopg
import pytest

import hippo

FACT, WORDING = "01J0000000000000000000FACT", "01J00000000000000000000MRG"


@pytest.fixture
def database(postgres):
    url = postgres.new_database()
    yield url
    postgres.drop(url)


def test_a_database_from_before_0018_drops_merged_wordings_on_a_new_text(database, clock):
    """Migration 0018 undone (as an older hippo left the database), a fact with a merged wording in
    it: opened again, the migration applies and the wording goes with the text replaced after it."""
    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute("DROP TRIGGER fact_merges_chunk_au ON chunks")
        conn.execute("DROP FUNCTION hippo_merges_rewritten()")
        conn.execute("DELETE FROM hippo_migrations WHERE name = '0018_merges_rewritten'")
        conn.execute("INSERT INTO chunks (id, agent_id, content, kind, last_accessed_at, created_at, encounter_count, "
                     "running_intensity, source) VALUES (%s, 'alice', 'User has a daughter named Mia', 'fact', "
                     "%s, %s, 2, 0.5, 'extraction')", (FACT, clock(), clock()))
        conn.execute("INSERT INTO fact_merges (id, agent_id, fact_id, content, similarity, intensity, merged_at) "
                     "VALUES (%s, 'alice', %s, 'User has a daughter called Mia', 0.9, 0.5, %s)",
                     (WORDING, FACT, clock()))

    with hippo.open(database, agent_id="alice", embedder=None, clock=clock) as mem:
        assert len(mem.fact_history(FACT).merged) == 1
        mem.update_memory(FACT, content="User has a daughter named Mia Rose")
        assert mem.fact_history(FACT).merged == []
    with psycopg.connect(database, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM fact_merges").fetchone()[0] == 0
        assert conn.execute("SELECT max(name) FROM hippo_migrations").fetchone()[0] == "0018_merges_rewritten"
