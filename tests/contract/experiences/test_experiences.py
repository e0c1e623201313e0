"""Seed 001 over any store: experiences, the short-term buffer, consolidation, recall across both
tiers, recall by context, and per-agent isolation. Seed 001's own test list is marked (seed)."""

from __future__ import annotations

import pytest
from support import sql
from traces import SECRET, occurrences, scrub, total

import hippo
from hippo.errors import InvalidInput


def test_seed_buffer_keeps_the_last_100_of_150(mem):  # (seed) STM ring buffer maintains size limit
    for i in range(150):
        mem.record_experience("observation", f"Observed queue depth reading number {i}")
    recent = mem.short_term()
    assert len(recent) == 100
    assert [e.content for e in recent] == [f"Observed queue depth reading number {i}" for i in range(149, 49, -1)]
    assert all(e.tier == "short_term" and e.importance == 0.4 for e in recent)
    stats = mem.stats()
    assert stats.short_term == 100 and stats.experiences == 0 and stats.memories == 0


def test_seed_consolidation_moves_only_important_experiences(mem):  # (seed)
    low = [mem.record_experience("observation", f"The build log scrolled past line {i}") for i in range(5)]
    mid = mem.record_experience("chat", "The user asked about the weather in Lisbon")  # 0.6: waits
    assert mid.tier == "short_term" and mid.importance == 0.6
    assert mem.stats().experiences == 0
    done = mem.consolidate()
    assert (done.consolidated, done.merged, done.pruned) == (1, 0, 0)
    assert done.remaining == len(low)
    stats = mem.stats()
    assert stats.experiences == 1 and stats.memories == 1 and stats.short_term == len(low)
    (moved,) = mem.recall(types="chat")
    assert moved.tier == "long_term" and moved.content == mid.content and moved.id == done.ids[0]
    assert moved.strength == pytest.approx(0.6)  # importance = starting strength (then the recall's +0.02)
    assert {e.content for e in mem.short_term()} == {e.content for e in low}


def test_an_important_experience_is_consolidated_at_once_most_important_first(mem, clock):
    mem.record_experience("chat", "The user prefers short answers")  # 0.6: waits for a trigger
    clock.advance(minutes=1)
    err = mem.record_experience("error", "Deploy failed: the migration timed out after 30 s")  # 0.9 triggers
    assert err.tier == "long_term" and err.durable and err.importance == 0.9
    assert mem.short_term() == []
    kept = mem.recall()  # no query: the latest observed first
    assert [e.type for e in kept] == ["error", "chat"] and all(e.tier == "long_term" for e in kept)


def test_a_buffer_over_80_percent_full_consolidates(make_mem):
    mem = make_mem(short_term_size=10)
    for i in range(8):
        mem.record_experience("task", f"Ticket {i} needs a second look", importance=0.65)
    assert len(mem.short_term()) == 8  # 80%: not over it yet
    ninth = mem.record_experience("observation", "The coffee machine is empty")
    assert ninth.tier == "short_term"
    assert [e.content for e in mem.short_term()] == ["The coffee machine is empty"]
    assert mem.stats().experiences == 8


def test_seed_recall_merges_both_tiers(mem):  # (seed) Recall merges STM + LTM results
    mem.record_experience("decision", "We picked Kafka for the event bus", tags=["infra"])  # long-term at once
    mem.record_experience("chat", "Kafka retention should be seven days", tags=["infra"])  # short-term
    mem.record_experience("observation", "Kafka broker 3 restarted overnight")  # short-term, no tag
    found = mem.recall(query="Kafka event bus retention", tags=["infra"])
    assert {(e.tier, e.type) for e in found} == {("long_term", "decision"), ("short_term", "chat")}
    assert found[0].relevance >= found[1].relevance > 0
    by_type = mem.recall(types=["decision", "observation"])
    assert [(e.tier, e.type) for e in by_type] == [("short_term", "observation"), ("long_term", "decision")]
    assert [e.type for e in mem.recall(min_importance=0.7)] == ["decision"]


def test_recall_shows_once_what_both_tiers_hold(mem):
    mem.record_experience("insight", "Users churn after the second failed payment")  # 0.85: long-term
    again = mem.record_experience("chat", "Users churn after the second failed payment")  # 0.6: short-term
    assert again.tier == "short_term"
    found = mem.recall()
    assert len(found) == 1 and found[0].tier == "long_term"
    assert mem.consolidate().merged == 1  # the verbatim twin strengthens the memory
    assert mem.stats().memories == 1


