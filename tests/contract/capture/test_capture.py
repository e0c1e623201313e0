"""Seed 002's capture over any store: observe durably and at once, process later in windows
through a gate and an extractor (offline, or a scripted LLM), dedup, provenance and source ids,
exactly once; forget and delete_all reach the inbox."""

from __future__ import annotations

import json
import threading
import time

import pytest
from support import sql
from traces import SECRET, occurrences, scrub, total

from hippo.core.capture.inbox import windows
from hippo.core.ports import Observed
from hippo.errors import InvalidInput, ProviderError
from hippo.providers.fake import FakeLLM

TALK = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "Hi there!", "id": "m1", "name": "Kris", "timestamp": "2024-05-08T13:56:00Z"},
    {"role": "user", "content": "We decided to ship the billing service on Fridays only, after QA sign-off.",
     "id": "m2", "name": "Kris", "timestamp": "2024-05-08T13:57:00Z"},
    {"role": "assistant", "content": "Thanks!", "id": "m3"},
    {"role": "user", "content": [{"type": "text", "text": "My daughter Mia starts school in Lisbon in September."}],
     "id": "m4", "name": "Kris", "timestamp": "2024-05-08T14:01:00Z"},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "exit 0"}], "id": "m5"},
]


def test_observe_keeps_messages_durably_and_skips_what_it_should(mem, db):
    seen = mem.observe(TALK, session_id="s-1")
    assert (seen.accepted, seen.duplicates, seen.skipped) == (4, 0, 2)  # the system prompt, the tool result
    assert seen.message_ids == ["m1", "m2", "m3", "m4"]
    assert sql(db, "SELECT count(*) FROM observed_messages")[0][0] == 4  # committed before it returned
    again = mem.observe(TALK, session_id="s-1")  # a transcript sent again
    assert (again.accepted, again.duplicates) == (0, 4)
    assert mem.observe(TALK[1:2], session_id="s-2").accepted == 1  # ids are per session
    assert mem.stats().memories == 0  # nothing is processed by observing


def test_bad_messages_are_refused_and_change_nothing(mem, db):
    for bad, session in [([{"role": "user", "content": 7}], "s"), ("not a list", "s"),
                         ([{"role": "wizard", "content": "x"}], "s"), (TALK, None), (TALK, "bad session!"),
                         ([{"role": "user", "content": "x", "timestamp": "yesterday"}], "s"),
                         ([*TALK[:2], {"role": "user", "content": "y", "id": ""}], "s")]:
        with pytest.raises(InvalidInput):
            mem.observe(bad, session_id=session)
    assert sql(db, "SELECT count(*) FROM observed_messages")[0][0] == 0


def test_offline_capture_writes_memories_with_provenance(mem):
    mem.observe(TALK, session_id="s-1")
    done = mem.process_pending()
    assert (done.sessions, done.messages, done.windows, done.gated_in) == (1, 4, 1, 1)
    assert done.memories == 2 and done.llm_calls == []  # small talk stayed out
    (hit,) = mem.recall_memories("which day do we ship billing", limit=1)
    chunk = hit.chunk
    assert chunk.content == "Kris: We decided to ship the billing service on Fridays only, after QA sign-off."
    assert (chunk.source, chunk.session_id, chunk.source_ids) == ("conversation", "s-1", ["m2"])
    assert chunk.metadata["memory_type"] == "decision"
    assert chunk.observed_at.isoformat().startswith("2024-05-08T13:57")
    assert mem.process_pending().messages == 0  # nothing twice


def test_a_near_duplicate_strengthens_the_memory_held(mem):
    mem.observe(TALK[:3], session_id="s-1")
    mem.process_pending()
    repeat = {**TALK[2], "id": "m9", "content": TALK[2]["content"].rstrip(".")}
    mem.observe([repeat], session_id="s-2")
    done = mem.process_pending()
    assert (done.memories, done.merged) == (0, 1)
    (chunk,) = mem.list_memories().items
    assert chunk.encounter_count == 2 and chunk.source_ids == ["m2", "m9"]


def _llm(*replies: object) -> FakeLLM:
    return FakeLLM(script=[r if isinstance(r, (str, Exception)) else json.dumps(r) for r in replies])


def test_with_an_llm_the_gate_decides_and_the_extractor_writes(make_mem):
    extraction = {"memories": [
        {"content": "Kris ships the billing service on Fridays after QA sign-off", "importance": 4,
         "memory_type": "decision", "topic_tags": ["Billing", "release"], "sources": [2]},
        {"content": "Kris's daughter Mia starts school in Lisbon in September 2024", "importance": 3,
         "memory_type": "fact", "topic_tags": ["family"], "sources": [4]}]}
    llm = _llm({"remember": True, "reason": "decision and family"}, extraction)
    mem = make_mem(llm=llm)
    mem.observe(TALK, session_id="s-1")
    done = mem.process_pending()
    assert (done.memories, done.facts) == (1, 1) and [c.purpose for c in done.llm_calls] == [
        "capture-gate", "capture-extract"]
    assert "Memories already stored" in llm.calls[1]["messages"][0].content  # the dedup context
    memory, fact = sorted(mem.list_memories().items, key=lambda c: c.kind, reverse=True)
    assert (memory.kind, memory.running_intensity, memory.metadata["tags"]) == ("memory", 0.8, ["billing", "release"])
    assert memory.source_ids == ["m2"] and memory.metadata["memory_type"] == "decision"
    assert (fact.kind, fact.source, fact.session_id, fact.source_ids) == ("fact", "conversation", "s-1", ["m4"])


