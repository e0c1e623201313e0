"""``hippo export`` / ``hippo import`` / ``hippo reembed``: lossless, idempotent, re-embedding when models differ."""

from __future__ import annotations

import base64
import json
from datetime import datetime, timedelta, timezone

import pytest
from cli_helpers import as_json, ok
from support import sql

import hippo
from hippo.core.transfer import derived_id
from hippo.types import MergedWording

pytestmark = pytest.mark.sqlite_only  # the CLI runs on the SQLite file its --db names (the CLI on PostgreSQL: test_http_scaleout.py)

STRENGTH = ("content", "kind", "metadata", "running_intensity", "encounter_count", "access_count",
            "last_accessed_at", "created_at", "observed_at", "superseded_by", "content_hash")


@pytest.fixture
def source(make_mem, db_path, clock):
    """Alice's memory: memories with tags and strength history, a superseded fact, a block.

    Written two hours ago: the commands run on the real clock, and older memories would have decayed.
    """
    clock.set(datetime.now(timezone.utc) - timedelta(hours=2))
    mem = make_mem("alice")
    mem.store_memory("We chose SQLite over PostgreSQL", {"tags": ["decision"], "owner": "kris"}, 0.9,
                     observed_at="2024-12-01T09:00:00Z")
    clock.advance(hours=1)
    mem.store_memory("We chose SQLite over PostgreSQL")  # strengthened
    mem.store_memory("The office router drops the wifi every evening")
    mem.recall_memories("router wifi")  # a retrieval: access count, last access
    old = mem.remember_facts("I live in Berlin.").facts[0].id
    new = mem.remember_facts("I live in Lisbon now.").facts[0].id
    mem.store.supersede("alice", [old], new)
    mem.set_memory_block("human", "Name: Kris", char_limit=200)
    return mem


def _rows(path, agent="alice"):
    return sql(path, "SELECT id, content, kind, metadata, running_intensity, encounter_count, access_count, "
                     "last_accessed_at, created_at, observed_at, superseded_by, content_hash FROM chunks "
                     "WHERE agent_id = ? ORDER BY id", (agent,))


def _blocks(path, agent="alice"):
    return sql(path, "SELECT key, value, char_limit, updated_at FROM memory_blocks WHERE agent_id = ?", (agent,))


def _lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_export_writes_a_header_every_chunk_and_every_block(cli, source, tmp_path):
    out = tmp_path / "alice.jsonl"
    ok(cli("export", out))
    header, *records = _lines(out)
    assert header | {"exported_at": None} == {
        "type": "header", "format": "hippo-export", "version": 1, "agent_id": "alice", "embedder": "fake:64",
        "dimension": 64, "vectors": False, "exported_at": None, "chunks": 4, "blocks": 1}
    chunks = [r for r in records if r["type"] == "chunk"]
    assert {c["id"] for c in chunks} == {c.id for c in source.list_memories(limit=10).items}
    stored = {c.id: c for c in source.list_memories(limit=10).items}
    for record in chunks:
        assert set(STRENGTH) <= set(record) and "vector" not in record
        chunk = stored[record["id"]]
        assert record["running_intensity"] == chunk.running_intensity
        assert record["access_count"] == chunk.access_count and record["metadata"] == chunk.metadata
    assert [r for r in records if r["type"] == "block"] == [
        {"type": "block", "key": "human", "value": "Name: Kris", "char_limit": 200,
         "updated_at": source.memory_block("human").updated_at.isoformat(timespec="microseconds")}]
    streamed = [json.loads(line) for line in ok(cli("export")).stdout.splitlines()]
    assert streamed[1:] == records and streamed[0] | {"exported_at": None} == header | {"exported_at": None}


def test_vectors_are_base64_little_endian_float32(cli, source, db_path, tmp_path):
    out = tmp_path / "v.jsonl"
    ok(cli("export", out, "--vectors"))
    header, *records = _lines(out)
    assert header["vectors"] is True
    blobs = dict(sql(db_path, "SELECT id, embedding FROM chunks"))
    for record in (r for r in records if r["type"] == "chunk"):
        assert base64.b64decode(record["vector"]) == blobs[record["id"]]


