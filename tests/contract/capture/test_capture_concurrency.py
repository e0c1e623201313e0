"""Capture beside other writers (issue 32): the model's work (embedding, the near-duplicate search)
happens before the write transaction, so an ``observe`` in another process never waits for it, and
what was decided before the transaction is checked again inside it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import hippo
from hippo.core.memories import writer
from hippo.providers.fake import FakeEmbedder

TALK = [{"role": "user", "content": f"Release note {n}: the widget service gained feature {n} for customers",
         "id": f"r{n}", "name": "Kris"} for n in range(30)]


def _processor(db: str, embedding: Path, release: Path) -> subprocess.Popen:
    """A process that observes TALK and processes it with an embedder that, on its first batch of
    documents, says so and waits for ``release`` (the model's seconds, stretched at will)."""
    code = textwrap.dedent(f"""
        import pathlib, time, hippo
        from hippo.providers.fake import FakeEmbedder

        class Slow(FakeEmbedder):
            def embed_documents(self, texts):
                if texts and not pathlib.Path({str(embedding)!r}).exists():
                    pathlib.Path({str(embedding)!r}).write_text("x")
                    deadline = time.monotonic() + 60
                    while not pathlib.Path({str(release)!r}).exists() and time.monotonic() < deadline:
                        time.sleep(0.02)
                return super().embed_documents(texts)

        mem = hippo.open({db!r}, agent_id="alice", embedder=Slow())
        print(mem.observe({TALK!r}, session_id="s-1").accepted, flush=True)
        done = mem.process_pending()
        print(done.messages, done.memories, flush=True)
    """)
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)


def test_observe_does_not_wait_for_another_process_embedding_a_batch(db, clock, tmp_path):
    """The processor in another process is held inside its model call for as long as the test likes:
    an observe of the same agent answers meanwhile (it got ``database is locked`` after 5 s on
    SQLite, and waited for the model on PostgreSQL), and each message is still processed once."""
    embedding, release = tmp_path / "embedding", tmp_path / "release"
    child = _processor(db, embedding, release)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "30"
        deadline = time.monotonic() + 60
        while not embedding.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert embedding.exists(), "the processor never reached its model"
        mem = hippo.open(db, agent_id="alice", embedder=FakeEmbedder(), clock=clock)
        outcome: list[object] = []

        def observe() -> None:
            try:
                outcome.append(mem.observe([{"role": "user", "id": "late", "content":
                                             "Kris moved the widget service's on-call rota to Mondays"}],
                                           session_id="s-2").accepted)
            except Exception as exc:  # the failure itself is what the test reports
                outcome.append(exc)

        side = threading.Thread(target=observe)
        side.start()
        side.join(timeout=3)  # seconds: the model is held until release, so this is not a race
        answered_while_embedding = not side.is_alive()
    finally:
        release.write_text("x")
    side.join(timeout=30)
    assert child.stdout.readline().split() == ["30", "30"] and child.wait(timeout=30) == 0
    assert answered_while_embedding, "observe waited for the other process's model"
    assert outcome == [1], outcome
    done = mem.process_pending()
    assert (done.messages, done.memories) == (1, 1)  # the late message, once; the 30 were not redone
    assert mem.process_pending().messages == 0
    mem.close()


def test_a_near_twin_that_changed_before_the_transaction_is_not_strengthened(db, clock):
    """The writer decides near-duplicates before its transaction; inside it, a twin deleted or
    superseded meanwhile is no longer strengthened: the new memory is stored on its own."""
    mem = hippo.open(db, agent_id="alice", embedder=FakeEmbedder(), clock=clock)
    held = mem.store_memory("Kris ships the billing service on Fridays only after QA sign-off").id
    gone = mem.store_memory("The staging database moves to the Frankfurt region in March").id
    inputs = [writer.check(writer.MemoryInput(text, source="conversation"), max_chars=10_000) for text in
              ("Kris ships the billing service on Fridays only, after QA sign-off",
               "The staging database moves to the Frankfurt region in March.")]
    prepared = writer.prepare(mem.agent_context.store, mem.embedding, inputs, merge_near=True)
    assert sorted(prepared.near.values()) == sorted([held, gone])  # both were near twins when looked at
    mem.delete_memory(gone)
    with mem.store.transaction():
        results = writer.apply(mem.agent_context.store, prepared, clock())
    assert [r.action for r in results] == ["strengthened", "inserted"]
    assert results[0].id == held and results[1].id != gone
    mem.close()
