"""``hippo audit``, ``hippo audit verify`` and ``hippo audit trim`` on a real SQLite file: the
CLI's changes are recorded as the local user through the CLI, a verify exits 1 and names the
record that was altered or removed (PostgreSQL's chain under three servers:
tests/interfaces/server/test_audit_servers.py)."""

from __future__ import annotations

import pytest
from cli_helpers import as_json, ok
from support import sql

pytestmark = pytest.mark.sqlite_only  # edits SQLite's own file


@pytest.fixture
def changed(cli) -> str:
    stored = as_json(cli("store", "Herons nest in colonies near the river.", "--json"))["id"]
    ok(cli("block", "set", "persona", "a careful helper"))
    ok(cli("recall", "herons"))  # bookkeeping, not a change
    ok(cli("forget", "Herons nest in colonies", "--yes"))  # a preview, then one forget of the description
    return stored


def test_each_change_of_the_cli_is_one_record_of_the_local_user(cli, changed) -> None:
    records = as_json(cli("audit", "--json"))["items"]
    assert [(r["operation"], r["who"], r["surface"]) for r in records] == [
        ("forget_memory", "local", "cli"), ("set_memory_block", "local", "cli"), ("store_memory", "local", "cli")]
    assert [r["operation"] for r in as_json(cli("audit", "list", "--id", changed, "--json"))["items"]] == \
        ["forget_memory", "store_memory"]
    assert [r["seq"] for r in as_json(cli("audit", "--operation", "store_memory", "--json"))["items"]] == [1]
    shown = ok(cli("audit", "list")).stdout
    assert "forget_memory" in shown and "local/cli" in shown and "Herons" not in shown


def test_verify_exits_1_and_names_the_altered_or_removed_record(cli, changed, db_path) -> None:
    assert as_json(cli("audit", "verify", "--json")) == {"ok": True, "agents": 1, "records": 3, "breaks": []}
    sql(db_path, "UPDATE audit_records SET operation = 'store_memory' WHERE seq = 2")
    broken = cli("audit", "verify")
    assert broken.exit_code == 1
    assert "record 2: the record was altered" in broken.stdout and "1 audit trail broken" in broken.stderr
    sql(db_path, "UPDATE audit_records SET operation = 'set_memory_block' WHERE seq = 2")
    ok(cli("audit", "verify"))
    sql(db_path, "DELETE FROM audit_records WHERE seq = 2")
    removed = cli("audit", "verify", "--json")
    assert removed.exit_code == 1
    assert [(b["seq"], "removed" in b["reason"]) for b in as_json_any(removed)["breaks"]] == [(2, True)]


def test_trim_keeps_the_trail_verifiable(cli, changed) -> None:
    assert as_json(cli("audit", "trim", "--json")) == {"removed": 0}  # no retention set
    assert as_json(cli("audit", "trim", "--older-than", "1", "--all", "--json")) == {"removed": 0}  # all newer
    ok(cli("audit", "verify", "--all"))


def as_json_any(result):
    import json

    return json.loads(result.stdout)
