"""Keyword search when one agent's rows are few among many, and when a query's words match too many rows."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

pytestmark = pytest.mark.sqlite_only  # the store's own keyword plans (FTS5 budget, kept scores, time index)

import hippo.stores.sqlite.bm25 as bm25
import hippo.stores.sqlite.narrowing.driving as driving
import hippo.stores.sqlite.narrowing.supersets as supersets
import hippo.stores.sqlite.search as sqlite_store
from hippo.core.memory import MemoryInput
from hippo.core.recall.pool import keyword_match as _terms
from hippo.stores.sqlite.search import match_expression


def keyword_match(query: str) -> str:
    """The FTS5 expression SQLite searches for a recall query."""
    return match_expression(_terms(query))
from hippo.core.ports import ChunkFilter
from hippo.stores.sqlite.filters import filter_sql


def unbounded_bm25(mem, agent_id: str, match: str, limit: int, where: ChunkFilter = ChunkFilter()) -> list:
    """The reference answer: every match joined to its row, filtered, ranked by BM25 (no plan, no budget)."""
    clause, params = filter_sql(where)
    with mem.store.db.reading() as conn:
        return conn.execute(
            "SELECT c.id, -bm25(chunks_fts) FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid "
            f"WHERE chunks_fts MATCH ? AND c.agent_id = ? AND {clause} ORDER BY bm25(chunks_fts) LIMIT ?",
            (match, agent_id, *params, limit)).fetchall()


def test_an_agent_with_few_rows_still_gets_its_keyword_hits(make_mem):
    crowd, few = make_mem("crowd"), make_mem("few")
    crowd.store_memories([f"Note {i}: the garden needs watering on day {i}" for i in range(400)])
    mine = ["In the small garden behind the old farmhouse we grow tomatoes, beans, courgettes and basil",
            "The wooden gate at the far end of the garden is broken and the hinge needs replacing soon"]
    few.store_memories([*mine, "Lunch was pasta"])  # long rows: BM25 ranks them below the crowd's
    found = few.store.keyword_search("few", keyword_match("garden"), 5, ChunkFilter())
    contents = {c.content for c in few.store.get_chunks("few", [i for i, _ in found])}
    assert contents == set(mine)
    # Best-ranked globally are the crowd's rows; the agent's own order is still by BM25.
    assert [s for _, s in found] == sorted((s for _, s in found), reverse=True)


def test_the_fast_path_and_the_join_agree(make_mem):
    mem = make_mem("solo")
    mem.store_memories([f"Entry {i} about {'cats' if i % 3 else 'dogs'} and weather" for i in range(300)])
    match = keyword_match("dogs weather")
    fast = mem.store.keyword_search("solo", match, 20, ChunkFilter())
    joined = unbounded_bm25(mem, "solo", match, 20)
    assert [s for _, s in fast] == pytest.approx([s for _, s in joined])
    assert {i for i, _ in fast} == {i for i, _ in joined}


def test_frequent_words_are_left_out_only_over_the_budget(make_mem, monkeypatch):
    mem = make_mem("budget")
    mem.store_memories([f"Meeting notes number {i}" for i in range(120)] + ["The meeting about the zeppelin"])
    match = keyword_match("zeppelin meeting")
    everything = mem.store.keyword_search("budget", match, 200, ChunkFilter())
    assert len(everything) == 121  # both words count while the budget allows

    monkeypatch.setattr(sqlite_store, "KEYWORD_BUDGET", 50)
    pruned = mem.store.keyword_search("budget", match, 200, ChunkFilter())
    (only,) = mem.store.get_chunks("budget", [i for i, _ in pruned])
    assert only.content == "The meeting about the zeppelin"  # the rare word stays, "meeting" (121 rows) goes

    single = mem.store.keyword_search("budget", keyword_match("meeting"), 200, ChunkFilter())
    assert len(single) == 121  # a lone word is never dropped


def test_rows_that_match_a_kept_word_keep_the_score_of_the_left_out_words(make_mem, monkeypatch):
    mem = make_mem("budget")
    rows = [f"Meeting notes number {i}" for i in range(120)]
    rows += ["The zeppelin landed", "The zeppelin meeting ran long", "The zeppelin meeting notes were long"]
    rows += [f"The zeppelin hangar {i} was cold" for i in range(4)]
    rows += [f"Unrelated line {i} about the weather" for i in range(300)]  # so that every word is rare enough
    mem.store_memories(rows)
    match = keyword_match("zeppelin meeting notes")
    reference = unbounded_bm25(mem, "budget", match, 10)
    monkeypatch.setattr(sqlite_store, "KEYWORD_BUDGET", 40)  # "meeting" and "notes" (122, 121 rows) go
    with mem.store.db.reading() as conn:
        affordable = sqlite_store._affordable(conn, match)
    assert affordable.match == '"zeppelin"' and affordable.completion is not None
    contents = {c.id: c.content for c in mem.store.get_chunks("budget", [i for i, _ in reference])}
    expected = [(i, score) for i, score in reference if "zeppelin" in contents[i]]
    assert len(expected) < len(reference)  # some of the best match only left-out words: the budget's price
    for where in (ChunkFilter(), ChunkFilter(kinds=("memory",))):
        found = mem.store.keyword_search("budget", match, 10, where)[:len(expected)]
        # Every row that matches the kept word has its full score, left-out words included.
        assert [i for i, _ in found] == [i for i, _ in expected]
        assert [s for _, s in found] == pytest.approx([s for _, s in expected])


def test_the_fast_plan_is_tried_only_where_the_agent_owns_enough_matches(make_mem):
    crowd, few = make_mem("crowd"), make_mem("few")
    crowd.store_memories([f"Note {i}: the garden needs watering on day {i}" for i in range(400)])
    few.store_memories(["The garden gate is broken", "Lunch was pasta"])
    for mem in (crowd, few):
        mem.recall_memories("garden", touch=False)  # loads each agent's vectors
    store = few.store
    with store.db.reading() as conn:
        matches = sqlite_store._affordable(conn, keyword_match("garden")).matches
        assert matches == 401
        assert store._expected_own_matches(conn, store._vectors.loaded_count("few"), matches) < 2  # 2 of 402 rows: the exact plan
        assert store._expected_own_matches(conn, store._vectors.loaded_count("crowd"), matches) > 390  # nearly all: the fast plan
        assert store._expected_own_matches(conn, store._vectors.loaded_count("nobody-loaded"), matches) == float("inf")  # unknown: try it


def test_a_small_agent_among_many_matches_gets_the_exact_answer(make_mem, clock):
    crowd, few = make_mem("crowd"), make_mem("few")
    crowd.store_memories([f"Note {i}: the garden needs watering on day {i}" for i in range(300)])
    few.store_memories([f"Garden diary {i}: {'roses' if i % 2 else 'beans'} in the garden" for i in range(12)]
                       + ["Lunch was pasta"])
    few.recall_memories("garden", touch=False)  # loads its vectors: 13 rows, fewer than the matches
    match = keyword_match("garden roses")
    reference = unbounded_bm25(few, "few", match, 8)
    found = few.store.keyword_search("few", match, 8, ChunkFilter())
    assert [i for i, _ in found] == [i for i, _ in reference]
    assert [s for _, s in found] == pytest.approx([s for _, s in reference])
    # A filter still applies on top.
    later = few.store_memory("The garden roses bloomed", observed_at=clock() + timedelta(days=3))
    few.recall_memories("garden", touch=False)
    since = few.store.keyword_search("few", match, 8, ChunkFilter(since=clock() + timedelta(days=1)))
    assert [i for i, _ in since] == [later.id]



def test_a_period_with_fewer_rows_than_matches_is_read_from_the_time_index(make_mem, clock):
    mem = make_mem("diary")
    days = [clock() - timedelta(days=d) for d in range(200)]
    # Each row a different length, so that no two BM25 scores tie.
    mem.store_memories([MemoryInput(f"Day {i}: the dog in the park" + " and home" * i, observed_at=when)
                        for i, when in enumerate(days)]
                       + [MemoryInput("A rainy day: no walk with the dog", observed_at=days[3])])
    mem.store_memories([f"Note {i}: the cat" for i in range(300)])  # stored now, matching neither word
    match = keyword_match("dog walk")
    week = ChunkFilter(since=days[6], until=days[0])  # 7 rows (today's are left out)
    year = ChunkFilter(since=days[-1] - timedelta(days=1), until=days[0])  # 200 rows
    everything = ChunkFilter(since=days[-1] - timedelta(days=1))  # 501 rows
    with mem.store.db.reading() as conn:
        matches = sqlite_store._affordable(conn, match).matches
        assert matches == 202  # "dog" in 201 rows, "walk" in 1
        plans = {name: mem.store._fewer_rows_than(conn, "diary", where, *filter_sql(where), None, matches)[0]
                 for name, where in (("week", week), ("year", year), ("everything", everything))}
    assert "SELECT c.rowid FROM chunks c" in plans["week"] and "SELECT c.rowid FROM chunks c" in plans["year"]
    assert plans["everything"] == ""  # more rows in the period than matches: each match's row is checked instead
    for where in (week, year, everything):
        expected = unbounded_bm25(mem, "diary", match, 20, where)
        found = mem.store.keyword_search("diary", match, 20, where)
        assert [i for i, _ in found] == [i for i, _ in expected]
        # Scores read from FTS5's ranks travel as integer millionths (search._ranks).
        assert [s for _, s in found] == pytest.approx([s for _, s in expected], abs=1e-6)


def test_a_period_listed_from_its_index_serves_every_search_and_takes_in_what_changed(make_mem, clock, embedder,
                                                                                      monkeypatch):
    mem, other = make_mem("diary"), make_mem("other")  # two connections to one file
    days = [clock() - timedelta(days=d) for d in range(200)]
    mem.store_memories([MemoryInput(f"Day {i}: {'the dog in the park' if i % 10 == 0 else 'a cat'}" + " ok" * i,
                                    observed_at=when) for i, when in enumerate(days)])
    other.store_memories([MemoryInput(f"Other {i}: a dog", observed_at=days[i]) for i in range(1, 11)])
    match, query = keyword_match("dog"), embedder.embed_query("dog")
    month = ChunkFilter(since=days[40], until=days[0])  # 40 rows, more than the 30 matches: no time-index plan
    listed: list[np.ndarray] = []  # each listing of the month's rows from the time index (supersets.py)
    original = supersets.listed
    monkeypatch.setattr(supersets, "listed", lambda *args, **kwargs: listed.append(original(*args, **kwargs))
                        or listed[-1])

    def check(lists: bool) -> list[str]:
        before = len(listed)
        found = mem.store.keyword_search("diary", match, 20, month)
        expected = unbounded_bm25(mem, "diary", match, 20, month)
        assert len(listed) == before + lists
        assert [i for i, _ in found] == [i for i, _ in expected]
        assert [s for _, s in found] == pytest.approx([s for _, s in expected])
        return [i for i, _ in found]

    check(lists=True)  # too few of the best matches fall in the month: its rows are listed
    assert len(listed[-1]) == 40
    check(lists=False)  # and kept
    monkeypatch.setattr(driving, "AFTERWARDS", (2,))  # no wider search first: the vector side needs the list
    mem.store.vector_search("diary", query, 10, month)
    assert len(listed) == 1
    # Another connection writes, then this one: the rows they wrote join the kept list (changes.py).
    other.store_memory("Other late: a dog", observed_at=days[5])
    check(lists=False)
    late = mem.store_memory("Day late: the dog again", observed_at=days[5])
    assert late.id in check(lists=False)
    # More changes than a quarter of the list (or RELIST_MIN): listed again from the index.
    monkeypatch.setattr(supersets, "RELIST_MIN", 1)
    other.store_memories([f"Other more {i}: a cat" for i in range(11)])
    assert late.id in check(lists=True)
    assert len(listed[-1]) == 41


def test_a_question_naming_a_month_scores_its_matches_once(make_mem, clock, monkeypatch):
    monkeypatch.setattr(bm25, "SMALL", 0)  # the postings read at this size too
    mem = make_mem("diary")
    start = clock() - timedelta(days=730)
    mem.store_memories([MemoryInput(f"Day {i}: the dog in the park" + " and home" * (i % 7),
                                    observed_at=start + timedelta(days=i * 730 / 500)) for i in range(500)])
    month = start + timedelta(days=400)
    statements: list[str] = []
    mem.store.db.conn.set_trace_callback(statements.append)
    try:
        hits = mem.recall_memories(f"Where did the dog play in {month:%B %Y}?", limit=5, touch=False)
    finally:
        mem.store.db.conn.set_trace_callback(None)
    # The period pass reuses the scores: each word's postings read once (bm25.py), FTS5 never asked to rank.
    postings = [s for s in statements if "hippo_postings" in s]
    assert postings and len(postings) == len(set(postings))
    assert not any("group_concat(CAST(rank" in s for s in statements)
    assert not any("JOIN chunks c ON c.rowid = chunks_fts.rowid" in s for s in statements)  # and joins no match
    assert {h.chunk.observed_at.strftime("%B %Y") for h in hits} == {f"{month:%B %Y}"}
