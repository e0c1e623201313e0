"""Recall with the real local model (all-MiniLM-L6-v2): meaning and rare tokens."""

from __future__ import annotations

import itertools

import pytest

import hippo
from hippo.core.ports import ChunkFilter, SearchQuery

pytest.importorskip("onnxruntime")


@pytest.fixture
def local_mem(db, local_embedder):
    with hippo.open(db, agent_id="alice", embedder=local_embedder) as mem:
        yield mem


def test_meaning_wins_over_words(local_mem):
    """Seed 002's criterion: 'WiFi issue' finds the network memory though no word is shared."""
    local_mem.store_memories([
        "We spent two hours on network configuration problems in the office.",
        "The quarterly report is due on Friday and needs the revenue numbers.",
        "Alice adopted a golden retriever puppy named Biscuit.",
        "Our team switched the CI pipeline from Jenkins to GitHub Actions.",
        "Bob prefers window seats on long-haul flights.",
        "Remember to water the ferns every Tuesday.",
    ])
    recall = local_mem.recall_memories("WiFi issue", limit=3)
    assert recall.mode == "hybrid"
    assert recall[0].content.startswith("We spent two hours on network configuration problems")
    assert recall[0].keyword is None  # found by meaning alone
    assert all(recall[0].similarity > hit.similarity for hit in recall.hits[1:])


DECISIONS = [
    "The staging database password rotation happens every 90 days",
    "The team decided to use SQLite instead of PostgreSQL for the prototype",
    "Sometimes two workers pick up the same job from the queue",
    "The dashboard loads slowly on Mondays",
    "Alice is on call this week",
    "Deploys to production need two approvals",
    "We moved the office plants to the kitchen",
    "Database backups run nightly at 2am",
    "The API rate limit is 100 requests per minute",
    "Bob prefers tabs over spaces",
    "The design review is on Thursday",
    "Our CI runs on GitHub Actions",
    "We pick a new team lunch spot every Friday",
    "The mobile app uses React Native",
    "Customer support hours are 9 to 5",
]


def test_a_small_store_ranks_its_answer_by_meaning_not_by_one_shared_word(db, local_embedder):
    """Issue 47: over fifteen memories, "which database did we pick?" shares "database" and "pick"
    with four memories that do not answer it; the decision that does shares no word. A store this
    small gives keyword statistics nothing to tell (keyword_trust, the default), so meaning ranks
    it; with the keyword side at its configured weight, one shared word outranks it."""
    def first(**settings):
        with hippo.open(db, agent_id="team", embedder=local_embedder, **settings) as mem:
            if not mem.stats().memories:
                ids.update({mem.store_memory(text).id: text for text in DECISIONS})
            return mem.recall_memories("which database did we pick?", limit=5, touch=False)[0]

    ids: dict[str, str] = {}
    trusted = first()
    assert ids[trusted.id] == "The team decided to use SQLite instead of PostgreSQL for the prototype"
    assert trusted.keyword is None and trusted.similarity > 0.3
    assert ids[first(keyword_trust=False).id] != ids[trusted.id]
    with hippo.open(db, agent_id="team", embedder=local_embedder) as mem:
        code = mem.store_memory("Ticket 4471 tracks the flaky login test")
        assert mem.recall_memories("4471", limit=1, touch=False)[0].id == code.id  # an identifier keeps it


def test_rare_token_found_by_keyword_when_vectors_miss_it(local_mem):
    codes = sorted({"XR-" + "".join(p) for p in itertools.permutations("7731")} - {"XR-7731"})
    local_mem.store_memories([f"Part {code} is back in stock." for code in codes])
    target = (
        "Last winter the shipment labelled XR-7731 held the replacement grinder for the espresso "
        "machine in the office kitchen, which Dana unpacked."
    )
    stored = local_mem.store_memory(target)

    # The premise: by vectors alone the target is not even in the top 5.
    vector = local_mem.embedding.query("XR-7731")
    found = local_mem.store.search("alice", SearchQuery(vector, (), ChunkFilter(), 20)).similarity
    by_vector = sorted(found, key=found.get, reverse=True)
    assert by_vector.index(stored.id) >= 5

    recall = local_mem.recall_memories("XR-7731", limit=3)
    assert recall[0].id == stored.id
    assert recall[0].keyword == 1.0


def test_local_model_recorded_and_other_model_refused(db, local_embedder):
    path = db
    with hippo.open(path, agent_id="alice", embedder=local_embedder) as mem:
        mem.store_memory("The office plants need water on Tuesdays.")
    with pytest.raises(hippo.EmbedderMismatch, match="reembed"):
        hippo.open(path, agent_id="alice", embedder="fake")
