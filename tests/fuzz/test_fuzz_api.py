"""Property-based fuzz of the Python API: 2,000 generated calls across every public operation.
Each raises nothing but a hippo error, and a rejected call leaves the database unchanged."""

from __future__ import annotations

from typing import Any, Callable

import pytest
from hypothesis import strategies as st
from nasty import fuzz_calls, metadata, nasty, numbers, texts, values

import hippo
from hippo.providers.fake import FakeEmbedder

CALLS = 2_000
KEYS = st.one_of(st.sampled_from(["human", "persona"]), texts, nasty)
WORDS = st.one_of(st.sampled_from(["gardening", "tomatoes need sun", "I moved to Lisbon."]), texts, nasty)
WHEN = st.one_of(st.none(), st.sampled_from(["2024-05-01T10:00:00Z", "7d", "yesterday", "9999-99-99"]), nasty)
SMALL = st.one_of(st.integers(min_value=1, max_value=20), numbers, nasty)
FLAG = st.one_of(st.booleans(), nasty)


def operations(ids: st.SearchStrategy) -> dict[str, tuple[Callable[..., Any], tuple[st.SearchStrategy, ...]]]:
    """Every public operation with a strategy per argument: plausible values and nasty ones."""
    return {
        "store_memory": (lambda m, a, b, c, d: m.store_memory(a, b, c, observed_at=d),
                         (WORDS, metadata, st.one_of(st.just(0.5), numbers, nasty), WHEN)),
        "store_memories": (lambda m, a: m.store_memories(a), (st.one_of(st.lists(WORDS, max_size=3), nasty),)),
        "remember_facts": (lambda m, a, b, c: m.remember_facts(a, observed_at=b, metadata=c), (WORDS, WHEN, metadata)),
        "recall_memories": (lambda m, a, b, c, d, e, f: m.recall_memories(a, b, kind=c, tags=d, metadata=e, since=f),
                            (WORDS, SMALL, st.one_of(st.sampled_from(["fact", "memory", None]), nasty),
                             st.one_of(st.none(), st.lists(texts, max_size=2), nasty), metadata, WHEN)),
        "forget_memory": (lambda m, a, b, c, d: m.forget_memory(a, preview=b, limit=c, min_similarity=d),
                          (WORDS, FLAG, SMALL, st.one_of(st.none(), numbers, nasty))),
        "get_memory": (lambda m, a: m.get_memory(a), (ids,)),
        "fact_history": (lambda m, a: m.fact_history(a), (ids,)),
        "delete_memory": (lambda m, a: m.delete_memory(a), (ids,)),
        "update_metadata": (lambda m, a, b: m.update_metadata(a, b), (ids, metadata)),
        "list_memories": (lambda m, a, b, c: m.list_memories(limit=a, cursor=b, kind=c),
                          (SMALL, st.one_of(st.none(), ids), st.one_of(st.none(), st.just("fact"), nasty))),
        "recall_memory_block": (lambda m, a: m.recall_memory_block(a), (KEYS,)),
        "memory_block": (lambda m, a: m.memory_block(a), (KEYS,)),
        "replace_memory_block": (lambda m, a, b, c: m.replace_memory_block(a, b, c), (KEYS, WORDS, WORDS)),
        "append_memory_block": (lambda m, a, b: m.append_memory_block(a, b), (KEYS, WORDS)),
        "set_memory_block": (lambda m, a, b, c: m.set_memory_block(a, b, char_limit=c),
                             (KEYS, WORDS, st.one_of(st.none(), SMALL))),
        "recall_conversation": (lambda m, a, b: m.recall_conversation(a, b), (WORDS, SMALL)),
        "for_agent": (lambda m, a: m.for_agent(a).stats(), (st.one_of(st.just("bob"), texts, nasty),)),
        "import_records": (lambda m, a: m.import_records(a), (st.one_of(st.lists(values, max_size=3), nasty),)),
        "tools": (lambda m, a: m.tools(recall_max_tokens=a), (SMALL,)),
    }


def test_generated_calls_raise_only_hippo_errors_and_rejections_change_nothing(tmp_path):
    db = tmp_path / "fuzz.db"
    mem = hippo.open(db, agent_id="alice", embedder=FakeEmbedder())
    hippo.create_messages_table(db)
    seeded = [r.id for r in mem.store_memories(["gardening: tomatoes need sun", "We chose SQLite"])]
    mem.set_memory_block("human", "Name: Kris", char_limit=500)
    ops = operations(st.one_of(st.sampled_from(seeded), texts, nasty))
    made = fuzz_calls(ops, mem, db, CALLS)
    mem.close()
    assert len(made) >= CALLS and set(made) == set(ops), f"{len(made)} calls over {len(set(made))} operations"


if __name__ == "__main__":  # pragma: no cover
    pytest.main([__file__, "-q"])
