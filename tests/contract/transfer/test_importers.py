"""Importers from other memory systems: real-format sample files (tests/contract/data/imports),
the known malformed lines included; a second run imports nothing new."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import sql

from hippo.errors import InvalidInput

pytestmark = pytest.mark.embedded_only("import_from reads a file on the server's disk: hippo.connect does not offer it")

DATA = Path(__file__).parents[1] / "data" / "imports"


def contents(mem) -> dict[str, object]:
    return {c.content: c for c in mem.list_memories(limit=100).items}


def test_markdown_memory_files(mem):
    report = mem.import_from(str(DATA / "markdown"), format="markdown")
    found = contents(mem)
    assert report.imported == len(found) == 9 and report.skipped == []
    zone = found["Works in Lisbon, in the UTC+0 timezone\n(moves to UTC+1 in summer)"]
    assert zone.metadata == {"file": "MEMORY.md", "tags": ["long-term-memory", "user"]}
    assert zone.source == "migration"
    hmac = next(c for text, c in found.items() if text.startswith("The payment API signs"))
    assert "trailing empty string" in hmac.content  # a paragraph stays whole
    assert hmac.metadata["tags"] == ["long-term-memory", "projects", "payments-api"]
    assert found["Staging runs on db-2"].metadata["tags"][-1] == "payments-api"
    assert any(text.startswith("```") and "X-Signature" in text for text in found)
    daily = found["The flaky login test is tracked in XR-7731"]
    assert daily.metadata == {"file": "memory/2025-01-03.md", "tags": ["2025-01-03"]}
    assert mem.recall_memories("XR-7731", limit=1)[0].id == daily.id

    again = mem.import_from(str(DATA / "markdown"), format="markdown")
    assert again.imported == 0 and len(again.skipped) == 9
    assert all("already imported" in s.reason for s in again.skipped)
    assert all(c.encounter_count == 1 for c in contents(mem).values())  # skipped, not strengthened


def test_mcp_memory_graph_with_its_malformed_lines(mem):
    report = mem.import_from(str(DATA / "memory.jsonl"), format="mcp-memory")
    found = contents(mem)
    assert set(found) == {
        "Dana Ortiz (person): Works at Acme Corp", "Dana Ortiz (person): Speaks fluent Portuguese",
        "Acme Corp (organization): Builds payment software", "Dana Ortiz works at Acme Corp",
        "Lisbon (city): Dana lives here", "Dana Ortiz lives in Lisbon", "Project Zeppelin (project): Ships in March"}
    assert report.imported == 7 and report.links == 2
    # The two objects written on one line were both read; the cut line and the strangers are reported.
    reasons = {s.where: s.reason for s in report.skipped}
    assert set(reasons) == {"line 6", "line 7", "line 8"} and "cut short" in reasons["line 6"]
    dana = found["Dana Ortiz (person): Works at Acme Corp"]
    assert dana.metadata == {"entity": "Dana_Ortiz", "tags": ["person"]}
    linked = {(x.kind, x.chunk.content) for x in mem.related(dana.id)}
    assert linked == {("relation", "Acme Corp (organization): Builds payment software"),
                      ("relation", "Lisbon (city): Dana lives here")}

    again = mem.import_from(str(DATA / "memory.jsonl"), format="mcp-memory")
    assert (again.imported, len(contents(mem))) == (0, 7)


def test_mem0_export(mem, make_mem):
    """mem0's memories are the user's: they go to the user's agent, as facts (hippo.compat.mem0's mapping)."""
    report = mem.import_from(str(DATA / "mem0_export.json"), format="mem0")
    alex = make_mem("user:alex")
    found = contents(alex)
    assert report.imported == report.facts == 2 and report.agents == {"user:alex": 2}
    assert [s.where for s in report.skipped] == ["results[2]"] and contents(mem) == {}
    veg = found["Is a vegetarian"]
    assert veg.kind == "fact" and veg.source == "migration"
    assert veg.metadata == {"origin": "chat", "mem0_id": "892db2ae-06d9-49e5-8b3e-585ef9b85b8e",
                            "user_id": "alex", "tags": ["food", "health"], "_mem0": True}
    assert veg.observed_at is not None and veg.observed_at.isoformat().startswith("2024-07-26T17:29:36")
    again = mem.import_from(str(DATA / "mem0_export.json"), format="mem0")
    assert again.imported == 0 and sum(s.duplicate for s in again.skipped) == 2


def test_letta_agent_file_blocks(mem):
    report = mem.import_from(str(DATA / "agent.af"), format="letta")
    assert report.blocks == 2 and report.imported == 0
    assert mem.recall_memory_block("human") == "The human's name is Chad. They like vibe coding."
    assert mem.memory_block("persona").char_limit == 5000
    assert {s.where for s in report.skipped} == {"block tiny", "block 3"}
    again = mem.import_from(str(DATA / "agent.af"), format="letta")
    assert again.blocks == 0 and {s.where for s in again.skipped} >= {"block human", "block persona"}


def test_dry_run_writes_nothing_and_bad_input_is_refused(mem, db):
    report = mem.import_from(str(DATA / "markdown"), format="markdown", dry_run=True)
    assert report.dry_run and report.imported == 9
    assert sql(db, "SELECT count(*) FROM chunks") == [(0,)]
    with pytest.raises(InvalidInput, match="format must be one of"):
        mem.import_from(str(DATA / "markdown"), format="obsidian")
    with pytest.raises(InvalidInput, match="no such file"):
        mem.import_from(str(DATA / "missing.json"), format="mem0")
    with pytest.raises(InvalidInput, match="not a JSON file"):
        mem.import_from(str(DATA / "memory.jsonl"), format="mem0")
    assert sql(db, "SELECT count(*) FROM chunks") == [(0,)]


def test_progress_is_reported(mem):
    seen: list[tuple[int, int]] = []
    mem.import_from(str(DATA / "memory.jsonl"), format="mcp-memory", progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (7, 7)
