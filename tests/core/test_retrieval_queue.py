"""The retrieval queue's own rules (hippo.stores.retrievals): events merge as they add up, agents
are written one transaction each in order, a write that fails keeps what it did not reach, and a
read waits for its own agent's events (queued, or being written by another thread), no other's."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone

import pytest
from support import sql

import hippo
from hippo.core.ports import RetrievalEvent
from hippo.errors import StorageError
from hippo.stores.retrievals import RetrievalQueue, merge

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


# -- a read waits for its own agent's events only -------------------------------------------------


def _queued(mem, agents: str, minutes: int = 0) -> dict[str, str]:
    """One memory per agent, and one retrieval event of it queued (none written yet)."""
    ids = {agent: mem.for_agent(agent).store_memory(f"{agent}'s note about the API").id for agent in agents}
    for agent, chunk in ids.items():
        mem.store.retrievals.add(RetrievalEvent(agent, (chunk,), (), T0 + timedelta(minutes=minutes), 0.02))
    return ids


def _written(db, agent: str) -> int:
    """The agent's access counts as another process reads them: what is written, not what is queued."""
    return int(sql(db, "SELECT coalesce(sum(access_count), 0) FROM chunks WHERE agent_id = ?", (agent,))[0][0])


def test_a_read_of_one_agent_writes_its_events_and_leaves_the_others_queued(db, embedder):
    with hippo.open(db, agent_id="a", embedder=embedder, retrieval_delay=30) as mem:
        ids = _queued(mem, "abc")
        assert mem.get_memory(ids["a"]).access_count == 1  # a's read wrote a's event first
        assert mem.store.retrievals.pending() == 2 and (_written(db, "b"), _written(db, "c")) == (0, 0)
        assert mem.for_agent("b").list_memories(limit=5).items[0].access_count == 1
        assert mem.store.retrievals.pending() == 1 and _written(db, "c") == 0
        assert mem.keys.any() is False and mem.store.retrievals.pending() == 1  # keys: no bookkeeping to wait for


def test_a_recall_writes_only_its_agents_events_older_than_the_delay(db, embedder):
    with hippo.open(db, agent_id="a", embedder=embedder, retrieval_delay=30) as mem:
        ids = _queued(mem, "ab")  # at T0: old by the recall's clock
        mem.store.retrievals.add(RetrievalEvent("a", (ids["a"],), (), T0 + timedelta(seconds=50), 0.02))  # young
        with mem.store.retrievals.recall_reads("a", T0 + timedelta(seconds=60)):
            assert _written(db, "a") == 1  # the old one, before the recall ranks anything
        assert mem.store.retrievals.pending() == 2 and _written(db, "b") == 0  # a's young one and b's
        mem.store.retrievals.flush()  # the writer: every agent
        assert (_written(db, "a"), _written(db, "b"), mem.store.retrievals.pending()) == (2, 1, 0)


def test_a_read_whose_write_fails_goes_on_and_keeps_the_events(db, embedder, monkeypatch, caplog):
    with hippo.open(db, agent_id="a", embedder=embedder, retrieval_delay=30) as mem:
        ids = _queued(mem, "ab")
        store = mem.store
        real = store.write_retrievals

        def failing(agent_id, batch):
            raise StorageError("another server holds the agent")

        monkeypatch.setattr(store, "write_retrievals", failing)
        assert mem.get_memory(ids["a"]).access_count == 0  # the read goes on, with what is written
        with store.retrievals.recall_reads("a", T0 + timedelta(hours=1)):
            pass  # so does a recall
        assert store.retrievals.pending() == 2 and "not written yet" in caplog.text
        monkeypatch.setattr(store, "write_retrievals", real)
        assert mem.get_memory(ids["a"]).access_count == 1 and store.retrievals.pending() == 1


def test_the_event_that_fills_the_queue_writes_every_agent(tmp_path):
    db = tmp_path / "q.db"
    with hippo.open(db, agent_id="a", embedder="fake", retrieval_delay=30) as mem:
        mem.store.retrievals.limit = 3
        ids = _queued(mem, "ab")
        assert mem.store.retrievals.pending() == 2
        mem.store.retrievals.add(RetrievalEvent("b", (ids["b"],), (), T0, 0.02))
        assert mem.store.retrievals.pending() == 0 and (_written(db, "a"), _written(db, "b")) == (1, 2)


# -- threads: a read waits for a write of its agent under way, no other --------------------------


class _Store:
    """Just what the queue writes through; the write of agent "a" holds until ``release``."""

    def __init__(self) -> None:
        self.started, self.release = threading.Event(), threading.Event()
        self.written: list[tuple[str, int]] = []

    @contextmanager
    def transaction(self):
        yield

    def write_retrievals(self, agent_id, batch) -> None:
        if agent_id == "a":
            self.started.set()
            assert self.release.wait(10)
        self.written.append((agent_id, len(batch.events)))

    def prune_links(self, agent_id, *, before, keep) -> int:
        return 0


def _thread(target, *args) -> threading.Thread:
    thread = threading.Thread(target=target, args=args, daemon=True)
    thread.start()
    return thread


def test_a_read_waits_for_its_agents_write_under_way_and_no_other():
    store = _Store()
    queue = RetrievalQueue(store, delay=30)  # type: ignore[arg-type]
    try:
        for agent in "ab":
            queue.add(_event(agent, ("x",), 0))
        writer = _thread(queue.flush)  # a first: it holds
        assert store.started.wait(10)
        queue.add(_event("a", ("y",), 1))
        reader = _thread(queue.before_read, "a")
        queue.before_read("b")  # b's event: written by this read while a's write holds
        assert store.written == [("b", 1)] and queue.pending() == 1
        reader.join(0.3)
        assert reader.is_alive()  # a read of a waits for a's write under way
        store.release.set()
        reader.join(10)
        writer.join(10)
        assert sorted(store.written) == [("a", 1), ("a", 1), ("b", 1)] and queue.pending() == 0
    finally:
        store.release.set()
        queue.close()


def test_a_read_inside_its_own_write_does_not_wait_for_itself():
    store = _Store()
    queue = RetrievalQueue(store, delay=30)  # type: ignore[arg-type]
    store.release.set()
    reads: list[int] = []

    def reading(agent_id, batch):
        queue.before_read(agent_id)  # the store reads the agent it writes: no wait on itself
        reads.append(queue.pending())

    store.write_retrievals = reading  # type: ignore[method-assign]
    queue.add(_event("a", ("x",), 0))
    queue.close()
    assert reads == [0]