def test_import_keeps_ids_and_strength_and_is_idempotent(cli, source, db_path, tmp_path):
    out = tmp_path / "alice.jsonl"
    ok(cli("export", out, "--vectors"))
    target = tmp_path / "copy.db"
    first = as_json(cli("import", out, "--json", db=target))
    assert (first["inserted"], first["skipped"], first["embedded"], first["blocks_written"]) == (4, 0, 0, 1)
    assert _rows(target) == _rows(db_path) and _blocks(target) == _blocks(db_path)
    vectors = sql(target, "SELECT id, embedding FROM chunks ORDER BY id")
    assert vectors == sql(db_path, "SELECT id, embedding FROM chunks ORDER BY id")

    second = as_json(cli("import", out, "--json", db=target))
    assert (second["inserted"], second["skipped"], second["blocks_written"], second["blocks_skipped"]) == (0, 4, 0, 1)
    assert _rows(target) == _rows(db_path) and _blocks(target) == _blocks(db_path)
    history = as_json(cli("show", sql(target, "SELECT superseded_by FROM chunks WHERE superseded_by IS NOT NULL")[0][0],
                          "--json", db=target))["history"]
    assert [v["content"] for v in history["versions"]] == ["User lives in Berlin", "User lives in Lisbon now"]


def test_import_into_its_own_database_changes_nothing(cli, source, db_path, tmp_path):
    out = tmp_path / "alice.jsonl"
    ok(cli("export", out))
    before = _rows(db_path), _blocks(db_path)
    result = as_json(cli("import", out, "--json"))
    assert (result["inserted"], result["skipped"]) == (0, 4)
    assert (_rows(db_path), _blocks(db_path)) == before


def test_import_as_another_agent_of_the_same_database(cli, source, db_path, tmp_path):
    out = tmp_path / "alice.jsonl"
    ok(cli("export", out, "--vectors"))
    first = as_json(cli("import", out, "--json", agent="bob"))
    assert (first["inserted"], first["renamed"], first["agent_id"], first["source_agent"]) == (4, 4, "bob", "alice")
    alice, bob = _rows(db_path), _rows(db_path, "bob")
    mapping = {row[0]: derived_id(row[0], "bob") for row in alice}  # same time part, hashed randomness
    renamed = sorted((mapping[r[0]], *r[1:10], mapping[r[10]] if r[10] else None, r[11]) for r in alice)
    assert renamed == sorted(bob)
    again = as_json(cli("import", out, "--json", agent="bob"))
    assert (again["inserted"], again["skipped"]) == (0, 4) and _rows(db_path, "bob") == bob
    assert _rows(db_path) == alice


def test_import_reembeds_when_the_model_differs(cli, source, db_path, tmp_path):
    out = tmp_path / "alice.jsonl"
    ok(cli("export", out, "--vectors"))
    target = tmp_path / "small.db"
    result = as_json(cli("import", out, "--json", db=target, embedder="fake:16"))
    assert (result["inserted"], result["embedded"], result["pending"]) == (4, 4, 0)
    assert sql(target, "SELECT DISTINCT length(embedding) FROM chunks") == [(16 * 4,)]
    assert sql(target, "SELECT model_id, dimension FROM embedding_model") == [("fake:16", 16)]
    assert as_json(cli("recall", "SQLite PostgreSQL", "--json", db=target, embedder="fake:16"))["hits"]

    keyword_only = tmp_path / "none.db"
    result = as_json(cli("import", out, "--json", db=keyword_only, embedder="none"))
    assert (result["inserted"], result["embedded"], result["pending"]) == (4, 0, 4)
    filled = as_json(cli("reembed", "--json", db=keyword_only, embedder="fake"))
    assert (filled["embedded"], filled["pending"], filled["model_id"]) == (4, 0, "fake:64")


def test_import_without_vectors_into_the_same_model_embeds(cli, source, tmp_path):
    out = tmp_path / "alice.jsonl"
    ok(cli("export", out))
    result = as_json(cli("import", out, "--json", db=tmp_path / "same.db"))
    assert (result["inserted"], result["embedded"]) == (4, 4)


def test_import_into_the_local_model_recalls_by_meaning(cli, source, tmp_path, local_embedder):
    out = tmp_path / "alice.jsonl"
    ok(cli("export", out, "--vectors"))
    target = tmp_path / "local.db"
    result = as_json(cli("import", out, "--json", db=target, embedder="local"))
    assert (result["inserted"], result["embedded"]) == (4, 4)
    assert sql(target, "SELECT model_id, dimension FROM embedding_model") == [(local_embedder.model_id, 384)]
    hits = as_json(cli("recall", "which database did we pick?", "--kind", "memory", "--json", db=target,
                       embedder="local"))["hits"]
    assert hits[0]["chunk"]["content"] == "We chose SQLite over PostgreSQL"


