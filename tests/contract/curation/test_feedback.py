"""Agent feedback (seed 003): reinforce and demote through the tools, and what they do to recall."""

from __future__ import annotations

import json

import pytest
from traces import SECRET, occurrences, scrub, total

from hippo.core.curation import feedback
from hippo.core.strength import ScoreWeights, final_score
from hippo.errors import InvalidInput, NotFound

NOTES = [
    "The payment API signs requests with HMAC SHA256",
    "The payment API retries failed webhooks three times",
    "The payment API rate limit is 100 requests a minute",
    "Lunch on Fridays is at the Thai place",
]


class ScriptedModel:
    """A fake chat model: each turn emits the tool calls its script builds from the last results."""

    def __init__(self, tools) -> None:
        self.tools = tools
        self.turns = 0

    def turn(self, *calls: tuple[str, dict]) -> list[dict]:
        self.turns += 1
        message = {"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{self.turns}_{i}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(args)}} for i, (name, args) in enumerate(calls)]}
        return [json.loads(m["content"]) for m in self.tools.results_for(message)]


def ranked(model: ScriptedModel, query: str) -> list[str]:
    (found,) = model.turn(("recall_memories", {"query": query, "limit": 10}))
    return [m["id"] for m in found["memories"]]


THE_TOOLS = "drives the agent tools: the server runs them on its tools route, hippo.connect does not offer them"


@pytest.mark.embedded_only(THE_TOOLS)
def test_reinforce_and_demote_move_ranks_as_the_formula_says(mem, clock):
    model = ScriptedModel(mem.tools())
    ids = [r["id"] for r in model.turn(*[("store_memory", {"content": text}) for text in NOTES])]
    clock.advance(days=3)
    before = ranked(model, "payment API")
    assert set(before) == set(ids[:3])  # lunch has no relevance to the question
    top, bottom = before[0], before[-1]

    # The model used the last one and found the first stale.
    (up,) = model.turn(("reinforce_memory", {"id": bottom}))
    (down,) = model.turn(("demote_memory", {"id": top}))
    assert (up, down) == ({"ok": True, "id": bottom, "feedback": 3}, {"ok": True, "id": top, "feedback": -1})
    after = ranked(model, "payment API")
    assert after.index(bottom) < before.index(bottom) and after.index(top) > before.index(top)

    # Each score is seed 000's weighted sum times the bounded feedback factor, from the hit's own parts.
    weights = ScoreWeights(mem.settings.weight_relevance, mem.settings.weight_strength, mem.settings.weight_recency)
    for hit in mem.recall_memories("payment API", touch=False):
        expected = feedback.factor(hit.chunk.feedback, hit.relevance)
        assert hit.feedback == pytest.approx(expected)
        assert hit.score == pytest.approx(final_score(hit.relevance + hit.context, hit.effective_strength,
                                                      hit.recency, weights) * expected)
    by_id = {h.id: h for h in mem.recall_memories("payment API", touch=False)}
    assert by_id[bottom].feedback > 1 > by_id[top].feedback
    # Reinforcement restarted the recency clock; demotion did not.
    assert by_id[bottom].recency > by_id[ids[1]].recency
    assert by_id[top].recency == pytest.approx(by_id[ids[1]].recency) or top == ids[1]


@pytest.mark.embedded_only(THE_TOOLS)
def test_no_feedback_count_moves_a_memory_without_relevance_into_the_results(mem):
    model = ScriptedModel(mem.tools())
    ids = [r["id"] for r in model.turn(*[("store_memory", {"content": text}) for text in NOTES])]
    lunch = ids[3]
    model.turn(*[("reinforce_memory", {"id": lunch})] * 20)
    assert mem.get_memory(lunch).feedback == 60
    assert lunch not in ranked(model, "payment API")
    # Where it is relevant it leads, bounded: the factor never passes e (seed 003's +5).
    (hit,) = [h for h in mem.recall_memories("lunch Thai Fridays", touch=False) if h.id == lunch]
    assert 1 < hit.feedback <= feedback.factor(5, 1.0) + 1e-9


def test_feedback_survives_an_update_in_place_and_weights_are_settings(make_mem, db):
    mem = make_mem("alice", reinforce_weight=5, demote_weight=2)
    chunk_id = mem.store_memory(f"The staging password hint is {SECRET}").id
    assert total(occurrences(db)) > 0  # the premise: the text is in the files before the update
    mem.reinforce_memory(chunk_id)
    mem.demote_memory(chunk_id)
    before = mem.get_memory(chunk_id)
    updated = mem.update_memory(chunk_id, content="The staging server is db-3")
    assert (updated.id, updated.feedback, updated.content) == (chunk_id, 3, "The staging server is db-3")
    assert updated.last_accessed_at >= before.last_accessed_at
    assert [h.id for h in mem.recall_memories("staging server db-3", limit=1)] == [chunk_id]
    scrub(mem)
    assert total(occurrences(db)) == 0  # the old text is in no file
    assert all(SECRET not in h.content for h in mem.recall_memories(SECRET))


@pytest.mark.embedded_only(THE_TOOLS)
def test_feedback_on_a_missing_or_foreign_memory_changes_nothing(make_mem):
    alice, bob = make_mem("alice"), make_mem("bob")
    theirs = bob.store_memory("Bob's secret").id
    with pytest.raises(NotFound):
        alice.reinforce_memory(theirs)
    with pytest.raises(InvalidInput):
        alice.demote_memory("not an id")
    assert bob.get_memory(theirs).feedback == 0
    result = alice.tools().call("reinforce_memory", {"id": theirs})
    assert result["ok"] is False and result["error"]["code"] == "not_found"
