"""PostgreSQL only: a database migrated by an older hippo takes the later migrations with its rows kept."""

from __future__ import annotations

import itertools
import os
from datetime import timedelta

import psycopg
import pytest

import hippo
from hippo.providers.fake import FakeEmbedder
from hippo.stores.postgres.schema import MIGRATIONS

FACT, WORDING = "01J0000000000000000000FACT", "01J00000000000000000000MRG"
_NAMES = itertools.count(1)


@pytest.fixture
def older(postgres):
    """``older("0019")``: the URL of a new database with every migration before 0019 applied, as
    a hippo of that time left it."""
    made: list[str] = []

    def before(migration: str) -> str:
        name = f"hippo_older_{os.getpid()}_{next(_NAMES)}"
        with psycopg.connect(postgres.admin, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        url = postgres.url(name)
        made.append(url)
        upto = next(i for i, (known, _) in enumerate(MIGRATIONS) if known.startswith(f"{migration}_"))
        with psycopg.connect(url, autocommit=True) as conn, conn.transaction():
            conn.execute("CREATE TABLE hippo_migrations (number integer PRIMARY KEY, name text NOT NULL, "
                         "applied_at timestamptz NOT NULL DEFAULT now())")
            for number, (known, script) in enumerate(MIGRATIONS[:upto], start=1):
                conn.execute(script)
                conn.execute("INSERT INTO hippo_migrations (number, name) VALUES (%s, %s)", (number, known))
        return url

    yield before
    for url in made:
        postgres.drop(url)


def test_a_database_from_before_0018_drops_merged_wordings_on_a_new_text(older, clock):
    """A database from before migration 0018, a fact with a merged wording in it: opened again, the
    migration applies and the wording goes with the text replaced after it."""
    database = older("0018")
    with psycopg.connect(database, autocommit=True) as conn:
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
        assert conn.execute("SELECT max(name) FROM hippo_migrations").fetchone()[0] == MIGRATIONS[-1][0]


def test_a_database_from_before_0019_keeps_its_counters_in_their_own_table(older, clock):
    """Chunks written before the counters had a table of their own keep their intensity, counts and
    last access after the migration; a recall then bumps them there, and scores by them."""
    database = older("0019")
    seen = clock() - timedelta(days=2)
    with psycopg.connect(database, autocommit=True) as conn:
        for i, (content, intensity, encounters, accesses) in enumerate(
                [("The staging cluster runs on three nodes", 0.9, 3, 7),
                 ("The staging cluster was set up in March", 0.3, 1, 0)]):
            conn.execute("INSERT INTO chunks (id, agent_id, content, kind, running_intensity, encounter_count, "
                         "access_count, last_accessed_at, created_at) VALUES (%s, 'alice', %s, 'memory', %s, %s, %s, "
                         "%s, %s)", (f"01J00000000000000000000M0{i}", content, intensity, encounters, accesses, seen,
                                     seen - timedelta(days=1)))

    with hippo.open(database, agent_id="alice", embedder=FakeEmbedder(), clock=clock) as mem:
        mem.reembed()
        chunks = {c.id: c for c in mem.store.get_chunks("alice", ["01J00000000000000000000M00",
                                                                   "01J00000000000000000000M01"])}
        strong = chunks["01J00000000000000000000M00"]
        assert (strong.running_intensity, strong.encounter_count, strong.access_count) == (0.9, 3, 7)
        assert strong.last_accessed_at == seen
        hits = mem.recall_memories("staging cluster", limit=2)
        assert [h.id for h in hits][0] == strong.id  # the stronger first, by its migrated counters
    with psycopg.connect(database, autocommit=True) as conn:
        rows = conn.execute("SELECT id, access_count, last_accessed_at FROM chunk_strength ORDER BY id").fetchall()
        assert [(r[0][-2:], r[1], r[2]) for r in rows] == [("00", 8, clock()), ("01", 1, clock())]
        view = conn.execute("SELECT access_count, encounter_count FROM chunks ORDER BY id").fetchall()
        assert view == [(8, 3), (1, 1)]  # the view of the old table's shape reads the same
        assert "access_count" not in [r[0] for r in conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'chunk_rows'").fetchall()]
