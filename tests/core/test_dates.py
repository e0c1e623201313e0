"""A recall query that names a day or month prefers memories observed then."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from hippo.core.recall.dates import named_period

NOW = datetime(2024, 3, 10, 15, 30, tzinfo=timezone.utc)


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=timezone.utc)


@pytest.mark.parametrize("query, start, end", [
    ("What did Caroline share on October 13, 2023?", utc(2023, 10, 13), utc(2023, 10, 14)),
    ("What did Gina find on 1 February, 2023?", utc(2023, 2, 1), utc(2023, 2, 2)),
    ("plans for the 3rd of March 2024", utc(2024, 3, 3), utc(2024, 3, 4)),
    ("notes from Sept. 5th 2022", utc(2022, 9, 5), utc(2022, 9, 6)),
    ("what happened on 2023-05-08", utc(2023, 5, 8), utc(2023, 5, 9)),
    ("What setback did Melanie face in October 2023?", utc(2023, 10, 1), utc(2023, 11, 1)),
    ("anything from December 2023", utc(2023, 12, 1), utc(2024, 1, 1)),
    ("what did we decide yesterday?", utc(2024, 3, 9), utc(2024, 3, 10)),
    ("Today's plan", utc(2024, 3, 10), utc(2024, 3, 11)),
    # counted back from NOW, Sunday 10 March 2024
    ("who did I meet for lunch last Wednesday?", utc(2024, 3, 6), utc(2024, 3, 7)),
    ("what did we eat last Sunday?", utc(2024, 3, 3), utc(2024, 3, 4)),
    ("the film this past Saturday", utc(2024, 3, 9), utc(2024, 3, 10)),
    ("what did the doctor say two weeks ago?", utc(2024, 2, 22), utc(2024, 2, 29)),
    ("the call 3 days ago", utc(2024, 3, 7), utc(2024, 3, 8)),
    ("a month ago we moved", utc(2024, 1, 31), utc(2024, 2, 21)),
    ("a couple of weeks ago", utc(2024, 2, 22), utc(2024, 2, 29)),
    ("the restaurant we loved on our trip last month", utc(2024, 2, 1), utc(2024, 3, 1)),
    ("what did I read last week?", utc(2024, 2, 26), utc(2024, 3, 4)),
    ("what did I cook tonight?", utc(2024, 3, 10), utc(2024, 3, 11)),
    ("what did we do in May?", utc(2023, 5, 1), utc(2023, 6, 1)),  # the latest May not after the question
    ("the trip during early July", utc(2023, 7, 1), utc(2023, 8, 1)),
    ("what happened last February", utc(2024, 2, 1), utc(2024, 3, 1)),
    ("plans we made in March", utc(2024, 3, 1), utc(2024, 4, 1)),
])
def test_named_periods(query, start, end):
    assert named_period(query, NOW) == (start, end)


@pytest.mark.parametrize("query", [
    "May I ask what my favourite colour is?",
    "the 2023 elections",
    "I have 13 apples",
    "February 30, 2023 is not a day",
    "version 2023-13-45 of the report",
    "mayday mayday",
    "what do I usually do on Friday?",  # a bare weekday
    "the last week of the project",
    "years ago I lived in Rome",
    "the last monthly report",
    "May I ask?",  # a month without "in", "during" or "last" before it
    "the meeting in mar",
    "you may go",
    "in a march of protest",
])
def test_no_period(query):
    assert named_period(query, NOW) is None


LAKE, SEA = "I painted a sunset over the lake", "I painted a sunset over the sea, a sunset I love"


def store_paintings(mem) -> None:
    mem.store_memory(LAKE, observed_at=utc(2023, 10, 13, 14))
    mem.store_memory(SEA, observed_at=utc(2023, 8, 2, 9))
    mem.store_memory("We went painting by the river", observed_at=utc(2023, 10, 20, 9))


def test_recall_prefers_what_was_observed_on_the_named_day(make_mem):
    mem = make_mem("dates")
    store_paintings(mem)
    assert mem.recall_memories("What sunset did I paint?", touch=False).hits[0].content == SEA
    assert mem.recall_memories("What sunset did I paint on October 13, 2023?", touch=False).hits[0].content == LAKE
    assert mem.recall_memories("What sunset did I paint in August 2023?", touch=False).hits[0].content == SEA


def test_a_memory_outside_the_period_is_still_found(make_mem):
    mem = make_mem("dates")
    mem.store_memory("The zeppelin museum is in Friedrichshafen", observed_at=utc(2022, 1, 5))
    hits = mem.recall_memories("zeppelin museum on October 13, 2023", touch=False).hits
    assert [h.content for h in hits] == ["The zeppelin museum is in Friedrichshafen"]


def test_explicit_time_filters_and_the_setting_turn_it_off(make_mem):
    query = "What sunset did I paint on October 13, 2023?"
    off = make_mem("off", date_preference=0.0)
    store_paintings(off)
    assert off.recall_memories(query, touch=False).hits[0].content == SEA
    filtered = make_mem("filtered")
    store_paintings(filtered)
    assert filtered.recall_memories(query, since=utc(2023, 1, 1), touch=False).hits[0].content == SEA


def test_a_month_back_from_a_long_month_ends_on_the_shorter_ones_last_day():
    assert named_period("two months ago", utc(2024, 4, 30, 9)) == (utc(2024, 2, 19), utc(2024, 3, 11))
    assert named_period("a month ago", utc(2024, 3, 31, 9)) == (utc(2024, 2, 19), utc(2024, 3, 11))


@pytest.mark.parametrize("query, now, start, end", [
    ("where was I last summer?", utc(2026, 2, 1, 11), utc(2025, 6, 1), utc(2025, 9, 1)),
    ("which jab did I get last autumn?", utc(2026, 2, 10), utc(2025, 9, 1), utc(2025, 12, 1)),
    ("last winter's trip", utc(2026, 2, 10), utc(2024, 12, 1), utc(2025, 3, 1)),  # this one is not over
    ("last summer", utc(2025, 9, 1), utc(2025, 6, 1), utc(2025, 9, 1)),
])
def test_last_season(query, now, start, end):
    assert named_period(query, now) == (start, end)
