"""Importing mem0's get_all output: each user into a scope of its own (the mapping of
hippo.compat.mem0, so its search finds them), facts as facts (a later fact supersedes an imported
one), and ``hippo data import --dry-run`` against a database that is not there yet."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import hippo
from hippo.compat.mem0 import Memory
from hippo.providers.fake import FakeLLM
from hippo.interfaces.cli import app

ROWS = [
    {"id": "0b1c2d3e-0000-4000-8000-000000000001", "memory": "Lives in Berlin", "hash": "x", "metadata": None,
     "created_at": "2025-03-01T10:00:00.000000-08:00", "updated_at": None, "user_id": "alice"},
    {"id": "0b1c2d3e-0000-4000-8000-000000000002", "memory": "Is vegetarian", "metadata": {"source": "chat"},
     "categories": ["food"], "created_at": "2025-03-01T10:00:00+00:00", "user_id": "alice"},
    {"id": "0b1c2d3e-0000-4000-8000-000000000003", "memory": "Keeps bees on the roof",
     "created_at": "2025-03-02T09:00:00+00:00", "user_id": "bob"},
    {"id": "0b1c2d3e-0000-4000-8000-000000000004", "memory": "I am Bob", "role": "user", "actor_id": "bob",
     "created_at": "2025-03-02T09:00:00+00:00", "user_id": "bob", "agent_id": "helper", "run_id": "r1"},
]


def export(folder: Path, rows: list[dict] = ROWS) -> Path:
    path = folder / "mem0.json"
    path.write_text(json.dumps({"results": rows}), encoding="utf-8")
    return path


def test_two_users_import_into_two_scopes_that_the_mem0_api_reads(db, embedder, tmp_path):
    with hippo.open(db, agent_id="importer", embedder=embedder) as mem:
        report = mem.import_from(str(export(tmp_path)), format="mem0")
        assert (report.imported, report.facts) == (4, 3) and report.skipped == []
        assert report.agents == {"user:alice": 2, "user:bob": 1, "user:bob:agent:helper": 1}
        assert mem.list_memories().items == []  # nothing went to the agent importing
        again = mem.import_from(str(export(tmp_path)), format="mem0")
        assert again.imported == 0 and all(s.duplicate for s in again.skipped) and len(again.skipped) == 4
    with Memory(db, embedder=embedder) as m:
        bob = m.search("bees", user_id="bob")["results"]
        assert [(r["memory"], r["user_id"]) for r in bob] == [("Keeps bees on the roof", "bob")]
        alice = m.get_all(user_id="alice")["results"]
        assert {r["memory"] for r in alice} == {"Lives in Berlin", "Is vegetarian"}
        berlin = next(r for r in alice if r["memory"] == "Lives in Berlin")
        assert berlin["created_at"] == "2025-03-01T18:00:00+00:00"  # mem0's time, in UTC
        assert berlin["metadata"] == {"mem0_id": "0b1c2d3e-0000-4000-8000-000000000001"}
        assert "bees" not in json.dumps(m.search("bees roof", user_id="alice"))
        said = m.get_all(user_id="bob", agent_id="helper", run_id="r1")["results"]
        assert [(r["memory"], r["role"], r["actor_id"], r["run_id"]) for r in said] == [
            ("I am Bob", "user", "bob", "r1")]
    with hippo.open(db, agent_id="user:bob:agent:helper", embedder=embedder) as helper:
        [chunk] = helper.list_memories().items
        assert (chunk.kind, chunk.session_id, chunk.source) == ("memory", "r1", "migration")  # stored as given
    with hippo.open(db, agent_id="user:alice", embedder=embedder) as alice_mem:
        assert {c.kind for c in alice_mem.list_memories().items} == {"fact"}


def test_a_new_fact_supersedes_an_imported_one(db, embedder, tmp_path):
    with hippo.open(db, agent_id="importer", embedder=embedder) as mem:
        mem.import_from(str(export(tmp_path)), format="mem0")
    llm = FakeLLM(script=[json.dumps({"facts": [{"fact": "Lives in Lisbon", "intensity": 0.6}]}),
                          json.dumps({"decisions": [{"pair": 1, "label": "supersedes"}]})])
    with hippo.open(db, agent_id="user:alice", embedder=embedder, llm=llm) as alice:
        learned = alice.remember_facts("I moved to Lisbon.")
        assert [(f.action, f.matched_content) for f in learned.facts] == [("supersedes", "Lives in Berlin")]
        found = [h.content for h in alice.recall_memories("where does alice live? Berlin Lisbon")]
        assert "Lives in Lisbon" in found and "Lives in Berlin" not in found
    with Memory(db, embedder=embedder) as m:
        assert {r["memory"] for r in m.get_all(user_id="alice")["results"]} == {"Lives in Lisbon", "Is vegetarian"}
        lisbon = next(r for r in m.get_all(user_id="alice")["results"] if r["memory"] == "Lives in Lisbon")
        assert [h["event"] for h in m.history(lisbon["id"])] == ["ADD", "UPDATE"]


def test_dry_run_without_a_database_creates_nothing(tmp_path):
    source, target = export(tmp_path), tmp_path / "m.db"
    runner = CliRunner()

    def run(*args: str):  # hippo import is hippo data import
        return runner.invoke(app, ["--db", str(target), "--embedder", "fake", "import", str(source),
                                   "--format", "mem0", *args], env={"COLUMNS": "200"})

    dry = run("--dry-run")
    assert dry.exit_code == 0, dry.stderr
    assert dry.stderr.strip().endswith("would import 4 memories (3 facts) and 0 blocks from mem0 into agents "
                                       "user:alice (2), user:bob (1), user:bob:agent:helper (1); 0 already there, "
                                       "0 skipped")
    assert [p.name for p in tmp_path.iterdir()] == ["mem0.json"]  # no database, no -wal, no -shm
    as_json = json.loads(run("--dry-run", "--json").stdout)
    assert as_json["dry_run"] and as_json["imported"] == 4 and not target.exists()
    done = run()
    assert done.exit_code == 0 and "imported 4 memories (3 facts)" in done.stderr and target.exists()
    assert "0 memories" in run("--dry-run").stderr  # now against the database: everything is there


def test_with_a_file_per_agent_other_users_are_left_for_their_own_files(tmp_path, embedder):
    template = str(tmp_path / "agents" / "{agent_id}.db")
    with hippo.open(template, agent_id="user:alice", embedder=embedder) as alice:
        report = alice.import_from(str(export(tmp_path)), format="mem0")
        assert report.imported == 2 and {c.content for c in alice.list_memories().items} == {
            "Lives in Berlin", "Is vegetarian"}
        assert {s.where for s in report.skipped} == {"results[2]", "results[3]"}
        assert all("another file" in s.reason and not s.duplicate for s in report.skipped)
