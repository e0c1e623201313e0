"""Surfacing stays quiet (issue 33): over one store that mixes facts, experiences and captured
turns, all written within one hour, prompts about anything else surface nothing. Memories written
in the same hour are not one conversation: none lends another relevance unless they share a
session, and what decides that a memory is worth showing is its own match to the prompt.

The prompts (``data/unrelated_prompts.txt``) were written for this test: everyday questions on
topics the store never mentions. With the real local model, on every backend."""

from __future__ import annotations

from pathlib import Path

import pytest

import hippo
from hippo.core.capture.extract import worth_keeping

pytest.importorskip("onnxruntime")

PROMPTS = [line for line in (Path(__file__).parents[1] / "data" / "unrelated_prompts.txt")
           .read_text(encoding="utf-8").splitlines() if line.strip()]
FACTS = ("I live in Lisbon with my wife Sofia. My daughter Mia is seven. I'm allergic to peanuts. "
         "I work as a backend engineer at Fintrack. My manager is Dana Whitfield. I drive a blue Volvo XC40. "
         "I prefer tea over coffee. My sister Ana lives in Porto.")
EXPERIENCES = [
    ("chat", "Asked how to rotate the API keys"),
    ("error", "Key rotation failed: the vault token had expired"),
    ("decision", "Moved the nightly invoice export from 02:00 to 04:00 UTC"),
    ("task", "Migrated the invoices table to monthly partitions"),
    ("tool-use", "Ran the load test against staging: p95 latency was 420 ms"),
    ("error", "Kafka broker 3 ran out of disk space during the backfill"),
    ("insight", "Retries without jitter caused a thundering herd on the auth service"),
    ("decision", "Chose Grafana Cloud over self-hosted Prometheus for the service dashboards"),
]
SESSIONS = {
    "standup": [
        ("Kris", "We decided to ship billing on Fridays only."),
        ("Dana", "The code freeze for the payments API starts on the 14th."),
        ("Kris", "Ravi takes the on-call pager next week while I am at the conference."),
        ("Dana", "Please write the postmortem for the ledger outage by Thursday."),
    ],
    "offsite": [
        ("Dana", "The team offsite is in Sintra on the second weekend of June."),
        ("Kris", "Book the minibus from the office to Sintra for twelve people."),
        ("Dana", "Two people on the team are vegetarian, so plan the dinner with that in mind."),
    ],
    "support": [
        ("Kris", "A customer in Madrid was charged twice for the annual plan."),
        ("Dana", "The duplicate charge came from a webhook retry; refund it through Stripe."),
        ("Kris", "Add an idempotency key to the webhook handler so retries cannot charge again."),
    ],
}


@pytest.fixture
def mixed(db, clock, local_embedder):
    """Facts, consolidated experiences and captured turns, written minutes apart within one hour."""
    mem = hippo.open(db, agent_id="helper", embedder=local_embedder, clock=clock)
    assert mem.remember_facts(FACTS).facts
    for kind, text in EXPERIENCES:
        mem.record_experience(kind, text)
        clock.advance(minutes=2)
    mem.consolidate()
    for session, turns in SESSIONS.items():
        mem.observe([{"role": "user", "name": who, "id": f"{session}-{n}", "content": text}
                     for n, (who, text) in enumerate(turns)], session_id=session)
        clock.advance(minutes=5)
    assert mem.process_pending().memories == sum(len(t) for t in SESSIONS.values())
    assert len(mem.recall_memories("invoice export Kafka billing Sintra Lisbon", limit=50, touch=False)) >= 10
    yield mem
    mem.close()


def test_unrelated_prompts_surface_nothing(mixed):
    assert len(PROMPTS) >= 200 and len(set(PROMPTS)) == len(PROMPTS)
    assert all(worth_keeping(p) for p in PROMPTS)  # each is a question the small-talk rule lets through
    loud = {}
    for n, prompt in enumerate(PROMPTS):
        found = mixed.surface([{"role": "user", "content": prompt}], session_id=f"quiet-{n}")
        if found.hits:
            loud[prompt] = [(h.content, round(h.relevance, 2)) for h in found.hits]
    assert len(loud) <= 0.02 * len(PROMPTS), loud


def test_related_prompts_still_surface_their_memory(mixed):
    asked = {
        "Can we ship the billing fix today?": "ship billing on Fridays only",
        "Why did the vault key rotation fail?": "vault token had expired",
        "Where is the team offsite this year?": "offsite is in Sintra",
        "A customer says they were charged twice, what happened last time?": "charged twice",
    }
    for n, (prompt, expected) in enumerate(asked.items()):
        found = mixed.surface([{"role": "user", "content": prompt}], session_id=f"asked-{n}")
        assert any(expected in h.content for h in found.hits), (prompt, [h.content for h in found.hits])


def test_the_readme_sequence_surfaces_only_the_billing_decision(db, local_embedder):
    """README.md's experiences example, then its capture example, in one database (issue 33: the
    key-rotation experiences came along, lent relevance by the hour they shared with the decision)."""
    with hippo.open(db, agent_id="helper-ai", embedder=local_embedder) as mem:
        mem.record_experience("chat", "Asked how to rotate the API keys", context={"userId": "u-42", "roomId": "ops"})
        mem.record_experience("error", "Key rotation failed: the vault token had expired", tags=["vault"])
        mem.record_experience("observation", "The ops channel is quiet today")
        mem.consolidate()
        decision = "We decided to ship billing on Fridays only."
        mem.observe([{"role": "user", "name": "Kris", "id": "m1", "content": decision},
                     {"role": "assistant", "id": "m2", "content": "Noted."}], session_id="chat-1")
        assert mem.process_pending().memories == 1
        found = mem.surface([{"role": "user", "content": "Can we ship the billing fix today?"}], session_id="chat-2")
        assert [h.content for h in found.hits] == ["Kris: We decided to ship billing on Fridays only."]
