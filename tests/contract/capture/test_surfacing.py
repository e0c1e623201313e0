"""Seed 002's surfacing over any store, with the real local model: a scripted 50-turn session is
never over budget, never shown the same memory twice, and small talk surfaces nothing."""

from __future__ import annotations

import pytest

from hippo.core.tokens import count_tokens
from hippo.errors import InvalidInput

NOTES = [
    "The billing service deploys on Fridays only, after QA sign-off",
    "Kris's daughter Mia starts school in Lisbon in September",
    "The staging database is PostgreSQL 16 on two nodes in Frankfurt",
    "Kris is allergic to peanuts and avoids Thai takeaway",
    "The mobile app release train leaves every second Tuesday",
    "Our on-call rotation changes on Monday mornings at 9",
    "The design system uses the Inter typeface and an 8 px grid",
    "Kris prefers tea over coffee and drinks it without sugar",
    "The search cluster was migrated from Elasticsearch to OpenSearch in March",
    "The marketing site is built with Astro and hosted on Netlify",
]
TOPICS = [
    "When can we deploy the billing service this week?",
    "Mia is nervous about her new school, any tips?",
    "Which PostgreSQL version runs on staging?",
    "Should I order Thai food for the team lunch?",
    "When does the next mobile release go out?",
    "Who is on call next week and when does it switch?",
    "What font does our design system use?",
    "Can you make me a coffee?",
    "How did the OpenSearch migration go?",
    "Where is the marketing site hosted?",
]
SMALL_TALK = ["thanks!", "ok", "great", "haha", "cool, thanks", "sure", "nice", "got it", "bye", "hello"]


@pytest.fixture
def noted(make_mem, local_embedder):
    mem = make_mem(embedder=local_embedder)
    mem.store_memories(NOTES)
    return mem


def _session() -> list[dict]:
    """50 turns: a topical question, the assistant's answer, then some small talk, again and again."""
    turns: list[dict] = []
    for n in range(50):
        if n % 5 == 0:
            turns.append({"role": "user", "content": TOPICS[(n // 5) % len(TOPICS)]})
        elif n % 5 == 1:
            turns.append({"role": "assistant", "content": "Let me check what I know about that."})
        else:
            turns.append({"role": "user", "content": SMALL_TALK[n % len(SMALL_TALK)]})
    return turns


def test_a_50_turn_session_is_within_budget_never_repeats_and_ignores_small_talk(noted):
    budget, shown, talk = 60, [], _session()
    for n in range(1, len(talk) + 1):
        found = noted.surface(talk[:n], session_id="s-50", max_tokens=budget)
        assert found.tokens <= budget and count_tokens([found.text])[0] <= budget
        newest = talk[n - 1]
        if newest["role"] == "user" and newest["content"] in SMALL_TALK:
            assert found.text == "" and found.hits == []
        for hit in found.hits:
            assert f"[id:{hit.id}]" in found.text
        shown += [h.id for h in found.hits]
    assert len(shown) == len(set(shown))  # never the same memory twice in the session
    assert len(shown) >= 6  # most topics found their note
    contents = {noted.get_memory(i).content for i in shown}
    assert NOTES[0] in contents and NOTES[8] in contents


def test_what_a_session_was_shown_is_kept_in_the_database(noted, make_mem, local_embedder):
    ask = [{"role": "user", "content": TOPICS[0]}]
    first = noted.surface(ask, session_id="s-1")
    assert [h.content for h in first.hits][:1] == [NOTES[0]]
    other = make_mem(embedder=local_embedder)  # another process, or a restart
    assert NOTES[0] not in [h.content for h in other.surface(ask, session_id="s-1").hits]
    assert NOTES[0] in [h.content for h in other.surface(ask, session_id="s-2").hits]  # a new session


def test_what_the_session_just_said_is_not_offered_back(noted):
    """Captured after every reply (Claude Code's hooks), the last turn is already a memory: offered
    back, it would say again what the conversation shows, and its words, the query's own, would
    crowd out the older memory the prompt is about."""
    said = [{"role": "user", "id": "u-7", "content": "Write the release checklist for the billing service."},
            {"role": "assistant", "id": "a-7", "content": "Here is the billing release checklist: run the "
                                                          "migrations, tag the release, deploy."}]
    noted.observe(said, session_id="s-echo")
    assert noted.process_pending().memories >= 1
    echoes = {m.id for m in noted.list_memories(limit=50).items if m.session_id == "s-echo"}
    ask = [*said, {"role": "user", "content": "Which day of the week can we ship the billing release?"}]
    found = noted.surface(ask, session_id="s-echo")
    assert NOTES[0] in [h.content for h in found.hits] and not echoes & {h.id for h in found.hits}
    elsewhere = noted.surface(ask, session_id="s-other")  # message ids are a session's own: no echo there
    assert echoes & {h.id for h in elsewhere.hits}


def test_nothing_is_surfaced_when_nothing_is_relevant(noted):
    found = noted.surface([{"role": "user", "content": "What is the capital of Mongolia and its population?"}],
                          session_id="s-x")
    assert (found.text, found.hits, found.tokens) == ("", [], 0)


def test_bad_surface_input_is_refused(noted):
    for kwargs in [dict(session_id=None), dict(session_id="s", max_tokens=5), dict(session_id="s", max_tokens="9")]:
        with pytest.raises(InvalidInput):
            noted.surface([{"role": "user", "content": TOPICS[0]}], **kwargs)
