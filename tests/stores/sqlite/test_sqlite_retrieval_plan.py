"""The retrieval event a touching recall queues seeks each hit by id when it is written: no
statement of it reads the agent's whole index (at 20k memories one such statement per link pair
made recall 4x slower), and pruning the weak links reads only theirs."""

from __future__ import annotations

import re

import pytest

import hippo
from hippo.core.curation.rules import LINK_FADE
from hippo.core.memory import MemoryInput

pytestmark = pytest.mark.sqlite_only  # the SQLite store's own statements and plans

WHOLE_AGENT = re.compile(r"(SCAN|SEARCH) chunks USING (COVERING )?INDEX idx_chunks_agent_order \(agent_id=\?\)$")


def retrieval_statements(mem, query: str) -> list[str]:
    """The statements between BEGIN and COMMIT of one touching recall's event, values inlined."""
    mem.recall_memories(query, limit=5, touch=False)  # the vectors loaded, as a running agent has them
    seen: list[str] = []
    mem.store.db.conn.set_trace_callback(seen.append)
    try:
        assert mem.recall_memories(query, limit=5).hits
        assert not any(s.startswith("BEGIN") for s in seen)  # queued: written behind the answer
        mem.store.retrievals.flush()
    finally:
        mem.store.db.conn.set_trace_callback(None)
    begin = next(n for n, s in enumerate(seen) if s.startswith("BEGIN"))
    end = next(n for n, s in enumerate(seen) if s == "COMMIT" and n > begin)
    return [s for s in seen[begin + 1:end] if not s.startswith("--")]


def test_the_retrieval_event_seeks_hits_by_id(tmp_path):
    with hippo.open(tmp_path / "plan.db", agent_id="a", embedder="fake") as mem:
        mem.store_memories([MemoryInput(f"note {n} about topic{n % 7} and other things") for n in range(300)])
        statements = retrieval_statements(mem, "topic3 things")
        assert any(s.startswith("INSERT INTO chunk_links") for s in statements)
        assert any(s.startswith("UPDATE chunks SET access_count") for s in statements)
        for statement in statements:
            plan = [row[3] for row in mem.store.db.conn.execute(f"EXPLAIN QUERY PLAN {statement}")]
            assert not any(WHOLE_AGENT.search(line) for line in plan), (statement[:120], plan)


def test_pruning_reads_only_the_weak_links(tmp_path):
    with hippo.open(tmp_path / "plan.db", agent_id="a", embedder="fake") as mem:
        mem.store_memories([MemoryInput(f"note {n} about topic{n % 7}") for n in range(30)])
        mem.recall_memories("topic3", limit=5)
        seen: list[str] = []
        mem.store.db.conn.set_trace_callback(seen.append)
        try:
            mem.store.prune_links("a", before=mem.now() - LINK_FADE, keep=3)
        finally:
            mem.store.db.conn.set_trace_callback(None)
        deletes = [s for s in seen if s.startswith("DELETE")]
        assert len(deletes) == 2
        for statement in deletes:
            plan = " ".join(row[3] for row in mem.store.db.conn.execute(f"EXPLAIN QUERY PLAN {statement}"))
            assert "idx_links_weak" in plan and "SCAN" not in plan.replace("SCAN CONSTANT", ""), (statement, plan)
