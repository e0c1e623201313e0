"""The keyword budget on every backend: over the budget a query's most frequent words are left out
of the search, yet the rows that a kept word finds are scored by every word of the query."""

from __future__ import annotations

import pytest
from support import sql

import hippo.stores.postgres.search as pg_search
import hippo.stores.sqlite.search as sqlite_search
from hippo.core.ports import ChunkFilter, SearchQuery
from hippo.core.recall.pool import keyword_match

pytestmark = pytest.mark.embedded_only("compares the store's own keyword search with and without the budget")


def keyword_scores(mem, query: str, depth: int = 10, where: ChunkFilter = ChunkFilter()) -> dict[str, float]:
    return mem.store.search(mem.agent_id, SearchQuery(None, keyword_match(query), where, depth)).bm25


def budget(monkeypatch, rows: int) -> None:
    monkeypatch.setattr(sqlite_search, "KEYWORD_BUDGET", rows)
    monkeypatch.setattr(pg_search, "KEYWORD_BUDGET", rows)


def test_rows_a_kept_word_finds_keep_the_score_of_the_left_out_words(mem, db, monkeypatch):
    rows = [f"Meeting notes number {i}" for i in range(120)]
    rows += ["The zeppelin landed", "The zeppelin meeting ran long", "The zeppelin meeting notes were long"]
    rows += [f"The zeppelin hangar {i} was cold" for i in range(4)]
    rows += [f"Unrelated line {i} about the weather" for i in range(300)]  # so that every word is rare enough
    mem.store_memories(rows)
    # The statistics a database gathers on its own (PostgreSQL's autovacuum, which a test cannot
    # wait for): PostgreSQL estimates a left-out word's rarity from them instead of counting it.
    sql(db, "ANALYZE")
    query = "zeppelin meeting notes"
    everything = keyword_scores(mem, query, depth=500)
    contents = {c.id: c.content for c in mem.store.get_chunks(mem.agent_id, list(everything))}
    found_by_the_rare_word = {i: s for i, s in everything.items() if "zeppelin" in contents[i]}
    assert len(found_by_the_rare_word) == 7 and len(everything) == 127

    budget(monkeypatch, 40)  # "meeting" and "notes" (122 and 121 rows) are left out
    for where in (ChunkFilter(), ChunkFilter(kinds=("memory",))):
        within = keyword_scores(mem, query, depth=10, where=where)
        assert set(within) == set(found_by_the_rare_word)  # rows with only the frequent words: the price
        # Full scores, frequent words included (PostgreSQL's share of rows is ANALYZE's sample: close).
        assert within == pytest.approx(found_by_the_rare_word, rel=0.02)
        best = max(within, key=within.get)
        assert contents[best] == "The zeppelin meeting notes were long"


def test_a_lone_frequent_word_is_never_left_out(mem, monkeypatch):
    mem.store_memories([f"Meeting notes number {i}" for i in range(60)])
    budget(monkeypatch, 10)
    assert len(keyword_scores(mem, "meeting", depth=100)) == 60
