"""``hippo import`` of another system's file with bad items: the problems listed (the first 20,
then how many more), duplicates counted, the same with --dry-run; never "error: unexpected"."""

from __future__ import annotations

import json
from pathlib import Path


def test_skipped_items_are_listed_and_the_rest_imported(cli, tmp_path):
    rows = [{"memory": f"note {i}"} for i in range(30)] + [{"memory": "x" * 40_000}] * 25 + [{"memory": "note 1"}]
    source = tmp_path / "mem0.json"
    source.write_text(json.dumps({"results": rows}), encoding="utf-8")
    assert cli("store", "Something to start with").exit_code == 0
    outputs = [cli("import", str(source), "--format", "mem0", *dry) for dry in (["--dry-run"], [])]
    for result, verb in zip(outputs, ("would import", "imported")):
        assert result.exit_code == 0, result.stderr
        lines = result.stderr.splitlines()
        assert [line.split(":")[0] for line in lines[:20]] == [f"skipped results[{i}]" for i in range(30, 50)]
        assert "40000 characters" in lines[0] and lines[20] == "... and 5 more skipped (--json lists them all)"
        assert lines[21] == f"{verb} 30 memories (30 facts) and 0 blocks from mem0; 1 already there, 25 skipped"
    again = json.loads(cli("import", str(source), "--format", "mem0", "--json").stdout)
    assert again["imported"] == 0 and sum(s["duplicate"] for s in again["skipped"]) == 31


def test_a_letta_file_of_the_wrong_shape_is_reported_not_a_crash(cli, tmp_path):
    source = tmp_path / "agent.af"
    source.write_text(json.dumps({"blocks": 5}), encoding="utf-8")
    result = cli("import", str(source), "--format", "letta")
    assert result.exit_code == 0 and "skipped blocks: expected a list, got 5" in result.stderr


def test_a_file_that_cannot_be_read_is_one_line(cli, tmp_path):
    source = tmp_path / "mem0.json"
    source.write_text("[" * 100_000, encoding="utf-8")
    result = cli("import", str(source), "--format", "mem0")
    assert result.exit_code == 1 and result.stderr.count("\n") == 1
    assert result.stderr.startswith("error: ") and "nested" in result.stderr
    folder = cli("import", str(Path(tmp_path)), "--format", "letta")
    assert folder.exit_code == 1 and folder.stderr.endswith("not a regular file (a folder, a FIFO or a device): "
                                                            "not read\n")
