"""Recall as of a date: what was current then. A scripted history (a fact superseded twice, a memory
forgotten, a memory strengthened) recalled at five dates, on every backend and through every way in
(``make_mem``: embedded, async and ``hippo.connect``)."""

from __future__ import annotations

import json
import math
from datetime import timedelta

import pytest
from support import START

from hippo.core.strength import strength_after
from hippo.errors import InvalidInput
from hippo.providers.fake import FakeLLM

BLUE, GREEN, YELLOW = ("User's favourite colour is blue", "User's favourite colour is green",
                       "User's favourite colour is yellow")
HIKING, SAILING, CYCLING, SKIING = ("Trip notes: hiking in the Alps", "Trip notes: sailing on the lake",
                                    "Trip notes: cycling by the river", "Trip notes: skiing in the winter")
DAY = timedelta(days=1)


def _facts(text: str) -> str:
    return json.dumps({"facts": [{"fact": text, "intensity": 0.5}]})


SUPERSEDES = json.dumps({"decisions": [{"pair": 1, "label": "SUPERSEDES"}]})


@pytest.fixture
def history(make_mem, clock):
    """Day 0: the colour is blue; three trips noted. Day 10: green. Day 20: the hiking trip forgotten.
    Day 30: yellow, and the sailing trip recalled five times. Day 40: a skiing trip.
    The clock stops at day 45."""
    llm = FakeLLM(script=[_facts(BLUE), _facts(GREEN), SUPERSEDES, _facts(YELLOW), SUPERSEDES])
    mem = make_mem(llm=llm)
    ids = {"blue": mem.remember_facts("blue").facts[0].id}
    for name, text in (("hiking", HIKING), ("sailing", SAILING), ("cycling", CYCLING)):
        ids[name] = mem.store_memory(text).id
    clock.set(START + 10 * DAY)
    ids["green"] = mem.remember_facts("green").facts[0].id
    clock.set(START + 20 * DAY)
    mem.delete_memory(ids["hiking"])
    clock.set(START + 30 * DAY)
    ids["yellow"] = mem.remember_facts("yellow").facts[0].id
    for _ in range(5):
        mem.recall_memories("sailing on the lake", limit=1)
    clock.set(START + 40 * DAY)
    ids["skiing"] = mem.store_memory(SKIING).id
    clock.set(START + 45 * DAY)
    return mem, ids


def test_five_dates_answer_with_what_was_current_then(history):
    mem, ids = history
    assert mem.get_memory(ids["blue"]).superseded_by == ids["green"]
    expected = {  # day: (the colour, the trips, best first)
        -1: ([], []),
        5: ([BLUE], [SAILING, CYCLING]),
        15: ([GREEN], [SAILING, CYCLING]),
        35: ([YELLOW], [SAILING, CYCLING]),
        # the skiing trip, fresh, above cycling, which matches a little better but has faded for 45 days
        45: ([YELLOW], [SAILING, SKIING, CYCLING]),
    }
    for day, (colour, trips) in expected.items():
        when = START + day * DAY
        facts = mem.recall_memories("favourite colour", limit=5, kind="fact", as_of=when)
        assert [h.content for h in facts] == colour, day
        found = mem.recall_memories("Trip notes", limit=5, kind="memory", as_of=when.isoformat())
        assert [h.content for h in found] == trips, day  # hiking: forgotten, at every date
    # Today's recall and a recall as of now agree.
    assert [h.id for h in mem.recall_memories("Trip notes", limit=5, touch=False)] == \
        [h.id for h in mem.recall_memories("Trip notes", limit=5, as_of=START + 45 * DAY)]


def test_strength_and_recency_are_computed_at_the_date(history):
    mem, ids = history
    sailing = mem.get_memory(ids["sailing"])
    assert sailing.access_count == 5 and sailing.running_intensity == pytest.approx(0.6)
    # Day 5: cycling, untouched since day 0, decayed over five days; sailing, touched on day 30, counts
    # its later accesses as made by day 5 (its stored intensity, undecayed: an upper bound).
    hits = {h.id: h for h in mem.recall_memories("Trip notes", limit=5, as_of=START + 5 * DAY)}
    assert hits[ids["cycling"]].effective_strength == pytest.approx(strength_after(0.5, 0, 5 * 24))
    assert hits[ids["sailing"]].effective_strength == pytest.approx(0.6)
    assert hits[ids["cycling"]].recency == pytest.approx(math.exp(-0.05))  # 0.01 a day
    # Day 45: sailing decayed over the fifteen days since its last access.
    now = {h.id: h for h in mem.recall_memories("Trip notes", limit=5, as_of=START + 45 * DAY)}
    assert now[ids["sailing"]].effective_strength == pytest.approx(strength_after(0.6, 5, 15 * 24))
    assert now[ids["cycling"]].effective_strength == pytest.approx(strength_after(0.5, 0, 45 * 24))


def test_a_recall_as_of_a_date_changes_nothing(history):
    mem, ids = history
    before = {i: mem.get_memory(i) for i in (ids["sailing"], ids["cycling"])}
    for _ in range(3):
        assert mem.recall_memories("Trip notes", limit=5, as_of=START + 35 * DAY, touch=True)
    assert {i: mem.get_memory(i) for i in before} == before


def test_fact_history_gives_each_version_its_interval(history):
    mem, ids = history
    found = mem.fact_history(ids["green"])
    assert [v.id for v in found.versions] == [ids["blue"], ids["green"], ids["yellow"]]
    assert [(s.id, s.valid_from, s.valid_until, s.current) for s in found.validity] == [
        (ids["blue"], START, START + 10 * DAY, False),
        (ids["green"], START + 10 * DAY, START + 30 * DAY, False),
        (ids["yellow"], START + 30 * DAY, None, True),
    ]
    assert found.at(START - DAY) is None
    assert [found.at(START + d * DAY).id for d in (0, 9, 10, 29, 30, 45)] == [ids[k] for k in (
        "blue", "blue", "green", "green", "yellow", "yellow")]
    assert found.to_dict()["validity"][0]["valid_until"] == (START + 10 * DAY).isoformat()


def test_a_version_whose_successor_was_forgotten_has_no_known_end(history):
    mem, ids = history
    mem.delete_memory(ids["yellow"])
    found = mem.fact_history(ids["green"])
    assert found.current is None
    assert [(s.valid_until, s.current) for s in found.validity] == [(START + 10 * DAY, False), (None, False)]
    # When green stopped being current is gone with yellow: no date answers with it.
    for day in (15, 35):
        colour = mem.recall_memories("favourite colour", limit=5, kind="fact", as_of=START + day * DAY)
        assert [h.content for h in colour] == [], day
    assert [h.content for h in mem.recall_memories("favourite colour", kind="fact", as_of=START + 5 * DAY)] == [BLUE]


@pytest.mark.parametrize("as_of", ["yesterday", "2025-13-01", 12])
def test_a_bad_date_is_refused(mem, as_of):
    with pytest.raises(InvalidInput, match="as_of"):
        mem.recall_memories("anything", as_of=as_of)


def test_as_of_does_not_follow_todays_links(mem):
    mem.store_memory("Trip notes: sailing")
    with pytest.raises(InvalidInput, match="expand"):
        mem.recall_memories("Trip notes", as_of=START, expand=True)


def test_a_date_after_now_reads_as_now(mem, clock):
    stored = mem.store_memory("Trip notes: sailing").id
    later = mem.recall_memories("Trip notes", as_of=START + 400 * DAY)
    assert [h.id for h in later] == [stored]
    assert later[0].effective_strength == pytest.approx(0.5)

