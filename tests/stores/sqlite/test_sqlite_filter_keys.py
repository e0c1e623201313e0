"""Recall filtered by a metadata value (equality, ``$in``) or by source lists its rows from
``chunk_keys`` (stores/sqlite/narrowing/driving.py, migration 0026): the keys cover every row the filter
passes (JSON types apart, 1 and 1.0 alike), follow every write, hold no text, and the recall reads
no statement over the agent's whole index or table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import hippo
import hippo.stores.sqlite.narrowing.driving as driving
from hippo.core.memory import MemoryInput
from hippo.core.ports import ChunkFilter, MetaCondition
from hippo.stores.sqlite.filters import filter_sql

pytestmark = pytest.mark.sqlite_only  # the SQLite store's own indexes and search plans

VALUES = ["x", "1", 1, 1.0, 2.5, -0.0, 0, True, False, None, "", "tröt"]
WHOLE_AGENT = re.compile(r"(SCAN|SEARCH) chunks USING (COVERING )?INDEX \w+ \(agent_id=\?\)$|SCAN c(hunks)?$")


def metadata_of(i: int) -> dict:
    fields = {"v": VALUES[i % len(VALUES)], "project": f"p{i % 50}", "nested": {"v": "x"}, "tags": ["t"]}
    if i % 7 == 0:
        del fields["v"]
    return fields


def passing(conn, agent_id: str, where: ChunkFilter) -> set[int]:
    clause, params = filter_sql(where)
    return {r for (r,) in conn.execute(f"SELECT c.rowid FROM chunks c WHERE c.agent_id = ? AND {clause}",
                                       (agent_id, *params))}


def listed(conn, agent_id: str, where: ChunkFilter) -> set[int] | None:
    parts = driving.drivers(where, agent_id)
    if not parts:
        return None
    found = [{r for (r,) in conn.execute(sql, params)} for sql, params in parts]
    return set.intersection(*found)


def conditions() -> list[ChunkFilter]:
    eq = [ChunkFilter(metadata=(MetaCondition("v", "eq", v),)) for v in VALUES]
    many = [ChunkFilter(metadata=(MetaCondition("v", "in", (VALUES[i], VALUES[i + 3])),)) for i in range(8)]
    return [*eq, *many, ChunkFilter(sources=("import",)), ChunkFilter(sources=("import", "agent")),
            ChunkFilter(metadata=(MetaCondition("nested", "eq", "x"),)),  # an object holds no plain value
            ChunkFilter(metadata=(MetaCondition("project", "eq", "p3"), MetaCondition("v", "ne", 1)),
                        sources=("agent",))]


def check_keys(mem) -> None:
    with mem.store.db.reading() as conn:
        for where in conditions():
            listing = listed(conn, "alice", where)
            exact = passing(conn, "alice", where)
            assert listing is None or exact <= listing, where
            if where.metadata and where.metadata[0].key == "v" and where.metadata[0].op == "eq":
                assert exact, where


def test_the_keys_cover_every_row_a_filter_passes_through_every_write(make_mem):
    mem = make_mem("alice")
    results = mem.store_memories([MemoryInput(f"Note {i} on the heron", metadata_of(i),
                                              source="import" if i % 9 == 0 else "agent") for i in range(400)])
    make_mem("bob").store_memories([MemoryInput(f"Bob's heron {i}", {"v": "x"}, source="import") for i in range(30)])
    check_keys(mem)
    with mem.store.db.reading() as conn:
        assert listed(conn, "alice", ChunkFilter(metadata=(MetaCondition("nested", "eq", "x"),))) == set()
        assert len(listed(conn, "alice", ChunkFilter(metadata=(MetaCondition("v", "eq", 1),))) or ()) == \
            len(passing(conn, "alice", ChunkFilter(metadata=(MetaCondition("v", "eq", 1),))))
    for r in results[:100:3]:
        mem.update_metadata(r.id, {"v": 1.0, "project": "p3"})
    mem.store.delete_chunks("alice", [r.id for r in results[100:150]])
    check_keys(mem)
    mem.delete_all()
    with mem.store.db.reading() as conn:
        assert conn.execute("SELECT count(*) FROM chunk_keys WHERE chunk NOT IN (SELECT rowid FROM chunks)"
                            ).fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM chunk_keys").fetchone() == (30 * 2,)  # bob's v and source


def test_recall_answers_as_a_test_of_every_row(make_mem):
    mem = make_mem("alice")
    mem.store_memories([MemoryInput(f"Note {i} on the heron and the pond", metadata_of(i),
                                    source="import" if i % 9 == 0 else "agent") for i in range(600)])
    for metadata, source, wanted in [
        ({"project": "p3"}, None, lambda i: i % 50 == 3),
        ({"v": {"$in": [1, True]}}, None, lambda i: i % 7 and i % len(VALUES) in (2, 3, 7)),  # 1, 1.0, true
        (None, "import", lambda i: i % 9 == 0),
    ]:
        hits = mem.recall_memories("heron pond", limit=200, metadata=metadata, source=source).hits
        expected = {f"Note {i} on the heron and the pond" for i in range(600) if wanted(i)}
        assert {h.content for h in hits} == expected, (metadata, source)


def recall_statements(mem, **filters) -> list[str]:
    mem.recall_memories("warm up", limit=5, touch=False)  # the vectors loaded, as a running agent has them
    seen: list[str] = []
    mem.store.db.conn.set_trace_callback(seen.append)
    try:
        assert mem.recall_memories("note about topic3", limit=5, touch=False, **filters).hits
    finally:
        mem.store.db.conn.set_trace_callback(None)
    return [s for s in seen if s.startswith(("SELECT", "WITH"))]


@pytest.mark.parametrize("filters", [{"metadata": {"project": "p3"}},
                                     {"metadata": {"project": {"$in": ["p3", "p11"]}}},
                                     {"source": "import"}], ids=["metadata-eq", "metadata-in", "source"])
def test_a_filtered_recall_reads_no_statement_over_the_whole_agent(tmp_path, filters):
    with hippo.open(tmp_path / "plan.db", agent_id="a", embedder="fake") as mem:
        mem.store_memories([MemoryInput(f"note {n} about topic{n % 7} and other things", {"project": f"p{n % 50}"},
                                        source="import" if n % 40 == 0 else "agent") for n in range(4000)])
        statements = recall_statements(mem, **filters)
        assert any("chunk_keys" in s for s in statements)
        for statement in statements:
            plan = [row[3] for row in mem.store.db.conn.execute(f"EXPLAIN QUERY PLAN {statement}")]
            assert not any(WHOLE_AGENT.search(line) for line in plan), (statement[:160], plan)


def test_the_keys_hold_no_text_and_forgotten_values_leave_no_bytes(make_mem, db):
    mem = make_mem("alice")
    secret = "Zyzzogeton"
    results = mem.store_memories([
        MemoryInput(f"Note {i}", {"client": f"client-{i % 40}-{secret if i % 8 == 0 else 'plain'}-{'x' * 40}"},
                    source=f"src-{i % 30}-{secret.lower() if i % 8 == 0 else 'plain'}") for i in range(3000)])
    with mem.store.db.reading() as conn:
        pages = [p for (p,) in conn.execute(
            "SELECT pageno FROM dbstat WHERE name IN ('chunk_keys', 'idx_chunk_keys_chunk')")]
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw = Path(db).read_bytes()
    assert len(pages) > 5 and not any(b"client-" in raw[(p - 1) * size:p * size] for p in pages)
    assert mem.store.delete_chunks("alice", [r.id for i, r in enumerate(results) if i % 8 == 0]) == 375
    assert len(mem.recall_memories("Note", metadata={"client": f"client-1-plain-{'x' * 40}"}, limit=5).hits) == 5
    mem.close()
    assert not any(word.encode() in Path(db + suffix).read_bytes() for word in (secret, secret.lower())
                   for suffix in ("", "-wal") if Path(db + suffix).exists())
