"""PostgreSQL only: a filtered recall reads the filter's own index, never the whole chunks table.

100k chunks of one agent (and a few thousand of another) are written in one statement each,
analysed, then every kind of filter is recalled with; each statement the recall sent is explained
with its own values, and no plan may scan ``chunk_rows`` (or the counters beside it) from end to
end. Measured at 100k before this test: a recall with a filter took 51-86 ms on PostgreSQL against
5-8 ms on SQLite. The other agent's keyword side reads its own rows of the words table, not every
agent's rows that hold its words.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any, Iterator

import psycopg
import pytest
from support import START

import hippo
from hippo.providers.fake import FakeEmbedder

ROWS, OTHERS, DIMENSION = 100_000, 5_000, 16
TAGS = 20


@pytest.fixture(scope="module")
def database(postgres) -> Iterator[str]:
    url = postgres.new_database()
    with hippo.open(url, agent_id="alice", embedder=FakeEmbedder(dimension=DIMENSION)) as mem:
        mem.store_memory("The first note, so that the database records its model")
    with psycopg.connect(url, autocommit=True) as conn:
        for agent, count in (("alice", ROWS), ("bob", OTHERS)):
            _fill(conn, agent, count)
        conn.execute("VACUUM ANALYZE chunk_rows")
        conn.execute("VACUUM ANALYZE chunk_strength")
        conn.execute("VACUUM ANALYZE experiences")
    yield url
    postgres.drop(url)


def _fill(conn: Any, agent: str, count: int) -> None:
    """``count`` chunks of ``agent`` in one statement each table: words, a vector, tags, metadata,
    kind, source, session, time; one in seven an experience."""
    prefix = f"{agent[0]}{'0' * 19}"
    conn.execute(
        "INSERT INTO chunk_rows (id, agent_id, content, content_hash, embedding, metadata, kind, created_at, "
        "observed_at, source, session_id) SELECT %s || lpad(i::text, 6, '0'), %s, "
        "'note ' || i || ' about topic' || (i %% 97) || ' and word' || (i %% 1013), md5(%s || i), "
        f"ARRAY(SELECT sin(i * k + k) FROM generate_series(1, {DIMENSION}) k)::vector, "
        "jsonb_build_object('tags', jsonb_build_array('tag' || (i %% %s)), 'project', 'p' || (i %% 50), "
        "'priority', i %% 10), CASE WHEN i %% 10 = 0 THEN 'fact' ELSE 'memory' END, "
        "%s::timestamptz + i * interval '10 minutes', %s::timestamptz + i * interval '10 minutes', "
        "'source' || (i %% 40), 'session' || (i / 200) FROM generate_series(1, %s) i",
        (prefix, agent, agent, TAGS, START, START, count))
    conn.execute(
        "INSERT INTO chunk_strength (id, agent_id, running_intensity, encounter_count, access_count, "
        "last_accessed_at) SELECT id, agent_id, 0.5, 1, 0, created_at FROM chunk_rows WHERE agent_id = %s "
        "AND id LIKE %s", (agent, prefix + "%"))
    conn.execute(
        "INSERT INTO experiences (id, agent_id, type, importance, context, observed_at, consolidated_at) "
        "SELECT id, agent_id, (ARRAY['observation', 'action', 'decision', 'error', 'success', 'message', "
        "'reflection'])[1 + (right(id, 6)::int / 7) %% 7], 0.6 + (right(id, 6)::int %% 9) * 0.05, '{}'::jsonb, "
        "observed_at, observed_at FROM chunk_rows WHERE agent_id = %s AND id LIKE %s AND right(id, 6)::int %% 7 = 0",
        (agent, prefix + "%"))


LATE = START + timedelta(minutes=10 * ROWS)
CASES: dict[str, dict[str, Any]] = {
    "tags": {"tags": ["tag7"]},
    "kind": {"kind": "fact"},
    "source": {"source": "source3"},
    "session": {"session_id": "session42"},
    "since": {"since": LATE - timedelta(days=20)},
    "until": {"until": START + timedelta(days=20)},
    "metadata eq": {"metadata": {"project": "p7"}},
    "metadata in": {"metadata": {"project": {"$in": ["p7", "p9"]}}},
    "tags and since": {"tags": ["tag3"], "since": LATE - timedelta(days=200)},
}
EXPERIENCE_CASES: dict[str, dict[str, Any]] = {
    "types": {"types": "decision"},
    "min_importance": {"min_importance": 0.95},
    "tags": {"tags": "tag5"},
    "since": {"since": LATE - timedelta(days=20)},
    "all four": {"types": ["decision", "error"], "min_importance": 0.8, "tags": "tag5",
                 "since": LATE - timedelta(days=200)},
}


def statements(monkeypatch: pytest.MonkeyPatch, call: Any) -> list[tuple[str, Any]]:
    """The statements ``call`` sends that read the chunks, with their values."""
    seen: list[tuple[str, Any]] = []
    original = psycopg.Connection.execute

    def execute(self: Any, query: Any, params: Any = None, **kwargs: Any) -> Any:
        if isinstance(query, str) and query.lstrip().upper().startswith(("SELECT", "WITH")) \
                and "chunk_rows" in query:
            seen.append((query, params))
        return original(self, query, params, **kwargs)

    monkeypatch.setattr(psycopg.Connection, "execute", execute)
    try:
        call()
    finally:
        monkeypatch.undo()
    return seen


def plan_nodes(url: str, query: str, params: Any, *, analyze: bool = False) -> list[dict[str, Any]]:
    """Every node of the statement's plan, with its own values (run, with ``analyze``)."""
    from pgvector.psycopg import register_vector

    with psycopg.connect(url, autocommit=True) as conn:
        register_vector(conn)
        conn.execute("SET hnsw.ef_search = 256")  # as the store's pooled connections (connection.py)
        conn.execute("SET max_parallel_workers_per_gather = 0")
        [[plan]] = conn.execute(f"EXPLAIN ({'ANALYZE, ' if analyze else ''}FORMAT JSON) " + query, params).fetchall()
    found: list[dict[str, Any]] = []

    def walk(node: dict[str, Any]) -> None:
        found.append(node)
        for child in node.get("Plans", []):
            walk(child)

    walk((plan if isinstance(plan, list) else json.loads(plan))[0]["Plan"])
    return found


