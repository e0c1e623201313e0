"""The retrieval event a touching recall writes seeks each hit by id: no statement of it reads the
agent's whole index (at 20k memories one such statement per link pair made recall 4x slower)."""

from __future__ import annotations

import re

import pytest

import hippo
from hippo.core.memory import MemoryInput

pytestmark = pytest.mark.sqlite_only  # the SQLite store's own statements and plans

WHOLE_AGENT = re.compile(r"(SCAN|SEARCH) chunks USING (COVERING )?INDEX idx_chunks_agent_order \(agent_id=\?\)$")


def retrieval_statements(mem, query: str) -> list[str]:
    """The statements between BEGIN and COMMIT of one touching recall, values inlined."""
    mem.recall_memories(query, limit=5, touch=False)  # the vectors loaded, as a running agent has them
    seen: list[str] = []
    mem.store._conn.set_trace_callback(seen.append)
    try:
        assert mem.recall_memories(query, limit=5).hits
    finally:
        mem.store._conn.set_trace_callback(None)
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
            plan = [row[3] for row in mem.store._conn.execute(f"EXPLAIN QUERY PLAN {statement}")]
            assert not any(WHOLE_AGENT.search(line) for line in plan), (statement[:120], plan)
