"""Property-based fuzz of the conversation and experience operations through Python: 2,000
generated calls each for observe, surface, compact (``Memory.compact`` and ``hippo.compact``), a
session's history and the experience operations. Each raises nothing but a hippo error, and a
rejected call leaves every table a caller can change as it was (the capture inbox, the sessions'
histories and the experiences included)."""

from __future__ import annotations

from typing import Any, Callable

import pytest
from hypothesis import strategies as st
from nasty import HUGE_INTS, fuzz_calls, nasty, numbers, texts, values

import hippo
from hippo.providers.fake import FakeEmbedder

CALLS = 2_000
ROLES = st.one_of(st.sampled_from(["user", "assistant", "system", "tool", "developer", "toolResult"]),
                  st.just(["user"]), st.just({"role": "user"}), texts, nasty)
IDS = st.one_of(st.none(), st.sampled_from(["m1", "m2", "\ud800", "a\x00b", 7, True, *HUGE_INTS]), texts, nasty)
PARTS = st.lists(st.one_of(st.fixed_dictionaries({"type": st.just("text"), "text": texts}),
                           st.fixed_dictionaries({"type": st.just("tool_use"), "name": texts, "input": values}),
                           st.fixed_dictionaries({"type": st.just("tool_result"), "content": values}), nasty),
                 max_size=3)
CONTENT = st.one_of(st.sampled_from(["I moved to Lisbon last spring.", "We decided to ship the billing fix.",
                                     "ok", "heartbeat"]), texts, PARTS, nasty)
CALL = st.fixed_dictionaries({"id": IDS, "function": st.one_of(
    st.fixed_dictionaries({"name": texts, "arguments": st.one_of(texts, values)}), nasty)})
MESSAGE = st.one_of(
    st.fixed_dictionaries({"role": ROLES, "content": CONTENT},
                          optional={"id": IDS, "name": IDS, "timestamp": st.one_of(texts, numbers, nasty),
                                    "tool_calls": st.one_of(st.lists(CALL, max_size=2), nasty),
                                    "tool_call_id": IDS}),
    nasty)
PLAIN = st.lists(st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant"]),
     "content": st.sampled_from(["I moved to Lisbon last spring.", "We decided to ship the billing fix.",
                                 "Can we ship the billing fix today?", "ok", "thanks!"])},
    optional={"id": st.sampled_from(["m1", "m2", "m3"])}), min_size=1, max_size=4)
MESSAGES = st.one_of(PLAIN, st.lists(MESSAGE, min_size=1, max_size=6), st.sampled_from([[], "hello", None]), nasty)
# A session's history: the SDK's items (messages, tool calls, anything JSON), or not a list of objects.
ITEMS = st.one_of(st.lists(st.one_of(MESSAGE, st.dictionaries(texts, values, max_size=3),
                                     st.fixed_dictionaries({"type": st.just("function_call"), "call_id": IDS,
                                                            "arguments": st.one_of(texts, values)}), values, nasty),
                           max_size=4), st.sampled_from([[], "hello", None]), nasty)
SESSION = st.one_of(st.sampled_from(["s1", "s2", "s1\n", "../s", ""]), texts, nasty)
CONFIG = st.one_of(
    st.none(),
    st.dictionaries(st.sampled_from(["decayRates", "decay_rates", "sparseThreshold", "compress_threshold",
                                     "retentionFloor", "maxSparseIndexTokens", "debug", "logFile", "log_file",
                                     "unknown"]),
                    st.one_of(numbers, texts, st.dictionaries(st.sampled_from(["decision", "context", "x"]),
                                                              numbers, max_size=2), nasty), max_size=3),
    nasty)
TYPES = st.one_of(st.sampled_from(["chat", "observation", "task", "decision", "tool-use", "error", "insight"]),
                  texts, nasty)
