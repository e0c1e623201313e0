"""Filtered search through the filters' own indexes (stores/sqlite/narrowing/driving.py): the same answer as
testing the filter on every row, the narrow path really taken, and the indexes kept in step with
every write (tags changed, memories deleted, experiences archived and restored)."""

from __future__ import annotations

import json
import random
import sqlite3
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from support import sql

import hippo
import hippo.stores.sqlite.narrowing.driving as driving
import hippo.stores.sqlite.narrowing.supersets as supersets
from hippo.core.memory import MemoryInput
from hippo.core.ports import ChunkFilter, ExperienceFilter, ExperienceRecord
from hippo.core.recall.pool import keyword_match
from hippo.stores.sqlite.filters import filter_sql
from hippo.stores.sqlite.index.hnsw import HnswIndex
from hippo.stores.sqlite.schema import MIGRATIONS, _statements
from hippo.stores.sqlite.search import match_expression
from hippo.stores.vectors import decode_vector

pytestmark = pytest.mark.sqlite_only  # the SQLite store's own indexes and search plans

N = 800
TAGS = [f"tag-{i}" for i in range(12)]
TYPES = ["chat", "task", "error", "insight"]
WORDS = ["heron", "pond", "garden", "tomato", "harbour", "lantern", "violin", "glacier", "orchard", "compass"]


@pytest.fixture(params=[None, 100], ids=["exact-index", "hnsw-index"])
def filled(make_mem, clock, request):
    """800 tagged memories over 400 days in 9 sessions, four in five of them experiences, beside
    another agent's memories with the same tags; searched by numpy, or by HNSW with its int8 copy."""
    mem = make_mem("alice", **({} if request.param is None else {"ann_threshold": request.param}))
    rng = random.Random(5)
    start = clock() - timedelta(days=400)
    inputs = [MemoryInput(f"Note {i}: the {rng.choice(WORDS)} and the {rng.choice(WORDS)} near the {rng.choice(WORDS)}",
                          {"tags": rng.sample(TAGS, rng.choice((1, 1, 2)))}, 0.5,
                          start + timedelta(days=i * 400 / N), None, f"s{i % 9}") for i in range(N)]
    results = mem.store_memories(inputs)
    mem.store.put_experiences("alice", [
        ExperienceRecord(r.id, TYPES[i % 4], round(0.5 + (i % 6) / 10, 1), {}, None, None, None,
                         inputs[i].observed_at, clock()) for i, r in enumerate(results) if i % 5])
    make_mem("bob").store_memories([MemoryInput(f"Bob's note {i} about the heron", {"tags": TAGS[:3]})
                                    for i in range(60)])
    return mem, start, [r.id for r in results]


def filters(start) -> dict[str, ChunkFilter]:
    late = start + timedelta(days=380)
    memory = {"kinds": ("memory",)}
    return {
        "a tag": ChunkFilter(tags=("tag-3",)),
        "two tags": ChunkFilter(tags=("tag-3", "tag-7")),
        "a tag and a type": ChunkFilter(tags=("tag-1",), experience=ExperienceFilter(("error",)), **memory),
        "a period": ChunkFilter(since=late, experience=ExperienceFilter(), **memory),
        "types, importance and a period": ChunkFilter(since=start + timedelta(days=300),
                                                      experience=ExperienceFilter(("chat", "task"), 0.9), **memory),
        "a session and a tag": ChunkFilter(session_id="s4", tags=("tag-2",)),
        "all of them": ChunkFilter(tags=("tag-5",), since=start + timedelta(days=100), session_id="s1",
                                   experience=ExperienceFilter(("task", "error", "insight"), 0.6), **memory),
        "a tag nobody has": ChunkFilter(tags=("tag-99",)),
    }


def by_vector(mem, where: ChunkFilter, query: np.ndarray, limit: int) -> list[tuple[str, float]]:
    """The reference: every row tested by the filter, every passing vector scored."""
    clause, params = filter_sql(where)
    with mem.store.db.reading() as conn:
        rows = conn.execute(f"SELECT c.id, c.embedding FROM chunks c WHERE c.agent_id = ? AND c.embedding IS NOT NULL "
                            f"AND {clause}", ("alice", *params)).fetchall()
    scored = sorted(((i, float(decode_vector(blob) @ query)) for i, blob in rows), key=lambda item: -item[1])
    return scored[:limit]


def passing(mem, where: ChunkFilter) -> int:
    clause, params = filter_sql(where)
    with mem.store.db.reading() as conn:
        return conn.execute(f"SELECT count(*) FROM chunks c WHERE c.agent_id = ? AND {clause}",
                            ("alice", *params)).fetchone()[0]


def by_words(mem, where: ChunkFilter, match: str, limit: int) -> list[tuple[str, float]]:
    """The reference: every match joined to its row, filtered, ranked by BM25."""
    clause, params = filter_sql(where)
    with mem.store.db.reading() as conn:
        return conn.execute(
            "SELECT c.id, -bm25(chunks_fts) FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid "
            f"WHERE chunks_fts MATCH ? AND c.agent_id = ? AND {clause} ORDER BY bm25(chunks_fts) LIMIT ?",
            (match, "alice", *params, limit)).fetchall()


