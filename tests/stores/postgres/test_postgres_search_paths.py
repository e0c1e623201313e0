"""PostgreSQL only: the ways a search may run answer as the one plain statement does.

- The two sides on two connections at once (``spare``) give the candidates one statement gives.
- The keyword side of a recall that asks for live chunks of some kinds reads ``chunk_words``,
  which a trigger keeps equal to the live chunks' words through stores, edits, supersession,
  deletes and archiving.
- A filter whose first walk fell short is walked wide enough (or scanned exactly) at once the next
  time, and finds what the walk and its second try found.
"""

from __future__ import annotations

import contextlib
import threading
import time

import pytest
from support import sql

import hippo
from hippo.core.ports import ChunkFilter, SearchQuery
from hippo.providers.fake import FakeEmbedder
from hippo.stores.postgres.connection import EF_SEARCH


def _as_one(candidates):
    """What a search's candidates say, in an order that does not depend on how they were read."""
    return (sorted(s.id for s in candidates.chunks), {k: round(v, 6) for k, v in candidates.similarity.items()},
            {k: round(v, 6) for k, v in candidates.bm25.items()}, candidates.exhausted,
            round(candidates.unseen_similarity, 6), round(candidates.unseen_bm25, 6))


def _words(db: str) -> set[tuple[str, str, str]]:
    return set(sql(db, "SELECT id, kind, tsv::text FROM chunk_words"))


def _live_words(db: str) -> set[tuple[str, str, str]]:
    return set(sql(db, "SELECT id, kind, tsv::text FROM chunk_rows WHERE superseded_by IS NULL"))


TEXTS = [f"harbour note {i} on {['tides', 'boats', 'nets', 'gulls'][i % 4]} and {['rope', 'sail'][i % 2]}"
         for i in range(400)]


@pytest.mark.parametrize("score_all", [False, True])
def test_two_connections_at_once_answer_as_one_statement(database, score_all):
    embedder = FakeEmbedder()
    with hippo.open(database, agent_id="big", embedder=embedder, ann_threshold=100) as mem:
        mem.store_memories([hippo.MemoryInput(t, {"tags": ["odd"]} if i % 2 else {}) for i, t in enumerate(TEXTS)])
        store = mem.store
        spare, real, used = store.db.spare, store._both_sides, []
        store._both_sides = lambda *a, **k: (used.append(1), real(*a, **k))[1]
        for words, where in [(("boats", "rope"), ChunkFilter()), (("gulls",), ChunkFilter(tags=("odd",))),
                             (("nets", "sail", "harbour"), ChunkFilter(kinds=("memory",)))]:
            query = SearchQuery(embedder.embed_query(" ".join(words)), words, where, 20, score_all=score_all)
            store.db.spare = lambda: contextlib.nullcontext(None)
            alone = store.search("big", query)
            assert used == []
            store.db.spare = spare
            together = store.search("big", query)
            assert used == [1]
            used.clear()
            assert _as_one(together) == _as_one(alone)


def test_no_second_connection_from_a_pool_with_none_to_spare(database):
    from hippo.stores.postgres.store import PostgresStore

    store = PostgresStore(database, pool_size=1)
    try:
        with store.db.reading("alice"), store.db.spare() as other:
            assert other is None  # waiting for one while holding the only one would starve the pool
    finally:
        store.close()


def test_no_second_connection_while_another_request_uses_the_pool(database):
    with hippo.open(database, agent_id="alice", embedder=FakeEmbedder()) as mem:
        pool = mem.store.db._pool
        for _ in range(200):  # the first ask finds one connection and asks the pool to open another
            with mem.store.db.reading("alice"), mem.store.db.spare() as other:
                if other is not None:
                    break
            time.sleep(0.01)
        assert other is not None and pool.get_stats()["pool_size"] >= 2  # alone: the two sides run at once
        holding, done = threading.Event(), threading.Event()

        def another_request() -> None:
            with mem.store.db.reading("bob"):
                holding.set()
                done.wait(10)

        thread = threading.Thread(target=another_request)
        thread.start()
        try:
            assert holding.wait(10)
            with mem.store.db.reading("alice"), mem.store.db.spare() as other:
                assert other is None  # a busy server: one statement after the other
        finally:
            done.set()
            thread.join()


def test_no_second_connection_inside_a_write(database):
    with hippo.open(database, agent_id="alice", embedder=FakeEmbedder()) as mem:
        mem.store_memory("a note")
        with mem.store.transaction(), mem.store.db.spare() as other:
            assert other is None  # it would not see the write's own rows


