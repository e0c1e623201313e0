"""The CLI's share of the input defects: huge ages, deep --meta JSON, deep import lines and ids
with a trailing newline are one-line errors (exit 1) that write nothing."""

from __future__ import annotations

import json

import pytest
from support import sql

pytestmark = pytest.mark.sqlite_only  # the CLI runs on the SQLite file its --db names (the CLI on PostgreSQL: test_http_scaleout.py)


@pytest.fixture
def seeded(make_mem):
    mem = make_mem("alice")
    mem.store_memory("gardening: tomatoes need sun")
    return mem


def rows(db_path):
    return sql(db_path, "SELECT id, agent_id, content, metadata FROM chunks ORDER BY id")


@pytest.mark.parametrize("args", [
    ["recall", "tomatoes", "--since", "99999999d"],
    ["recall", "tomatoes", "--until", "99999999999999999999w"],
    ["store", "a deep note", "--meta", "k=" + "[" * 3000 + "]" * 3000],
    ["store", "a huge note", "--meta", "k=" + "9" * 5000],
    ["block", "set", "human\n", "Name: Kris"],
], ids=["since", "until", "deep-meta", "huge-int-meta", "block-key-newline"])
def test_bad_values_are_one_line_errors_that_write_nothing(cli, seeded, db_path, args):
    before = rows(db_path)
    result = cli(*args)
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert "Traceback" not in result.output and "unexpected" not in result.stderr
    assert rows(db_path) == before


def test_an_agent_with_a_trailing_newline_is_refused(cli, seeded, db_path):
    result = cli("store", "a note", agent="alice\n")
    assert result.exit_code == 1 and "invalid agent id" in result.stderr
    assert {r[1] for r in rows(db_path)} == {"alice"}


def test_an_import_line_nested_too_deep_is_an_error_naming_the_line(cli, seeded, db_path, tmp_path):
    export = tmp_path / "deep.jsonl"
    header = json.dumps({"type": "header", "format": "hippo-export", "version": 1, "agent_id": "alice"})
    export.write_text(header + "\n" + '{"type": "chunk", "metadata": ' + "[" * 3000 + "]" * 3000 + "}\n")
    before = rows(db_path)
    result = cli("import", export)
    assert result.exit_code == 1 and "line 2" in result.stderr and "nested" in result.stderr
    assert rows(db_path) == before
