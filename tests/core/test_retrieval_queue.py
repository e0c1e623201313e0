"""The retrieval queue's own rules (hippo.stores.retrievals): events merge as they add up, agents
are written one transaction each in order, and a write that fails keeps what it did not reach."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

import hippo
from hippo.errors import StorageError
from hippo.stores.retrievals import RetrievalEvent, merge

T0 = datetime(2025, 3, 1, 12, tzinfo=timezone.utc)


def _event(agent: str, ids: tuple[str, ...], minutes: int) -> RetrievalEvent:
    pairs = tuple((a, b) for n, a in enumerate(ids) for b in ids[n + 1:])
    return RetrievalEvent(agent, ids, pairs, T0 + timedelta(minutes=minutes), 0.02)


def test_merged_events_add_up_by_memory_pair_and_day():
    events = [_event("a", ("x", "y"), 0), _event("a", ("y", "z"), 5), _event("b", ("x",), 1),
              _event("a", ("x", "y"), 60 * 24)]
    batches = merge(events)
    assert sorted(batches) == ["a", "b"]
    a = batches["a"]
    assert a.chunks["y"] == (3, T0 + timedelta(days=1), pytest.approx(0.06))
    assert a.links == {("x", "y"): (2, T0 + timedelta(days=1)), ("y", "z"): (1, T0 + timedelta(minutes=5))}
    # the daily counters count only what the write found: "z" was forgotten meanwhile
    assert a.day_counts({"x", "y"}) == {T0.date(): (3, 2), (T0 + timedelta(days=1)).date(): (2, 1)}


def test_a_failed_write_keeps_the_agents_it_did_not_reach(tmp_path, monkeypatch):
    with hippo.open(tmp_path / "q.db", agent_id="a", embedder="fake", retrieval_delay=30) as mem:
        ids = [mem.for_agent(agent).store_memory(f"{agent}'s note about the API").id for agent in ("a", "b", "c")]
        store, written = mem.store, []
        real = store.write_retrievals

        def failing(agent_id, batch):
            if agent_id == "b":
                raise StorageError("database is locked")
            written.append(agent_id)
            real(agent_id, batch)

        monkeypatch.setattr(store, "write_retrievals", failing)
        for agent, chunk in reversed(list(zip("abc", ids))):  # queued c, b, a: written a, b, c
            store.retrievals.add(RetrievalEvent(agent, (chunk,), (), T0, 0.02))
        with pytest.raises(StorageError):
            store.retrievals.flush()
        assert written == ["a"] and store.retrievals.pending() == 2  # b's and c's events: not reached
        assert mem.get_memory(ids[0]).access_count == 1  # a read goes on though the queue cannot be written
        monkeypatch.setattr(store, "write_retrievals", real)
        store.retrievals.flush()
        assert [mem.for_agent(agent).get_memory(chunk).access_count for agent, chunk in zip("abc", ids)] == [1, 1, 1]
