"""PostgreSQL's backup is pg_dump's: the commands the backup guide gives, run against the test
server with the pg_dump and pg_restore pgserver ships; the restored database passes ``hippo check``
and answers recalls as the dumped one did. ``hippo backup`` and ``hippo restore`` name them."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import psycopg
import pytest
from typer.testing import CliRunner

import hippo
from hippo.interfaces.cli import app
from hippo.providers.fake import FakeEmbedder

NOTES = ["Herons nest in colonies near the river.", "The lantern in the harbor burns copper green.",
         "Granite quarries line the northern canyon.", "Willow baskets hold the orchard's walnuts.",
         "A raven watched the glacier melt in spring.", "The copper kettle sits by the granite hearth."]
QUERIES = ["herons river", "harbor lantern", "granite", "orchard walnuts", "raven glacier", "copper"]


def _tool(name: str) -> str:
    import pgserver

    return str(Path(pgserver.__file__).parent / "pginstall" / "bin" / name)


@pytest.fixture
def empty_database(postgres):
    """The URL of a new database made as an operator would (not from hippo's template)."""
    name = f"hippo_restored_{os.getpid()}"
    with psycopg.connect(postgres.admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
    url = postgres.url(name)
    yield url
    postgres.drop(url)


def _recalls(url: str) -> list[list[str]]:
    with hippo.open(url, agent_id="alice", embedder=FakeEmbedder()) as mem:
        return [[hit.id for hit in mem.recall_memories(query, 10, touch=False)] for query in QUERIES]


def _cli(url: str, *args: str):
    return CliRunner().invoke(app, ["--db", url, "--agent", "alice", "--embedder", "fake", *args])


def test_pg_dump_and_pg_restore_give_a_database_that_passes_check_and_recalls_alike(postgres, empty_database,
                                                                                    tmp_path):
    source = postgres.new_database()
    try:
        with hippo.open(source, agent_id="alice", embedder=FakeEmbedder()) as mem:
            mem.store_memories(NOTES)
            mem.remember_facts("I live in Berlin.")
        before = _recalls(source)
        dump = tmp_path / "hippo.dump"
        subprocess.run([_tool("pg_dump"), "--format=custom", "--no-owner", "--file", str(dump), "--dbname", source],
                       check=True, capture_output=True, timeout=120)
    finally:
        postgres.drop(source)
    restored = subprocess.run([_tool("pg_restore"), "--no-owner", "--dbname", empty_database, str(dump)],
                              capture_output=True, text=True, timeout=120)
    assert restored.returncode == 0, restored.stderr

    checked = _cli(empty_database, "check", "--json")
    assert checked.exit_code == 0, checked.stdout + checked.stderr
    assert '"ok": true' in checked.stdout and '"memories": 6' in checked.stdout
    assert _recalls(empty_database) == before


def test_hippo_backup_and_restore_name_the_postgresql_tools(postgres, tmp_path):
    url = postgres.new_database()
    try:
        with hippo.open(url, agent_id="alice", embedder=FakeEmbedder()) as mem:
            mem.store_memory("Herons nest in colonies.")
        made = _cli(url, "backup", str(tmp_path / "copy.db"))
        assert made.exit_code == 1 and "pg_dump --format=custom --no-owner" in made.stderr
        assert not (tmp_path / "copy.db").exists()
        put = _cli(url, "restore", str(tmp_path / "copy.dump"))
        assert put.exit_code == 1 and "pg_restore --no-owner" in put.stderr
    finally:
        postgres.drop(url)
