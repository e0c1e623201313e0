"""``hippo backup``, ``hippo restore`` and ``hippo check`` on real SQLite files (the concurrent
backup is tests/stores/sqlite/files/test_sqlite_backup.py's, the PostgreSQL round trip
tests/stores/postgres/test_postgres_dump.py's)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import as_json, ok

pytestmark = pytest.mark.sqlite_only  # SQLite's own files

NOTES = ["Herons nest in colonies near the river.", "The lantern in the harbor burns copper green.",
         "Granite quarries line the northern canyon.", "Willow baskets hold the orchard's walnuts.",
         "A raven watched the glacier melt in spring."]
QUERIES = ["herons river", "harbor lantern", "granite canyon", "orchard walnuts", "raven glacier", "spring"]


def _recalls(cli) -> list[list[str]]:
    return [[hit["chunk"]["id"] for hit in as_json(cli("recall", query, "--json", "--no-touch"))["hits"]]
            for query in QUERIES]


@pytest.fixture
def stored(cli) -> list[str]:
    return [as_json(cli("store", note, "--json"))["id"] for note in NOTES]


@pytest.fixture
def backup(cli, stored, tmp_path) -> Path:
    path = tmp_path / "backup.db"
    made = as_json(cli("backup", path, "--json"))
    assert made["path"] == str(path) and made["bytes"] == path.stat().st_size
    return path


def test_restore_puts_a_backup_in_place_and_recalls_answer_as_before(cli, backup, db_path):
    before = _recalls(cli)
    later = as_json(cli("store", "A later note about herons by the river.", "--json"))["id"]
    saved = Path(f"{db_path}.hnsw")
    saved.mkdir()
    (saved / "index.json").write_text("{}")  # what an ANN index of the replaced file left beside it
    restored = as_json(cli("restore", backup, "--json"))
    assert restored["database"] == str(db_path) and restored["backup"] == str(backup)
    assert _recalls(cli) == before
    assert later not in json.dumps(as_json(cli("list", "--json")))
    assert not (saved / "index.json").exists()
    assert as_json(cli("check", "--json"))["ok"] is True


def _unchanged(cli, db_path: Path, before: bytes, said: str, *args) -> None:
    result = cli(*args)
    assert result.exit_code == 1, result.stdout + result.stderr
    assert said in result.stderr and "Traceback" not in result.stderr
    assert db_path.read_bytes() == before
    assert [p.name for p in db_path.parent.iterdir() if ".partial" in p.name] == []


def _corrupt(path: Path) -> Path:
    data = bytearray(path.read_bytes())
    for page in range(2, len(data) // 4096, 2):  # every other page after the schema's: garbage
        data[page * 4096:page * 4096 + 4096] = b"\xa5" * 4096
    broken = path.with_name("broken.db")
    broken.write_bytes(bytes(data))
    return broken


def test_restore_refuses_what_is_not_a_good_hippo_backup_and_changes_nothing(cli, backup, db_path, tmp_path):
    before = db_path.read_bytes()
    _unchanged(cli, db_path, before, "no backup file", "restore", tmp_path / "missing.db")
    _unchanged(cli, db_path, before, "nothing was restored", "data", "restore", _corrupt(backup))
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
    _unchanged(cli, db_path, before, "not a hippo database", "restore", other)
    text = tmp_path / "notes.txt"
    text.write_text("not a database at all\n" * 100)
    _unchanged(cli, db_path, before, "nothing was restored", "restore", text)
    newer = tmp_path / "newer.db"
    newer.write_bytes(backup.read_bytes())
    with sqlite3.connect(newer) as conn:
        conn.execute("PRAGMA user_version = 999")
    _unchanged(cli, db_path, before, "newer than this hippo knows", "restore", newer)
    assert len(as_json(cli("list", "--json"))["items"]) == len(NOTES)


def test_restore_refuses_a_database_another_process_has_open(cli, backup, db_path):
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sqlite3, sys\nconn = sqlite3.connect(sys.argv[1])\n"
                               "conn.execute('SELECT count(*) FROM chunks').fetchone()\nprint('open', flush=True)\n"
                               "sys.stdin.read()", str(db_path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        refused = cli("restore", backup)
        assert refused.exit_code == 1 and "open in another process" in refused.stderr
    finally:
        holder.communicate("", timeout=30)
    ok(cli("restore", backup))


def test_restore_with_a_memory_id_still_restores_an_archived_memory(cli, stored, monkeypatch):
    monkeypatch.setenv("HIPPO_MAX_DB_BYTES", "1")
    assert as_json(cli("archive", "maintain", "--json"))["archived"] == len(NOTES)
    assert as_json(cli("restore", stored[0], "--json"))["id"] == stored[0]  # an id, not a file
    assert "hippo archive restore ID" in " ".join(ok(cli("restore", "--help")).stdout.split())


def test_backup_is_refused_over_an_existing_file(cli, stored, tmp_path):
    taken = tmp_path / "taken.db"
    taken.write_text("mine")
    refused = cli("backup", taken)
    assert refused.exit_code == 1 and "--force" in refused.stderr and taken.read_text() == "mine"


def test_check_passes_on_a_good_database(cli, stored):
    report = as_json(cli("check", "--json"))
    assert report["ok"] is True
    assert [c["name"] for c in report["checks"]] == ["integrity", "foreign keys", "keyword index", "vectors",
                                                      "ANN files", "schema version"]
    assert report["counts"]["memories"] == len(NOTES) and report["counts"]["pending_vectors"] == 0
    assert "schema version" in ok(cli("data", "check")).stdout


def _break(db_path: Path, chunk_id: str, statement: str) -> None:
    with sqlite3.connect(db_path) as conn:
        conn.execute(statement, (chunk_id,))


BROKEN = {
    # the keyword index loses a row its chunk still has
    "keyword index": "INSERT INTO chunks_fts(chunks_fts, rowid, content) "
                     "SELECT 'delete', rowid, content FROM chunks WHERE id = ?",
    # a chunk whose vector is gone without being pending (NULL is pending: reembed fills it)
    "vectors": "UPDATE chunks SET embedding = X'' WHERE id = ?",
}


@pytest.mark.parametrize("check", sorted(BROKEN))
def test_check_fails_on_a_broken_database_and_says_which_check(cli, stored, db_path, check):
    _break(db_path, stored[2], BROKEN[check])
    result = cli("check")
    assert result.exit_code == 1
    assert f"1 check failed: {check}" in result.stderr
    assert f"FAIL  {check}" in result.stdout
    report = json.loads(cli("check", "--json").stdout)
    assert report["ok"] is False and [c["name"] for c in report["checks"] if not c["ok"]] == [check]


def test_a_pending_vector_is_counted_not_failed(cli, stored, db_path):
    _break(db_path, stored[1], "UPDATE chunks SET embedding = NULL WHERE id = ?")
    report = as_json(cli("check", "--json"))
    assert report["ok"] is True and report["counts"]["pending_vectors"] == 1
