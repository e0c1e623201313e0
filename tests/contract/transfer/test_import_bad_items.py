"""Imports from other memory systems with bad items in them: every item that can be read is written,
in one transaction; each other one is reported with where it was and why; a dry run reports the
same. Arguments that cannot work are refused before anything is read or written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import sql

from hippo.errors import InvalidInput, StorageError

pytestmark = pytest.mark.embedded_only("import_from reads a file on the server's disk: hippo.connect does not offer it")

HUGE = "9" * 5_000  # past Python's 4,300-digit limit on int(): spliced into the JSON text


DEEP = json.loads('{"k": ' * 40 + "1" + "}" * 40)  # 40 levels: past the 32 metadata may have


def chunks(db: str) -> int:
    return sql(db, "SELECT count(*) FROM chunks")[0][0]


def write_json(path: Path, value: object) -> Path:
    path.write_text(json.dumps(value).replace('"HUGE"', HUGE), encoding="utf-8")
    return path


def test_mem0_bad_items_are_reported_and_every_other_item_written(mem, db, tmp_path):
    rows: list[object] = [{"memory": f"Remembered detail number {i}", "created_at": "2024-07-26T17:29:36Z"}
                          for i in range(600)]
    bad = {
        520: {"memory": "x" * 40_000},
        530: {"memory": "big metadata", "metadata": {"blob": "y" * 20_000}},
        540: {"memory": "a NUL \x00 inside"},
        550: {"memory": "a bad date", "created_at": "the day after tomorrow"},
        560: {"memory": "deep metadata", "metadata": DEEP},
        570: {"memory": "a huge number", "metadata": {"n": "HUGE"}},
        580: {"memory": "a lone \ud800 surrogate"},
        590: {"memory": "a bad metadata key", "metadata": {"two words": 1}},
        592: {"memory": "a NUL in metadata", "metadata": {"k": "a\x00b"}},  # PostgreSQL's jsonb refuses it
        595: "not an object",
    }
    rows.extend([{"memory": "Remembered detail number 3"}])  # the same text again, later in the file
    for number, row in bad.items():
        rows[number] = row
    source = write_json(tmp_path / "mem0.json", {"results": rows})

    dry = mem.import_from(str(source), format="mem0", dry_run=True)
    assert chunks(db) == 0
    report = mem.import_from(str(source), format="mem0")

    good = 600 - len(bad)
    assert report.imported == dry.imported == good == chunks(db)
    assert report.skipped == dry.skipped
    problems = {s.where: s.reason for s in report.skipped if not s.duplicate}
    assert set(problems) == {f"results[{n}]" for n in bad}
    assert "40000 characters" in problems["results[520]"] and "NUL" in problems["results[540]"]
    assert "created_at" in problems["results[550]"] and "surrogate" in problems["results[580]"]
    assert [s.where for s in report.skipped if s.duplicate] == ["results[600]"]
    assert all(len(s.reason) < 200 for s in report.skipped)  # no 5,000-digit number, no whole document


def test_mcp_memory_bad_lines_and_observations(mem, db, tmp_path):
    lines = [
        json.dumps({"type": "entity", "name": "Dana", "entityType": "person",
                    "observations": ["Works at Acme", "z" * 40_000, 5, "a NUL \x00", "Speaks Portuguese"]}),
        json.dumps({"type": "entity", "name": "Huge", "observations": ["o" * 50_000_000]}),
        "[" * 5_000 + "]" * 5_000,
        '{"type": "entity", "name": "Num", "observations": ["has a number"], "n": ' + HUGE + "}",
        json.dumps({"type": "entity", "name": "Acme", "entityType": "org", "observations": ["Builds software"]}),
        json.dumps({"type": "relation", "from": "Dana", "to": "Acme", "relationType": "works_at"}),
        json.dumps({"type": "entity", "name": "Deep", "observations": ["deep"], "extra": DEEP}),
        '{"type": "entity", "name": "Nan", "observations": [NaN]}',
    ]
    source = tmp_path / "memory.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")

    dry = mem.import_from(str(source), format="mcp-memory", dry_run=True)
    report = mem.import_from(str(source), format="mcp-memory")
    texts = {c.content for c in mem.list_memories(limit=100).items}
    assert texts == {"Dana (person): Works at Acme", "Dana (person): Speaks Portuguese",
                     "Acme (org): Builds software", "Dana works at Acme", "Num: has a number", "Deep: deep"}
    assert report.imported == dry.imported == 6 == chunks(db) and report.links == 1
    assert report.skipped == dry.skipped
    where = sorted(s.where for s in report.skipped)
    assert where == ["line 1, observation 2", "line 1, observation 3", "line 1, observation 4", "line 2", "line 3",
                     "line 8, observation 1"]
    assert "1000000" in next(s.reason for s in report.skipped if s.where == "line 2").replace(",", "")
    assert all(len(s.reason) < 200 for s in report.skipped)


def test_letta_files_of_the_wrong_shape(mem, db, tmp_path):
    af = write_json(tmp_path / "agent.af", {
        "blocks": [{"label": "human", "value": "Name: Kris", "limit": 100},
                   {"label": "tiny", "value": "longer than its limit", "limit": 5},
                   {"label": "huge", "value": "x", "limit": "HUGE"},
                   {"label": "nul", "value": "a \x00 b"},
                   {"label": "big", "value": "b" * 40_000}],
        "agents": [{"core_memory": 7, "memory": {"blocks": "none"}}, 5, {"memory_blocks": [{"label": 3}]}],
    })
    dry = mem.import_from(str(af), format="letta", dry_run=True)
    report = mem.import_from(str(af), format="letta")
    assert report.blocks == dry.blocks == 1 and report.skipped == dry.skipped
    assert mem.recall_memory_block("human") == "Name: Kris"
    assert {s.where for s in report.skipped} == {"block tiny", "block huge", "block nul", "block big",
                                                 "agents[0].core_memory", "agents[0].memory.blocks", "agents[1]",
                                                 "block 5"}

    for shape in ({"blocks": 5}, {"agents": "x", "blocks": {"a": 1}}, {"agents": [{"memory": 4}]}):
        report = mem.import_from(str(write_json(tmp_path / "odd.af", shape)), format="letta")
        assert report.blocks == 0 and report.skipped


@pytest.mark.parametrize("content", [b"[" * 100_000, b'{"results": [' + b"{" * 3, b"NaN", b'{"results": 5}',
                                     b'{"results": [{"memory": "\xff\xfe"}]}'])
def test_mem0_files_that_cannot_be_read_are_refused(mem, db, tmp_path, content):
    source = tmp_path / "bad.json"
    source.write_bytes(content)
    report = None
    try:
        report = mem.import_from(str(source), format="mem0")
    except InvalidInput:
        pass
    assert chunks(db) == 0 and (report is None or report.imported == 0)


@pytest.mark.parametrize("args", [
    (5, "mem0"), ("a\x00b", "mem0"), ("\ud800", "mem0"), ("x" * 5_000, "markdown"), (".", 5), (".", ["mem0"]),
    (".", "mem0\n"), (None, "letta"),
])
def test_arguments_that_cannot_work_are_hippo_errors(mem, args):
    with pytest.raises(InvalidInput):
        mem.import_from(*args)


@pytest.mark.parametrize("options", [{"dry_run": "yes"}, {"dry_run": None}, {"progress": 5}])
def test_options_of_the_wrong_type_are_refused(mem, db, options):
    with pytest.raises(InvalidInput):
        mem.import_from(str(Path(__file__).parents[1] / "data" / "imports" / "memory.jsonl"), "mcp-memory", **options)
    assert chunks(db) == 0


def test_a_storage_error_midway_leaves_nothing_written(mem, db, monkeypatch):
    def broken(*args: object, **kwargs: object) -> None:
        raise StorageError("disk full (injected)")

    # The relations are linked after every memory was inserted: the failure comes last.
    monkeypatch.setattr(mem.store, "strengthen_links", broken)
    with pytest.raises(StorageError):
        mem.import_from(str(Path(__file__).parents[1] / "data" / "imports" / "memory.jsonl"), "mcp-memory")
    assert chunks(db) == 0


def test_a_block_that_fails_to_write_takes_the_whole_import_back(mem, db, monkeypatch, tmp_path):
    source = write_json(tmp_path / "agent.af", {"blocks": [{"label": "human", "value": "Name: Kris"},
                                                         {"label": "persona", "value": "A helper"}]})
    real, calls = mem.store.put_block, []

    def second_fails(*args: object, **kwargs: object) -> object:
        calls.append(args)
        if len(calls) == 2:
            raise StorageError("disk full (injected)")
        return real(*args, **kwargs)

    monkeypatch.setattr(mem.store, "put_block", second_fails)
    with pytest.raises(StorageError):
        mem.import_from(str(source), "letta")
    assert sql(db, "SELECT count(*) FROM memory_blocks") == [(0,)]
