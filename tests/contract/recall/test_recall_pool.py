"""The candidate pool grows only while a larger one could still bring a hit."""

from __future__ import annotations

import hippo.core.recall.pool as recall_module
from hippo import MemoryInput


def count_searches(mem, monkeypatch) -> list[int]:
    pools: list[int] = []
    real = recall_module.find_candidates

    def spy(store, query, vector, pool, where):
        pools.append(pool)
        return real(store, query, vector, pool, where)

    monkeypatch.setattr(recall_module, "find_candidates", spy)
    return pools


def test_decayed_memories_crowding_the_pool_make_it_grow(make_mem, clock, monkeypatch):
    mem = make_mem("crowded")
    mem.store_memories([MemoryInput(f"garden {i}", intensity=0.06) for i in range(120)])
    clock.advance(days=400)  # the weak ones fade below the hiding line
    live = [f"In the old garden behind the house we planted tomato number {i} and some basil" for i in range(3)]
    mem.store_memories([MemoryInput(text, intensity=0.9) for text in live])
    pools = count_searches(mem, monkeypatch)
    hits = mem.recall_memories("garden", limit=3, touch=False).hits
    assert sorted(h.content for h in hits) == sorted(live)
    assert pools == [50, 200]  # the first pool held only faded memories


def test_no_growth_when_nothing_outside_the_pool_could_be_relevant(make_mem, monkeypatch):
    mem = make_mem("unrelated")
    mem.store_memories([f"Invoice {i} was paid by bank transfer on a weekday" for i in range(300)])
    pools = count_searches(mem, monkeypatch)
    hits = mem.recall_memories("zebra", limit=10, touch=False).hits
    assert hits == []
    assert pools == [50]  # 300 rows, but every unseen one scores below min_relevance