def same_top(found: list[tuple[str, float]], expected: list[tuple[str, float]], name: str) -> None:
    """The same scores, and the same rows but for ties at the last score (equal vectors)."""
    assert [s for _, s in found] == pytest.approx([s for _, s in expected], abs=1e-5), name
    above = [i for i, s in expected if not expected or s > expected[-1][1] + 1e-5]
    assert [i for i, _ in found][:len(above)] == above, name


def check_every_filter(mem, start, embedder, monkeypatch, *, kept: dict | None = None) -> None:
    """Each filter's vector and keyword answers equal a test of every row, and a narrow one is
    answered among the rows its parts' indexes list. ``kept`` gathers the parts listed (query and
    parameters) over calls: a part listed by an earlier call is not listed again, its listing kept
    with the rows written since taken in (supersets.py)."""
    kept = {} if kept is None else kept
    earlier = {key for key, rows in kept.items() if rows is not None}
    listed: list[tuple] = []
    narrow = [name for name, where in filters(start).items() if passing(mem, where) < N / 40]
    assert len(narrow) >= 4
    original = supersets.listed  # each listing of a filter's part from its index

    def listing(conn, sql, params, bound):
        rows = original(conn, sql, params, bound)
        listed.append(((sql, tuple(params)), rows))
        kept[sql, tuple(params)] = rows
        return rows

    monkeypatch.setattr(supersets, "listed", listing)
    for name, where in filters(start).items():
        before = len(listed)
        for words in ("heron pond", "lantern orchard glacier"):
            query, match = embedder.embed_query(words), match_expression(keyword_match(words))
            found = mem.store.vector_search("alice", query, 10, where)
            expected = by_vector(mem, where, query, 10)
            if isinstance(mem.store._vectors.index_of("alice"), HnswIndex):  # may miss one (equal vectors)
                assert len({i for i, _ in found} & {i for i, _ in expected}) >= len(expected) - 2, name
            else:
                same_top(found, expected, name)
            assert [i for i, _ in mem.store.keyword_search("alice", match, 10, where)] == \
                   [i for i, _ in by_words(mem, where, match, 10)], name
        assert not earlier & {key for key, _ in listed[before:]}, name
        if name in narrow and not earlier:
            assert any(rows is not None for _, rows in listed[before:]), name
    monkeypatch.setattr(supersets, "listed", original)


def check_the_indexes(mem, least: int = N) -> None:
    """``chunk_tags`` holds exactly the keys of the tags the chunks' metadata holds, and each
    experience the rowid of its chunk (none while archived)."""
    with mem.store.db.reading() as conn:
        tags = conn.execute("SELECT tag_key, chunk FROM chunk_tags ORDER BY 1, 2").fetchall()
        pairs = conn.execute("SELECT c.agent_id, t.value, c.rowid FROM chunks c, json_each(c.metadata, '$.tags') t "
                             "WHERE t.type = 'text'").fetchall()
        wrong = conn.execute("SELECT count(*) FROM experiences x LEFT JOIN chunks c ON c.id = x.id "
                             "WHERE x.chunk IS NOT c.rowid").fetchone()[0]
    assert tags == sorted({(driving.tag_key(agent, tag), rowid) for agent, tag, rowid in pairs}) and len(tags) > least
    assert wrong == 0


def test_narrow_filters_answer_as_a_test_of_every_row(filled, embedder, monkeypatch):
    mem, start, _ = filled
    check_the_indexes(mem)
    check_every_filter(mem, start, embedder, monkeypatch)


def test_the_indexes_follow_every_write(filled, embedder, monkeypatch, clock):
    mem, start, ids = filled
    kept: dict = {}
    check_every_filter(mem, start, embedder, monkeypatch, kept=kept)  # the parts' listings are kept from here on
    for chunk_id in ids[:200:3]:  # tags changed
        mem.update_metadata(chunk_id, {"tags": ["tag-7", "tag-1"]})
    for chunk_id in ids[1:200:7]:
        mem.update_metadata(chunk_id, {"note": "no tags now"})
    for chunk_id in ids[200:260]:  # forgotten
        mem.delete_memory(chunk_id)
    archived = ids[300:400:2]  # experiences and plain memories archived, half of them restored
    assert mem.store.archive_chunks("alice", archived, clock()) == len(archived)
    check_the_indexes(mem)
    mem.store_memories([MemoryInput(f"Filler {i} about the violin", {"tags": ["tag-5"]}) for i in range(40)])
    for chunk_id in archived[::2]:
        mem.restore_memory(chunk_id)  # a new rowid
    check_the_indexes(mem)
    check_every_filter(mem, start, embedder, monkeypatch, kept=kept)
    assert kept and any(rows is not None for rows in kept.values())
    mem.delete_all()
    with mem.store.db.reading() as conn:
        assert conn.execute("SELECT count(*) FROM chunk_tags WHERE chunk NOT IN (SELECT rowid FROM chunks)"
                            ).fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM chunk_tags").fetchone() == (60 * 3,)  # bob's


