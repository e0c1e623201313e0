"""Recall's retrieval event written behind the answer (hippo.stores.retrievals): the same counts,
intensity, links and daily counters as recall writing each event itself, seen by every read that
follows, written at close and at a normal exit, lost only with a killed process; and links that
stay weak fade."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from support import sql

import hippo
from hippo.core.curation.rules import LINK_FADE

TEXTS = ["The payment API signs every request with HMAC", "New clients get API credentials at onboarding",
         "The API gateway rate-limits per client", "Tomatoes need six hours of sun",
         "The staging database restarts nightly", "The API changelog lives in the wiki"]
QUERIES = ["payment API request", "API credentials", "staging database", "API gateway clients", "payment API"]


def _state(mem, db, agent: str) -> tuple:
    """What the retrieval events left, by text, read through the memory (which writes the queue)."""
    chunks = [mem.get_memory(c.id) for c in mem.list_memories(limit=100).items]
    text = {c.id: c.content for c in chunks}
    counts = sorted((c.content, c.access_count, round(c.running_intensity, 9), c.last_accessed_at) for c in chunks)
    links = sorted((text[c.id], x.chunk.content, x.kind, x.strength) for c in chunks for x in mem.related(c.id))
    daily = sql(db, "SELECT name, value FROM agent_daily WHERE agent_id = ? AND name IN ('retrievals', 'recalls') "
                    "ORDER BY name", (agent,))
    return counts, links, [(name, int(value)) for name, value in daily]


def _outside(db, agent: str) -> int:
    """Access counts as another process reads them (what is written, not what is queued)."""
    return int(sql(db, "SELECT coalesce(sum(access_count), 0) FROM chunks WHERE agent_id = ?", (agent,))[0][0])


def test_written_behind_leaves_what_each_recall_writing_itself_left(make_mem, db, clock):
    start, states = clock(), []
    for agent, delay in (("alice", 0), ("bob", 30)):
        clock.set(start)
        mem = make_mem(agent, retrieval_delay=delay)
        mem.store_memories(TEXTS)
        for query in QUERIES * 2:
            mem.recall_memories(query, limit=4)
            clock.advance(minutes=1)
        states.append(_state(mem, db, agent))
    at_once, behind = states
    assert any(count for _, count, _, _ in at_once[0]) and any(s >= 2.0 for *_, s in at_once[1]) and at_once[2]
    assert behind == at_once


def test_every_read_after_a_recall_sees_its_event_and_recalls_do_not_wait(make_mem, db):
    mem = make_mem("alice", retrieval_delay=30)
    ids = [c.id for c in mem.store_memories(TEXTS[:3])]
    mem.recall_memories("API", limit=3)
    mem.recall_memories("API client", limit=3)
    assert _outside(db, "alice") == 0  # queued: the two recalls wrote nothing yet
    assert sum(mem.get_memory(i).access_count for i in ids) == 6  # the read wrote the queue first
    assert _outside(db, "alice") == 6
    assert [x.strength for x in mem.related(ids[0])] == [2.0, 2.0]


@pytest.mark.embedded_only("closes the memory: a client's close ends its connections, the server's memory stays open")
def test_the_queue_is_written_at_close(make_mem, db):
    mem = make_mem("alice", retrieval_delay=30)
    mem.store_memories(TEXTS[:2])
    mem.recall_memories("API", limit=2)
    assert _outside(db, "alice") == 0
    mem.close()
    assert _outside(db, "alice") == 2
    assert sql(db, "SELECT strength FROM chunk_links WHERE agent_id = 'alice'") == [(1.0,)]


def test_a_weak_link_fades_a_strong_one_stays(mem, clock):
    a, b, c, d, _ = (mem.store_memory(t).id for t in ("Zeppelin ships in March", "Zeppelin needs a logo",
                                                       "Ledger closes on Friday", "Ledger audit in May",
                                                       "Tomatoes need sun"))
    mem.recall_memories("Zeppelin", limit=2)  # a weak link: one recall
    for _ in range(2):
        mem.recall_memories("Ledger", limit=2)  # a strong one
    assert [x.chunk.id for x in mem.related(a)] == [b]
    clock.advance(days=LINK_FADE.days - 1)
    mem.recall_memories("Tomatoes", limit=1)  # a recall writes, and prunes what faded: nothing yet
    assert [x.chunk.id for x in mem.related(a)] == [b]
    clock.advance(days=2)
    mem.recall_memories("Tomatoes", limit=1)
    assert mem.related(a) == [] and [(x.chunk.id, x.strength) for x in mem.related(c)] == [(d, 2.0)]


def test_past_the_cap_the_weak_links_recalled_longest_ago_go(db, embedder, clock):
    with hippo.open(db, agent_id="alice", embedder=embedder, clock=clock, retrieval_delay=0) as mem:
        ids = [mem.store_memory(f"Note {n}: the {w} report").id for n, w in enumerate(["red", "blue", "green"])]
        for pair in ((0, 1), (1, 2), (0, 2)):
            mem.store.strengthen_links("alice", [tuple(sorted((ids[pair[0]], ids[pair[1]])))], "co_recall", clock())
            clock.advance(hours=1)
        assert mem.store.prune_links("alice", before=clock() - LINK_FADE, keep=1) == 2
        assert sql(db, "SELECT a, b FROM chunk_links WHERE agent_id = 'alice'") == [tuple(sorted((ids[0], ids[2])))]


@pytest.mark.parametrize("ending", ["killed", "exits"])
def test_a_killed_process_loses_its_queue_a_normal_exit_writes_it(mem, db, clock, ending):
    ids = [c.id for c in mem.store_memories(TEXTS[:3])]
    mem.close()
    last = "os.kill(os.getpid(), signal.SIGKILL)" if ending == "killed" else "pass  # no close: the exit writes"
    script = textwrap.dedent(f"""
        import os, signal, hippo
        from datetime import datetime
        from hippo.providers.fake import FakeEmbedder
        mem = hippo.open({str(db)!r}, agent_id="alice", embedder=FakeEmbedder(), retrieval_delay=30,
                         clock=lambda: datetime.fromisoformat({clock().isoformat()!r}))
        for _ in range(3):
            assert len(mem.recall_memories("API", limit=3).hits) == 3
        {last}
        """)
    done = subprocess.run([sys.executable, "-c", script], timeout=120, capture_output=True, text=True)
    assert done.returncode == (-9 if ending == "killed" else 0), done.stderr
    assert _outside(db, "alice") == (0 if ending == "killed" else 9)
    assert len(sql(db, "SELECT id FROM chunks WHERE agent_id = 'alice'")) == len(ids)  # memories are never lost