def test_the_gate_saying_no_writes_nothing_and_spends_no_extraction(make_mem):
    llm = _llm({"remember": False, "reason": "small talk"})
    mem = make_mem(llm=llm)
    mem.observe(TALK, session_id="s-1")
    done = mem.process_pending()
    assert (done.gated_in, done.memories, len(llm.calls)) == (0, 0, 1)
    assert mem.process_pending().messages == 0


def test_malformed_llm_output_is_retried_then_reported_and_nothing_is_lost(make_mem):
    llm = _llm("yes, remember it", "still not json")
    mem = make_mem(llm=llm)
    mem.observe(TALK, session_id="s-1")
    with pytest.raises(ProviderError, match="after a retry"):
        mem.process_pending()
    llm.push(json.dumps({"remember": False}))
    assert mem.process_pending().messages == 4  # still pending after the failure, processed now


def test_windows_hold_about_500_tokens_with_100_of_overlap():
    said = [Observed(n, f"m{n}", "user", None, " ".join(["alpha beta gamma delta"] * 10), None) for n in range(1, 41)]
    cut = windows([], said, 500, 100)
    assert len(cut) > 3 and [m.seq for w in cut for m in w.new] == list(range(1, 41))  # each message once
    from hippo.core.tokens import count_tokens

    for first, second in zip(cut, cut[1:]):
        size = sum(count_tokens([f"user: {m.content}" for m in [*second.context, *second.new]]))
        lead = sum(count_tokens([f"user: {m.content}" for m in second.context]))
        assert size <= 500 and 0 < lead <= 100 and second.context[-1] == first.new[-1]


def test_two_processors_at_once_write_each_window_once(make_mem):
    slow = FakeLLM(script=[lambda *_: (time.sleep(0.3), json.dumps({"remember": True}))[1],
                           json.dumps({"memories": [{"content": "Billing ships on Fridays", "importance": 3,
                                                     "memory_type": "decision", "sources": [2]}]})])
    fast = _llm({"remember": True}, {"memories": [{"content": "Billing ships on Fridays only", "importance": 3,
                                                    "memory_type": "decision", "sources": [2]}]})
    first, second = make_mem(llm=slow), make_mem(llm=fast)
    first.observe(TALK, session_id="s-1")
    results = []
    runner = threading.Thread(target=lambda: results.append(first.process_pending()))
    runner.start()
    time.sleep(0.05)
    results.append(second.process_pending())
    runner.join()
    assert sorted(r.messages for r in results) == [0, 4]  # one of them wrote, the other nothing
    assert len(first.list_memories().items) == 1


def test_forget_and_delete_all_reach_the_inbox(make_mem, db):
    mem = make_mem(llm=_llm({"remember": False}))
    mem.observe([{"role": "user", "content": f"My bank PIN is {SECRET}", "id": "x1"}], session_id="s-1")
    assert total(occurrences(db)) > 0
    result = mem.forget_memory(SECRET)
    assert result.messages == 1
    scrub(mem)
    assert total(occurrences(db)) == 0
    mem.observe(TALK, session_id="s-2")
    assert mem.delete_all().memories == 0
    assert sql(db, "SELECT count(*) FROM observed_messages")[0][0] == 0


def test_agents_never_see_each_others_inbox(make_mem):
    alice, bob = make_mem("alice"), make_mem("bob")
    alice.observe(TALK, session_id="shared-name")
    assert bob.process_pending().messages == 0 and bob.stats().memories == 0
    assert alice.process_pending().messages == 4


def test_a_processor_killed_mid_window_loses_nothing_and_repeats_nothing(db, make_mem, tmp_path):
    """Must-show 3: two processes. The first is killed (SIGKILL) while its LLM is thinking about a
    window; the second then processes everything, each acknowledged message exactly once."""
    import os
    import signal
    import subprocess
    import sys
    import textwrap

    talk = [{"role": "user", "content": f"Release note {n}: the widget service gained feature {n} for customers",
             "id": f"r{n}", "name": "Kris"} for n in range(30)]
    ready = tmp_path / "thinking"
    code = textwrap.dedent(f"""
        import json, pathlib, time, hippo
        from hippo.providers.fake import FakeLLM
        def slow(*_):
            pathlib.Path({str(ready)!r}).write_text("x")
            time.sleep(60)
        mem = hippo.open({db!r}, agent_id="alice", embedder="fake", llm=FakeLLM(script=[slow]))
        print(mem.observe({talk!r}, session_id="s-k").accepted, flush=True)
        mem.process_pending()
    """)
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline().strip() == "30"  # acknowledged
    deadline = time.monotonic() + 60
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    keep_all = [json.dumps({"remember": True}), lambda system, messages: json.dumps({"memories": [
        {"content": line.split(") ", 1)[1], "importance": 3, "memory_type": "project", "sources": [n]}
        for n, line in enumerate(messages[0].content.split("<<<\n", 1)[1].splitlines(), start=1)
        if line.startswith("[") and "earlier" not in line]})]
    second = make_mem(llm=FakeLLM(script=keep_all * 10))
    done = second.process_pending()
    assert done.messages == 30
    sources = [i for c in second.list_memories(limit=100).items for i in c.source_ids]
    assert sorted(sources) == sorted(m["id"] for m in talk)  # every message once, none twice
    assert second.process_pending().messages == 0
