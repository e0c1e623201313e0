"""PostgreSQL only: the recalls' bookkeeping (hippo.stores.retrievals) commits without waiting for
its WAL to reach the disk, and no other write does. Three servers wrote many small retrieval
transactions, and each waited for a WAL flush (issue 34); a crash of the database may lose the
last moments of those boosts, as a killed process loses its queue, never a memory."""

from __future__ import annotations

from datetime import datetime, timezone

import hippo
from hippo.core.ports import RetrievalEvent
from hippo.providers.fake import FakeEmbedder


def _setting(store) -> str:
    with store.db.connection() as conn:
        return str(conn.execute("SHOW synchronous_commit").fetchone()[0])


def test_only_the_retrieval_write_commits_asynchronously(database, monkeypatch):
    with hippo.open(database, agent_id="alice", embedder=FakeEmbedder(), retrieval_delay=30) as mem:
        store, seen = mem.store, {}
        real_write, real_insert = store.write_retrievals, store.insert_chunks

        def write_retrievals(agent_id, batch):
            seen["retrievals"] = _setting(store)
            real_write(agent_id, batch)

        def insert_chunks(*args, **kwargs):
            seen["memory"] = _setting(store)
            return real_insert(*args, **kwargs)

        monkeypatch.setattr(store, "write_retrievals", write_retrievals)
        monkeypatch.setattr(store, "insert_chunks", insert_chunks)
        chunk = mem.store_memory("The harbour opens at six").id
        store.retrievals.add(RetrievalEvent("alice", (chunk,), (), datetime.now(timezone.utc), 0.02))
        store.retrievals.flush()
        assert seen == {"memory": "on", "retrievals": "off"}
        assert _setting(store) == "on"  # SET LOCAL: the pooled connection goes back as it was
        assert mem.get_memory(chunk).access_count == 1


def test_joining_an_open_transaction_leaves_its_durability_alone(database):
    with hippo.open(database, agent_id="alice", embedder=FakeEmbedder()) as mem:
        db = mem.store.db
        with db.transaction(), db.transaction(durable=False):
            assert _setting(mem.store) == "on"
        with db.transaction(durable=False), db.transaction():
            assert _setting(mem.store) == "off"