def test_a_query_fills_the_limit_when_short_term_entries_repeat_a_long_term_text(mem):
    """Short-term entries whose text long-term memory holds are shown once, as the long-term
    experience, however many of them there are; the limit is still filled, best first."""
    text = "Kafka broker restarted after the disk filled"
    mem.record_experience("insight", text)  # 0.85: long-term at once
    for _ in range(3):
        mem.record_experience("chat", text)  # the same text three times, short-term
    mem.record_experience("chat", "Kafka broker restarted after a network blip")
    mem.record_experience("chat", "Kafka topic compaction finished overnight")
    found = mem.recall(query="Kafka broker restarted disk", limit=3)
    assert [(e.tier, e.content) for e in found][0] == ("long_term", text)
    assert len(found) == 3 and len({e.content for e in found}) == 3
    assert [e.relevance for e in found] == sorted((e.relevance for e in found), reverse=True)


def test_recall_counts_as_a_retrieval_for_long_term_experiences(mem):
    kept = mem.record_experience("decision", "Release trains leave every second Tuesday")
    before = mem.get_memory(kept.id)
    mem.recall(query="release trains")
    after = mem.get_memory(kept.id)
    assert after.access_count == before.access_count + 1 and after.running_intensity > before.running_intensity


def test_recall_related_by_user_room_and_task(mem):
    mem.record_experience("chat", "Asked for the invoice of March", context={"userId": "u-7", "roomId": "billing"},
                          importance=0.9)
    mem.record_experience("chat", "Said thanks", context={"senderId": "u-7", "roomId": "general"})  # short-term
    mem.record_experience("task", "Exported March invoices", context={"task_id": "T-1", "user_id": "u-7"},
                          importance=0.9)
    mem.record_experience("chat", "Another user's question", context={"userId": "u-8"}, importance=0.9)
    assert {e.content for e in mem.recall_related(user_id="u-7")} == {
        "Asked for the invoice of March", "Said thanks", "Exported March invoices"}
    assert [e.content for e in mem.recall_related(user_id="u-7", room_id="billing")] == [
        "Asked for the invoice of March"]
    assert [e.content for e in mem.recall_related(task_id="T-1")] == ["Exported March invoices"]
    with pytest.raises(InvalidInput):
        mem.recall_related()


def test_pruning_drops_old_unimportant_entries_and_keeps_the_rest(mem, clock):
    mem.record_experience("observation", "The lights flickered in the lab")  # 0.4
    mem.record_experience("chat", "Someone mentioned a meetup", importance=0.55)  # kept when old: >= 0.5
    clock.advance(minutes=30)
    mem.record_experience("observation", "A new dataset arrived")
    assert mem.consolidate().pruned == 0  # nothing an hour old yet
    clock.advance(minutes=31)
    done = mem.consolidate()
    assert done.pruned == 1 and done.remaining == 2
    assert {e.content for e in mem.short_term()} == {"Someone mentioned a meetup", "A new dataset arrived"}


def test_consolidation_merges_a_near_duplicate_into_the_memory_held(mem):
    held = mem.store_memory("The staging cluster runs on three nodes in Frankfurt").id
    mem.record_experience("observation", "The staging cluster runs on three nodes in Frankfurt.", importance=0.8)
    stats = mem.stats()
    assert stats.memories == 1 and stats.consolidation["merged"] == 1
    assert mem.get_memory(held).encounter_count == 2
    assert [e.id for e in mem.recall(types="observation")] == [held]


def test_stats_report_seed_memory_stats(mem):
    for i in range(4):
        mem.record_experience("observation", f"Sensor {i} reported nominal")
    mem.record_experience("decision", "Keep sensors on the 5-minute cadence")
    stats = mem.stats().consolidation
    assert stats["recorded"] == 5 and stats["consolidated"] == 1 and stats["runs"] >= 1
    assert stats["consolidation_rate"] == pytest.approx(1 / 5) and stats["capacity"] == 100


def test_bad_experiences_are_refused_and_change_nothing(mem):
    for bad in [dict(type="dream", content="x"), dict(type="chat", content=""),
                dict(type="chat", content="x", importance=1.5), dict(type="chat", content="x", context=["a"]),
                dict(type="chat", content="x", context={"userId": {"nested": 1}}),
                dict(type="chat", content="x", tags="ok", observed_at="yesterday")]:
        with pytest.raises(InvalidInput):
            mem.record_experience(**bad)
    assert mem.short_term() == [] and mem.stats().consolidation["recorded"] == 0
    with pytest.raises(InvalidInput):
        mem.recall(types=["dream"])


def test_tool_use_may_be_spelled_with_an_underscore(mem):
    assert mem.record_experience("tool_use", "Ran the linter").type == "tool-use"