def test_the_live_chunks_words_follow_every_write(database):
    with hippo.open(database, agent_id="alice", embedder=FakeEmbedder()) as mem:
        old = mem.remember_facts("I live in Berlin.").facts[0]
        notes = mem.store_memories(["The harbour smells of tar.", "Gulls circle the boats."])
        assert _words(database) == _live_words(database) and len(_words(database)) == 3
        mem.update_memory(notes[0].id, content="The harbour smells of fish.")
        assert any("'fish'" in tsv for (_, _, tsv) in _words(database)) and _words(database) == _live_words(database)
        new = mem.remember_facts("I moved to Lisbon.").facts[0]
        assert mem.store.supersede("alice", [old.id], new.id) == [old.id]
        assert old.id not in {i for (i, _, _) in _words(database)}
        assert _words(database) == _live_words(database)
        mem.store.archive_chunks("alice", [notes[1].id], mem.now())
        mem.delete_memory(notes[0].id)
        assert _words(database) == _live_words(database) == {(new.id, "fact", _live_words(database).pop()[2])}


def test_a_live_kinds_recall_reads_the_words_table_and_finds_what_the_rows_find(database, monkeypatch):
    import hippo.stores.postgres.search as search

    with hippo.open(database, agent_id="big", embedder=FakeEmbedder()) as mem:
        mem.store_memories(TEXTS[:200])
        fact = mem.remember_facts("The harbour master keeps the boats log.").facts[0]
        real_side, real_filter = mem.store._keyword_side, search.words_filter_sql
        tables: list[str] = []
        monkeypatch.setattr(mem.store, "_keyword_side", lambda *a: (lambda r: (
            tables.append("chunk_words" if "FROM chunk_words" in r[0] else "chunk_rows"), r)[1])(real_side(*a)))
        for where, table in ((ChunkFilter(), "chunk_words"), (ChunkFilter(kinds=("fact",)), "chunk_words"),
                             (ChunkFilter(include_superseded=True), "chunk_rows"),
                             (ChunkFilter(tags=("x",)), "chunk_rows")):
            query = SearchQuery(None, ("harbour", "boats"), where, 20)
            tables.clear()
            found = mem.store.search("big", query)
            assert tables == [table]
            monkeypatch.setattr(search, "words_filter_sql", lambda where: None)
            assert _as_one(mem.store.search("big", query)) == _as_one(found)
            monkeypatch.setattr(search, "words_filter_sql", real_filter)
        facts = mem.store.search("big", SearchQuery(None, ("harbour",), ChunkFilter(kinds=("fact",)), 20))
        assert set(facts.bm25) == {fact.id}


@pytest.mark.parametrize("found, width", [(20, 576), (5, None)])  # 256 * 30 * 3 / (2 * found), past 1000 exact
def test_a_filter_whose_walk_fell_short_is_walked_wide_enough_at_once(database, monkeypatch, found, width):
    from hippo.stores.postgres.filters import filter_sql
    from hippo.stores.postgres.store import PostgresStore

    embedder = FakeEmbedder()
    texts = [f"harbour note {i} on {['tides', 'boats', 'nets', 'gulls'][i % 4]}" for i in range(3000)]
    tags = [{"tags": ["rare"]} if i % 30 == 7 else {} for i in range(3000)]  # 100, spread
    query = SearchQuery(embedder.embed_query("harbour note on boats"), (), ChunkFilter(tags=("rare",)), 30)
    clause, params = filter_sql(query.where)
    walks: list[int | None] = []
    real = PostgresStore._candidates
    monkeypatch.setattr(PostgresStore, "_candidates",
                        lambda self, *a, **k: (walks.append(k.get("walk", EF_SEARCH)), real(self, *a, **k))[1])
    with hippo.open(database, agent_id="big", embedder=embedder, ann_threshold=100) as mem:
        mem.store_memories([hippo.MemoryInput(t, m) for t, m in zip(texts, tags)])
        mem.store.search("big", SearchQuery(query.vector, (), ChunkFilter(), 10))  # builds the graph
        mem.store._learn_share("big", clause, params, found)  # as if a walk of 256 had found that many
        walks.clear()
        learned = mem.store.search("big", query)
        assert walks == [width]  # one statement, as wide as the share needs
        walks.clear()
        mem.store.search("big", SearchQuery(query.vector, (), ChunkFilter(tags=("other",)), 30))
        assert walks[0] == EF_SEARCH  # another filter's values start from the usual walk
    with hippo.open(database, agent_id="big", embedder=embedder, ann_threshold=0) as plain:
        exact = plain.store.search("big", query)
    best = sorted(exact.similarity, key=exact.similarity.get, reverse=True)
    assert len(learned.similarity) == 30 and len(set(best) & set(learned.similarity)) >= 27  # HNSW is approximate


def test_a_walk_that_falls_short_is_remembered_for_its_filter(database):
    from hippo.stores.postgres.filters import filter_sql

    with hippo.open(database, agent_id="big", embedder=FakeEmbedder(), ann_threshold=10) as mem:
        store = mem.store
        where = ChunkFilter(tags=("rare",))
        clause, params = filter_sql(where)
        assert store._first_walk("big", clause, params, 30) == EF_SEARCH
        store._learn_share("big", clause, params, 20)
        assert store._first_walk("big", clause, params, 30) == 576
        assert store._first_walk("other", clause, params, 30) == EF_SEARCH
        assert store._first_walk("big", clause, ['["common"]'], 30) == EF_SEARCH