TAGS = st.one_of(st.lists(st.one_of(st.sampled_from(["billing", "keys"]), texts), max_size=3), texts, nasty)
REF = st.one_of(st.none(), st.sampled_from(["u1", "room-7", 42]), st.sampled_from(HUGE_INTS), texts, nasty)
SMALL = st.one_of(st.integers(min_value=1, max_value=20), numbers, nasty)
CONTEXT = st.one_of(st.none(), st.fixed_dictionaries({}, optional={
    "userId": REF, "roomId": REF, "taskId": REF, "mentionedMe": st.one_of(st.booleans(), nasty),
    "isQuestion": st.one_of(st.booleans(), nasty), "k": values}), nasty)


def groups() -> dict[str, dict[str, tuple[Callable[..., Any], tuple[st.SearchStrategy, ...]]]]:
    """The operations fuzzed, by group, with a strategy per argument."""
    return {
        "observe": {
            "observe": (lambda m, a, b: m.observe(a, session_id=b), (MESSAGES, SESSION)),
            "process_pending": (lambda m: m.process_pending(), ()),
        },
        "surface": {
            "surface": (lambda m, a, b, c: m.surface(a, session_id=b, max_tokens=c), (MESSAGES, SESSION, SMALL)),
        },
        "compact": {
            "compact": (lambda m, a, b, c, d: m.compact(a, session_id=b, config=c, previous_summary=d),
                        (MESSAGES, SESSION, CONFIG, st.one_of(st.none(), texts, nasty))),
            "hippo.compact": (lambda m, a, b: hippo.compact(a, b), (MESSAGES, CONFIG)),
        },
        "history": {
            "add_session_items": (lambda m, a, b: m.add_session_items(b, a), (ITEMS, SESSION)),
            "session_items": (lambda m, a, b: m.session_items(a, limit=b),
                              (SESSION, st.one_of(st.none(), st.integers(min_value=0, max_value=5), numbers, nasty))),
            "pop_session_item": (lambda m, a: m.pop_session_item(a), (SESSION,)),
            "clear_session_items": (lambda m, a: m.clear_session_items(a), (SESSION,)),
        },
        "experiences": {
            "record_experience": (
                lambda m, a, b, c, d, e, f, g: m.record_experience(a, b, context=c, importance=d, tags=e,
                                                                   source=f, session_id=g),
                (TYPES, st.one_of(st.sampled_from(["Deployed the billing fix", "Key rotation failed"]), texts, nasty),
                 CONTEXT, st.one_of(st.none(), numbers, nasty), TAGS,
                 st.one_of(st.none(), st.just("agent"), texts, nasty), st.one_of(st.none(), SESSION))),
            "recall": (lambda m, a, b, c, d, e, f: m.recall(types=a, tags=b, min_importance=c, since=d, limit=e,
                                                             query=f),
                       (st.one_of(st.none(), TYPES, st.lists(TYPES, max_size=2)), st.one_of(st.none(), TAGS),
                        st.one_of(st.none(), numbers, nasty),
                        st.one_of(st.none(), st.sampled_from(["2024-01-01", "7d"]), texts, nasty), SMALL,
                        st.one_of(st.none(), texts, nasty))),
            "recall_related": (lambda m, a, b, c, d: m.recall_related(user_id=a, room_id=b, task_id=c, limit=d),
                               (REF, REF, REF, SMALL)),
            "consolidate": (lambda m: m.consolidate(), ()),
            "short_term": (lambda m: m.short_term(), ()),
        },
    }


@pytest.mark.parametrize("group", sorted(groups()))
def test_generated_calls_raise_only_hippo_errors_and_rejections_change_nothing(tmp_path, monkeypatch, group):
    monkeypatch.chdir(tmp_path)  # a file a call might create would land here
    db = tmp_path / "fuzz.db"
    mem = hippo.open(db, agent_id="alice", embedder=FakeEmbedder())
    mem.store_memories(["We decided to ship the billing fix on Friday", "Kris lives in Lisbon"])
    mem.observe([{"role": "user", "content": "I moved to Lisbon last spring.", "id": "m0"}], session_id="s1")
    mem.record_experience("task", "Deployed the billing fix", context={"userId": "u1"})
    made = fuzz_calls(groups()[group], mem, db, CALLS)
    assert len(made) >= CALLS
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("fuzz.db")) == [], "a call made a file"
    mem.close()