def test_seed_two_agents_never_mix_in_one_database(make_mem):  # (seed) isolated per persona
    alice, bob = make_mem("alice"), make_mem("bob")
    alice.record_experience("decision", "Alice chose the blue theme", context={"userId": "u1"})
    alice.record_experience("chat", "Alice's short-term note", context={"userId": "u1"})
    bob.record_experience("chat", "Bob's short-term note", context={"userId": "u1"})
    assert {e.content for e in bob.recall()} == {"Bob's short-term note"}
    assert {e.content for e in bob.recall(query="Alice blue theme note")} <= {"Bob's short-term note"}
    assert {e.content for e in bob.recall_related(user_id="u1")} == {"Bob's short-term note"}
    assert bob.forget_memory("Alice chose the blue theme").count == 0
    assert len(alice.recall()) == 2


def test_forget_reaches_the_short_term_buffer(make_mem, db):
    mem = make_mem(short_term_durable=True)
    mem.record_experience("chat", f"My locker code word is {SECRET}")
    mem.record_experience("decision", f"Rotate the {SECRET} code word monthly")
    assert total(occurrences(db)) > 0
    result = mem.forget_memory(SECRET)
    assert result.count == 2 and mem.recall() == []
    scrub(mem, result)
    assert total(occurrences(db)) == 0


def test_delete_all_empties_the_buffer_too(make_mem):
    mem = make_mem()
    mem.record_experience("observation", "one")
    mem.record_experience("decision", "two")
    erased = mem.delete_all()
    assert erased.memories == 1 and erased.short_term == 1 and mem.short_term() == [] and mem.recall() == []


def test_a_durable_buffer_survives_a_reopen(make_mem, db):
    first = make_mem(short_term_durable=True)
    entry = first.record_experience("chat", "Remember to water the ficus")
    assert entry.durable
    assert sql(db, "SELECT count(*) FROM short_term")[0][0] == 1
    again = make_mem(short_term_durable=True)
    assert [e.content for e in again.short_term()] == ["Remember to water the ficus"]


def test_long_term_bounds_archive_instead_of_deleting(make_mem, clock):
    mem = make_mem(ltm_max_memories=3)
    for i in range(5):
        mem.record_experience("decision", f"Decision number {i} about the roadmap")
        clock.advance(days=1)
    stats = mem.stats()
    assert stats.memories == 3 and stats.archived == 2 and stats.consolidation["archived"] == 2
    assert {h.chunk.content for h in mem.search_archive("decision roadmap")} == {
        "Decision number 0 about the roadmap", "Decision number 1 about the roadmap"}


def test_faded_experiences_are_archived_below_the_minimum_strength(make_mem, clock):
    mem = make_mem(ltm_min_importance=0.5)
    old = mem.record_experience("task", "Migrated the billing tables", importance=0.7)
    clock.advance(days=400)
    mem.record_experience("error", "The nightly backup failed")
    assert mem.stats().archived == 1
    assert [h.id for h in mem.search_archive("billing tables")] == [old.id]


def test_close_consolidates_what_is_worth_keeping(db, clock, embedder):
    mem = hippo.open(db, agent_id="alice", embedder=embedder, clock=clock)
    mem.record_experience("chat", "The user's dog is called Biscuit")  # 0.6: waiting in the process
    mem.record_experience("observation", "It rained")  # 0.4: not worth keeping
    mem.close()
    mem.close()  # again (a server's shutdown after its owner's): nothing to do, no error
    again = hippo.open(db, agent_id="alice", embedder=embedder, clock=clock)
    try:
        if db.startswith("postgresql"):  # the buffer lives in the database: nothing waits on the process
            assert [e.content for e in again.short_term()] == ["It rained", "The user's dog is called Biscuit"]
        else:  # consolidated on close; the rest was the process's (durable=False said so)
            assert [e.content for e in again.recall()] == ["The user's dog is called Biscuit"]
            assert again.short_term() == []
    finally:
        again.close()


def test_a_process_killed_after_consolidating_counts_what_it_stored(db):
    """Killed (SIGKILL) right after a consolidation wrote its memories: the ``consolidated`` counter
    says what is stored, since it is written in the same transaction."""
    import os
    import signal
    import subprocess
    import sys
    import textwrap

    topics = ["sailing", "pottery", "chess", "baking", "climbing", "violin", "origami", "birding"]
    code = textwrap.dedent(f"""
        import os, signal, hippo
        from hippo.core.experiences import consolidation
        mem = hippo.open({db!r}, agent_id="alice", embedder="fake", short_term_durable=True)
        for topic in {topics!r}:
            mem.record_experience("chat", f"The user took up {{topic}} last spring")  # 0.6: waits
        consolidation.keep_bounds = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)  # after the write
        mem.consolidate()
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGKILL, done.stderr
    with hippo.open(db, agent_id="alice", embedder="fake", short_term_durable=True) as mem:
        stats = mem.stats()
        assert stats.experiences == len(topics) and stats.short_term == 0
        assert stats.consolidation["consolidated"] == len(topics)
        assert mem.memory_summary(days=1).daily["consolidated"] == [len(topics)]
        assert os.path.exists(db) or db.startswith("postgresql")
