"""A store scoped to one agent: every per-agent method of the protocol, the agent's id bound once."""

from __future__ import annotations

import inspect
from datetime import datetime, timezone
from typing import Protocol

from hippo.core.ports import Store
from hippo.core.ports.scoped import AgentStore, Bound
from hippo.stores.registry import open_store

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
PARTS = tuple(part for part in Store.__bases__ if part is not Protocol)  # every part of the protocol


def per_agent_methods() -> set[str]:
    """The protocol's methods whose first argument is the agent's id."""
    return {name for part in PARTS for name, member in vars(part).items()
            if callable(member) and list(inspect.signature(member).parameters)[1:2] == ["agent_id"]}


def test_the_scope_binds_every_per_agent_method_and_nothing_else():
    bound = {name for cls in AgentStore.__mro__ for name, member in vars(cls).items() if isinstance(member, Bound)}
    assert bound == per_agent_methods()


def test_a_scope_reads_and_writes_its_own_agent_only(tmp_path):
    store = open_store(str(tmp_path / "scoped.db"))
    try:
        alice, bob = AgentStore(store, "alice"), AgentStore(store, "bob")
        alice.put_block("human", "Alice likes tea", NOW)
        bob.put_block("human", "Bob likes coffee", NOW)
        assert [b.value for b in alice.list_blocks()] == ["Alice likes tea"]
        assert bob.get_block("human").value == "Bob likes coffee"
        assert store.get_block("alice", "human").value == "Alice likes tea"  # the same rows, by id
        assert alice.database is store and alice.agent_id == "alice"
    finally:
        store.close()
