"""Relevance where users start (issue 47), with the real local model: the latest word on a changing
fact, the decision after the discussion, a name that means the user, a date counted back from the
question, and a strong memory that does not match never outranking a weak one that does."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

import hippo
from hippo.core.recall.later import asks_about_the_past, changes, leaves_open
from hippo.core.recall.names import as_the_user, user_name

pytest.importorskip("onnxruntime")

JAN, MAR = (datetime(2026, m, d, 10, tzinfo=timezone.utc) for m, d in ((1, 10), (3, 20)))
NOW = datetime(2026, 4, 14, 18, tzinfo=timezone.utc)  # a Tuesday


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def opened(db, local_embedder):
    clock = Clock()

    def open_(agent: str, **settings):
        return hippo.open(db, agent_id=agent, embedder=local_embedder, clock=clock, **settings)

    return open_


def first(mem, query: str) -> str:
    return mem.recall_memories(query, touch=False)[0].content


PHONES = [("User's mobile number is 07700 900123", JAN), ("User uses WhatsApp more than SMS", JAN),
          ("User's work extension is 4417", JAN), ("User's email is ines.b@protonmail.com", JAN),
          ("User now lives in Porto", MAR), ("User switched to a standing desk", MAR),
          ("User's new mobile number is 07700 900456 after switching to Giffgaff", MAR)]


def test_the_latest_word_on_a_changing_fact_ranks_first(opened):
    with opened("ines") as mem:
        for text, when in PHONES:
            mem.store_memory(text, observed_at=when)
        assert first(mem, "what's my current phone number?") == PHONES[-1][0]
        past = [h.id for h in mem.recall_memories("what was my old phone number?", touch=False)]
        hits = mem.recall_memories("what's my phone number?", touch=False).hits
        later = hits[0]
        assert later.score == pytest.approx((later.relevance + later.context)
                                            * (0.6 + 0.3 * later.effective_strength + 0.1 * later.recency))
        assert hits[1].content == PHONES[0][0]  # the earlier word stays, just below
        # a later memory on another subject, however it says it changed, stays where it ranks
        assert first(mem, "what's my email address?") == "User's email is ines.b@protonmail.com"
        assert "Porto" not in " ".join(h.content for h in hits[:2])
    with opened("ines", prefer_later=False) as mem:
        assert first(mem, "what's my current phone number?") == PHONES[0][0]
        # a question about the past keeps the order as it was
        assert [h.id for h in mem.recall_memories("what was my old phone number?", touch=False)] == past


def test_the_decision_outranks_the_discussion_that_led_to_it(opened):
    with opened("team") as mem:
        for text, days in [("Hamid is building the prototype's API", 0), ("The prototype will be hosted on Fly.io", 3),
                           ("Team debated SQLite versus Postgres for the prototype's storage", 30),
                           ("Team chose Postgres for the prototype so it matches production", 37),
                           ("Design mockups are in Figma", 40)]:
            mem.store_memory(text, observed_at=JAN + timedelta(days=days))
        assert first(mem, "are we using SQLite or Postgres for the prototype?").startswith("Team chose Postgres")


def test_a_name_that_means_the_user(opened):
    """The issue's second example, through the mem0 drop-in's scope: "User is Alice" matched the
    name and ranked above the allergy."""
    with opened("user:alice") as mem:
        for text in ["User is Alice", "User lives in Lisbon", "User is allergic to peanuts", "User works as a nurse",
                     "User has a cat called Miso", "User's sister is called Marta"]:
            mem.store_memory(text)
        assert first(mem, "what food should alice avoid?") == "User is allergic to peanuts"
        assert first(mem, "where does alice live?") == "User lives in Lisbon"
        assert first(mem, "what is alice's name?") == "User is Alice"  # asking for the name keeps it


def test_a_day_counted_back_from_the_question(opened):
    with opened("wine") as mem:
        for text, when in [("User liked a Sancerre from Domaine Vacheron at the Oyster Bar", datetime(2026, 4, 6)),
                           ("User enjoyed a 2020 Rioja Reserva from Muga at Casa Lola", datetime(2026, 4, 10)),
                           ("User loved the Malbec at Gaucho", datetime(2026, 3, 31))]:
            mem.store_memory(text, observed_at=when.replace(hour=22, tzinfo=timezone.utc))
        # asked on Tuesday 14 April: last Friday is the 10th, two weeks ago about the 31st of March
        assert first(mem, "which wine did I like last Friday?").startswith("User enjoyed a 2020 Rioja")
        assert first(mem, "which wine did I like at dinner two weeks ago?").startswith("User loved the Malbec")
        assert not first(mem, "which wine did I like?").startswith("User enjoyed a 2020 Rioja")


def test_strength_never_lifts_a_clear_non_match(opened):
    with opened("strong") as mem:
        mem.store_memory("User is vegetarian", intensity=1.0)
        for _ in range(5):  # recalled often: its strength stays at the top
            assert mem.recall_memories("is the user vegetarian?", limit=1)[0].content == "User is vegetarian"
        mem.store_memory("User lives in Lisbon now", intensity=0.2)
        hits = mem.recall_memories("where does the user live?", touch=False).hits
        assert hits[0].content == "User lives in Lisbon now"
        assert hits[1].effective_strength > 4 * hits[0].effective_strength


@pytest.mark.parametrize("text, expected", [
    ("User's new mobile number is 07700 900456", True), ("Team chose Postgres", True),
    ("The launch was pushed back to 4 June", True), ("User is no longer vegan", True),
    ("User's mobile number is 07700 900123", False), ("Team debated SQLite versus Postgres", False),
])
def test_what_says_it_changes(text, expected):
    assert changes(text) is expected


def test_what_leaves_a_choice_open_and_what_asks_about_the_past():
    assert leaves_open("User and Dev are choosing between Lisbon and Porto")
    assert leaves_open("Team compared Linear, Jira and Notion")
    assert not leaves_open("Flights to Porto are booked")
    assert asks_about_the_past("what did I use to drink?") and asks_about_the_past("my previous address")
    assert not asks_about_the_past("what's my address?") and not asks_about_the_past("how old is Mia now?")
    assert asks_about_the_past("what was my old phone number?")


def test_the_users_name_is_read_from_an_identity_memory():
    assert user_name(["User likes tea", "User is Alice"]) == "Alice"
    assert user_name(["My name is Ana Souza."]) == "Ana Souza"
    assert user_name(["User is vegetarian", "I am tired"]) is None
    assert as_the_user("what food should alice avoid?", "Alice") == "what food should the user avoid?"
    assert as_the_user("where is Ana's office?", "Ana Souza") == "where is the user's office?"
    assert as_the_user("what is alice's name?", "Alice") is None
    assert as_the_user("where does bob live?", "Alice") is None


THREAD = [
    ("user", "We keep getting duplicate invoice emails when the worker retries. What should we do?"),
    ("assistant", "The send job is retried after a timeout, and nothing records that the email already went out."),
    ("user", "Decision: we store a send key per invoice and skip any send whose key is already recorded."),
    ("user", "Also, the invoice PDF footer still shows last year's address."),
]


def test_the_decision_is_surfaced_before_the_question_that_opened_the_thread(opened, local_embedder):
    """The issue's third example, through capture and surfacing as the hooks call them."""
    with opened("billing") as mem:
        mem.observe([{"role": role, "id": f"m{n}", "content": text} for n, (role, text) in enumerate(THREAD)],
                    session_id="thread")
        assert mem.process_pending().memories >= 3
        found = mem.surface([{"role": "user", "content": "how were we preventing duplicate sends?"}],
                            session_id="later")
        assert found.hits and found.hits[0].content.startswith("Decision: we store a send key")