@pytest.mark.parametrize("mutate, message", [
    (lambda lines: lines[1:], "not a hippo export"),
    (lambda lines: [lines[0], "{not json"], "line 2 is not JSON"),
    (lambda lines: [lines[0], "[1, 2]"], "line 2 is not a JSON object"),
    (lambda lines: lines + [json.dumps({"type": "chunk", "id": "x"})], "invalid memory id"),
    (lambda lines: lines + [lines[1]], "appears twice"),
    (lambda lines: [lines[0].replace('"version":1', '"version":9')] + lines[1:], "newer than this hippo"),
    (lambda lines: lines + [json.dumps({"type": "block", "key": "k", "value": "toolong", "char_limit": 3,
                                        "updated_at": "2025-01-01T00:00:00Z"})], "its limit is 3"),
    (lambda lines: [lines[0], lines[1].replace('"kind":"', '"kind":"x')], "kind must be"),
    (lambda lines: [], "empty"),
])
def test_a_bad_file_is_one_error_and_writes_nothing(cli, source, tmp_path, mutate, message):
    out = tmp_path / "alice.jsonl"
    ok(cli("export", out))
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(mutate(out.read_text(encoding="utf-8").splitlines())) + "\n", encoding="utf-8")
    target = tmp_path / "target.db"
    ok(cli("store", "already here", db=target))
    before = _rows(target)
    result = cli("import", bad, db=target)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.stderr.count("\n") == 1 and message in result.stderr
    assert _rows(target) == before


def test_merged_wordings_go_out_and_come_back_and_split_after(cli, make_mem, tmp_path, clock):
    clock.set(datetime.now(timezone.utc) - timedelta(hours=2))
    mem = make_mem("alice")
    fact = mem.remember_facts("I live in Berlin.").facts[0]
    merged_at = clock()
    mem.store.add_merged("alice", [MergedWording("01J00000000000000000000MRG", fact.id, "I am based in Berlin",
                                                 merged_at, 0.91, 0.6)])
    out = tmp_path / "alice.jsonl"
    ok(cli("export", out))
    [record] = [r for r in _lines(out) if r.get("id") == fact.id]
    assert record["merged"] == [{"id": "01J00000000000000000000MRG", "content": "I am based in Berlin",
                                 "merged_at": merged_at.isoformat(timespec="microseconds"), "similarity": 0.91,
                                 "intensity": 0.6, "metadata": {}, "source": None, "session_id": None,
                                 "observed_at": None}]

    target = tmp_path / "copy.db"
    imported = cli("import", out, db=target)
    assert "1 merged wording kept with their facts" in imported.stderr
    history = as_json(cli("show", fact.id, "--json", db=target))["history"]
    assert [m["content"] for m in history["merged"]] == ["I am based in Berlin"]
    ok(cli("split", fact.id, "I am based in Berlin", db=target))
    assert sql(target, "SELECT count(*) FROM fact_merges") == [(0,)]
    assert sql(target, "SELECT count(*) FROM chunks WHERE content = 'I am based in Berlin'") == [(1,)]

    bad = tmp_path / "bad.jsonl"
    bad.write_text(out.read_text(encoding="utf-8").replace('"intensity":0.6', '"intensity":6'), encoding="utf-8")
    other = tmp_path / "other.db"
    ok(cli("store", "already here", db=other))
    before = _rows(other)
    result = cli("import", bad, db=other)
    assert result.exit_code == 1 and "merged[0]: intensity must be between 0 and 1" in result.stderr
    assert _rows(other) == before and sql(other, "SELECT count(*) FROM fact_merges") == [(0,)]


def test_a_missing_file_is_a_user_error(cli, tmp_path):
    result = cli("import", tmp_path / "nope.jsonl")
    assert result.exit_code == 1 and result.stderr.startswith("error: No such file")
    assert not (tmp_path / "hippo.db").exists()


def test_large_exports_and_imports_stream_with_json_kept_clean(cli, make_mem, tmp_path):
    mem = make_mem("alice")
    mem.store_memories([f"note number {i} about topic {i % 7}" for i in range(250)])
    out = tmp_path / "big.jsonl"
    ok(cli("export", out, "--vectors"))
    assert len(out.read_text().splitlines()) == 251
    result = as_json(cli("import", out, "--json", db=tmp_path / "big.db"))
    assert (result["inserted"], result["embedded"]) == (250, 0)
    assert not list(tmp_path.glob(".*.partial"))


def test_reembed_switches_the_whole_database(cli, make_mem, db_path, clock):
    make_mem("alice").store_memory("alice's note")
    make_mem("bob").store_memory("bob's note")
    result = as_json(cli("reembed", "--embedder", "fake:8", "--json"))
    assert (result["embedded"], result["pending"], result["model_id"], result["dimension"]) == (2, 0, "fake:8", 8)
    assert sql(db_path, "SELECT DISTINCT length(embedding) FROM chunks") == [(32,)]
    ok(cli("stats", embedder="fake:8"))  # the database now takes the new model, and only it
    assert "fake:8" in cli("stats", embedder="fake").stderr
    with hippo.open(db_path, agent_id="bob", embedder="fake:8", clock=clock) as bob:
        assert [h.content for h in bob.recall_memories("note")] == ["bob's note"]