def test_the_tag_index_holds_no_text_and_forgotten_tags_leave_no_bytes(make_mem, db):
    """Tags are user text. Their index holds keys only: a B-tree that rebalances copies cells between
    pages, and ``secure_delete`` zeroes a deleted cell, not the copies a rebalance left behind (a
    table of the tags' text kept 2 of 750 forgotten tags in the file at this size)."""
    mem = make_mem("alice")
    rng = random.Random(3)
    secret = "Zyzzogeton"
    tags = [[f"tag-{rng.randrange(50)}-{'x' * 60}"] for _ in range(6000)]
    for i in range(0, 6000, 8):  # one in eight has a secret tag too, sorted among the others
        tags[i].append(f"tag-{rng.randrange(50)}-{secret}-{i:05d}-{'y' * 60}")
    results = mem.store_memories([MemoryInput(f"Note {i}", {"tags": tags[i]}) for i in range(6000)])
    with mem.store.db.reading() as conn:
        pages = [p for (p,) in conn.execute(
            "SELECT pageno FROM dbstat WHERE name IN ('chunk_tags', 'idx_chunk_tags_chunk')")]
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw = Path(db).read_bytes()
    assert len(pages) > 10 and not any(b"tag-" in raw[(p - 1) * size:p * size] for p in pages)
    assert mem.store.delete_chunks("alice", [r.id for i, r in enumerate(results) if i % 8 == 0]) == 750
    assert len(mem.recall_memories("Note", tags=[f"tag-3-{'x' * 60}"], limit=5).hits) == 5
    mem.close()
    assert not any(secret.encode() in Path(db + suffix).read_bytes()
                   for suffix in ("", "-wal") if Path(db + suffix).exists())


def old(i: int) -> str:
    return f"01J0000000000000000000000{i}"  # a ULID


def version_12_file(path) -> None:
    """A file as hippo wrote it before migration 0013: tagged memories, three of them experiences,
    one of those archived."""
    conn = sqlite3.connect(str(path), isolation_level=None)
    for _, script in MIGRATIONS[:12]:
        for statement in _statements(script):
            conn.execute(statement)
    conn.execute("PRAGMA user_version = 12")
    when = "2025-01-0{}T00:00:00.000000+00:00"
    for i in range(1, 6):
        conn.execute("INSERT INTO chunks(id, agent_id, content, metadata, kind, last_accessed_at, created_at, "
                     "observed_at) VALUES (?, 'alice', ?, ?, 'memory', ?, ?, ?)",
                     (old(i), f"The heron came back to the pond, day {i}",
                      json.dumps({"tags": ["birds", f"day-{i}"]} if i % 2 else {"tags": "birds"}),
                      when.format(i), when.format(i), when.format(i)))
    moved = "id, agent_id, content, metadata, kind, running_intensity, encounter_count, access_count, " \
            "last_accessed_at, created_at, observed_at"
    conn.execute(f"INSERT INTO chunks_archive ({moved}, archived_at) SELECT {moved}, ? FROM chunks WHERE id = ?",
                 (when.format(6), old(5)))
    conn.execute("DELETE FROM chunks WHERE id = ?", (old(5),))
    for i, kind in ((1, "chat"), (2, "error"), (5, "error")):
        conn.execute("INSERT INTO experiences (id, agent_id, type, importance, context, observed_at, consolidated_at) "
                     "VALUES (?, 'alice', ?, 0.8, '{}', ?, ?)", (old(i), kind, when.format(i), when.format(i)))
    conn.close()


def test_an_older_file_gets_its_tag_keys_and_experience_links(db_path, clock):
    version_12_file(db_path)
    mem = hippo.open(db_path, agent_id="alice", embedder=None, clock=clock)
    check_the_indexes(mem, least=4)
    assert sql(db_path, "SELECT id, chunk IS NULL FROM experiences ORDER BY id") == \
        [(old(1), 0), (old(2), 0), (old(5), 1)]  # the fifth is archived
    assert {h.id for h in mem.recall_memories("heron pond", tags=["birds"]).hits} == {old(i) for i in range(1, 5)}
    assert [h.id for h in mem.recall_memories("heron pond", tags=["day-3"]).hits] == [old(3)]
    assert [e.id for e in mem.recall(types=["error"], query="heron")] == [old(2)]
    assert [e.id for e in mem.recall(types=["error"])] == [old(2)]  # listed newest first: not the archived one
    mem.restore_memory(old(5))  # a new rowid: the trigger links it
    check_the_indexes(mem, least=6)
    assert {e.id for e in mem.recall(types=["error"], query="heron")} == {old(2), old(5)}
    assert [e.id for e in mem.recall(types=["error"], tags=["day-5"])] == [old(5)]