def whole_table_scans(url: str, query: str, params: Any) -> list[str]:
    return [node["Relation Name"] for node in plan_nodes(url, query, params)
            if node.get("Node Type") == "Seq Scan" and node.get("Relation Name") in ("chunk_rows", "chunk_strength")]


@pytest.mark.parametrize("ann", [True, False], ids=["hnsw", "exact"])
@pytest.mark.parametrize("case", list(CASES))
def test_a_filtered_recall_reads_the_filters_index(database, monkeypatch, case, ann):
    threshold = 50_000 if ann else None
    with hippo.open(database, agent_id="alice", embedder=FakeEmbedder(dimension=DIMENSION),
                    ann_threshold=threshold) as mem:
        mem.recall_memories("topic7 word11", touch=False)  # the graph built (with ``ann``), counts known
        sent = statements(monkeypatch, lambda: mem.recall_memories("note about topic7 word11", **CASES[case]))
    assert sent
    for query, params in sent:
        assert whole_table_scans(database, query, params) == [], (case, query[:300])


@pytest.mark.parametrize("case", list(EXPERIENCE_CASES))
@pytest.mark.parametrize("asked", ["query", "listing"])
def test_a_filtered_experience_recall_reads_the_filters_index(database, monkeypatch, case, asked):
    with hippo.open(database, agent_id="alice", embedder=FakeEmbedder(dimension=DIMENSION)) as mem:
        mem.recall_memories("topic7 word11", touch=False)
        query = "note about topic7 word11" if asked == "query" else None
        sent = statements(monkeypatch, lambda: mem.recall(query=query, **EXPERIENCE_CASES[case]))
    assert sent
    for text, params in sent:
        assert whole_table_scans(database, text, params) == [], (case, text[:300])


def words_read_for_others(url: str, query: str, params: Any) -> int:
    """Rows of ``chunk_words`` the statement read and then dropped (another agent's, by its filter or
    recheck), from the plan as run."""
    return sum(node.get("Rows Removed by Filter", 0) + node.get("Rows Removed by Index Recheck", 0)
               for node in plan_nodes(url, query, params, analyze=True) if node.get("Relation Name") == "chunk_words")


def test_a_small_agents_keyword_side_reads_its_own_rows_only(database, monkeypatch):
    """Bob's 5,000 chunks share the words table with Alice's 100,000: the words of his question
    ("note" is in every chunk of both) are looked up with his agent, not read for both and dropped."""
    with hippo.open(database, agent_id="bob", embedder=FakeEmbedder(dimension=DIMENSION)) as mem:
        mem.recall_memories("topic7 word11", touch=False)
        sent = statements(monkeypatch, lambda: mem.recall_memories("note about topic7 word11", touch=False))
    keyword = [(q, p) for q, p in sent if "FROM chunk_words" in q]
    assert keyword
    for query, params in keyword:
        assert words_read_for_others(database, query, params) < 100, query[:300]
